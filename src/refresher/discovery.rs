//! Discovery: when a site's `rediscover` time comes, read robots.txt of its origins (for
//! `Sitemap:` lines) and its sitemaps (following indexes with a depth limit and a loop guard),
//! and put what they name into the `urls` table with their hints, then hand the site's URLs to
//! the scheduler. Discovery runs as its own task beside fetching, never in front of it: a slow
//! sitemap host holds up nothing else. Its requests go through the same politeness and are
//! charged to the site's budget. A sitemap `lastmod` newer than the copy makes the page known
//! stale (in the store's upsert, then in the scheduler).
//!
//! Sitemaps are URLs too (kind `sitemap`), fetched conditionally and recorded as observations.
//! Feeds are registered here (kind `feed`) and then read when the scheduler says so
//! ([`super::feeds`]). Every problem (unreachable, malformed, over a limit, refused URL) is
//! recorded in `errors` with the URL and the reason, and discovery goes on with the rest.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

use tracing::{info, warn};
use url::Url;

use crate::discover::sitemap::{
    self, MAX_DEPTH, MAX_SITEMAPS_PER_WALK, SitemapContext, SitemapWalk,
};
use crate::fetch::{FetchOutcome, Method};
use crate::politeness::origin_of;
use crate::store::discovered::{Discovered, Listing, ReadValidators};
use crate::store::refusals::RefusalReason;
use crate::store::urls::{CheckRow, UrlPages, UrlRow, UrlScope};

use super::context::{Context, SiteState};
use super::discovery_due::{next_discovery, pass_joinable_ms};
use super::fetching::fetch_and_record;
use super::found_pages::add_pages;
use super::listings::Listings;
use super::request::MAX_DOCUMENT_BYTES;
use super::shared_discovery::{handed_sitemaps, sitemaps_due_here, taken_out_sitemaps};
use super::sitemap_kinds::{declared_a_sitemap, done_with_naming, probe_page, schedule_sitemap};

/// Runs one discovery pass over a site and records when it happened; returns when the site is
/// next due (clock ms; `i64::MAX`: never again).
pub async fn discover(ctx: &Context, site: &SiteState) -> anyhow::Result<i64> {
    if let Some(resumes_ms) = site.site.fetch_resumes_ms(ctx.clock.now()) {
        return Ok(resumes_ms);
    }
    info!(site = %site.site.name, "discovering");
    // The pass's start, shared with the other workers' passes at this time and with the next
    // attempt if this one is cut short: its new pages are due then.
    let now = ctx.clock.now_ms();
    let held_at_start = (ctx.leasing.as_ref()).map(|leasing| leasing.held.snapshot(now));
    let joinable = pass_joinable_ms(site, now);
    let started = ctx
        .store
        .open_discovery_pass(site.id, now, joinable)
        .await?;
    let mut listed = Listings::of_pass(started);
    let mut walks = Walks {
        below_taken_out: taken_out_sitemaps(ctx, site).await?,
        ..Walks::default()
    };
    let documents = discover_site(ctx, site, &mut listed, &mut walks).await?;
    // The row ids of the URLs the sitemaps listed (read a page of rows at a time), and the
    // pages of the sitemaps that answered 304.
    let mut pages = UrlPages::new(UrlScope::Site(site.id), super::ROWS_PER_READ);
    while let Some(rows) = pages.next(&ctx.store).await? {
        ctx.sync_rows(&rows);
        listed.resolve(&rows);
    }
    ctx.ledger.sitemap_listings(&listed.into_resolved());
    let reads_per_day = ctx.ledger.sitemaps_read(site.id, documents);
    let done = ctx.clock.now_ms();
    ctx.store.set_site_discovered(site.id, done).await?;
    let worth_ms = reads_per_day.map_or(0, |r| (crate::clock::MS_PER_DAY / r.max(1e-9)) as i64);
    let mut next = next_discovery(site, done.saturating_add((worth_ms - 1).max(0)));
    if let Some(retry_ms) = super::robots_rules::unread_documents_until(ctx, site).await? {
        // Documents never read: read them once robots.txt is tried again.
        next = next.min(retry_ms.max(done.saturating_add(1)));
    }
    // Every sitemap of the site is next read at the next discovery, whether this pass read it,
    // found it unchanged, or skipped it (server ttl, closed host, robots.txt): its next_due is
    // that time, never the pass's own time left behind in the past.
    let due = (next != i64::MAX).then_some(next);
    if ctx.leasing.is_some() {
        // Only those on hosts held here: the others are their holders' to read.
        let here = sitemaps_due_here(ctx, site, &walks.walked, held_at_start.as_ref()).await?;
        ctx.store.set_sitemaps_due_of(site.id, &here, due).await?;
    } else {
        ctx.store.set_sitemaps_due(site.id, due).await?;
    }
    Ok(next)
}

