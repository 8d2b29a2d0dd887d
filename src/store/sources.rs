//! What the store holds of the sources a schedule names (its sitemaps, feeds and seeds): whether
//! each is stored, under which site, and whether it was refused, a few dozen to a query. A start
//! asks it of every source to find the ones added since the last pass
//! (`refresher::discovery_due`).

use std::collections::HashMap;
use std::sync::LazyLock;

use super::Store;
use super::batch::{Texts, placeholder_rows, power_of_two_chunks, text_for, texts};

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
             FROM urls WHERE url IN {}",
            placeholder_rows(1, n)
        )
    })
});

static REFUSED_SOURCES: LazyLock<Texts> = LazyLock::new(|| {
    texts(|n| {
        format!(
            "SELECT DISTINCT url FROM refusals WHERE url IN {}",
            placeholder_rows(1, n)
        )
    })
});

impl Store {
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
    use crate::store::refusals::{Refusal, RefusalReason};

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
