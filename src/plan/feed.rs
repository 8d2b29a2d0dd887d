//! Pages whose changes a feed announces, what they cost, and how often to poll that feed (pure).
//!
//! A page seen in its host's feed is *covered*: rather than being fetched blindly every `T = 1/f`
//! days, it is fetched at `T` after its last fetch if the feed announced a change in the
//! meantime, and otherwise as soon as the feed announces the next one. A feed polled `φ` times a
//! day finds a change `D ~ U(0, 1/φ)` late. One cycle, from fetch to fetch, then lasts
//! `C = T + e^{-λT} (1/λ + E[D])` (the process is memoryless: a page unchanged at `T` changes
//! `1/λ` later on average) and accumulates the plan's age over `[0, T]`, `T Ā(λ, T)`, plus
//! `e^{-λT} E[D²]/2` while an announced change waits for the poll that finds it. So a covered
//! page costs [`covered_page`]: `1/C` fetches a day and a time-averaged age of
//! `(T Ā(λ, T) + e^{-λT} / (6 φ²)) / C`. A page the plan visits far more often than it changes
//! (`λT` small) is fetched about once per change, soon after it; a page that changes every
//! interval anyway saves almost nothing.
//!
//! A feed is worth polling when its covered pages, at the margin's price `μ` per visit a day,
//! cost less with it than on the plan alone, polls included ([`price_feed`]). It lists only its
//! last few entries (commonly 20), so the caller also bounds the polls from below so that it
//! does not overflow.

use super::time_averaged_age;

/// What a covered page costs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CoveredCost {
    /// Expected fetches per day.
    pub visits_per_day: f64,
    /// Time-averaged age of the copy, days.
    pub age_days: f64,
}

/// A covered page planned at `visits_per_day` that changes `rate_per_day`, its feed polled
/// `polls_per_day` (see the module docs). A page not visited or not changing costs nothing.
pub fn covered_page(visits_per_day: f64, rate_per_day: f64, polls_per_day: f64) -> CoveredCost {
    let nothing = CoveredCost {
        visits_per_day: 0.0,
        age_days: 0.0,
    };
    if !(visits_per_day > 0.0 && rate_per_day > 0.0 && polls_per_day > 0.0) {
        return nothing;
    }
    let interval = 1.0 / visits_per_day;
    let unchanged = (-rate_per_day * interval).exp();
    let cycle = interval + unchanged * (1.0 / rate_per_day + 0.5 / polls_per_day);
    let age = interval * time_averaged_age(rate_per_day, interval)
        + unchanged / (6.0 * polls_per_day * polls_per_day);
    if !(cycle.is_finite() && age.is_finite()) {
        return nothing;
    }
    CoveredCost {
        visits_per_day: 1.0 / cycle,
        age_days: age / cycle,
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
/// visits (each page audited every `audit_intervals` of its intervals as well), worth it when that
/// is below their cost on the plan alone. The cost is smooth and has one minimum in `ln φ` (the
/// polls grow, the pages' costs fall), found by golden-section search.
pub fn price_feed(
    pages: &[CoveredPage],
    mu: f64,
    min_polls: f64,
    max_polls: f64,
    audit_intervals: f64,
) -> FeedPrice {
    let pages: Vec<&CoveredPage> = pages
        .iter()
        .filter(|p| p.visits_per_day > 0.0 && p.visits_per_day.is_finite() && p.rate_per_day > 0.0)
        .collect();
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
                .map(|p| {
                    let c = covered_page(p.visits_per_day, p.rate_per_day, polls);
                    p.weight * c.age_days
                        + mu * (c.visits_per_day + p.visits_per_day / audit_intervals)
                })
                .sum::<f64>()
    };
    let on_plan: f64 = pages
        .iter()
        .map(|p| {
            p.weight * time_averaged_age(p.rate_per_day, 1.0 / p.visits_per_day)
                + mu * p.visits_per_day
        })
        .sum();
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

#[cfg(test)]
mod tests;
