//! Hosts' persisted politeness state (table `host_politeness`): written by the politeness
//! journal as it changes, read once at start. See `politeness::saved`.
//!
//! The journal writes before a host's requests (once a second on a busy host) and after them,
//! so its saves can be nearly as many as the checks: the saves waiting in one group commit are written by one multi-row upsert per chunk
//! ([`super::batch`]), applied in their order (SQLite runs an upsert's rows one after another, so
//! two saves of one host in one statement merge as two statements would).

use std::sync::{Arc, LazyLock};

use super::Store;
use super::batch::{Texts, distinct_chunks, placeholder_rows, text_for, texts};
use super::writer::WriteTx;

/// One host's persisted politeness state (a row of `host_politeness`); what it means for a
/// restart is [`crate::politeness`]'s (`SavedHost::gate_ms`).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct SavedHost {
    /// The politeness key ([`crate::politeness::host_key`]).
    #[sqlx(rename = "host_key")]
    pub key: String,
    /// The least time between requests at the last request (ms).
    pub min_interval_ms: i64,
    /// When the latest request started (Unix ms), written before it was sent; or a later
    /// time up to which the host's next requests may start without a write of their own (a
    /// reservation, see `politeness::saved`).
    pub last_start_ms: Option<i64>,
    /// When the latest request ended (Unix ms).
    pub last_end_ms: Option<i64>,
    /// Back-off level (0 = healthy).
    #[sqlx(try_from = "i64")]
    pub backoff_level: u32,
    /// Closed until (back-off or Retry-After, Unix ms; 0 when never closed).
    pub backoff_until_ms: i64,
    /// Until when the latest Retry-After asked us to stay away (Unix ms).
    pub retry_after_until_ms: Option<i64>,
}

/// One save of a host's state, stamped with the freshet clock.
#[derive(Debug, Clone)]
pub(super) struct PolitenessWrite {
    pub saved: SavedHost,
    pub now_ms: i64,
}

impl Store {
    /// Writes one host's state. Times only move forward (a late background write of an older
    /// snapshot cannot undo a newer one); the level and interval are the snapshot's. `now_ms` (the
    /// freshet clock) is kept as `updated_ms`. Also keeps
    /// `hosts.backoff_until_ms` of the host's origins up to date for the reports. Answers once
    /// committed (with the other writes waiting at that moment).
    pub async fn save_politeness(&self, saved: &SavedHost, now_ms: i64) -> sqlx::Result<()> {
        let write = PolitenessWrite {
            saved: saved.clone(),
            now_ms,
        };
        self.queue_politeness(Arc::new(write)).await
    }

