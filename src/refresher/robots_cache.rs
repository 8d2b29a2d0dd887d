//! What the refresher keeps of robots.txt in memory: the rules of each origin until they expire
//! (a slot per origin, whose lock makes concurrent askers wait for one fetch), and the politeness
//! each host was configured with. Reading, fetching and storing the rules is
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
    /// The politeness each politeness host ([`crate::politeness::key_of`]) was configured
    /// with, so that sites and schemes sharing a server get the strictest of theirs.
    configs: Mutex<HashMap<String, HostConfig>>,
}

impl RobotsCache {
    /// The slot of `origin`'s rules (created empty on first use).
    pub(super) fn slot(&self, origin: &str) -> Slot {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots.entry(origin.to_string()).or_default().clone()
    }

    /// Configures the host of `origin` in `pool` with the strictest of `config` and what it
    /// was configured with before (sites and schemes sharing a server): the longest interval
    /// and the fewest requests in flight. Under the lock, so two first configurations cannot
    /// land in the wrong order.
    pub(super) fn configure_strictest(&self, pool: &HostPool, origin: &str, config: HostConfig) {
        let key = crate::politeness::key_of(origin);
        let mut configs = self.configs.lock().unwrap_or_else(|e| e.into_inner());
        let strictest = match configs.get(&key) {
            Some(known) => HostConfig {
                min_interval: known.min_interval.max(config.min_interval),
                concurrency: known.concurrency.max(1).min(config.concurrency.max(1)),
            },
            None => config,
        };
        if configs.get(&key) != Some(&strictest) {
            configs.insert(key, strictest.clone());
            pool.configure(origin, strictest);
        }
    }

    /// The interval the host of `origin` is configured with (for the planner's per-host limit).
    pub fn interval(&self, origin: &str) -> Option<Duration> {
        self.configs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&crate::politeness::key_of(origin))
            .map(|config| config.min_interval)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::clock::VirtualClock;

    /// Two sites sharing a server: the host keeps the longest interval and the fewest requests
    /// in flight of the two, whichever came first.
    #[test]
    fn a_shared_host_gets_the_strictest_of_its_sites() {
        let config = |secs, concurrency| HostConfig {
            min_interval: Duration::from_secs(secs),
            concurrency,
        };
        for (first, second) in [(config(2, 4), config(1, 1)), (config(1, 1), config(2, 4))] {
            let pool = HostPool::new(Arc::new(VirtualClock::new(0, 1.0)));
            let cache = RobotsCache::default();
            cache.configure_strictest(&pool, "http://a.test", first);
            cache.configure_strictest(&pool, "https://a.test", second);
            let status = pool.status("http://a.test").expect("configured");
            assert_eq!(status.config, config(2, 1));
            assert_eq!(
                cache.interval("https://a.test"),
                Some(Duration::from_secs(2))
            );
        }
    }
}
