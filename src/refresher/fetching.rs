//! One request of a check, a feed read or a discovery pass, made politely and recorded (once
//! [`super::admission`] let it through): fetched conditionally with robots.txt asked on every
//! redirect hop ([`super::request`]), the observation committed with the URL's new summary in
//! one transaction and reported to the scheduler; problems recorded.

use std::time::{Duration, Instant};

use tracing::{debug, warn};
use url::Url;

use crate::dedup::content::content_fp;
use crate::dedup::extract::Extracted;
use crate::fetch::{FetchError, FetchOutcome, Method};
use crate::politeness::{NotNow, origin_of};
use crate::scheduler::{Fetched, Seen};
use crate::store::errors::ErrorRecord;
use crate::store::observations::NewObservation;
use crate::store::refusals::RefusalReason;
use crate::store::summary::SummaryUpdate;
use crate::store::urls::CheckRow;

use super::context::{Context, Counters, SiteState};
use super::evidence::{
    PreviousCopy, Response, counted, detect_change, detect_content_change, empty_body_error,
};
use super::request::{Request, Sent, request};
use super::waits::{Step, StepTimes};

/// How often a commit that failed is tried again before the check is given up (and recorded).
const COMMIT_TRIES: u32 = 5;

/// Fetches a page, feed or sitemap conditionally, records the observation with the URL's new
/// summary in one transaction, and returns the outcome. Pages and feeds are reported to the
/// scheduler, which plans their next visit; a sitemap is due again at `sitemap_due_ms` (its
/// site's next discovery).
pub async fn fetch_and_record(
    ctx: &Context,
    site: &SiteState,
    row: &CheckRow,
    url: &Url,
    method: Method,
    max_body: Option<u64>,
    sitemap_due_ms: Option<i64>,
) -> anyhow::Result<FetchOutcome> {
    let checked = fetch_and_record_extracted(ctx, site, row, url, method, max_body, sitemap_due_ms);
    Ok(checked.await?.outcome)
}

/// What [`fetch_and_record_extracted`] did.
pub(super) struct Recorded {
    /// The fetch.
    pub outcome: FetchOutcome,
    /// A page's extraction, if its body was read and is not the copy's ([`Recorded::same_bytes`]).
    pub extracted: Option<Extracted>,
    /// The copy's content fingerprint when the body is the copy's byte for byte and the dedup
    /// engine can file it again as it is ([`same_bytes`]): it was not extracted.
    pub same_bytes: Option<u64>,
    /// How long its request and its commit took.
    pub steps: StepTimes,
}

/// [`fetch_and_record`], also giving a page's extraction (done once per fetch: its content
/// fingerprint decides whether the main content changed, and the dedup engine files it) and
/// how long the request and the commit took.
///
/// A page's observation records two verdicts: `changed` (the decoded bytes) and
/// `content_changed` (the main text, see [`crate::dedup::content`]); the site's
/// `change_signal` picks the one the scheduler learns from, and the one the host's validators
/// are judged by. Feeds and sitemaps have no main text: their bytes are their content.
pub(super) async fn fetch_and_record_extracted(
    ctx: &Context,
    site: &SiteState,
    row: &CheckRow,
    url: &Url,
    method: Method,
    max_body: Option<u64>,
    sitemap_due_ms: Option<i64>,
) -> anyhow::Result<Recorded> {
    let sent = match request(ctx, site, row, url, method, max_body).await {
        Request::Sent(sent) => sent,
        Request::NotSent(outcome, steps) => {
            // Nothing reached the server: no observation, no error; the URL waits.
            if let (Some(FetchError::NotSent { reason, .. }), None) =
                (&outcome.error, sitemap_due_ms)
            {
                let until = match reason {
                    NotNow::Closed { until_ms } => {
                        ctx.ledger.close_host(row.host_id, *until_ms);
                        *until_ms
                    }
                    NotNow::Stopping => ctx.clock.now_ms(),
                    // Its holder fetches it; here it waits in case this worker takes the host.
                    NotNow::NotHeld => {
                        let renew_every_ms = ctx.leasing.as_ref().map_or(0, |l| l.renew_every_ms());
                        ctx.clock.now_ms() + renew_every_ms
                    }
                };
                ctx.ledger.defer(ctx.clock.now_ms(), row.id, until);
            }
            debug!(url = %url, error = ?outcome.error, "request not sent");
            return Ok(Recorded {
                outcome,
                extracted: None,
                same_bytes: None,
                steps,
            });
        }
    };
    record_sent(ctx, site, row, (url, method), sent, sitemap_due_ms).await
}