/// What a pass's walks met.
#[derive(Default)]
struct Walks {
    /// The sitemaps walked on hosts held here (read, unchanged, or not asked).
    walked: Vec<String>,
    /// Every sitemap met, on any host.
    reached: BTreeSet<String>,
    /// With several workers, the stored sitemaps known only below one the schedule took out
    /// as the pass began ([`taken_out_sitemaps`]).
    below_taken_out: HashSet<String>,
}

/// One discovery pass over a site.
async fn discover_site(
    ctx: &Context,
    site: &SiteState,
    listed: &mut Listings,
    walks: &mut Walks,
) -> anyhow::Result<usize> {
    let origins: BTreeSet<String> = site.site.origins();
    // Each with what named it, when not the schedule.
    let mut roots: Vec<(Url, Option<String>)> = site
        .site
        .sitemaps
        .iter()
        .map(|u| (u.clone(), None))
        .collect();
    // robots.txt Sitemap: lines of the site's own origins, and which hosts vouch for which
    // sitemap (cross-submission).
    let mut vouched: HashMap<String, Vec<String>> = HashMap::new();
    for origin in &origins {
        if ctx.held_elsewhere(origin) {
            continue; // its holder reads it
        }
        let robots = super::robots_rules::rules(ctx, site, origin).await;
        for line in robots.sitemaps() {
            let Ok(url) = Url::parse(line) else { continue };
            if let Some(vouching) = Url::parse(origin)
                .ok()
                .and_then(|o| o.host_str().map(str::to_string))
            {
                vouched.entry(url.to_string()).or_default().push(vouching);
            }
            if !roots.iter().any(|(root, _)| *root == url) {
                roots.push((url, Some(format!("{origin}/robots.txt"))));
            }
        }
    }
    for feed_url in &site.site.feeds {
        // Read when the scheduler says so (super::feeds); a new one is due with the pass's
        // new pages, so on a binding budget it is read in its host's turn, not after the
        // whole backlog the pass finds. Stored first: a URL the schedule names as a feed and
        // as a sitemap or a seed is a feed (the first kind stored stays).
        let due = Some(listed.pass_started_ms());
        document_row(ctx, site, feed_url, "feed", "schedule", due).await?;
    }
    // The schedule's sitemaps are stored before any request: one on a host that is closed or
    // disallows it is still a source seen (discovery_due::names_unseen_source), and a restart
    // runs no pass for it.
    for sitemap in &site.site.sitemaps {
        document_row(ctx, site, sitemap, "sitemap", "schedule", None).await?;
    }
    let seeds: Vec<Url> = site.site.seeds.clone();
    add_pages(
        ctx,
        site,
        seeds.iter().map(|u| (u.clone(), None, None, None)),
        "seed",
        None,
        listed.pass_started_ms(),
    )
    .await?;

    for (root, named_by) in roots {
        let root = (root, named_by, 0);
        walk_from(ctx, site, root, &vouched, listed, walks).await?;
    }
    if ctx.leasing.is_some() {
        // Sitemaps on hosts held here that a walk on another worker reached (an index's child,
        // a root a robots.txt there names, a redirect's target): the walk goes on from each,
        // at its depth below the root it came from.
        let pass = (&walks.reached, listed.pass_started_ms());
        for handed in handed_sitemaps(ctx, site, pass).await? {
            if let Some(host) = handed.vouching {
                // Named by that host's robots.txt: it speaks for that host (cross-submission).
                vouched
                    .entry(handed.url.to_string())
                    .or_default()
                    .push(host);
            }
            let root = (
                handed.url.clone(),
                handed.page_named_by.clone(),
                handed.depth,
            );
            walk_from(ctx, site, root, &vouched, listed, walks).await?;
            if handed.page_named_by.is_some() {
                let pass_started_ms = listed.pass_started_ms();
                done_with_naming(ctx, site, &handed.url, pass_started_ms).await?;
            }
        }
    }
    Ok(walks.walked.len())
}

