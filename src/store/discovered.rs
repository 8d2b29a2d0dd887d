//! What discovery writes to the `urls` table: the URLs sitemaps, feeds and robots.txt name,
//! with their hints (one transaction per batch), the sitemaps of a site and when they are next
//! read, and robots.txt's verdict on a URL.

use super::Store;
use super::backend::BindReal;

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

/// A sitemap's read that listed pages: the sitemap's row id and when it was read (clock ms).
/// Each page it lists records it with the `lastmod` this sitemap gave, so that a 304 of the
/// sitemap later lists again exactly its own pages ([`crate::refresher`]'s listings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listing {
    /// The sitemap's row id.
    pub sitemap_id: i64,
    /// When it was read.
    pub read_ms: i64,
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
        self.upsert(found, now_ms, now_ms, None).await
    }

    /// As [`Store::upsert_discovered`], for what a discovery pass that started at
    /// `pass_started_ms` found: its new URLs are all due at the pass's start, not each when its
    /// sitemap was read, so that when the site's budget binds the frontier gives a site's new
    /// pages out host by host in turns (ties of due time go to the host served longest ago)
    /// rather than the first sitemap's host's whole backlog first; written here, the instant
    /// holds for a worker that takes the hosts over and across a restart. The pages one sitemap
    /// read listed (`listing`) each record it with the `lastmod` this sitemap gave them (none
    /// included); once every page of the read is written, [`Store::set_listed_at`] marks the
    /// sitemap's own row.
    pub async fn upsert_found_in_pass(
        &self,
        found: &[Discovered],
        now_ms: i64,
        pass_started_ms: i64,
        listing: Option<Listing>,
    ) -> sqlx::Result<Vec<i64>> {
        self.upsert(found, now_ms, pass_started_ms.min(now_ms), listing)
            .await
    }

    /// When a sitemap last listed its pages: a page it listed before this and not since is
    /// no longer its own. Written after the pages, so a kill in between leaves every page of
    /// the read still counted (listed at or after the sitemap's older time).
    pub async fn set_listed_at(&self, listing: Listing) -> sqlx::Result<()> {
        self.write("set_listed_at", |mut tx| async move {
            sqlx::query("UPDATE urls SET listed_ms = $1 WHERE id = $2")
                .bind(listing.read_ms)
                .bind(listing.sitemap_id)
                .execute(&mut *tx)
                .await?;
            Ok((tx, ()))
        })
        .await
    }

    async fn upsert(
        &self,
        found: &[Discovered],
        now_ms: i64,
        new_due_ms: i64,
        listing: Option<Listing>,
    ) -> sqlx::Result<Vec<i64>> {
        let (listed_in, listed_ms) = listing.map(|l| (l.sitemap_id, l.read_ms)).unzip();
        self.write("upsert_discovered", |mut tx| async move {
            let mut new_ids = Vec::new();
            for d in found {
                // A listing is a page's: a sitemap named in a urlset keeps its own time.
                let page_listed_in = listed_in.filter(|_| d.kind == "page");
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
                                 discovered_from, lastmod_ms, changefreq, priority, next_due_ms,
                                 listed_in, listed_ms, listed_lastmod_ms)
                             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
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
                        .bind(new_due_ms)
                        .bind(page_listed_in)
                        .bind(page_listed_in.and(listed_ms))
                        .bind(page_listed_in.and(d.lastmod_ms))
                        .fetch_optional(&mut *tx)
                        .await?;
                        new_ids.extend(id);
                        if id.is_none() && page_listed_in.is_some() {
                            // Another worker inserted it first: the listing is this read's.
                            sqlx::query(
                                "UPDATE urls SET listed_in = $1, listed_ms = $2,
                                     listed_lastmod_ms = $3
                                 WHERE url = $4 AND kind = 'page'",
                            )
                            .bind(page_listed_in)
                            .bind(listed_ms)
                            .bind(d.lastmod_ms)
                            .bind(&d.url)
                            .execute(&mut *tx)
                            .await?;
                        }
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
                                     ELSE next_due_ms END,
                                 listed_in = CASE WHEN $8 IS NULL OR kind <> 'page'
                                     THEN listed_in ELSE $9 END,
                                 listed_ms = CASE WHEN $10 IS NULL OR kind <> 'page'
                                     THEN listed_ms ELSE $11 END,
                                 listed_lastmod_ms = CASE WHEN $12 IS NULL OR kind <> 'page'
                                     THEN listed_lastmod_ms ELSE $13 END
                             WHERE id = $14",
                        )
                        .bind(d.lastmod_ms)
                        .bind(&d.changefreq)
                        .bind_real(d.priority)
                        .bind(known_change)
                        .bind(known_change)
                        .bind(now_ms)
                        .bind(now_ms)
                        .bind(listed_in)
                        .bind(listed_in)
                        .bind(listed_in)
                        .bind(listed_ms)
                        .bind(listed_in)
                        .bind(listed_in.and(d.lastmod_ms))
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::urls::UrlRow;

    #[tokio::test]
    async fn a_listing_records_its_sitemap_and_lastmod_and_the_last_one_wins() {
        let (stores, _dir) = crate::store::test_support::stores("listing_records").await;
        for store in stores {
            let (site_id, host_id) = crate::store::test_support::site_and_host(&store).await;
            let found = |url: &str, kind, lastmod_ms| Discovered {
                url: url.to_string(),
                site_id,
                host_id,
                kind,
                discovered_from: Some("schedule".into()),
                lastmod_ms,
                changefreq: None,
                priority: None,
            };
            let sitemaps = store
                .upsert_discovered(
                    &[
                        found("http://a.test/s1.xml", "sitemap", None),
                        found("http://a.test/s2.xml", "sitemap", None),
                    ],
                    0,
                )
                .await
                .unwrap();
            let read = |sitemap_id, read_ms| Listing {
                sitemap_id,
                read_ms,
            };
            let page = "http://a.test/p";
            let listed = |row: UrlRow| (row.listed_in, row.listed_ms, row.listed_lastmod_ms);
            store
                .upsert_found_in_pass(
                    &[found(page, "page", Some(50))],
                    100,
                    100,
                    Some(read(sitemaps[0], 100)),
                )
                .await
                .unwrap();
            store.set_listed_at(read(sitemaps[0], 100)).await.unwrap();
            let row = store.url_row(page).await.unwrap().unwrap();
            assert_eq!(listed(row), (Some(sitemaps[0]), Some(100), Some(50)));
            let sitemap = store
                .url_row("http://a.test/s1.xml")
                .await
                .unwrap()
                .unwrap();
            assert_eq!(sitemap.listed_ms, Some(100));
            // Another source (a feed, a seed) leaves the listing as it was.
            store
                .upsert_discovered(&[found(page, "page", Some(80))], 150)
                .await
                .unwrap();
            let row = store.url_row(page).await.unwrap().unwrap();
            assert_eq!(row.lastmod_ms, Some(80), "the newest of any source");
            assert_eq!(listed(row), (Some(sitemaps[0]), Some(100), Some(50)));
            // Another sitemap listing it without a lastmod takes it over.
            store
                .upsert_found_in_pass(
                    &[found(page, "page", None)],
                    200,
                    200,
                    Some(read(sitemaps[1], 200)),
                )
                .await
                .unwrap();
            let row = store.url_row(page).await.unwrap().unwrap();
            assert_eq!(listed(row), (Some(sitemaps[1]), Some(200), None));
            // A sitemap named as a page of another keeps its own listing time.
            let named = found("http://a.test/s1.xml", "page", Some(60));
            store
                .upsert_found_in_pass(&[named], 300, 300, Some(read(sitemaps[1], 300)))
                .await
                .unwrap();
            let sitemap = store
                .url_row("http://a.test/s1.xml")
                .await
                .unwrap()
                .unwrap();
            assert_eq!(listed(sitemap), (None, Some(100), None));
            store.close().await;
        }
    }

    #[tokio::test]
    async fn a_pass_makes_its_new_pages_due_at_its_start_and_leaves_known_ones_due() {
        let (stores, _dir) = crate::store::test_support::stores("pass_due").await;
        for store in stores {
            let (site_id, host_id) = crate::store::test_support::site_and_host(&store).await;
            let found = |url: &str| Discovered {
                url: url.to_string(),
                site_id,
                host_id,
                kind: "page",
                discovered_from: Some("http://a.test/sitemap.xml".into()),
                lastmod_ms: None,
                changefreq: None,
                priority: None,
            };
            // Found before the pass, and due then.
            store
                .upsert_discovered(&[found("http://a.test/old")], 500)
                .await
                .unwrap();
            // A pass started at 1,000 reads two sitemaps, at 1,200 and 1,900.
            for (url, read_ms) in [("http://a.test/p1", 1_200), ("http://a.test/p2", 1_900)] {
                store
                    .upsert_found_in_pass(
                        &[found(url), found("http://a.test/old")],
                        read_ms,
                        1_000,
                        None,
                    )
                    .await
                    .unwrap();
            }
            let row = |url: &'static str| {
                let store = &store;
                async move { store.url_row(url).await.unwrap().unwrap() }
            };
            let (p1, p2, old) = (
                row("http://a.test/p1").await,
                row("http://a.test/p2").await,
                row("http://a.test/old").await,
            );
            assert_eq!((p1.next_due_ms, p2.next_due_ms), (Some(1_000), Some(1_000)));
            assert_eq!(
                (p1.discovered_ms, p2.discovered_ms),
                (1_200, 1_900),
                "found when read"
            );
            assert_eq!(
                (old.next_due_ms, old.discovered_ms),
                (Some(500), 500),
                "as it was"
            );
            store.close().await;
        }
    }
}
