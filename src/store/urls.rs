//! URL rows as the refresher reads them: one by id or text, a site's at once, and every row of
//! a scope a page at a time (the scheduler is filled from these). What discovery writes is in
//! [`super::discovered`], what checks and plans write in [`super::summary`].

use super::Store;

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
    /// The floor on the revisit interval: the server's (Cache-Control max-age; a sitemap's
    /// Retry-After too),
    /// or for a feed its `ttl` if longer.
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
    /// For a page: the row id of the sitemap that listed it at that sitemap's last read with
    /// a body ([`super::discovered::Listing`]). For a sitemap: nothing.
    #[sqlx(default)]
    pub listed_in: Option<i64>,
    /// For a page: when `listed_in` listed it. For a sitemap: when it last listed its pages
    /// (a page it lists still was listed then or later).
    #[sqlx(default)]
    pub listed_ms: Option<i64>,
    /// The `lastmod` `listed_in` gave the page then (`lastmod_ms` is the newest of any source).
    #[sqlx(default)]
    pub listed_lastmod_ms: Option<i64>,
    /// When the copy was taken: the last check that left one (migration 0025; `None`: no copy).
    #[sqlx(default)]
    pub copy_ms: Option<i64>,
    /// The feed (its row id) whose announcements the page waits for instead of its plan
    /// (migration 0026; `None`: its plan alone decides).
    #[sqlx(default)]
    pub waits_for_feed_id: Option<i64>,
    /// Its checks that failed in a row, up to the last, as the scheduler counts them
    /// ([`crate::scheduler::Seen::Failed`]; migration 0027).
    #[sqlx(default)]
    pub failures: i64,
    /// For a feed: since when it is taken to date its entries at each read (migration 0028;
    /// `None`: it is not).
    #[sqlx(default)]
    pub stamps_entries_since_ms: Option<i64>,
    /// For a feed: what its reads showed of that ([`super::feed_reads::FeedReads`] as JSON;
    /// migration 0028).
    #[sqlx(default)]
    pub last_read_json: Option<String>,
}

/// The part of a URL's row a check reads ([`Store::check_row`]): what it is, where, and the
/// validators and fingerprints of the copy it compares with. A check reads one per request,
/// so it leaves out the rest of the row (the estimate, the plan, the evidence as JSON): every
/// column read is a value copied out of SQLite and again into the driver's row.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct CheckRow {
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
    /// Sitemap priority.
    pub priority: Option<f64>,
    /// 1 when robots.txt disallowed it at the last verdict.
    pub disallowed: i64,
    /// When the copy was taken (`None`: no copy to compare with or to ask conditionally).
    pub copy_ms: Option<i64>,
    /// Validators of the last good response.
    pub etag: Option<String>,
    /// Raw Last-Modified of the last good response.
    pub last_modified: Option<String>,
    /// Fingerprint of our copy's bytes.
    pub fingerprint: Option<i64>,
    /// Fingerprint of our copy's main text.
    pub content_fingerprint: Option<i64>,
    /// Planner weight.
    pub weight: f64,
    /// The server's floor on its next check (ms), as the last answer that said one left it.
    pub min_interval_ms: Option<i64>,
}

impl From<&UrlRow> for CheckRow {
    fn from(row: &UrlRow) -> Self {
        Self {
            id: row.id,
            url: row.url.clone(),
            site_id: row.site_id,
            host_id: row.host_id,
            kind: row.kind.clone(),
            priority: row.priority,
            disallowed: row.disallowed,
            copy_ms: row.copy_ms,
            etag: row.etag.clone(),
            last_modified: row.last_modified.clone(),
            fingerprint: row.fingerprint,
            content_fingerprint: row.content_fingerprint,
            weight: row.weight,
            min_interval_ms: row.min_interval_ms,
        }
    }
}

#[cfg(test)]
impl UrlRow {
    /// A row of kind `kind` (`page`, `feed`, `sitemap`) at `http://a.test/{id}`, on site 1 and
    /// host 1, never checked, for tests that hand rows to the refresher's parts.
    pub fn for_tests(id: i64, kind: &str) -> Self {
        Self {
            id,
            url: format!("http://a.test/{id}"),
            site_id: 1,
            host_id: 1,
            kind: kind.to_string(),
            discovered_ms: 0,
            lastmod_ms: None,
            changefreq: None,
            priority: None,
            disallowed: 0,
            checks: 0,
            changes: 0,
            last_checked_ms: None,
            last_status: None,
            last_error: None,
            last_changed_ms: None,
            etag: None,
            last_modified: None,
            fingerprint: None,
            known_change_ms: None,
            min_interval_ms: None,
            rate_per_day: None,
            rate_low: None,
            rate_high: None,
            rate_shape: None,
            rate_scale: None,
            weight: 1.0,
            planned_per_day: None,
            next_due_ms: None,
            stats: None,
            content_fingerprint: None,
            content_changes: 0,
            discovered_from: None,
            listed_in: None,
            listed_ms: None,
            listed_lastmod_ms: None,
            copy_ms: None,
            waits_for_feed_id: None,
            failures: 0,
            stamps_entries_since_ms: None,
            last_read_json: None,
        }
    }
}

impl Store {
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

    /// What a check reads of one URL, by its row id ([`CheckRow`]).
    pub async fn check_row(&self, url_id: i64) -> sqlx::Result<Option<CheckRow>> {
        sqlx::query_as(
            "SELECT id, url, site_id, host_id, kind, priority, disallowed, copy_ms, etag,
                 last_modified, fingerprint, content_fingerprint, weight, min_interval_ms
             FROM urls WHERE id = $1",
        )
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
    use crate::store::discovered::Discovered;

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
            let sites = crate::store::test_support::sites(&store, &["a", "b"]).await;
            let host_id = store.host_id("http://a.test:80").await.unwrap();
            // Sites a and b take turns; every third URL of a is a sitemap.
            let found: Vec<Discovered> = (0..7)
                .map(|i| Discovered {
                    kind: if i % 6 == 0 { "sitemap" } else { "page" },
                    ..crate::store::test_support::page(
                        &format!("http://a.test/{i}"),
                        sites[i % 2],
                        host_id,
                    )
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
}