/// Reads the sitemap `root` (with what named it, when not the schedule, and its depth below the
/// root its walk began at) and the sitemaps it leads to (depth and count limits, loop guard); those
/// on hosts held elsewhere are stored for their holder, not read.
async fn walk_from(
    ctx: &Context,
    site: &SiteState,
    (root, named_by, depth): (Url, Option<String>, usize),
    vouched: &HashMap<String, Vec<String>>,
    listed: &mut Listings,
    walks: &mut Walks,
) -> anyhow::Result<()> {
    let mut walk = SitemapWalk::new(root.as_str(), MAX_DEPTH, MAX_SITEMAPS_PER_WALK);
    let mut queue = VecDeque::from([(root, depth, named_by)]);
    while let Some((url, depth, parent)) = queue.pop_front() {
        if ctx.is_stopping() {
            return Ok(());
        }
        walks.reached.insert(url.to_string());
        if let Some(parent) = &parent
            && walks.below_taken_out.remove(url.as_str())
        {
            named_anew(ctx, &url, parent).await?;
        }
        let origin = origin_of(&url);
        if ctx.held_elsewhere(&origin) {
            // Read by the worker that holds its host, which discovers the site again when it
            // takes the host (registered here if no worker knew of it), or finds it stored
            // when it discovers the site ([`handed_sitemaps`]).
            ctx.store
                .add_lease_keys(&[crate::politeness::key_of(&origin)], ctx.clock.now_ms())
                .await?;
            if let Some(parent) = &parent {
                let row = document_row(ctx, site, &url, "sitemap", parent, None).await?;
                if let Some(row) = row.filter(|row| row.kind == "page" && row.site_id == site.id) {
                    // A page (its row keeps what listed it): its holder reads it to learn
                    // whether it is a sitemap ([`handed_sitemaps`]).
                    let now = ctx.clock.now_ms();
                    ctx.store.name_page_a_sitemap(row.id, parent, now).await?;
                }
            }
            continue;
        }
        let cross = vouched.get(url.as_str()).cloned().unwrap_or_default();
        let named = (&url, parent.as_deref());
        let Some(children) = read_sitemap(ctx, site, named, &cross, listed).await? else {
            continue; // a feed: not one of the site's sitemap reads
        };
        walks.walked.push(url.to_string());
        for child in children {
            match walk.admit(child.as_str(), depth + 1) {
                Ok(()) => queue.push_back((child, depth + 1, Some(url.to_string()))),
                Err(refusal) => {
                    record(ctx, site, "sitemap", url.as_str(), refusal.to_string()).await?;
                }
            }
        }
    }
    Ok(())
}

/// A sitemap known only below one the schedule took out, met by a walk from `parent` (a live
/// sitemap or robots.txt): named by it from now on, so that the worker holding its host walks
/// on from it ([`handed_sitemaps`]) and no start takes it for one no walk reaches. (A row
/// keeps what named it first.)
async fn named_anew(ctx: &Context, url: &Url, parent: &str) -> anyhow::Result<()> {
    if let Some(row) = ctx.store.url_row(url.as_str()).await?
        && let Some(was) = row.discovered_from.filter(|was| was != parent)
    {
        ctx.store.renamed_by(row.id, &was, parent).await?;
    }
    Ok(())
}

/// The child sitemaps `url` listed at its last read.
async fn children_of(ctx: &Context, url: &Url) -> anyhow::Result<Vec<Url>> {
    Ok(ctx
        .store
        .children_of(url.as_str())
        .await?
        .into_iter()
        .filter_map(|u| Url::parse(&u).ok())
        .collect())
}

