//! Hosts' persisted politeness state (table `host_politeness`): written by the politeness
//! journal as it changes, read once at start. See `politeness::saved`.

use std::sync::Arc;

use crate::politeness::SavedHost;

use super::Store;

impl Store {
    /// Writes one host's state. Times only move forward (a late background write of an older
    /// snapshot cannot undo a newer one); the level and interval are the snapshot's. `now_ms` (the
    /// freshet clock) is kept as `updated_ms`. Also keeps
    /// `hosts.backoff_until_ms` of the host's origins up to date for the reports.
    pub async fn save_politeness(&self, saved: &SavedHost, now_ms: i64) -> sqlx::Result<()> {
        let saved = Arc::new(saved.clone());
        self.write_grouped("save_politeness", move |mut tx| {
            let saved = saved.clone();
            async move {
            sqlx::query(
                "INSERT INTO host_politeness (host_key, min_interval_ms, last_start_ms, last_end_ms,
                     backoff_level, backoff_until_ms, retry_after_until_ms, updated_ms)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                 ON CONFLICT(host_key) DO UPDATE SET
                     min_interval_ms = excluded.min_interval_ms,
                     last_start_ms = MAX(COALESCE(last_start_ms, excluded.last_start_ms),
                                         COALESCE(excluded.last_start_ms, last_start_ms)),
                     last_end_ms = MAX(COALESCE(last_end_ms, excluded.last_end_ms),
                                       COALESCE(excluded.last_end_ms, last_end_ms)),
                     backoff_level = excluded.backoff_level,
                     backoff_until_ms = MAX(backoff_until_ms, excluded.backoff_until_ms),
                     retry_after_until_ms = MAX(COALESCE(retry_after_until_ms, excluded.retry_after_until_ms),
                                                COALESCE(excluded.retry_after_until_ms, retry_after_until_ms)),
                     updated_ms = excluded.updated_ms",
            )
            .bind(&saved.key)
            .bind(saved.min_interval_ms)
            .bind(saved.last_start_ms)
            .bind(saved.last_end_ms)
            .bind(i64::from(saved.backoff_level))
            .bind(saved.backoff_until_ms)
            .bind(saved.retry_after_until_ms)
            .bind(now_ms)
            .execute(&mut *tx)
            .await?;
            if saved.backoff_until_ms > 0 {
                // The origins of this politeness host (scheme, name, optional port).
                sqlx::query(
                    "UPDATE hosts SET backoff_until_ms = ?
                     WHERE (origin = 'http://' || ? OR origin = 'https://' || ?)
                       AND COALESCE(backoff_until_ms, 0) < ?",
                )
                .bind(saved.backoff_until_ms)
                .bind(&saved.key)
                .bind(&saved.key)
                .bind(saved.backoff_until_ms)
                .execute(&mut *tx)
                .await?;
            }
            Ok((tx, ()))
            }
        })
        .await
    }

    /// Every host's saved state.
    pub async fn load_politeness(&self) -> sqlx::Result<Vec<SavedHost>> {
        sqlx::query_as(
            "SELECT host_key, min_interval_ms, last_start_ms, last_end_ms, backoff_level,
                    backoff_until_ms, retry_after_until_ms
             FROM host_politeness ORDER BY host_key",
        )
        .fetch_all(self.reader())
        .await
    }
}

#[cfg(test)]
mod tests {
    use crate::politeness::SavedHost;
    use crate::store::test_support::temp_store;

    fn saved(start: i64, end: Option<i64>, until: i64) -> SavedHost {
        SavedHost {
            key: "a.test:8080".into(),
            min_interval_ms: 3_000,
            last_start_ms: Some(start),
            last_end_ms: end,
            backoff_level: 1,
            backoff_until_ms: until,
            retry_after_until_ms: (until > 0).then_some(until),
        }
    }

    #[tokio::test]
    async fn state_round_trips_and_times_only_move_forward() {
        let (store, _dir) = temp_store().await;
        let host_id = store.host_id("http://a.test:8080").await.unwrap();
        store
            .save_politeness(&saved(1_000, None, 0), 1)
            .await
            .unwrap();
        store
            .save_politeness(&saved(2_000, Some(2_100), 90_000), 2)
            .await
            .unwrap();
        // An older snapshot written late moves nothing back.
        store
            .save_politeness(&saved(1_000, Some(1_100), 0), 3)
            .await
            .unwrap();
        let loaded = store.load_politeness().await.unwrap();
        assert_eq!(loaded, vec![saved(2_000, Some(2_100), 90_000)]);
        let host: (Option<i64>,) =
            sqlx::query_as("SELECT backoff_until_ms FROM hosts WHERE id = ?")
                .bind(host_id)
                .fetch_one(store.reader())
                .await
                .unwrap();
        assert_eq!(
            host.0,
            Some(90_000),
            "the origin's back-off is visible in hosts"
        );
        store.close().await;
    }
}
