//! When discovery takes a URL for one of the site's sitemaps whatever its row says: a feed of a
//! site out of the schedules that this site names as a sitemap, and a page of the site (a
//! urlset listed it first, and it was not checked as a page yet) that a robots.txt or an index
//! names as a sitemap and that reads as one
//! ([`Store::declare_kinds`](crate::store::Store::declare_kinds), as a start does for what the
//! schedule names).

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
pub(super) fn names_as_seed(site: &SiteState, url: &Url) -> bool {
    (site.site.seeds.iter())
        .map(|seed| site.site.strip_params(seed))
        .any(|seed| seed.as_str() == url.as_str() && site.site.refused_by(&seed).is_none())
}

/// A page of the site read as a sitemap (a robots.txt or an index names it so): its row, and
/// what named it first.
pub(super) struct PageNamedASitemap {
    pub(super) url_id: i64,
    pub(super) discovered_from: Option<String>,
}

/// Makes `page` (read from `url`, named by `named_by`) the site's sitemap when it read as one
/// (`doc` is a urlset, an index or a feed, or text listing a URL): it was read by discovery
/// and checked as a page as well, for good. Its copy and plan are forgotten (`Store::declare_kinds`; the scheduler lets its page
/// go at its next turn), and it is named by what names it now: what named it first, a urlset
/// or a feed, made it a feed's redirect target at the next start, or handed it to another
/// worker from the wrong host. A page that does not read as a sitemap (a robots.txt line
/// naming an HTML page) stays a page.
pub(super) async fn make_a_sitemap(
    ctx: &Context,
    site: &SiteState,
    (url, named_by): (&Url, &str),
    page: PageNamedASitemap,
    doc: &sitemap::SitemapDoc,
) -> anyhow::Result<()> {
    if reads_as_a_sitemap(doc) {
        converted(ctx, site, (url, named_by), page).await?;
    }
    Ok(())
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

/// Makes `page` the site's sitemap, named by `named_by`; answers whether its row changed.
async fn converted(
    ctx: &Context,
    site: &SiteState,
    (url, named_by): (&Url, &str),
    page: PageNamedASitemap,
) -> anyhow::Result<bool> {
    if !declared_a_sitemap(ctx, site, url).await? {
        return Ok(false);
    }
    if let Some(was) = page.discovered_from.filter(|was| was != named_by) {
        ctx.store.renamed_by(page.url_id, &was, named_by).await?;
    }
    info!(url = %url, named_by, "a page named as a sitemap: read as one from now on, no longer checked as a page");
    Ok(true)
}

/// Reads a page of the site that was checked as a page before and that a robots.txt or an
/// index (`named_by`) names as a sitemap, to learn what it is without writing over the page's
/// row. Read whole (the copy's validators are a page's), its read is recorded only if it reads
/// as a sitemap: it becomes one (as [`make_a_sitemap`]) with this read as its first, due at
/// `sitemap_due_ms`, and its body and outcome are answered. Otherwise (an HTML page, a failed
/// read) its copy, plan and history stay the page's, judged by its own checks; the request is
/// charged to the site's budget like any read of discovery, and what it gave is a discovery
/// problem, at every pass that finds it so named. (Read at every such pass: what the page is
/// may change.)
pub(super) async fn probe_checked_page(
    ctx: &Context,
    site: &SiteState,
    (url, named_by): (&Url, &str),
    (row, cross): (&UrlRow, &[String]),
    sitemap_due_ms: i64,
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
    let sent = match request(
        ctx,
        site,
        &as_sitemap,
        url,
        Method::Get,
        Some(MAX_DOCUMENT_BYTES),
    )
    .await
    {
        Request::Sent(sent) => sent,
        Request::NotSent(..) => return Ok(None),
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
    let page = PageNamedASitemap {
        url_id: row.id,
        discovered_from: row.discovered_from.clone(),
    };
    if let Some(body) = body.filter(|_| reads_as_one)
        && converted(ctx, site, (url, named_by), page).await?
    {
        let read = (url, Method::Get);
        let recorded =
            record_sent(ctx, site, &as_sitemap, read, sent, Some(sitemap_due_ms)).await?;
        return Ok(Some((body, recorded.outcome)));
    }
    let why = match (&outcome.error, outcome.status) {
        (Some(error), _) => error.to_string(),
        (None, Some(status)) if !(200..300).contains(&status) => {
            format!("HTTP {status} from {}", outcome.final_url)
        }
        _ if reads_as_one => "another site's, or changed meanwhile".to_string(),
        _ => "it reads as none".to_string(),
    };
    let message = format!(
        "named as a sitemap by {named_by} but checked as a page before, and not read as a \
         sitemap: {why}; it stays a page, its copy and plan as they were"
    );
    let now = ctx.clock.now_ms();
    ctx.ledger.charge(site.id, now, sent.requests);
    super::save_budgets(ctx, now);
    record_problem(ctx, site, "sitemap", url.as_str(), message).await?;
    Ok(None)
}
