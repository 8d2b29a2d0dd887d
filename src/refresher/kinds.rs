//! What a start declares of the kinds of the stored URLs, before the scheduler is filled from
//! them ([`crate::store::Store::declare_kinds`]): each site's `feeds` are feeds, its `sitemaps`
//! (not also feeds) sitemaps; a stored feed the schedule no longer names (nor leads to, as the
//! target of one's redirect) is a sitemap's row only a walk reads, which another site that
//! names it may take; and such a row, or a sitemap the schedule no longer names, is a page
//! once the schedule names it a seed.

use std::collections::HashMap;

use tracing::info;

use crate::store::Store;
use crate::store::kinds::{Declared, StoredDocument};
use crate::store::urls::UrlRow;

use super::context::{Context, SiteState};

/// A site's URLs as its schedule names them, as stored (seeds without `drop_params`, and none
/// the site's filters refuse: discovery does not store those).
pub struct Named {
    pub site_id: i64,
    pub feeds: Vec<String>,
    pub sitemaps: Vec<String>,
    pub seeds: Vec<String>,
}

impl Named {
    pub fn of(site: &SiteState) -> Self {
        let strings = |urls: &[url::Url]| urls.iter().map(|u| u.to_string()).collect();
        Named {
            site_id: site.id,
            feeds: strings(&site.site.feeds),
            sitemaps: strings(&site.site.sitemaps),
            seeds: (site.site.seeds.iter())
                .map(|seed| site.site.strip_params(seed))
                .filter(|seed| site.site.refused_by(seed).is_none())
                .map(|seed| seed.to_string())
                .collect(),
        }
    }
}

/// The declarations of one site, given its stored feeds and sitemaps (`own`).
///
/// A stored document is still one of the site's feeds while a chain of redirects leads to it
/// from one of its `feeds` (with several workers, the target of a feed's redirect to a host
/// held elsewhere is handed over as a feed, discovered from the feed): such a target taken out
/// with its feed is a feed again when the feed is named again (`hand_over` adds no URL known).
/// A feed or sitemap the schedule named (discovered from `schedule`) and names no more is
/// declared a sitemap taken out (`dropped`): nothing changes unless another site names it,
/// which takes it; or a page, when the schedule now names it a seed.
pub fn declarations(named: &Named, own: &[&StoredDocument]) -> Vec<Declared> {
    let mut kept: Vec<&str> = named.feeds.iter().map(String::as_str).collect();
    // (Not through a URL the schedule names otherwise: a sitemap an index that is a feed now
    // listed, say.)
    let named_otherwise = |url: &String| named.sitemaps.contains(url) || named.seeds.contains(url);
    loop {
        let led_to: Vec<&str> = (own.iter())
            .filter(|s| !kept.contains(&s.url.as_str()) && !named_otherwise(&s.url))
            .filter(|s| (s.discovered_from.as_deref()).is_some_and(|from| kept.contains(&from)))
            .map(|s| s.url.as_str())
            .collect();
        if led_to.is_empty() {
            break;
        }
        kept.extend(led_to);
    }
    let declare = |url: &str, kind, dropped| Declared {
        site_id: named.site_id,
        url: url.to_string(),
        kind,
        dropped,
    };
    let is_named = |url: &String| named.feeds.contains(url) || named.sitemaps.contains(url);
    let feeds = (kept.iter()).map(|url| declare(url, "feed", false));
    let sitemaps = (named.sitemaps.iter())
        .filter(|url| !kept.contains(&url.as_str()))
        .map(|url| declare(url, "sitemap", false));
    let taken_out = (own.iter())
        .filter(|s| !kept.contains(&s.url.as_str()) && !is_named(&s.url))
        // (And one a robots.txt or an index named a sitemap, that the schedule names a seed:
        // the schedule says it is a page.)
        .filter(|s| {
            s.kind == "feed"
                || crate::store::kinds::named_by_schedule(s.discovered_from.as_deref())
                || named.seeds.contains(&s.url)
        })
        .map(|s| match named.seeds.contains(&s.url) {
            true => declare(&s.url, "page", false),
            false => declare(&s.url, "sitemap", true),
        });
    feeds.chain(sitemaps).chain(taken_out).collect()
}

/// The URL of `row`, handed out here under a key of another kind or site, or made another
/// kind here, is the row's from now on: the scheduler keys it as its row says
/// ([`Context::rekey`]) and the dedup engine forgets it unless it is a page still. Answers
/// whether it is checked here from now on.
pub async fn took_its_kind(ctx: &Context, row: &UrlRow) -> bool {
    let checked_here = ctx.rekey(row);
    if row.kind != "page" {
        super::dedup_hook::forget(ctx, std::slice::from_ref(&row.url)).await;
    }
    checked_here
}

