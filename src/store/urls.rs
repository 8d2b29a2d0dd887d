//! URLs: discovery upserts, the summary row updated with each check, and the due-URL queries the
//! frontier is built from.

use std::sync::{Arc, LazyLock};

use super::Store;
use super::backend::BindReal;
use super::batch::{placeholder_rows, power_of_two_chunks, text_for, texts};

/// A URL's summary row.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct UrlRow {
    /// Row id.
    pub id: i64,
    /// The URL.
    pub url: String,
    /// Its site.
    pub site_id: i64,
    /// Its host.
    pub host_id: i64,
    /// `page`, `sitemap` or `feed`.
    pub kind: String,
    /// When it was first discovered.
    pub discovered_ms: i64,
    /// Latest sitemap lastmod.
    pub lastmod_ms: Option<i64>,
    /// Sitemap changefreq.
    pub changefreq: Option<String>,
    /// Sitemap priority.
    pub priority: Option<f64>,
    /// 1 when robots.txt disallows it.
    pub disallowed: i64,
    /// Checks so far.
    pub checks: i64,
    /// Checks that saw a change.
    pub changes: i64,
    /// Last check time.
    pub last_checked_ms: Option<i64>,
    /// Last HTTP status.
    pub last_status: Option<i64>,
    /// Last error, cleared by a successful check.
    pub last_error: Option<String>,
    /// When a change was last seen.
    pub last_changed_ms: Option<i64>,
    /// Validators of the last good response.
    pub etag: Option<String>,
    /// Raw Last-Modified of the last good response.
    pub last_modified: Option<String>,
    /// Content fingerprint of our copy.
    pub fingerprint: Option<i64>,
    /// A change announced by a feed or lastmod after our copy.
    pub known_change_ms: Option<i64>,
    /// Server floor on the revisit interval.
    pub min_interval_ms: Option<i64>,
    /// Estimated changes per day.
    pub rate_per_day: Option<f64>,
    /// Lower end of its credible interval.
    pub rate_low: Option<f64>,
    /// Upper end.
    pub rate_high: Option<f64>,
    /// Gamma shape of the posterior.
    pub rate_shape: Option<f64>,
    /// Gamma rate parameter (days) of the posterior.
    pub rate_scale: Option<f64>,
    /// Planner weight.
    pub weight: f64,
    /// Planned visits per day.
    pub planned_per_day: Option<f64>,
    /// When it is next due.
    pub next_due_ms: Option<i64>,
    /// The scheduler's folded evidence ([`crate::estimate::Stats`] as JSON).
    pub stats: Option<String>,
    /// Content fingerprint of our copy's main text (migration 0012).
    #[sqlx(default)]
    pub content_fingerprint: Option<i64>,
    /// Checks that saw the main content change (migration 0012).
    #[sqlx(default)]
    pub content_changes: i64,
    /// What named it first: the sitemap, feed, seed or robots.txt.
    #[sqlx(default)]
    pub discovered_from: Option<String>,
}

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
    /// Sitemap changefreq.
    pub changefreq: Option<String>,
    /// Sitemap priority.
    pub priority: Option<f64>,
}

/// A site's sitemap as stored ([`Store::sitemaps_of_site`]).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct StoredSitemap {
    /// Its URL.
    pub url: String,
    /// When it was last read (clock ms), if ever.
    pub last_checked_ms: Option<i64>,
    /// When it is next due, if set.
    pub next_due_ms: Option<i64>,
    /// What named it first: `schedule`, `robots`, the index that listed it, or the URL that
    /// redirected to it.
    pub discovered_from: Option<String>,
}

/// How a check changes a URL's summary.
#[derive(Debug, Clone, Default)]
pub struct SummaryUpdate {
    /// Whether the response carried a usable copy (2xx or 304): only then are validators and
    /// the fingerprint replaced.
    pub got_copy: bool,
    /// New ETag.
    pub etag: Option<String>,
    /// New raw Last-Modified.
    pub last_modified: Option<String>,
    /// New fingerprint.
    pub fingerprint: Option<u64>,
    /// New content fingerprint.
    pub content_fingerprint: Option<u64>,
    /// Server floor on the revisit interval.
    pub min_interval_ms: Option<i64>,
    /// The estimate after this check.
    pub rate: Option<crate::estimate::RateEstimate>,
    /// Planned visits per day.
    pub planned_per_day: Option<f64>,
    /// Next due time.
    pub next_due_ms: i64,
    /// The folded evidence after this check (JSON).
    pub stats: Option<String>,
    /// The host's validator trust after this check, when the check taught it something:
    /// (host id, JSON), written in the check's transaction.
    pub host_trust: Option<(i64, String)>,
    /// When the check was handed to the store (clock ms), for other workers reading what
    /// changed since their last read ([`UrlScope::WrittenAfter`]); its request may have
    /// started long before.
    pub written_ms: Option<i64>,
}

