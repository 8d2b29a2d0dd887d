//! Checking URLs: one task per host takes its due pages, most age-reducing first, fetches each
//! politely, decides whether it changed, re-estimates its rate, plans its next visit and commits
//! the observation with the summary in one transaction.

use std::sync::atomic::Ordering;

use tracing::{debug, warn};
use url::Url;

use crate::clock::MS_PER_DAY;
use crate::estimate;
use crate::fetch::{FetchOutcome, FetchRequest, Method, Validators};
use crate::plan::{self, PlanPage};
use crate::politeness::origin_of;
use crate::schedule;
use crate::store::errors::ErrorRecord;
use crate::store::observations::NewObservation;
use crate::store::urls::{SummaryUpdate, UrlRow};

use super::context::{Context, Counters, SiteState};
use super::evidence::{PreviousCopy, Response, detect_change, evidence_for};

/// How many past checks feed an estimate.
const HISTORY: i64 = 500;
/// When a check failed, the soonest it is tried again.
const ERROR_RETRY_MS: i64 = 3_600_000;

/// Checks a batch of due pages of one host, in order of expected-age reduction; stops early
/// when shutdown was asked (what was checked is committed).
pub async fn check_host_urls(ctx: &Context, mut rows: Vec<UrlRow>) {
    let now = ctx.clock.now_ms();
    let benefit = |row: &UrlRow| -> f64 {
        let Some(last) = row.last_checked_ms else {
            return f64::INFINITY;
        };
        if row.known_change_ms.is_some() {
            return f64::MAX;
        }
        let since = (now - last).max(0) as f64 / MS_PER_DAY;
        row.weight * plan::expected_age_days(row.rate_per_day.unwrap_or(0.1), since)
    };
    rows.sort_by(|a, b| benefit(b).total_cmp(&benefit(a)));
    for row in rows {
        if ctx.stopping.load(Ordering::Relaxed) {
            break;
        }
        if let Err(err) = check_page(ctx, &row).await {
            warn!(url = %row.url, error = %err, "check could not be recorded");
            ctx.count_error();
        }
    }
}

/// Checks one page.
async fn check_page(ctx: &Context, row: &UrlRow) -> anyhow::Result<()> {
    let Some(site) = ctx.site(row.site_id) else {
        return Ok(());
    };
    let now = ctx.clock.now_ms();
    if !site.site.fetch_allowed(ctx.clock.now()) {
        let open = site
            .site
            .window
            .as_ref()
            .and_then(|w| w.next_open(ctx.clock.now()));
        let at = open.map_or(now + ERROR_RETRY_MS, |t| t.timestamp_millis());
        ctx.store.postpone(row.id, at).await?;
        return Ok(());
    }
    let url = match Url::parse(&row.url) {
        Ok(url) => url,
        Err(err) => {
            ctx.store.set_disallowed(row.id, true).await?;
            return record_error(ctx, site, &row.url, format!("unparsable URL: {err}")).await;
        }
    };
    let robots = ctx.robots.rules(ctx, site, &origin_of(&url)).await;
    if !robots.is_allowed(url.as_str()) {
        debug!(url = %url, "disallowed by robots.txt: never fetched");
        ctx.store.set_disallowed(row.id, true).await?;
        return Ok(());
    }
    let method = match site.site.method {
        schedule::Method::Head => Method::Head,
        schedule::Method::Get => Method::Get,
    };
    let how = FetchPlan {
        method,
        next_due_ms: None,
        max_body: None,
    };
    let outcome = fetch_and_record(ctx, site, row, &url, how).await?;
    super::dedup_hook::after_fetch(ctx, site, row, &outcome).await?;
    Ok(())
}

/// How a row is fetched and re-planned.
#[derive(Debug, Clone, Copy)]
pub struct FetchPlan {
    /// GET or HEAD.
    pub method: Method,
    /// For sitemaps and feeds: when discovery reads them again (pages are re-planned instead).
    pub next_due_ms: Option<i64>,
    /// A body cap other than the site's (a sitemap may be 50 MB).
    pub max_body: Option<u64>,
}

