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

use super::context::{Context, Probed, SiteState};
use super::fetching::{record_error_in, record_sent};
use super::request::{MAX_DOCUMENT_BYTES, Request, request};

/// Declares `url` the site's sitemap, as a start does for one its schedule names
/// (`Store::declare_kinds`), and hands its row to the scheduler under its new key (a page's
/// key let go, and the dedup engine told it is no page: [`super::kinds::took_its_kind`]).
/// Answers its row as it is now when the row changed (`None`: another site's, or this site's
/// sitemap already).
pub(super) async fn declared_a_sitemap(
    ctx: &Context,
    site: &SiteState,
    url: &Url,
) -> anyhow::Result<Option<UrlRow>> {
    let declared = Declared {
        site_id: site.id,
        url: url.to_string(),
        kind: "sitemap",
        dropped: false,
    };
    let now = ctx.clock.now_ms();
    if ctx.store.declare_kinds(&[declared], now).await?.is_empty() {
        return Ok(None);
    }
    let row = ctx.store.url_row(url.as_str()).await?;
    if let Some(row) = &row {
        super::kinds::took_its_kind(ctx, row).await;
    }
    Ok(row)
}

/// After a pass went on from a page a walk on another worker named as a sitemap
/// ([`super::shared_discovery::Handed`]): the naming is forgotten once the page was read for
/// it in this pass (a sitemap now, or a page that stays one, or one not read for what it is: a
/// seed, another site's), or its row is no page any more. A page not read yet (its max-age
/// holds, a read that failed, a pass cut short) keeps it for the next pass.
pub(super) async fn done_with_naming(
    ctx: &Context,
    site: &SiteState,
    url: &Url,
    pass_started_ms: i64,
) -> anyhow::Result<()> {
    let Some(row) = ctx.store.url_row(url.as_str()).await? else {
        return Ok(());
    };
    let read_in_this_pass = (probed(site).get(&row.id))
        .is_some_and(|p| p.pass_started_ms == pass_started_ms && p.until_ms != 0);
    if row.kind != "page" || read_in_this_pass {
        ctx.store.unname_page(row.id).await?;
    }
    Ok(())
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

/// Reads a page's row (`row`) that a robots.txt or an index (`named_by`) names as a sitemap,
/// to learn what it is without writing over the page's row; answers the body and the outcome
/// of a read that made it the site's sitemap. `pass`: when the discovery pass started, and when
/// the site's next one is due.
///
/// Read whole (the copy's validators are a page's), its read is recorded only if it reads as
/// a sitemap: the row becomes one, named by `named_by` (what named it first, a urlset or a
/// feed, made it a feed's redirect target at the next start, or handed it to another worker
/// from the wrong host), with this read as its first, due at the site's next pass; the
/// scheduler lets its page go at once. Otherwise (an HTML page, a failed read) its copy, plan
/// and history stay the page's, judged by its own checks; the request is charged to the site's
/// budget like any read of discovery and what it gave is a discovery problem. Read so once a
/// pass however many name it, and an HTML page not again before the site's next pass is due
/// (nor while the server's max-age for the page holds). The URL's lock is held from the
/// request to the last write: no check of the page comes between (`checks::check`).
///
/// Not read: a seed, which stays a page (the schedule says so); another site's page, its
/// site's; and a page the schedule named as a sitemap (`named_by` `None`) that is none of its
/// own ([`schedule_sitemap`]): a start on a newer schedule made it a page, or another worker's
/// walk stored it for this one and it changed since. A problem says so, until the site's next
/// `rediscover` time. (Discovery's read was recorded as a check of the page at every pass: its
/// copy and plan written over the page's, helper-133.)
pub(super) async fn probe_page(
    ctx: &Context,
    site: &SiteState,
    (url, named_by): (&Url, Option<&str>),
    (row, cross): (&UrlRow, &[String]),
    (pass_started_ms, sitemap_due_ms): (i64, i64),
) -> anyhow::Result<Option<(Vec<u8>, FetchOutcome)>> {
    let now = ctx.clock.now_ms();
    let probed_before = probed(site).get(&row.id).copied();
    if probed_before.is_some_and(|p| p.pass_started_ms == pass_started_ms || now < p.until_ms) {
        return Ok(None);
    }
    let mut probe = Probed {
        pass_started_ms,
        until_ms: sitemap_due_ms,
    };
    let not_read = match named_by {
        _ if row.site_id != site.id => {
            Some("it is a page of another site, not read as a sitemap for this one")
        }
        None => Some(
            "its row is a page (made one by a start on a newer schedule, or since another \
             worker's walk stored it): not read as a sitemap",
        ),
        Some(_) if names_as_seed(site, url) => {
            Some("the schedule names it a seed: checked as a page, not read as a sitemap")
        }
        Some(_) => None,
    };
    if let Some(why) = not_read {
        probed(site).insert(row.id, probe);
        let namer = named_by.unwrap_or("the schedule");
        let message = format!("named as a sitemap by {namer}, but {why}");
        record_problem(ctx, site, url, message).await?;
        return Ok(None);
    }
    let named_by = named_by.unwrap_or_default();
    let floor_until = (row.copy_ms.zip(row.min_interval_ms)).map(|(copy, floor)| copy + floor);
    if floor_until.is_some_and(|until| now < until) {
        return Ok(None);
    }
    let lock = ctx.url_locks.get(row.id);
    let guard = lock.lock().await;
    // (Read again under the lock: a check that ended meanwhile wrote it.)
    let read = match ctx.store.url_row(url.as_str()).await {
        Ok(Some(row)) if row.kind == "page" => {
            let probe = (&mut probe, sitemap_due_ms);
            read_page(ctx, site, (url, named_by), (&row, cross), probe).await
        }
        Ok(_) => Ok(None),
        Err(err) => Err(err.into()),
    };
    drop(guard);
    ctx.url_locks.release(row.id, lock);
    if read.is_err() {
        probe.until_ms = 0;
    }
    probed(site).insert(row.id, probe);
    read
}

/// A page's row (`row`) of the site that its schedule names as a sitemap, stored since this
/// worker started (as a page first: a page's link to it, say, before the pass stored the
/// schedule's sitemaps), is declared the sitemap it is, as a start does for what its schedule
/// names; the scheduler lets its page go at once. Answers its row as it is now, or `None`.
pub(super) async fn schedule_sitemap(
    ctx: &Context,
    site: &SiteState,
    url: &Url,
    row: &UrlRow,
) -> anyhow::Result<Option<UrlRow>> {
    // (Stored since this worker's start: a row its start saw as a page is one because a
    // start on a newer schedule made it one, a seed, and stays one.)
    if row.kind != "page"
        || row.site_id != site.id
        || row.discovered_ms < ctx.started_ms
        || !site.site.sitemaps.contains(url)
    {
        return Ok(None);
    }
    // (Under the URL's lock: a check of the page in flight files it with the dedup engine
    // before the declaration, which has the engine forget it, or sees a sitemap's row.)
    let lock = ctx.url_locks.get(row.id);
    let guard = lock.lock().await;
    let declared = declared_a_sitemap(ctx, site, url).await;
    drop(guard);
    ctx.url_locks.release(row.id, lock);
    let declared = declared?;
    if declared.is_some() {
        info!(url = %url, "a page the schedule names as a sitemap: read as one from now on");
    }
    Ok(declared)
}

/// [`probe_page`]'s read, under the URL's lock: `probe.until_ms` is left as it is for an
/// answer that says what the page is, and set to 0 for a failed read (the next pass reads it).
async fn read_page(
    ctx: &Context,
    site: &SiteState,
    (url, named_by): (&Url, &str),
    (row, cross): (&UrlRow, &[String]),
    (probe, sitemap_due_ms): (&mut Probed, i64),
) -> anyhow::Result<Option<(Vec<u8>, FetchOutcome)>> {
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
        Request::NotSent(..) => {
            probe.until_ms = 0;
            return Ok(None);
        }
    };
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
        && declared_a_sitemap(ctx, site, url).await?.is_some()
    {
        // (Declared the schedule's, `Store::declare_kinds`: what names it now.)
        ctx.store.renamed_by(row.id, "schedule", named_by).await?;
        info!(url = %url, named_by, "a page named as a sitemap: read as one from now on, no longer checked as a page");
        let read = (url, Method::Get);
        let recorded = record_sent(ctx, site, &as_sitemap, read, sent, Some(sitemap_due_ms));
        return Ok(Some((body, recorded.await?.outcome)));
    }
    let now = ctx.clock.now_ms();
    ctx.ledger.charge(site.id, now, sent.requests);
    super::save_budgets(ctx, now);
    let outcome = &sent.outcome;
    if let Some(target) = super::hand_over::target(outcome) {
        // Its holder checks the page; what the target is, is for a pass of that worker's.
        info!(url = %url, target = %target, "a page named as a sitemap redirects to a host another worker holds: not read as a sitemap here");
        return Ok(None);
    }
    let failed = match (&outcome.error, outcome.status) {
        (Some(error), _) => Some(error.to_string()),
        (None, Some(status)) if !(200..300).contains(&status) => {
            Some(format!("HTTP {status} from {}", outcome.final_url))
        }
        _ => None,
    };
    if failed.is_some() {
        probe.until_ms = 0;
    }
    let why = match failed {
        Some(failed) => format!("it could not be read ({failed}): it stays a page for now"),
        _ if reads_as_one => "it is another site's now, or no longer a page".to_string(),
        _ => "it reads as none: it stays a page, its copy and plan as they were".to_string(),
    };
    let message = format!("named as a sitemap by {named_by}, but {why}");
    record_problem(ctx, site, url, message).await?;
    Ok(None)
}

/// The site's pages read as sitemaps ([`Probed`]).
fn probed(site: &SiteState) -> std::sync::MutexGuard<'_, HashMap<i64, Probed>> {
    site.probed_pages.lock().unwrap_or_else(|e| e.into_inner())
}

/// Records a discovery problem with `url` and counts it.
async fn record_problem(
    ctx: &Context,
    site: &SiteState,
    url: &Url,
    message: String,
) -> anyhow::Result<()> {
    tracing::warn!(site = %site.site.name, url = %url, %message, "discovery problem");
    record_error_in(ctx, "sitemap", site, url.as_str(), message).await
}