impl Store {
    /// Inserts discovered URLs (new ones due at `now_ms`) and refreshes the hints of known ones,
    /// in one transaction. A lastmod newer than our last check marks a known change and makes the
    /// URL due now. Returns the ids of the URLs that were new.
    pub async fn upsert_discovered(
        &self,
        found: &[Discovered],
        now_ms: i64,
    ) -> sqlx::Result<Vec<i64>> {
        self.write("upsert_discovered", |mut tx| async move {
            let mut new_ids = Vec::new();
            for d in found {
                let existing: Option<(i64, Option<i64>)> =
                    sqlx::query_as("SELECT id, last_checked_ms FROM urls WHERE url = $1")
                        .bind(&d.url)
                        .fetch_optional(&mut *tx)
                        .await?;
                match existing {
                    None => {
                        // Another worker on the same database may insert it first: then it
                        // is theirs, not new here.
                        let id: Option<i64> = sqlx::query_scalar(
                            "INSERT INTO urls (url, site_id, host_id, kind, discovered_ms,
                                 discovered_from, lastmod_ms, changefreq, priority, next_due_ms)
                             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
                             ON CONFLICT (url) DO NOTHING RETURNING id",
                        )
                        .bind(&d.url)
                        .bind(d.site_id)
                        .bind(d.host_id)
                        .bind(d.kind)
                        .bind(now_ms)
                        .bind(&d.discovered_from)
                        .bind(d.lastmod_ms)
                        .bind(&d.changefreq)
                        .bind_real(d.priority)
                        .bind(now_ms)
                        .fetch_optional(&mut *tx)
                        .await?;
                        new_ids.extend(id);
                    }
                    Some((id, last_checked)) => {
                        let known_change = d
                            .lastmod_ms
                            .filter(|&m| last_checked.is_some_and(|checked| m > checked));
                        sqlx::query(
                            "UPDATE urls SET
                                 lastmod_ms = CASE WHEN COALESCE(lastmod_ms, 0) > COALESCE($1, 0)
                                     THEN COALESCE(lastmod_ms, 0) ELSE COALESCE($1, 0) END,
                                 changefreq = COALESCE($2, changefreq),
                                 priority = COALESCE($3, priority),
                                 known_change_ms = COALESCE($4, known_change_ms),
                                 next_due_ms = CASE WHEN $5 IS NOT NULL
                                     THEN CASE WHEN COALESCE(next_due_ms, $6) < $7
                                         THEN COALESCE(next_due_ms, $6) ELSE $7 END
                                     ELSE next_due_ms END
                             WHERE id = $8",
                        )
                        .bind(d.lastmod_ms)
                        .bind(&d.changefreq)
                        .bind_real(d.priority)
                        .bind(known_change)
                        .bind(known_change)
                        .bind(now_ms)
                        .bind(now_ms)
                        .bind(id)
                        .execute(&mut *tx)
                        .await?;
                    }
                }
            }
            Ok((tx, new_ids))
        })
        .await
    }

    /// Sets a URL's server floor on its revisit interval (a feed's ttl, say).
    pub async fn set_min_interval(&self, url_id: i64, min_interval_ms: i64) -> sqlx::Result<()> {
        self.write("set_min_interval", |mut tx| async move {
            sqlx::query("UPDATE urls SET min_interval_ms = $1 WHERE id = $2")
                .bind(min_interval_ms)
                .bind(url_id)
                .execute(&mut *tx)
                .await?;
            Ok((tx, ()))
        })
        .await
    }

    /// The child sitemaps an index named when it was last read.
    pub async fn children_of(&self, sitemap_url: &str) -> sqlx::Result<Vec<String>> {
        sqlx::query_scalar(
            "SELECT url FROM urls WHERE kind = 'sitemap' AND discovered_from = $1 ORDER BY id",
        )
        .bind(sitemap_url)
        .fetch_all(self.reader())
        .await
    }

    /// A site's sitemaps as stored: URL, when last checked and when next due (clock ms).
    pub async fn sitemaps_of_site(&self, site_id: i64) -> sqlx::Result<Vec<StoredSitemap>> {
        sqlx::query_as(
            "SELECT url, last_checked_ms, next_due_ms, discovered_from FROM urls
             WHERE site_id = $1 AND kind = 'sitemap' ORDER BY id",
        )
        .bind(site_id)
        .fetch_all(self.reader())
        .await
    }

    /// Marks a URL as disallowed by robots.txt (it is then never fetched) or allowed again.
    pub async fn set_disallowed(&self, url_id: i64, disallowed: bool) -> sqlx::Result<()> {
        self.write("set_disallowed", |mut tx| async move {
            sqlx::query("UPDATE urls SET disallowed = $1 WHERE id = $2")
                .bind(i64::from(disallowed))
                .bind(url_id)
                .execute(&mut *tx)
                .await?;
            Ok((tx, ()))
        })
        .await
    }

    /// All URLs of a site at once (the refresher reads them a page at a time: [`UrlPages`]).
    pub async fn urls_of_site(&self, site_id: i64) -> sqlx::Result<Vec<UrlRow>> {
        sqlx::query_as("SELECT * FROM urls WHERE site_id = $1 ORDER BY id")
            .bind(site_id)
            .fetch_all(self.reader())
            .await
    }

    /// How many pages and feeds there are ([`UrlScope::Schedulable`]'s rows): a start reserves
    /// the scheduler's room for them at once (rows of sites no longer in the schedules count
    /// too: room reserved and never filled is address space, not resident memory).
    pub async fn count_schedulable(&self) -> sqlx::Result<i64> {
        sqlx::query_scalar("SELECT COUNT(*) FROM urls WHERE kind IN ('page', 'feed')")
            .fetch_one(self.reader())
            .await
    }

    /// One URL by its row id.
    pub async fn url_row_by_id(&self, url_id: i64) -> sqlx::Result<Option<UrlRow>> {
        sqlx::query_as("SELECT * FROM urls WHERE id = $1")
            .bind(url_id)
            .fetch_optional(self.reader())
            .await
    }

    /// One URL by its text.
    pub async fn url_row(&self, url: &str) -> sqlx::Result<Option<UrlRow>> {
        sqlx::query_as("SELECT * FROM urls WHERE url = $1")
            .bind(url)
            .fetch_optional(self.reader())
            .await
    }

    /// Sets the next read of every sitemap of a site (`None`: never again: no `rediscover`).
    pub async fn set_sitemaps_due(&self, site_id: i64, due_ms: Option<i64>) -> sqlx::Result<()> {
        self.write("set_sitemaps_due", |mut tx| async move {
            sqlx::query("UPDATE urls SET next_due_ms = $1 WHERE site_id = $2 AND kind = 'sitemap'")
                .bind(due_ms)
                .bind(site_id)
                .execute(&mut *tx)
                .await?;
            Ok((tx, ()))
        })
        .await
    }

    /// Sets when the sitemaps `urls` of a site are next due (with several workers, each sets the
    /// sitemaps on the hosts it holds, which it read).
    pub async fn set_sitemaps_due_of(
        &self,
        site_id: i64,
        urls: &[String],
        due_ms: Option<i64>,
    ) -> sqlx::Result<()> {
        let urls = urls.to_vec();
        self.write("set_sitemaps_due_of", move |mut tx| {
            let urls = urls.clone();
            async move {
                for url in &urls {
                    sqlx::query(
                        "UPDATE urls SET next_due_ms = $1
                         WHERE site_id = $2 AND kind = 'sitemap' AND url = $3",
                    )
                    .bind(due_ms)
                    .bind(site_id)
                    .bind(url)
                    .execute(&mut *tx)
                    .await?;
                }
                Ok((tx, ()))
            }
        })
        .await
    }

    /// Writes re-planned rates and due times in one transaction (weights belong to the dedup
    /// engine, which may change them while a plan is being solved), by multi-row statements
    /// ([`super::batch`]). The refresher hands a large plan over a few thousand URLs at a time
    /// (`Ledger::plans`), so that neither a copy of every URL's plan nor one long transaction
    /// holding up the checks' commits is needed.
    pub async fn save_plan(&self, rows: Vec<PlanUpdate>) -> sqlx::Result<()> {
        // Grouped like the checks' writes, so that it commits after every check queued before it
        // (a check's older plan must not overwrite this one).
        let rows = Arc::new(rows);
        self.write_grouped("save_plan", move |mut tx| {
            let rows = rows.clone();
            async move {
                let mut chunks = Vec::new();
                power_of_two_chunks(&rows, &mut chunks);
                for chunk in chunks {
                    let mut query = sqlx::query(text_for(&SAVE_PLANS, chunk.len()));
                    for row in chunk {
                        query = query
                            .bind(row.url_id)
                            .bind(row.planned_per_day)
                            .bind(row.next_due_ms)
                            .bind(row.watched.map(|w| w.0))
                            .bind(row.watched.map(|w| w.1));
                    }
                    query.execute(&mut *tx).await?;
                }
                Ok((tx, ()))
            }
        })
        .await
    }
}

