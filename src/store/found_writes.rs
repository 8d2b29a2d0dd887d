//! What discovery writes for the URLs a sitemap, feed or robots.txt named: new URLs inserted,
//! known ones given the hints they were named with, a chunk of URLs at a time.
//!
//! A chunk ([`super::batch`]: distinct URLs, a power of two of at most 64) takes three
//! statements: one `SELECT` of the URLs already known, one multi-row `INSERT` of the new ones
//! and one `UPDATE … FROM (VALUES …)` of the known ones, where a statement a URL (two, a read
//! and a write) made a rediscovery of a large sitemap cost two round trips to the writer's
//! connection per URL it listed.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::backend::BindReal;
use super::batch::{
    Texts, distinct_chunks, placeholder_rows, power_of_two_chunks, text_for, texts,
};
use super::writer::WriteTx;

/// A URL found by discovery.
#[derive(Debug, Clone)]
pub struct Discovered {
    /// The URL (normalised).
    pub url: String,
    /// The site that declared it.
    pub site_id: i64,
    /// Its host.
    pub host_id: i64,
    /// `page`, `sitemap` or `feed`.
    pub kind: &'static str,
    /// What named it.
    pub discovered_from: Option<String>,
    /// Sitemap lastmod, if any (already filtered: never in the future).
    pub lastmod_ms: Option<i64>,
    /// Whether a `lastmod` newer than the copy is a known change: not on a host whose newer
    /// `lastmod`s the scheduler has found to be false alarms (a sitemap stamping each with
    /// the time it is read), where a page would otherwise show as known stale until checked.
    pub lastmod_believed: bool,
    /// Sitemap changefreq.
    pub changefreq: Option<String>,
    /// Sitemap priority.
    pub priority: Option<f64>,
}

/// When the URLs of one write were found, and what they were listed in.
#[derive(Debug, Clone, Copy)]
pub(super) struct Found {
    /// When they were found (clock ms): a new URL's `discovered_ms`.
    pub now_ms: i64,
    /// When a new URL is due.
    pub new_due_ms: i64,
    /// The sitemap read that listed the pages among them (row id) and when it was read.
    pub listing: Option<(i64, i64)>,
}

/// Writes `found` in `tx`, in order; returns the ids of the URLs that were new, in that order.
pub(super) async fn upsert_found(
    mut tx: WriteTx,
    found: &[Discovered],
    when: Found,
) -> sqlx::Result<(WriteTx, Vec<i64>)> {
    let mut new_ids = Vec::new();
    for chunk in distinct_chunks(found, |d| d.url.as_str()) {
        let known = known_of(&mut tx, chunk).await?;
        let (old, new): (Vec<&Discovered>, Vec<&Discovered>) =
            chunk.iter().partition(|d| known.contains_key(&d.url));
        let mut inserted = HashMap::new();
        let mut pieces = Vec::new();
        power_of_two_chunks(&new, &mut pieces);
        for piece in pieces.drain(..) {
            inserted.extend(insert_new(&mut tx, piece, when).await?);
        }
        for d in &new {
            match inserted.get(&d.url) {
                Some(&id) => new_ids.push(id),
                // Another worker on the same database inserted it first: then it is theirs,
                // not new here, and the listing is this read's.
                None => list_in_theirs(&mut tx, d, when).await?,
            }
        }
        power_of_two_chunks(&old, &mut pieces);
        for piece in pieces {
            update_known(&mut tx, piece, &known, when).await?;
        }
    }
    Ok((tx, new_ids))
}

static SELECT_KNOWN: LazyLock<Texts> = LazyLock::new(|| {
    texts(|n| {
        let urls: Vec<String> = (1..=n).map(|i| format!("${i}")).collect();
        format!(
            "SELECT url, id, copy_ms,
                 (SELECT unscheduled_ms FROM sites WHERE sites.id = urls.site_id)
             FROM urls WHERE url IN ({})",
            urls.join(", ")
        )
    })
});

