use super::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The covered scheme played out: a page fetched at `T` after its last fetch if its feed (polled
/// on the grid `k / φ`) has announced a change by then, else when it announces one. Returns
/// fetches per day and the time-averaged age.
fn played(visits_per_day: f64, rate_per_day: f64, polls_per_day: f64) -> (f64, f64) {
    let mut rng = StdRng::seed_from_u64(7);
    let interval = 1.0 / visits_per_day;
    let (mut t, mut age, mut fetches) = (0.0f64, 0.0, 0u32);
    for _ in 0..200_000 {
        // Memoryless: the first change after a fetch is an exponential wait away.
        let u: f64 = rng.random();
        let change = t - (1.0 - u).ln() / rate_per_day;
        let announced = (change * polls_per_day).ceil() / polls_per_day;
        let fetch = (t + interval).max(announced);
        if change < fetch {
            age += (fetch - change).powi(2) / 2.0;
        }
        t = fetch;
        fetches += 1;
    }
    (f64::from(fetches) / t, age / t)
}

#[test]
fn a_covered_pages_cost_is_what_the_scheme_plays_out() {
    for (f, rate, polls) in [
        (1.0, 1.0, 8.0),
        (1.0, 0.1, 8.0),
        (1.0, 5.0, 8.0),
        (0.2, 0.6, 1.1),
        (0.5, 0.05, 1.0),
    ] {
        let model = covered_page(f, rate, polls);
        let (visits, age) = played(f, rate, polls);
        let close = |a: f64, b: f64| (a - b).abs() <= 0.02 * b;
        assert!(
            close(model.visits_per_day, visits) && close(model.age_days, age),
            "f {f} λ {rate} φ {polls}: model {model:?}, played {visits} {age}"
        );
    }
}

#[test]
fn a_page_that_changes_every_interval_saves_nothing_and_a_slow_one_almost_everything() {
    let busy = covered_page(1.0, 20.0, 24.0);
    assert!(busy.visits_per_day > 0.999);
    assert!((busy.age_days - time_averaged_age(20.0, 1.0)).abs() < 1e-3);
    let slow = covered_page(1.0, 0.01, 24.0);
    assert!(
        slow.visits_per_day < 0.011 && slow.age_days < 1e-3,
        "{slow:?}"
    );
    assert_eq!(covered_page(0.0, 1.0, 1.0).visits_per_day, 0.0);
    assert_eq!(covered_page(1.0, 0.0, 1.0).age_days, 0.0);
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
    // Pages the plan visits far more often than they change: the feed saves most visits.
    let slow = vec![page(0.05, 1.0); 50];
    let price = price_feed(&slow, 0.1, 0.25, 24.0, 8.0);
    assert!(price.worth, "{price:?}");
    assert!(
        price.polls_per_day > 0.25 && price.polls_per_day < 24.0,
        "{price:?}"
    );
    // Pages that change every interval anyway: polls buy nothing.
    let busy = vec![page(5.0, 0.2); 50];
    let price = price_feed(&busy, 0.1, 0.25, 24.0, 8.0);
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
                    let c = covered_page(p.visits_per_day, p.rate_per_day, polls);
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
