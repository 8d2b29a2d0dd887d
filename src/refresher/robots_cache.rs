//! What the refresher keeps of robots.txt in memory: the rules of each origin until they expire
//! (a slot per origin, whose lock makes concurrent askers wait for one fetch), and the interval
//! each politeness host was configured with. Reading, fetching and storing the rules is
//! [`super::robots_rules`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::politeness::{HostConfig, HostPool};
use crate::robots::Robots;

/// Rules of one origin and until when they hold.
pub(super) struct Cached {
    pub(super) robots: Arc<Robots>,
    pub(super) expires_ms: i64,
}

/// One slot per origin; the async mutex makes concurrent askers wait for a single fetch.
pub(super) type Slot = Arc<tokio::sync::Mutex<Option<Cached>>>;

/// robots.txt rules per origin.
#[derive(Default)]
pub struct RobotsCache {
    /// Slots by origin (a std Mutex: only held to find or insert a slot).
    slots: Mutex<HashMap<String, Slot>>,
    /// The politeness interval each politeness host ([`crate::politeness::key_of`]) was
    /// configured with, so that sites and schemes sharing a server get the strictest rate.
    intervals: Mutex<HashMap<String, Duration>>,
}

impl RobotsCache {
    /// The slot of `origin`'s rules (created empty on first use).
    pub(super) fn slot(&self, origin: &str) -> Slot {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots.entry(origin.to_string()).or_default().clone()
    }

    /// Configures the host of `origin` in `pool` with `config` if it is the first or its
    /// interval is longer than the one known (sites and schemes sharing a server get the
    /// strictest). Under the lock, so two first configurations cannot land in the wrong order.
    pub(super) fn configure_strictest(&self, pool: &HostPool, origin: &str, config: HostConfig) {
        let key = crate::politeness::key_of(origin);
        let mut intervals = self.intervals.lock().unwrap_or_else(|e| e.into_inner());
        let known = intervals.get(&key).copied();
        if known.is_none_or(|interval| config.min_interval > interval) {
            intervals.insert(key, config.min_interval);
            pool.configure(origin, config);
        }
    }

    /// The interval the host of `origin` is configured with (for the planner's per-host limit).
    pub fn interval(&self, origin: &str) -> Option<Duration> {
        self.intervals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&crate::politeness::key_of(origin))
            .copied()
    }
}
