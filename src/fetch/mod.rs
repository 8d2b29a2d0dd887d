//! One HTTP check: conditional GET or HEAD, redirects by hand, timeouts, body cap, charset,
//! fingerprint.
//!
//! A check is [`Fetcher::fetch`]: it sends the request with the URL's last validators
//! (`If-None-Match`, `If-Modified-Since`), follows up to `max_redirects` redirects itself
//! (reqwest's redirect policy is off) so that every hop's URL and status reach the dedup engine,
//! and reads a 2xx body as a stream, stopping at `max_body_bytes` *decompressed* bytes (reqwest
//! decompresses gzip / brotli / zstd / deflate, so a gzip bomb stops at the cap). Text bodies are
//! decoded ([`charset`]) and fingerprinted with xxh3-64 of the decoded text (raw bytes for
//! non-text bodies); the dedup engine fingerprints the main text separately.
//!
//! Every request, each redirect hop included, first takes the permit of *its* origin from the
//! [`HostPool`], holds it while the response is read, and reports the host's health back
//! (429 / 503 with Retry-After, 5xx, timeouts) so back-off applies to the next request.
//!
//! Before each hop is requested, its address is checked against the site's [`AddressPolicy`]
//! (after DNS resolution, in the client's resolver; literal IPs in the hop loop), and a
//! [`HopGate`] given by the caller may refuse it (the refresher checks robots.txt of the hop's
//! own host there), so a redirect cannot lead a check where its first request could not go.
//!
//! A check never panics and never returns `Err` for a per-URL failure: the failure is
//! [`FetchOutcome::error`]. Timeouts are real time (they are about the network), while the
//! outcome's times are clock time.
//!
//! Not here: robots rules (module `robots`), deciding what changed (module `dedup`, `estimate`).

pub mod address;
pub mod charset;
mod check;
pub mod error;
pub mod headers;
pub mod open_files;

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use url::Url;

pub use address::{AddressPolicy, Cidr};
pub use error::{FetchError, Stage};

use crate::clock::Clock;
use crate::politeness::HostPool;

/// How the HTTP client behaves. Timeouts are real time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchConfig {
    /// The `User-Agent` header (e.g. `freshet/0.1 (+https://example.org/bot)`).
    pub user_agent: String,
    /// Longest wait to open a connection.
    pub connect_timeout: Duration,
    /// Longest silence while waiting for or reading a response (resets on every read).
    pub read_timeout: Duration,
    /// Longest time for one request, from connecting to the body's last byte (per hop).
    pub total_timeout: Duration,
    /// Cap on a body's decompressed size.
    pub max_body_bytes: u64,
    /// Redirects followed before giving up (the web's usual 5).
    pub max_redirects: usize,
    /// Host names mapped to fixed addresses (tests and the demo map virtual names to
    /// 127.0.0.1:port). The URL's own port is used. The address policy applies to these too.
    pub resolve: Vec<(String, SocketAddr)>,
    /// Special-purpose ranges (loopback, private, ...) this client may connect to anyway; empty
    /// (the default) allows public addresses only. See [`address`].
    pub allow_networks: Vec<Cidr>,
}

impl Default for FetchConfig {
    fn default() -> Self {
        Self {
            user_agent: concat!("freshet/", env!("CARGO_PKG_VERSION")).to_string(),
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(30),
            total_timeout: Duration::from_secs(60),
            max_body_bytes: 10 * 1024 * 1024,
            max_redirects: 5,
            resolve: Vec::new(),
            allow_networks: Vec::new(),
        }
    }
}

/// The HTTP method of a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    /// A (possibly conditional) GET.
    #[default]
    Get,
    /// HEAD: headers only, for hosts with good Last-Modified that ignore conditional requests.
    Head,
}

/// The validators from the last response for a URL, sent back as conditions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Validators {
    /// Sent as `If-None-Match`.
    pub etag: Option<String>,
    /// Sent as `If-Modified-Since` (the raw `Last-Modified` value).
    pub last_modified: Option<String>,
}

/// One check to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchRequest {
    /// The URL (http or https).
    pub url: Url,
    /// GET or HEAD.
    pub method: Method,
    /// Conditions from the previous response (empty for an unconditional request).
    pub validators: Validators,
}

impl FetchRequest {
    /// An unconditional GET.
    pub fn get(url: Url) -> Self {
        Self {
            url,
            method: Method::Get,
            validators: Validators::default(),
        }
    }
}

