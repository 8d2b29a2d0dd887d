//! What a worker keeps of its host leases when several `freshet run` workers share one
//! PostgreSQL database (the rounds that renew them are [`super::leases`]): its name, the hosts it
//! holds, those it is giving back, and how far it has read the URLs other workers added.

use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;

use tracing::warn;

use crate::politeness::HeldHosts;

/// URL row ids below the highest read that each round reads again.
pub(super) const REREAD_IDS: i64 = 1_000;
/// How often a worker names every host it knows in the leases (clock ms): a host no worker
/// names for [`crate::store::leases::GONE_HOST_MS`] is gone from every schedule.
pub(super) const NAME_EVERY_MS: i64 = 3_600_000;
/// Hosts named in one transaction.
pub(super) const NAME_CHUNK: usize = 500;
/// How long before the last round's start other workers' checks are read again (real ms).
const CHECKS_OVERLAP_MS: i64 = 5_000;
/// How long a lease lasts unless renewed (real ms), by default.
pub const DEFAULT_LEASE_MS: i64 = 30_000;
/// How often a worker renews its leases and claims hosts (real ms), at most: a third of the
/// lease, so that two rounds may fail before a lease is lost.
pub const RENEW_EVERY_MS: i64 = 10_000;

/// How a worker shares the work with others on one PostgreSQL database.
#[derive(Debug, Clone, Default)]
pub struct WorkerOptions {
    /// Its name in the leases (default: this machine's name and the process id), to which
    /// each process adds a token of its own: two processes given one name never share leases.
    pub name: Option<String>,
    /// How long a lease lasts unless renewed (default [`DEFAULT_LEASE_MS`]; never less than
    /// twice the longest request a site allows, see [`Leasing::new`]): a killed worker's hosts
    /// wait this long before another takes them.
    pub lease: Option<Duration>,
    /// How often (real time) it renews its leases and reads the URLs others added (default
    /// [`RENEW_EVERY_MS`]; never less often than a third of the lease). The demo, whose clock
    /// runs thousands of times faster, asks for more.
    pub round_every: Option<Duration>,
}

/// This worker's side of the leases.
pub struct Leasing {
    /// Its name in the leases.
    pub worker: String,
    /// How long a lease lasts unless renewed (clock ms).
    pub ttl_ms: i64,
    /// How often rounds run (clock ms).
    renew_every_ms: i64,
    /// The hosts it holds, which the pool and the scheduler obey.
    pub held: HeldHosts,
    /// Hosts no longer contacted, given back once idle.
    pub(super) leaving: Mutex<HashSet<String>>,
    /// Hosts already written as lease rows.
    pub(super) registered: Mutex<HashSet<String>>,
    /// When it last named every host it knows (clock ms; [`NAME_EVERY_MS`]).
    pub(super) named_all_ms: AtomicI64,
    /// The highest URL row id read: rows after it were added by any worker since.
    pub(super) last_url_id: AtomicI64,
    /// Checks stamped after this instant (clock ms) by other workers are read at the next round.
    pub(super) checks_read_ms: AtomicI64,
    /// The sites' budget pools were settled once (the first round's may refill them).
    pub(super) settled_budgets: AtomicBool,
    /// How far before that instant the next round reads again (clock ms): a check is stamped
    /// before it is committed.
    pub(super) checks_overlap_ms: i64,
}

impl Leasing {
    /// Leasing for `options`. A lease counts as held until half its length before it ends,
    /// and a request started then must end before the lease does, even if this worker can no
    /// longer renew it: so the lease lasts at least twice `longest_request` (the longest total
    /// time a site allows one request) and a second.
    ///
    /// Lengths are real time; leases are written in clock time, so on a clock running `speed`
    /// times faster than real time (the demo's) every length is that many times longer.
    pub fn new(options: &WorkerOptions, longest_request: Duration, speed: f64) -> Self {
        let speed = if speed.is_finite() && speed > 0.0 {
            speed
        } else {
            1.0
        };
        let floor_ms = 2 * (longest_request.as_millis() as i64 + 1_000);
        let asked_ms = options
            .lease
            .map_or(DEFAULT_LEASE_MS, |d| d.as_millis() as i64);
        // Said only when a length was asked for: the default simply takes the floor.
        if options.lease.is_some() && asked_ms < floor_ms {
            warn!(
                asked_ms,
                lease_ms = floor_ms,
                "a lease must outlast a request started at its last moment: lengthened"
            );
        }
        let ttl_ms = asked_ms.max(floor_ms);
        let to_clock = |real_ms: i64| (real_ms as f64 * speed).round() as i64;
        let name = options.name.clone().unwrap_or_else(|| {
            let machine = std::fs::read_to_string("/etc/hostname")
                .map(|name| name.trim().to_string())
                .unwrap_or_else(|_| "worker".into());
            format!("{machine}-{}", std::process::id())
        });
        let worker = format!("{name}/{:08x}", rand::random::<u32>());
        Self {
            worker,
            ttl_ms: to_clock(ttl_ms),
            renew_every_ms: to_clock(
                options
                    .round_every
                    .map_or(RENEW_EVERY_MS, |d| d.as_millis() as i64)
                    .min(ttl_ms / 3)
                    .max(1),
            ),
            held: HeldHosts::new(to_clock(ttl_ms / 2)),
            leaving: Mutex::default(),
            registered: Mutex::default(),
            named_all_ms: AtomicI64::new(i64::MIN),
            last_url_id: AtomicI64::new(0),
            checks_read_ms: AtomicI64::new(i64::MAX),
            settled_budgets: AtomicBool::new(false),
            checks_overlap_ms: to_clock(CHECKS_OVERLAP_MS),
        }
    }

    /// How often rounds run (clock ms).
    pub fn renew_every_ms(&self) -> i64 {
        self.renew_every_ms
    }

    /// Whether another worker may hold the host of `origin` now (so nothing is asked of it here).
    pub fn held_elsewhere(&self, origin: &str, now_ms: i64) -> bool {
        !self.held.holds(&crate::politeness::key_of(origin), now_ms)
    }

    /// Records the highest URL row id read.
    pub fn saw_url_ids(&self, max_id: i64) {
        self.last_url_id.fetch_max(max_id, Ordering::Relaxed);
    }
}
