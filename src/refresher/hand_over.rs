//! A redirect to a host another worker holds (several workers on one database): the check
//! stops at that hop, records the redirect (status, hops, where it pointed), and hands the URL
//! it pointed to over to the host's holder by adding it to the site's URLs, as a page (or as
//! the feed or sitemap the redirected URL was). The holder applies that host's robots.txt and
//! politeness and checks it on its own plan; the dedup engine files the redirect, so a
//! permanent one leaves its source with a redirect source's small planner weight.
//!
//! A target that moved since the check before (a rotating redirect, a trap) is handed over
//! only once two checks in a row agree on it, so a hostile server cannot make the site grow by
//! a URL at every check. With one worker every host is held here and a redirect is followed
//! within the check.

use url::Url;

use crate::fetch::{FetchError, FetchOutcome};
use crate::politeness::{NotNow, origin_of};
use crate::store::urls::{Discovered, UrlRow};

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

/// Adds `target` to `row`'s site, of `row`'s kind, unless it is known already, or the check
/// of `row` before this one (at `checked_ms`) was redirected elsewhere: a target that moves from
/// check to check (a rotating redirect, a trap) adds no URL until two checks agree on it.
pub async fn hand_over(
    ctx: &Context,
    site: &SiteState,
    row: &UrlRow,
    target: &Url,
    checked_ms: i64,
) -> anyhow::Result<()> {
    let text = target.to_string();
    if ctx
        .store
        .known_urls(std::slice::from_ref(&text))
        .await?
        .contains(&text)
    {
        return Ok(());
    }
    let before = ctx.store.observations_for(row.id, 2).await?;
    let previous = before.iter().rev().find(|o| o.checked_ms < checked_ms);
    if let Some(elsewhere) = previous
        .and_then(|o| o.final_url.as_deref())
        .filter(|&url| url != text)
    {
        tracing::debug!(from = %row.url, to = %target, before = elsewhere, "redirect target moved: not handed over yet");
        return Ok(());
    }
    let kind = match row.kind.as_str() {
        "feed" => "feed",
        "sitemap" => "sitemap",
        _ => "page",
    };
    let found = Discovered {
        url: text,
        site_id: site.id,
        host_id: ctx.store.host_id(&origin_of(target)).await?,
        kind,
        discovered_from: Some(row.url.clone()),
        lastmod_ms: None,
        changefreq: None,
        priority: row.priority,
    };
    tracing::debug!(from = %row.url, to = %target, "redirect handed to the host's holder");
    ctx.add_found(&[found]).await
}
