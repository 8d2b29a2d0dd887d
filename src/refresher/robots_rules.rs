//! robots.txt for the refresher's requests: read from the cache, else from the `hosts` table,
//! else fetched (politely, charged to the site) and stored, re-read daily ([`super::robots_cache`]
//! holds what is cached).
//!
//! RFC 9309 status handling is in [`crate::robots::rules_for_status`]: 2xx rules apply, 4xx
//! allows everything, 5xx or an unreachable host disallows everything and is retried after an
//! hour. The robots.txt request itself goes through the host's politeness like any other, and
//! the Crawl-delay it carries re-configures the host's limiter (the longer of it and the
//! schedule's rate wins).
//!
//! [`RobotsGate`] asks these rules before every request of a check, redirect hops included, so
//! a hop to another host reads *that* host's robots.txt (and takes its Crawl-delay) first, and a
//! hop into a Disallowed path is never requested. A hop to a host another worker holds is not
//! requested here at all: its holder reads that host's robots.txt.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use tracing::{debug, warn};
use url::Url;

use crate::fetch::{FetchError, HopGate};
use crate::politeness::{HostConfig, NotNow, origin_of};
use crate::robots::{self, Robots};
use crate::store::errors::ErrorRecord;
use crate::store::hosts::RobotsRecord;

use super::context::{Context, SiteState};
use super::robots_cache::Cached;

/// How long good (or 4xx) robots.txt rules are kept.
const ROBOTS_TTL: Duration = Duration::from_secs(24 * 3600);
/// How soon a 5xx or unreachable robots.txt is tried again (everything is disallowed meanwhile).
const ROBOTS_RETRY: Duration = Duration::from_secs(3600);

/// The rules for `origin`, fetching robots.txt (politely) when missing or stale. Also makes
/// sure the host's politeness is configured before any request reaches it.
pub async fn rules(ctx: &Context, site: &SiteState, origin: &str) -> Arc<Robots> {
    rules_until(ctx, site, origin).await.0
}

/// [`rules`], with the clock time (ms) until which they hold: a verdict drawn
/// from them is good until then, and must be drawn again from the rules in force after.
pub async fn rules_until(ctx: &Context, site: &SiteState, origin: &str) -> (Arc<Robots>, i64) {
    configure_host(ctx, site, origin, None);
    let slot = ctx.robots.slot(origin);
    let mut cached = slot.lock().await;
    let now = ctx.clock.now_ms();
    if let Some(entry) = cached.as_ref().filter(|c| c.expires_ms > now) {
        return (entry.robots.clone(), entry.expires_ms);
    }
    let entry = match load_stored(ctx, site, origin, now).await {
        Some(entry) => entry,
        None => fetch(ctx, site, origin).await,
    };
    configure_host(ctx, site, origin, entry.robots.crawl_delay());
    let answer = (entry.robots.clone(), entry.expires_ms);
    *cached = Some(entry);
    answer
}

/// Configures, before any request of a run, every host a site's schedule names or its stored
/// URLs live on with the strictest of the rates of the sites on it. Configured only as a site
/// asked for the host's robots.txt, a host shared by two sites went at the laxer site's rate
/// after a restart (no discovery then) until a URL of the stricter site came due: helper-87's
/// server saw requests 1 s apart under a 3 s limit.
pub async fn configure_known_hosts(ctx: &Context) -> anyhow::Result<()> {
    for (site_id, origin) in ctx.store.site_origins().await? {
        if let Some(site) = ctx.site(site_id) {
            configure_host(ctx, site, &origin, None);
        }
    }
    for site in ctx.sites.iter() {
        for origin in site.site.origins() {
            configure_host(ctx, site, &origin, None);
        }
    }
    Ok(())
}

