//! The dedup engine in the running refresher: every page fetched (GET, 2xx, HTML or text) goes
//! through [`DedupEngine::observe`] after its check is recorded; a fetch that only redirected
//! (a 301 cycle, a redirect to an error) goes through [`DedupEngine::observe_redirects`], and
//! one that ended at a sitemap or a feed through
//! [`DedupEngine::observe_redirects_to_no_page`] (its body is no page's). A row made a
//! sitemap or a feed is forgotten ([`forget`]).
//!
//! What follows from each observation, written in one transaction ([`Store::save_dedup`]):
//! - the engine's rows that changed since the last save (classes, members, redirects, near
//!   groups, URL records), as the engine marked them ([`DedupEngine::take_changes`]): the cost
//!   of a save is what the observation changed, whatever the engine's size, so every
//!   observation is saved as it happens (a crash loses nothing the engine had filed);
//! - the planner weight `urls.weight = engine.planner_weight(url)` of the fetched URL and of every
//!   URL whose standing may have moved (non-canonical pages and permanent-redirect sources get a
//!   small weight, which planning multiplies into the site's weight), and the fetched page
//!   re-planned at once with its new weight (the others at the next full re-plan);
//! - the body of a canonical page in the document store, and the documents of pages that stopped
//!   being canonical removed.
//!
//! Then links: for sites with `seeds`, the page's links (normalised and rewritten through the
//! permanent-redirect table by the engine) on the site's own origins that match its patterns and
//! robots.txt become pages, at most [`MAX_NEW_LINKS_PER_PAGE`] per page. New redirect cycles are
//! logged in `errors` (scope `dedup`).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use tracing::{debug, warn};
use url::Url;

use crate::dedup::content;
use crate::dedup::extract::Extracted;
use crate::dedup::urlnorm::normalize_str;
use crate::dedup::{DedupOutcome, FetchedPage, Hop};
use crate::fetch::{FetchError, FetchOutcome};
use crate::politeness::origin_of;
use crate::store::dedup::DedupWrite;
use crate::store::discovered::Discovered;
use crate::store::documents::DocumentWrite;
use crate::store::errors::ErrorRecord;
use crate::store::refusals::RefusalReason;
use crate::store::urls::CheckRow;
#[cfg(doc)]
use crate::{dedup::DedupEngine, store::Store};

use super::context::{Context, Counters, SiteState};

/// The most new URLs one page's links add to the site.
pub const MAX_NEW_LINKS_PER_PAGE: usize = 50;

/// What a fetch gives the engine.
enum Input {
    /// A page with a body.
    Page(FetchedPage),
    /// Redirects only: the requested URL, the redirect hops, where the last one pointed, and
    /// whether that is known to be no page (a sitemap, a feed: the body there is no page's).
    Redirects {
        url: String,
        chain: Vec<Hop>,
        last: String,
        to_no_page: bool,
    },
}

/// The extraction of a page check's body, if the engine will file it: the one extraction of the
/// fetch, used for change detection and handed to [`after_fetch`].
pub fn extract(ctx: &Context, row: &CheckRow, outcome: &FetchOutcome) -> Option<Extracted> {
    match input_of(row, outcome)? {
        Input::Page(page) => {
            Counters::add(&ctx.counters.extractions, 1);
            Some(content::extract_page(&page, &ctx.dedup.config.url_rules))
        }
        Input::Redirects { .. } => None,
    }
}

/// How a page check's body is given to the engine.
pub enum Filing {
    /// With its extraction when [`extract`] did it already (`None`: the engine extracts it).
    Extracted(Option<Extracted>),
    /// As the copy's bytes again, whose content fingerprint this is: filed without extraction
    /// when the engine still can ([`crate::dedup::DedupEngine::refile_same_bytes`]), else extracted here.
    SameBytes(u64),
}

