//! A database of its own on the test PostgreSQL server, for tests that run freshet on one.
//!
//! The server is `FRESHET_TEST_POSTGRES`, a postgres:// URL (`.ci/run` starts a throwaway
//! cluster and sets it). Without it a test says SKIPPED and passes, unless
//! `FRESHET_REQUIRE_POSTGRES=1` makes that a failure.
//!
//! Use it from a test file with `#[path = "support/postgres.rs"] mod postgres;`.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};

/// The test PostgreSQL server (`FRESHET_TEST_POSTGRES`), or None after saying `test` SKIPPED.
pub fn postgres_server(test: &str) -> Option<String> {
    match std::env::var("FRESHET_TEST_POSTGRES") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                !std::env::var("FRESHET_REQUIRE_POSTGRES").is_ok_and(|v| v == "1"),
                "FRESHET_REQUIRE_POSTGRES=1 but FRESHET_TEST_POSTGRES names no server"
            );
            eprintln!("SKIPPED {test}: set FRESHET_TEST_POSTGRES to a postgres:// URL");
            None
        }
    }
}

/// A new database on the test server for `test`, or None after saying SKIPPED.
pub async fn postgres_database(test: &str) -> Option<String> {
    static SEQUENCE: AtomicU32 = AtomicU32::new(0);
    let server = postgres_server(test)?;
    let name = format!(
        "freshet_{test}_{}_{}",
        std::process::id(),
        SEQUENCE.fetch_add(1, Ordering::Relaxed)
    );
    Some(
        freshet::store::create_postgres_database(&server, &name)
            .await
            .expect("create a database on the test server"),
    )
}