/// A stored URL as discovery finds it again.
struct Known {
    id: i64,
    /// When its copy was taken: a lastmod after it is a known change.
    copy_ms: Option<i64>,
    /// Its site is in none of the schedules loaded: the site naming it takes it over.
    orphaned: bool,
}

/// The URLs of `chunk` already stored, by URL.
async fn known_of(tx: &mut WriteTx, chunk: &[Discovered]) -> sqlx::Result<HashMap<String, Known>> {
    let mut query = sqlx::query_as(text_for(&SELECT_KNOWN, tx, chunk.len()));
    for d in chunk {
        query = query.bind(&d.url);
    }
    let rows: Vec<(String, i64, Option<i64>, Option<i64>)> = query.fetch_all(&mut **tx).await?;
    Ok(rows
        .into_iter()
        .map(|(url, id, copy_ms, unscheduled_ms)| {
            let known = Known {
                id,
                copy_ms,
                orphaned: unscheduled_ms.is_some(),
            };
            (url, known)
        })
        .collect())
}

static INSERT_NEW: LazyLock<Texts> = LazyLock::new(|| {
    texts(|n| {
        format!(
            "INSERT INTO urls (url, site_id, host_id, kind, discovered_ms, discovered_from,
                 lastmod_ms, changefreq, priority, next_due_ms, listed_in, listed_ms,
                 listed_lastmod_ms)
             VALUES {}
             ON CONFLICT (url) DO NOTHING RETURNING url, id",
            placeholder_rows(n, 13)
        )
    })
});

/// The listing of a page `d` (a sitemap named in a urlset keeps its own time).
fn page_listing(d: &Discovered, when: Found) -> Option<(i64, i64)> {
    when.listing.filter(|_| d.kind == "page")
}

/// Inserts the URLs `new` (none stored when read): the ids of those inserted, by URL.
async fn insert_new(
    tx: &mut WriteTx,
    new: &[&Discovered],
    when: Found,
) -> sqlx::Result<Vec<(String, i64)>> {
    let mut query = sqlx::query_as(text_for(&INSERT_NEW, tx, new.len()));
    for d in new {
        let listing = page_listing(d, when);
        query = query
            .bind(&d.url)
            .bind(d.site_id)
            .bind(d.host_id)
            .bind(d.kind)
            .bind(when.now_ms)
            .bind(&d.discovered_from)
            .bind(d.lastmod_ms)
            .bind(&d.changefreq)
            .bind_real(d.priority)
            .bind(when.new_due_ms)
            .bind(listing.map(|(sitemap_id, _)| sitemap_id))
            .bind(listing.map(|(_, read_ms)| read_ms))
            .bind(listing.and(d.lastmod_ms));
    }
    query.fetch_all(&mut **tx).await
}