/// One response in a check's chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hop {
    /// The URL requested.
    pub url: Url,
    /// The status it answered.
    pub status: u16,
}

/// Everything a check learnt. Failures are in `error`; the other fields hold what was learnt
/// before the failure.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchOutcome {
    /// The URL asked for.
    pub requested_url: Url,
    /// Clock time the first request was sent, after any politeness wait (Unix ms).
    pub started_ms: i64,
    /// Clock time from `started_ms` to the end of the check, redirect waits included.
    pub duration_ms: i64,
    /// Clock time spent waiting for the first host's permit (politeness and back-off).
    pub waited_ms: i64,
    /// The last URL requested (the redirect target, if any).
    pub final_url: Url,
    /// Every response received, in order: redirects first, the final response last. Empty when
    /// no response came at all (connect error, timeout, invalid URL).
    pub hops: Vec<Hop>,
    /// The final response's status.
    pub status: Option<u16>,
    /// The final `ETag` (on a 304 that repeats none, the one sent).
    pub etag: Option<String>,
    /// The final raw `Last-Modified` (on a 304 that repeats none, the one sent).
    pub last_modified: Option<String>,
    /// `last_modified` parsed, Unix ms.
    pub last_modified_ms: Option<i64>,
    /// The final `Content-Type`, raw.
    pub content_type: Option<String>,
    /// `Cache-Control: max-age` of the final response.
    pub cache_control_max_age: Option<Duration>,
    /// `Retry-After` of the final response, relative to the clock.
    pub retry_after: Option<Duration>,
    /// The body of a 2xx GET, decompressed, complete and within the cap.
    pub body: Option<Bytes>,
    /// `body` decoded, for text content types.
    pub text: Option<String>,
    /// The encoding `text` was decoded from (e.g. `windows-1252`).
    pub charset: Option<&'static str>,
    /// Decompressed body bytes read. When the body was too large, reading stopped at the
    /// first chunk that passed the cap, and that chunk was not kept.
    pub bytes: u64,
    /// The body is only the first `max_body_bytes` of a longer one (only when asked for with
    /// [`Fetcher::fetch_prefix`]; otherwise a longer body is an error).
    pub truncated: bool,
    /// xxh3-64 of `text` (of `body` for non-text content).
    pub fingerprint: Option<u64>,
    /// Why the check failed, if it did.
    pub error: Option<FetchError>,
}

impl FetchOutcome {
    /// The status to read a robots.txt's rules by (RFC 9309): the response's when it came
    /// whole, or when the status is the answer itself (an HTTP error status, a redirect that
    /// led nowhere); 0, "unreachable", disallow all for now, when none came or the body broke
    /// off (a 200 whose body was cut short is not an empty file that allows everything).
    pub fn robots_status(&self) -> u16 {
        match (self.status, &self.error) {
            (Some(status), None) => status,
            (
                Some(status),
                Some(
                    FetchError::Http { .. }
                    | FetchError::TooManyRedirects { .. }
                    | FetchError::RedirectLoop { .. }
                    | FetchError::BadRedirect { .. },
                ),
            ) => status,
            _ => 0,
        }
    }

    /// An outcome for `url` before anything happened.
    pub(crate) fn new(url: Url, now_ms: i64) -> Self {
        Self {
            requested_url: url.clone(),
            started_ms: now_ms,
            duration_ms: 0,
            waited_ms: 0,
            final_url: url,
            hops: Vec::new(),
            status: None,
            etag: None,
            last_modified: None,
            last_modified_ms: None,
            content_type: None,
            cache_control_max_age: None,
            retry_after: None,
            body: None,
            text: None,
            charset: None,
            bytes: 0,
            truncated: false,
            fingerprint: None,
            error: None,
        }
    }

    /// The server answered 304 Not Modified: our copy is current.
    pub fn not_modified(&self) -> bool {
        self.status == Some(304) && self.error.is_none()
    }

    /// The check succeeded (a 2xx or a 304, no error).
    pub fn is_success(&self) -> bool {
        self.error.is_none()
            && self
                .status
                .is_some_and(|s| (200..300).contains(&s) || s == 304)
    }

