//! Checking one URL the scheduler handed out: a page (fetched politely, compared with the copy,
//! reported to the scheduler, committed with its observation in one transaction, then given to
//! the dedup engine) or a feed (read for the pages it lists and the changes it announces).

use std::time::Instant;

use anyhow::Context as _;

use tracing::warn;

use crate::fetch::Method;
use crate::schedule;
use crate::scheduler::{Fetched, Seen, UrlKind};

use super::admission::admitted;
use super::context::Context;
use super::fetching::fetch_and_record_extracted;
use super::ledger::Due;
use super::waits::{Step, StepTimes};

/// Checks one URL the scheduler handed out. Never fails: problems are recorded, and the URL is
/// always reported back so the scheduler frees its host.
pub async fn check(ctx: &Context, due: Due) {
    let started = Instant::now();
    let mut steps = StepTimes::default();
    let lock = ctx.url_locks.get(due.url_id);
    let guard = lock.lock().await;
    let result = match due.kind {
        UrlKind::Page => check_page(ctx, &due, &mut steps).await,
        UrlKind::Feed => super::feeds::read_feed(ctx, &due).await,
    };
    drop(guard);
    ctx.url_locks.release(due.url_id, lock);
    if due.kind == UrlKind::Page {
        ctx.counters.waits.check_ended(started, steps);
    }
    if let Err(err) = result {
        // The URL's text for the log (failures are rare: one more read is cheap).
        let url = match ctx.store.url_row_by_id(due.url_id).await {
            Ok(Some(row)) => row.url,
            _ => format!("URL {}", due.url_id),
        };
        warn!(url = %url, error = %format!("{err:#}"), "check could not be recorded");
        ctx.count_error();
        let site = ctx.site(due.site_id).map_or("", |s| s.site.name.as_str());
        ctx.metrics.error(site, "store");
        // Free the host; the URL is tried again after its planned interval, an hour at least.
        let at = ctx.clock.now_ms();
        ctx.ledger
            .fetched(at, due.url_id, Fetched::at(at, Seen::Inconclusive));
    }
}

/// Checks one page, timing its steps in `steps`.
async fn check_page(ctx: &Context, due: &Due, steps: &mut StepTimes) -> anyhow::Result<()> {
    let started = Instant::now();
    let admitted = admitted(ctx, due).await;
    steps.ended(Step::Admission, started);
    let Some((site, row, url)) = admitted? else {
        return Ok(());
    };
    let method = match site.site.method {
        schedule::Method::Head => Method::Head,
        schedule::Method::Get => Method::Get,
    };
    let recorded = fetch_and_record_extracted(ctx, site, &row, &url, method, None, None)
        .await
        .with_context(|| format!("checking {}", row.url))?;
    steps.add(recorded.steps);
    let (outcome, extracted) = (recorded.outcome, recorded.extracted);
    let started = Instant::now();
    let filing = match recorded.same_bytes {
        Some(content_fp) => super::dedup_hook::Filing::SameBytes(content_fp),
        None => super::dedup_hook::Filing::Extracted(extracted),
    };
    let filed = super::dedup_hook::after_fetch(ctx, site, &row, &outcome, filing).await;
    steps.ended(Step::Dedup, started);
    filed.with_context(|| format!("filing {} with the dedup engine", row.url))?;
    Ok(())
}