/// When a schedule sitemap or feed of the site that was never read, because its host's
/// robots.txt could not be read, may be read: when robots.txt is tried again (`None`: there is
/// none such). The site's next discovery pass is due then, not at its next `rediscover` time
/// hours later: one refused connection at a first start left helper-87's site idle until then.
/// A document read before waits for the regular pass, which keeps the pages it listed; so an
/// outage of one host's robots.txt does not make every pass of the site hourly.
pub async fn unread_documents_until(
    ctx: &Context,
    site: &SiteState,
) -> anyhow::Result<Option<i64>> {
    let now = ctx.clock.now_ms();
    let mut until: Option<i64> = None;
    for url in site.site.sitemaps.iter().chain(&site.site.feeds) {
        let origin = origin_of(url);
        if ctx.held_elsewhere(&origin) {
            continue;
        }
        let read = ctx.store.url_row(url.as_str()).await?;
        if read.is_some_and(|row| row.last_checked_ms.is_some()) {
            continue;
        }
        let (robots, expires_ms) = rules_until(ctx, site, &origin).await;
        // A verdict that lapses at once (not asked: stopping, or another worker's host) is no
        // retry time.
        if robots.retry_soon() && expires_ms > now {
            until = Some(until.map_or(expires_ms, |u| u.min(expires_ms)));
        }
    }
    Ok(until)
}

/// Configures the host's limiter from the site's rate and a Crawl-delay (strictest wins).
fn configure_host(ctx: &Context, site: &SiteState, origin: &str, crawl_delay: Option<Duration>) {
    let config = HostConfig {
        min_interval: site.site.host_rate.min_interval(),
        concurrency: site.site.concurrency.get(),
    }
    .with_crawl_delay(crawl_delay);
    ctx.robots.configure_strictest(&ctx.pool, origin, config);
}

/// Rules stored by an earlier run, if still fresh.
async fn load_stored(ctx: &Context, site: &SiteState, origin: &str, now: i64) -> Option<Cached> {
    let row = ctx.store.host(origin).await.ok()??;
    let checked = row.robots_checked_ms?;
    let robots = robots::rules_for_stored(
        row.robots_status,
        row.robots_txt.as_deref().unwrap_or_default(),
        &site.agent_token,
    );
    let expires_ms = expires_ms(&robots, checked);
    if expires_ms > now && robots.retry_soon() {
        // Said at every start that finds it so: a run that sends nothing to the host must
        // say why (a restart within the hour said nothing and made no request).
        warn!(
            origin,
            checked = %crate::clock::ms_to_rfc3339(checked),
            until = %crate::clock::ms_to_rfc3339(expires_ms),
            error = row.robots_error.as_deref().unwrap_or(""),
            status = ?row.robots_status,
            "robots.txt could not be read when last tried: host disallowed until it is tried again"
        );
    }
    (expires_ms > now).then(|| Cached {
        robots: Arc::new(robots),
        expires_ms,
    })
}

