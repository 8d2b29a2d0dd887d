//! A redirect to a host another worker holds (several workers on one database): the check
//! stops at that hop, records the redirect (status, hops, where it pointed), and hands the URL
//! it pointed to over to the host's holder by adding it to the site's URLs, as a page (or as
//! the feed or sitemap the redirected URL was). The holder applies that host's robots.txt and
//! politeness and checks it on its own plan; the dedup engine files the redirect, so a
//! permanent one leaves its source with a redirect source's small planner weight.
//!
//! A target that moves from check to check (a rotating redirect, a trap) is not handed over
//! (see [`hand_over`]), so a hostile server cannot make the site grow by a URL at every check. With one worker every host is held here and a redirect is followed
//! within the check.

use std::collections::BTreeSet;

use url::Url;

use crate::fetch::{FetchError, FetchOutcome};
use crate::politeness::{NotNow, key_of, origin_of};
use crate::store::discovered::Discovered;
use crate::store::urls::CheckRow;

use super::context::{Context, SiteState};

/// The URL a redirect of `outcome` pointed to that was not requested because another worker
/// holds its host.
pub fn target(outcome: &FetchOutcome) -> Option<&Url> {
    match &outcome.error {
        Some(FetchError::NotSent {
            reason: NotNow::NotHeld,
            ..
        }) if !outcome.hops.is_empty() => Some(&outcome.final_url),
        _ => None,
    }
}

/// How many of a URL's checks before this one are looked at for where its redirects pointed.
const TARGETS_LOOKED_AT: i64 = 20;

/// Adds `target` to `row`'s site, of `row`'s kind (after the site's parameter rules, without a
/// fragment), unless it is known already, the site's patterns refuse it, or the redirect's
/// target moves: the check of `row` before this one (at `checked_ms`) pointed elsewhere, or its
/// last checks pointed to two other targets or more (a rotating redirect, a trap), so that a
/// server cannot make the site grow by a URL at every check. Registers the target's host for
/// the leases (a sitemap's is not in the scheduler).
pub async fn hand_over(
    ctx: &Context,
    site: &SiteState,
    row: &CheckRow,
    target: &Url,
    checked_ms: i64,
) -> anyhow::Result<()> {
    let pointed = target.as_str();
    let before = ctx
        .store
        .observations_for(row.id, TARGETS_LOOKED_AT + 1)
        .await?;
    let before: Vec<&str> = before
        .iter()
        .filter(|o| o.checked_ms < checked_ms)
        .map(|o| o.final_url.as_deref().unwrap_or_default())
        .collect();
    let moved = before
        .last()
        .is_some_and(|&last| !last.is_empty() && last != pointed);
    let others: BTreeSet<&str> = before
        .iter()
        .copied()
        .filter(|&url| !url.is_empty() && url != pointed)
        .collect();
    if moved || others.len() >= 2 {
        tracing::debug!(from = %row.url, to = %target, "redirect target moves: not handed over");
        return Ok(());
    }
    let mut url = site.site.strip_params(target);
    url.set_fragment(None);
    let text = url.to_string();
    if !site.site.matches(&text)
        || ctx
            .store
            .known_urls(std::slice::from_ref(&text))
            .await?
            .contains(&text)
    {
        return Ok(());
    }
    let kind = match row.kind.as_str() {
        "feed" => "feed",
        "sitemap" => "sitemap",
        _ => "page",
    };
    let origin = origin_of(&url);
    let found = Discovered {
        url: text,
        site_id: site.id,
        host_id: ctx.store.host_id(&origin).await?,
        kind,
        discovered_from: Some(row.url.clone()),
        lastmod_ms: None,
        lastmod_believed: true,
        changefreq: None,
        priority: row.priority,
    };
    tracing::debug!(from = %row.url, to = %url, "redirect handed to the host's holder");
    ctx.add_found(&[found]).await?;
    ctx.store
        .add_lease_keys(&[key_of(&origin)], ctx.clock.now_ms())
        .await?;
    Ok(())
}
