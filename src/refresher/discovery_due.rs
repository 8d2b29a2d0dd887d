//! When a site's discovery is due: at its `rediscover` times after the last pass, at once when it
//! was never discovered (or, with several workers, when a sitemap on a host held here was never
//! read or is due), and how long an unfinished pass may still be joined.

use std::collections::HashMap;

use url::Url;

use crate::discover::sitemap;
use crate::politeness::origin_of;
use crate::store::discovered::StoredSitemap;

use super::context::{Context, SiteState};

/// When a site is next due for discovery: the first `rediscover` time after `at_ms` (the last
/// discovery, or later when the scheduler finds sitemap reads not worth their requests sooner:
/// [`crate::scheduler::Scheduler::sitemap_reads_per_day`]).
pub(super) fn next_discovery(site: &SiteState, at_ms: i64) -> i64 {
    site.site
        .next_rediscover(crate::clock::ms_to_datetime(at_ms))
        .map_or(i64::MAX, |t| t.timestamp_millis())
}

/// How long after its start an unfinished discovery pass may still be joined: one `rediscover`
/// period of the site (the gap between its next two times), at most a day. A pass older than
/// that belongs to a discovery the schedule has moved past; joining it would make the new
/// pages due hours before every refresh that came due since.
pub(super) fn pass_joinable_ms(site: &SiteState, now_ms: i64) -> i64 {
    const DAY_MS: i64 = crate::clock::MS_PER_DAY as i64;
    let next = next_discovery(site, now_ms);
    let after = next_discovery(site, next);
    if next == i64::MAX || after == i64::MAX {
        return DAY_MS;
    }
    (after - next).clamp(1, DAY_MS)
}

/// When a site is first due in this run: now if it was never discovered, its schedule names
/// a source the store has never seen (a sitemap, feed or seed added since the last run), or a
/// sitemap of its schedule is due (a row this start made a sitemap, `Store::declare_kinds`),
/// else at the first `rediscover` time after its last discovery.
pub async fn first_discovery_due(ctx: &Context, site: &SiteState, now: i64) -> anyhow::Result<i64> {
    let rows = ctx.store.sitemaps_of_site(site.id).await?;
    first_discovery_due_of(ctx, site, &rows, now).await
}

/// [`first_discovery_due`], the site's stored sitemaps read (`rows`).
async fn first_discovery_due_of(
    ctx: &Context,
    site: &SiteState,
    rows: &[StoredSitemap],
    now: i64,
) -> anyhow::Result<i64> {
    let Some(last) = ctx.store.site_discovered_ms(site.id).await? else {
        return Ok(now);
    };
    if names_unseen_source(ctx, site).await? || a_root_is_due(site, rows, now) {
        return Ok(now);
    }
    let next = site
        .site
        .next_rediscover(crate::clock::ms_to_datetime(last))
        .map_or(now, |t| t.timestamp_millis());
    Ok(next)
}

/// Whether the site's schedule names a sitemap, feed or seed that is neither stored nor refused
/// (by `exclude`, `include` or robots.txt): one added to the schedule file since the last pass,
/// which would otherwise wait for the next `rediscover` time, a day with the default; or one
/// stored under a site no longer in the schedules (a rename, or a rename undone). Once a pass
/// has stored it, or filed its refusal, it is seen, so a restart does not read the site's
/// sitemaps again.
async fn names_unseen_source(ctx: &Context, site: &SiteState) -> anyhow::Result<bool> {
    let documents = site.site.sitemaps.iter().chain(&site.site.feeds).cloned();
    // A seed is stored as discovery stores it: without `drop_params`, unless a filter refuses it.
    let seeds = (site.site.seeds.iter())
        .map(|seed| site.site.strip_params(seed))
        .filter(|seed| site.site.refused_by(seed).is_none());
    let sources: Vec<String> = documents.chain(seeds).map(String::from).collect();
    let names: Vec<&str> = sources.iter().map(String::as_str).collect();
    let seen = ctx.store.sources_seen(&names).await?;
    Ok(names.iter().any(|url| {
        let seen = seen.get(*url).copied().unwrap_or_default();
        match seen.stored_in {
            // Another name's, out of the schedules: this site takes it over now (a rename, or
            // one undone), not at its next `rediscover` time; unless it refuses it (a
            // robots.txt rule), which no pass would change.
            Some(stored) if stored.site_id != site.id => stored.site_unscheduled && !seen.refused,
            Some(_) => false,
            None => !seen.refused,
        }
    }))
}