/// The stored row of a sitemap or feed URL (inserted if new: due now, or at the start of the
/// pass that found it when given).
async fn document_row(
    ctx: &Context,
    site: &SiteState,
    url: &Url,
    kind: &'static str,
    from: &str,
    pass_started_ms: Option<i64>,
) -> anyhow::Result<Option<UrlRow>> {
    let host_id = ctx.store.host_id(&origin_of(url)).await?;
    let found = Discovered {
        url: url.to_string(),
        site_id: site.id,
        host_id,
        kind,
        discovered_from: Some(from.to_string()),
        lastmod_ms: None,
        lastmod_believed: true,
        changefreq: None,
        priority: None,
    };
    let now = ctx.clock.now_ms();
    match pass_started_ms {
        Some(started) => {
            let found = [found];
            ctx.store
                .upsert_found_in_pass(&found, now, started, None)
                .await?
        }
        None => ctx.store.upsert_discovered(&[found], now).await?,
    };
    Ok(ctx.store.url_row(url.as_str()).await?)
}

/// What reading a sitemap gave.
enum Document {
    /// A body, the read that its pages record ([`Listing`]) and the read's validators,
    /// written once its pages are.
    Read(Vec<u8>, Listing, ReadValidators),
    /// 304 Not Modified: it says what it said at its last read. Its row, and when (clock ms).
    Unchanged(Box<UrlRow>, i64),
    /// Nothing: not asked (a disallow, a closed host, a ttl not run out, another worker's to
    /// read) or an error (recorded).
    Unread,
    /// Not a sitemap: one of the site's feeds, which the feed reader reads.
    Feed,
}

