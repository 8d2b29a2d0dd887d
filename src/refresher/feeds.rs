//! Reading a feed the scheduler handed out: its entries become pages of the site, their times
//! exact change events (stored as evidence), and the scheduler learns which pages the feed
//! covers and which are now known stale. How often a feed is read is the scheduler's decision:
//! it is priced against the age it cuts on the pages it covers.
//!
//! Entries get the sitemap's cross-host rule ([`crate::discover::same_host`]): a feed speaks for
//! its own host; an entry on another host is taken only if that host is one of the site's and
//! its robots.txt lists the feed (a cross-submission), else it is refused and recorded.

use tracing::{info, warn};
use url::Url;

use crate::discover::feed;
use crate::fetch::Method;
use crate::scheduler::FeedListing;
use crate::store::discovered::{Discovered, ReadValidators};
use crate::store::feed_reads::FeedReadSaved;
use crate::store::refusals::RefusalReason;

use super::admission::admitted;
use super::context::{Context, SiteState};
use super::fetching::{fetch_and_record, record_error_in};
use super::ledger::Due;
use super::request::MAX_DOCUMENT_BYTES;

/// Reads one feed.
pub async fn read_feed(ctx: &Context, due: &Due) -> anyhow::Result<()> {
    let Some((site, row, url)) = admitted(ctx, due).await? else {
        return Ok(());
    };
    let outcome = fetch_and_record(
        ctx,
        site,
        &row,
        &url,
        Method::Get,
        Some(MAX_DOCUMENT_BYTES),
        None,
    )
    .await?;
    let now = ctx.clock.now_ms();
    if outcome.status == Some(304) {
        // Nothing new: the feed has watched its pages for one more interval (its `ttl` stands).
        let read = (ctx.ledger).feed_read(now, row.id, &[], FeedListing::default());
        save_plans(ctx, site, &read.moved).await;
        return Ok(());
    }
    let Some(body) = outcome
        .body
        .as_ref()
        .filter(|_| outcome.status.is_some_and(|s| (200..300).contains(&s)))
    else {
        return Ok(());
    };
    let doc = match feed::parse(body, &url) {
        Ok(doc) => doc,
        Err(err) => {
            let moved = ctx.ledger.feed_unreadable(now, row.id);
            record_error_in(ctx, "feed", site, url.as_str(), err.to_string()).await?;
            save_plans(ctx, site, &moved).await;
            return Ok(());
        }
    };
    // The whole document, before entries are left out: whether the read overflowed is judged
    // on it ([`FeedListing`]).
    let dates = || doc.entries.iter().filter_map(|entry| entry.changed_ms());
    let listing = FeedListing {
        entries: doc.entries.len(),
        oldest_ms: dates().min(),
        // (An entry dated after the read, an event's or a scheduled post's, is left out as its
        // date is below: it would be new at every read.)
        newest_ms: dates().filter(|&at| at <= now).max(),
        requested_ms: Some(outcome.started_ms),
        kept_by_date: kept_by_date(&doc.entries, now),
        ttl_ms: Some(doc.ttl_minutes.map(|ttl| i64::from(ttl) * 60_000)),
    };
    let mut found = Vec::new();
    let mut timed = Vec::new();
    let mut vouching: Option<Vec<String>> = None;
    let mut refused = Vec::new();
    // Entries dated after the read: their dates say nothing of a change (said once a read).
    let mut future: Vec<(String, i64)> = Vec::new();
    for entry in &doc.entries {
        let Some(link) = entry.link.as_deref().and_then(|l| url::Url::parse(l).ok()) else {
            continue;
        };
        let link = site.site.strip_params(&link);
        if let Some(rule) = site.site.refused_by(&link) {
            refused.push((link.to_string(), RefusalReason::Filter, rule));
            continue;
        }
        if !crate::discover::same_host(&link, &url) {
            if vouching.is_none() {
                vouching = Some(cross_submitters(ctx, site, &url).await);
            }
            let host = link.host_str().unwrap_or_default();
            let vouched = vouching
                .as_deref()
                .unwrap_or_default()
                .iter()
                .any(|h| h.eq_ignore_ascii_case(host));
            if !vouched {
                let message = format!(
                    "{link}: feed entry refused, on another host than the feed {url} and not \
                     cross-submitted by its robots.txt"
                );
                record_error_in(ctx, "feed", site, url.as_str(), message).await?;
                let rule = "on another host than the feed and not cross-submitted by its \
                            robots.txt";
                refused.push((link.to_string(), RefusalReason::CrossHost, rule.into()));
                continue;
            }
        }
        let dated = entry.changed_ms();
        let at = dated.filter(|&t| t <= now);
        if let Some(t) = dated.filter(|&t| t > now) {
            future.push((link.to_string(), t));
        }
        found.push(Discovered {
            url: link.to_string(),
            site_id: site.id,
            host_id: ctx
                .store
                .host_id(&crate::politeness::origin_of(&link))
                .await?,
            kind: "page",
            discovered_from: Some(url.to_string()),
            lastmod_ms: None,
            lastmod_believed: true,
            changefreq: None,
            priority: None,
        });
        if let Some(at) = at {
            timed.push((link.to_string(), at));
        }
    }
    if let Some((first, at)) = future.first() {
        let message = format!(
            "entries dated in the future, their dates ignored: {} (the first: {first} at {})",
            future.len(),
            crate::clock::ms_to_rfc3339(*at)
        );
        record_error_in(ctx, "feed", site, url.as_str(), message).await?;
    }
    ctx.add_found(&found).await?;
    ctx.refuse(site, Some(url.as_str()), refused).await?;
    let mut pages = Vec::new();
    for (link, at) in timed {
        if let Some(page) = ctx.store.url_row(&link).await? {
            pages.push((page, at));
        }
    }
    let events: Vec<(i64, i64)> = pages.iter().map(|(page, at)| (page.id, *at)).collect();
    let stamped_before = ctx.ledger.feed_stamps_entries(row.id);
    // A read that looks stamped names no change by its entries at the read.
    let read = ctx.ledger.feed_read(now, row.id, &events, listing);
    // At once: a page the read sent back to its plan is due soon, and one handed out before
    // the save has no plan to save.
    save_plans(ctx, site, &read.moved).await;
    let stamped = read.stamped;
    let stamps_now = ctx.ledger.feed_stamps_entries(row.id);
    for (page, at) in pages {
        if stamped && listing.dated_at_the_read(at, now) {
            continue;
        }
        // A host whose feed entries are not believed, or not yet proven: the scheduler judges
        // an entry after the copy by the page's next check, and the store keeps only the
        // entries before it (history, not a known change).
        let before_copy = page.copy_ms.is_none_or(|copy| at <= copy);
        if before_copy || ctx.ledger.records_feed_entries(page.host_id) {
            ctx.store.add_change_events(page.id, &[at], "feed").await?;
        }
    }
    let validators = ReadValidators {
        etag: outcome.etag.clone(),
        last_modified: outcome.last_modified.clone(),
        // The floor on its next read: its max-age, or its `ttl` if longer (as the scheduler's).
        min_interval_ms: super::fetching::max_age_ms(&outcome).max(listing.ttl_ms.flatten()),
    };
    // Kept with the feed's row in one statement, with what its reads showed, so a restart,
    // or the next `--once` pass, goes on from them (and says the judgement once). Nothing
    // goes over a later read's, another worker's: the host may have changed hands while this
    // one was in flight.
    let reads = ctx.ledger.feed_reads(row.id);
    let read = FeedReadSaved {
        validators: &validators,
        reads: reads.as_ref(),
        stamps_entries: stamps_now,
        read_ms: outcome.started_ms,
        written_ms: ctx.clock.now_ms(),
    };
    ctx.store.save_feed_read(row.id, read).await?;
    if stamps_now && !stamped_before {
        let message = "its entries are dated at each read, not when their pages changed: \
                       they are taken for no changes, and its pages follow their plan";
        record_error_in(ctx, "feed", site, url.as_str(), message.to_string()).await?;
    } else if stamped_before && !stamps_now {
        info!(feed = %url, "the feed dates an entry before the read again: its entries are taken at their word");
    }
    info!(feed = %url, entries = doc.entries.len(), "feed read");
    Ok(())
}