/// Records what a request that went out gave ([`fetch_and_record_extracted`]).
pub(super) async fn record_sent(
    ctx: &Context,
    site: &SiteState,
    row: &CheckRow,
    (url, method): (&Url, Method),
    sent: Sent,
    sitemap_due_ms: Option<i64>,
) -> anyhow::Result<Recorded> {
    let Sent {
        mut outcome,
        previous,
        trust,
        requests,
        audited,
        mut steps,
    } = sent;
    if let Some(error) = empty_body_error(&previous, &outcome) {
        outcome.reject(error);
    }

    // A redirect to a host another worker holds: recorded as the redirect it is (no copy, no
    // error) and handed over to the holder once committed.
    let handed_over = super::hand_over::target(&outcome).cloned();
    if handed_over.is_some() {
        outcome.status = outcome.hops.last().map(|hop| hop.status);
    }

    let same_bytes = same_bytes(ctx, site, row, &previous, &outcome).await;
    let extracted = (row.kind == "page" && outcome.error.is_none() && same_bytes.is_none())
        .then(|| super::dedup_hook::extract(ctx, row, &outcome))
        .flatten();
    let content_fingerprint = match (&extracted, &outcome.body) {
        // A rejected body is no copy of anything.
        _ if outcome.error.is_some() => None,
        _ if same_bytes.is_some() => same_bytes,
        (Some(extracted), Some(body)) => Some(content_fp(extracted, body)),
        // No text to extract (or not a page): the bytes are the content.
        _ => outcome.fingerprint,
    };
    let response = Response {
        status: outcome.status,
        etag: outcome.etag.clone(),
        last_modified: outcome.last_modified.clone(),
        fingerprint: outcome.fingerprint,
        content_fingerprint,
    };
    let (changed, evidence_kind, lesson) = if outcome.error.is_some() {
        // A failed check (truncated or empty body, ...) says nothing about change.
        (None, None, None)
    } else {
        detect_change(&previous, &response, trust.trust_etag())
    };
    let content_changed = detect_content_change(&previous, &response, changed, evidence_kind);
    let (counted_change, mut lesson) =
        counted(site.site.change_signal, changed, content_changed, lesson);
    if audited && let Some(lesson) = &mut lesson {
        lesson.audit = Some(lesson.content_changed);
    }
    let evidence_kind = if audited {
        Some("audit")
    } else {
        evidence_kind
    };
    let got_copy = outcome.is_success();
    let error = outcome
        .error
        .as_ref()
        .filter(|_| handed_over.is_none())
        .map(|e| e.to_string())
        .or_else(|| {
            outcome
                .status
                .filter(|s| !(200..300).contains(s) && *s != 304)
                .filter(|_| handed_over.is_none())
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
        content_fingerprint,
        content_changed,
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
    let min_interval_ms = floor_kept_ms(&outcome, row.min_interval_ms);
    let mut update = SummaryUpdate {
        got_copy,
        etag: outcome.etag.clone(),
        last_modified: outcome.last_modified.clone(),
        fingerprint: outcome.fingerprint,
        content_fingerprint,
        min_interval_ms,
        checked_as: ["page", "feed", "sitemap"]
            .into_iter()
            .find(|&kind| kind == row.kind),
        ..Default::default()
    };
    let now = ctx.clock.now_ms();
    let seen = match (got_copy, counted_change) {
        (false, _) if handed_over.is_some() => Seen::Inconclusive,
        // Another host's trouble (a redirect's target down) is judged by neither host's
        // answers: this one answered its redirect.
        (false, _) if outcome.host_trouble() && trouble_origin(&outcome) != origin_of(url) => {
            Seen::Inconclusive
        }
        (false, _) if outcome.host_trouble() => Seen::Unanswered,
        (false, _) => Seen::Failed,
        (true, Some(true)) => Seen::Changed,
        (true, Some(false)) => Seen::Unchanged,
        (true, None) => Seen::Copy,
    };
    let fetched = Fetched {
        at_ms: outcome.started_ms,
        seen,
        last_modified_ms: outcome.last_modified_ms,
        lesson,
        extra_requests: requests - 1,
        min_interval_ms: floor_said_ms(&outcome),
        host_open_at_ms: Some(ctx.pool.next_allowed_ms(&origin_of(url))),
    };
    // A 2xx: a new listing (a sitemap's pages, a feed's entries) whose validators wait for it.
    let new_listing = outcome.status.is_some_and(|s| (200..300).contains(&s));
    match sitemap_due_ms {
        Some(due) => {
            // Sitemaps are read outside the frontier: every request is charged.
            update.next_due_ms = due;
            if new_listing {
                // A new listing: its validators and floor are written once all its pages are
                // (`Store::set_listed_at`); until then the validators of the last read listed
                // whole hold, and no floor keeps the next discovery from reading it whole. (A
                // 304 says the last listing holds: its update is kept as it comes.)
                update.etag = None;
                update.last_modified = None;
                update.min_interval_ms = None;
            }
            ctx.ledger.charge(site.id, now, requests);
            super::save_budgets(ctx, now);
        }
        None => {
            if row.kind == "feed" && new_listing {
                // As a sitemap's: written once its entries are (`feeds::read_feed`), so that
                // a kill in between does not leave entries a 304 would never give again.
                update.etag = None;
                update.last_modified = None;
            }
            if let Some(after) = ctx.ledger.fetched(now, row.id, fetched) {
                let summary = after.summary;
                update.next_due_ms = summary.due_ms.unwrap_or(now);
                update.rate = Some(summary.estimate);
                update.planned_per_day = Some(summary.planned_per_day);
                update.stats = Some(after.stats);
                update.failures = Some(summary.failures);
                // (A feed's floor is its `ttl` too, which a 304 keeps; a check left
                // unanswered keeps the floor it had.)
                update.min_interval_ms =
                    (summary.min_interval_ms > 0).then_some(summary.min_interval_ms);
                update.waits_for_feed_id = Some(after.waits_for_feed_id);
            }
        }
    }
    if lesson.is_some() || matches!(seen, Seen::Changed | Seen::Unchanged) {
        // Saved with the observation that taught it, in one transaction (a check that could
        // compare judges the announcements made since the copy too).
        let trust = ctx.ledger.stored_trust(row.host_id);
        let trust = serde_json::to_string(&trust).unwrap_or_default();
        update.host_trust = Some((row.host_id, trust));
    }
    // (Read after the ledger took the check's plan: a feed read's save of plans taken before
    // it is older, and one whose `written_ms` is later holds a newer plan than this one,
    // `store::summary_writes`.)
    update.written_ms = Some(ctx.clock.now_ms());
    let commit_started = Instant::now();
    commit(ctx, &observation, &update).await?;
    steps.ended(Step::Commit, commit_started);
    if row.kind == "page" {
        Counters::add(&ctx.counters.checks, 1);
        if changed == Some(true) {
            Counters::add(&ctx.counters.changes, 1);
        }
        let seen = match (&error, changed) {
            _ if handed_over.is_some() => "handed_over",
            (Some(_), _) => "failed",
            (None, Some(true)) => "changed",
            (None, Some(false)) => "unchanged",
            (None, None) => "first",
        };
        let seconds = outcome.duration_ms.max(0) as f64 / 1000.0;
        ctx.metrics
            .check(&site.site.name, seen, changed == Some(true), seconds);
    }
    if let Some(refused) = outcome.error.as_ref().and_then(refusal_of) {
        ctx.refuse(site, Some("check"), vec![refused]).await?;
    }
    if let Some(message) = error {
        record_error(ctx, site, url.as_str(), message).await?;
    }
    if let Some(target) = &handed_over {
        super::hand_over::hand_over(ctx, site, row, target, outcome.started_ms).await?;
    }
    Ok(Recorded {
        outcome,
        extracted,
        same_bytes,
        steps,
    })
}

/// The copy's content fingerprint, when `outcome` is a page's 200 whose body is the copy's byte
/// for byte, fetched from the URL itself with the `Content-Type` it was filed with, and the
/// dedup engine can file it again unextracted ([`crate::dedup::DedupEngine::can_refile_same_bytes`]):
/// its main text is the copy's, so a page served whole every time (no validators, or an audit
/// of a 304) is extracted once per change, not once per check. A site that finds pages by
/// their links extracts every body (each fetch adds a page's next new links).
async fn same_bytes(
    ctx: &Context,
    site: &SiteState,
    row: &CheckRow,
    previous: &PreviousCopy,
    outcome: &FetchOutcome,
) -> Option<u64> {
    let content_fp = previous.content_fingerprint?;
    let candidate = row.kind == "page"
        && outcome.error.is_none()
        && outcome.is_success()
        && outcome.hops.len() <= 1
        && outcome.final_url == outcome.requested_url
        && outcome.fingerprint.is_some()
        && outcome.fingerprint == previous.fingerprint
        && site.site.seeds.is_empty();
    if !candidate {
        return None;
    }
    let rt = ctx.dedup.inner.lock().await;
    rt.engine
        .can_refile_same_bytes(
            outcome.requested_url.as_str(),
            outcome.content_type.as_deref(),
            content_fp,
        )
        .then_some(content_fp)
}

/// The refusal a fetch met, if one of freshet's rules stopped it: the address policy, or
/// robots.txt on a redirect hop.
fn refusal_of(error: &FetchError) -> Option<(String, RefusalReason, String)> {
    match error {
        FetchError::AddressRefused { url, refused } => {
            Some((url.clone(), RefusalReason::Address, refused.to_string()))
        }
        FetchError::Disallowed { url, rule, .. } => {
            Some((url.clone(), RefusalReason::Robots, rule.clone()))
        }
        _ => None,
    }
}

/// Commits a check, trying again a few times on a transient store error (the store already
/// retries a locked database); the check is acknowledged only once committed.
async fn commit(
    ctx: &Context,
    observation: &NewObservation,
    update: &SummaryUpdate,
) -> anyhow::Result<()> {
    let mut pause = Duration::from_millis(200);
    for attempt in 1..=COMMIT_TRIES {
        match ctx.store.record_check(observation, update).await {
            Ok(()) => return Ok(()),
            Err(err) if attempt < COMMIT_TRIES => {
                warn!(url_id = observation.url_id, attempt, error = %err, "commit failed; trying again");
                tokio::time::sleep(pause).await;
                pause *= 2;
            }
            Err(err) => return Err(err.into()),
        }
    }
    Ok(())
}

/// The floor a check leaves on the row of a URL the scheduler does not plan (a sitemap, or a
/// URL no longer in the ledger): what the answer said of it ([`floor_said_ms`]), else the
/// row's `floor_ms`. Before, a sitemap's 304 without max-age ended its floor, where it keeps a
/// page's, and a Retry-After (its host's gate holds it) was kept as its floor.
fn floor_kept_ms(outcome: &FetchOutcome, floor_ms: Option<i64>) -> Option<i64> {
    match floor_said_ms(outcome) {
        Some(0) => None,
        Some(said) => Some(said),
        None => floor_ms,
    }
}

/// Its Cache-Control max-age (ms), if it gave one.
pub(super) fn max_age_ms(outcome: &FetchOutcome) -> Option<i64> {
    outcome.cache_control_max_age.map(crate::clock::duration_ms)
}

/// What an answer says of the URL's floor ([`Fetched::min_interval_ms`]), its max-age: a 2xx
/// sets it, or ends it without one; a 304 sets it when it gives one, and without one says
/// nothing (the stored response's headers stand, RFC 9111 §4.3.4); an error or no answer says
/// nothing. (A Retry-After is the host's: its politeness gate holds it back, and as the URL's
/// floor, which a 304 keeps, a page throttled once stayed throttled until it changed.)
fn floor_said_ms(outcome: &FetchOutcome) -> Option<i64> {
    match outcome.status {
        Some(status) if (200..300).contains(&status) => Some(max_age_ms(outcome).unwrap_or(0)),
        Some(304) => max_age_ms(outcome),
        _ => None,
    }
}

/// Records a problem with a URL's request and counts it.
pub async fn record_error(
    ctx: &Context,
    site: &SiteState,
    url: &str,
    message: String,
) -> anyhow::Result<()> {
    record_error_in(ctx, "fetch", site, url, message).await
}

/// Records a problem with a URL under `scope` (`fetch` for its request, `feed` for what a feed
/// read says) and counts it.
pub async fn record_error_in(
    ctx: &Context,
    scope: &'static str,
    site: &SiteState,
    url: &str,
    message: String,
) -> anyhow::Result<()> {
    ctx.count_error();
    ctx.metrics.error(&site.site.name, scope);
    let record = ErrorRecord {
        scope,
        site: Some(site.site.name.clone()),
        url: Some(url.to_string()),
        message,
        ..Default::default()
    };
    ctx.store.record_error(ctx.clock.now_ms(), &record).await?;
    Ok(())
}

/// The origin whose trouble left a check without a copy: a redirect hop's whose robots.txt
/// could not be read (the check ends at the URL that redirected to it, which answered), else
/// the last URL requested's.
fn trouble_origin(outcome: &FetchOutcome) -> String {
    match &outcome.error {
        Some(FetchError::Disallowed {
            url, for_now: true, ..
        }) => Url::parse(url).map_or_else(|_| origin_of(&outcome.final_url), |hop| origin_of(&hop)),
        _ => origin_of(&outcome.final_url),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A redirect to a host whose robots.txt cannot be read ends the check at the URL that
    /// redirected (it answered): the trouble is the hop's host's, so the check says nothing of
    /// the URL (helper-95 saw a redirect to a dead port count as the URL's failures). The URL's
    /// own robots.txt out of reach is its own host's trouble.
    #[test]
    fn a_hops_unreadable_robots_is_the_hops_hosts_trouble() {
        let source = Url::parse("http://a.test/r").unwrap();
        let unreadable = |url: &str| FetchError::Disallowed {
            url: url.to_string(),
            rule: "robots.txt could not be read".into(),
            for_now: true,
        };
        let mut outcome = FetchOutcome::new(source.clone(), 0);
        outcome.error = Some(unreadable("http://127.0.0.1:1/x"));
        assert_eq!(
            trouble_origin(&outcome),
            origin_of(&Url::parse("http://127.0.0.1:1/").unwrap())
        );
        outcome.error = Some(unreadable("http://a.test/r"));
        assert_eq!(trouble_origin(&outcome), origin_of(&source));
        outcome.error = Some(FetchError::Connect {
            url: source.to_string(),
            reason: "refused".into(),
        });
        assert_eq!(trouble_origin(&outcome), origin_of(&source));
    }

    /// A 2xx without Cache-Control max-age ends the URL's floor; a 304 without it, an error or
    /// no answer says nothing of it; a Retry-After is left to the host's gate.
    #[test]
    fn what_an_answer_says_of_the_servers_floor() {
        let answer = |status: Option<u16>, max_age_s: Option<u64>, retry_s: Option<u64>| {
            let mut outcome = FetchOutcome::new(Url::parse("http://a.test/").unwrap(), 0);
            outcome.status = status;
            outcome.cache_control_max_age = max_age_s.map(std::time::Duration::from_secs);
            outcome.retry_after = retry_s.map(std::time::Duration::from_secs);
            outcome
        };
        let said = |status, max_age_s, retry_s| floor_said_ms(&answer(status, max_age_s, retry_s));
        assert_eq!(said(Some(200), None, None), Some(0));
        assert_eq!(said(Some(304), None, None), None);
        assert_eq!(said(Some(304), Some(60), None), Some(60_000));
        assert_eq!(said(Some(404), None, None), None);
        assert_eq!(said(None, None, None), None);
        assert_eq!(said(Some(429), None, Some(120)), None);
        assert_eq!(said(Some(503), Some(60), Some(120)), None);
        assert_eq!(said(Some(200), Some(60), Some(120)), Some(60_000));
        // A sitemap's row (the scheduler keeps a page's): a bare 304 or an error keeps the
        // floor, a 2xx without max-age ends it, a Retry-After is the host's.
        let kept = |status, max_age_s, retry_s| {
            floor_kept_ms(&answer(status, max_age_s, retry_s), Some(7_000))
        };
        assert_eq!(kept(Some(304), None, None), Some(7_000));
        assert_eq!(kept(Some(304), Some(60), None), Some(60_000));
        assert_eq!(kept(Some(200), None, None), None);
        assert_eq!(kept(Some(429), None, Some(120)), Some(7_000));
        assert_eq!(kept(None, None, None), Some(7_000));
    }
}