/// Fetches a sitemap politely (robots first): its body when there is a new one.
async fn fetch_document(
    ctx: &Context,
    site: &SiteState,
    url: &Url,
    named_by: Option<&str>,
    (cross, listed): (&[String], &Listings),
) -> anyhow::Result<Document> {
    let origin = origin_of(url);
    if ctx.is_stopping() {
        return Ok(Document::Unread);
    }
    let stored = ctx.store.url_row(url.as_str()).await?;
    let feed_of = (stored.as_ref())
        .filter(|row| row.kind == "feed")
        .map(|row| row.site_id);
    if let Some(feed_site) = feed_of.filter(|&id| ctx.site(id).is_none()) {
        // A feed of a site in none of the schedules (a rename): this site, which names it as
        // a sitemap, takes it as one (`Store::declare_kinds`: as a start does).
        if declared_a_sitemap(ctx, site, url).await?.is_none() {
            // Its site is loaded elsewhere (a newer worker's schedule, a schedule file skipped
            // here for its problems, a site marked out of the schedules by no start since):
            // not this site's to read.
            return Ok(Document::Feed);
        }
        info!(url = %url, from = feed_site, "a feed of a site out of the schedules, named here as a sitemap: read as one");
    } else if feed_of.is_some() {
        // One of the site's feeds, named as a sitemap (by a robots.txt `Sitemap:` line, which
        // makes it speak for that host, `feeds::cross_submitters`; or by an index): the feed
        // reader reads it when the scheduler says, and records its robots.txt disallow. Read
        // here as a sitemap, its check took the feed's place, and the scheduler, which never
        // saw a read of it, planned it weekly as a feed worth nothing: no page ever waited for
        // it. (Decided by the row, which a start makes a feed when the schedule names it one,
        // `Store::declare_kinds`: a row stored as a sitemap for a URL the schedule does not
        // name as a feed is read as a sitemap.)
        return Ok(Document::Feed);
    }
    if let Some(until_ms) = ctx.pool.closed_beyond_patience(&origin) {
        tracing::info!(
            url = %url,
            until = %crate::clock::ms_to_rfc3339(until_ms),
            "host closed (back-off or Retry-After): not read in this pass"
        );
        return Ok(Document::Unread);
    }
    let robots = super::robots_rules::rules(ctx, site, &origin).await;
    if ctx.is_stopping() || ctx.pool.closed_beyond_patience(&origin).is_some() {
        return Ok(Document::Unread); // robots.txt was not asked: nothing is known yet
    }
    if !robots.is_allowed(url.as_str()) {
        let why = if robots.retry_soon() {
            "robots.txt could not be read (5xx, unreachable or a refused address): the host is off limits until it can"
        } else {
            "disallowed by robots.txt: not fetched"
        };
        record(ctx, site, "sitemap", url.as_str(), why.into()).await?;
        return Ok(Document::Unread);
    }
    // (Stored with what named it: a robots.txt line's root was stored as the schedule's,
    // and taken for one the schedule no longer names, `discovery_due`.)
    let from = named_by.unwrap_or("schedule");
    let Some(mut row) = document_row(ctx, site, url, "sitemap", from, None).await? else {
        return Ok(Document::Unread);
    };
    if named_by.is_none()
        && let Some(declared) = schedule_sitemap(ctx, site, url, &row).await?
    {
        row = declared;
    }
    if row.kind == "page" {
        // A page (a urlset listed it first, or a seed; or another site's) that a robots.txt
        // or an index names as a sitemap: a sitemap from now on if it reads as one, its read
        // recorded only then.
        let pass = (
            listed.pass_started_ms(),
            next_discovery(site, ctx.clock.now_ms()),
        );
        let named = (url, named_by);
        let probed = probe_page(ctx, site, named, (&row, cross), pass).await?;
        return Ok(match probed {
            Some((body, outcome)) => {
                let (listing, validators) = read_of(ctx, row.id, &outcome);
                Document::Read(body, listing, validators)
            }
            None => Document::Unread,
        });
    }
    if let Some(named_by) = named_by
        && let Some(was) = (row.discovered_from.as_deref())
            .filter(|&was| crate::store::kinds::named_by_schedule(Some(was)))
        && !site.site.sitemaps.contains(url)
    {
        // Stored so before, or a root the schedule took out that this names still: what
        // names it now.
        ctx.store.renamed_by(row.id, was, named_by).await?;
    }
    let now = ctx.clock.now_ms();
    // (From its last answer that gave one, a 2xx or a 304: a failed read since does not
    // start the floor again, helper-122.)
    if let (Some(last), Some(floor)) = (row.copy_ms, row.min_interval_ms)
        && now < last.saturating_add(floor)
    {
        return Ok(Document::Unread); // the server's ttl / max-age has not run out
    }
    if ctx.leasing.is_some()
        && row.last_checked_ms.is_some()
        && row.next_due_ms.is_some_and(|due| due > now)
    {
        // Read at the site's last discovery (by whichever worker held its host then); a
        // worker that starts or gains the host reads it when it is due.
        return Ok(Document::Unread);
    }
    let next = next_discovery(site, now);
    let outcome = fetch_and_record(
        ctx,
        site,
        &CheckRow::from(&row),
        url,
        Method::Get,
        Some(MAX_DOCUMENT_BYTES),
        Some(next),
    )
    .await?;
    if outcome.status == Some(304) {
        return Ok(Document::Unchanged(Box::new(row), ctx.clock.now_ms()));
    }
    let (listing, validators) = read_of(ctx, row.id, &outcome);
    Ok(outcome
        .body
        .filter(|_| outcome.status.is_some_and(|s| (200..300).contains(&s)))
        .map_or(Document::Unread, |b| {
            Document::Read(b.to_vec(), listing, validators)
        }))
}

/// The read of sitemap `sitemap_id` that gave `outcome`, now, and its validators.
fn read_of(ctx: &Context, sitemap_id: i64, outcome: &FetchOutcome) -> (Listing, ReadValidators) {
    let listing = Listing {
        sitemap_id,
        read_ms: ctx.clock.now_ms(),
    };
    let validators = ReadValidators {
        etag: outcome.etag.clone(),
        last_modified: outcome.last_modified.clone(),
        min_interval_ms: super::fetching::max_age_ms(outcome),
    };
    (listing, validators)
}

