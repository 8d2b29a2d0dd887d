use super::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The covered scheme played out: a page fetched `d` after each change its feed (polled on the
/// grid `k / φ`) announces, or at the poll if later. Returns fetches per day and the
/// time-averaged age.
fn played(rate_per_day: f64, polls_per_day: f64, price: f64) -> (f64, f64) {
    let mut rng = StdRng::seed_from_u64(7);
    let delay = known_change_delay(rate_per_day, price);
    let (mut t, mut age, mut fetches) = (0.0f64, 0.0, 0u32);
    for _ in 0..200_000 {
        // Memoryless: the first change after a fetch is an exponential wait away.
        let u: f64 = rng.random();
        let change = t - (1.0 - u).ln() / rate_per_day;
        let announced = (change * polls_per_day).ceil() / polls_per_day;
        let fetch = (change + delay).max(announced);
        age += (fetch - change).powi(2) / 2.0;
        t = fetch;
        fetches += 1;
    }
    (f64::from(fetches) / t, age / t)
}

#[test]
fn a_covered_pages_cost_is_what_the_scheme_plays_out() {
    for (rate, polls, price) in [
        (1.0, 8.0, 0.5),
        (0.1, 8.0, 0.05),
        (5.0, 8.0, 0.01),
        (0.6, 1.1, 2.0),
        (0.05, 1.0, 0.0),
    ] {
        let model = covered_page(rate, polls, price);
        let (visits, age) = played(rate, polls, price);
        // The model takes a change to fall anywhere between two polls; a page that changes
        // about as often as its feed is polled, fetched at a poll, tends to change early in the
        // next gap and wait a little longer (7% more age at λ 5, φ 8).
        let tolerance = if rate * 2.0 > polls { 0.1 } else { 0.02 };
        let close = |a: f64, b: f64| (a - b).abs() <= tolerance * b;
        assert!(
            close(model.visits_per_day, visits) && close(model.age_days, age),
            "λ {rate} φ {polls} price {price}: model {model:?}, played {visits} {age}"
        );
    }
    assert_eq!(covered_page(0.0, 1.0, 1.0).age_days, 0.0);
}

/// The covered scheme with audits played out: a fetch after each announced change, `wait` days
/// after it, or an audit `audit_days` after the last fetch when no change has come by then.
/// Returns fetches per day.
fn played_with_audits(rate_per_day: f64, wait: f64, audit_days: f64) -> f64 {
    let mut rng = StdRng::seed_from_u64(11);
    let (mut t, mut fetches) = (0.0f64, 0u32);
    for _ in 0..200_000 {
        let u: f64 = rng.random();
        let change = -(1.0 - u).ln() / rate_per_day;
        t += if change < audit_days {
            change + wait
        } else {
            audit_days
        };
        fetches += 1;
    }
    f64::from(fetches) / t
}

#[test]
fn a_covered_page_is_audited_only_when_no_change_comes_in_time() {
    for (rate, wait, audit_days) in [
        (1.0, 0.2, 8.0),
        (0.1, 0.5, 4.0),
        (0.02, 0.1, 16.0),
        (3.0, 0.05, 0.4),
    ] {
        let announced = 1.0 / (1.0 / rate + wait);
        let model = covered_visits_per_day(announced, rate, audit_days);
        let played = played_with_audits(rate, wait, audit_days);
        assert!(
            (model - played).abs() <= 0.01 * played,
            "λ {rate} wait {wait} audit {audit_days}: model {model}, played {played}"
        );
    }
    // A page that changes far more often than its audits is never audited.
    assert!((covered_visits_per_day(0.5, 2.0, 40.0) - 0.5).abs() < 1e-12);
    assert_eq!(covered_visits_per_day(0.0, 0.0, 10.0), 0.1);
    assert_eq!(covered_visits_per_day(0.3, 1.0, f64::INFINITY), 0.3);
}

#[test]
fn a_known_change_is_fetched_when_waiting_costs_more_than_a_visit() {
    for (rate, price) in [
        (0.01, 0.3),
        (0.3, 1.0),
        (1.0, 0.2),
        (5.0, 3.0),
        (50.0, 0.01),
    ] {
        let d = known_change_delay(rate, price);
        let cost = |d: f64| (d * d / 2.0 + price) / (1.0 / rate + d);
        for k in 0..400 {
            let other = d * 4.0 * k as f64 / 400.0 + 1e-6;
            assert!(
                cost(d) <= cost(other) + 1e-12,
                "{rate} {price}: {d} vs {other}"
            );
        }
    }
    assert_eq!(known_change_delay(1.0, 0.0), 0.0);
}

#[test]
fn a_page_not_covered_goes_early_only_when_the_news_is_news() {
    // The price a plan implies is the age cut of one more visit a day at its interval.
    for (rate, interval) in [(0.05, 1.0), (0.3, 2.0), (1.0, 1.0), (5.0, 3.0)] {
        let h = 1e-4 * interval;
        let numeric = interval
            * interval
            * (time_averaged_age(rate, interval + h) - time_averaged_age(rate, interval - h))
            / (2.0 * h);
        let price = visit_price_at(rate, interval);
        assert!(
            (price - numeric).abs() <= 1e-5 * numeric.max(1e-9),
            "{price} {numeric}"
        );
    }
    // A page that changes every interval keeps its plan; a slow one goes almost at once.
    assert!(known_change_delay_days(50.0, 1.0) > 0.97);
    assert!(known_change_delay_days(0.01, 1.0) < 1e-4);
    assert!(known_change_delay_days(500.0, 1.0) <= 1.0);
}

fn page(rate_per_day: f64, visits_per_day: f64) -> CoveredPage {
    CoveredPage {
        weight: 1.0,
        rate_per_day,
        visits_per_day,
    }
}

#[test]
fn a_feed_is_worth_its_polls_only_where_the_plan_wastes_visits() {
    // Pages the plan visits far more often than they change (daily, at the price that makes
    // daily their optimum): the feed saves most visits.
    let slow = vec![page(0.05, 1.0); 50];
    let price = price_feed(&slow, visit_price_at(0.05, 1.0), 0.25, 24.0, 8.0);
    assert!(price.worth, "{price:?}");
    assert!(
        price.polls_per_day > 0.25 && price.polls_per_day < 24.0,
        "{price:?}"
    );
    // A page that changes every interval anyway: polls buy nothing.
    let busy = [page(5.0, 0.2)];
    let price = price_feed(&busy, visit_price_at(5.0, 5.0), 0.25, 24.0, 8.0);
    assert_eq!(
        price,
        FeedPrice {
            polls_per_day: 0.25,
            worth: false
        }
    );
    // Visits free at the margin: poll as often as allowed.
    assert_eq!(price_feed(&slow, 0.0, 0.25, 24.0, 8.0).polls_per_day, 24.0);
    assert!(!price_feed(&[], 0.1, 0.25, 24.0, 8.0).worth);
}

/// Learning more of a feed's pages can make it worth its polls only if what its pages gain
/// from it covers the polls that keeping up with them takes; that does not depend on how many
/// pages it covers.
#[test]
fn a_feed_whose_pages_gain_less_than_keeping_up_costs_is_futile_at_any_size() {
    // Pages changing ten times between the plan's visits: knowing when they changed makes
    // their copies little fresher, and each takes half a poll a day of a 20-entry feed.
    let fast = page(5.0, 0.5);
    let mu = visit_price_at(5.0, 2.0);
    for n in [1, 5, 500] {
        assert!(
            !feed_could_pay(&vec![fast; n], mu, 96.0, 10.0, 8.0, 1),
            "{n} fast pages"
        );
    }
    // (Read once a day, 500 of them would pay for its polls, if it did not drop all but 20 of
    // their 2,500 changes a day: the caller prices only the polls that keep up.)
    assert!(!price_feed(&[fast; 5], mu, 0.25, 96.0, 8.0).worth);
    // A page the plan visits four times between its changes: one covered page does not pay for
    // a poll every four days, but a feed listing many such pages pays for itself.
    let slow = page(0.05, 0.2);
    let mu = visit_price_at(0.05, 5.0);
    assert!(!price_feed(&[slow], mu, 0.25, 96.0, 8.0).worth);
    for n in [1, 5, 500] {
        assert!(
            feed_could_pay(&vec![slow; n], mu, 96.0, 10.0, 8.0, 1),
            "{n} slow pages"
        );
    }
    assert!(price_feed(&vec![slow; 500], mu, 0.25, 96.0, 8.0).worth);
    // Polls that never come cannot pay.
    assert!(!feed_could_pay(&[slow], mu, 0.0, 10.0, 8.0, 1));
}

/// Too few pages to judge a feed by leave it to go on learning, whatever they are; pages the
/// plan does not visit or that never change do not count.
#[test]
fn a_feed_is_not_judged_futile_on_fewer_pages_than_asked() {
    let mu = visit_price_at(5.0, 2.0);
    let fast = page(5.0, 0.5);
    assert!(!feed_could_pay(&[fast; 5], mu, 96.0, 10.0, 8.0, 5));
    assert!(feed_could_pay(&[fast; 4], mu, 96.0, 10.0, 8.0, 5));
    let mut with_unpriced = vec![fast; 4];
    with_unpriced.push(page(5.0, 0.0));
    with_unpriced.push(page(0.0, 0.5));
    assert!(feed_could_pay(&with_unpriced, mu, 96.0, 10.0, 8.0, 5));
    assert!(feed_could_pay(&[], mu, 96.0, 10.0, 8.0, 0));
    // A visit that costs nothing at the margin: nothing to judge a feed's reads against.
    assert!(feed_could_pay(&[fast; 5], 0.0, 96.0, 10.0, 8.0, 5));
}

/// A feed's pages come to be covered at their first listed change, the fast ones first: one slow
/// page among them stands for the many slow pages the feed has not listed yet.
#[test]
fn a_feed_is_judged_on_the_pages_it_lists_not_on_the_fast_ones_it_learnt_first() {
    let mu = visit_price_at(0.05, 5.0);
    // Both on the plan at that price: the slow page every five days, the fast one every two.
    let (slow, fast) = (page(0.05, 0.2), page(5.0, 0.5));
    assert!(!feed_could_pay(&[fast; 5], mu, 96.0, 10.0, 8.0, 1));
    let mut learnt = vec![fast; 5];
    learnt.push(slow);
    assert!(feed_could_pay(&learnt, mu, 96.0, 10.0, 8.0, 1));
}

#[test]
fn the_chosen_poll_rate_is_the_cheapest() {
    let pages: Vec<CoveredPage> = (0..40)
        .map(|i| page(0.02 * (1.0 + i as f64), 0.5))
        .collect();
    let mu = 0.05;
    let cost = |polls: f64| -> f64 {
        mu * polls
            + pages
                .iter()
                .map(|p| {
                    let c = covered_page(p.rate_per_day, polls, mu);
                    c.age_days + mu * (c.visits_per_day + p.visits_per_day / 8.0)
                })
                .sum::<f64>()
    };
    let price = price_feed(&pages, mu, 0.25, 96.0, 8.0);
    assert!(price.worth);
    let best = cost(price.polls_per_day);
    for k in 0..200 {
        let polls = 0.25 * (96.0f64 / 0.25).powf(k as f64 / 199.0);
        assert!(
            best <= cost(polls) + 1e-9,
            "{polls}: {} < {best}",
            cost(polls)
        );
    }
}

/// A feed of every change fills with the changes; one of latest changes with the pages that
/// changed: a page changing a thousand times a day takes one entry, not a thousand.
#[test]
fn a_feed_of_latest_changes_keeps_up_with_the_pages_that_change_not_their_changes() {
    let mut rates = vec![1.0; 10];
    rates.push(1_000.0);
    assert_eq!(polls_to_keep_up(&rates, 5.0, true), 1_010.0 / 5.0);
    let polls = polls_to_keep_up(&rates, 5.0, false);
    // The fast page has changed at every poll; of the ten others, 4 in 10 have: 1/φ = -ln 0.6.
    let expected = -1.0 / 0.6f64.ln();
    assert!((polls / expected - 1.0).abs() < 1e-3, "{polls} {expected}");
    let changed: f64 = rates.iter().map(|r| 1.0 - (-r / polls).exp()).sum();
    assert!((changed - 5.0).abs() < 1e-6, "{changed}");
    // Pages that all fit never overflow it, however rarely it is read; no pages, no polls.
    assert_eq!(polls_to_keep_up(&rates, 11.0, false), 0.0);
    assert_eq!(polls_to_keep_up(&[], 5.0, false), 0.0);
    assert_eq!(polls_to_keep_up(&[0.0, 0.0], 1.0, false), 0.0);
    // Rates no estimate should give change nothing.
    let odd = [f64::NAN, f64::INFINITY, -1.0, 1.0, 1.0];
    assert_eq!(
        polls_to_keep_up(&odd, 1.0, false),
        polls_to_keep_up(&[1.0, 1.0], 1.0, false)
    );
    assert!(polls_to_keep_up(&[1.0, 1.0], 1.0, false).is_finite());
}