/// Whether a document lists its entries in order of date, newest first or oldest first, each
/// dated no later than the read `now_ms` ([`FeedListing::kept_by_date`]).
fn kept_by_date(entries: &[feed::FeedEntry], now_ms: i64) -> bool {
    let dates: Option<Vec<i64>> = (entries.iter())
        .map(|entry| entry.changed_ms().filter(|&at| at <= now_ms))
        .collect();
    dates.is_some_and(|dates| dates.is_sorted_by(|a, b| a >= b) || dates.is_sorted())
}

/// Stores the plans a read moved (the ledger's `FeedRead::moved`), as they are now: the
/// feed's next read as the scheduler planned it after the read (the check's commit stored the
/// due time from before the entries were counted, which could lie in the past and stay there
/// in `report hosts` until the next read), and the plans of the pages whose wait for it the
/// read ended or whose check's change it judged. A save that fails is logged and counted as
/// a store error, and the read goes on (its change events, validators and what it showed):
/// the save of every plan, each quarter of an hour, takes the plans up.
async fn save_plans(ctx: &Context, site: &SiteState, url_ids: &[i64]) {
    // The other workers take up the waits it ended at their next round.
    if let Err(err) = ctx.save_plans_now(url_ids).await {
        warn!(site = %site.site.name, error = %err, "the plans a feed read moved were not saved: the next save of every plan takes them up");
        ctx.count_error();
        ctx.metrics.error(&site.site.name, "store");
    }
}

