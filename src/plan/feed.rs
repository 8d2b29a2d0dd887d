//! Pages whose changes are announced (by a feed, or by a sitemap `lastmod`), what they cost, and
//! how often to poll a feed (pure).
//!
//! **A known change.** When each change of a page is known, fetching it `d` after the change
//! costs, per cycle (a fetch, the next change `1/λ` later on average, a fetch `d` after it),
//! `w d²/2` of age and one visit: at the plan's price `μ` of a visit a day, `(w d²/2 + μ) /
//! (1/λ + d)` a day, least at `d = √(1/λ² + 2μ/w) − 1/λ` ([`known_change_delay`]). A page that
//! rarely changes goes almost at once; one that changes all the time waits about as long as its
//! plan would (the delay of a page the plan visits every `T` is `T − 1/λ` for `λT` large).
//!
//! **A covered page** (one its feed has announced faithfully) waits for its feed instead of being
//! fetched blindly: it is fetched `d` after an announced change, or when the poll that finds the
//! change comes, if later. A feed polled `φ` times a day finds a change `D ~ U(0, 1/φ)` late, so
//! a cycle lasts `1/λ + E[max(d, D)]` and ages `E[max(d, D)²]/2` ([`covered_page`]).
//!
//! **A page not covered** whose change was announced anyway (its feed has not proven itself yet,
//! or a sitemap `lastmod` told) goes `d` after the change but never later than its plan, with
//! `μ/w` read off its planned interval ([`known_change_delay_days`]).
//!
//! A feed is worth polling when its covered pages, at the margin's price `μ` per visit a day,
//! cost less with it than on the plan alone, polls included ([`price_feed`]). It lists only its
//! last few entries (commonly 20), so the caller also bounds the polls from below so that it
//! does not overflow.

use super::time_averaged_age;

/// How long after a known change to fetch a page that changes `rate_per_day`, a visit a day
/// being worth `price` of its weighted age (`μ/w`): `√(1/λ² + 2μ/w) − 1/λ` (module docs).
pub fn known_change_delay(rate_per_day: f64, price: f64) -> f64 {
    if !(rate_per_day > 0.0 && price > 0.0) {
        return 0.0;
    }
    let mean_gap = 1.0 / rate_per_day;
    let d = 2.0 * price / ((mean_gap * mean_gap + 2.0 * price).sqrt() + mean_gap);
    if d.is_finite() { d } else { 0.0 }
}

/// The price `μ/w` of a visit a day at which `interval_days` is the age-optimal interval of a
/// page that changes `rate_per_day`: the age one more visit a day cuts there, `T² ∂Ā/∂T`.
pub fn visit_price_at(rate_per_day: f64, interval_days: f64) -> f64 {
    if !(rate_per_day > 0.0 && interval_days > 0.0 && interval_days.is_finite()) {
        return 0.0;
    }
    let (lambda, t) = (rate_per_day, interval_days);
    let x = lambda * t;
    let cut = if x < 1e-2 {
        t * t * x * (1.0 / 3.0 - x * (1.0 / 8.0 - x / 30.0))
    } else {
        t * t / 2.0 + (x * (-x).exp() + (-x).exp_m1()) / (lambda * lambda)
    };
    cut.max(0.0)
}

/// How long after a known change to fetch a page its plan visits every `interval_days` and that
/// changes `rate_per_day`, when no feed covers it: [`known_change_delay`] at the price its
/// plan implies ([`visit_price_at`]), never more than the interval.
pub fn known_change_delay_days(rate_per_day: f64, interval_days: f64) -> f64 {
    if !(interval_days > 0.0 && interval_days.is_finite()) {
        return interval_days.max(0.0);
    }
    let price = visit_price_at(rate_per_day, interval_days);
    known_change_delay(rate_per_day, price).min(interval_days)
}

/// What a covered page costs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CoveredCost {
    /// Expected fetches per day.
    pub visits_per_day: f64,
    /// Time-averaged age of the copy, days.
    pub age_days: f64,
}

