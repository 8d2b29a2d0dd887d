//! A named hold on a PostgreSQL database: what a SQLite file's run lock ([`super::run_lock`]) is
//! for a file. A hold is a row of table `freshet_holds` locked (`FOR UPDATE NOWAIT`) by a
//! transaction left open on a connection of its own for as long as the hold lives. The server
//! lets the row go when that connection closes, so a process killed at any moment holds
//! nothing, and no row needs a time to live or a heartbeat (a demo's rows are stamped with its
//! virtual clock, which another process cannot read as time). Only a row lock is used, not an
//! advisory lock, so the same SQL runs on the engines that speak PostgreSQL's protocol.
//!
//! The table is made on first use, as the migration lock's is ([`super::migration_lock`]): it
//! belongs to no schema version, and [`super::Store::delete_all_rows`] leaves it alone.

use anyhow::Context as _;
use sqlx::Connection;
use sqlx::postgres::PgConnection;

use super::redact;

/// PostgreSQL's `lock_not_available`: `NOWAIT` found the row locked.
const LOCK_NOT_AVAILABLE: &str = "55P03";

/// A hold taken by [`hold`]; dropping it (or the process ending) gives it back.
#[derive(Debug)]
pub struct PostgresHold {
    /// The connection whose open transaction locks the row.
    _connection: PgConnection,
}

/// Takes the hold named `name` on the database `url`: `Ok(None)` when another process holds it.
pub async fn hold(url: &str, name: &str) -> anyhow::Result<Option<PostgresHold>> {
    let shown = redact(url);
    let mut connection = PgConnection::connect(url)
        .await
        .with_context(|| format!("connecting to {shown}"))?;
    let create = "CREATE TABLE IF NOT EXISTS freshet_holds (name TEXT PRIMARY KEY)";
    // Two processes creating it at once: one may be told it exists as it is created.
    if sqlx::query(create).execute(&mut connection).await.is_err() {
        sqlx::query(create)
            .execute(&mut connection)
            .await
            .with_context(|| format!("creating table freshet_holds in {shown}"))?;
    }
    sqlx::query("INSERT INTO freshet_holds (name) VALUES ($1) ON CONFLICT (name) DO NOTHING")
        .bind(name)
        .execute(&mut connection)
        .await
        .with_context(|| format!("adding hold {name:?} to {shown}"))?;
    sqlx::query("BEGIN").execute(&mut connection).await?;
    let locked = sqlx::query("SELECT name FROM freshet_holds WHERE name = $1 FOR UPDATE NOWAIT")
        .bind(name)
        .execute(&mut connection)
        .await;
    match locked {
        Ok(_) => Ok(Some(PostgresHold {
            _connection: connection,
        })),
        Err(sqlx::Error::Database(error))
            if error.code().as_deref() == Some(LOCK_NOT_AVAILABLE) =>
        {
            Ok(None)
        }
        Err(error) => Err(error).with_context(|| format!("taking hold {name:?} of {shown}")),
    }
}

#[cfg(test)]
mod tests {
    use super::hold;
    use crate::store::test_support::postgres_server;

    /// A hold is one process's at a time, and free again once its holder lets go (a closed
    /// connection: what a killed process leaves).
    #[tokio::test]
    async fn a_hold_is_taken_once_and_free_again_when_its_connection_closes() {
        let Some(server) = postgres_server("hold_once") else {
            return;
        };
        let name = format!("freshet_unit_hold_once_{}", std::process::id());
        let url = crate::store::create_postgres_database(&server, &name)
            .await
            .unwrap();
        let first = hold(&url, "demo").await.unwrap();
        assert!(first.is_some(), "a free hold is taken");
        assert!(
            hold(&url, "demo").await.unwrap().is_none(),
            "a held hold is refused"
        );
        assert!(
            hold(&url, "other").await.unwrap().is_some(),
            "another name is a hold of its own"
        );
        drop(first);
        let mut again = None;
        for _ in 0..50 {
            // The server sees the dropped connection close a moment later.
            again = hold(&url, "demo").await.unwrap();
            if again.is_some() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert!(again.is_some(), "a hold let go of is free");
    }
}
