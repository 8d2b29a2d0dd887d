//! Stores for tests: a temporary SQLite file, a database on the test PostgreSQL server when
//! there is one, and a hold on the group commit task to make one group of several writes.

use std::sync::atomic::{AtomicU32, Ordering};

use super::Store;
use super::observations::NewObservation;
use super::summary::SummaryUpdate;

/// A store on a fresh temporary file (kept alive by the returned guard).
pub async fn temp_store() -> (Store, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(&dir.path().join("test.db"))
        .await
        .expect("open store");
    (store, dir)
}

/// The PostgreSQL server tests may use: `FRESHET_TEST_POSTGRES`, a postgres:// URL (`.ci/run`
/// starts a throwaway cluster and sets it). Without it, None after saying SKIPPED, unless
/// `FRESHET_REQUIRE_POSTGRES=1` (set by `.ci/run`) makes that a failure.
pub fn postgres_server(test: &str) -> Option<String> {
    match std::env::var("FRESHET_TEST_POSTGRES") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            let required = std::env::var("FRESHET_REQUIRE_POSTGRES").is_ok_and(|v| v == "1");
            assert!(
                !required,
                "FRESHET_REQUIRE_POSTGRES=1 but FRESHET_TEST_POSTGRES names no server"
            );
            eprintln!(
                "SKIPPED the PostgreSQL half of {test}: set FRESHET_TEST_POSTGRES to a \
                 postgres:// URL (.ci/run starts a throwaway server)"
            );
            None
        }
    }
}

/// A store on a new database of the test PostgreSQL server, if there is one.
pub async fn temp_postgres_store(test: &str) -> Option<Store> {
    static SEQUENCE: AtomicU32 = AtomicU32::new(0);
    let server = postgres_server(test)?;
    let name = format!(
        "freshet_unit_{}_{}_{}",
        std::process::id(),
        SEQUENCE.fetch_add(1, Ordering::Relaxed),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
    );
    let url = super::create_postgres_database(&server, &name)
        .await
        .expect("create a test database");
    Some(
        Store::open(std::path::Path::new(&url))
            .await
            .expect("open the PostgreSQL store"),
    )
}

/// When the politeness journal last wrote `host_key`'s row (`updated_ms`, clock time).
pub async fn politeness_updated_ms(store: &Store, host_key: &str) -> i64 {
    let (updated,): (i64,) =
        sqlx::query_as("SELECT updated_ms FROM host_politeness WHERE host_key = $1")
            .bind(host_key)
            .fetch_one(store.reader())
            .await
            .expect("a politeness row");
    updated
}

/// The group commit task held on a write of its own until [`HeldWriter::release`]: writes
/// queued meanwhile make one group, whichever thread the task runs on.
pub struct HeldWriter {
    release: tokio::sync::watch::Sender<bool>,
    write: futures_util::future::BoxFuture<'static, sqlx::Result<()>>,
}

impl HeldWriter {
    /// Lets the task go on, and waits for the holding write to end (it is counted in no
    /// group: it was alone).
    pub async fn release(self) {
        self.release.send_replace(true);
        self.write.await.expect("the holding write");
    }
}

/// Holds `store`'s group commit task (see [`HeldWriter`]); answers once the task is held.
pub async fn hold_writer(store: &Store) -> HeldWriter {
    use futures_util::FutureExt;
    let (started, is_started) = tokio::sync::oneshot::channel::<()>();
    let started = std::sync::Mutex::new(Some(started));
    let (release, released) = tokio::sync::watch::channel(false);
    let write = store
        .queue_grouped_beside_checks("held", move |tx| {
            if let Some(started) = started.lock().expect("unpoisoned").take() {
                let _ = started.send(());
            }
            let mut released = released.clone();
            async move {
                let _ = released.wait_for(|go| *go).await;
                Ok((tx, ()))
            }
        })
        .boxed();
    let mut write = Some(write);
    // The write runs alone (nothing else is queued); on the test's own runtime (PostgreSQL)
    // the task runs only while this one waits.
    tokio::select! {
        _ = is_started => {}
        _ = write.as_mut().expect("not taken") => panic!("the holding write ended unreleased"),
    }
    HeldWriter {
        release,
        write: write.take().expect("not taken"),
    }
}

