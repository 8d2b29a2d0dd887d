//! The single writer: every write to the database goes through [`Store::write`], which runs it
//! in a write transaction (SQLite: `BEGIN IMMEDIATE`) on the writer pool's one connection and
//! retries it when the database reports itself busy ([`Backend::is_transient`]).
//!
//! Why: with several pooled connections and deferred transactions, a transaction that reads and
//! then writes (`upsert_discovered`) must upgrade its read lock while another connection writes,
//! and SQLite answers `SQLITE_BUSY` at once instead of waiting (waiting could deadlock). With one
//! writer connection the process never competes with itself; `BEGIN IMMEDIATE` takes the write
//! lock up front, where the busy timeout applies. What is left is another process holding the
//! lock longer than the busy timeout (a `sqlite3` shell in the middle of a transaction, say):
//! that write is retried after a growing pause, counted ([`Store::lock_retries`]) and logged,
//! and its error is only returned once the retries are spent.
//!
//! Readers use the reader pool and, the database being in WAL mode, never wait for the writer.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use sqlx::{Any, AnyPool, Transaction};
use tracing::warn;

use super::{Backend, Store};

/// A write transaction as the write closures see it (already begun).
pub(super) type WriteTx = Transaction<'static, Any>;

/// The writer pool (one connection) and the database it writes to.
#[derive(Debug, Clone)]
pub(super) struct Writer {
    pub(super) pool: AnyPool,
    pub(super) backend: Backend,
}

/// How many times a busy write is retried before its error is returned.
const RETRIES: u32 = 6;

/// The pause before the first retry; it doubles with each retry (so 6.3 s of pauses in all,
/// on top of the busy timeout each attempt waits).
const FIRST_PAUSE: Duration = Duration::from_millis(100);

impl Store {
    /// Runs `op` in a `BEGIN IMMEDIATE` transaction on the writer and commits the transaction
    /// `op` hands back with its result. A transient failure (database busy, writer connection
    /// not obtained in time) rolls the transaction back and calls `op` again with a new one, so
    /// `op` must not have effects outside the transaction. `what` names the write in the log.
    ///
    /// `op` takes the transaction by value and returns it, rather than borrowing it, so that
    /// its future has one plain type: a future borrowing a local transaction would need a
    /// higher-ranked `Send` that the compiler cannot prove, and the refresher spawns its writes.
    pub(super) async fn write<T, F, Fut>(&self, what: &'static str, op: F) -> sqlx::Result<T>
    where
        F: FnMut(WriteTx) -> Fut,
        Fut: Future<Output = sqlx::Result<(WriteTx, T)>>,
    {
        write_on(&self.writer, &self.lock_retries, what, op).await
    }

    /// How many writes were retried because the database was busy, since the store was opened.
    pub fn lock_retries(&self) -> u64 {
        self.lock_retries.load(Ordering::Relaxed)
    }
}

/// [`Store::write`] on the writer pool `writer`, counting retries in `lock_retries` (the group
/// commit task runs its writes through this too).
pub(super) async fn write_on<T, F, Fut>(
    writer: &Writer,
    lock_retries: &AtomicU64,
    what: &'static str,
    mut op: F,
) -> sqlx::Result<T>
where
    F: FnMut(WriteTx) -> Fut,
    Fut: Future<Output = sqlx::Result<(WriteTx, T)>>,
{
    let mut retries = 0;
    loop {
        let attempt = async {
            let tx = writer.pool.begin_with(writer.backend.begin_write()).await?;
            // The batched statements pick their placeholders by the connection's database.
            debug_assert_eq!(
                Backend::of(&tx),
                writer.backend,
                "the database a connection names"
            );
            let (tx, value) = op(tx).await?;
            tx.commit().await?;
            Ok(value)
        };
        match attempt.await {
            Err(error) if retries < RETRIES && writer.backend.is_transient(&error) => {
                let pause = FIRST_PAUSE * 2u32.pow(retries);
                retries += 1;
                lock_retries.fetch_add(1, Ordering::Relaxed);
                let cause = transient_cause(&error);
                warn!(
                    write = what,
                    retry = retries,
                    ?pause,
                    %error,
                    cause,
                    "a write could not be made for now, retrying it"
                );
                tokio::time::sleep(pause).await;
            }
            result => return result,
        }
    }
}

/// Why a write that [`Backend::is_transient`] retries failed, for the log. A server that cannot
/// be reached shows as no connection within the pool's timeout (sqlx keeps the connect error to
/// itself), not as a lock; the log said "database busy" for both.
fn transient_cause(error: &sqlx::Error) -> &'static str {
    match error {
        sqlx::Error::PoolTimedOut => {
            "no database connection in time (the server unreachable, or every connection taken)"
        }
        _ => "the database busy (another writer holds its lock)",
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    use sqlx::Connection;
    use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};