static SAVE_PLANS: LazyLock<Vec<Arc<str>>> = LazyLock::new(|| {
    texts(|n| {
        format!(
            "WITH v(id, planned_per_day, next_due_ms, watched_from_ms, watched_until_ms)
                 AS (VALUES {})
             UPDATE urls SET planned_per_day = v.planned_per_day, next_due_ms = v.next_due_ms,
                 watched_from_ms = COALESCE(v.watched_from_ms, urls.watched_from_ms),
                 watched_until_ms = COALESCE(v.watched_until_ms, urls.watched_until_ms)
             FROM v WHERE urls.id = v.id",
            placeholder_rows(n, 5)
        )
    })
});

/// A re-planned URL.
#[derive(Debug, Clone)]
pub struct PlanUpdate {
    /// The URL.
    pub url_id: i64,
    /// Planned visits per day.
    pub planned_per_day: f64,
    /// Next due time.
    pub next_due_ms: i64,
    /// A span after its copy over which it is known not to have changed (a quiet feed). A
    /// span the row already has is kept when there is none now: judging a copy ignores a span
    /// from before it.
    pub watched: Option<(i64, i64)>,
}

/// Which URL rows a [`UrlPages`] reads.
#[derive(Debug, Clone, Copy)]
pub enum UrlScope {
    /// The pages and feeds of every site (the scheduler is rebuilt from these at start).
    Schedulable,
    /// Every URL of one site (by row id).
    Site(i64),
    /// The pages and feeds whose check was written after a clock instant (ms), by any
    /// worker (`urls.written_ms`).
    WrittenAfter(i64),
}

