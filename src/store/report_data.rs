//! Reads for `freshet report html` (from the base tables, not the report views, so the page does
//! not depend on how the views are shaped), and the demo's true freshness samples
//! (`true_freshness_samples`, migration 0010) that the page plots beside freshet's estimate.
//!
//! Counts over time are bucketed in SQL (`(t - from) / bucket`), so a database of millions of
//! observations answers with a few hundred rows.

use super::Store;

/// One site as the report needs it.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct SiteRow {
    /// Row id.
    pub id: i64,
    /// Its name in the schedule.
    pub name: String,
    /// Its budget, requests per day.
    pub requests_per_day: f64,
}

/// The truth about one site's copies at one instant (a row of `true_freshness_samples`).
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct TrueFreshnessSample {
    /// The site's row id.
    pub site_id: i64,
    /// When, clock ms.
    pub at_ms: i64,
    /// Copies there were (page URLs fetched by then: `freshet demo` judges each URL freshet
    /// holds as its own copy, as freshet's estimate does).
    pub copies: i64,
    /// Of them, changed since their last fetch.
    pub stale: i64,
    /// Mean true age of the copies, days, each weighed as freshet weighs it.
    pub mean_age_days: f64,
    /// Share of the copies that are stale, each weighed as freshet weighs it.
    pub share_stale: f64,
}

/// How many checks fell in one time bucket, for one key (a host's origin or a site's id).
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct BucketCount<K> {
    /// The origin or site.
    pub key: K,
    /// Bucket number: the bucket starts at `from + bucket × width`.
    pub bucket: i64,
    /// Checks (observations) in it.
    pub checks: i64,
}

impl Store {
    /// Every site, by name.
    pub async fn sites(&self) -> sqlx::Result<Vec<SiteRow>> {
        sqlx::query_as("SELECT id, name, requests_per_day FROM sites ORDER BY name")
            .fetch_all(self.reader())
            .await
    }

    /// The site id of `name`, if it exists.
    pub async fn site_id(&self, name: &str) -> sqlx::Result<Option<i64>> {
        sqlx::query_scalar("SELECT id FROM sites WHERE name = $1")
            .bind(name)
            .fetch_optional(self.reader())
            .await
    }

    /// Records true freshness samples (one transaction; a sample at the same instant replaces
    /// the earlier one).
    pub async fn add_true_freshness_samples(
        &self,
        samples: &[TrueFreshnessSample],
    ) -> sqlx::Result<()> {
        self.write("add_true_freshness_samples", |mut tx| async move {
            for s in samples {
                sqlx::query(
                    "INSERT INTO true_freshness_samples
                         (site_id, at_ms, copies, stale, mean_age_days, share_stale)
                     VALUES ($1, $2, $3, $4, $5, $6)
                     ON CONFLICT (site_id, at_ms) DO UPDATE SET copies = excluded.copies,
                         stale = excluded.stale, mean_age_days = excluded.mean_age_days,
                         share_stale = excluded.share_stale",
                )
                .bind(s.site_id)
                .bind(s.at_ms)
                .bind(s.copies)
                .bind(s.stale)
                .bind(s.mean_age_days)
                .bind(s.share_stale)
                .execute(&mut *tx)
                .await?;
            }
            Ok((tx, ()))
        })
        .await
    }

    /// Every true freshness sample, by time.
    pub async fn true_freshness_samples(&self) -> sqlx::Result<Vec<TrueFreshnessSample>> {
        sqlx::query_as("SELECT * FROM true_freshness_samples ORDER BY at_ms, site_id")
            .fetch_all(self.reader())
            .await
    }

    /// The first and last observation times, if any.
    pub async fn observation_span(&self) -> sqlx::Result<Option<(i64, i64)>> {
        let span: (Option<i64>, Option<i64>) =
            sqlx::query_as("SELECT MIN(checked_ms), MAX(checked_ms) FROM observations")
                .fetch_one(self.reader())
                .await?;
        Ok(span.0.zip(span.1))
    }

