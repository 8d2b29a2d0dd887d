//! What a refresher run exposes to its operator: Prometheus metrics (`freshet run --metrics
//! ADDR` serves them at `/metrics`, OpenMetrics text) and the figures of the live status line.
//!
//! One [`Metrics`] per run. The refresher reports to it at the few places where things happen
//! (a request answered, a check recorded, an error recorded): atomic counters, nothing else on
//! the hot path. The gauges that describe the scheduler's state (URLs due, hosts in back-off,
//! budget, estimated staleness per site) are not kept up to date as things happen: whoever
//! reads them (a scrape, the status line) first asks the refresher to [`Gauges`] them, so a run
//! nobody watches pays nothing for them.
//!
//! Names follow Prometheus conventions: base units in the name (`_seconds`), `_total` on
//! counters, `_ratio` for shares.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};

use crate::clock::MS_PER_DAY;

/// A site.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SiteLabel {
    /// The site's name in the schedule.
    pub site: String,
}

/// A site and what happened.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SiteOutcome {
    /// The site's name in the schedule.
    pub site: String,
    /// For requests: `2xx`, `304`, `3xx`, `4xx`, `5xx` or the kind of failure (`timeout`,
    /// `connect`, ...); for checks: `changed`, `unchanged`, `first`, `failed` or `handed_over`.
    pub outcome: String,
}

/// A site and a kind of error.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SiteKind {
    /// The site's name in the schedule.
    pub site: String,
    /// Where it happened: `fetch`, `robots`, `sitemap`, `feed`, `discovery`, `dedup`.
    pub kind: String,
}

/// The scheduler's state at one moment, as the refresher reads it for [`Metrics::set_gauges`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Gauges {
    /// URLs due now.
    pub urls_due: u64,
    /// Hosts closed now by back-off or Retry-After.
    pub hosts_in_backoff: u64,
    /// Per site: its budget and estimated staleness.
    pub sites: Vec<SiteGauges>,
}

/// One site's gauges.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SiteGauges {
    /// The site's name in the schedule.
    pub site: String,
    /// Its budget, requests per day.
    pub budget_per_day: f64,
    /// The estimated importance-weighted mean age of its copies in days, and the share of them
    /// stale; `None` before any copy.
    pub staleness: Option<(f64, f64)>,
}

/// A snapshot for the live status line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    /// Requests sent in this run.
    pub requests: u64,
    /// Page checks recorded in this run.
    pub checks: u64,
    /// Requests charged today (clock day, UTC), all sites.
    pub requests_today: u64,
    /// Their budget for a day, all sites.
    pub budget_per_day: f64,
    /// URLs due now.
    pub urls_due: u64,
    /// Hosts in back-off now.
    pub hosts_in_backoff: u64,
}

/// The metrics of one run.
pub struct Metrics {
    registry: Registry,
    requests: Family<SiteOutcome, Counter>,
    checks: Family<SiteOutcome, Counter>,
    changes: Family<SiteLabel, Counter>,
    errors: Family<SiteKind, Counter>,
    fetch_duration: Family<SiteLabel, Histogram>,
    budget_used: Family<SiteLabel, Gauge>,
    budget: Family<SiteLabel, Gauge<f64, AtomicU64>>,
    urls_due: Gauge,
    hosts_in_backoff: Gauge,
    mean_age: Family<SiteLabel, Gauge<f64, AtomicU64>>,
    stale_ratio: Family<SiteLabel, Gauge<f64, AtomicU64>>,
    /// Totals for the status line (the families are keyed by label; summing them is a scan).
    requests_sum: AtomicU64,
    checks_sum: AtomicU64,
    /// The sum of the sites' budgets (f64 bits), as last set.
    budget_sum: AtomicU64,
    /// Requests per site on the current clock day (UTC): (day number, counts). A std Mutex:
    /// held for a hash-map update, never across an await.
    today: Mutex<(i64, HashMap<String, u64>)>,
}

