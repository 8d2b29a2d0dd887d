//! Whether a URL handed out by the scheduler may be requested now: its site and stored row still
//! there, inside the site's fetch window, allowed by robots.txt as it reads now, its host held by
//! this worker and not closed by back-off or Retry-After. A URL refused or deferred goes back to
//! the ledger with the reason recorded.

use tracing::{debug, info};
use url::Url;

use anyhow::Context as _;

use crate::politeness::origin_of;
use crate::store::refusals::RefusalReason;
use crate::store::urls::CheckRow;

use super::context::{Context, SiteState};
use super::fetching::record_error;
use super::ledger::Due;
use super::robots_rules;
use crate::scheduler::UrlKind;

/// The shortest wait before a URL robots.txt disallowed is judged again (clock ms), should the
/// rules expire at once.
const MIN_ROBOTS_WAIT_MS: i64 = 60_000;
/// The site, stored row and URL of a request handed out, if it may be made now ([`admit`]); a
/// URL whose site or row is gone is refused.
pub async fn admitted<'a>(
    ctx: &'a Context,
    due: &Due,
) -> anyhow::Result<Option<(&'a SiteState, CheckRow, Url)>> {
    let row = ctx
        .store
        .check_row(due.url_id)
        .await
        .with_context(|| format!("reading the stored row of URL {}", due.url_id))?;
    let (Some(site), Some(row)) = (ctx.site(due.site_id), row) else {
        ctx.ledger.refuse(ctx.clock.now_ms(), due.url_id);
        return Ok(None);
    };
    let kind = match due.kind {
        UrlKind::Page => "page",
        UrlKind::Feed => "feed",
    };
    if row.kind != kind || row.site_id != due.site_id {
        // Another worker's start gave the URL the kind (or the site) its schedule names it with
        // (`Store::declare_kinds`), after this one started on the schedule before: checked
        // under its old key, a feed's body went to the dedup engine and a page's plan to the
        // feed's row; read as a feed, a sitemap's row had pages waiting on it again. Refused
        // only, a page made a feed was read by no one until this worker started again. Its
        // key is its row's from now on: a sitemap's is discovery's, another site's is its
        // workers'.
        let checked_here = match ctx.store.url_row(&row.url).await? {
            Some(url_row) => super::kinds::took_its_kind(ctx, &url_row).await,
            None => {
                ctx.ledger.refuse(ctx.clock.now_ms(), due.url_id);
                false
            }
        };
        info!(url = %row.url, was = kind, kind = %row.kind, checked_here, "its kind or site changed since this worker started: checked as its row says");
        return Ok(None);
    }
    Ok(admit(ctx, site, &row).await?.map(|url| (site, row, url)))
}

/// Whether a URL handed out may be requested now: inside the site's fetch window (else it is
/// deferred to the window's opening) and allowed by robots.txt as it reads now. A Disallow is a
/// verdict of the rules in force, not of the URL: the URL waits until those rules expire and is
/// judged again by the rules read then (a robots.txt 5xx disallows everything only for the
/// moment). The URL's `disallowed` flag says what the last verdict was, for the reports.
/// Gives the parsed URL when it may.
async fn admit(ctx: &Context, site: &SiteState, row: &CheckRow) -> anyhow::Result<Option<Url>> {
    let now = ctx.clock.now_ms();
    if let Some(resumes_ms) = site.site.fetch_resumes_ms(ctx.clock.now()) {
        ctx.ledger.defer(now, row.id, resumes_ms);
        return Ok(None);
    }
    let url = match Url::parse(&row.url) {
        Ok(url) => url,
        Err(err) => {
            ctx.ledger.refuse(now, row.id);
            record_error(ctx, site, &row.url, format!("unparsable URL: {err}")).await?;
            return Ok(None);
        }
    };
    if row.kind == "page"
        && let Some(rule) = site.site.refused_by(&url)
    {
        // Found before the schedule's `include` / `exclude` said no: it stays known, with its
        // history, but is not fetched again while the schedule says so, and explain says why.
        ctx.ledger.refuse(now, row.id);
        ctx.store.set_unplanned(row.id).await?;
        let refused = vec![(row.url.clone(), RefusalReason::Filter, rule)];
        ctx.refuse(site, Some("check"), refused).await?;
        return Ok(None);
    }
    let origin = origin_of(&url);
    if not_now(ctx, row, &origin) {
        return Ok(None);
    }
    let (robots, until_ms) = robots_rules::rules_until(ctx, site, &origin).await;
    if let Some(interval) = ctx.robots.interval(&origin) {
        ctx.ledger
            .set_host_interval(row.host_id, crate::clock::duration_ms(interval));
    }
    // robots.txt not read because of a shutdown or a closed host says nothing about the URL.
    if not_now(ctx, row, &origin) {
        return Ok(None);
    }
    if let Some(rule) = robots.disallowed_by(url.as_str()) {
        debug!(url = %url, %rule, "disallowed by robots.txt: not fetched while these rules hold");
        ctx.ledger
            .defer(now, row.id, until_ms.max(now + MIN_ROBOTS_WAIT_MS));
        if row.disallowed == 0 {
            ctx.store.set_disallowed(row.id, true).await?;
            let rule = format!("{origin}/robots.txt: {rule}");
            let refused = vec![(row.url.clone(), RefusalReason::Robots, rule)];
            ctx.refuse(site, Some("check"), refused).await?;
        }
        return Ok(None);
    }
    if row.disallowed != 0 {
        ctx.store.set_disallowed(row.id, false).await?;
    }
    Ok(Some(url))
}

/// Whether a request to `origin` must wait: shutdown was asked (the URL goes back as it was),
/// another worker holds its host (the URL waits for the next lease round), or its host is
/// closed by back-off or Retry-After for longer than freshet waits (the URL and the host wait
/// until it opens, and the log says so). Hands the URL back when so.
fn not_now(ctx: &Context, row: &CheckRow, origin: &str) -> bool {
    let now = ctx.clock.now_ms();
    if ctx.is_stopping() {
        ctx.ledger.defer(now, row.id, now);
        return true;
    }
    if let Some(leasing) = &ctx.leasing
        && !leasing.held.holds(&crate::politeness::key_of(origin), now)
    {
        // Another worker holds the host now (its robots.txt is not this worker's to judge).
        ctx.ledger
            .defer(now, row.id, now + leasing.renew_every_ms());
        return true;
    }
    if let Some(until_ms) = ctx.pool.closed_beyond_patience(origin) {
        info!(
            url = %row.url,
            host = %crate::politeness::key_of(origin),
            until = %crate::clock::ms_to_rfc3339(until_ms),
            "host closed (back-off or Retry-After): skipped until it opens"
        );
        ctx.ledger.close_host(row.host_id, until_ms);
        ctx.ledger.defer(now, row.id, until_ms);
        return true;
    }
    false
}