    /// Checks (observations) per host origin per bucket of `width_ms` from `from_ms`.
    pub async fn checks_per_host(
        &self,
        from_ms: i64,
        width_ms: i64,
    ) -> sqlx::Result<Vec<BucketCount<String>>> {
        sqlx::query_as(
            "SELECT h.origin AS key, (o.checked_ms - $1) / $2 AS bucket, COUNT(*) AS checks
             FROM observations o JOIN urls u ON u.id = o.url_id JOIN hosts h ON h.id = u.host_id
             WHERE o.checked_ms >= $1
             GROUP BY h.id, bucket ORDER BY h.origin, bucket",
        )
        .bind(from_ms)
        .bind(width_ms.max(1))
        .fetch_all(self.reader())
        .await
    }

    /// Checks (observations) per site id per bucket of `width_ms` from `from_ms`.
    pub async fn checks_per_site(
        &self,
        from_ms: i64,
        width_ms: i64,
    ) -> sqlx::Result<Vec<BucketCount<i64>>> {
        sqlx::query_as(
            "SELECT u.site_id AS key, (o.checked_ms - $1) / $2 AS bucket, COUNT(*) AS checks
             FROM observations o JOIN urls u ON u.id = o.url_id
             WHERE o.checked_ms >= $1
             GROUP BY u.site_id, bucket ORDER BY u.site_id, bucket",
        )
        .bind(from_ms)
        .bind(width_ms.max(1))
        .fetch_all(self.reader())
        .await
    }

    /// Each politeness host's least interval between requests (host key, ms).
    pub async fn host_intervals(&self) -> sqlx::Result<Vec<(String, i64)>> {
        sqlx::query_as("SELECT host_key, min_interval_ms FROM host_politeness ORDER BY host_key")
            .fetch_all(self.reader())
            .await
    }

    /// Problems by kind: failed checks by outcome (`HTTP 4xx`, `HTTP 5xx`, `no response`), then
    /// recorded errors by scope (`recorded: robots`, ...), most frequent first within each.
    pub async fn errors_by_kind(&self) -> sqlx::Result<Vec<(String, i64)>> {
        let mut kinds: Vec<(String, i64)> = sqlx::query_as(
            "SELECT CASE WHEN status IS NULL THEN 'check: no response'
                         WHEN status >= 500 THEN 'check: HTTP 5xx'
                         ELSE 'check: HTTP 4xx' END AS kind, COUNT(*) AS n
             FROM observations WHERE status IS NULL OR status >= 400
             GROUP BY kind ORDER BY n DESC, kind",
        )
        .fetch_all(self.reader())
        .await?;
        let recorded: Vec<(String, i64)> = sqlx::query_as(
            "SELECT 'recorded: ' || scope AS kind, COUNT(*) AS n FROM errors
             GROUP BY scope ORDER BY n DESC, scope",
        )
        .fetch_all(self.reader())
        .await?;
        kinds.extend(recorded);
        Ok(kinds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sites::SiteRecord;

    #[tokio::test]
    async fn true_samples_round_trip_and_empty_reads() {
        let (stores, _dir) =
            crate::store::test_support::stores("true_samples_round_trip_and_empty_reads").await;
        for store in stores {
            assert!(store.sites().await.unwrap().is_empty());
            assert_eq!(store.observation_span().await.unwrap(), None);
            assert!(store.errors_by_kind().await.unwrap().is_empty());
            assert!(store.checks_per_host(0, 1000).await.unwrap().is_empty());
            let site = SiteRecord {
                name: "demo-web",
                weight: 1.0,
                requests_per_day: 240.0,
                source_file: None,
            };
            let id = store.upsert_site(&site, 5).await.unwrap();
            assert_eq!(store.site_id("demo-web").await.unwrap(), Some(id));
            assert_eq!(store.site_id("other").await.unwrap(), None);
            let sample = TrueFreshnessSample {
                site_id: id,
                at_ms: 900_000,
                copies: 10,
                stale: 3,
                mean_age_days: 0.25,
                share_stale: 0.3,
            };
            store
                .add_true_freshness_samples(std::slice::from_ref(&sample))
                .await
                .unwrap();
            assert_eq!(store.true_freshness_samples().await.unwrap(), vec![sample]);
            let sites = store.sites().await.unwrap();
            assert_eq!(sites[0].requests_per_day, 240.0);
        }
    }
}