/// Fetches and stores robots.txt.
async fn fetch(ctx: &Context, site: &SiteState, origin: &str) -> Cached {
    let checked_ms = ctx.clock.now_ms();
    let Ok(url) = Url::parse(&format!("{origin}/robots.txt")) else {
        return Cached {
            robots: Arc::new(Robots::disallow_all()),
            expires_ms: checked_ms,
        };
    };
    // One byte past the limit, so that the parser sees the file is longer and cuts at the
    // last complete line within the first 500 KiB.
    let outcome = site
        .fetcher
        .fetch_prefix(
            &url,
            robots::MAX_ROBOTS_BYTES as u64 + 1,
            &ctx.pool,
            ctx.clock.as_ref(),
        )
        .await;
    if let (Some(FetchError::NotSent { reason, .. }), true) =
        (&outcome.error, outcome.hops.is_empty())
    {
        // Not asked (shutdown, or the host closed by back-off): nothing is known, nothing
        // is stored, and it is asked again once the host opens.
        debug!(origin, %reason, "robots.txt not requested");
        let expires_ms = match reason {
            NotNow::Closed { until_ms } => *until_ms,
            NotNow::Stopping | NotNow::NotHeld => checked_ms,
        };
        return Cached {
            robots: Arc::new(Robots::disallow_all()),
            expires_ms,
        };
    }
    if outcome.truncated {
        debug!(
            origin,
            "robots.txt longer than 500 KiB: its first 500 KiB are read"
        );
    }
    let requests = outcome.hops.len().max(1);
    crate::metrics::report_fetch(&ctx.metrics, &site.site.name, &outcome);
    ctx.ledger.charge(site.id, checked_ms, requests as u32);
    super::save_budgets(ctx, checked_ms);
    let body = outcome.body.as_deref().unwrap_or_default();
    // A status whose body broke off is no answer: stored as none (disallow all for now).
    let status = Some(outcome.robots_status()).filter(|&s| s != 0);
    // Judged as it will be read back from the store.
    let robots = robots::rules_for_stored(status.map(i64::from), body, &site.agent_token);
    // A 4xx is an answer (RFC 9309: no rules, everything allowed), the commonest one on the
    // web: neither an error nor a disallowed host. What disallows for now is recorded.
    let error = outcome
        .error
        .as_ref()
        .filter(|_| robots.retry_soon())
        .map(|e| e.to_string());
    if error.is_none()
        && let Some(status) = status.filter(|s| (400..500).contains(s))
    {
        debug!(
            origin,
            status, "no robots.txt (a 4xx): every path is allowed"
        );
    }
    if let Some(message) = &error {
        warn!(origin, error = %message, "robots.txt unreachable: host disallowed for now");
        ctx.count_error();
        ctx.metrics.error(&site.site.name, "robots");
        let record = ErrorRecord {
            scope: "robots",
            site: Some(site.site.name.clone()),
            url: Some(url.to_string()),
            message: message.clone(),
            ..Default::default()
        };
        let _ = ctx.store.record_error(checked_ms, &record).await;
    }
    debug!(origin, status = ?outcome.status, "robots.txt read");
    if let Ok(host_id) = ctx.store.host_id(origin).await {
        let record = RobotsRecord {
            checked_ms,
            status,
            body: status.map(|_| body),
            error: error.as_deref(),
            crawl_delay_ms: robots.crawl_delay().map(crate::clock::duration_ms),
        };
        let _ = ctx.store.save_robots(host_id, &record).await;
    }
    Cached {
        expires_ms: expires_ms(&robots, checked_ms),
        robots: Arc::new(robots),
    }
}

/// Until when rules read at `checked_ms` hold: a day, or an hour for rules that disallow
/// everything for now (a 5xx or an unreachable host).
fn expires_ms(robots: &Robots, checked_ms: i64) -> i64 {
    let ttl = if robots.retry_soon() {
        ROBOTS_RETRY
    } else {
        ROBOTS_TTL
    };
    checked_ms + ttl.as_millis() as i64
}

/// The [`HopGate`] of one site's checks: robots.txt of each hop's own host.
pub struct RobotsGate<'a> {
    /// The run's shared state (the robots cache, the pool, the store).
    pub ctx: &'a Context,
    /// The site the check is made for (its agent token, its budget is charged).
    pub site: &'a SiteState,
}

impl HopGate for RobotsGate<'_> {
    fn admit<'a>(&'a self, url: &'a Url) -> BoxFuture<'a, Result<(), FetchError>> {
        Box::pin(async move {
            let origin = origin_of(url);
            if self.ctx.held_elsewhere(&origin) {
                // Its holder applies its robots.txt; the check hands the URL over
                // (`fetching::hand_over`) without reading the rules of a host it may not contact.
                return Err(FetchError::NotSent {
                    url: url.to_string(),
                    reason: NotNow::NotHeld,
                });
            }
            let robots = rules(self.ctx, self.site, &origin).await;
            match robots.disallowed_by(url.as_str()) {
                None => Ok(()),
                Some(rule) => {
                    debug!(url = %url, %rule, "hop disallowed by robots.txt: not requested");
                    Err(FetchError::Disallowed {
                        url: url.to_string(),
                        rule,
                        for_now: robots.retry_soon(),
                    })
                }
            }
        })
    }
}
