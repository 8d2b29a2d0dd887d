//! Adaptive back-off for one host (pure: times come in as arguments).
//!
//! A host that answers 429 / 503, times out, or fails with a 5xx raises its back-off level `L`.
//! At level `L` the host is closed for
//! `d(L) = min(cap, base · 2^(L-1)) · (1 + U(0, jitter))`,
//! or for the server's `Retry-After` when that is longer (a Retry-After is honoured in full, up to
//! `max_retry_after`, and never shortened by jitter). While `L > 0` the host's interval is also
//! stretched to `min(cap, interval · 2^L)`, so a host that pushed back sees fewer requests, and
//! each success lowers `L` by one: recovery is gradual, one halving per success.
//! Jitter only ever lengthens a wait, so hosts that failed together do not return together.

use std::time::Duration;

/// How hard a host backs off. One policy per [`HostPool`](super::HostPool).
#[derive(Debug, Clone, PartialEq)]
pub struct BackoffPolicy {
    /// Closure after the first failure; doubles with each further one.
    pub base: Duration,
    /// The longest closure and the longest stretched interval that doubling can reach.
    pub cap: Duration,
    /// The largest Retry-After honoured (a server asking for a year gets this instead).
    pub max_retry_after: Duration,
    /// Random lengthening of a closure, as a fraction of it (0.1 = up to 10 % longer).
    pub jitter: f64,
}

impl Default for BackoffPolicy {
    fn default() -> Self {
        Self {
            base: Duration::from_secs(5),
            cap: Duration::from_secs(3600),
            max_retry_after: Duration::from_secs(24 * 3600),
            jitter: 0.1,
        }
    }
}

/// The back-off state of one host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Backoff {
    /// How many unanswered failures are outstanding (0 = healthy).
    pub level: u32,
    /// The host is not contacted before this clock time (Unix ms); 0 when never closed.
    pub until_ms: i64,
}

impl Backoff {
    /// A failure at `now_ms`: raises the level and closes the host. `retry_after` is the server's
    /// own request (429 / 503); `unit` is a uniform draw in [0, 1) for the jitter.
    pub fn fail(
        &mut self,
        policy: &BackoffPolicy,
        now_ms: i64,
        retry_after: Option<Duration>,
        unit: f64,
    ) {
        self.level = self.level.saturating_add(1);
        let exponential = policy
            .closure(self.level)
            .mul_f64(1.0 + jitter(policy, unit));
        let asked = retry_after.map_or(Duration::ZERO, |d| d.min(policy.max_retry_after));
        let closed = exponential.max(asked);
        let until = now_ms.saturating_add(duration_ms_ceil(closed));
        self.until_ms = self.until_ms.max(until);
    }

    /// A success: one step of recovery.
    pub fn succeed(&mut self) {
        self.level = self.level.saturating_sub(1);
    }

    /// The interval between requests at the current level: `interval · 2^level`, capped.
    pub fn stretch(&self, policy: &BackoffPolicy, interval: Duration) -> Duration {
        if self.level == 0 {
            return interval;
        }
        let factor = 2u32.saturating_pow(self.level.min(31));
        interval
            .saturating_mul(factor)
            .min(policy.cap.max(interval))
    }
}

impl BackoffPolicy {
    /// The exponential closure at `level` (≥ 1), before jitter.
    fn closure(&self, level: u32) -> Duration {
        let factor = 2u32.saturating_pow(level.saturating_sub(1).min(31));
        self.base.saturating_mul(factor).min(self.cap)
    }
}

/// The jitter fraction for a uniform draw, clamped to sane values.
fn jitter(policy: &BackoffPolicy, unit: f64) -> f64 {
    let spread = if policy.jitter.is_finite() {
        policy.jitter.clamp(0.0, 1.0)
    } else {
        0.0
    };
    spread * unit.clamp(0.0, 1.0)
}

/// A duration in whole milliseconds, rounded up (a wait must never fall short).
pub(crate) fn duration_ms_ceil(d: Duration) -> i64 {
    let ms = d.as_nanos().div_ceil(1_000_000);
    i64::try_from(ms).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> BackoffPolicy {
        BackoffPolicy {
            base: Duration::from_secs(2),
            cap: Duration::from_secs(10),
            max_retry_after: Duration::from_secs(60),
            jitter: 0.5,
        }
    }

    #[test]
    fn closures_double_up_to_the_cap() {
        let p = policy();
        let mut b = Backoff::default();
        let mut closures = Vec::new();
        for _ in 0..5 {
            b.fail(&p, 1_000, None, 0.0);
            closures.push(b.until_ms - 1_000);
        }
        assert_eq!(closures, vec![2_000, 4_000, 8_000, 10_000, 10_000]);
    }

    #[test]
    fn jitter_only_lengthens() {
        let p = policy();
        let mut b = Backoff::default();
        b.fail(&p, 0, None, 0.999);
        assert!(b.until_ms > 2_000 && b.until_ms <= 3_000, "{}", b.until_ms);
    }

    #[test]
    fn retry_after_is_honoured_and_bounded() {
        let p = policy();
        let mut b = Backoff::default();
        b.fail(&p, 0, Some(Duration::from_secs(30)), 0.0);
        assert_eq!(b.until_ms, 30_000, "longer than the exponential closure");
        let mut b = Backoff::default();
        b.fail(&p, 0, Some(Duration::from_secs(100_000)), 0.0);
        assert_eq!(b.until_ms, 60_000, "bounded by max_retry_after");
        let mut b = Backoff::default();
        b.fail(&p, 0, Some(Duration::from_millis(500)), 0.0);
        assert_eq!(
            b.until_ms, 2_000,
            "shorter Retry-After does not shorten the closure"
        );
    }

    #[test]
    fn a_later_failure_never_shortens_an_earlier_closure() {
        let p = policy();
        let mut b = Backoff::default();
        b.fail(&p, 0, Some(Duration::from_secs(50)), 0.0);
        b.fail(&p, 1_000, None, 0.0);
        assert_eq!(b.until_ms, 50_000);
    }

    #[test]
    fn successes_recover_one_level_each() {
        let p = policy();
        let interval = Duration::from_millis(500);
        let mut b = Backoff::default();
        b.fail(&p, 0, None, 0.0);
        b.fail(&p, 0, None, 0.0);
        assert_eq!(b.stretch(&p, interval), Duration::from_secs(2));
        b.succeed();
        assert_eq!(b.stretch(&p, interval), Duration::from_secs(1));
        b.succeed();
        b.succeed();
        assert_eq!(b.level, 0);
        assert_eq!(b.stretch(&p, interval), interval);
    }

    #[test]
    fn stretch_is_capped_but_never_below_the_interval() {
        let p = policy();
        let b = Backoff {
            level: 40,
            until_ms: 0,
        };
        assert_eq!(
            b.stretch(&p, Duration::from_secs(1)),
            Duration::from_secs(10)
        );
        assert_eq!(
            b.stretch(&p, Duration::from_secs(20)),
            Duration::from_secs(20)
        );
    }
}
