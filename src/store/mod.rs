//! The SQLite store. This module is the one place that opens the database (WAL,
//! `synchronous=NORMAL`, busy timeout, foreign keys, migrations); its submodules group the queries
//! by concept.
//!
//! Two pools share the file: a writer pool of exactly one connection, through which every write
//! goes in a `BEGIN IMMEDIATE` transaction with retries ([`writer`]; the writes of every check
//! share transactions, [`group_commit`]), and a read-only reader pool for reports and loads,
//! which WAL mode never makes wait for the writer.
//!
//! Timestamps are INTEGER Unix milliseconds; 64-bit hashes are stored as the same bits in an i64
//! ([`hash_to_db`], [`hash_from_db`]). Observations are append-only; each URL has a summary row
//! that the scheduler reads instead of history. The schema and its views are documented in
//! `migrations/`.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use anyhow::Context;
use sqlx::SqlitePool;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

mod batch;
mod check_writes;
pub mod dedup;
pub mod documents;
pub mod errors;
mod group_commit;
pub mod hosts;
pub mod observations;
pub mod politeness;
pub mod refusals;
pub mod report_data;
pub mod reports;
pub mod runs;
pub mod sites;
pub mod urls;
mod writer;

/// How long a statement waits for another process's lock before SQLite answers busy (and
/// [`Store::write`] retries).
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Connections in the reader pool: reports and loads are few, and WAL lets them all read at once.
const READERS: u32 = 4;

/// A handle on the database: cheap to clone (two pools and a counter, all shared).
#[derive(Debug, Clone)]
pub struct Store {
    /// One connection, so that this process never competes with itself for SQLite's single
    /// write lock; writers queue for it in the pool instead of failing with `SQLITE_BUSY`.
    writer: SqlitePool,
    /// Read-only connections for pure reads, so that a report never waits behind a write
    /// (and a write slipped onto it by mistake fails loudly).
    reader: SqlitePool,
    /// Writes retried because another process held the lock, shared by every clone.
    lock_retries: Arc<AtomicU64>,
    /// The queue of the group commit task ([`group_commit`]), which writes on `writer` too.
    group: group_commit::GroupQueue,
}

/// `--db` is a SQLite file: a database URL (`postgres://...`) would otherwise become a folder
/// named after its scheme with a SQLite file in it, and workers given the same URL would each
/// keep their own.
fn refuse_database_urls(path: &Path) -> anyhow::Result<()> {
    let text = path.to_string_lossy();
    if let Some((scheme, _)) = text.split_once("://")
        && !scheme.is_empty()
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    {
        anyhow::bail!(
            "--db {text}: freshet keeps its state in a SQLite file and does not speak to \
             {scheme}:// servers; pass a file path (such as freshet.db)"
        );
    }
    Ok(())
}

impl Store {
    /// Opens (creating and migrating if needed) the database file at `path`.
    pub async fn open(path: &Path) -> anyhow::Result<Store> {
        Store::open_with(path, BUSY_TIMEOUT).await
    }

    /// [`Store::open`] with another busy timeout (tests shorten it to reach the retries).
    async fn open_with(path: &Path, busy_timeout: Duration) -> anyhow::Result<Store> {
        refuse_database_urls(path)?;
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating the folder of {}", path.display()))?;
        }
        let options = SqliteConnectOptions::new()
            .filename(path)
            .busy_timeout(busy_timeout)
            .foreign_keys(true);
        let writer = SqlitePoolOptions::new()
            .max_connections(1)
            // Kept open for the store's life: the WAL and its index stay in place for the
            // read-only readers, which could not recreate them.
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            // Waiting for the writer is normal; past this, the write is retried as busy.
            .acquire_timeout(busy_timeout)
            .connect_with(
                options
                    .clone()
                    .create_if_missing(true)
                    .journal_mode(SqliteJournalMode::Wal)
                    .synchronous(SqliteSynchronous::Normal),
            )
            .await
            .with_context(|| format!("opening database {}", path.display()))?;
        sqlx::migrate!("./migrations")
            .run(&writer)
            .await
            .with_context(|| format!("migrating database {}", path.display()))?;
        let reader = SqlitePoolOptions::new()
            .max_connections(READERS)
            .connect_with(options.read_only(true))
            .await
            .with_context(|| format!("opening database {} for reading", path.display()))?;
        let lock_retries = Arc::<AtomicU64>::default();
        let group = group_commit::GroupQueue::start(writer.clone(), lock_retries.clone());
        Ok(Store {
            writer,
            reader,
            lock_retries,
            group,
        })
    }

    /// Opens an existing database for reading reports; a missing file is an error, not a new
    /// empty database.
    pub async fn open_existing(path: &Path) -> anyhow::Result<Store> {
        refuse_database_urls(path)?;
        if !path.exists() {
            anyhow::bail!(
                "no database at {} (run `freshet run` or `freshet demo` first, or pass --db)",
                path.display()
            );
        }
        Store::open(path).await
    }

    /// The reader pool, for the query modules' pure reads.
    fn reader(&self) -> &SqlitePool {
        &self.reader
    }

    /// Closes both pools, the writer last: closing the last connection checkpoints the WAL
    /// into the database file. Writes already queued for a group commit are settled first (an
    /// empty write queued behind them is answered after them), so a write whose caller stopped
    /// waiting (an aborted check) does not race the last writes of the run.
    pub async fn close(&self) {
        let _ = self
            .write_grouped("close", |tx| async { Ok((tx, ())) })
            .await;
        self.reader.close().await;
        self.writer.close().await;
    }
}

