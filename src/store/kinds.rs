//! The kind of each stored URL as the schedule names it: a URL in a site's `feeds` is a feed,
//! one in its `sitemaps` a sitemap, whatever named it first; a feed the schedule no longer
//! names is a document only a walk reads; a seed is a page. Discovery makes a page of a site
//! that a robots.txt or an index names as a sitemap before it was checked as a page, and that
//! reads as one, a sitemap
//! (`refresher::sitemap_kinds`). The first kind stored stays otherwise (discovery inserts
//! with `ON CONFLICT DO NOTHING`): a feed a robots.txt `Sitemap:` line or an index
//! named before the schedule did was read as a sitemap once a day and no page ever waited for
//! it; one a sitemap listed as a page, or a seed, was checked as a page; a sitemap a urlset
//! listed as a page was read by discovery and checked as a page too; a feed taken out of
//! `feeds` went on being read at its planned rate.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::Store;
use super::batch::{Texts, power_of_two_chunks, text_for, texts};

/// A URL a site's schedule names with a kind (`feed`, `sitemap`, or `page` for a seed that was
/// a feed or a sitemap), or a stored feed or sitemap the schedule named and names no more
/// (`dropped`: a sitemap's row unless another site names it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declared {
    /// The site.
    pub site_id: i64,
    /// The URL (as stored: normalised).
    pub url: String,
    /// `feed`, `sitemap` or `page`.
    pub kind: &'static str,
    /// A feed or sitemap the site's schedule named and no longer names.
    pub dropped: bool,
}

/// Whether a stored feed or sitemap that `discovered_from` names was the schedule's: stored as
/// one of its roots (`schedule`), or first as one of its seeds (`seed`) and named a sitemap or
/// a feed after. Either is taken out once the schedule names it no more.
pub fn named_by_schedule(discovered_from: Option<&str>) -> bool {
    matches!(discovered_from, Some("schedule" | "seed"))
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
    /// Its site now (another site's when it moved: see [`Store::declare_kinds`]).
    pub site_id: i64,
}

/// A stored feed or sitemap ([`Store::stored_documents`]).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct StoredDocument {
    /// Its site.
    pub site_id: i64,
    /// Its URL.
    pub url: String,
    /// `feed` or `sitemap`.
    pub kind: String,
    /// What named it first: `schedule`, a seed, a robots.txt, an index, or the document that
    /// redirected to it (with several workers, `hand_over`).
    pub discovered_from: Option<String>,
}

/// A URL as stored: row id, site, kind, and whether the site is in none of the schedules.
#[derive(Debug, Clone)]
struct Stored {
    id: i64,
    site_id: i64,
    kind: String,
    unscheduled: bool,
}

/// What the declarations of one stored URL make it: the declaration of its own site; else,
/// when its site dropped it (a feed taken out of `feeds`) or is in none of the schedules (a
/// rename), the first of another site that names it (that site takes it, as discovery's
/// adoption of a renamed site's URL would, with the kind it names); else its site's drop (a
/// sitemap's row). `None`: nothing to change.
fn resolve<'a>(stored: &Stored, declared: &[&'a Declared]) -> Option<&'a Declared> {
    let own = (declared
        .iter()
        .find(|d| d.site_id == stored.site_id && !d.dropped))
    .or_else(|| declared.iter().find(|d| d.site_id == stored.site_id));
    let named_elsewhere = || (declared.iter()).find(|d| d.site_id != stored.site_id && !d.dropped);
    let target = match own {
        Some(own) if !own.dropped => own,
        Some(own) => named_elsewhere().unwrap_or(own),
        None if stored.unscheduled => named_elsewhere()?,
        None => return None,
    };
    (target.kind != stored.kind || target.site_id != stored.site_id).then_some(*target)
}

static SELECT_STORED: LazyLock<Texts> = LazyLock::new(|| {
    texts(|n| {
        let urls: Vec<String> = (1..=n).map(|i| format!("${i}")).collect();
        format!(
            "SELECT urls.id, urls.site_id, urls.url, urls.kind, sites.unscheduled_ms
             FROM urls JOIN sites ON sites.id = urls.site_id WHERE urls.url IN ({})",
            urls.join(", ")
        )
    })
});

