//! The single writer: every write to the database goes through [`Store::write`], which runs it
//! in a `BEGIN IMMEDIATE` transaction on the writer pool's one connection and retries it when
//! SQLite reports the database busy.
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

use std::sync::atomic::Ordering;
use std::time::Duration;

use sqlx::{Sqlite, Transaction};
use tracing::warn;

use super::Store;

/// A write transaction as the write closures see it (already begun with `BEGIN IMMEDIATE`).
pub(super) type WriteTx = Transaction<'static, Sqlite>;

/// How many times a busy write is retried before its error is returned.
const RETRIES: u32 = 6;

/// The pause before the first retry; it doubles with each retry (so 6.3 s of pauses in all,
/// on top of the busy timeout each attempt waits).
const FIRST_PAUSE: Duration = Duration::from_millis(100);

/// SQLite's primary result code for "database is locked" (extended codes keep it in the low
/// byte: `SQLITE_BUSY_RECOVERY`, `SQLITE_BUSY_SNAPSHOT`, `SQLITE_BUSY_TIMEOUT`).
const SQLITE_BUSY: i32 = 5;

impl Store {
    /// Runs `op` in a `BEGIN IMMEDIATE` transaction on the writer and commits the transaction
    /// `op` hands back with its result. A transient failure (database busy, writer connection
    /// not obtained in time) rolls the transaction back and calls `op` again with a new one, so
    /// `op` must not have effects outside the transaction. `what` names the write in the log.
    ///
    /// `op` takes the transaction by value and returns it, rather than borrowing it, so that
    /// its future has one plain type: a future borrowing a local transaction would need a
    /// higher-ranked `Send` that the compiler cannot prove, and the refresher spawns its writes.
    pub(super) async fn write<T, F, Fut>(&self, what: &'static str, mut op: F) -> sqlx::Result<T>
    where
        F: FnMut(WriteTx) -> Fut,
        Fut: Future<Output = sqlx::Result<(WriteTx, T)>>,
    {
        let mut retries = 0;
        loop {
            let attempt = async {
                let tx = self.writer().begin_with("BEGIN IMMEDIATE").await?;
                let (tx, value) = op(tx).await?;
                tx.commit().await?;
                Ok(value)
            };
            match attempt.await {
                Err(error) if retries < RETRIES && is_transient(&error) => {
                    let pause = FIRST_PAUSE * 2u32.pow(retries);
                    retries += 1;
                    self.lock_retries.fetch_add(1, Ordering::Relaxed);
                    warn!(
                        write = what,
                        retry = retries,
                        ?pause,
                        %error,
                        "database busy, retrying the write"
                    );
                    tokio::time::sleep(pause).await;
                }
                result => return result,
            }
        }
    }

    /// How many writes were retried because the database was busy, since the store was opened.
    pub fn lock_retries(&self) -> u64 {
        self.lock_retries.load(Ordering::Relaxed)
    }
}

/// Whether `error` is worth retrying: the database was locked by someone else beyond the busy
/// timeout, or the writer connection stayed taken beyond the pool's acquire timeout.
pub(super) fn is_transient(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::PoolTimedOut => true,
        sqlx::Error::Database(db) => db
            .code()
            .and_then(|code| code.parse::<i32>().ok())
            .is_some_and(|code| code & 0xff == SQLITE_BUSY),
        _ => false,
    }
}

