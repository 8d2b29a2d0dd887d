//! What a discovery pass does differently when several workers share one PostgreSQL database:
//! it goes on from the sitemaps that walks on other workers stored for the hosts held here,
//! and reads the pages there that they named sitemaps ([`handed_sitemaps`]); at its end it
//! sets the due times of the sitemaps on the hosts it held all through
//! ([`sitemaps_due_here`]): the others are their holders' to read.

use std::collections::{BTreeSet, HashSet};

use url::Url;

use crate::discover::sitemap;
use crate::politeness::{HeldSnapshot, key_of, origin_of};

use super::context::{Context, SiteState};
use super::discovery_due::{below_taken_out, heads_taken_out, namers};
use super::sitemap_kinds::done_with_naming;

/// A sitemap (or a page named one) that a walk on another worker reached, for a pass here to
/// go on from.
pub(super) struct Handed {
    pub url: Url,
    /// The host whose robots.txt named it, if one did (it speaks for that host).
    pub vouching: Option<String>,
    /// Its depth below the root it came from.
    pub depth: usize,
    /// For a page that an index or a robots.txt there named a sitemap: what named it (the
    /// page is read to learn what it is, [`super::sitemap_kinds::probe_page`]).
    pub page_named_by: Option<String>,
}

/// The site's stored sitemaps on hosts held here that this pass did not reach, named by a
/// sitemap, a robots.txt or a redirect on a host held elsewhere; with the host whose robots.txt
/// named it, if one did, and its depth below the root it came from
/// ([`sitemap::depth_by_naming`]; none deeper than the walks go, none whose naming loops, none
/// below a sitemap the schedule took out, [`below_taken_out`]: no walk reaches it any more).
/// Then the site's pages on hosts held here that such a walk met named as sitemaps
/// (`Store::name_page_a_sitemap`: a page's row keeps what listed it first); a naming of a row
/// no longer a page, or by a namer no walk goes below, is forgotten, and so is one of a page
/// this pass met and read already ([`done_with_naming`]).
pub(super) async fn handed_sitemaps(
    ctx: &Context,
    site: &SiteState,
    (reached, pass_started_ms): (&BTreeSet<String>, i64),
) -> anyhow::Result<Vec<Handed>> {
    let on_a_host_here = |url: &str| {
        Url::parse(url)
            .ok()
            .filter(|u| !ctx.held_elsewhere(&origin_of(u)))
    };
    let named_elsewhere =
        |from: &str| Url::parse(from).is_ok_and(|u| ctx.held_elsewhere(&origin_of(&u)));
    let stored = ctx.store.sitemaps_of_site(site.id).await?;
    let named_by = namers(site, &stored);
    let sitemaps = stored
        .iter()
        .filter(|row| !reached.contains(&row.url))
        .filter(|row| row.discovered_from.as_deref().is_some_and(named_elsewhere))
        .filter_map(|row| {
            let vouching = row.discovered_from.as_deref().and_then(robots_host);
            let (depth, root) = sitemap::depth_by_naming(&row.url, &named_by)
                .filter(|&(depth, _)| depth <= sitemap::MAX_DEPTH)?;
            if heads_taken_out(site, root, &named_by) {
                // (The redirect target of a feed taken out among them: it was read as a
                // sitemap at every pass.)
                return None;
            }
            Some(Handed {
                url: on_a_host_here(&row.url)?,
                vouching,
                depth,
                page_named_by: None,
            })
        });
    let mut handed: Vec<Handed> = sitemaps.collect();
    for page in ctx.store.pages_named_sitemaps(site.id).await? {
        let Some(url) = on_a_host_here(&page.url) else {
            continue; // its holder's
        };
        if reached.contains(&page.url) {
            // Met by a walk of this pass, read for what it is if it was to be.
            done_with_naming(ctx, site, &url, pass_started_ms).await?;
            continue;
        }
        // Below its namer, a stored sitemap (not below one the schedule took out), or a root
        // if a robots.txt named it.
        let depth = match named_by.contains_key(&page.named_by) {
            true => sitemap::depth_by_naming(&page.named_by, &named_by)
                .filter(|&(_, root)| !heads_taken_out(site, root, &named_by))
                .map(|(depth, _)| depth + 1),
            false => robots_host(&page.named_by).map(|_| 0),
        };
        match depth.filter(|&depth| depth <= sitemap::MAX_DEPTH) {
            Some(depth) if page.kind == "page" => handed.push(Handed {
                url,
                vouching: robots_host(&page.named_by),
                depth,
                page_named_by: Some(page.named_by),
            }),
            // No page now, or named where no walk goes: nothing to read.
            _ => ctx.store.unname_page(page.url_id).await?,
        }
    }
    Ok(handed)
}