/// Runs the engine on a page check's outcome and applies what follows (see the module docs).
pub async fn after_fetch(
    ctx: &Context,
    site: &SiteState,
    row: &CheckRow,
    outcome: &FetchOutcome,
    filing: Filing,
) -> anyhow::Result<()> {
    let Some(input) = input_of(row, outcome) else {
        return Ok(());
    };
    // Redirected to a sitemap or a feed (stored so): not a page's content, only redirects
    // (filed, it put back what the engine forgot of the target, `forget`). (A fetch that did
    // not redirect is of its own row, which admission read under the URL's lock, held since.)
    let forgettings = ctx.dedup.forgettings.load(Ordering::SeqCst);
    let mut input = ended_at_no_page(ctx, input).await?;
    let now = ctx.clock.now_ms();
    let mut rt = ctx.dedup.inner.lock().await;
    if ctx.dedup.forgettings.load(Ordering::SeqCst) != forgettings {
        // The target may have been made one since it was looked up: again, under the lock,
        // which a forgetting holds (rare: a read of the store under it).
        input = ended_at_no_page(ctx, input).await?;
    }
    let observed: Result<Option<DedupOutcome>, _> = match &input {
        Input::Page(page) => {
            let refiled = match filing {
                Filing::SameBytes(fp) => rt.engine.refile_same_bytes(
                    &page.url,
                    page.content_type.as_deref(),
                    fp,
                    page.sitemap_priority,
                ),
                Filing::Extracted(_) => None,
            };
            match (refiled, filing) {
                (Some(out), _) => Ok(Some(out)),
                (None, Filing::Extracted(extracted)) => rt
                    .engine
                    .observe_extracted(page.clone(), extracted)
                    .map(Some),
                // Another check changed what the engine holds since it was asked (rare):
                // extracted outside the lock and filed whole.
                (None, Filing::SameBytes(_)) => {
                    drop(rt);
                    let extracted = extract(ctx, row, outcome);
                    rt = ctx.dedup.inner.lock().await;
                    rt.engine
                        .observe_extracted(page.clone(), extracted)
                        .map(Some)
                }
            }
        }
        Input::Redirects {
            url,
            chain,
            last,
            to_no_page: false,
        } => rt.engine.observe_redirects(url, chain, last).map(|_| None),
        Input::Redirects {
            url,
            chain,
            last,
            to_no_page: true,
        } => (rt.engine)
            .observe_redirects_to_no_page(url, chain, last)
            .map(|_| None),
    };
    let observed = match observed {
        Ok(observed) => observed,
        Err(err) => {
            drop(rt);
            let message = format!("not filed by the dedup engine: {err}");
            return record(ctx, Some(&site.site.name), Some(&row.url), message).await;
        }
    };
    let mut touched: BTreeSet<String> = BTreeSet::new();
    if let Input::Page(page) = &input {
        touched.extend(page.redirect_chain.iter().map(|h| h.url.clone()));
    }
    let mut write = rt.write(touched);
    let row_weight = rt.engine.planner_weight(&row.url);
    // The URL's own weight, when the filing did not touch its record (a URL it touched has its
    // weight in the write already) and it differs from its row's: a change of the weight since
    // the row was read was another filing's, which wrote it then.
    if (row_weight - row.weight).abs() > 1e-12 && !write.weights.iter().any(|(u, _)| *u == row.url)
    {
        write.weights.push((row.url.clone(), row_weight));
    }
    if let (Some(out), Input::Page(page)) = (&observed, &input)
        && out.is_canonical
    {
        write.drop_documents.retain(|u| *u != out.url);
        let doc = DocumentWrite::new(
            out.url.clone(),
            outcome.started_ms,
            page.content_type.clone(),
            out.content_fp,
            &page.body,
        )?;
        write.document = Some(doc);
    }
    // Queued under the engine's lock (saves commit in the engine's order), awaited after it.
    let write = Arc::new(write);
    let saved = ctx.store.save_dedup(write.clone(), now);
    drop(rt);
    saved.await?;

    record_cycles(ctx, Some(&site.site.name), &write).await?;
    if (row_weight - row.weight).abs() > 1e-12 {
        ctx.ledger.set_weight(row.id, row_weight, now);
    }
    if let Some(out) = observed {
        discover_links(ctx, site, &out).await?;
    }
    Ok(())
}

/// Whether `url` is a page, or not stored (a redirect's target may be neither), as stored or
/// as the engine files it (normalised: a redirect's tracking parameters dropped).
async fn is_a_page(ctx: &Context, url: &str) -> anyhow::Result<bool> {
    let normalised = normalize_str(url, &ctx.dedup.config.url_rules).ok();
    for url in std::iter::once(url).chain(normalised.as_deref().filter(|n| *n != url)) {
        if (ctx.store.url_row(url).await?).is_some_and(|row| row.kind != "page") {
            return Ok(false);
        }
    }
    Ok(true)
}