/// URL rows read a page at a time by id, so that filling the scheduler never holds every row
/// at once beside it: `while let Some(rows) = pages.next(&store).await? { … }`.
#[derive(Debug)]
pub struct UrlPages {
    scope: UrlScope,
    per_page: i64,
    after_id: i64,
    done: bool,
}

impl UrlPages {
    /// The rows of `scope`, `per_page` at a time.
    pub fn new(scope: UrlScope, per_page: i64) -> Self {
        Self {
            scope,
            per_page: per_page.max(1),
            after_id: 0,
            done: false,
        }
    }

    /// The rows of `scope` after row id `after_id` (those added since a row was read).
    pub fn after(scope: UrlScope, per_page: i64, after_id: i64) -> Self {
        Self {
            after_id,
            ..Self::new(scope, per_page)
        }
    }

    /// The next page of rows (by id), or `None` once every row was read.
    pub async fn next(&mut self, store: &Store) -> sqlx::Result<Option<Vec<UrlRow>>> {
        if self.done {
            return Ok(None);
        }
        let query = match self.scope {
            UrlScope::Schedulable => sqlx::query_as(
                "SELECT * FROM urls WHERE kind IN ('page', 'feed') AND id > $1 ORDER BY id LIMIT $2",
            ),
            UrlScope::Site(site_id) => sqlx::query_as(
                "SELECT * FROM urls WHERE site_id = $1 AND id > $2 ORDER BY id LIMIT $3",
            )
            .bind(site_id),
            UrlScope::WrittenAfter(after_ms) => sqlx::query_as(
                "SELECT * FROM urls WHERE kind IN ('page', 'feed') AND written_ms > $1
                 AND id > $2 ORDER BY id LIMIT $3",
            )
            .bind(after_ms),
        };
        let rows: Vec<UrlRow> = query
            .bind(self.after_id)
            .bind(self.per_page)
            .fetch_all(store.reader())
            .await?;
        self.done = (rows.len() as i64) < self.per_page;
        match rows.last() {
            Some(last) => {
                self.after_id = last.id;
                Ok(Some(rows))
            }
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sites::SiteRecord;

    /// Ids of every row `scope` reads, `per_page` at a time, and the pages' sizes.
    async fn read_all(store: &Store, scope: UrlScope, per_page: i64) -> (Vec<i64>, Vec<usize>) {
        let mut pages = UrlPages::new(scope, per_page);
        let (mut ids, mut sizes) = (Vec::new(), Vec::new());
        while let Some(rows) = pages.next(store).await.unwrap() {
            sizes.push(rows.len());
            ids.extend(rows.iter().map(|r| r.id));
        }
        (ids, sizes)
    }

    #[tokio::test]
    async fn pages_read_every_row_of_their_scope_once_in_id_order() {
        let (stores, _dir) = crate::store::test_support::stores(
            "pages_read_every_row_of_their_scope_once_in_id_order",
        )
        .await;
        for store in stores {
            let mut sites = Vec::new();
            for name in ["a", "b"] {
                let site = SiteRecord {
                    name,
                    weight: 1.0,
                    requests_per_day: 100.0,
                    source_file: None,
                };
                sites.push(store.upsert_site(&site, 0).await.unwrap());
            }
            let host_id = store.host_id("http://a.test:80").await.unwrap();
            // Sites a and b take turns; every third URL of a is a sitemap.
            let found: Vec<Discovered> = (0..7)
                .map(|i| Discovered {
                    url: format!("http://a.test/{i}"),
                    site_id: sites[i % 2],
                    host_id,
                    kind: if i % 6 == 0 { "sitemap" } else { "page" },
                    discovered_from: None,
                    lastmod_ms: None,
                    changefreq: None,
                    priority: None,
                })
                .collect();
            let ids = store.upsert_discovered(&found, 1_000).await.unwrap();
            let of = |keep: &dyn Fn(usize) -> bool| -> Vec<i64> {
                (0..7).filter(|&i| keep(i)).map(|i| ids[i]).collect()
            };
            let (site_a, sizes) = read_all(&store, UrlScope::Site(sites[0]), 2).await;
            assert_eq!(site_a, of(&|i| i % 2 == 0));
            assert_eq!(
                sizes,
                [2, 2],
                "a full last page is followed by an empty read, not a page"
            );
            let (schedulable, sizes) = read_all(&store, UrlScope::Schedulable, 4).await;
            assert_eq!(schedulable, of(&|i| i % 6 != 0));
            assert_eq!(sizes, [4, 1]);
            // What a start reserves room for: the same rows.
            assert_eq!(
                store.count_schedulable().await.unwrap(),
                schedulable.len() as i64
            );
            store.close().await;
        }
    }

    #[tokio::test]
    async fn a_plan_of_many_urls_is_written_by_chunks_every_row_its_own() {
        let (stores, _dir) = crate::store::test_support::stores("plan_of_many_urls").await;
        for store in stores {
            let site = SiteRecord {
                name: "s",
                weight: 1.0,
                requests_per_day: 100.0,
                source_file: None,
            };
            let site_id = store.upsert_site(&site, 0).await.unwrap();
            let host_id = store.host_id("http://a.test:80").await.unwrap();
            // 100 rows: chunks of 64, 32 and 4.
            let found: Vec<Discovered> = (0..100)
                .map(|i| Discovered {
                    url: format!("http://a.test/{i}"),
                    site_id,
                    host_id,
                    kind: "page",
                    discovered_from: None,
                    lastmod_ms: None,
                    changefreq: None,
                    priority: None,
                })
                .collect();
            let ids = store.upsert_discovered(&found, 1_000).await.unwrap();
            let plans: Vec<PlanUpdate> = ids
                .iter()
                .enumerate()
                .map(|(i, &url_id)| PlanUpdate {
                    url_id,
                    planned_per_day: i as f64 + 0.5,
                    next_due_ms: 10_000 + i as i64,
                    watched: (i % 3 == 0).then_some((i as i64, 2 * i as i64)),
                })
                .collect();
            store.save_plan(plans).await.unwrap();
            let status = store.url_status(None).await.unwrap();
            for (i, &id) in ids.iter().enumerate() {
                let row = status.iter().find(|r| r.url_id == id).unwrap();
                assert_eq!(
                    (row.planned_per_day, row.next_due_ms),
                    (Some(i as f64 + 0.5), Some(10_000 + i as i64)),
                    "row {i}"
                );
                let watched = (row.watched_from_ms, row.watched_until_ms);
                let want = (i % 3 == 0).then_some((i as i64, 2 * i as i64)).unzip();
                assert_eq!(watched, want, "row {i}");
            }
            store.close().await;
        }
    }
}