/// A u64 hash as stored in SQLite (same bits).
pub fn hash_to_db(hash: u64) -> i64 {
    hash as i64
}

/// A hash read back from SQLite.
pub fn hash_from_db(value: i64) -> u64 {
    value as u64
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::Store;

    /// A store on a fresh temporary file (kept alive by the returned guard).
    pub async fn temp_store() -> (Store, tempfile::TempDir) {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = Store::open(&dir.path().join("test.db"))
            .await
            .expect("open store");
        (store, dir)
    }
}

#[cfg(test)]
mod tests {
    use super::observations::NewObservation;
    use super::sites::SiteRecord;
    use super::test_support::temp_store;
    use super::urls::{Discovered, SummaryUpdate};

    #[tokio::test]
    async fn a_database_url_is_refused_and_leaves_no_folder_behind() {
        let url = std::path::Path::new("postgres://user@127.0.0.1:5432/db");
        let Err(error) = super::Store::open(url).await else {
            panic!("a postgres:// URL was opened as a SQLite file");
        };
        let message = format!("{error:#}");
        assert!(message.contains("postgres://"), "{message}");
        assert!(message.contains("SQLite file"), "{message}");
        assert!(!std::path::Path::new("postgres:").exists());
        // A path with a colon in it is still a path.
        let dir = tempfile::tempdir().unwrap();
        let store = super::Store::open(&dir.path().join("a:b.db"))
            .await
            .unwrap();
        store.close().await;
    }

    async fn one_url(store: &super::Store) -> i64 {
        let site = SiteRecord {
            name: "s",
            weight: 1.0,
            requests_per_day: 100.0,
            source_file: None,
        };
        let site_id = store.upsert_site(&site, 0).await.unwrap();
        let host_id = store.host_id("http://a.test:80").await.unwrap();
        let found = Discovered {
            url: "http://a.test/x".into(),
            site_id,
            host_id,
            kind: "page",
            discovered_from: Some("seed".into()),
            lastmod_ms: Some(500),
            changefreq: Some("daily".into()),
            priority: Some(0.5),
        };
        let new = store
            .upsert_discovered(std::slice::from_ref(&found), 1_000)
            .await
            .unwrap();
        assert_eq!(new.len(), 1);
        assert!(
            store
                .upsert_discovered(&[found], 1_000)
                .await
                .unwrap()
                .is_empty()
        );
        new[0]
    }

    #[tokio::test]
    async fn a_check_appends_an_observation_and_updates_the_summary() {
        let (store, _dir) = temp_store().await;
        let id = one_url(&store).await;
        let found = store.url_row("http://a.test/x").await.unwrap().unwrap();
        assert_eq!(
            found.next_due_ms,
            Some(1_000),
            "a new URL is due when found"
        );
        let obs = NewObservation {
            url_id: id,
            checked_ms: 2_000,
            method: "GET",
            status: Some(200),
            fingerprint: Some(u64::MAX),
            changed: Some(true),
            ..Default::default()
        };
        let update = SummaryUpdate {
            got_copy: true,
            etag: Some("\"v1\"".into()),
            fingerprint: Some(u64::MAX),
            next_due_ms: 90_000,
            rate: Some(crate::estimate::RateEstimate::from_gamma(2.0, 2.0)),
            ..Default::default()
        };
        store.record_check(&obs, &update).await.unwrap();
        let row = store.url_row("http://a.test/x").await.unwrap().unwrap();
        assert_eq!((row.checks, row.changes), (1, 1));
        assert_eq!(row.etag.as_deref(), Some("\"v1\""));
        assert_eq!(row.fingerprint.map(super::hash_from_db), Some(u64::MAX));
        assert_eq!(row.next_due_ms, Some(90_000));
        let history = store.observations_for(id, 10).await.unwrap();
        assert_eq!(history.len(), 1);
        assert_eq!(history[0].changed, Some(1));
        let beliefs = store.page_beliefs().await.unwrap();
        assert_eq!(beliefs.len(), 1);
        let b = &beliefs[0];
        assert_eq!((b.last_checked_ms, b.known_change_ms), (Some(2_000), None));
        assert_eq!((b.rate_shape, b.rate_scale), (Some(2.0), Some(2.0)));
        assert!(b.rate_low.unwrap() < 1.0 && b.rate_high.unwrap() > 1.0);
    }

