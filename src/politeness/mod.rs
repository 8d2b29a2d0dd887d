//! Per-host politeness: a governor limiter on the freshet clock, one request in flight, back-off.
//!
//! The unit is the *origin* (`scheme://host[:port]`, see [`origin_of`]). Each origin has one
//! `Host` in the [`HostPool`]: its interval (the schedule's `host_rate` or the robots
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
//! All waiting is in clock time ([`crate::clock::sleep_until`]), so on a virtual clock at speed
//! 3600 a 1 s interval is a real ~0.28 ms (tokio's timer rounds real sleeps up to 1 ms, which only
//! ever makes freshet slower than allowed). Network timeouts are not here: they are real time,
//! in [`crate::fetch`].
//!
//! Not here: robots.txt rules (module `robots`) and which URL to fetch next (the frontier, which
//! orders hosts by [`HostPool::next_allowed_ms`]).

pub mod backoff;
pub mod governor_clock;
mod host;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use url::Url;

pub use backoff::BackoffPolicy;
pub use host::HostPermit;

use crate::clock::SharedClock;
use host::Host;

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
    /// One entry per origin seen. A std mutex: it is held only to look up or insert.
    hosts: Mutex<HashMap<String, Arc<Host>>>,
}

impl HostPool {
    /// A pool on `clock` with the default config (1 s, one in flight) and back-off policy.
    pub fn new(clock: SharedClock) -> Self {
        Self {
            clock,
            defaults: HostConfig::default(),
            policy: Arc::new(BackoffPolicy::default()),
            hosts: Mutex::new(HashMap::new()),
        }
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

    /// Sets an origin's interval and concurrency; callable again when a Crawl-delay is learnt.
    pub fn configure(&self, origin: &str, config: HostConfig) {
        let key = origin_key(origin);
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
    /// permit. Hold it for the whole request; dropping it ends the request.
    pub async fn acquire(&self, origin: &str) -> HostPermit {
        let host = self.host(origin);
        host.acquire(&self.clock).await
    }

    /// Applies what a response said about `origin` (back-off or recovery).
    pub fn record(&self, origin: &str, signal: &Signal) {
        self.host(origin).record(signal, self.clock.now_ms());
    }

    /// The earliest clock time (Unix ms, never before now) at which `origin` could be contacted.
    /// An estimate for the frontier's host heap, not a reservation.
    pub fn next_allowed_ms(&self, origin: &str) -> i64 {
        let now = self.clock.now_ms();
        let host = self.lock().get(&origin_key(origin)).cloned();
        host.map_or(now, |host| host.next_allowed_ms(now))
    }

    /// The state of `origin`, if it was ever configured or contacted.
    pub fn status(&self, origin: &str) -> Option<HostStatus> {
        let host = self.lock().get(&origin_key(origin)).cloned();
        host.map(|host| host.status())
    }

    /// The host for `origin`, created with the defaults on first use.
    fn host(&self, origin: &str) -> Arc<Host> {
        let key = origin_key(origin);
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

/// The politeness key of a URL: `scheme://host[:port]`, lower case, default port omitted.
pub fn origin_of(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// Normalises an origin given as a string (an origin, or any URL on it).
fn origin_key(origin: &str) -> String {
    match Url::parse(origin) {
        Ok(url) if url.has_host() => origin_of(&url),
        _ => origin.trim().to_ascii_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::VirtualClock;

    fn pool(speed: f64) -> HostPool {
        HostPool::new(Arc::new(VirtualClock::new(1_000_000, speed)))
    }

    #[test]
    fn origins_normalise() {
        let url = Url::parse("HTTP://Example.COM:80/a?b").expect("valid url");
        assert_eq!(origin_of(&url), "http://example.com");
        let url = Url::parse("https://example.com:8443/").expect("valid url");
        assert_eq!(origin_of(&url), "https://example.com:8443");
        assert_eq!(origin_key("http://example.com:80/x"), "http://example.com");
        assert_eq!(origin_key("http://example.com"), "http://example.com");
    }

    #[test]
    fn crawl_delay_longer_wins() {
        let base = HostConfig {
            min_interval: Duration::from_secs(2),
            concurrency: 1,
        };
        let slower = base.clone().with_crawl_delay(Some(Duration::from_secs(5)));
        assert_eq!(slower.min_interval, Duration::from_secs(5));
        let same = base.clone().with_crawl_delay(Some(Duration::from_secs(1)));
        assert_eq!(same.min_interval, Duration::from_secs(2));
        assert_eq!(base.clone().with_crawl_delay(None), base);
    }

    #[test]
    fn statuses_map_to_signals() {
        let ra = Some(Duration::from_secs(3));
        assert_eq!(
            Signal::from_status(429, ra),
            Signal::Throttled { retry_after: ra }
        );
        assert_eq!(
            Signal::from_status(503, None),
            Signal::Throttled { retry_after: None }
        );
        assert_eq!(Signal::from_status(500, ra), Signal::ServerError);
        assert_eq!(Signal::from_status(404, ra), Signal::Ok);
        assert_eq!(Signal::from_status(304, None), Signal::Ok);
    }

    #[tokio::test(start_paused = true)]
    async fn permits_are_spaced_by_the_interval_in_clock_time() {
        let pool = pool(100.0);
        let origin = "http://a.test";
        pool.configure(
            origin,
            HostConfig {
                min_interval: Duration::from_secs(10),
                concurrency: 1,
            },
        );
        let clock = Arc::clone(pool.clock());
        let mut starts = Vec::new();
        for _ in 0..4 {
            let permit = pool.acquire(origin).await;
            starts.push(clock.now_ms());
            drop(permit);
        }
        for pair in starts.windows(2) {
            assert!(pair[1] - pair[0] >= 10_000, "{starts:?}");
        }
        assert!(pool.next_allowed_ms(origin) >= starts[3] + 10_000);
    }

    #[tokio::test(start_paused = true)]
    async fn the_gap_counts_from_the_end_of_a_request() {
        let pool = pool(1.0);
        let origin = "http://a.test";
        pool.configure(
            origin,
            HostConfig {
                min_interval: Duration::from_millis(200),
                concurrency: 1,
            },
        );
        let clock = Arc::clone(pool.clock());
        let first = pool.acquire(origin).await;
        tokio::time::advance(Duration::from_millis(500)).await;
        let ended = clock.now_ms();
        drop(first);
        let _second = pool.acquire(origin).await;
        assert!(clock.now_ms() >= ended + 200);
    }

    #[tokio::test(start_paused = true)]
    async fn throttling_closes_the_host_until_retry_after() {
        let pool = pool(1.0).with_backoff(BackoffPolicy {
            base: Duration::from_millis(100),
            jitter: 0.0,
            ..BackoffPolicy::default()
        });
        let origin = "http://a.test";
        pool.configure(
            origin,
            HostConfig {
                min_interval: Duration::ZERO,
                concurrency: 1,
            },
        );
        let clock = Arc::clone(pool.clock());
        let t0 = clock.now_ms();
        pool.record(
            origin,
            &Signal::Throttled {
                retry_after: Some(Duration::from_secs(3)),
            },
        );
        assert_eq!(pool.next_allowed_ms(origin), t0 + 3_000);
        let _permit = pool.acquire(origin).await;
        assert!(clock.now_ms() >= t0 + 3_000);
        let status = pool.status(origin).expect("known host");
        assert_eq!(status.backoff_level, 1);
        assert_eq!(status.in_flight, 1);
    }

    #[tokio::test(start_paused = true)]
    async fn lowering_concurrency_takes_effect_as_permits_return() {
        let pool = pool(1.0);
        let origin = "http://a.test";
        let wide = HostConfig {
            min_interval: Duration::ZERO,
            concurrency: 3,
        };
        pool.configure(origin, wide.clone());
        let a = pool.acquire(origin).await;
        let b = pool.acquire(origin).await;
        pool.configure(
            origin,
            HostConfig {
                concurrency: 1,
                ..wide
            },
        );
        drop(a);
        // b is still out and concurrency is now 1: a third request must wait for b.
        let third = tokio::time::timeout(Duration::from_secs(1), pool.acquire(origin)).await;
        assert!(third.is_err(), "a second request ran while b was in flight");
        drop(b);
        let _c = pool.acquire(origin).await;
        assert_eq!(pool.status(origin).map(|s| s.in_flight), Some(1));
    }
}
