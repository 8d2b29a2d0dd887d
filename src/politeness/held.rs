//! The hosts this worker may contact when several `freshet run` workers share one database: a
//! lease each (`src/store/leases.rs`), held until a clock instant. The pool refuses a permit for
//! any other host ([`super::NotNow::NotHeld`]), so no page, hop, robots.txt, sitemap or feed
//! request reaches a host another worker holds. A lease also stops counting as held a margin
//! before it ends, so that a worker cut off from the database stops starting requests before
//! another may take its hosts. A pool without leases holds every host (one worker).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The hosts held, by politeness key, each with the instant (clock ms) its lease ends and the
/// number of the gain that began it.
#[derive(Debug, Clone, Default)]
pub struct HeldHosts {
    leases: Arc<Mutex<HashMap<String, Lease>>>,
    /// The number of the last lease begun ([`HeldHosts::gain`], or [`HeldHosts::hold`] of a
    /// host not listed).
    gains: Arc<AtomicU64>,
    /// Whether any host was ever held ([`HeldHosts::ever_held`]).
    ever_held: Arc<AtomicBool>,
    /// How long before its end a lease stops counting as held (clock ms).
    margin_ms: i64,
}

/// One host's lease here.
#[derive(Debug, Clone, Copy)]
struct Lease {
    /// When it ends (clock ms).
    until_ms: i64,
    /// The gain that began it: a host lost and taken again is another lease.
    gain: u64,
}

/// The hosts held at an instant, each with the gain that began its lease
/// ([`HeldHosts::snapshot`]).
#[derive(Debug, Clone, Default)]
pub struct HeldSnapshot(HashMap<String, u64>);

/// The hosts held since a snapshot ([`HeldHosts::held_since`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeldSince {
    /// Held all the time, on the same lease.
    pub all_through: HashSet<String>,
    /// Held now on a lease begun since.
    pub began: HashSet<String>,
}

impl HeldHosts {
    /// None held yet; a lease counts until `margin_ms` before it ends.
    pub fn new(margin_ms: i64) -> Self {
        Self {
            leases: Arc::default(),
            gains: Arc::default(),
            ever_held: Arc::default(),
            margin_ms,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Lease>> {
        self.leases.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a request to the host `key` may start at `now_ms`.
    pub fn holds(&self, key: &str, now_ms: i64) -> bool {
        self.lock()
            .get(key)
            .is_some_and(|lease| now_ms < lease.until_ms - self.margin_ms)
    }

    /// Whether this worker leases the host `key`, however near the lease's end.
    pub fn is_leased(&self, key: &str) -> bool {
        self.lock().contains_key(key)
    }

    /// The host `key` is held until `until_ms`: a lease renewed, or one begun if none is
    /// listed.
    pub fn hold(&self, key: &str, until_ms: i64) {
        let mut leases = self.lock();
        match leases.get_mut(key) {
            Some(lease) => lease.until_ms = until_ms,
            None => {
                let gain = self.gains.fetch_add(1, Ordering::Relaxed) + 1;
                leases.insert(key.to_string(), Lease { until_ms, gain });
            }
        }
        self.ever_held.store(true, Ordering::Relaxed);
    }

    /// The host `key` was just taken (from the database, or again after its lease lapsed
    /// here), held until `until_ms`: a new lease, whatever was listed.
    pub fn gain(&self, key: &str, until_ms: i64) {
        let gain = self.gains.fetch_add(1, Ordering::Relaxed) + 1;
        self.lock()
            .insert(key.to_string(), Lease { until_ms, gain });
        self.ever_held.store(true, Ordering::Relaxed);
    }

    /// Renews the lease of `key` until `until_ms` if it is still held at `now_ms` (read under
    /// the lock: a lease that passed its margin since the round began is no longer held, and
    /// walks may have passed its host by meanwhile); false when not, and the caller takes the
    /// host as a gain ([`HeldHosts::gain`]).
    pub fn renew(&self, key: &str, until_ms: i64, now_ms: i64) -> bool {
        let mut leases = self.lock();
        match leases.get_mut(key) {
            Some(lease) if now_ms < lease.until_ms - self.margin_ms => {
                lease.until_ms = until_ms;
                true
            }
            _ => false,
        }
    }

    /// The hosts held at `now_ms`, each with its lease.
    pub fn snapshot(&self, now_ms: i64) -> HeldSnapshot {
        let leases = self.lock();
        HeldSnapshot(
            leases
                .iter()
                .filter(|(_, lease)| now_ms < lease.until_ms - self.margin_ms)
                .map(|(key, lease)| (key.clone(), lease.gain))
                .collect(),
        )
    }

    /// Since `before`, at `now_ms`: the hosts held all the time (on the same lease: a host
    /// lost meanwhile, or whose lease lapsed here, was taken again on another), and those whose
    /// lease held now began since (gained, or taken again).
    pub fn held_since(&self, before: &HeldSnapshot, now_ms: i64) -> HeldSince {
        let now = self.snapshot(now_ms);
        let all_through = (before.0.iter())
            .filter(|(key, gain)| now.0.get(*key) == Some(gain))
            .map(|(key, _)| key.clone())
            .collect();
        let began = (now.0.into_iter())
            .filter(|(key, gain)| before.0.get(key) != Some(gain))
            .map(|(key, _)| key)
            .collect();
        HeldSince { all_through, began }
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

    #[test]
    fn a_host_is_held_since_a_snapshot_only_on_the_same_lease() {
        let held = HeldHosts::new(100);
        for key in ["renewed", "lost", "lapsed", "regained"] {
            held.hold(key, 1_000);
        }
        let before = held.snapshot(0);
        assert!(held.renew("renewed", 2_000, 800));
        held.drop_host("lost");
        let sorted = |keys: std::collections::HashSet<String>| {
            let mut keys: Vec<String> = keys.into_iter().collect();
            keys.sort();
            keys
        };
        let since = |before: &super::HeldSnapshot| {
            let since = held.held_since(before, 950);
            (sorted(since.all_through), sorted(since.began))
        };
        // "lapsed" and "regained" passed their margin (900); "lapsed" is not renewed.
        assert!(!held.renew("lapsed", 2_000, 950));
        assert_eq!(since(&before), (vec!["renewed".into()], vec![]));
        held.gain("regained", 2_000); // lost and taken again between two rounds
        let fresh = held.snapshot(950);
        held.hold("new", 2_000); // not held at the snapshot
        let renewed_only = vec!["renewed".to_string()];
        let began = vec!["new".to_string(), "regained".to_string()];
        assert_eq!(since(&before), (renewed_only, began));
        let all = vec!["regained".to_string(), "renewed".to_string()];
        assert_eq!(since(&fresh), (all, vec!["new".to_string()]));
    }
}