/// A SQLite store and, when the test server is there, a PostgreSQL one: store tests run on
/// each. The guard keeps the SQLite file.
pub async fn stores(test: &str) -> (Vec<Store>, tempfile::TempDir) {
    let (sqlite, dir) = temp_store().await;
    let mut stores = vec![sqlite];
    stores.extend(temp_postgres_store(test).await);
    (stores, dir)
}

/// Sites named `names`, 100 requests a day each: their ids, in that order.
pub async fn sites(store: &Store, names: &[&str]) -> Vec<i64> {
    let mut ids = Vec::with_capacity(names.len());
    for &name in names {
        let site = crate::store::sites::SiteRecord {
            name,
            weight: 1.0,
            requests_per_day: 100.0,
            source_file: None,
        };
        ids.push(store.upsert_site(&site, 0).await.unwrap());
    }
    ids
}

/// A site ("s", 100 requests a day) and a host (`http://a.test:80`) for the URLs of a test:
/// their ids.
pub async fn site_and_host(store: &Store) -> (i64, i64) {
    let site_id = sites(store, &["s"]).await[0];
    let host_id = store.host_id("http://a.test:80").await.unwrap();
    (site_id, host_id)
}

/// A page found with no hints (no lastmod, changefreq or priority) on a site and host.
pub fn page(url: &str, site_id: i64, host_id: i64) -> super::discovered::Discovered {
    super::discovered::Discovered {
        url: url.into(),
        site_id,
        host_id,
        kind: "page",
        discovered_from: None,
        lastmod_ms: None,
        lastmod_believed: true,
        changefreq: None,
        priority: None,
    }
}

/// Every URL of `store` last checked at `at_ms`.
pub async fn checked_at(store: &Store, at_ms: i64) {
    execute(store, "UPDATE urls SET last_checked_ms = $1", &[at_ms]).await;
}

/// Runs `statement` with `values` bound in order, in a write of its own: a row set as a test
/// needs it.
pub async fn execute(store: &Store, statement: &'static str, values: &[i64]) {
    let values = values.to_vec();
    store
        .write("test", move |mut tx| {
            let values = values.clone();
            async move {
                let mut query = sqlx::query(statement);
                for value in values {
                    query = query.bind(value);
                }
                query.execute(&mut *tx).await?;
                Ok((tx, ()))
            }
        })
        .await
        .unwrap();
}

/// Two URLs of one site and host: their ids.
pub async fn two_urls(store: &Store) -> (i64, i64) {
    let (site_id, host_id) = site_and_host(store).await;
    let found = |url: &str| page(url, site_id, host_id);
    let ids = store
        .upsert_discovered(&[found("http://a.test/a"), found("http://a.test/b")], 0)
        .await
        .unwrap();
    (ids[0], ids[1])
}

/// A feed (`http://a.test/a`) and a page (`http://a.test/b`) found at 0: their ids.
pub async fn feed_and_page(store: &Store) -> (i64, i64) {
    let (site_id, host_id) = site_and_host(store).await;
    let feed = super::discovered::Discovered {
        kind: "feed",
        ..page("http://a.test/a", site_id, host_id)
    };
    let found = [feed, page("http://a.test/b", site_id, host_id)];
    let ids = store.upsert_discovered(&found, 0).await.unwrap();
    (ids[0], ids[1])
}

/// A 200 answer at `checked_ms`, changed or not.
pub fn observed(url_id: i64, checked_ms: i64, changed: bool) -> NewObservation {
    NewObservation {
        url_id,
        checked_ms,
        method: "GET",
        status: Some(200),
        changed: Some(changed),
        ..Default::default()
    }
}

/// A check's summary with a copy (its `ETag`), due again at `next_due_ms`.
pub fn due(next_due_ms: i64, etag: &str) -> SummaryUpdate {
    SummaryUpdate {
        got_copy: true,
        etag: Some(etag.into()),
        next_due_ms,
        planned_per_day: Some(1.0),
        ..Default::default()
    }
}