/// A covered page that changes `rate_per_day`, its feed polled `polls_per_day`, a visit a day
/// worth `price` of its weighted age (see the module docs). A page that does not change costs
/// nothing.
pub fn covered_page(rate_per_day: f64, polls_per_day: f64, price: f64) -> CoveredCost {
    if !(rate_per_day > 0.0 && polls_per_day > 0.0) {
        return CoveredCost {
            visits_per_day: 0.0,
            age_days: 0.0,
        };
    }
    let d = known_change_delay(rate_per_day, price);
    let poll_gap = 1.0 / polls_per_day;
    // E[max(d, D)] and E[max(d, D)²] for D ~ U(0, poll_gap).
    let (wait, wait_sq) = if d >= poll_gap {
        (d, d * d)
    } else {
        (
            (d * d + poll_gap * poll_gap) / (2.0 * poll_gap),
            (2.0 * d * d * d + poll_gap.powi(3)) / (3.0 * poll_gap),
        )
    };
    let cycle = 1.0 / rate_per_day + wait;
    CoveredCost {
        visits_per_day: 1.0 / cycle,
        age_days: wait_sq / 2.0 / cycle,
    }
}

/// Visits a day of a covered page fetched `announced_visits_per_day` times a day after its
/// announced changes ([`covered_page`]) and audited when no change is announced within
/// `audit_days` of its last visit. A cycle ends at the audit when the next change comes later,
/// so it lasts `(1 − e^{−λA})` of the cycle without audits: `c / (1 − e^{−λA})` visits a day.
pub fn covered_visits_per_day(
    announced_visits_per_day: f64,
    rate_per_day: f64,
    audit_days: f64,
) -> f64 {
    if audit_days.is_nan() || audit_days <= 0.0 {
        return announced_visits_per_day;
    }
    if rate_per_day.is_nan() || rate_per_day <= 0.0 {
        return 1.0 / audit_days;
    }
    let announced_share = -(-rate_per_day * audit_days).exp_m1();
    if announced_share > 0.0 {
        announced_visits_per_day / announced_share
    } else {
        1.0 / audit_days
    }
}

/// What a covered page costs with its audits ([`covered_page`], its visits counted by
/// [`covered_visits_per_day`]; audits add no age: they find the copy unchanged).
pub fn covered_page_audited(
    rate_per_day: f64,
    polls_per_day: f64,
    price: f64,
    audit_days: f64,
) -> CoveredCost {
    let announced = covered_page(rate_per_day, polls_per_day, price);
    CoveredCost {
        visits_per_day: covered_visits_per_day(announced.visits_per_day, rate_per_day, audit_days),
        age_days: announced.age_days,
    }
}

/// One page a feed covers, as the plan sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CoveredPage {
    pub weight: f64,
    pub rate_per_day: f64,
    /// The plan's visits per day.
    pub visits_per_day: f64,
}

/// A feed's price: how often to poll it and whether its pages should wait for it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FeedPrice {
    pub polls_per_day: f64,
    /// Whether its pages cost less with it, polls included, than on the plan alone.
    pub worth: bool,
}