impl Store {
    /// Records that a sitemap stored as named by `was` (the schedule, or a sitemap below a root
    /// the schedule took out) is named by `named_by` (a robots.txt or an index) now: it is not
    /// one the schedule took out ([`crate::refresher`]'s discovery due times and kinds, and
    /// the sitemaps workers hand each other).
    pub async fn renamed_by(&self, url_id: i64, was: &str, named_by: &str) -> sqlx::Result<()> {
        let (was, named_by) = (was.to_string(), named_by.to_string());
        self.write("renamed_by", move |mut tx| {
            let (was, named_by) = (was.clone(), named_by.clone());
            async move {
                sqlx::query(
                    "UPDATE urls SET discovered_from = $1 WHERE id = $2 AND discovered_from = $3",
                )
                .bind(&named_by)
                .bind(url_id)
                .bind(&was)
                .execute(&mut *tx)
                .await?;
                Ok((tx, ()))
            }
        })
        .await
    }

    /// The stored feeds and sitemaps of every site, by id (a few per site: pages are the
    /// rest).
    pub async fn stored_documents(&self) -> sqlx::Result<Vec<StoredDocument>> {
        sqlx::query_as(
            "SELECT site_id, url, kind, discovered_from FROM urls
             WHERE kind IN ('feed', 'sitemap') ORDER BY id",
        )
        .fetch_all(self.reader())
        .await
    }

