//! A PostgreSQL database's schema is brought up to date under a lock row of freshet's own
//! (table `freshet_migration_lock`), not under sqlx's `pg_advisory_lock`, which the engines that
//! speak PostgreSQL's protocol without being PostgreSQL lack (CockroachDB) or fake: workers
//! started together migrate once, one after the other, on any of them.
//!
//! The row names its holder and lasts [`LOCK_TTL_MS`] of real time, so a migrator killed midway
//! holds the others up no longer than that. (Real time, not the refresher's clock: the lock is
//! between processes, before any clock is handed around.)

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use sqlx::AnyPool;

/// How long a lock row holds unless its holder gives it back (long: an index built on a large
/// `urls` table takes minutes).
const LOCK_TTL_MS: i64 = 60 * 60_000;
/// How often a worker waiting for the lock asks again.
const RETRY: Duration = Duration::from_millis(200);
/// How long a worker waits for another's migration before giving up.
const PATIENCE: Duration = Duration::from_secs(65 * 60);

fn unix_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Runs the PostgreSQL migrations on `pool` under the lock row (`shown`: the database, for
/// messages).
pub(super) async fn migrate_postgres(pool: &AnyPool, shown: &str) -> anyhow::Result<()> {
    let me = format!("{}-{:08x}", std::process::id(), rand::random::<u32>());
    let create = "CREATE TABLE IF NOT EXISTS freshet_migration_lock (
        id INTEGER PRIMARY KEY, holder TEXT NOT NULL, until_ms BIGINT NOT NULL)";
    // Two servers creating it at once: one may be told it exists as it is created.
    if sqlx::query(create).execute(pool).await.is_err() {
        tokio::time::sleep(RETRY).await;
        sqlx::query(create)
            .execute(pool)
            .await
            .with_context(|| format!("creating the migration lock table in {shown}"))?;
    }
    let waited_since = tokio::time::Instant::now();
    loop {
        let now = unix_ms();
        let taken: Option<String> = sqlx::query_scalar(
            "INSERT INTO freshet_migration_lock (id, holder, until_ms) VALUES (1, $1, $2)
             ON CONFLICT (id) DO UPDATE SET holder = excluded.holder,
                 until_ms = excluded.until_ms
             WHERE freshet_migration_lock.until_ms < $3
             RETURNING holder",
        )
        .bind(&me)
        .bind(now + LOCK_TTL_MS)
        .bind(now)
        .fetch_optional(pool)
        .await
        .with_context(|| format!("taking the migration lock of {shown}"))?;
        if taken.is_some() {
            break;
        }
        anyhow::ensure!(
            waited_since.elapsed() < PATIENCE,
            "another freshet has been migrating {shown} for {} minutes (its row in \
             freshet_migration_lock): try again once it is done",
            PATIENCE.as_secs() / 60
        );
        tokio::time::sleep(RETRY).await;
    }
    let mut migrator = sqlx::migrate!("./migrations/postgres");
    migrator.set_locking(false);
    let migrated = migrator.run(pool).await;
    let released = sqlx::query("DELETE FROM freshet_migration_lock WHERE holder = $1")
        .bind(&me)
        .execute(pool)
        .await;
    migrated.with_context(|| format!("migrating database {shown}"))?;
    released.with_context(|| format!("giving back the migration lock of {shown}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::store::Store;
    use crate::store::test_support::postgres_server;

    /// Workers started together on a new database: every one opens it, the schema is made once.
    #[tokio::test]
    async fn workers_opening_a_new_database_together_migrate_it_once() {
        let Some(server) = postgres_server("migrate_together") else {
            return;
        };
        let name = format!("freshet_unit_migrate_together_{}", std::process::id());
        let url = crate::store::create_postgres_database(&server, &name)
            .await
            .unwrap();
        let path = std::path::Path::new(&url);
        let opened = futures_util::future::join_all((0..4).map(|_| Store::open(path))).await;
        for store in opened {
            let store = store.expect("every worker opens the database");
            assert!(store.site_names().await.unwrap().is_empty());
            store.close().await;
        }
        let store = Store::open(path).await.unwrap();
        let lock_rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM freshet_migration_lock")
            .fetch_one(store.reader())
            .await
            .unwrap();
        assert_eq!(lock_rows, 0, "the lock is given back");
        store.close().await;
    }
}
