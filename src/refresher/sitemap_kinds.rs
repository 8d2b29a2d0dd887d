//! When discovery takes a URL for one of the site's sitemaps whatever its row says: a feed of a
//! site out of the schedules that this site names as a sitemap, and a page of the site (a
//! urlset listed it first, and it was not checked as a page yet) that a robots.txt or an index
//! names as a sitemap and that reads as one
//! ([`Store::declare_kinds`](crate::store::Store::declare_kinds), as a start does for what the
//! schedule names).

use tracing::info;
use url::Url;

use crate::discover::sitemap;
use crate::store::kinds::Declared;

use super::context::{Context, SiteState};

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
    let reads_as_one = match doc.kind {
        sitemap::SitemapKind::Unknown => false,
        // (Any text lists no URL unless it is one a line.)
        sitemap::SitemapKind::Text => !doc.urls.is_empty(),
        _ => true,
    };
    if !reads_as_one {
        return Ok(());
    }
    if declared_a_sitemap(ctx, site, url).await? {
        if let Some(was) = page.discovered_from.filter(|was| was != named_by) {
            ctx.store.renamed_by(page.url_id, &was, named_by).await?;
        }
        info!(url = %url, named_by, "a page named as a sitemap: read as one from now on, no longer checked as a page");
    }
    Ok(())
}