    /// Gives the stored rows of their sites the kinds the schedules name them with, and
    /// returns what changed. Read in chunks first: a start with nothing to change writes
    /// nothing. Each row changed forgets what belonged to its old kind (its copy, validators,
    /// the server's ttl, a page's listing and wait, a known change, a feed's reads), is due
    /// now and is written now (other workers take up a new feed), so that its first read
    /// lists its entries whole: a 304 would list nothing. Its checks and their evidence stay,
    /// of the same document. A feed that becomes a sitemap ends the waits of the pages that
    /// waited for it. A page made a feed or a sitemap is named by the schedule from then on
    /// (`discovered_from`: what listed it named a page, not this document; a robots.txt or an
    /// index that made it one renames it after, `Store::renamed_by`). A row whose site names it keeps its kind whatever other sites say (two
    /// sites naming one URL share it: the first to find it keeps it); one its site no longer
    /// names as a feed, or whose site is in none of the schedules, goes to a site that names
    /// it, with that site's kind ([`resolve`]).
    pub async fn declare_kinds(
        &self,
        declared: &[Declared],
        now_ms: i64,
    ) -> sqlx::Result<Vec<KindChange>> {
        let mut stored: HashMap<String, Stored> = HashMap::new();
        let mut chunks = Vec::new();
        power_of_two_chunks(declared, &mut chunks);
        let mut connection = self.reader().acquire().await?;
        for chunk in chunks {
            let mut query = sqlx::query_as(text_for(&SELECT_STORED, &connection, chunk.len()));
            for d in chunk {
                query = query.bind(&d.url);
            }
            let rows: Vec<(i64, i64, String, String, Option<i64>)> =
                query.fetch_all(&mut *connection).await?;
            stored.extend(
                (rows.into_iter()).map(|(id, site_id, url, kind, unscheduled_ms)| {
                    let unscheduled = unscheduled_ms.is_some();
                    let row = Stored {
                        id,
                        site_id,
                        kind,
                        unscheduled,
                    };
                    (url, row)
                }),
            );
        }
        drop(connection);
        let mut by_url: HashMap<&str, Vec<&Declared>> = HashMap::new();
        for d in declared {
            by_url.entry(d.url.as_str()).or_default().push(d);
        }
        let mut to_change: Vec<(Stored, KindChange)> = Vec::new();
        for (url, declared) in by_url {
            let Some(row) = stored.get(url) else { continue };
            let Some(target) = resolve(row, &declared) else {
                continue;
            };
            let change = KindChange {
                url: url.to_string(),
                was: row.kind.clone(),
                kind: target.kind,
                site_id: target.site_id,
            };
            to_change.push((row.clone(), change));
        }
        to_change.sort_by_key(|(row, _)| row.id);
        if to_change.is_empty() {
            return Ok(Vec::new());
        }
        self.write("declare_kinds", move |mut tx| {
            let to_change = to_change.clone();
            async move {
                let mut changes = Vec::new();
                for (row, change) in to_change {
                    let (id, was) = (row.id, &row.kind);
                    // (Unless another worker's start changed it since the read.)
                    let changed = sqlx::query(
                        "UPDATE urls SET kind = $1, site_id = $2, copy_ms = NULL, etag = NULL,
                             last_modified = NULL, min_interval_ms = NULL, listed_in = NULL,
                             listed_ms = NULL, listed_lastmod_ms = NULL, known_change_ms = NULL,
                             waits_for_feed_id = NULL, last_read_json = NULL, next_due_ms = $3,
                             discovered_from = CASE WHEN $5 = 'page' THEN 'schedule'
                                 ELSE discovered_from END,
                             written_ms = CASE WHEN COALESCE(written_ms, 0) > $3
                                 THEN written_ms ELSE $3 END
                         WHERE id = $4 AND kind = $5 AND site_id = $6",
                    )
                    .bind(change.kind)
                    .bind(change.site_id)
                    .bind(now_ms)
                    .bind(id)
                    .bind(was)
                    .bind(row.site_id)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                    if changed == 0 {
                        continue;
                    }
                    if was == "feed" && change.kind != "feed" {
                        // No page waits for it any more (written now: other workers' rounds
                        // take their waits up). A feed that moved to another site keeps them
                        // (the plans say whether they still wait).
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
                    changes.push(change);
                }
                Ok((tx, changes))
            }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::discovered::Discovered;
    use crate::store::test_support::execute;
    use crate::store::urls::{UrlPages, UrlScope};

    #[test]
    fn a_url_goes_to_its_own_sites_kind_else_to_a_site_naming_it_once_its_own_lets_go() {
        let url = "http://a.test/feed.xml";
        let decl = |site_id, kind, dropped| Declared {
            site_id,
            url: url.into(),
            kind,
            dropped,
        };
        let stored = |site_id, kind: &str, unscheduled| Stored {
            id: 7,
            site_id,
            kind: kind.into(),
            unscheduled,
        };
        let target = |row: &Stored, declared: &[Declared]| {
            let declared: Vec<&Declared> = declared.iter().collect();
            resolve(row, &declared).map(|d| (d.site_id, d.kind))
        };
        let feed_of_1 = stored(1, "feed", false);
        // Its own site's word stands, whatever another says.
        let named = [decl(2, "sitemap", false), decl(1, "feed", false)];
        assert_eq!(target(&feed_of_1, &named), None);
        let made_sitemap = [decl(1, "sitemap", false), decl(2, "feed", false)];
        assert_eq!(target(&feed_of_1, &made_sitemap), Some((1, "sitemap")));
        // Taken out of its site's feeds: a site that names it takes it, else a sitemap's row.
        let moved = [decl(1, "sitemap", true), decl(2, "feed", false)];
        assert_eq!(target(&feed_of_1, &moved), Some((2, "feed")));
        assert_eq!(
            target(&feed_of_1, &[decl(1, "sitemap", true)]),
            Some((1, "sitemap"))
        );
        // Another site's alone: its site keeps it while scheduled; a rename hands it over.
        assert_eq!(target(&feed_of_1, &[decl(2, "sitemap", false)]), None);
        let renamed = stored(1, "sitemap", true);
        let named_by_2 = [decl(2, "feed", false)];
        assert_eq!(target(&renamed, &named_by_2), Some((2, "feed")));
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
                ("moved", "feed", 0),
            ];
            let rows: Vec<Discovered> = (stored.iter())
                .map(|&(path, kind, site)| found(&url(path), kind, ids[site]))
                .collect();
            store.upsert_discovered(&rows, 0).await.unwrap();
            // Checked at 50: a copy, validators, a floor, a listing, a wait, a feed's reads.
            let checked = "UPDATE urls SET copy_ms = 50, written_ms = 50, checks = 1,
                 etag = 'v1', last_modified = 'Mon, 07 Dec 2026 10:00:00 GMT',
                 min_interval_ms = 3600000, listed_in = 1, listed_ms = 50,
                 listed_lastmod_ms = 40, known_change_ms = 45,
                 waits_for_feed_id = 1, last_read_json = '{}'";
            execute(&store, checked, &[]).await;
            let was_feed = store.url_row(&url("was-feed")).await.unwrap().unwrap().id;
            let waiting = "UPDATE urls SET waits_for_feed_id = $1 WHERE url LIKE '%waiting'";
            execute(&store, waiting, &[was_feed]).await;

            let declared: Vec<Declared> = [
                ("robots-feed", "feed"),
                ("listed-feed", "feed"),
                ("listed-map", "sitemap"),
                ("was-feed", "sitemap"),
                ("right", "sitemap"),
                ("theirs", "feed"),
                ("unknown", "feed"),
            ]
            .map(|(path, kind)| Declared {
                site_id: ids[0],
                url: url(path),
                kind,
                dropped: false,
            })
            .into();
            // A feed its site took out of its feeds, which the other site names.
            let moved = |site_id, kind, dropped| Declared {
                site_id,
                url: url("moved"),
                kind,
                dropped,
            };
            let declared = [
                declared,
                vec![moved(ids[0], "sitemap", true), moved(ids[1], "feed", false)],
            ]
            .concat();
            let changes = store.declare_kinds(&declared, 100).await.unwrap();

            let changed: Vec<(&str, &str, &str)> = (changes.iter())
                .map(|c| (&c.url[14..], c.was.as_str(), c.kind))
                .collect();
            let expected = [
                ("robots-feed", "sitemap", "feed"),
                ("listed-feed", "page", "feed"),
                ("listed-map", "page", "sitemap"),
                ("was-feed", "feed", "sitemap"),
                ("moved", "feed", "feed"),
            ];
            assert_eq!(changed, expected, "the site's own rows of another kind");
            for path in ["listed-feed", "listed-map"] {
                let row = store.url_row(&url(path)).await.unwrap().unwrap();
                let from = row.discovered_from.as_deref();
                assert_eq!(from, Some("schedule"), "{path}: a page made the schedule's");
            }
            let moved_row = store.url_row(&url("moved")).await.unwrap().unwrap();
            assert_eq!(moved_row.site_id, ids[1], "taken by the site that names it");
            assert_eq!(changes[4].site_id, ids[1]);
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
                ["robots-feed", "listed-feed", "waiting", "moved"],
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
            let again = store.declare_kinds(&declared, 200).await.unwrap();
            assert!(again.is_empty(), "once");
            store.close().await;
        }
    }

    /// A worker started before another's start made a feed's row a sitemap's still plans its
    /// pages as waiting for it, and its own plan: neither is written on the rows.
    #[tokio::test]
    async fn no_wait_on_a_row_no_longer_a_feeds_and_no_plan_on_a_sitemap_is_written() {
        use crate::store::summary::PlanUpdate;
        use crate::store::test_support::{due, feed_and_page, observed};
        let (stores, _dir) = crate::store::test_support::stores("no_wait_on_a_sitemap").await;
        for store in stores {
            let (feed, page) = feed_and_page(&store).await;
            let made_sitemap = "UPDATE urls SET kind = 'sitemap', next_due_ms = 5 WHERE id = $1";
            execute(&store, made_sitemap, &[feed]).await;
            let plan = |url_id| PlanUpdate {
                url_id,
                planned_per_day: 2.0,
                next_due_ms: 900,
                watched: None,
                rate: None,
                waits_for_feed_id: Some(feed),
                written_ms: Some(100),
                taken_ms: Some(100),
            };
            store.save_plan(vec![plan(page), plan(feed)]).await.unwrap();
            let row = |url: &'static str| {
                let store = &store;
                async move { store.url_row(url).await.unwrap().unwrap() }
            };
            let (stored_page, stored_feed) =
                (row("http://a.test/b").await, row("http://a.test/a").await);
            assert_eq!(
                (stored_page.next_due_ms, stored_page.waits_for_feed_id),
                (Some(900), None),
                "the page's plan, waiting for no sitemap"
            );
            assert_eq!(
                stored_feed.next_due_ms,
                Some(5),
                "no plan on a sitemap's row"
            );
            let update = crate::store::summary::SummaryUpdate {
                waits_for_feed_id: Some(Some(feed)),
                ..due(1_000, "p")
            };
            store
                .record_check(&observed(page, 200, false), &update)
                .await
                .unwrap();
            assert_eq!(
                row("http://a.test/b").await.waits_for_feed_id,
                None,
                "nor with a check"
            );
            store.close().await;
        }
    }
}
