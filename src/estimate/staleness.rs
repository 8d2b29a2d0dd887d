//! How stale one copy is now, from everything freshet knows of it (pure): when it was taken, a
//! span over which the page is known not to have changed (a feed that covered it, listed every
//! change in that span and none of this page's), a known later change (a feed entry or a sitemap
//! `lastmod` newer than the copy), and the posterior on the page's rate.
//!
//! - A known change makes the copy known stale, with its known age `now - change`.
//! - Otherwise the page may have changed only in the time after the copy that nothing watched:
//!   `p_stale` and the expected age are averaged over the posterior ([`Prior::p_stale`],
//!   [`Prior::expected_age_days`]; the formula is at [`CopyKnowledge::staleness`]).
//!
//! Ignoring a quiet feed makes every covered page look as stale as if nothing watched it: in the
//! demo that overstated the mean age by half. `report age`, `explain`, the refresher's freshness
//! samples and the demo's calibration all judge a copy here.

use crate::clock::MS_PER_DAY;

use super::{Posterior, Prior};

/// A belief about a page's rate that can say how stale a copy gets: the exact posterior (the
/// scheduler's own samples) or the Gamma stored for reports.
pub trait RateBelief {
    /// Probability of at least one change within `since_days`.
    fn p_stale(&self, since_days: f64) -> f64;
    /// Expected age after `since_days` unseen.
    fn expected_age_days(&self, since_days: f64) -> f64;
}

impl RateBelief for Prior {
    fn p_stale(&self, since_days: f64) -> f64 {
        Prior::p_stale(self, since_days)
    }
    fn expected_age_days(&self, since_days: f64) -> f64 {
        Prior::expected_age_days(self, since_days)
    }
}

impl RateBelief for Posterior {
    fn p_stale(&self, since_days: f64) -> f64 {
        Posterior::p_stale(self, since_days)
    }
    fn expected_age_days(&self, since_days: f64) -> f64 {
        Posterior::expected_age_days(self, since_days)
    }
}

/// What is known of one copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyKnowledge {
    /// When the copy was taken (the last successful check), clock ms.
    pub taken_ms: i64,
    /// A span over which the page is known not to have changed, clock ms (a feed that covered it
    /// and listed every change in the span, none of them this page's).
    pub watched: Option<(i64, i64)>,
    /// A change after the copy that is known (feed entry, sitemap lastmod), clock ms.
    pub known_change_ms: Option<i64>,
}

/// How stale a copy is at one moment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Staleness {
    /// Expected age in days (0 while the copy is current).
    pub expected_age_days: f64,
    /// Probability that the copy is stale.
    pub p_stale: f64,
    /// Whether a newer version is known to exist (then both figures are exact).
    pub known_stale: bool,
}

impl CopyKnowledge {
    /// The watched span after the copy was taken, if any is left.
    fn watched_after_copy(&self) -> Option<(i64, i64)> {
        let (from, until) = self.watched?;
        let from = from.max(self.taken_ms);
        (until > from).then_some((from, until))
    }

