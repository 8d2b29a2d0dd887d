//! Per-host politeness: a governor limiter on the freshet clock, one request in flight, back-off.
//!
//! The unit is the *server*: its name and port whatever the scheme ([`host_key`]), so that
//! `http://x` and `https://x` are one host and an http -> https redirect does not double the
//! rate (robots.txt stays per origin, [`origin_of`], as RFC 9309 says). Ports 80 and 443 count as
//! the same server's: the key is the lower-case name, plus `:port` for any other port. Each
//! server has one `Host` in the [`HostPool`]: its interval (the schedule's `host_rate` or the robots
//! Crawl-delay, whichever is longer: [`HostConfig::with_crawl_delay`]), a concurrency permit
//! (default 1), and adaptive back-off ([`backoff`]) on 429 / 503, timeouts and 5xx that honours
//! Retry-After. Every request to a host, whatever it is for (a page, a redirect hop, robots.txt,
//! a sitemap, a feed), first takes a [`HostPermit`] from [`HostPool::acquire`] and holds it until
//! the response is read.
//!
//! The promise: with one request in flight (the default), a host never sees two requests closer
//! together than its interval, counted from the end of one to the start of the next, and a host
//! in back-off is not contacted before its closure (at least its Retry-After) ends.
//!
//! Every wait races the pool's [`Stop`] flag ([`HostPool::try_acquire`]), and a wait for a
//! back-off or Retry-After closure longer than the pool's patience is refused, not slept out.
//! With a [`Journal`] the state is persisted as it changes and [`HostPool::restore`]d at start
//! ([`saved`]), so politeness holds across restarts.
//!
//! All waiting is in clock time ([`crate::clock::sleep_until`]), so on a virtual clock at speed
//! 3600 a 1 s interval is a real ~0.28 ms (tokio's timer rounds real sleeps up to 1 ms, which only
//! ever makes freshet slower than allowed). Network timeouts are not here: they are real time,
//! in [`crate::fetch`].
//!
//! Not here: robots.txt rules (module `robots`) and which URL to fetch next (the frontier, which
//! orders hosts by [`HostPool::next_allowed_ms`]).

pub mod backoff;
pub mod governor_clock;
mod held;
mod host;
pub mod saved;
pub mod stop;
pub use held::{HeldHosts, HeldSince, HeldSnapshot};

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use url::Url;

pub use backoff::BackoffPolicy;
pub use host::HostPermit;
pub use saved::{Journal, SavedHost};
pub use stop::Stop;

use crate::clock::SharedClock;
use host::Host;

/// How far ahead (clock ms) one committed start covers a host's next starts
/// ([`saved`]): a restart or a takeover waits at most this much longer than the last start
/// before the kill would make it, and a host contacted many times a second commits a start
/// once a second instead of once a request.
pub const RESERVED_STARTS_MS: i64 = 1_000;

/// How politely to treat one origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostConfig {
    /// The least clock time between the end of one request and the start of the next (and
    /// between two starts). Zero means no limit.
    pub min_interval: Duration,
    /// Requests allowed in flight at once (0 is read as 1).
    pub concurrency: u32,
}

impl Default for HostConfig {
    /// One request per second, one at a time.
    fn default() -> Self {
        Self {
            min_interval: Duration::from_secs(1),
            concurrency: 1,
        }
    }
}

impl HostConfig {
    /// This config with robots.txt's Crawl-delay applied: the longer interval wins.
    pub fn with_crawl_delay(mut self, crawl_delay: Option<Duration>) -> Self {
        if let Some(delay) = crawl_delay {
            self.min_interval = self.min_interval.max(delay);
        }
        self
    }

    /// Concurrency of at least one.
    fn normalised(mut self) -> Self {
        self.concurrency = self.concurrency.max(1);
        self
    }
}