/// The host of `from` when it is a robots.txt (whose `Sitemap:` lines speak for its host).
fn robots_host(from: &str) -> Option<String> {
    Some(from)
        .filter(|from| from.ends_with("/robots.txt"))
        .and_then(|from| Url::parse(from).ok())
        .and_then(|from| from.host_str().map(str::to_string))
}

/// The sitemaps of the site whose due time a pass that began with the hosts `held_at_start`
/// sets at its end: those it read (`walked`) and, when it ran whole, every one on a host held
/// here all through it, as one worker sets every sitemap of the site. Without the latter, a
/// sitemap no walk reaches any more (below a root the schedule took out, the redirect target of
/// a feed taken out) stayed due for good, and every start or host gained ran a pass for it.
/// Only the walked ones when a host of the site (one of its origins, or of its stored sitemaps
/// or what named them) was gained during the pass: a sitemap on a host held all through that
/// only a sitemap or a robots.txt there names was passed by, and is for the pass the gain
/// calls to read and set.
pub(super) async fn sitemaps_due_here(
    ctx: &Context,
    site: &SiteState,
    walked: &[String],
    held_at_start: Option<&HeldSnapshot>,
) -> anyhow::Result<Vec<String>> {
    let mut due: BTreeSet<String> = walked.iter().cloned().collect();
    let (Some(leasing), Some(held_at_start)) = (&ctx.leasing, held_at_start) else {
        return Ok(due.into_iter().collect());
    };
    if ctx.is_stopping() {
        return Ok(due.into_iter().collect()); // cut short: not every walk went on
    }
    let held = leasing.held.held_since(held_at_start, ctx.clock.now_ms());
    let key_of_url = |url: &str| Url::parse(url).ok().map(|u| key_of(&origin_of(&u)));
    let stored = ctx.store.sitemaps_of_site(site.id).await?;
    // (What named a sitemap first may be another site's: an index on a host they share.)
    let namers = stored
        .iter()
        .filter_map(|row| row.discovered_from.as_deref());
    let site_hosts: HashSet<String> = (site.site.origins().iter())
        .map(|origin| key_of(origin))
        .chain(stored.iter().filter_map(|row| key_of_url(&row.url)))
        .chain(namers.filter_map(key_of_url))
        .collect();
    if held.began.iter().any(|key| site_hosts.contains(key)) {
        return Ok(due.into_iter().collect());
    }
    let on_a_host_held_through =
        |url: &str| key_of_url(url).is_some_and(|key| held.all_through.contains(&key));
    due.extend(
        stored
            .into_iter()
            .filter(|row| on_a_host_held_through(&row.url))
            .map(|row| row.url),
    );
    Ok(due.into_iter().collect())
}

/// The site's stored sitemaps known only below one the schedule took out, as a pass begins
/// ([`below_taken_out`]); none with one worker, whose walks hand nothing over.
pub(super) async fn taken_out_sitemaps(
    ctx: &Context,
    site: &SiteState,
) -> anyhow::Result<HashSet<String>> {
    if ctx.leasing.is_none() {
        return Ok(HashSet::new());
    }
    let stored = ctx.store.sitemaps_of_site(site.id).await?;
    let named_by = namers(site, &stored);
    Ok(stored
        .into_iter()
        .map(|row| row.url)
        .filter(|url| below_taken_out(site, url, &named_by))
        .collect())
}
