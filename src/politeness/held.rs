//! The hosts this worker may contact when several `freshet run` workers share one database: a
//! lease each (`src/store/leases.rs`), held until a clock instant. The pool refuses a permit for
//! any other host ([`super::NotNow::NotHeld`]), so no page, hop, robots.txt, sitemap or feed
//! request reaches a host another worker holds. A lease also stops counting as held a margin
//! before it ends, so that a worker cut off from the database stops starting requests before
//! another may take its hosts. A pool without leases holds every host (one worker).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The hosts held, by politeness key, each with the instant (clock ms) its lease ends.
#[derive(Debug, Clone, Default)]
pub struct HeldHosts {
    leases: Arc<Mutex<HashMap<String, i64>>>,
    /// Whether any host was ever held ([`HeldHosts::ever_held`]).
    ever_held: Arc<AtomicBool>,
    /// How long before its end a lease stops counting as held (clock ms).
    margin_ms: i64,
}

impl HeldHosts {
    /// None held yet; a lease counts until `margin_ms` before it ends.
    pub fn new(margin_ms: i64) -> Self {
        Self {
            leases: Arc::default(),
            ever_held: Arc::default(),
            margin_ms,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, i64>> {
        self.leases.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a request to the host `key` may start at `now_ms`.
    pub fn holds(&self, key: &str, now_ms: i64) -> bool {
        self.lock()
            .get(key)
            .is_some_and(|&until| now_ms < until - self.margin_ms)
    }

    /// Whether this worker leases the host `key`, however near the lease's end.
    pub fn is_leased(&self, key: &str) -> bool {
        self.lock().contains_key(key)
    }

    /// The host `key` is held until `until_ms`.
    pub fn hold(&self, key: &str, until_ms: i64) {
        self.lock().insert(key.to_string(), until_ms);
        self.ever_held.store(true, Ordering::Relaxed);
    }

    /// Whether any host was held at any time (a worker that held none did nothing because
    /// others held every host, and says so).
    pub fn ever_held(&self) -> bool {
        self.ever_held.load(Ordering::Relaxed)
    }

    /// The host `key` is no longer held.
    pub fn drop_host(&self, key: &str) {
        self.lock().remove(key);
    }

    /// The hosts held, sorted.
    pub fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self.lock().keys().cloned().collect();
        keys.sort_unstable();
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::HeldHosts;

    #[test]
    fn a_lease_stops_counting_a_margin_before_it_ends() {
        let held = HeldHosts::new(100);
        assert!(!held.holds("a:80", 0));
        assert!(!held.ever_held());
        held.hold("a:80", 1_000);
        assert!(held.ever_held());
        assert!(held.holds("a:80", 899));
        assert!(!held.holds("a:80", 900));
        held.hold("a:80", 2_000);
        assert!(held.holds("a:80", 900));
        held.drop_host("a:80");
        assert!(!held.holds("a:80", 0));
        assert!(held.keys().is_empty());
    }
}