/// Declares the kinds of every loaded site's URLs (one read of the stored feeds and sitemaps,
/// one write if anything changes) and logs what changed. Answers the URLs that are not pages
/// now (made sitemaps or feeds here, or stored so before), which the dedup engine forgets: a
/// forgetting that a kill or a failed save lost, or a database from before the engine forgot,
/// is made good at the next start.
pub async fn declare(
    store: &Store,
    sites: &[SiteState],
    now_ms: i64,
) -> anyhow::Result<Vec<String>> {
    let stored = store.stored_documents().await?;
    let mut by_site: HashMap<i64, Vec<&StoredDocument>> = HashMap::new();
    for document in &stored {
        by_site.entry(document.site_id).or_default().push(document);
    }
    let declared: Vec<Declared> = (sites.iter())
        .flat_map(|site| {
            let own = by_site.get(&site.id).map_or(&[][..], Vec::as_slice);
            declarations(&Named::of(site), own)
        })
        .collect();
    let made_pages: std::collections::HashSet<&str> = (declared.iter())
        .filter(|d| d.kind == "page")
        .map(|d| d.url.as_str())
        .collect();
    let mut no_longer_pages: Vec<String> = (stored.iter())
        .filter(|document| !made_pages.contains(&document.url.as_str()))
        .map(|document| document.url.clone())
        .collect();
    for change in store.declare_kinds(&declared, now_ms).await? {
        let (url, was, kind) = (&change.url, &change.was, change.kind);
        let site =
            (sites.iter().find(|s| s.id == change.site_id)).map_or("", |s| s.site.name.as_str());
        info!(%url, was, kind, site, "stored as another kind or site than the schedules name it with: read as they say from now on");
        if was == "page" && kind != "page" {
            no_longer_pages.push(change.url);
        }
    }
    Ok(no_longer_pages)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(url: &str, kind: &str, from: &str) -> StoredDocument {
        StoredDocument {
            site_id: 1,
            url: url.into(),
            kind: kind.into(),
            discovered_from: Some(from.into()),
        }
    }

    fn said(declared: &[Declared]) -> Vec<(&str, &str, bool)> {
        (declared.iter())
            .map(|d| (d.url.as_str(), d.kind, d.dropped))
            .collect()
    }

    #[test]
    fn a_feed_taken_out_is_dropped_unless_a_redirect_from_a_named_feed_leads_to_it() {
        let named = Named {
            site_id: 1,
            feeds: vec!["f".into(), "back".into()],
            sitemaps: vec!["s".into(), "f".into()],
            seeds: vec!["seed".into(), "seed2".into(), "seed3".into()],
        };
        let stored = [
            stored("f", "feed", "schedule"),
            stored("f2", "feed", "f"), // f's redirect target, handed over
            stored("f3", "sitemap", "f2"), // and f2's, taken out with it before
            stored("old", "feed", "schedule"),
            stored("old2", "feed", "old"), // old's redirect target
            stored("back", "sitemap", "schedule"), // taken out before, named again
            stored("seed", "sitemap", "schedule"), // taken out before, a seed now
            stored("seed2", "feed", "schedule"), // moved to the seeds now
            stored("gone", "sitemap", "schedule"), // a root taken out
            stored("child", "sitemap", "index"), // an index's, named by no schedule
            stored("robots", "sitemap", "http://a/robots.txt"),
            stored("s", "sitemap", "f"), // named a sitemap: not one of f's redirects
            stored("seed3", "sitemap", "http://a/robots.txt"), // a seed robots.txt named so
            stored("was_seed", "sitemap", "seed"), // a seed, then a root, now taken out
        ];
        let own: Vec<&StoredDocument> = stored.iter().collect();
        let declared = declarations(&named, &own);
        let expected = [
            ("f", "feed", false),
            ("back", "feed", false),
            ("f2", "feed", false),
            ("f3", "feed", false),
            ("s", "sitemap", false),
            ("old", "sitemap", true),
            ("old2", "sitemap", true),
            ("seed", "page", false),
            ("seed2", "page", false),
            ("gone", "sitemap", true),
            ("seed3", "page", false),
            ("was_seed", "sitemap", true),
        ];
        assert_eq!(said(&declared), expected);
    }
}