/// Fetch latency buckets, seconds: 5 ms to about 40 s.
fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.005, 2.0, 14))
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Empty metrics, registered under their names.
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let m = Metrics {
            requests: Family::default(),
            checks: Family::default(),
            changes: Family::default(),
            errors: Family::default(),
            fetch_duration: Family::new_with_constructor(latency_histogram),
            budget_used: Family::default(),
            budget: Family::default(),
            urls_due: Gauge::default(),
            hosts_in_backoff: Gauge::default(),
            mean_age: Family::default(),
            stale_ratio: Family::default(),
            requests_sum: AtomicU64::new(0),
            checks_sum: AtomicU64::new(0),
            budget_sum: AtomicU64::new(0),
            today: Mutex::new((i64::MIN, HashMap::new())),
            registry: Registry::default(),
        };
        registry.register(
            "freshet_requests",
            "HTTP requests sent (robots.txt, sitemaps, feeds, pages, every redirect hop), by \
             site and outcome",
            m.requests.clone(),
        );
        registry.register(
            "freshet_checks",
            "Checks of pages and feeds recorded, by site and what they saw",
            m.checks.clone(),
        );
        registry.register(
            "freshet_changes",
            "Checks that saw a change, by site",
            m.changes.clone(),
        );
        registry.register(
            "freshet_errors",
            "Errors recorded, by site and where they happened",
            m.errors.clone(),
        );
        registry.register_with_unit(
            "freshet_fetch_duration",
            "Time from sending a check's first request to its last byte, by site",
            Unit::Seconds,
            m.fetch_duration.clone(),
        );
        registry.register(
            "freshet_budget_used_requests",
            "Requests charged to the site's budget on the current clock day (UTC)",
            m.budget_used.clone(),
        );
        registry.register(
            "freshet_budget_requests_per_day",
            "The site's budget: requests per day",
            m.budget.clone(),
        );
        registry.register("freshet_urls_due", "URLs due now", m.urls_due.clone());
        registry.register(
            "freshet_hosts_in_backoff",
            "Hosts closed now by back-off or Retry-After",
            m.hosts_in_backoff.clone(),
        );
        registry.register_with_unit(
            "freshet_estimated_mean_age",
            "Estimated importance-weighted mean age of the site's copies",
            Unit::Seconds,
            m.mean_age.clone(),
        );
        registry.register_with_unit(
            "freshet_estimated_stale",
            "Estimated share of the site's copies that are stale",
            Unit::Other("ratio".into()),
            m.stale_ratio.clone(),
        );
        Metrics { registry, ..m }
    }

    /// `n` requests for `site` answered with `outcome` (see [`SiteOutcome`]) at clock `now_ms`.
    pub fn requests(&self, site: &str, outcome: &str, n: u64, now_ms: i64) {
        self.requests
            .get_or_create(&SiteOutcome {
                site: site.into(),
                outcome: outcome.into(),
            })
            .inc_by(n);
        self.requests_sum.fetch_add(n, Ordering::Relaxed);
        let day = now_ms.div_euclid(MS_PER_DAY as i64);
        let mut today = self.today.lock().unwrap_or_else(|e| e.into_inner());
        if today.0 != day {
            *today = (day, HashMap::new());
            self.budget_used.clear();
        }
        let count = today.1.entry(site.to_string()).or_default();
        *count += n;
        self.budget_used
            .get_or_create(&SiteLabel { site: site.into() })
            .set(*count as i64);
    }

    /// A check recorded for `site`: what it saw, whether a change, how long it took.
    pub fn check(&self, site: &str, outcome: &str, changed: bool, seconds: f64) {
        let label = SiteLabel { site: site.into() };
        self.checks
            .get_or_create(&SiteOutcome {
                site: site.into(),
                outcome: outcome.into(),
            })
            .inc();
        self.checks_sum.fetch_add(1, Ordering::Relaxed);
        if changed {
            self.changes.get_or_create(&label).inc();
        }
        self.fetch_duration.get_or_create(&label).observe(seconds);
    }

    /// An error recorded for `site` in `kind` (see [`SiteKind`]).
    pub fn error(&self, site: &str, kind: &str) {
        self.errors
            .get_or_create(&SiteKind {
                site: site.into(),
                kind: kind.into(),
            })
            .inc();
    }

    /// Sets the gauges from the scheduler's state.
    pub fn set_gauges(&self, gauges: &Gauges) {
        self.urls_due.set(gauges.urls_due as i64);
        self.hosts_in_backoff.set(gauges.hosts_in_backoff as i64);
        let budget: f64 = gauges.sites.iter().map(|s| s.budget_per_day).sum();
        self.budget_sum.store(budget.to_bits(), Ordering::Relaxed);
        for site in &gauges.sites {
            let label = SiteLabel {
                site: site.site.clone(),
            };
            self.budget.get_or_create(&label).set(site.budget_per_day);
            if let Some((age_days, stale)) = site.staleness {
                self.mean_age.get_or_create(&label).set(age_days * 86_400.0);
                self.stale_ratio.get_or_create(&label).set(stale);
            }
        }
    }

    /// The figures of the status line (gauges as last set).
    pub fn snapshot(&self, now_ms: i64) -> Snapshot {
        let day = now_ms.div_euclid(MS_PER_DAY as i64);
        let requests_today = {
            let today = self.today.lock().unwrap_or_else(|e| e.into_inner());
            if today.0 == day {
                today.1.values().sum()
            } else {
                0
            }
        };
        let budget_per_day = f64::from_bits(self.budget_sum.load(Ordering::Relaxed));
        Snapshot {
            requests: self.requests_sum.load(Ordering::Relaxed),
            checks: self.checks_sum.load(Ordering::Relaxed),
            requests_today,
            budget_per_day,
            urls_due: self.urls_due.get().max(0) as u64,
            hosts_in_backoff: self.hosts_in_backoff.get().max(0) as u64,
        }
    }

    /// The metrics in the OpenMetrics text format.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        if prometheus_client::encoding::text::encode(&mut text, &self.registry).is_err() {
            text.clear();
        }
        text
    }
}