    use crate::store::Store;
    use crate::store::discovered::Discovered;
    use crate::store::errors::ErrorRecord;
    use crate::store::observations::NewObservation;
    use crate::store::summary::SummaryUpdate;
    use crate::store::test_support::temp_store;

    /// A server out of reach is not logged as a busy database (helper-90 saw "database busy"
    /// all through a PostgreSQL outage).
    #[test]
    fn a_server_out_of_reach_is_not_called_busy() {
        let unreachable = super::transient_cause(&sqlx::Error::PoolTimedOut);
        assert!(unreachable.contains("unreachable"), "{unreachable}");
        assert!(!unreachable.contains("busy"), "{unreachable}");
    }

    const TASKS: i64 = 8;
    const WRITES: i64 = 200;

    fn discovered(url: String, site_id: i64, host_id: i64) -> Discovered {
        Discovered {
            discovered_from: Some("seed".into()),
            ..crate::store::test_support::page(&url, site_id, host_id)
        }
    }

    fn check(url_id: i64, checked_ms: i64) -> NewObservation {
        NewObservation {
            url_id,
            checked_ms,
            method: "GET",
            status: Some(200),
            ..Default::default()
        }
    }

    fn due_at(next_due_ms: i64) -> SummaryUpdate {
        SummaryUpdate {
            next_due_ms,
            ..Default::default()
        }
    }

