//! When discovery takes a URL for one of the site's sitemaps whatever its row says: a feed of a
//! site out of the schedules that this site names as a sitemap, and a page of the site (a
//! urlset listed it first) that a robots.txt or an index names as a sitemap and that reads as
//! one ([`Store::declare_kinds`](crate::store::Store::declare_kinds), as a start does for what
//! the schedule names). A page is read to learn what it is without writing over its row.

use std::collections::HashMap;

use tracing::info;
use url::Url;

use crate::discover::sitemap::{self, SitemapContext};
use crate::fetch::{FetchOutcome, Method};
use crate::store::kinds::Declared;
use crate::store::urls::{CheckRow, UrlRow};

use super::context::{Context, SiteState};
use super::discovery::{MAX_DOCUMENT_BYTES, record as record_problem};
use super::fetching::record_sent;
use super::request::{Request, request};

/// Declares `url` the site's sitemap, as a start does for one its schedule names
/// (`Store::declare_kinds`); answers whether its row changed (not when another site's, or
/// this site's sitemap already).
pub(super) async fn declared_a_sitemap(
    ctx: &Context,
    site: &SiteState,
    url: &Url,
) -> anyhow::Result<bool> {
    let declared = Declared {
        site_id: site.id,
        url: url.to_string(),
        kind: "sitemap",
        dropped: false,
    };
    let now = ctx.clock.now_ms();
    Ok(!ctx.store.declare_kinds(&[declared], now).await?.is_empty())
}

/// Whether the site's schedule names `url` among its seeds (as discovery stores them).
fn names_as_seed(site: &SiteState, url: &Url) -> bool {
    (site.site.seeds.iter())
        .map(|seed| site.site.strip_params(seed))
        .any(|seed| seed.as_str() == url.as_str() && site.site.refused_by(&seed).is_none())
}

/// Whether a document read as a sitemap is one: a urlset, an index or a feed, or text listing
/// a URL (any text lists none unless it is one a line).
fn reads_as_a_sitemap(doc: &sitemap::SitemapDoc) -> bool {
    match doc.kind {
        sitemap::SitemapKind::Unknown => false,
        sitemap::SitemapKind::Text => !doc.urls.is_empty(),
        _ => true,
    }
}

