//! The pages a discovery pass found, into the store: each filtered by the site's patterns and by
//! robots.txt as it reads now (a refusal recorded with its rule), its host row found, its
//! `lastmod` kept when it is not in the future, and upserted in batches with the sitemap read
//! that listed it.

use std::collections::HashMap;

use tracing::info;
use url::Url;

use crate::politeness::origin_of;
use crate::store::discovered::{Discovered, Listing};
use crate::store::refusals::RefusalReason;

use super::context::{Context, SiteState};

/// How many discovered URLs are written per transaction.
const UPSERT_BATCH: usize = 1_000;

/// A page found by discovery: URL, lastmod (ms), changefreq, priority.
pub(super) type FoundPage = (Url, Option<i64>, Option<String>, Option<f64>);

/// Filters found pages by the site's patterns and robots.txt, and upserts them in batches
/// (each recording the sitemap read that listed it, if one did; the new ones due when the pass
/// started); returns the URLs added with their `lastmod`.
pub(super) async fn add_pages(
    ctx: &Context,
    site: &SiteState,
    pages: impl Iterator<Item = FoundPage>,
    from: &str,
    listing: Option<Listing>,
    pass_started_ms: i64,
) -> anyhow::Result<Vec<(String, Option<i64>)>> {
    let mut added = Vec::new();
    let now = ctx.clock.now_ms();
    // Each origin's host row, and whether its newer `lastmod`s are believed.
    let mut hosts: HashMap<String, (i64, bool)> = HashMap::new();
    let mut batch: Vec<Discovered> = Vec::new();
    let mut refused = Vec::new();
    for (url, lastmod_ms, changefreq, priority) in pages {
        let url = site.site.strip_params(&url);
        if let Some(rule) = site.site.refused_by(&url) {
            refused.push((url.to_string(), RefusalReason::Filter, rule));
            continue;
        }
        let origin = origin_of(&url);
        // A page on a host another worker holds is added unjudged: its holder asks that
        // host's robots.txt before every request (here it could not be read).
        if !ctx.held_elsewhere(&origin)
            && let Some(rule) = super::robots_rules::rules(ctx, site, &origin)
                .await
                .disallowed_by(url.as_str())
        {
            let rule = format!("{origin}/robots.txt: {rule}");
            refused.push((url.to_string(), RefusalReason::Robots, rule));
            continue;
        }
        let (host_id, lastmod_believed) = match hosts.get(&origin) {
            Some(&host) => host,
            None => {
                let id = ctx.store.host_id(&origin).await?;
                let host = (id, ctx.ledger.records_newer_lastmods(id));
                hosts.insert(origin, host);
                host
            }
        };
        let (url, lastmod_ms) = (url.to_string(), lastmod_ms.filter(|&t| t <= now));
        added.push((url.clone(), lastmod_ms));
        batch.push(Discovered {
            url,
            site_id: site.id,
            host_id,
            kind: "page",
            discovered_from: Some(from.to_string()),
            lastmod_ms,
            lastmod_believed,
            changefreq,
            priority,
        });
        if batch.len() >= UPSERT_BATCH {
            ctx.store
                .upsert_found_in_pass(&batch, now, pass_started_ms, listing)
                .await?;
            batch.clear();
        }
    }
    ctx.store
        .upsert_found_in_pass(&batch, now, pass_started_ms, listing)
        .await?;
    if !refused.is_empty() {
        info!(
            from,
            refused = refused.len(),
            "URLs refused by robots.txt or the site's filters were not added (see `refusals`)"
        );
        ctx.refuse(site, Some(from), refused).await?;
    }
    Ok(added)
}
