//! Refusals: every URL freshet chose not to add or not to fetch (robots.txt, the site's URL
//! filters, the address policy, the cross-host rule of sitemaps and feeds), one row per URL and
//! reason, so that `freshet explain URL` can say why it holds no copy. Schema in
//! `migrations/0009_views.sql`.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::Store;
use super::batch::{Texts, power_of_two_chunks, text_for, texts};

/// What the store holds of a source a schedule names ([`Store::sources_seen`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SourceSeen {
    /// Its URL row's site, when it is stored.
    pub stored_in: Option<StoredIn>,
    /// Whether a refusal of it is filed.
    pub refused: bool,
}

/// The site a stored URL belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredIn {
    /// The site's row id.
    pub site_id: i64,
    /// Whether that site is in none of the schedules loaded.
    pub site_unscheduled: bool,
}

static STORED_SOURCES: LazyLock<Texts> = LazyLock::new(|| {
    texts(|n| {
        format!(
            "SELECT url, site_id, (SELECT unscheduled_ms FROM sites WHERE sites.id = urls.site_id)
             FROM urls WHERE url IN ({})",
            numbered(n)
        )
    })
});

static REFUSED_SOURCES: LazyLock<Texts> = LazyLock::new(|| {
    texts(|n| {
        format!(
            "SELECT DISTINCT url FROM refusals WHERE url IN ({})",
            numbered(n)
        )
    })
});

/// `$1, $2, ..., $n`.
fn numbered(n: usize) -> String {
    (1..=n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why a URL was refused (the `reason` column).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalReason {
    /// A robots.txt Disallow, or a robots.txt that could not be read (5xx, unreachable).
    Robots,
    /// The site's include/exclude patterns (or a scheme other than http and https).
    Filter,
    /// The address policy refused the address the host resolved to.
    Address,
    /// A sitemap or feed named a URL on another host, or outside the sitemap's directory.
    CrossHost,
}

impl RefusalReason {
    /// The value stored in `reason`.
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalReason::Robots => "robots",
            RefusalReason::Filter => "filter",
            RefusalReason::Address => "address",
            RefusalReason::CrossHost => "cross-host",
        }
    }
}

/// One refusal to record.
#[derive(Debug, Clone)]
pub struct Refusal {
    /// The URL refused.
    pub url: String,
    /// Why.
    pub reason: RefusalReason,
    /// What decided: the robots.txt rule, the pattern, the address and range, the rule of
    /// sitemaps.
    pub rule: String,
    /// The site whose discovery or check met it.
    pub site: Option<String>,
    /// Where the URL came from (a sitemap, a feed, `check` when refused at check time).
    pub source: Option<String>,
}

/// A stored refusal.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct RefusalRow {
    /// The URL refused.
    pub url: String,
    /// `robots`, `filter`, `address` or `cross-host`.
    pub reason: String,
    /// What decided.
    pub rule: String,
    /// The site.
    pub site: Option<String>,
    /// Where the URL came from.
    pub source: Option<String>,
    /// First refusal, clock ms.
    pub first_ms: i64,
    /// Latest refusal, clock ms.
    pub last_ms: i64,
    /// How many times it was refused.
    pub times: i64,
}

impl Store {
    /// Records refusals in one transaction; a URL refused again for the same reason keeps its
    /// first time and gets the latest rule, source and time.
    pub async fn record_refusals(&self, at_ms: i64, refusals: &[Refusal]) -> sqlx::Result<()> {
        if refusals.is_empty() {
            return Ok(());
        }
        self.write("record_refusals", |mut tx| async move {
            for r in refusals {
                sqlx::query(
                    "INSERT INTO refusals (url, reason, rule, site, source, first_ms, last_ms)
                     VALUES ($1, $2, $3, $4, $5, $6, $6)
                     ON CONFLICT (url, reason) DO UPDATE SET rule = excluded.rule,
                         site = excluded.site, source = COALESCE(excluded.source, refusals.source),
                         last_ms = excluded.last_ms, times = refusals.times + 1",
                )
                .bind(&r.url)
                .bind(r.reason.as_str())
                .bind(&r.rule)
                .bind(&r.site)
                .bind(&r.source)
                .bind(at_ms)
                .execute(&mut *tx)
                .await?;
            }
            Ok((tx, ()))
        })
        .await
    }

    /// The refusals of one URL, latest first.
    pub async fn refusals_of(&self, url: &str) -> sqlx::Result<Vec<RefusalRow>> {
        sqlx::query_as("SELECT * FROM refusals WHERE url = $1 ORDER BY last_ms DESC, reason")
            .bind(url)
            .fetch_all(self.reader())
            .await
    }