/// What a response told us about a host's health, fed to [`HostPool::record`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signal {
    /// A normal answer (any status that is not pushing back): one step of recovery.
    Ok,
    /// 429 Too Many Requests or 503 Service Unavailable, with the server's Retry-After if any
    /// (already made relative to the clock).
    Throttled {
        /// How long the server asked us to stay away.
        retry_after: Option<Duration>,
    },
    /// The host did not answer in time, or could not be connected to.
    Timeout,
    /// Another 5xx.
    ServerError,
}

impl Signal {
    /// The signal for an HTTP status (`retry_after` is used only for 429 / 503).
    pub fn from_status(status: u16, retry_after: Option<Duration>) -> Self {
        match status {
            429 | 503 => Signal::Throttled { retry_after },
            500..=599 => Signal::ServerError,
            _ => Signal::Ok,
        }
    }
}

/// A snapshot of one host's state, for reports and tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostStatus {
    /// The config in force.
    pub config: HostConfig,
    /// Requests holding a permit now.
    pub in_flight: u32,
    /// Back-off level (0 = healthy).
    pub backoff_level: u32,
    /// Closed until this clock time (Unix ms; in the past when open).
    pub backoff_until_ms: i64,
    /// When the latest request started (Unix ms).
    pub last_start_ms: Option<i64>,
    /// When the latest request ended (Unix ms).
    pub last_end_ms: Option<i64>,
}

/// Every origin's politeness state. Cheap to share behind an `Arc`; all methods take `&self`.
#[derive(Debug)]
pub struct HostPool {
    /// The clock all intervals and closures are measured on.
    clock: SharedClock,
    /// Config for origins never configured.
    defaults: HostConfig,
    /// Back-off policy shared by every host.
    policy: Arc<BackoffPolicy>,
    /// One entry per politeness host seen. A std mutex: it is held only to look up or insert.
    hosts: Mutex<HashMap<String, Arc<Host>>>,
    /// Set at shutdown: every wait returns at once.
    stop: Stop,
    /// Where the state is persisted, if anywhere.
    journal: Option<Journal>,
    /// The longest back-off or Retry-After closure [`HostPool::try_acquire`] waits for.
    patience: Duration,
    /// With several workers on one database, the hosts this one holds: no permit for others.
    held: Option<HeldHosts>,
    /// Permits handed out by [`HostPool::try_acquire`]: the requests sent (or about to be),
    /// whether or not they were answered.
    requests_sent: AtomicU64,
}

/// Why [`HostPool::try_acquire`] gave no permit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotNow {
    /// Shutdown was asked.
    #[error("not sent: shutting down")]
    Stopping,
    /// Another worker holds the host's lease (several workers on one database).
    #[error("not sent: another worker holds this host")]
    NotHeld,
    /// The host is closed by back-off or Retry-After for longer than the pool's patience.
    #[error("not sent: the host is closed (back-off or Retry-After) until {}", crate::clock::ms_to_rfc3339(*until_ms))]
    Closed {
        /// When it opens (Unix ms).
        until_ms: i64,
    },
}

impl HostPool {
    /// A pool on `clock` with the default config (1 s, one in flight) and back-off policy.
    pub fn new(clock: SharedClock) -> Self {
        Self {
            clock,
            defaults: HostConfig::default(),
            policy: Arc::new(BackoffPolicy::default()),
            hosts: Mutex::new(HashMap::new()),
            stop: Stop::new(),
            journal: None,
            patience: Duration::MAX,
            held: None,
            requests_sent: AtomicU64::new(0),
        }
    }

    /// Hands out permits only for the hosts `held` holds (several workers on one database).
    pub fn with_held_hosts(mut self, held: HeldHosts) -> Self {
        self.held = Some(held);
        self
    }

    /// Waits on hosts race `stop`.
    pub fn with_stop(mut self, stop: Stop) -> Self {
        self.stop = stop;
        self
    }

    /// Persists every host's state through `journal` as it changes.
    pub fn with_journal(mut self, journal: Journal) -> Self {
        self.journal = Some(journal);
        self
    }

    /// The longest closure [`HostPool::try_acquire`] waits for (clock time; without this call,
    /// any closure is waited out, racing only the stop flag).
    pub fn with_patience(mut self, patience: Duration) -> Self {
        self.patience = patience;
        self
    }