/// Reads a page's row (`row`, a page's) that a robots.txt or an index (`named_by`; or the
/// schedule, `schedule`) names as a sitemap, to learn what it is without writing over the page's row; answers the body and the
/// outcome of a read that made it the site's sitemap.
///
/// Read whole (the copy's validators are a page's), its read is recorded only if it reads as
/// a sitemap: the row becomes one, named by `named_by` (what named it first, a urlset or a
/// feed, made it a feed's redirect target at the next start, or handed it to another worker
/// from the wrong host), with this read as its first, due at `sitemap_due_ms`; the scheduler
/// lets its page go at once. Otherwise (an HTML page, a failed read) its copy, plan and
/// history stay the page's, judged by its own checks; the request is charged to the site's
/// budget like any read of discovery, what it gave is a discovery problem, and it is not read
/// so again before the site's next pass (the server's ttl for the page holds too). A seed
/// stays a page (the schedule says so) and another site's page is its site's: neither is
/// read. (Discovery's read was recorded as a check of the page at every pass: its copy and
/// plan written over the page's, helper-133.)
pub(super) async fn probe_page(
    ctx: &Context,
    site: &SiteState,
    (url, named_by): (&Url, &str),
    (row, cross): (&UrlRow, &[String]),
    sitemap_due_ms: i64,
) -> anyhow::Result<Option<(Vec<u8>, FetchOutcome)>> {
    let now = ctx.clock.now_ms();
    let namer = match named_by {
        "schedule" => "the schedule",
        robots_txt_or_index => robots_txt_or_index,
    };
    let not_read = if row.site_id != site.id {
        Some("a page of another site: not read as a sitemap for this one")
    } else if names_as_seed(site, url) {
        Some("the schedule names it a seed: checked as a page, not read as a sitemap")
    } else {
        None
    };
    if let Some(why) = not_read {
        let message = format!("named as a sitemap by {namer}, but {why}");
        record_problem(ctx, site, "sitemap", url.as_str(), message).await?;
        return Ok(None);
    }
    let probed_until = probed(site).get(&row.id).copied();
    let floor_until = (row.copy_ms.zip(row.min_interval_ms)).map(|(copy, floor)| copy + floor);
    if probed_until
        .max(floor_until)
        .is_some_and(|until| now < until)
    {
        return Ok(None);
    }
    // The row as the sitemap it would become: no copy (`Store::declare_kinds` forgets it).
    let as_sitemap = CheckRow {
        kind: "sitemap".into(),
        copy_ms: None,
        etag: None,
        last_modified: None,
        fingerprint: None,
        content_fingerprint: None,
        min_interval_ms: None,
        ..CheckRow::from(row)
    };
    let max_body = Some(MAX_DOCUMENT_BYTES);
    let sent = match request(ctx, site, &as_sitemap, url, Method::Get, max_body).await {
        Request::Sent(sent) => sent,
        Request::NotSent(..) => return Ok(None),
    };
    probed(site).insert(row.id, sitemap_due_ms);
    let outcome = &sent.outcome;
    let body = (outcome.body.as_ref())
        .filter(|_| {
            outcome.error.is_none() && outcome.status.is_some_and(|s| (200..300).contains(&s))
        })
        .map(|body| body.to_vec());
    let reads_as_one = body.as_ref().is_some_and(|body| {
        let mut context = SitemapContext::new(url.clone(), ctx.clock.now());
        context.cross_submitted_hosts = cross.to_vec();
        reads_as_a_sitemap(&sitemap::parse(&body[..], &context))
    });
    if let Some(body) = body.filter(|_| reads_as_one)
        && declared_a_sitemap(ctx, site, url).await?
    {
        if let Some(was) = (row.discovered_from.as_deref()).filter(|&was| was != named_by) {
            ctx.store.renamed_by(row.id, was, named_by).await?;
        }
        info!(url = %url, named_by, "a page named as a sitemap: read as one from now on, no longer checked as a page");
        if let Some(row) = ctx.store.url_row(url.as_str()).await? {
            ctx.rekey(&row);
        }
        let read = (url, Method::Get);
        let recorded = record_sent(ctx, site, &as_sitemap, read, sent, Some(sitemap_due_ms));
        return Ok(Some((body, recorded.await?.outcome)));
    }
    ctx.ledger.charge(site.id, now, sent.requests);
    super::save_budgets(ctx, now);
    let outcome = &sent.outcome;
    if let Some(target) = super::hand_over::target(outcome) {
        // Its holder checks the page; what the target is, is for a pass of that worker's.
        info!(url = %url, target = %target, "a page named as a sitemap redirects to a host another worker holds: not read as a sitemap here");
        return Ok(None);
    }
    let why = match (&outcome.error, outcome.status) {
        (Some(error), _) => format!("it could not be read: {error}"),
        (None, Some(status)) if !(200..300).contains(&status) => {
            format!(
                "it could not be read: HTTP {status} from {}",
                outcome.final_url
            )
        }
        _ if reads_as_one => "it is another site's now, or no longer a page".to_string(),
        _ => "it reads as none: it stays a page, its copy and plan as they were".to_string(),
    };
    let message = format!("named as a sitemap by {namer}, but {why}");
    record_problem(ctx, site, "sitemap", url.as_str(), message).await?;
    Ok(None)
}

/// The site's pages read as sitemaps that were none, and until when they are not read so again.
fn probed(site: &SiteState) -> std::sync::MutexGuard<'_, HashMap<i64, i64>> {
    site.probed_pages.lock().unwrap_or_else(|e| e.into_inner())
}