/// The hosts among the site's own whose robots.txt lists `feed` in a `Sitemap:` line (a feed is
/// a valid sitemap): they vouch for the feed's entries on them.
async fn cross_submitters(ctx: &Context, site: &SiteState, feed: &Url) -> Vec<String> {
    let mut hosts = Vec::new();
    for origin in site.site.origins() {
        let Ok(robots_url) = Url::parse(&format!("{origin}/robots.txt")) else {
            continue;
        };
        let robots = super::robots_rules::rules(ctx, site, &origin).await;
        if robots.sitemap_urls(&robots_url).iter().any(|s| s == feed)
            && let Some(host) = robots_url.host_str()
        {
            hosts.push(host.to_string());
        }
    }
    hosts
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries dated at `dates` (minutes; `None`: no date).
    fn entries(dates: &[Option<i64>]) -> Vec<feed::FeedEntry> {
        (dates.iter().enumerate())
            .map(|(i, at)| feed::FeedEntry {
                id: i.to_string(),
                link: None,
                published: at.and_then(|m| chrono::DateTime::from_timestamp_millis(m * 60_000)),
                updated: None,
            })
            .collect()
    }

    #[test]
    fn a_document_is_kept_by_date_when_its_entries_are_listed_in_order_of_date() {
        let kept = |dates: &[Option<i64>]| kept_by_date(&entries(dates), 100 * 60_000);
        assert!(
            kept(&[Some(90), Some(50), Some(50), Some(10)]),
            "newest first"
        );
        assert!(kept(&[Some(10), Some(50), Some(90)]), "oldest first");
        assert!(kept(&[]));
        assert!(
            !kept(&[Some(5), Some(90), Some(50)]),
            "a pinned post on top"
        );
        assert!(!kept(&[Some(90), Some(10), Some(50)]), "another order");
        assert!(
            !kept(&[Some(90), None, Some(10)]),
            "an entry without a date"
        );
        assert!(
            !kept(&[Some(120), Some(90), Some(10)]),
            "one dated after the read"
        );
    }
}