    /// The config given to origins that were never [`configure`](Self::configure)d.
    pub fn with_defaults(mut self, defaults: HostConfig) -> Self {
        self.defaults = defaults;
        self
    }

    /// Replaces the back-off policy (for hosts created after this call).
    pub fn with_backoff(mut self, policy: BackoffPolicy) -> Self {
        self.policy = Arc::new(policy);
        self
    }

    /// The clock this pool waits on.
    pub fn clock(&self) -> &SharedClock {
        &self.clock
    }

    /// Sets a host's interval and concurrency; callable again when a Crawl-delay is learnt.
    pub fn configure(&self, origin: &str, config: HostConfig) {
        let key = key_of(origin);
        let mut hosts = self.lock();
        match hosts.get(&key) {
            Some(host) => host.configure(config, &self.clock),
            None => {
                let host = Host::new(key.clone(), config, Arc::clone(&self.policy), &self.clock);
                hosts.insert(key, Arc::new(host));
            }
        }
    }

    /// Waits until `origin` may be contacted (permit, back-off, interval), then returns the
    /// permit. Hold it for the whole request; dropping it ends the request. Waits out any
    /// closure and ignores the stop flag: the refresher uses [`HostPool::try_acquire`].
    pub async fn acquire(&self, origin: &str) -> HostPermit {
        let host = self.host(origin);
        loop {
            if let Ok(permit) = host.acquire(&self.clock, None).await {
                return permit;
            }
        }
    }

    /// Like [`HostPool::acquire`], but gives up at once when the stop flag is set (or while
    /// waiting, when it is set), and refuses to wait for a back-off or Retry-After closure that
    /// ends later than the pool's patience. With a journal, a start at or after the request's
    /// is committed before the permit is returned (a reservation: [`saved`]).
    pub async fn try_acquire(&self, origin: &str) -> Result<HostPermit, NotNow> {
        if self.stop.is_stopped() {
            return Err(NotNow::Stopping);
        }
        if let Some(held) = &self.held
            && !held.holds(&key_of(origin), self.clock.now_ms())
        {
            return Err(NotNow::NotHeld);
        }
        let host = self.host(origin);
        let patience = duration_ms(self.patience);
        let mut permit = tokio::select! {
            acquired = host.acquire(&self.clock, Some(patience)) => {
                acquired.map_err(|until_ms| NotNow::Closed { until_ms })?
            }
            () = self.stop.stopped() => return Err(NotNow::Stopping),
        };
        if let Some(journal) = &self.journal {
            let host = permit.host();
            if let Some(reservation) = host.reservation_for(permit.started_ms(), RESERVED_STARTS_MS)
                && journal.save(&reservation).await
            {
                host.reserved(&reservation);
            }
        }
        // The waits above may have outlasted the lease (or the host may be leaving): asked
        // again as the request is about to go. A request not sent writes no end: the host's
        // new holder may have one in flight.
        if let Some(held) = &self.held
            && !held.holds(&key_of(origin), self.clock.now_ms())
        {
            return Err(NotNow::NotHeld);
        }
        permit.journal = self.journal.clone();
        self.requests_sent.fetch_add(1, Ordering::Relaxed);
        Ok(permit)
    }

    /// The requests [`HostPool::try_acquire`] let go, counted as each goes: one cut short by a
    /// shutdown, or whose answer never came, counts (its server saw it, unless the connection
    /// itself failed or the task was cut short before the send).
    pub fn requests_sent(&self) -> u64 {
        self.requests_sent.load(Ordering::Relaxed)
    }

    /// [`HostPool::record`], then, when the signal closes the host, waits until the closure is
    /// committed (so that a restart honours it).
    pub async fn record_and_save(&self, origin: &str, signal: &Signal) {
        self.record(origin, signal);
        if let (Some(journal), false) = (&self.journal, matches!(signal, Signal::Ok)) {
            journal.save(&self.host(origin).snapshot()).await;
        }
    }