/// Whether a sitemap the site's schedule names is due by `now`. A pass sets every sitemap of
/// the site due at the next discovery; a row stored as a page or a feed that this start made a
/// sitemap is due now, and was otherwise read only at the next `rediscover` time, as a source
/// already seen.
fn a_root_is_due(site: &SiteState, rows: &[StoredSitemap], now: i64) -> bool {
    rows.iter()
        .any(|row| row.next_due_ms.is_some_and(|due| due <= now) && is_root(site, &row.url))
}

/// Whether the site's schedule names `url` among its `sitemaps`.
fn is_root(site: &SiteState, url: &str) -> bool {
    site.site.sitemaps.iter().any(|root| root.as_str() == url)
}

/// Whether a stored sitemap (`url`, named by `discovered_from`) is one the schedule named and
/// names no more, a feed taken out of its `feeds` among them. (A robots.txt line's root is
/// stored with the robots.txt's URL.)
fn taken_out(site: &SiteState, url: &str, discovered_from: Option<&str>) -> bool {
    crate::store::kinds::named_by_schedule(discovered_from) && !is_root(site, url)
}

/// What names each of the site's stored sitemaps (`rows`), by URL: the schedule for those it
/// names (a row keeps what named it first: a child the schedule named after its index was
/// taken out is a root, and its own sitemaps hang from it), else what first named it.
pub(super) fn namers(site: &SiteState, rows: &[StoredSitemap]) -> HashMap<String, String> {
    rows.iter()
        .filter_map(|row| {
            let from = match is_root(site, &row.url) {
                true => "schedule".to_string(),
                false => row.discovered_from.clone()?,
            };
            Some((row.url.clone(), from))
        })
        .collect()
}

/// Whether a stored sitemap is known only below one the schedule took out (itself among
/// them): the chain of what first named each ([`namers`], [`sitemap::depth_by_naming`]) tops
/// out at one. No walk from the schedule reaches it, unless a live sitemap or robots.txt
/// names it too, and then it is named anew when a walk meets it.
pub(super) fn below_taken_out(
    site: &SiteState,
    url: &str,
    named_by: &HashMap<String, String>,
) -> bool {
    sitemap::depth_by_naming(url, named_by)
        .is_some_and(|(_, root)| heads_taken_out(site, root, named_by))
}

/// Whether `root`, the top of a chain of namers ([`sitemap::depth_by_naming`]), is a sitemap
/// the schedule took out.
pub(super) fn heads_taken_out(
    site: &SiteState,
    root: &str,
    named_by: &HashMap<String, String>,
) -> bool {
    taken_out(site, root, named_by.get(root).map(String::as_str))
}

/// With several workers, when a site is first due on this one: as with one worker, or now if a
/// sitemap on a host it holds was never read or is due (another worker's discovery may have
/// read the rest: the site's last discovery time is every worker's).
pub async fn first_discovery_due_here(
    ctx: &Context,
    site: &SiteState,
    now: i64,
) -> anyhow::Result<i64> {
    let rows = ctx.store.sitemaps_of_site(site.id).await?;
    let shared = first_discovery_due_of(ctx, site, &rows, now).await?;
    if shared <= now {
        return Ok(now);
    }
    let read: HashMap<&str, Option<i64>> = rows
        .iter()
        .filter(|row| row.last_checked_ms.is_some())
        .map(|row| (row.url.as_str(), row.next_due_ms))
        .collect();
    let here = |url: &str| Url::parse(url).is_ok_and(|u| !ctx.held_elsewhere(&origin_of(&u)));
    let unread_root = site
        .site
        .sitemaps
        .iter()
        .any(|root| here(root.as_str()) && !read.contains_key(root.as_str()));
    // (Not one below a sitemap the schedule took out: no walk reaches it, never read or not,
    // and a pass sets its due time only if it held its host all through,
    // `shared_discovery::sitemaps_due_here`.)
    let named_by = namers(site, &rows);
    let dropped = |row: &StoredSitemap| below_taken_out(site, &row.url, &named_by);
    let due_row = rows.iter().any(|row| {
        here(&row.url)
            && !dropped(row)
            && (row.last_checked_ms.is_none() || row.next_due_ms.is_none_or(|due| due <= now))
    });
    Ok(if unread_root || due_row { now } else { shared })
}