    /// What is stored of each of `urls` (the sources a schedule names: sitemaps, feeds, seeds),
    /// a few dozen to a query: its row's site, and whether a refusal of it is filed. A URL
    /// neither stored nor refused is missing from the map. (Asked one URL at a time, a
    /// `run --once` with 25,000 seeds took 2.0-2.6 s on SQLite and 8 s on PostgreSQL; so, 0.15 s
    /// and 0.95 s.)
    pub async fn sources_seen(&self, urls: &[&str]) -> sqlx::Result<HashMap<String, SourceSeen>> {
        let mut seen: HashMap<String, SourceSeen> = HashMap::new();
        let mut chunks = Vec::new();
        power_of_two_chunks(urls, &mut chunks);
        let mut connection = self.reader().acquire().await?;
        for chunk in chunks {
            let mut stored = sqlx::query_as(text_for(&STORED_SOURCES, &connection, chunk.len()));
            for url in chunk {
                stored = stored.bind(*url);
            }
            let rows: Vec<(String, i64, Option<i64>)> = stored.fetch_all(&mut *connection).await?;
            for (url, site_id, unscheduled_ms) in rows {
                seen.entry(url).or_default().stored_in = Some(StoredIn {
                    site_id,
                    site_unscheduled: unscheduled_ms.is_some(),
                });
            }
            let mut refused =
                sqlx::query_scalar(text_for(&REFUSED_SOURCES, &connection, chunk.len()));
            for url in chunk {
                refused = refused.bind(*url);
            }
            let rows: Vec<String> = refused.fetch_all(&mut *connection).await?;
            for url in rows {
                seen.entry(url).or_default().refused = true;
            }
        }
        Ok(seen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_refusal_is_kept_once_per_reason_with_its_latest_rule() {
        let (stores, _dir) = crate::store::test_support::stores(
            "a_refusal_is_kept_once_per_reason_with_its_latest_rule",
        )
        .await;
        for store in stores {
            let refusal = |rule: &str| Refusal {
                url: "http://a.test/private/x".into(),
                reason: RefusalReason::Robots,
                rule: rule.into(),
                site: Some("a".into()),
                source: Some("http://a.test/sitemap.xml".into()),
            };
            store
                .record_refusals(10, &[refusal("Disallow: /private")])
                .await
                .unwrap();
            store
                .record_refusals(20, &[refusal("Disallow: /priv")])
                .await
                .unwrap();
            let rows = store.refusals_of("http://a.test/private/x").await.unwrap();
            assert_eq!(rows.len(), 1);
            assert_eq!(
                (rows[0].first_ms, rows[0].last_ms, rows[0].times),
                (10, 20, 2)
            );
            assert_eq!(rows[0].rule, "Disallow: /priv");
            assert!(
                store
                    .refusals_of("http://a.test/")
                    .await
                    .unwrap()
                    .is_empty()
            );
        }
    }

    #[tokio::test]
    async fn the_sources_a_schedule_names_are_looked_up_a_few_dozen_at_a_time() {
        let (stores, _dir) = crate::store::test_support::stores("sources_seen").await;
        for store in stores {
            let ids = crate::store::test_support::sites(&store, &["kept", "renamed"]).await;
            let (kept, renamed) = (ids[0], ids[1]);
            store.mark_unscheduled_sites(&[kept], 5).await.unwrap();
            let host = store.host_id("http://a.test:80").await.unwrap();
            // 100 stored URLs of the scheduled site (more than one query's worth), one of the
            // unscheduled site, two refused (one of them stored too), one unknown.
            let mut found: Vec<_> = (0..100)
                .map(|i| {
                    crate::store::test_support::page(&format!("http://a.test/{i}"), kept, host)
                })
                .collect();
            found.push(crate::store::test_support::page(
                "http://a.test/old",
                renamed,
                host,
            ));
            store.upsert_discovered(&found, 0).await.unwrap();
            let refusal = |url: &str| Refusal {
                url: url.into(),
                reason: RefusalReason::Robots,
                rule: "Disallow: /".into(),
                site: Some("kept".into()),
                source: None,
            };
            store
                .record_refusals(
                    10,
                    &[refusal("http://a.test/old"), refusal("http://a.test/no")],
                )
                .await
                .unwrap();
            let mut asked: Vec<String> = (0..100).map(|i| format!("http://a.test/{i}")).collect();
            asked.extend(["old", "no", "unknown"].map(|p| format!("http://a.test/{p}")));
            let asked: Vec<&str> = asked.iter().map(String::as_str).collect();
            let seen = store.sources_seen(&asked).await.unwrap();
            assert_eq!(seen.len(), 102, "{seen:?}");
            let in_kept = SourceSeen {
                stored_in: Some(StoredIn {
                    site_id: kept,
                    site_unscheduled: false,
                }),
                refused: false,
            };
            assert!((0..100).all(|i| seen[&format!("http://a.test/{i}")] == in_kept));
            assert_eq!(
                seen["http://a.test/old"],
                SourceSeen {
                    stored_in: Some(StoredIn {
                        site_id: renamed,
                        site_unscheduled: true,
                    }),
                    refused: true,
                }
            );
            assert_eq!(
                seen["http://a.test/no"],
                SourceSeen {
                    stored_in: None,
                    refused: true,
                }
            );
            assert!(!seen.contains_key("http://a.test/unknown"));
        }
    }
}