    /// Another process's connection (a user's `sqlite3` shell, say) that takes the write lock
    /// and holds it until the returned sender fires.
    async fn hold_write_lock(path: &std::path::Path) -> tokio::sync::oneshot::Sender<()> {
        let options = SqliteConnectOptions::new().filename(path);
        let mut conn = SqliteConnection::connect_with(&options).await.unwrap();
        sqlx::query("BEGIN IMMEDIATE")
            .execute(&mut conn)
            .await
            .unwrap();
        sqlx::query("INSERT INTO errors (at_ms, scope, message) VALUES (1, 'shell', 'held')")
            .execute(&mut conn)
            .await
            .unwrap();
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = released.await;
            sqlx::query("COMMIT").execute(&mut conn).await.unwrap();
            conn.close().await.unwrap();
        });
        release
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_writers_and_readers_lose_nothing() {
        let (stores, _dir) =
            crate::store::test_support::stores("concurrent_writers_and_readers_lose_nothing").await;
        for store in stores {
            let (site_id, host_id) = crate::store::test_support::site_and_host(&store).await;
            let writing = Arc::new(AtomicBool::new(true));
            let mut readers = Vec::new();
            for _ in 0..2 {
                let (store, writing) = (store.clone(), writing.clone());
                readers.push(tokio::spawn(async move {
                    let mut reads = 0;
                    while writing.load(Ordering::Relaxed) {
                        store.url_status(None).await.unwrap();
                        store.host_status(None).await.unwrap();
                        store.recent_errors(50).await.unwrap();
                        store.observation_count().await.unwrap();
                        reads += 1;
                    }
                    reads
                }));
            }
            let mut writers = Vec::new();
            for task in 0..TASKS {
                let store = store.clone();
                writers.push(tokio::spawn(async move {
                    for n in 0..WRITES {
                        let url = format!("http://a.test/{task}/{n}");
                        let found = discovered(url, site_id, host_id);
                        let ids = store.upsert_discovered(&[found], n).await.unwrap();
                        store
                            .record_check(&check(ids[0], n), &due_at(n + 1))
                            .await
                            .unwrap();
                        let error = ErrorRecord {
                            scope: "fetch",
                            message: format!("{task}/{n}"),
                            ..Default::default()
                        };
                        store.record_error(n, &error).await.unwrap();
                    }
                }));
            }
            for writer in writers {
                writer.await.unwrap();
            }
            writing.store(false, Ordering::Relaxed);
            for reader in readers {
                assert!(reader.await.unwrap() > 0, "a reader never completed a read");
            }

            let total = TASKS * WRITES;
            assert_eq!(store.observation_count().await.unwrap(), total);
            assert_eq!(
                store.urls_of_site(site_id).await.unwrap().len() as i64,
                total
            );
            assert_eq!(
                store.recent_errors(total + 10).await.unwrap().len() as i64,
                total
            );
            for task in 0..TASKS {
                for n in [0, WRITES / 2, WRITES - 1] {
                    let row = store
                        .url_row(&format!("http://a.test/{task}/{n}"))
                        .await
                        .unwrap();
                    let row = row.expect("every discovered URL is stored");
                    assert_eq!((row.checks, row.next_due_ms), (1, Some(n + 1)));
                }
            }
            // One writer connection: the process never finds the database locked by itself.
            assert_eq!(store.lock_retries(), 0);
            store.close().await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_check_waits_out_another_process_holding_the_lock() {
        let (store, dir) = temp_store().await;
        let (site_id, host_id) = crate::store::test_support::site_and_host(&store).await;
        let found = discovered("http://a.test/x".into(), site_id, host_id);
        let id = store.upsert_discovered(&[found], 0).await.unwrap()[0];

        let release = hold_write_lock(&dir.path().join("test.db")).await;
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(1_500)).await;
            let _ = release.send(());
        });
        store
            .record_check(&check(id, 5), &due_at(10))
            .await
            .unwrap();

        assert_eq!(store.observation_count().await.unwrap(), 1);
        let errors = store.recent_errors(10).await.unwrap();
        assert_eq!(errors.len(), 1, "the other process's write is kept too");
        store.close().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_lock_held_past_the_busy_timeout_is_retried_not_lost() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("test.db");
        let store = Store::open_with(&path, Duration::from_millis(50))
            .await
            .unwrap();
        let (site_id, host_id) = crate::store::test_support::site_and_host(&store).await;
        let found = discovered("http://a.test/x".into(), site_id, host_id);
        let id = store.upsert_discovered(&[found], 0).await.unwrap()[0];

        // The lock is released only once the store has found it busy and retried, so the
        // first attempt must fail whatever the machine's speed; the cap only ends a failing
        // test.
        let release = hold_write_lock(&path).await;
        let watcher = store.clone();
        tokio::spawn(async move {
            for _ in 0..2_000 {
                if watcher.lock_retries() > 0 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            let _ = release.send(());
        });
        store
            .record_check(&check(id, 5), &due_at(10))
            .await
            .unwrap();

        assert!(store.lock_retries() >= 1);
        let row = store.url_row("http://a.test/x").await.unwrap().unwrap();
        assert_eq!((row.checks, row.next_due_ms), (1, Some(10)));
        store.close().await;
    }

    #[tokio::test]
    async fn a_write_that_fails_for_another_reason_is_not_retried() {
        let (stores, _dir) = crate::store::test_support::stores(
            "a_write_that_fails_for_another_reason_is_not_retried",
        )
        .await;
        for store in stores {
            // No URL 42: the foreign key rejects the observation.
            let error = store.record_check(&check(42, 5), &due_at(10)).await;
            assert!(error.is_err());
            assert_eq!(store.lock_retries(), 0);
            assert_eq!(store.observation_count().await.unwrap(), 0);
        }
    }
}
