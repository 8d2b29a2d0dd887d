//! The one source of time. Everything that needs "now" or wants to wait asks a [`Clock`].
//!
//! Two implementations exist from day one: [`SystemClock`] (wall time) and [`VirtualClock`]
//! (starts at a chosen instant and runs `speed` times faster than real time). The virtual clock
//! is what lets `freshet demo` and the tests show days of change and refresh in seconds, against
//! real HTTP on loopback. Waiting goes through [`Clock::real_duration`], so a virtual day at speed
//! 3600 is a real 24 seconds. The virtual clock reads tokio's clock, so `tokio::time::pause()`
//! drives it too.
//!
//! Timestamps are `i64` Unix milliseconds everywhere (that is also how SQLite stores them).

use std::fmt::Debug;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};

/// Milliseconds in one day, the unit the estimator and planner work in.
pub const MS_PER_DAY: f64 = 86_400_000.0;

/// A source of time. Cheap to call; shared as [`SharedClock`].
pub trait Clock: Send + Sync + Debug {
    /// Now, as Unix milliseconds.
    fn now_ms(&self) -> i64;

    /// How many clock seconds pass per real second (1 for the system clock).
    fn speed(&self) -> f64;

    /// The real duration to wait for `clock_duration` to pass on this clock.
    fn real_duration(&self, clock_duration: Duration) -> Duration {
        let speed = self.speed();
        if speed <= 0.0 || !speed.is_finite() {
            return clock_duration;
        }
        clock_duration.div_f64(speed)
    }

    /// Now, as a UTC date-time.
    fn now(&self) -> DateTime<Utc> {
        ms_to_datetime(self.now_ms())
    }
}

/// The clock handed around the program.
pub type SharedClock = Arc<dyn Clock>;

/// Waits until `duration` has passed on `clock`.
pub async fn sleep(clock: &dyn Clock, duration: Duration) {
    tokio::time::sleep(clock.real_duration(duration)).await;
}

/// Waits until `clock` reads at least `at_ms` (returns at once if that is past).
pub async fn sleep_until(clock: &dyn Clock, at_ms: i64) {
    let now = clock.now_ms();
    if at_ms > now {
        sleep(clock, Duration::from_millis((at_ms - now) as u64)).await;
    }
}

/// `duration` in whole milliseconds, saturating at `i64::MAX` (a server's `max-age` or
/// `Retry-After` of 2^64 seconds, cast, wrapped to a negative floor: none at all).
pub fn duration_ms(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// Converts Unix milliseconds to a UTC date-time (clamped to chrono's range).
pub fn ms_to_datetime(ms: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(ms)
        .single()
        .unwrap_or(DateTime::<Utc>::MIN_UTC)
}

/// Formats Unix milliseconds as RFC 3339 with second precision (what reports print).
pub fn ms_to_rfc3339(ms: i64) -> String {
    ms_to_datetime(ms).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Wall-clock time.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        Utc::now().timestamp_millis()
    }

    fn speed(&self) -> f64 {
        1.0
    }
}

/// A clock that reads what it was last set to (tests that step time by hand).
#[derive(Debug, Default)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    /// A clock that reads `now_ms` until it is set again.
    pub fn new(now_ms: i64) -> Self {
        Self(AtomicI64::new(now_ms))
    }

    /// Sets the clock to `now_ms`.
    pub fn set(&self, now_ms: i64) {
        self.0.store(now_ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }

    fn speed(&self) -> f64 {
        1.0
    }
}

/// A clock that starts at `origin_ms` and runs `speed` times faster than real time.
#[derive(Debug, Clone)]
pub struct VirtualClock {
    /// The clock's reading when it was created.
    origin_ms: i64,
    /// The real instant the clock was created; tokio's, so paused test time drives it.
    started: tokio::time::Instant,
    /// Clock seconds per real second.
    speed: f64,
}

impl VirtualClock {
    /// A clock that reads `origin_ms` now and advances `speed` times faster than real time.
    pub fn new(origin_ms: i64, speed: f64) -> Self {
        Self {
            origin_ms,
            started: tokio::time::Instant::now(),
            speed: if speed > 0.0 && speed.is_finite() {
                speed
            } else {
                1.0
            },
        }
    }
}

impl Clock for VirtualClock {
    fn now_ms(&self) -> i64 {
        let real = self.started.elapsed().as_secs_f64();
        self.origin_ms + (real * self.speed * 1000.0) as i64
    }

    fn speed(&self) -> f64 {
        self.speed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_past_i64_milliseconds_saturates() {
        assert_eq!(duration_ms(Duration::from_millis(1_500)), 1_500);
        assert_eq!(duration_ms(Duration::from_secs(u64::MAX)), i64::MAX);
        assert_eq!(
            duration_ms(Duration::from_secs(9_223_372_036_854_776)),
            i64::MAX
        );
    }

    #[tokio::test(start_paused = true)]
    async fn virtual_clock_runs_speed_times_faster() {
        let clock = VirtualClock::new(1_000_000, 3600.0);
        assert_eq!(clock.now_ms(), 1_000_000);
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(clock.now_ms(), 1_000_000 + 3_600_000);
        assert_eq!(
            clock.real_duration(Duration::from_secs(7200)),
            Duration::from_secs(2)
        );
    }

    #[tokio::test(start_paused = true)]
    async fn sleep_until_waits_in_clock_time() {
        let clock = VirtualClock::new(0, 60.0);
        sleep_until(&clock, 60_000).await;
        assert!(clock.now_ms() >= 60_000);
        assert!(clock.now_ms() < 61_000);
    }

    #[test]
    fn rfc3339_formatting() {
        assert_eq!(ms_to_rfc3339(0), "1970-01-01T00:00:00Z");
    }
}