/// Prices a feed over the pages it covers at the margin's price `mu` (age cut per visit a
/// day): the poll rate in `[min_polls, max_polls]` that minimises polls plus the pages' age and
/// visits (each page audited when `audit_intervals` of its intervals pass with no announced
/// change, [`covered_visits_per_day`]), worth it when that
/// is below their cost on the plan alone. The cost is smooth and has one minimum in `ln φ` (the
/// polls grow, the pages' costs fall), found by golden-section search.
pub fn price_feed(
    pages: &[CoveredPage],
    mu: f64,
    min_polls: f64,
    max_polls: f64,
    audit_intervals: f64,
) -> FeedPrice {
    let pages = priced_pages(pages);
    let min_polls = min_polls.min(max_polls);
    if pages.is_empty() || max_polls <= 0.0 || !(mu > 0.0 && mu.is_finite()) {
        // Nothing to gain, or visits cost nothing at the margin: poll as little or as often as
        // allowed.
        let worth = !pages.is_empty() && max_polls > 0.0;
        return FeedPrice {
            polls_per_day: if worth { max_polls } else { min_polls },
            worth,
        };
    }
    let with_feed = |polls: f64| -> f64 {
        mu * polls
            + pages
                .iter()
                .map(|p| announced_cost(p, mu, polls, audit_intervals))
                .sum::<f64>()
    };
    let on_plan: f64 = pages.iter().map(|p| plan_cost(p, mu)).sum();
    let (mut lo, mut hi) = (min_polls.max(1e-6).ln(), max_polls.ln());
    let ratio = 0.5 * (5f64.sqrt() - 1.0);
    let (mut a, mut b) = (hi - ratio * (hi - lo), lo + ratio * (hi - lo));
    let (mut fa, mut fb) = (with_feed(a.exp()), with_feed(b.exp()));
    for _ in 0..40 {
        if hi - lo < 1e-3 {
            break;
        }
        if fa <= fb {
            (hi, b, fb) = (b, a, fa);
            a = hi - ratio * (hi - lo);
            fa = with_feed(a.exp());
        } else {
            (lo, a, fa) = (a, b, fb);
            b = lo + ratio * (hi - lo);
            fb = with_feed(b.exp());
        }
    }
    let (polls, cost) = [
        (lo, with_feed(lo.exp())),
        (a, fa),
        (b, fb),
        (hi, with_feed(hi.exp())),
    ]
    .into_iter()
    .min_by(|x, y| x.1.total_cmp(&y.1))
    .map(|(u, c)| (u.exp(), c))
    .unwrap_or((min_polls, f64::INFINITY));
    if cost < on_plan {
        FeedPrice {
            polls_per_day: polls,
            worth: true,
        }
    } else {
        FeedPrice {
            polls_per_day: min_polls,
            worth: false,
        }
    }
}

/// Whether a feed could be worth reading once it has learnt every page it lists, judged on the
/// pages it covers so far: whether what they gain from it, read `max_polls` times a day (its
/// most), covers the polls that keeping up with their changes takes, `room` of them between two
/// polls. On fewer than `min_pages` pages that a price can be set on, nothing is judged, and
/// the answer is yes.
///
/// What announced pages save, at the margin's price `mu` as [`price_feed`] weighs them, and the
/// polls a feed needs not to overflow both grow with the pages it lists: for many pages the
/// polls tend to their changes a day over `room`, whichever way the feed lists them
/// ([`polls_to_keep_up`]), and each change is charged `mu / room`. (That is the limit of a large
/// feed, the one it would become by learning; a feed that lists each page once, at its latest
/// change, and covers fewer pages than `room` needs fewer polls now.)
///
/// A page comes to be covered at its first listed change, so those covered first are the fast
/// ones: each page is weighed by the inverse of its rate, as the feed's pages are sampled
/// (Horvitz–Thompson), so that the answer is about all the pages it lists. Unweighed, the feeds
/// of `simulate --signals 0.2`, their slow pages not learnt yet, were taken for futile, and
/// freshet's mean age went from 0.874 to 0.884 times the oracle's. Once a feed has learnt all
/// its pages the weights lean towards its slow ones, which errs towards reading it weekly.
///
/// A feed of pages that change faster than the plan can visit them is futile: their copies are
/// stale most of the time whether or not their changes are known, and each change a day takes a
/// tenth of a poll a day of a 20-entry feed.
pub fn feed_could_pay(
    pages: &[CoveredPage],
    mu: f64,
    max_polls: f64,
    room: f64,
    audit_intervals: f64,
    min_pages: usize,
) -> bool {
    let pages = priced_pages(pages);
    if pages.len() < min_pages.max(1) || !(mu > 0.0 && mu.is_finite()) {
        return true;
    }
    if !(max_polls > 0.0 && room > 0.0) {
        return false;
    }
    // Per change of each page: what announcing it gains, less the share of a poll it takes.
    let net_per_change: f64 = pages
        .iter()
        .map(|p| {
            let gain = plan_cost(p, mu) - announced_cost(p, mu, max_polls, audit_intervals);
            gain / p.rate_per_day - mu / room
        })
        .sum();
    // A sum that is not a number judges nothing.
    net_per_change > 0.0 || net_per_change.is_nan()
}