/// A page fetch that ended at no page (a redirect to a sitemap or a feed) as its redirects
/// only, the content it had left; other inputs as they are.
async fn ended_at_no_page(ctx: &Context, input: Input) -> anyhow::Result<Input> {
    Ok(match input {
        Input::Page(page)
            if page.final_url != page.url && !is_a_page(ctx, &page.final_url).await? =>
        {
            Input::Redirects {
                url: page.url,
                chain: page.redirect_chain,
                last: page.final_url,
                to_no_page: true,
            }
        }
        input => input,
    })
}

/// The engine's input for a page check, if any: a 2xx GET with an HTML or text body, or a
/// fetch that followed redirects and ended elsewhere than at a page.
fn input_of(row: &CheckRow, outcome: &FetchOutcome) -> Option<Input> {
    let hops: Vec<Hop> = outcome
        .hops
        .iter()
        .map(|h| Hop {
            url: h.url.to_string(),
            status: h.status,
        })
        .collect();
    let textual = outcome.content_type.as_deref().is_none_or(|t| {
        let t = t.to_ascii_lowercase();
        t.contains("html") || t.starts_with("text/")
    });
    let ok = outcome.error.is_none() && outcome.status.is_some_and(|s| (200..300).contains(&s));
    if ok
        && textual
        && let Some(body) = &outcome.body
    {
        return Some(Input::Page(FetchedPage {
            url: outcome.requested_url.to_string(),
            final_url: outcome.final_url.to_string(),
            redirect_chain: hops[..hops.len().saturating_sub(1)].to_vec(),
            content_type: outcome.content_type.clone(),
            body: body.to_vec(),
            sitemap_priority: row.priority,
        }));
    }
    let (last, chain) = match &outcome.error {
        Some(FetchError::RedirectLoop { target, .. }) => (target.clone(), hops),
        // The last redirect pointed to a URL not requested here (another worker holds its
        // host): every hop is a redirect to the next.
        _ if super::hand_over::target(outcome).is_some() => (outcome.final_url.to_string(), hops),
        _ => {
            let (last, chain) = hops.split_last()?;
            (last.url.clone(), chain.to_vec())
        }
    };
    let redirected = chain
        .iter()
        .any(|h| matches!(h.status, 301 | 302 | 303 | 307 | 308));
    redirected.then(|| Input::Redirects {
        url: outcome.requested_url.to_string(),
        chain,
        last,
        to_no_page: false,
    })
}

/// Adds the page's links on the site's own origins (patterns and robots permitting) as pages.
async fn discover_links(ctx: &Context, site: &SiteState, out: &DedupOutcome) -> anyhow::Result<()> {
    if site.site.seeds.is_empty() || out.links.is_empty() {
        return Ok(());
    }
    let origins = site.site.origins();
    let mut candidates: Vec<Url> = Vec::new();
    let mut seen = BTreeSet::new();
    // Links to the site's hosts that its filters or robots.txt keep out, recorded (as a
    // sitemap's are, once a run) so that `refusals` and `freshet explain` say why they were
    // not added.
    let mut refused = Vec::new();
    for link in &out.links {
        let Ok(url) = Url::parse(link) else { continue };
        let url = site.site.strip_params(&url);
        if !origins.contains(&origin_of(&url)) || !seen.insert(url.to_string()) {
            continue;
        }
        if let Some(rule) = site.site.refused_by(&url) {
            if refused.len() < MAX_NEW_LINKS_PER_PAGE {
                refused.push((url.to_string(), RefusalReason::Filter, rule));
            }
            continue;
        }
        candidates.push(url);
    }
    let texts: Vec<String> = candidates.iter().map(Url::to_string).collect();
    let known = ctx.store.known_urls(&texts).await?;
    let mut batch = Vec::new();
    for url in candidates {
        if batch.len() >= MAX_NEW_LINKS_PER_PAGE {
            break;
        }
        if known.contains(url.as_str()) {
            continue;
        }
        let origin = origin_of(&url);
        // On a host another worker holds, its holder applies robots.txt before every request
        // (its rules cannot be read here).
        if !ctx.held_elsewhere(&origin)
            && let Some(rule) = super::robots_rules::rules(ctx, site, &origin)
                .await
                .disallowed_by(url.as_str())
        {
            if refused.len() < MAX_NEW_LINKS_PER_PAGE {
                let rule = format!("{origin}/robots.txt: {rule}");
                refused.push((url.to_string(), RefusalReason::Robots, rule));
            }
            continue;
        }
        batch.push(Discovered {
            url: url.to_string(),
            site_id: site.id,
            host_id: ctx.store.host_id(&origin).await?,
            kind: "page",
            discovered_from: Some(out.url.clone()),
            lastmod_ms: None,
            lastmod_believed: true,
            changefreq: None,
            priority: None,
        });
    }
    if !batch.is_empty() {
        debug!(page = %out.url, new = batch.len(), "links discovered");
        ctx.add_found(&batch).await?;
    }
    refused.retain(|(link, _, _)| ctx.dedup.first_refusal(link));
    if !refused.is_empty()
        && let Err(error) = ctx.refuse(site, Some(&out.url), refused).await
    {
        // The check is recorded; only the account of links it did not add is missing.
        warn!(page = %out.url, error = %format!("{error:#}"), "the refused links could not be recorded");
    }
    Ok(())
}