    /// The copy's staleness at `now_ms` under the rate posterior `belief`.
    ///
    /// With the copy taken at `c`, a watched span `[w0, w1]` and `g1 = w0 - c`, `g2 = now - w1`,
    /// `w = w1 - w0`: changes in disjoint spans are independent given λ, so the copy is stale with
    /// `p = 1 - E[e^{-λ(g1 + g2)}]`, and its expected age is `w · P(change in g1) + A(g1 + g2)`
    /// (a change before the span ages through it; otherwise the copy ages as if the span were
    /// cut out), `A(t) = E[t - (1 - e^{-λt})/λ]` ([`Prior::expected_age_days`]).
    pub fn staleness(&self, belief: &impl RateBelief, now_ms: i64) -> Staleness {
        if let Some(known) = self.known_change_ms.filter(|&k| k > self.taken_ms) {
            return Staleness {
                expected_age_days: (now_ms - known).max(0) as f64 / MS_PER_DAY,
                p_stale: 1.0,
                known_stale: true,
            };
        }
        let days = |ms: i64| ms.max(0) as f64 / MS_PER_DAY;
        let now_ms = now_ms.max(self.taken_ms);
        let (before, watched, after) = match self.watched_after_copy() {
            Some((from, until)) if from < now_ms => {
                let until = until.min(now_ms);
                (
                    days(from - self.taken_ms),
                    days(until - from),
                    days(now_ms - until),
                )
            }
            _ => (days(now_ms - self.taken_ms), 0.0, 0.0),
        };
        let unseen = before + after;
        Staleness {
            expected_age_days: watched * belief.p_stale(before) + belief.expected_age_days(unseen),
            p_stale: belief.p_stale(unseen),
            known_stale: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = MS_PER_DAY as i64;

    fn belief() -> Prior {
        Prior {
            shape: 4.0,
            rate: 2.0,
        }
    }

    #[test]
    fn a_known_change_is_known_stale_with_its_age() {
        let copy = CopyKnowledge {
            taken_ms: 0,
            watched: Some((0, DAY)),
            known_change_ms: Some(2 * DAY),
        };
        let s = copy.staleness(&belief(), 5 * DAY);
        assert!(s.known_stale);
        assert_eq!(s.p_stale, 1.0);
        assert!((s.expected_age_days - 3.0).abs() < 1e-12);
    }

    #[test]
    fn a_change_older_than_the_copy_is_not_news() {
        let copy = CopyKnowledge {
            taken_ms: 3 * DAY,
            watched: None,
            known_change_ms: Some(2 * DAY),
        };
        let s = copy.staleness(&belief(), 4 * DAY);
        assert!(!s.known_stale);
        assert!((s.p_stale - belief().p_stale(1.0)).abs() < 1e-12);
    }

    #[test]
    fn a_quiet_feed_cuts_its_span_out_of_the_unseen_time() {
        let b = belief();
        let unwatched = CopyKnowledge {
            taken_ms: 0,
            watched: None,
            known_change_ms: None,
        };
        let now = 4 * DAY;
        // Watched from the copy to day 3: one unseen day.
        let to_day_3 = CopyKnowledge {
            watched: Some((0, 3 * DAY)),
            ..unwatched
        };
        let s = to_day_3.staleness(&b, now);
        assert!((s.p_stale - b.p_stale(1.0)).abs() < 1e-12);
        assert!((s.expected_age_days - b.expected_age_days(1.0)).abs() < 1e-12);
        let u = unwatched.staleness(&b, now);
        assert!((u.p_stale - b.p_stale(4.0)).abs() < 1e-12);
        assert!((u.expected_age_days - b.expected_age_days(4.0)).abs() < 1e-12);
        // Watched over days 1 to 3 only: unseen day 0-1 and day 3-4; a change in the first
        // unseen day ages through the watched two.
        let middle = CopyKnowledge {
            watched: Some((DAY, 3 * DAY)),
            ..unwatched
        };
        let m = middle.staleness(&b, now);
        assert!((m.p_stale - b.p_stale(2.0)).abs() < 1e-12);
        let want = 2.0 * b.p_stale(1.0) + b.expected_age_days(2.0);
        assert!((m.expected_age_days - want).abs() < 1e-12);
        assert!(s.expected_age_days < m.expected_age_days);
        assert!(m.expected_age_days < u.expected_age_days);
        // A span before the copy says nothing; one reaching past now covers up to now.
        let old = CopyKnowledge {
            taken_ms: 2 * DAY,
            watched: Some((0, DAY)),
            known_change_ms: None,
        };
        assert_eq!(
            old.staleness(&b, now),
            CopyKnowledge {
                watched: None,
                ..old
            }
            .staleness(&b, now)
        );
        let ahead = CopyKnowledge {
            watched: Some((0, 9 * DAY)),
            ..unwatched
        };
        assert_eq!(ahead.staleness(&b, now).p_stale, 0.0);
    }

    /// The closed form against a simulation of the process (fixed λ).
    #[test]
    fn the_expected_age_matches_a_simulation() {
        let lambda = 1.5;
        let sure = Prior {
            shape: 1e7,
            rate: 1e7 / lambda,
        };
        let copy = CopyKnowledge {
            taken_ms: 0,
            watched: Some((DAY / 2, 2 * DAY)),
            known_change_ms: None,
        };
        let now = 3 * DAY;
        let want = copy.staleness(&sure, now).expected_age_days;
        // Exact given λ, by the first change after the copy outside the watched span.
        let mut state = 7u64;
        let mut uniform = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let n = 200_000;
        let mut total = 0.0;
        for _ in 0..n {
            // Changes as a Poisson process on the unseen time (watched span removed).
            let first_unseen = -uniform().ln() / lambda;
            let at = if first_unseen < 0.5 {
                first_unseen
            } else {
                first_unseen + 1.5
            };
            if at < 3.0 {
                total += 3.0 - at;
            }
        }
        let got = total / n as f64;
        assert!((got - want).abs() < 0.01, "{got} vs {want}");
    }
}
