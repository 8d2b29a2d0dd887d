//! How stale one copy is now, from everything freshet knows of it (pure): when it was taken, a
//! span over which the page is known not to have changed (a feed that covered it, listed every
//! change in that span and none of this page's), a span over which a source that shows only some
//! of the page's changes kept quiet (a sitemap whose `lastmod`s are not yet believed), a known
//! later change (a feed entry or a sitemap `lastmod` newer than the copy), and the posterior on
//! the page's rate.
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
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CopyKnowledge {
    /// When the copy was taken (the last successful check), clock ms.
    pub taken_ms: i64,
    /// A span over which the page is known not to have changed, clock ms (a feed that covered it
    /// and listed every change in the span, none of them this page's).
    pub watched: Option<(i64, i64)>,
    /// A span from the copy over which a source that shows only some of the page's changes kept
    /// quiet (a sitemap whose `lastmod`s are not yet believed).
    pub quiet: Option<Quiet>,
    /// A change after the copy that is known (feed entry, sitemap lastmod), clock ms.
    pub known_change_ms: Option<i64>,
}

/// A source kept quiet about a page from its copy to `until_ms` (clock ms), and it shows the
/// share `shown` of the page's changes: the changes it does not show are a Poisson process of
/// rate `(1 - shown)λ`, so each moment of the span is `1 - shown` unseen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quiet {
    /// Its last read that listed the page with nothing newer than the copy, clock ms.
    pub until_ms: i64,
    /// The share of changes it shows, in [0, 1].
    pub shown: f64,
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
    /// Each moment `s` after the copy `c` is seen (a watched span), partly seen (a quiet span of
    /// a source showing the share `q` of changes: `1 - q` of it unseen) or unseen; `U(s)` is the
    /// unseen time from `c` to `s`. Changes in disjoint spans are independent given λ, so a
    /// change nothing showed happened by `s` with `P(s) = 1 - E[e^{-λU(s)}]` (the posterior's
    /// [`RateBelief::p_stale`] at `U(s)`): the copy is stale with `P(now)`, and its expected age
    /// is `∫_c^now P(s) ds`. Between the moments where the kind of time changes `U` is linear
    /// with slope `r`, so each piece adds `length · p(U)` where `r = 0` and
    /// `(A(U + r·length) - A(U)) / r` otherwise, `A(t) = E[t - (1 - e^{-λt})/λ]`
    /// ([`Prior::expected_age_days`], whose derivative is `p`). With a watched span alone this is
    /// `w · p(g1) + A(g1 + g2)`, `g1` the time before the span and `g2` after it.
    ///
    /// The quiet span once counted its unseen share as one block at its front, joined to the
    /// watched span into one: exact in P(stale) but over in the age, and where a feed watched
    /// the start of the quiet span, the block pushed the feed's span later (the demo's shop,
    /// whose stale `lastmod`s are worth little, read 30% older than it was).
    pub fn staleness(&self, belief: &impl RateBelief, now_ms: i64) -> Staleness {
        if let Some(known) = self.known_change_ms.filter(|&k| k > self.taken_ms) {
            return Staleness {
                expected_age_days: (now_ms - known).max(0) as f64 / MS_PER_DAY,
                p_stale: 1.0,
                known_stale: true,
            };
        }
        let taken = self.taken_ms;
        let now_ms = now_ms.max(taken);
        let watched = self.watched_after_copy();
        let quiet = self.quiet.filter(|q| q.until_ms > taken);
        // The moments where the kind of time may change (a missing one stands at the copy: the
        // pieces of no length it makes add nothing). No allocation: a sample judges many copies.
        let (from, until) = watched.unwrap_or((taken, taken));
        let quiet_until = quiet.map_or(taken, |q| q.until_ms);
        let mut cuts = [taken, now_ms, from, until, quiet_until].map(|t| t.clamp(taken, now_ms));
        cuts.sort_unstable();
        let (mut unseen, mut age) = (0.0, 0.0);
        for piece in cuts.windows(2) {
            let (start, end) = (piece[0], piece[1]);
            let length = (end - start) as f64 / MS_PER_DAY;
            let slope = if watched.is_some_and(|(from, until)| from <= start && end <= until) {
                0.0
            } else if let Some(q) = quiet.filter(|q| end <= q.until_ms) {
                (1.0 - q.shown).clamp(0.0, 1.0)
            } else {
                1.0
            };
            if slope < 1e-9 {
                age += length * belief.p_stale(unseen);
            } else {
                let next = unseen + slope * length;
                age += (belief.expected_age_days(next) - belief.expected_age_days(unseen)) / slope;
                unseen = next;
            }
        }
        Staleness {
            expected_age_days: age,
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
            quiet: None,
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
            quiet: None,
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
            quiet: None,
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
            quiet: None,
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
            quiet: None,
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

    /// The piecewise sum against a fine Riemann sum of `p(U(s))` over the same moments.
    #[test]
    fn the_age_is_the_integral_of_p_stale_over_the_unseen_time() {
        let b = belief();
        let copy = CopyKnowledge {
            taken_ms: 0,
            watched: Some((DAY, 2 * DAY)),
            quiet: Some(Quiet {
                until_ms: 3 * DAY,
                shown: 0.3,
            }),
            known_change_ms: None,
        };
        let now = 5 * DAY;
        let steps = 200_000;
        let dt = now as f64 / MS_PER_DAY / f64::from(steps);
        let (mut unseen, mut integral) = (0.0, 0.0);
        for i in 0..steps {
            let s = (f64::from(i) + 0.5) * dt * MS_PER_DAY;
            let slope = if (DAY as f64..2.0 * DAY as f64).contains(&s) {
                0.0
            } else if s < 3.0 * DAY as f64 {
                0.7
            } else {
                1.0
            };
            let mid = unseen + slope * dt / 2.0;
            integral += b.p_stale(mid) * dt;
            unseen += slope * dt;
        }
        let got = copy.staleness(&b, now);
        assert!(
            (got.expected_age_days - integral).abs() < 1e-6,
            "{got:?} vs {integral}"
        );
        assert!((got.p_stale - b.p_stale(unseen)).abs() < 1e-9);
    }

    /// A source that shows every change watches as a feed does; one that shows none, not at
    /// all; in between the copy is judged in between, and a watched span inside the quiet one
    /// keeps its place (it once moved behind the quiet span's unseen share, and aged the copy).
    #[test]
    fn a_quiet_span_counts_for_the_share_of_changes_it_shows() {
        let b = belief();
        let now = 4 * DAY;
        let with = |shown: f64, watched: Option<(i64, i64)>| CopyKnowledge {
            taken_ms: 0,
            watched,
            quiet: Some(Quiet {
                until_ms: 3 * DAY,
                shown,
            }),
            known_change_ms: None,
        };
        let age = |copy: CopyKnowledge| copy.staleness(&b, now).expected_age_days;
        let none = CopyKnowledge {
            quiet: None,
            ..with(0.0, None)
        };
        let all = CopyKnowledge {
            watched: Some((0, 3 * DAY)),
            quiet: None,
            ..none
        };
        assert!((age(with(1.0, None)) - age(all)).abs() < 1e-12);
        assert!((age(with(0.0, None)) - age(none)).abs() < 1e-12);
        let ages: Vec<f64> = [0.0, 0.1, 0.5, 0.9, 1.0]
            .iter()
            .map(|&q| age(with(q, None)))
            .collect();
        assert!(ages.windows(2).all(|w| w[1] < w[0]), "{ages:?}");
        // A feed watched the first day: a quiet span on top of it never makes the copy older.
        let feed = Some((0, DAY));
        let feed_alone = CopyKnowledge {
            watched: feed,
            ..none
        };
        for q in [0.0, 0.05, 0.5, 1.0] {
            assert!(age(with(q, feed)) <= age(feed_alone) + 1e-12, "q = {q}");
            assert!(age(with(q, feed)) <= age(with(q, None)) + 1e-12, "q = {q}");
        }
    }
}
