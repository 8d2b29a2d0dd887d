//! Pages whose changes a feed announces, and how often to poll that feed (pure).
//!
//! A page seen in its host's feed is *covered*: rather than being fetched blindly every `1/f`
//! days, it is fetched as soon as the feed lists a change *and* `1/f` days have passed since its
//! last fetch. It is then never staler than under the plan, and it costs fewer fetches: the wait
//! is `1/f` and then, the process being memoryless, `1/λ` on average until the next change, so
//! [`covered_visits_per_day`] `= 1 / (1/f + 1/λ)`. The difference goes back to the budget.
//!
//! A feed lists only its last few entries (commonly 20), so it is polled often enough to list about
//! [`CHANGES_PER_POLL`] changes per poll, at least daily (to discover what it announces), and at most
//! a set number of times a day and a set share of its host's limit ([`feed_poll_rate`]).

/// Changes a poll should find on average: well inside a 20-entry feed.
pub const CHANGES_PER_POLL: f64 = 4.0;

/// Expected fetches per day of a covered page planned at `visits_per_day` that changes
/// `rate_per_day`.
pub fn covered_visits_per_day(visits_per_day: f64, rate_per_day: f64) -> f64 {
    if visits_per_day <= 0.0 || rate_per_day <= 0.0 {
        return 0.0;
    }
    1.0 / (1.0 / visits_per_day + 1.0 / rate_per_day)
}

/// Polls per day of a feed whose announced pages change `announced_rate_per_day` in total:
/// `announced / CHANGES_PER_POLL`, at least daily, at most `max_polls_per_day` and at most
/// `max_host_share` of `host_limit_per_day`.
pub fn feed_poll_rate(
    announced_rate_per_day: f64,
    max_polls_per_day: f64,
    host_limit_per_day: f64,
    max_host_share: f64,
) -> f64 {
    let wanted =
        (announced_rate_per_day.max(0.0) / CHANGES_PER_POLL).clamp(1.0, max_polls_per_day.max(1.0));
    wanted.min(max_host_share * host_limit_per_day).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covered_pages_cost_less_than_their_plan() {
        assert!((covered_visits_per_day(1.0, 1.0) - 0.5).abs() < 1e-12);
        // A page changing far faster than its plan costs almost the plan; a slow one almost nothing.
        assert!(covered_visits_per_day(1.0, 1000.0) > 0.99);
        assert!(covered_visits_per_day(1.0, 0.01) < 0.01);
        assert_eq!(covered_visits_per_day(0.0, 1.0), 0.0);
    }

    #[test]
    fn polls_follow_the_feed_within_politeness() {
        assert_eq!(feed_poll_rate(0.0, 24.0, 100.0, 0.1), 1.0);
        assert_eq!(feed_poll_rate(40.0, 24.0, 1000.0, 0.1), 10.0);
        assert_eq!(feed_poll_rate(400.0, 24.0, 1000.0, 0.1), 24.0);
        assert_eq!(feed_poll_rate(400.0, 24.0, 50.0, 0.1), 5.0);
    }
}