/// The pages a price can be set on: visited by the plan, changing, weighed.
fn priced_pages(pages: &[CoveredPage]) -> Vec<&CoveredPage> {
    pages
        .iter()
        .filter(|p| {
            p.visits_per_day > 0.0
                && p.visits_per_day.is_finite()
                && p.rate_per_day > 0.0
                && p.weight > 0.0
        })
        .collect()
}

/// A covered page's weighted age and visits a day (at `mu` each) while it waits for a feed read
/// `polls` times a day.
fn announced_cost(p: &CoveredPage, mu: f64, polls: f64, audit_intervals: f64) -> f64 {
    let audit_days = audit_intervals / p.visits_per_day;
    let c = covered_page_audited(p.rate_per_day, polls, mu / p.weight, audit_days);
    p.weight * c.age_days + mu * c.visits_per_day
}

/// The same page's weighted age and visits a day on the plan alone.
fn plan_cost(p: &CoveredPage, mu: f64) -> f64 {
    p.weight * time_averaged_age(p.rate_per_day, 1.0 / p.visits_per_day) + mu * p.visits_per_day
}

/// The fewest polls a day at which a feed keeps up with pages changing at `rates_per_day`, no
/// more than `room` of them expected to change between two polls (the caller keeps half the
/// feed's entries as a margin).
///
/// A feed that lists every change fills with the changes, `Σλ/φ` an interval. One that lists
/// each page once, at its latest change (most feeds), fills with the pages that changed: page
/// `i` changed within an interval `1/φ` with probability `1 − e^{−λᵢ/φ}`, and a page changing
/// ten times an interval takes one entry, not ten. Counting its changes (as for the first kind)
/// asked such a feed for polls it does not need, and priced it out where it holds its pages
/// well: `simulate --hosts 200 --budget 0.2 --signals 0.2 --feed-entries latest-change`.
/// Zero when every page fits (the feed never drops one however rarely it is read).
///
/// Rates that are not positive finite numbers change nothing; the answer is within a part in a
/// billion of the least (or at most 10⁻¹² of the every-change answer, where that is enough).
pub fn polls_to_keep_up(rates_per_day: &[f64], room: f64, lists_every_change: bool) -> f64 {
    let changing_rates = || {
        rates_per_day
            .iter()
            .copied()
            .filter(|r| r.is_finite() && *r > 0.0)
    };
    let changes: f64 = changing_rates().sum();
    if changes == 0.0 {
        return 0.0;
    }
    if lists_every_change || !(changes / room).is_finite() {
        return changes / room;
    }
    let changing = changing_rates().count() as f64;
    if changing <= room {
        return 0.0;
    }
    let pages_changed =
        |polls: f64| -> f64 { changing_rates().map(|r| -(-r / polls).exp_m1()).sum() };
    // At `changes / room` polls the pages changed are at most `room` (each page's chance is at
    // most its λ/φ); far fewer polls let more than `room` change (all of them, as φ → 0). By
    // bisection in ln φ.
    let mut high = changes / room;
    let mut low = high * 1e-12;
    if pages_changed(low) <= room {
        return low;
    }
    for _ in 0..100 {
        let mid = (low * high).sqrt();
        if pages_changed(mid) > room {
            low = mid;
        } else {
            high = mid;
        }
        if high / low < 1.0 + 1e-9 {
            break;
        }
    }
    high
}

#[cfg(test)]
mod tests;
