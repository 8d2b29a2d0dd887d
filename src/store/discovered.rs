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
    /// validators ([`ReadValidators`]: the check of the read kept the older ones).
    pub async fn set_listed_at(
        &self,
        listing: Listing,
        validators: &ReadValidators,
    ) -> sqlx::Result<()> {
        self.write("set_listed_at", |mut tx| async move {
            sqlx::query(
                "UPDATE urls SET listed_ms = $1, etag = COALESCE($2, etag),
                     last_modified = COALESCE($3, last_modified), min_interval_ms = $4
                 WHERE id = $5",
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

    /// The URLs of a site's stored feeds.
    pub async fn feeds_of_site(&self, site_id: i64) -> sqlx::Result<Vec<String>> {
        sqlx::query_scalar("SELECT url FROM urls WHERE site_id = $1 AND kind = 'feed' ORDER BY id")
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

    /// Gives the stored rows of a site the kinds its schedule names its URLs with
    /// (`declared`: a URL and `feed` or `sitemap`), and returns what changed. The first kind
    /// stored stays otherwise: a feed a robots.txt `Sitemap:` line or an index named before
    /// the schedule did (a user adds it to `feeds` later) was read as a sitemap once a day,
    /// and no page ever waited for it; one a sitemap listed as a page, or a seed, was checked
    /// as a page; a sitemap a urlset listed as a page was read by discovery and checked as a
    /// page too. Each such row forgets what belonged to its old kind (its copy, validators,
    /// the server's ttl, a page's listing and wait, a known change, a feed's reads), is due
    /// now and is written now (other workers take up a new feed), so that its first read
    /// lists its entries whole: a 304 would list nothing. Its checks and their evidence stay,
    /// of the same document. A feed that becomes a sitemap (the schedule took it out of its
    /// `feeds`) ends the waits of the pages that waited for it. A row of another site keeps
    /// its kind.
    pub async fn declare_kinds(
        &self,
        site_id: i64,
        declared: &[(String, &'static str)],
        now_ms: i64,
    ) -> sqlx::Result<Vec<KindChange>> {
        if declared.is_empty() {
            return Ok(Vec::new());
        }
        let declared = declared.to_vec();
        self.write("declare_kinds", move |mut tx| {
            let declared = declared.clone();
            async move {
                let mut changes = Vec::new();
                for (url, kind) in declared {
                    let stored: Option<(i64, String)> =
                        sqlx::query_as("SELECT id, kind FROM urls WHERE site_id = $1 AND url = $2")
                            .bind(site_id)
                            .bind(&url)
                            .fetch_optional(&mut *tx)
                            .await?;
                    let Some((id, was)) = stored.filter(|(_, was)| was != kind) else {
                        continue;
                    };
                    sqlx::query(
                        "UPDATE urls SET kind = $1, copy_ms = NULL, etag = NULL,
                             last_modified = NULL, min_interval_ms = NULL, listed_in = NULL,
                             listed_ms = NULL, listed_lastmod_ms = NULL, known_change_ms = NULL,
                             waits_for_feed_id = NULL, last_read_json = NULL, next_due_ms = $2,
                             written_ms = CASE WHEN COALESCE(written_ms, 0) > $2
                                 THEN written_ms ELSE $2 END
                         WHERE id = $3",
                    )
                    .bind(kind)
                    .bind(now_ms)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                    if was == "feed" {
                        // No page waits for it any more (written now: other workers' rounds
                        // take their waits up).
                        sqlx::query(
                            "UPDATE urls SET waits_for_feed_id = NULL,
                                 written_ms = CASE WHEN COALESCE(written_ms, 0) > $1
                                     THEN written_ms ELSE $1 END
                             WHERE waits_for_feed_id = $2",
                        )
                        .bind(now_ms)
                        .bind(id)
                        .execute(&mut *tx)
                        .await?;
                    }
                    changes.push(KindChange { url, was, kind });
                }
                Ok((tx, changes))
            }
        })
        .await
    }
}

/// A stored URL given the kind its schedule names it with ([`Store::declare_kinds`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindChange {
    /// The URL.
    pub url: String,
    /// The kind it was stored with.
    pub was: String,
    /// The kind it has now.
    pub kind: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::urls::{UrlPages, UrlRow, UrlScope};

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

    #[tokio::test]
    async fn a_row_takes_the_kind_its_schedule_names_it_with_and_forgets_its_old_kinds() {
        let (stores, _dir) = crate::store::test_support::stores("declare_kinds").await;
        for store in stores {
            let ids = crate::store::test_support::sites(&store, &["s", "other"]).await;
            let host_id = store.host_id("http://a.test:80").await.unwrap();
            let found = |url: &str, kind, site_id| Discovered {
                kind,
                ..crate::store::test_support::page(url, site_id, host_id)
            };
            let url = |path: &str| format!("http://a.test/{path}");
            // A feed a robots.txt named first, one a sitemap listed, a sitemap a urlset
            // listed, a feed the schedule moved to its sitemaps, one already right, and
            // another site's.
            let stored = [
                ("robots-feed", "sitemap", 0),
                ("listed-feed", "page", 0),
                ("listed-map", "page", 0),
                ("was-feed", "feed", 0),
                ("right", "sitemap", 0),
                ("theirs", "sitemap", 1),
                ("waiting", "page", 0),
            ];
            let rows: Vec<Discovered> = (stored.iter())
                .map(|&(path, kind, site)| found(&url(path), kind, ids[site]))
                .collect();
            store.upsert_discovered(&rows, 0).await.unwrap();
            // Checked at 50: a copy, validators, a floor, a listing, a wait, a feed's reads.
            store
                .write("test", |mut tx| async move {
                    sqlx::query(
                        "UPDATE urls SET copy_ms = 50, written_ms = 50, checks = 1,
                             etag = 'v1', last_modified = 'Mon, 07 Dec 2026 10:00:00 GMT',
                             min_interval_ms = 3600000, listed_in = 1, listed_ms = 50,
                             listed_lastmod_ms = 40, known_change_ms = 45,
                             waits_for_feed_id = 1, last_read_json = '{}'",
                    )
                    .execute(&mut *tx)
                    .await?;
                    Ok((tx, ()))
                })
                .await
                .unwrap();
            let was_feed = store.url_row(&url("was-feed")).await.unwrap().unwrap().id;
            store
                .write("test", move |mut tx| async move {
                    sqlx::query("UPDATE urls SET waits_for_feed_id = $1 WHERE url LIKE '%waiting'")
                        .bind(was_feed)
                        .execute(&mut *tx)
                        .await?;
                    Ok((tx, ()))
                })
                .await
                .unwrap();

            let declared: Vec<(String, &'static str)> = [
                ("robots-feed", "feed"),
                ("listed-feed", "feed"),
                ("listed-map", "sitemap"),
                ("was-feed", "sitemap"),
                ("right", "sitemap"),
                ("theirs", "feed"),
                ("unknown", "feed"),
            ]
            .map(|(path, kind)| (url(path), kind))
            .into();
            let changes = store.declare_kinds(ids[0], &declared, 100).await.unwrap();

            let changed: Vec<(&str, &str, &str)> = (changes.iter())
                .map(|c| (&c.url[14..], c.was.as_str(), c.kind))
                .collect();
            let expected = [
                ("robots-feed", "sitemap", "feed"),
                ("listed-feed", "page", "feed"),
                ("listed-map", "page", "sitemap"),
                ("was-feed", "feed", "sitemap"),
            ];
            assert_eq!(changed, expected, "the site's own rows of another kind");
            for &(path, _, kind) in &expected {
                let row = store.url_row(&url(path)).await.unwrap().unwrap();
                assert_eq!(row.kind, kind);
                let forgotten = (
                    (
                        row.copy_ms,
                        row.etag.as_deref(),
                        row.last_modified.as_deref(),
                    ),
                    (row.min_interval_ms, row.listed_in, row.listed_ms),
                    (row.listed_lastmod_ms, row.known_change_ms),
                    (row.waits_for_feed_id, row.last_read_json.as_deref()),
                );
                let none = (
                    (None, None, None),
                    (None, None, None),
                    (None, None),
                    (None, None),
                );
                assert_eq!(forgotten, none, "{path}: its first read is whole");
                assert_eq!(row.next_due_ms, Some(100), "{path}: due now");
                assert_eq!(row.checks, 1, "{path}: its checks stay");
            }
            let mut pages = UrlPages::new(UrlScope::WrittenAfter(50), 10);
            let written = pages.next(&store).await.unwrap().unwrap_or_default();
            let written: Vec<&str> = written.iter().map(|r| &r.url[14..]).collect();
            assert_eq!(
                written,
                ["robots-feed", "listed-feed", "waiting"],
                "written now (the pages and feeds among them), for the other workers"
            );
            let waiting = store.url_row(&url("waiting")).await.unwrap().unwrap();
            assert_eq!(
                waiting.waits_for_feed_id, None,
                "no longer a feed to wait for"
            );
            let kept = |path: &'static str| {
                let store = &store;
                async move {
                    let row = store.url_row(&url(path)).await.unwrap().unwrap();
                    (row.kind, row.etag)
                }
            };
            assert_eq!(kept("right").await, ("sitemap".into(), Some("v1".into())));
            assert_eq!(kept("theirs").await, ("sitemap".into(), Some("v1".into())));
            let again = store.declare_kinds(ids[0], &declared, 200).await.unwrap();
            assert!(again.is_empty(), "once");
            store.close().await;
        }
    }
}
