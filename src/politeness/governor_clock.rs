//! governor's clock traits implemented over freshet's [`Clock`](crate::clock::Clock).
//!
//! governor measures time with its own clock (tokio's paused time does not reach it). Driving it
//! from the freshet clock is what makes a host's limit hold in *clock* time: on a
//! [`VirtualClock`](crate::clock::VirtualClock) at speed 3600 a 1 s interval passes in a real
//! ~0.28 ms, and on the system clock it is a real second. Resolution is the freshet clock's
//! (one clock millisecond).

use std::ops::Add;

use governor::clock::{Clock as GovernorClockTrait, Reference};
use governor::nanos::Nanos;

use crate::clock::SharedClock;

/// A governor time source reading the freshet clock.
#[derive(Debug, Clone)]
pub struct GovernorClock {
    /// The freshet clock every reading comes from.
    clock: SharedClock,
}

impl GovernorClock {
    /// Wraps `clock` for governor.
    pub fn new(clock: SharedClock) -> Self {
        Self { clock }
    }
}

/// A reading of a [`GovernorClock`]: clock nanoseconds since the Unix epoch (times before 1970
/// read as the epoch, which governor's monotonic model tolerates).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ClockInstant(u64);

impl ClockInstant {
    /// The instant for Unix milliseconds `ms` (negative values clamp to 0).
    pub fn from_ms(ms: i64) -> Self {
        Self(u64::try_from(ms).unwrap_or(0).saturating_mul(1_000_000))
    }

    /// This instant as Unix milliseconds, rounded up so that waiting until it never falls short.
    pub fn as_ms_ceil(self) -> i64 {
        i64::try_from(self.0.div_ceil(1_000_000)).unwrap_or(i64::MAX)
    }
}

impl Add<Nanos> for ClockInstant {
    type Output = Self;

    fn add(self, other: Nanos) -> Self {
        Self(self.0.saturating_add(other.as_u64()))
    }
}

impl Reference for ClockInstant {
    fn duration_since(&self, earlier: Self) -> Nanos {
        Nanos::from(self.0.saturating_sub(earlier.0))
    }

    fn saturating_sub(&self, duration: Nanos) -> Self {
        Self(self.0.checked_sub(duration.as_u64()).unwrap_or(self.0))
    }
}

impl GovernorClockTrait for GovernorClock {
    type Instant = ClockInstant;

    fn now(&self) -> ClockInstant {
        ClockInstant::from_ms(self.clock.now_ms())
    }
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;
    use std::sync::Arc;
    use std::time::Duration;

    use governor::{Quota, RateLimiter};

    use super::*;
    use crate::clock::VirtualClock;

    #[tokio::test(start_paused = true)]
    async fn limiter_follows_the_virtual_clock() {
        let clock: SharedClock = Arc::new(VirtualClock::new(1_000_000, 1000.0));
        let quota = Quota::with_period(Duration::from_secs(1))
            .expect("non-zero period")
            .allow_burst(NonZeroU32::MIN);
        let limiter = RateLimiter::direct_with_clock(quota, GovernorClock::new(clock.clone()));
        assert!(limiter.check().is_ok());
        let denied = limiter.check().expect_err("second cell within the period");
        let now = GovernorClock::new(clock.clone()).now();
        assert_eq!(denied.wait_time_from(now), Duration::from_secs(1));
        // One clock second is one real millisecond at speed 1000.
        tokio::time::advance(Duration::from_millis(1)).await;
        assert!(limiter.check().is_ok());
    }

    #[test]
    fn instants_round_trip_and_saturate() {
        let at = ClockInstant::from_ms(1234);
        assert_eq!(at.as_ms_ceil(), 1234);
        assert_eq!((at + Nanos::from(1u64)).as_ms_ceil(), 1235);
        assert_eq!(ClockInstant::from_ms(-5), ClockInstant::from_ms(0));
        assert_eq!(
            at.duration_since(ClockInstant::from_ms(2000)),
            Nanos::from(0u64)
        );
        assert_eq!(
            Reference::saturating_sub(&at, Nanos::from(u64::MAX)),
            at,
            "underflow returns the reference itself"
        );
    }
}
