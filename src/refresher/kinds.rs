//! What a start declares of the kinds of the stored URLs, before the scheduler is filled from
//! them ([`crate::store::Store::declare_kinds`]): each site's `feeds` are feeds, its `sitemaps`
//! (not also feeds) sitemaps, and a stored feed the schedule no longer names (nor leads to, as
//! the target of one's redirect) a sitemap's row only a walk reads, or a page if the schedule
//! now names it a seed.

use tracing::info;

use crate::store::Store;
use crate::store::kinds::{Declared, StoredFeed};

use super::context::SiteState;

/// A site's URLs as its schedule names them (as stored: seeds without `drop_params`).
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
                .map(|seed| site.site.strip_params(seed).to_string())
                .collect(),
        }
    }
}

/// The declarations of one site, given the stored feeds (and feeds taken out) of every site.
/// A stored feed is still the site's while a chain of redirects leads to it from one of its
/// `feeds` (with several workers, the target of a feed's redirect to a host held elsewhere is
/// handed over as a feed, discovered from the feed: it is not a feed taken out).
pub fn declarations(named: &Named, stored: &[StoredFeed]) -> Vec<Declared> {
    let own: Vec<&StoredFeed> = stored
        .iter()
        .filter(|s| s.site_id == named.site_id)
        .collect();
    let mut kept: Vec<&str> = named.feeds.iter().map(String::as_str).collect();
    loop {
        let led_to: Vec<&str> = (own.iter())
            .filter(|s| s.kind == "feed" && !kept.contains(&s.url.as_str()))
            .filter(|s| {
                s.discovered_from
                    .as_deref()
                    .is_some_and(|from| kept.contains(&from))
            })
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
    let feeds = named.feeds.iter().map(|url| declare(url, "feed", false));
    let sitemaps = (named.sitemaps.iter())
        .filter(|url| !named.feeds.contains(url))
        .map(|url| declare(url, "sitemap", false));
    let taken_out = (own.iter())
        .filter(|s| !kept.contains(&s.url.as_str()))
        .filter_map(|s| {
            if named.seeds.contains(&s.url) {
                Some(declare(&s.url, "page", false))
            } else if s.kind == "feed" && !named.sitemaps.contains(&s.url) {
                Some(declare(&s.url, "sitemap", true))
            } else {
                None // a sitemap's row already, or one the schedule names a sitemap
            }
        });
    feeds.chain(sitemaps).chain(taken_out).collect()
}

/// Declares the kinds of every loaded site's URLs (one read of the stored feeds, one write if
/// anything changes) and logs what changed.
pub async fn declare(store: &Store, sites: &[SiteState], now_ms: i64) -> anyhow::Result<()> {
    let stored = store.stored_feeds().await?;
    let declared: Vec<Declared> = (sites.iter())
        .flat_map(|site| declarations(&Named::of(site), &stored))
        .collect();
    for change in store.declare_kinds(&declared, now_ms).await? {
        let (url, was, kind) = (&change.url, &change.was, change.kind);
        let site =
            (sites.iter().find(|s| s.id == change.site_id)).map_or("", |s| s.site.name.as_str());
        info!(%url, was, kind, site, "stored as another kind or site than the schedules name it with: read as they say from now on");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::kinds::DROPPED_FEED;

    fn stored(url: &str, kind: &str, from: &str) -> StoredFeed {
        StoredFeed {
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
            feeds: vec!["f".into()],
            sitemaps: vec!["s".into(), "f".into()],
            seeds: vec!["seed".into(), "seed2".into()],
        };
        let stored = [
            stored("f", "feed", "schedule"),
            stored("f2", "feed", "f"),  // f's redirect target, handed over
            stored("f3", "feed", "f2"), // and f2's
            stored("old", "feed", "schedule"),
            stored("old2", "feed", "old"),
            stored("seed", "sitemap", DROPPED_FEED), // taken out before, a seed now
            stored("seed2", "feed", "schedule"),     // moved to the seeds now
            stored("gone", "sitemap", DROPPED_FEED),
            StoredFeed {
                site_id: 2,
                ..stored("theirs", "feed", "schedule")
            },
        ];
        let declared = declarations(&named, &stored);
        let expected = [
            ("f", "feed", false),
            ("s", "sitemap", false),
            ("old", "sitemap", true),
            ("old2", "sitemap", true),
            ("seed", "page", false),
            ("seed2", "page", false),
        ];
        assert_eq!(said(&declared), expected);
    }
}