    /// Takes up what an earlier run saved (before any request of this run).
    pub fn restore(&self, saved: &[SavedHost]) {
        let now = self.clock.now_ms();
        for row in saved {
            self.host(&row.key).restore(row, now);
        }
    }

    /// Hosts closed by back-off or Retry-After until after `after_ms`: (key, until), by key.
    pub fn closed_hosts(&self, after_ms: i64) -> Vec<(String, i64)> {
        let hosts: Vec<Arc<Host>> = self.lock().values().cloned().collect();
        let mut closed: Vec<(String, i64)> = hosts
            .iter()
            .map(|host| (host.snapshot().key, host.closed_until_ms()))
            .filter(|(_, until)| *until > after_ms)
            .collect();
        closed.sort();
        closed
    }

    /// Until when `origin`'s host is closed by back-off or Retry-After, if it is closed for
    /// longer than the pool's patience (what [`HostPool::try_acquire`] would refuse).
    pub fn closed_beyond_patience(&self, origin: &str) -> Option<i64> {
        let host = self.lock().get(&key_of(origin)).cloned()?;
        let until = host.closed_until_ms();
        let now = self.clock.now_ms();
        (until > now.saturating_add(duration_ms(self.patience))).then_some(until)
    }

    /// Waits for the journal's background writes (call before closing the store).
    pub async fn flush(&self) {
        if let Some(journal) = &self.journal {
            journal.flush().await;
        }
    }

    /// Applies what a response said about `origin` (back-off or recovery).
    pub fn record(&self, origin: &str, signal: &Signal) {
        self.host(origin).record(signal, self.clock.now_ms());
    }

    /// The earliest clock time (Unix ms, never before now) at which `origin` could be contacted.
    /// An estimate for the frontier's host heap, not a reservation.
    pub fn next_allowed_ms(&self, origin: &str) -> i64 {
        let now = self.clock.now_ms();
        let host = self.lock().get(&key_of(origin)).cloned();
        host.map_or(now, |host| host.next_allowed_ms(now))
    }

    /// The state of `origin`, if it was ever configured or contacted.
    pub fn status(&self, origin: &str) -> Option<HostStatus> {
        let host = self.lock().get(&key_of(origin)).cloned();
        host.map(|host| host.status())
    }

    /// The host for `origin`, created with the defaults on first use.
    fn host(&self, origin: &str) -> Arc<Host> {
        let key = key_of(origin);
        let mut hosts = self.lock();
        let host = hosts.entry(key).or_insert_with_key(|key| {
            Arc::new(Host::new(
                key.clone(),
                self.defaults.clone(),
                Arc::clone(&self.policy),
                &self.clock,
            ))
        });
        Arc::clone(host)
    }

    /// Locks the map; a poisoned lock still holds a valid map.
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Host>>> {
        self.hosts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// How long the refresher's requests wait for a host's back-off or Retry-After closure (clock
/// time, [`HostPool::with_patience`]): longer closures are refused, and the request is made
/// later, when the host opens.
pub const CLOSED_HOST_PATIENCE: Duration = Duration::from_secs(60);

/// The robots.txt origin of a URL: `scheme://host[:port]`, lower case, default port omitted.
pub fn origin_of(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// The politeness key of a URL: the server's name, lower case, with `:port` unless the port is
/// 80 or 443. `http://x/`, `https://x/` and `http://x:443/` are one host (`x`), so an http ->
/// https redirect does not double the rate; `https://x:8443/` is `x:8443`.
pub fn host_key(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
    match url.port_or_known_default() {
        Some(80 | 443) | None => host,
        Some(port) => format!("{host}:{port}"),
    }
}

/// The politeness key of an origin or any URL on it (a key given as such stays itself).
pub fn key_of(origin: &str) -> String {
    match Url::parse(origin) {
        Ok(url) if url.has_host() => host_key(&url),
        _ => origin.trim().to_ascii_lowercase(),
    }
}

/// Whole milliseconds of a duration (saturating).
fn duration_ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests;