/// Reads one sitemap (`named_by`: a robots.txt or an index, else the schedule): records its
/// pages and returns its child sitemaps (`None`: not a sitemap but one of the site's feeds).
async fn read_sitemap(
    ctx: &Context,
    site: &SiteState,
    (url, named_by): (&Url, Option<&str>),
    cross: &[String],
    listed: &mut Listings,
) -> anyhow::Result<Option<Vec<Url>>> {
    let (body, listing, validators) =
        match fetch_document(ctx, site, url, named_by, (cross, listed)).await? {
            Document::Read(body, listing, validators) => (body, listing, validators),
            Document::Feed => return Ok(None),
            Document::Unchanged(row, read_ms) => {
                listed.unchanged(&row, read_ms);
                return children_of(ctx, url).await.map(Some);
            }
            // Failed or not asked: the children read last time are still the children.
            Document::Unread => return children_of(ctx, url).await.map(Some),
        };
    let mut context = SitemapContext::new(url.clone(), ctx.clock.now());
    context.cross_submitted_hosts = cross.to_vec();
    let doc = sitemap::parse(&body[..], &context);
    let mut refused = Vec::new();
    for error in &doc.errors {
        record(ctx, site, "sitemap", url.as_str(), error.to_string()).await?;
        match error {
            sitemap::SitemapError::ForeignHost { loc } => refused.push((
                loc.clone(),
                RefusalReason::CrossHost,
                "on another host than the sitemap and not cross-submitted by its robots.txt".into(),
            )),
            sitemap::SitemapError::OutsideDirectory { loc, dir } => refused.push((
                loc.clone(),
                RefusalReason::CrossHost,
                format!("outside the sitemap's directory {dir}"),
            )),
            _ => {}
        }
    }
    if doc.errors_dropped > 0 {
        let message = format!(
            "{} more problems with single URLs were counted, not recorded (the first {} are)",
            doc.errors_dropped,
            sitemap::MAX_ERRORS
        );
        record(ctx, site, "sitemap", url.as_str(), message).await?;
    }
    ctx.refuse(site, Some(url.as_str()), refused).await?;
    let pages = doc.urls.iter().filter_map(|entry| {
        let loc = Url::parse(&entry.loc).ok()?;
        Some((
            loc,
            entry.lastmod.map(|t| t.timestamp_millis()),
            entry.changefreq.map(|c| c.as_str().to_string()),
            entry.priority.map(f64::from),
        ))
    });
    let pass_started_ms = listed.pass_started_ms();
    let added = add_pages(
        ctx,
        site,
        pages,
        url.as_str(),
        Some(listing),
        pass_started_ms,
    )
    .await?;
    let children: Vec<Url> = doc
        .sitemaps
        .iter()
        .filter_map(|c| Url::parse(&c.loc).ok())
        .collect();
    let mut named = Vec::with_capacity(children.len());
    for child in &children {
        named.push(Discovered {
            url: child.to_string(),
            site_id: site.id,
            host_id: ctx.store.host_id(&origin_of(child)).await?,
            kind: "sitemap",
            discovered_from: Some(url.to_string()),
            lastmod_ms: None,
            lastmod_believed: true,
            changefreq: None,
            priority: None,
        });
    }
    // An index's children, like a urlset's pages, are stored before the read's validators: a
    // 304 later gives back only the children stored.
    if !named.is_empty() {
        ctx.store
            .upsert_discovered(&named, ctx.clock.now_ms())
            .await?;
    }
    ctx.store.set_listed_at(listing, &validators).await?;
    for (url, lastmod_ms) in added {
        if let Some(lastmod_ms) = lastmod_ms {
            listed.listed(url, listing.read_ms, lastmod_ms);
        }
    }
    info!(sitemap = %url, pages = doc.urls.len(), children = children.len(), errors = doc.errors.len(), "sitemap read");
    Ok(Some(children))
}

/// Records a discovery problem and counts it.
async fn record(
    ctx: &Context,
    site: &SiteState,
    scope: &'static str,
    url: &str,
    message: String,
) -> anyhow::Result<()> {
    warn!(site = %site.site.name, url, %message, "discovery problem");
    super::fetching::record_error_in(ctx, scope, site, url, message).await
}