    /// Whether a failed check may be its host's trouble rather than its URL's: a server error
    /// (5xx), the host asking for time (408, 429), no connection, a timeout, a transfer cut
    /// short, or a hop's robots.txt out of reach. The host's back-off answers those; whether
    /// they are the URL's own failure is judged against the host's other checks
    /// ([`crate::scheduler::Seen::Unanswered`]). A 4xx, a redirect chain that leads nowhere
    /// or into a disallowed path, a body refused: the URL's.
    pub fn host_trouble(&self) -> bool {
        match &self.error {
            Some(
                FetchError::Connect { .. }
                | FetchError::Timeout { .. }
                | FetchError::Transport { .. }
                | FetchError::Truncated { .. }
                | FetchError::NotSent { .. }
                | FetchError::Disallowed { for_now: true, .. },
            ) => true,
            None | Some(FetchError::Http { .. }) => self
                .status
                .is_some_and(|s| matches!(s, 408 | 429 | 500..=599)),
            Some(_) => false,
        }
    }

    /// Turns a response into a failure: `error` is recorded and the body dropped, so nothing
    /// downstream takes it for a copy.
    pub fn reject(&mut self, error: FetchError) {
        self.error = Some(error);
        self.body = None;
        self.text = None;
        self.charset = None;
        self.fingerprint = None;
    }

    /// Whether at least one redirect was followed.
    pub fn redirected(&self) -> bool {
        self.hops.len() > 1
    }
}

/// Builds the HTTP client once, then makes checks. Cheap to share by reference.
#[derive(Debug, Clone)]
pub struct Fetcher {
    /// reqwest client: no automatic redirects, decompression on, timeouts set.
    client: reqwest::Client,
    /// The settings it was built from.
    config: FetchConfig,
    /// The address policy (the resolver has its own copy), for URLs with a literal IP.
    policy: AddressPolicy,
}

/// Decides, before each request of a check (the first and every redirect hop), whether it may
/// be made; an `Err` ends the check with that error and nothing is requested. The refresher's
/// gate reads robots.txt of the hop's own host.
pub trait HopGate: Sync {
    /// Whether `url` may be requested.
    fn admit<'a>(&'a self, url: &'a Url) -> BoxFuture<'a, Result<(), FetchError>>;
}

/// How a check treats its body cap and hops.
struct Limits<'a> {
    /// Cap on the decompressed body.
    max_body_bytes: u64,
    /// Keep the first `max_body_bytes` of a longer body (robots.txt) instead of failing.
    keep_prefix: bool,
    /// Asked before every request.
    gate: Option<&'a dyn HopGate>,
}

/// How long an idle connection stays pooled for its host's next request: above the common
/// politeness gaps (a second, a few seconds of Crawl-delay), well below reqwest's 90 s.
const POOL_IDLE: std::time::Duration = std::time::Duration::from_secs(20);