    #[tokio::test]
    async fn a_newer_lastmod_makes_a_checked_url_due_now() {
        let (store, _dir) = temp_store().await;
        let id = one_url(&store).await;
        let obs = NewObservation {
            url_id: id,
            checked_ms: 2_000,
            method: "GET",
            ..Default::default()
        };
        let update = SummaryUpdate {
            next_due_ms: 1_000_000,
            ..Default::default()
        };
        store.record_check(&obs, &update).await.unwrap();
        let row = store.url_row("http://a.test/x").await.unwrap().unwrap();
        let again = super::urls::Discovered {
            url: row.url.clone(),
            site_id: row.site_id,
            host_id: row.host_id,
            kind: "page",
            discovered_from: None,
            lastmod_ms: Some(3_000),
            changefreq: None,
            priority: None,
        };
        store.upsert_discovered(&[again], 5_000).await.unwrap();
        let row = store.url_row("http://a.test/x").await.unwrap().unwrap();
        assert_eq!(row.known_change_ms, Some(3_000));
        assert_eq!(row.next_due_ms, Some(5_000));
        assert_eq!(row.changefreq.as_deref(), Some("daily"));

        // A copy taken before that change, committed after it was learnt (the check's write
        // waited in a group commit): the change is still known. A copy taken after it clears it.
        let copy = |checked_ms| {
            let obs = NewObservation {
                url_id: id,
                checked_ms,
                method: "GET",
                status: Some(200),
                ..Default::default()
            };
            let update = SummaryUpdate {
                got_copy: true,
                next_due_ms: 1_000_000,
                ..Default::default()
            };
            (obs, update)
        };
        let (obs, update) = copy(2_500);
        store.record_check(&obs, &update).await.unwrap();
        let row = store.url_row("http://a.test/x").await.unwrap().unwrap();
        assert_eq!(row.known_change_ms, Some(3_000));
        let (obs, update) = copy(6_000);
        store.record_check(&obs, &update).await.unwrap();
        let row = store.url_row("http://a.test/x").await.unwrap().unwrap();
        assert_eq!(row.known_change_ms, None);
    }

    #[tokio::test]
    async fn change_events_are_deduplicated() {
        let (store, _dir) = temp_store().await;
        let id = one_url(&store).await;
        assert_eq!(
            store
                .add_change_events(id, &[10, 20], "feed")
                .await
                .unwrap(),
            2
        );
        assert_eq!(
            store
                .add_change_events(id, &[20, 30], "feed")
                .await
                .unwrap(),
            1
        );
        assert_eq!(store.change_events_for(id).await.unwrap(), vec![10, 20, 30]);
    }

    /// A feed entry newer than the copy makes it known stale from the first such change on; one
    /// older than the copy is history only. The plan's watched span survives a save without one.
    #[tokio::test]
    async fn feed_changes_after_the_copy_are_known_and_watched_spans_kept() {
        let (store, _dir) = temp_store().await;
        let id = one_url(&store).await;
        let obs = NewObservation {
            url_id: id,
            checked_ms: 2_000,
            method: "GET",
            ..Default::default()
        };
        store
            .record_check(&obs, &SummaryUpdate::default())
            .await
            .unwrap();
        store.add_change_events(id, &[1_000], "feed").await.unwrap();
        let row = store.url_row("http://a.test/x").await.unwrap().unwrap();
        assert_eq!(row.known_change_ms, None);
        store
            .add_change_events(id, &[4_000, 3_000], "feed")
            .await
            .unwrap();
        let row = store.url_row("http://a.test/x").await.unwrap().unwrap();
        assert_eq!(row.known_change_ms, Some(3_000));

        let plan = |watched| super::urls::PlanUpdate {
            url_id: id,
            planned_per_day: 2.0,
            next_due_ms: 9_000,
            watched,
        };
        store
            .save_plan(&[plan(Some((2_000, 5_000)))])
            .await
            .unwrap();
        store.save_plan(&[plan(None)]).await.unwrap();
        let status = store.url_status(None).await.unwrap();
        let row = status.iter().find(|r| r.url_id == id).unwrap();
        assert_eq!(
            (row.watched_from_ms, row.watched_until_ms),
            (Some(2_000), Some(5_000))
        );
        assert_eq!(row.planned_per_day, Some(2.0));
        assert_eq!(row.next_due_ms, Some(9_000));
    }
}
