//! How `freshet inspect` fetches a URL: through freshet's own [`Fetcher`], so a user inspecting
//! a document sees what `freshet run` would get, and a site is asked only what `run` may ask. The
//! address policy applies to every hop (loopback and private ranges are refused unless
//! `--allow-network` names them), redirects are followed hop by hop, and before each hop of a
//! page, sitemap or feed robots.txt of that hop's own host is read (its first 500 KiB, RFC 9309
//! status handling, agent token `freshet`) and obeyed. robots.txt itself is fetched without
//! asking robots.txt, as `run` fetches it. Unlike `run`, nothing is cached between hops and a
//! Crawl-delay is not applied (one command makes a few requests), and no proxy is used (as in
//! `run`: the address policy judges the address connected to).

use std::sync::Arc;

use futures_util::future::BoxFuture;
use url::Url;

use crate::clock::{SharedClock, SystemClock};
use crate::fetch::{Cidr, FetchConfig, FetchError, FetchOutcome, FetchRequest, Fetcher, HopGate};
use crate::politeness::{HostPool, origin_of};
use crate::robots::{Robots, rules_for_status};

/// robots.txt is read as `run` reads it: one byte past RFC 9309's 500 KiB, so the parser sees
/// the file is longer and cuts at the last line end within them.
pub const ROBOTS_BYTES: u64 = crate::robots::MAX_ROBOTS_BYTES as u64 + 1;

/// A document as fetched.
pub struct Fetched {
    /// The body (empty when there was none).
    pub body: Vec<u8>,
    /// Its `Content-Type`.
    pub content_type: Option<String>,
    /// The URL it came from, after redirects.
    pub url: Url,
    /// The final HTTP status.
    pub status: u16,
}

/// One fetcher, host pool and clock for one `inspect` command.
pub struct InspectFetcher {
    fetcher: Fetcher,
    pool: HostPool,
    clock: SharedClock,
}

impl InspectFetcher {
    /// A fetcher that may connect to the special-purpose ranges in `allow_networks`.
    pub fn new(allow_networks: &[Cidr]) -> Result<Self, String> {
        let clock: SharedClock = Arc::new(SystemClock);
        let fetcher = Fetcher::new(FetchConfig {
            allow_networks: allow_networks.to_vec(),
            ..FetchConfig::default()
        })
        .map_err(|e| format!("{e}"))?;
        Ok(Self {
            fetcher,
            pool: HostPool::new(clock.clone()),
            clock,
        })
    }

    /// The largest body the fetcher reads by default.
    pub fn max_body_bytes(&self) -> u64 {
        self.fetcher.config().max_body_bytes
    }

    /// GETs a page, sitemap or feed (at most `max_bytes`), robots.txt asked before every hop.
    /// `Err` says why nothing was read: a refused address, a Disallow, a network error.
    pub async fn document(&self, url: &Url, max_bytes: u64) -> Result<Fetched, FetchError> {
        let gate = RobotsGate { inspect: self };
        let outcome = self
            .fetcher
            .fetch_gated(
                &FetchRequest::get(url.clone()),
                max_bytes,
                &self.pool,
                self.clock.as_ref(),
                &gate,
            )
            .await;
        fetched(url, outcome)
    }

    /// GETs a robots.txt (its first [`ROBOTS_BYTES`]); any HTTP status is an answer (RFC 9309
    /// gives each a meaning), `Err` only when none came back.
    pub async fn robots(&self, url: &Url) -> Result<Fetched, FetchError> {
        let mut outcome = self
            .fetcher
            .fetch_prefix(url, ROBOTS_BYTES, &self.pool, self.clock.as_ref())
            .await;
        let status = outcome.robots_status();
        if status != 0 {
            outcome.status = Some(status);
            outcome.error = None;
        }
        fetched(url, outcome)
    }
}

fn fetched(url: &Url, outcome: FetchOutcome) -> Result<Fetched, FetchError> {
    match (outcome.status, outcome.error) {
        (_, Some(error)) => Err(error),
        (Some(status), None) => Ok(Fetched {
            body: outcome.body.map(|b| b.to_vec()).unwrap_or_default(),
            content_type: outcome.content_type,
            url: outcome.final_url,
            status,
        }),
        (None, None) => Err(FetchError::Transport {
            url: url.to_string(),
            reason: "no answer".to_string(),
        }),
    }
}

/// robots.txt of each hop's own origin, fetched through the same fetcher (so the address
/// policy applies to it too).
struct RobotsGate<'a> {
    inspect: &'a InspectFetcher,
}

impl HopGate for RobotsGate<'_> {
    fn admit<'a>(&'a self, url: &'a Url) -> BoxFuture<'a, Result<(), FetchError>> {
        Box::pin(async move {
            let robots = match Url::parse(&origin_of(url)).and_then(|o| o.join("/robots.txt")) {
                Ok(robots_url) => {
                    let out = self
                        .inspect
                        .fetcher
                        .fetch_prefix(
                            &robots_url,
                            ROBOTS_BYTES,
                            &self.inspect.pool,
                            self.inspect.clock.as_ref(),
                        )
                        .await;
                    if let (None, Some(refused @ FetchError::AddressRefused { .. })) =
                        (out.status, &out.error)
                    {
                        // The host's own address is refused: say so, not "disallowed".
                        return Err(refused.clone());
                    }
                    let body = out.body.as_deref().unwrap_or(&[]);
                    rules_for_status(out.robots_status(), body, "freshet")
                }
                Err(_) => Robots::disallow_all(),
            };
            match robots.disallowed_by(url.as_str()) {
                None => Ok(()),
                Some(rule) => Err(FetchError::Disallowed {
                    url: url.to_string(),
                    rule,
                    for_now: robots.retry_soon(),
                }),
            }
        })
    }
}