/// The HTTP client could not be built (bad user agent, TLS backend failure).
#[derive(Debug, thiserror::Error)]
#[error("cannot build the HTTP client")]
pub struct BuildError(#[source] reqwest::Error);

impl Fetcher {
    /// Builds the client from `config`.
    pub fn new(config: FetchConfig) -> Result<Self, BuildError> {
        // No proxy: a proxy would resolve names itself, out of the address policy's reach.
        let client = reqwest::Client::builder()
            .user_agent(config.user_agent.clone())
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(config.connect_timeout)
            .read_timeout(config.read_timeout)
            .timeout(config.total_timeout)
            .no_proxy()
            // An idle connection is kept a while for the host's next request, not the 90 s
            // default: over thousands of hosts, a socket per host touched adds up.
            .pool_idle_timeout(POOL_IDLE)
            .dns_resolver(address::resolver(&config.resolve, &config.allow_networks))
            .build()
            .map_err(BuildError)?;
        let policy = AddressPolicy::allowing(&config.allow_networks);
        Ok(Self {
            client,
            config,
            policy,
        })
    }

    /// The settings in force.
    pub fn config(&self) -> &FetchConfig {
        &self.config
    }

    /// Makes one check, politely. Never fails: a failure is in [`FetchOutcome::error`].
    /// `clock` stamps the outcome; pass the pool's own clock.
    pub async fn fetch(
        &self,
        request: &FetchRequest,
        pool: &HostPool,
        clock: &dyn Clock,
    ) -> FetchOutcome {
        self.fetch_capped(request, self.config.max_body_bytes, pool, clock)
            .await
    }

    /// [`fetch`](Self::fetch) with its own body cap (robots.txt's 500 KiB, a sitemap's 50 MB).
    pub async fn fetch_capped(
        &self,
        request: &FetchRequest,
        max_body_bytes: u64,
        pool: &HostPool,
        clock: &dyn Clock,
    ) -> FetchOutcome {
        let limits = Limits {
            max_body_bytes,
            keep_prefix: false,
            gate: None,
        };
        check::run(self, request, &limits, pool, clock).await
    }

    /// [`fetch_capped`](Self::fetch_capped), asking `gate` before every request (the first and
    /// each redirect hop).
    pub async fn fetch_gated(
        &self,
        request: &FetchRequest,
        max_body_bytes: u64,
        pool: &HostPool,
        clock: &dyn Clock,
        gate: &dyn HopGate,
    ) -> FetchOutcome {
        let limits = Limits {
            max_body_bytes,
            keep_prefix: false,
            gate: Some(gate),
        };
        check::run(self, request, &limits, pool, clock).await
    }

    /// An unconditional GET that keeps the first `max_body_bytes` of a longer body and marks
    /// the outcome [`truncated`](FetchOutcome::truncated) (robots.txt: RFC 9309 §2.5 asks to
    /// parse at least the first 500 KiB, not to drop the file).
    pub async fn fetch_prefix(
        &self,
        url: &Url,
        max_body_bytes: u64,
        pool: &HostPool,
        clock: &dyn Clock,
    ) -> FetchOutcome {
        let limits = Limits {
            max_body_bytes,
            keep_prefix: true,
            gate: None,
        };
        check::run(self, &FetchRequest::get(url.clone()), &limits, pool, clock).await
    }

    /// An unconditional GET of a resource (robots.txt, a sitemap, a feed) under the same
    /// politeness, with its own body cap.
    pub async fn fetch_bytes(
        &self,
        url: &Url,
        max_body_bytes: u64,
        pool: &HostPool,
        clock: &dyn Clock,
    ) -> FetchOutcome {
        let request = FetchRequest::get(url.clone());
        self.fetch_capped(&request, max_body_bytes, pool, clock)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(status: Option<u16>, error: Option<FetchError>) -> FetchOutcome {
        let url = Url::parse("http://a.test/p").unwrap();
        FetchOutcome {
            status,
            error,
            ..FetchOutcome::new(url, 0)
        }
    }

    /// What the host's back-off answers may be the host's trouble; what answers for the URL is
    /// the URL's.
    #[test]
    fn a_hosts_trouble_is_told_from_the_urls() {
        let url = "http://a.test/p".to_string();
        let http = |status| {
            outcome(
                Some(status),
                Some(FetchError::Http {
                    url: url.clone(),
                    status,
                }),
            )
        };
        for status in [408, 429, 500, 501, 502, 503, 504] {
            assert!(http(status).host_trouble(), "{status}");
            assert!(outcome(Some(status), None).host_trouble(), "{status}");
        }
        for status in [400, 403, 404, 410, 451] {
            assert!(!http(status).host_trouble(), "{status}");
        }
        let timeout = FetchError::Timeout {
            url: url.clone(),
            stage: Stage::Waiting,
        };
        let connect = FetchError::Connect {
            url: url.clone(),
            reason: "refused".into(),
        };
        let truncated = FetchError::Truncated {
            url: url.clone(),
            expected: 10,
            got: 5,
        };
        assert!(outcome(None, Some(timeout)).host_trouble());
        assert!(outcome(None, Some(connect)).host_trouble());
        assert!(outcome(Some(200), Some(truncated)).host_trouble());
        // A hop's robots.txt out of reach disallows everything for now: the host's trouble.
        let unreadable = FetchError::Disallowed {
            url: url.clone(),
            rule: "robots.txt could not be read".into(),
            for_now: true,
        };
        assert!(outcome(Some(301), Some(unreadable)).host_trouble());
        let disallowed = FetchError::Disallowed {
            url: url.clone(),
            rule: "Disallow: /p".into(),
            for_now: false,
        };
        let looped = FetchError::RedirectLoop {
            url: url.clone(),
            target: url.clone(),
        };
        assert!(!outcome(Some(301), Some(disallowed)).host_trouble());
        assert!(!outcome(Some(301), Some(looped)).host_trouble());
        assert!(!outcome(Some(200), None).host_trouble());
    }
}