/// Writes what the engine holds and has not saved yet (call when the run ends).
pub async fn flush(ctx: &Context) -> anyhow::Result<()> {
    let mut rt = ctx.dedup.inner.lock().await;
    if !rt.engine.has_unsaved_changes() {
        return Ok(());
    }
    let write = Arc::new(rt.write(BTreeSet::new()));
    let saved = ctx.store.save_dedup(write.clone(), ctx.clock.now_ms());
    drop(rt);
    saved.await?;
    record_cycles(ctx, None, &write).await
}

/// Forgets the URLs whose rows stopped being pages ([`DedupEngine::forget`]: a schedule or
/// discovery made them sitemaps or feeds) and saves what that changes: their engine rows go, a
/// canonical place one held goes to the next of its class, and their documents are dropped.
/// A save that fails is logged and counted: the rows stay in the store until the next start
/// forgets them again (it forgets every stored sitemap and feed).
pub async fn forget(ctx: &Context, urls: &[String]) {
    let mut rt = ctx.dedup.inner.lock().await;
    let mut forgotten = false;
    ctx.dedup.forgettings.fetch_add(1, Ordering::SeqCst);
    for url in urls {
        forgotten |= rt.engine.forget(url);
    }
    if !forgotten {
        return;
    }
    let write = Arc::new(rt.write(BTreeSet::new()));
    let saved = ctx.store.save_dedup(write, ctx.clock.now_ms());
    drop(rt);
    if let Err(error) = saved.await {
        let (first, count) = (urls.first(), urls.len());
        warn!(error = %format!("{error:#}"), ?first, count, "the dedup engine forgot pages that became sitemaps or feeds, but could not save it: the next start forgets them again");
        ctx.count_error();
    }
}

/// Logs the redirect cycles a write saves for the first time in `errors`.
async fn record_cycles(
    ctx: &Context,
    site: Option<&str>,
    write: &DedupWrite,
) -> anyhow::Result<()> {
    for error in &write.changes.new_errors {
        let crate::dedup::RedirectError::Cycle { urls } = error;
        warn!(%error, "permanent redirect cycle");
        record(
            ctx,
            site,
            urls.first().map(String::as_str),
            error.to_string(),
        )
        .await?;
    }
    Ok(())
}

/// Records a dedup problem in `errors` and counts it.
async fn record(
    ctx: &Context,
    site: Option<&str>,
    url: Option<&str>,
    message: String,
) -> anyhow::Result<()> {
    ctx.count_error();
    ctx.metrics.error(site.unwrap_or_default(), "dedup");
    let error = ErrorRecord {
        scope: "dedup",
        site: site.map(str::to_string),
        url: url.map(str::to_string),
        message,
        ..Default::default()
    };
    ctx.store.record_error(ctx.clock.now_ms(), &error).await?;
    Ok(())
}
