//! What discovery writes to the `urls` table: the URLs sitemaps, feeds and robots.txt name,
//! with their hints (one transaction per batch), the sitemaps of a site and when they are next
//! read, and robots.txt's verdict on a URL.

use super::Store;
pub use super::found_writes::Discovered;
use super::found_writes::{Found, upsert_found};

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

/// A sitemap or feed read's validators and the floor on its next read (Cache-Control max-age,
/// a feed's `ttl`), written with the read's listing once every page it listed is: a kill before that
/// leaves those of the last read listed whole, so the next read is not answered 304 Not
/// Modified on a listing written in part (the pages it had not reached would never come).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadValidators {
    /// Its `ETag`.
    pub etag: Option<String>,
    /// Its `Last-Modified`, as sent.
    pub last_modified: Option<String>,
    /// Not read again before this long after the read (ms).
    pub min_interval_ms: Option<i64>,
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
    /// the read still counted (listed at or after the sitemap's older time), with the read's
    /// validators ([`ReadValidators`]: the check of the read kept the older ones). Not on a
    /// row that is no sitemap any more (another worker's start made it a feed or a page while
    /// it was read, as its check's summary is not, `SummaryUpdate::checked_as`).
    pub async fn set_listed_at(
        &self,
        listing: Listing,
        validators: &ReadValidators,
    ) -> sqlx::Result<()> {
        self.write("set_listed_at", |mut tx| async move {
            sqlx::query(
                "UPDATE urls SET listed_ms = $1, etag = COALESCE($2, etag),
                     last_modified = COALESCE($3, last_modified), min_interval_ms = $4
                 WHERE id = $5 AND kind = 'sitemap'",
            )
            .bind(listing.read_ms)
            .bind(&validators.etag)
            .bind(&validators.last_modified)
            .bind(validators.min_interval_ms)
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
        let when = Found {
            now_ms,
            new_due_ms,
            listing: listing.map(|l| (l.sitemap_id, l.read_ms)),
        };
        self.write("upsert_discovered", |tx| upsert_found(tx, found, when))
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

    /// Takes a URL out of every plan (the schedule's filters refuse it now): no next visit, no
    /// planned rate, so `explain` and the reports do not show a visit that will not come.
    pub async fn set_unplanned(&self, url_id: i64) -> sqlx::Result<()> {
        self.write("set_unplanned", |mut tx| async move {
            sqlx::query(
                "UPDATE urls SET next_due_ms = NULL, planned_per_day = NULL, \
                 waits_for_feed_id = NULL WHERE id = $1",
            )
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
    /// sitemaps its pass walked and those on the hosts it held all through the pass).
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
    async fn a_long_list_with_repeats_writes_each_url_once_and_gives_new_ids_in_order() {
        let (stores, _dir) = crate::store::test_support::stores("long_list").await;
        for store in stores {
            let (site_id, host_id) = crate::store::test_support::site_and_host(&store).await;
            let found = |i: usize, priority| Discovered {
                priority,
                ..crate::store::test_support::page(&format!("http://a.test/p{i}"), site_id, host_id)
            };
            let known = store.upsert_discovered(&[found(7, None)], 0).await.unwrap();
            // 150 URLs (more than one statement's rows), p7 known already, p20 twice: its
            // second naming is a known URL's, whose hint it leaves.
            let mut list: Vec<Discovered> = (0..150).map(|i| found(i, None)).collect();
            list.insert(100, found(20, Some(0.9)));
            let new_ids = store.upsert_discovered(&list, 10).await.unwrap();

            assert_eq!(new_ids.len(), 149, "every URL but p7, each once");
            let mut expected = Vec::new();
            for i in (0..150).filter(|&i| i != 7) {
                let row = store
                    .url_row(&format!("http://a.test/p{i}"))
                    .await
                    .unwrap()
                    .unwrap();
                assert_eq!(row.discovered_ms, 10);
                expected.push(row.id);
            }
            assert_eq!(new_ids, expected, "in the order they were named");
            let p7 = store.url_row("http://a.test/p7").await.unwrap().unwrap();
            assert_eq!(
                (p7.id, p7.discovered_ms),
                (known[0], 0),
                "known, left as it was"
            );
            let p20 = store.url_row("http://a.test/p20").await.unwrap().unwrap();
            assert_eq!(p20.priority, Some(0.9), "the second naming's hint");
            store.close().await;
        }
    }

    #[tokio::test]
    async fn a_listing_records_its_sitemap_and_lastmod_and_the_last_one_wins() {
        let (stores, _dir) = crate::store::test_support::stores("listing_records").await;
        for store in stores {
            let (site_id, host_id) = crate::store::test_support::site_and_host(&store).await;
            let found = |url: &str, kind, lastmod_ms| Discovered {
                kind,
                discovered_from: Some("schedule".into()),
                lastmod_ms,
                lastmod_believed: true,
                ..crate::store::test_support::page(url, site_id, host_id)
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
            store
                .set_listed_at(read(sitemaps[0], 100), &ReadValidators::default())
                .await
                .unwrap();
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
                discovered_from: Some("http://a.test/sitemap.xml".into()),
                ..crate::store::test_support::page(url, site_id, host_id)
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

    /// A read's listing stamp and validators go on its row only while it is a sitemap (another
    /// worker's start made it a page or a feed while it was read: their own stand).
    #[tokio::test]
    async fn a_listing_is_not_stamped_on_a_row_no_longer_a_sitemap() {
        let (stores, _dir) = crate::store::test_support::stores("listing_not_on_a_page").await;
        for store in stores {
            let (page, _) = crate::store::test_support::two_urls(&store).await;
            let validators = ReadValidators {
                etag: Some("\"read\"".into()),
                ..ReadValidators::default()
            };
            let listing = Listing {
                sitemap_id: page,
                read_ms: 100,
            };
            store.set_listed_at(listing, &validators).await.unwrap();
            let row = store.url_row("http://a.test/a").await.unwrap().unwrap();
            assert_eq!((row.listed_ms, row.etag), (None, None));
            store.close().await;
        }
    }
}