/// Fetches `url` (a page, sitemap or feed row) conditionally, records the observation and the
/// summary, and returns the outcome. Pages are re-estimated and re-planned.
pub async fn fetch_and_record(
    ctx: &Context,
    site: &SiteState,
    row: &UrlRow,
    url: &Url,
    how: FetchPlan,
) -> anyhow::Result<FetchOutcome> {
    let FetchPlan {
        method,
        next_due_ms,
        max_body,
    } = how;
    let previous = PreviousCopy {
        exists: row
            .last_status
            .is_some_and(|s| (200..300).contains(&s) || s == 304),
        etag: row.etag.clone(),
        last_modified: row.last_modified.clone(),
        fingerprint: row.fingerprint.map(crate::store::hash_from_db),
    };
    let trust = ctx.trust_of(row.host_id);
    let validators = if previous.exists {
        Validators {
            etag: row.etag.clone().filter(|_| trust.trust_etag()),
            last_modified: row.last_modified.clone(),
        }
    } else {
        Validators::default()
    };
    let request = FetchRequest {
        url: url.clone(),
        method,
        validators,
    };
    let cap = max_body.unwrap_or(site.site.max_body);
    let outcome = site
        .fetcher
        .fetch_capped(&request, cap, &ctx.pool, ctx.clock.as_ref())
        .await;
    Counters::add(&ctx.counters.requests, outcome.hops.len().max(1) as u64);

    let response = Response {
        status: outcome.status,
        etag: outcome.etag.clone(),
        last_modified: outcome.last_modified.clone(),
        fingerprint: outcome.fingerprint,
    };
    let (changed, evidence_kind, lesson) = detect_change(&previous, &response, trust.trust_etag());
    if let Some(lesson) = lesson {
        let learnt = ctx.learn_trust(row.host_id, lesson);
        ctx.store.save_trust(row.host_id, &learnt).await?;
    }
    let got_copy = outcome
        .status
        .is_some_and(|s| (200..300).contains(&s) || s == 304);
    let error = outcome.error.as_ref().map(|e| e.to_string()).or_else(|| {
        outcome
            .status
            .filter(|s| !(200..300).contains(s) && *s != 304)
            .map(|s| format!("HTTP {s} from {}", outcome.final_url))
    });
    let observation = NewObservation {
        url_id: row.id,
        checked_ms: outcome.started_ms,
        method: if method == Method::Head {
            "HEAD"
        } else {
            "GET"
        },
        status: outcome.status,
        etag: outcome.etag.clone(),
        last_modified_ms: outcome.last_modified_ms,
        fingerprint: outcome.fingerprint,
        bytes: outcome.bytes,
        duration_ms: outcome.duration_ms,
        error: error.clone(),
        changed,
        change_evidence: evidence_kind,
        final_url: (outcome.final_url.as_str() != url.as_str())
            .then(|| outcome.final_url.to_string()),
        redirects_json: (!outcome.hops.is_empty()).then(|| {
            let hops: Vec<(String, u16)> = outcome
                .hops
                .iter()
                .map(|h| (h.url.to_string(), h.status))
                .collect();
            serde_json::to_string(&hops).unwrap_or_default()
        }),
    };
    let min_interval_ms = server_floor_ms(&outcome);
    let mut update = SummaryUpdate {
        got_copy,
        etag: outcome.etag.clone(),
        last_modified: outcome.last_modified.clone(),
        fingerprint: outcome.fingerprint,
        min_interval_ms,
        ..Default::default()
    };
    let now = ctx.clock.now_ms();
    match next_due_ms {
        Some(due) => update.next_due_ms = due,
        None => {
            let estimate = estimate_row(ctx, row, Some(&observation)).await?;
            let planned = ctx.planned_rate(site, row, estimate.rate_per_day, min_interval_ms);
            let interval_ms = (MS_PER_DAY / planned.max(1e-6)).min(365.0 * MS_PER_DAY) as i64;
            let mut due = now + interval_ms.max(min_interval_ms.unwrap_or(0));
            if error.is_some() {
                due = due.max(now + ERROR_RETRY_MS);
            }
            update.next_due_ms = due;
            update.rate = Some(estimate);
            update.planned_per_day = Some(planned);
        }
    }
    ctx.store.record_check(&observation, &update).await?;
    if row.kind == "page" {
        Counters::add(&ctx.counters.checks, 1);
        if changed == Some(true) {
            Counters::add(&ctx.counters.changes, 1);
        }
    }
    if let Some(message) = error {
        record_error(ctx, site, url.as_str(), message).await?;
    }
    Ok(outcome)
}

/// The server's floor on the revisit interval: Cache-Control max-age and Retry-After.
fn server_floor_ms(outcome: &FetchOutcome) -> Option<i64> {
    let max_age = outcome.cache_control_max_age.map(|d| d.as_millis() as i64);
    let retry = outcome.retry_after.map(|d| d.as_millis() as i64);
    max_age.into_iter().chain(retry).max()
}

/// Re-estimates a page's rate from its history, with `latest` (the check just made, not yet
/// committed) if given.
pub async fn estimate_row(
    ctx: &Context,
    row: &UrlRow,
    latest: Option<&NewObservation>,
) -> anyhow::Result<estimate::RateEstimate> {
    let mut history = ctx.store.observations_for(row.id, HISTORY).await?;
    if let Some(observation) = latest {
        history.push(crate::store::observations::ObservationRow {
            checked_ms: observation.checked_ms,
            method: observation.method.to_string(),
            status: observation.status.map(i64::from),
            etag: None,
            last_modified_ms: observation.last_modified_ms,
            fingerprint: None,
            bytes: 0,
            duration_ms: 0,
            error: None,
            changed: observation.changed.map(i64::from),
            change_evidence: None,
            final_url: None,
            redirects: None,
        });
    }
    // Errors say nothing about change and would break the interval chain.
    history.retain(|o| {
        o.status
            .is_some_and(|s| (200..300).contains(&s) || s == 304)
    });
    let events = ctx.store.change_events_for(row.id).await?;
    let (prior, believe_hints) = ctx.prior_of(row.site_id, row.host_id);
    let evidence = evidence_for(
        &history,
        &events,
        row.changefreq.as_deref().filter(|_| believe_hints),
        ctx.trust_of(row.host_id).trust_last_modified(),
        ctx.clock.now_ms(),
    );
    Ok(estimate::estimate(&evidence, &prior))
}

async fn record_error(
    ctx: &Context,
    site: &SiteState,
    url: &str,
    message: String,
) -> anyhow::Result<()> {
    ctx.count_error();
    let record = ErrorRecord {
        scope: "fetch",
        site: Some(site.site.name.clone()),
        url: Some(url.to_string()),
        message,
        ..Default::default()
    };
    ctx.store.record_error(ctx.clock.now_ms(), &record).await?;
    Ok(())
}

/// A page as the planner sees it (used by the incremental update and the full re-plan).
pub fn plan_page(
    rate_per_day: f64,
    weight: f64,
    host: usize,
    min_interval_ms: Option<i64>,
) -> PlanPage {
    PlanPage {
        rate_per_day: rate_per_day.max(1e-9),
        weight,
        host,
        max_visits_per_day: min_interval_ms
            .filter(|&ms| ms > 0)
            .map_or(f64::INFINITY, |ms| MS_PER_DAY / ms as f64),
    }
}