    /// Each site's hosts, by the URLs it holds: (site id, origin).
    pub async fn site_origins(&self) -> sqlx::Result<Vec<(i64, String)>> {
        sqlx::query_as(
            "SELECT DISTINCT u.site_id, h.origin FROM urls u JOIN hosts h ON h.id = u.host_id",
        )
        .fetch_all(self.reader())
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

    /// One host's politeness state, by politeness key.
    pub async fn saved_host(&self, key: &str) -> sqlx::Result<Option<SavedHost>> {
        sqlx::query_as(
            "SELECT host_key, min_interval_ms, last_start_ms, last_end_ms, backoff_level,
                    backoff_until_ms, retry_after_until_ms
             FROM host_politeness WHERE host_key = $1",
        )
        .bind(key)
        .fetch_optional(self.reader())
        .await
    }
}

/// Writes `saves` in `tx`, in their order.
pub(super) async fn write_politeness(
    mut tx: WriteTx,
    saves: &[Arc<PolitenessWrite>],
) -> sqlx::Result<WriteTx> {
    // One upsert statement may not touch a host twice (PostgreSQL refuses it).
    for chunk in distinct_chunks(saves, |write| write.saved.key.clone()) {
        let mut query = sqlx::query(text_for(&UPSERT_POLITENESS, &tx, chunk.len()));
        for write in chunk {
            let saved = &write.saved;
            query = query
                .bind(&saved.key)
                .bind(saved.min_interval_ms)
                .bind(saved.last_start_ms)
                .bind(saved.last_end_ms)
                .bind(i64::from(saved.backoff_level))
                .bind(saved.backoff_until_ms)
                .bind(saved.retry_after_until_ms)
                .bind(write.now_ms);
        }
        query.execute(&mut *tx).await?;
    }
    for write in saves.iter().filter(|w| w.saved.backoff_until_ms > 0) {
        let saved = &write.saved;
        // The origins of this politeness host (scheme, name, optional port).
        sqlx::query(
            "UPDATE hosts SET backoff_until_ms = $1
             WHERE (origin = 'http://' || $2 OR origin = 'https://' || $3)
               AND COALESCE(backoff_until_ms, 0) < $4",
        )
        .bind(saved.backoff_until_ms)
        .bind(&saved.key)
        .bind(&saved.key)
        .bind(saved.backoff_until_ms)
        .execute(&mut *tx)
        .await?;
    }
    Ok(tx)
}

static UPSERT_POLITENESS: LazyLock<Texts> = LazyLock::new(|| {
    texts(|n| {
        format!(
            "INSERT INTO host_politeness (host_key, min_interval_ms, last_start_ms, last_end_ms,
                 backoff_level, backoff_until_ms, retry_after_until_ms, updated_ms)
             VALUES {}
             ON CONFLICT(host_key) DO UPDATE SET
                 min_interval_ms = excluded.min_interval_ms,
                 last_start_ms = CASE WHEN excluded.last_start_ms > host_politeness.last_start_ms
                     THEN excluded.last_start_ms
                     ELSE COALESCE(host_politeness.last_start_ms, excluded.last_start_ms) END,
                 last_end_ms = CASE WHEN excluded.last_end_ms > host_politeness.last_end_ms
                     THEN excluded.last_end_ms
                     ELSE COALESCE(host_politeness.last_end_ms, excluded.last_end_ms) END,
                 backoff_level = excluded.backoff_level,
                 backoff_until_ms = CASE
                     WHEN excluded.backoff_until_ms > host_politeness.backoff_until_ms
                     THEN excluded.backoff_until_ms ELSE host_politeness.backoff_until_ms END,
                 retry_after_until_ms = CASE
                     WHEN excluded.retry_after_until_ms > host_politeness.retry_after_until_ms
                     THEN excluded.retry_after_until_ms
                     ELSE COALESCE(host_politeness.retry_after_until_ms,
                                   excluded.retry_after_until_ms) END,
                 updated_ms = excluded.updated_ms",
            placeholder_rows(n, 8)
        )
    })
});

#[cfg(test)]
mod tests {
    use super::SavedHost;

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
        let (stores, _dir) =
            crate::store::test_support::stores("state_round_trips_and_times_only_move_forward")
                .await;
        for store in stores {
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
                sqlx::query_as("SELECT backoff_until_ms FROM hosts WHERE id = $1")
                    .bind(host_id)
                    .fetch_one(store.reader())
                    .await
                    .unwrap();
            assert_eq!(
                host.0,
                Some(90_000),
                "the origin's back-off is visible in hosts"
            );

            // The same three saves of another host in one group commit (one statement) end the same.
            let other = |s: SavedHost| SavedHost {
                key: "b.test".into(),
                ..s
            };
            let (first, second, late) = (
                other(saved(1_000, None, 0)),
                other(saved(2_000, Some(2_100), 90_000)),
                SavedHost {
                    min_interval_ms: 4_000,
                    backoff_level: 0,
                    ..other(saved(1_000, Some(1_100), 0))
                },
            );
            let held = crate::store::test_support::hold_writer(&store).await;
            let (r1, r2, r3, ()) = tokio::join!(
                store.save_politeness(&first, 1),
                store.save_politeness(&second, 2),
                store.save_politeness(&late, 3),
                held.release(),
            );
            for result in [r1, r2, r3] {
                result.unwrap();
            }
            assert_eq!(store.group_commits(), (1, 3));
            let loaded = store.load_politeness().await.unwrap();
            // Times only move forward; the interval and level are the last save's.
            let expected = SavedHost {
                min_interval_ms: 4_000,
                backoff_level: 0,
                ..other(saved(2_000, Some(2_100), 90_000))
            };
            assert_eq!(loaded[1], expected);
            store.close().await;
        }
    }
}