/// The `outcome` label of a response's status.
pub fn status_class(status: u16) -> &'static str {
    match status {
        304 => "304",
        200..=299 => "2xx",
        300..=399 => "3xx",
        400..=499 => "4xx",
        500..=599 => "5xx",
        _ => "other",
    }
}

/// Reports the requests of one fetch outcome: one per response received, or one labelled with
/// the failure when none came.
pub fn report_fetch(metrics: &Metrics, site: &str, outcome: &crate::fetch::FetchOutcome) {
    let now = outcome.started_ms + outcome.duration_ms;
    if outcome.hops.is_empty() {
        let label = outcome.error.as_ref().map_or("other", |e| e.kind());
        metrics.requests(site, label, 1, now);
    }
    for hop in &outcome.hops {
        metrics.requests(site, status_class(hop.status), 1, now);
    }
}

/// The content type of [`Metrics::encode`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Serves `GET /metrics` on `listener` until the task is dropped; `scrape` gives the text (the
/// refresher's: bring the gauges up to date, then [`Metrics::encode`]).
pub async fn serve(
    listener: tokio::net::TcpListener,
    scrape: impl Fn() -> String + Send + Sync + 'static,
) -> std::io::Result<()> {
    use axum::routing::get;
    let scrape = std::sync::Arc::new(scrape);
    let app = axum::Router::new().route(
        "/metrics",
        get(move || {
            let scrape = scrape.clone();
            async move { ([(axum::http::header::CONTENT_TYPE, CONTENT_TYPE)], scrape()) }
        }),
    );
    axum::serve(listener, app).await
}

/// Binds the metrics listener at `addr` (what the user gave: nothing is widened).
pub async fn bind(addr: SocketAddr) -> anyhow::Result<tokio::net::TcpListener> {
    use anyhow::Context as _;
    tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("--metrics {addr}: cannot listen there"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_prometheus_conventions_and_budget_resets_each_day() {
        let m = Metrics::new();
        m.requests("a", "2xx", 3, 1_000);
        m.requests("a", "5xx", 1, 2_000);
        m.check("a", "changed", true, 0.25);
        m.error("a", "fetch");
        m.set_gauges(&Gauges {
            urls_due: 7,
            hosts_in_backoff: 1,
            sites: vec![SiteGauges {
                site: "a".into(),
                budget_per_day: 100.0,
                staleness: Some((0.5, 0.25)),
            }],
        });
        let text = m.encode();
        for line in [
            "freshet_requests_total{site=\"a\",outcome=\"2xx\"} 3",
            "freshet_changes_total{site=\"a\"} 1",
            "freshet_budget_used_requests{site=\"a\"} 4",
            "freshet_urls_due 7",
            "freshet_estimated_mean_age_seconds{site=\"a\"} 43200.0",
            "freshet_estimated_stale_ratio{site=\"a\"} 0.25",
            "freshet_fetch_duration_seconds_count{site=\"a\"} 1",
        ] {
            assert!(text.contains(line), "{line} not in\n{text}");
        }
        let snap = m.snapshot(2_000);
        assert_eq!((snap.requests, snap.checks, snap.requests_today), (4, 1, 4));
        assert_eq!((snap.urls_due, snap.budget_per_day), (7, 100.0));
        // The next clock day starts from 0.
        let next_day = MS_PER_DAY as i64 + 5;
        assert_eq!(m.snapshot(next_day).requests_today, 0);
        m.requests("a", "2xx", 2, next_day);
        assert!(
            m.encode()
                .contains("freshet_budget_used_requests{site=\"a\"} 2")
        );
    }
}