/// Records the listing of a page another worker inserted first.
async fn list_in_theirs(tx: &mut WriteTx, d: &Discovered, when: Found) -> sqlx::Result<()> {
    let Some((sitemap_id, read_ms)) = page_listing(d, when) else {
        return Ok(());
    };
    sqlx::query(
        "UPDATE urls SET listed_in = $1, listed_ms = $2, listed_lastmod_ms = $3
         WHERE url = $4 AND kind = 'page'",
    )
    .bind(sitemap_id)
    .bind(read_ms)
    .bind(d.lastmod_ms)
    .bind(&d.url)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// What an adopted sitemap or feed forgets ([`update_known`]): its copy, its validators and
/// the server's ttl. A page keeps them all.
const FORGOTTEN_WHEN_ADOPTED: [&str; 4] = ["copy_ms", "etag", "last_modified", "min_interval_ms"];

static UPDATE_KNOWN: LazyLock<Texts> = LazyLock::new(|| {
    let forgotten = FORGOTTEN_WHEN_ADOPTED
        .map(|column| {
            format!(
                "{column} = CASE WHEN v.adopted_by IS NULL OR urls.kind = 'page'
                     THEN urls.{column} END"
            )
        })
        .join(",\n                 ");
    texts(|n| {
        format!(
            "WITH v(id, lastmod_ms, changefreq, priority, known_change_ms, now_ms, listed_in,
                 listed_ms, listed_lastmod_ms, adopted_by) AS (VALUES {})
             UPDATE urls SET
                 site_id = COALESCE(v.adopted_by, urls.site_id),
                 {forgotten},
                 written_ms = CASE WHEN v.adopted_by IS NULL
                     THEN urls.written_ms ELSE v.now_ms END,
                 lastmod_ms = CASE WHEN COALESCE(urls.lastmod_ms, 0) > COALESCE(v.lastmod_ms, 0)
                     THEN COALESCE(urls.lastmod_ms, 0) ELSE COALESCE(v.lastmod_ms, 0) END,
                 changefreq = COALESCE(v.changefreq, urls.changefreq),
                 priority = COALESCE(v.priority, urls.priority),
                 known_change_ms = COALESCE(v.known_change_ms, urls.known_change_ms),
                 next_due_ms = CASE WHEN v.adopted_by IS NOT NULL AND urls.kind <> 'page'
                     THEN v.now_ms
                     WHEN v.known_change_ms IS NOT NULL AND urls.failures = 0
                     THEN CASE WHEN COALESCE(urls.next_due_ms, v.now_ms) < v.now_ms
                         THEN COALESCE(urls.next_due_ms, v.now_ms) ELSE v.now_ms END
                     ELSE urls.next_due_ms END,
                 listed_in = CASE WHEN v.listed_in IS NULL OR urls.kind <> 'page'
                     THEN urls.listed_in ELSE v.listed_in END,
                 listed_ms = CASE WHEN v.listed_in IS NULL OR urls.kind <> 'page'
                     THEN urls.listed_ms ELSE v.listed_ms END,
                 listed_lastmod_ms = CASE WHEN v.listed_in IS NULL OR urls.kind <> 'page'
                     THEN urls.listed_lastmod_ms ELSE v.listed_lastmod_ms END
             FROM v WHERE urls.id = v.id",
            placeholder_rows(n, 10)
        )
    })
});

/// Gives the known URLs `old` the hints they were named with. A lastmod newer than the URL's
/// copy marks a known change and makes the URL due now, unless its last checks failed (its
/// due time is then its retry, which the scheduler alone brings forward: rewritten at every
/// read of a sitemap stamping each `lastmod` with the read's time, it sent a dead page at
/// each restart and `--once` pass, and `explain` showed a past due time). A URL of a site no
/// longer scheduled becomes the naming site's, history and all: a site renamed in its schedule file
/// is a new site to the store, and its URLs would otherwise stay with the old name, which no
/// run plans, and never be fetched again. An adopted sitemap or feed forgets its copy, its
/// validators and the server's ttl, and is due now, so that it is read at once and whole and
/// lists its pages, which are adopted too (a 304 lists nothing; a feed planned weekly would
/// leave the pages only it names with the old name for a week); an adopted row is written now,
/// so other workers read it again.
async fn update_known(
    tx: &mut WriteTx,
    old: &[&Discovered],
    known: &HashMap<String, Known>,
    when: Found,
) -> sqlx::Result<()> {
    let mut query = sqlx::query(text_for(&UPDATE_KNOWN, tx, old.len()));
    for d in old {
        let stored = &known[&d.url];
        let known_change = (d.lastmod_ms)
            .filter(|&m| d.lastmod_believed && stored.copy_ms.is_some_and(|copy| m > copy));
        // The listing goes to pages only, which the statement asks of the stored row's kind.
        let listed_in = when.listing.map(|(sitemap_id, _)| sitemap_id);
        query = query
            .bind(stored.id)
            .bind(d.lastmod_ms)
            .bind(&d.changefreq)
            .bind_real(d.priority)
            .bind(known_change)
            .bind(when.now_ms)
            .bind(listed_in)
            .bind(when.listing.map(|(_, read_ms)| read_ms))
            .bind(listed_in.and(d.lastmod_ms))
            .bind(stored.orphaned.then_some(d.site_id));
    }
    query.execute(&mut **tx).await?;
    Ok(())
}
