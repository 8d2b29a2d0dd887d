//! The store: SQLite by default, or PostgreSQL (what differs between the two, opening and
//! migrating included, is in [`backend`]); its submodules group the queries by concept, one set
//! for both databases.
//!
//! Two pools: a writer pool of exactly one connection, through which every write goes in a
//! write transaction with retries ([`writer`]; the writes of every check share transactions,
//! [`group_commit`]), and a reader pool for reports and loads, which never waits for the writer.
//!
//! Timestamps are INTEGER Unix milliseconds; 64-bit hashes are stored as the same bits in an i64
//! ([`hash_to_db`], [`hash_from_db`]). Observations are append-only; each URL has a summary row
//! that the scheduler reads instead of history. The schema and its views are documented in
//! `migrations/sqlite` and `migrations/postgres`.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use anyhow::Context as _;
use sqlx::AnyPool;

pub use backend::{
    Backend, Location, create_postgres_database, drop_postgres_database, redact,
    refuse_an_output_over_a_database,
};
pub use copy::CopyCounts;

mod backend;
mod batch;
mod check_writes;
mod copy;
pub mod dedup;
pub mod discovered;
pub mod documents;
pub mod errors;
pub mod feed_reads;
mod found_writes;
mod group_commit;
pub mod hosts;
pub mod kinds;
pub mod leases;
mod migration_lock;
pub mod observations;
pub mod page_sitemap_names;
pub mod politeness;
pub mod postgres_hold;
pub mod refusals;
pub mod report_data;
pub mod reports;
pub mod run_lock;
pub mod runs;
pub mod sites;
pub mod sources;
pub mod summary;
mod summary_writes;
pub mod urls;
mod writer;

/// How long a statement waits for another process's lock before SQLite answers busy (and
/// [`Store::write`] retries), and how long a write waits for the writer connection.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// A handle on the database: cheap to clone (two pools and a counter, all shared).
#[derive(Debug, Clone)]
pub struct Store {
    /// One connection, so that this process never competes with itself for the write lock;
    /// writers queue for it in the pool instead of failing with `SQLITE_BUSY`.
    writer: writer::Writer,
    /// Connections for pure reads, so that a report never waits behind a write (on SQLite they
    /// are read-only: a write slipped onto one by mistake fails loudly).
    reader: AnyPool,
    /// Writes retried because the database was busy, shared by every clone.
    lock_retries: Arc<AtomicU64>,
    /// The queue of the group commit task ([`group_commit`]), which writes on `writer` too.
    group: group_commit::GroupQueue,
}

impl Store {
    /// Opens (creating and migrating if needed) the database `--db` names: a SQLite file, or a
    /// PostgreSQL server's `postgres://` URL.
    pub async fn open(db: &Path) -> anyhow::Result<Store> {
        Store::open_with(db, BUSY_TIMEOUT).await
    }

    /// [`Store::open`] with another busy timeout (tests shorten it to reach the retries).
    async fn open_with(db: &Path, busy_timeout: Duration) -> anyhow::Result<Store> {
        let pools = match Location::parse(db)? {
            Location::SqliteFile(path) => backend::open_sqlite(path, busy_timeout).await?,
            Location::Postgres(url) => backend::open_postgres(url, busy_timeout).await?,
        };
        let lock_retries = Arc::<AtomicU64>::default();
        let writer = writer::Writer {
            pool: pools.writer,
            backend: pools.backend,
        };
        let group = group_commit::GroupQueue::start(writer.clone(), lock_retries.clone())
            .context("the database's writer could not be started")?;
        Ok(Store {
            writer,
            reader: pools.reader,
            lock_retries,
            group,
        })
    }

    /// Opens an existing database for reading reports; a missing SQLite file is an error, not a
    /// new empty database.
    pub async fn open_existing(db: &Path) -> anyhow::Result<Store> {
        if let Location::SqliteFile(path) = Location::parse(db)? {
            if !path.exists() {
                anyhow::bail!(
                    "no database at {} (run `freshet run` or `freshet demo` first, or pass --db)",
                    path.display()
                );
            }
            if !backend::is_freshet_sqlite(path).await? {
                anyhow::bail!(
                    "{} is not a freshet database (no freshet tables in it); it was left as it was: check --db",
                    path.display()
                );
            }
        }
        Store::open(db).await
    }

    /// Which database this store is on.
    pub fn backend(&self) -> Backend {
        self.writer.backend
    }

    /// The reader pool, for the query modules' pure reads.
    fn reader(&self) -> &AnyPool {
        &self.reader
    }

    /// Closes both pools, the writer last: closing the last connection checkpoints the WAL
    /// into the database file. Writes already queued for a group commit are settled first
    /// ([`Store::settle_writes`]), so a write whose caller stopped waiting (an aborted check)
    /// does not race the last writes of the run.
    pub async fn close(&self) {
        self.settle_writes().await;
        self.reader.close().await;
        self.writer.pool.close().await;
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
pub(crate) mod test_support;

#[cfg(test)]
mod tests {
    use super::discovered::Discovered;
    use super::observations::NewObservation;
    use super::summary::SummaryUpdate;
    use super::test_support::stores;

    /// A mistyped `--db`: a file that is not SQLite is refused at once (sqlx's pool retried it
    /// for 30 s), and reports leave another program's SQLite database as it was.
    #[tokio::test]
    async fn a_file_not_freshets_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("notes.db");
        std::fs::write(&text, "hello, not a database\n").unwrap();
        for opened in [
            super::Store::open(&text).await,
            super::Store::open_existing(&text).await,
        ] {
            let Err(error) = opened else {
                panic!("a text file was opened as a database");
            };
            let error = format!("{error:#}");
            assert!(error.contains("not a SQLite database"), "{error}");
        }
        assert_eq!(
            std::fs::read(&text).unwrap(),
            b"hello, not a database\n".to_vec()
        );

        let other = dir.path().join("other.db");
        {
            use sqlx::Connection;
            let options = sqlx::sqlite::SqliteConnectOptions::new()
                .filename(&other)
                .create_if_missing(true);
            let mut conn = sqlx::SqliteConnection::connect_with(&options)
                .await
                .unwrap();
            sqlx::raw_sql("CREATE TABLE urls (x); INSERT INTO urls VALUES (1);")
                .execute(&mut conn)
                .await
                .unwrap();
            conn.close().await.unwrap();
        }
        let before = std::fs::read(&other).unwrap();
        let Err(error) = super::Store::open_existing(&other).await else {
            panic!("another program's database was opened");
        };
        let error = format!("{error:#}");
        assert!(error.contains("not a freshet database"), "{error}");
        assert_eq!(std::fs::read(&other).unwrap(), before, "left as it was");
        let empty = dir.path().join("empty.db");
        std::fs::write(&empty, "").unwrap();
        assert!(super::Store::open_existing(&empty).await.is_err());
        assert_eq!(std::fs::read(&empty).unwrap(), Vec::<u8>::new());

        // freshet's own database still opens for its reports.
        let ours = dir.path().join("freshet.db");
        super::Store::open(&ours).await.unwrap().close().await;
        super::Store::open_existing(&ours)
            .await
            .unwrap()
            .close()
            .await;
    }

    #[tokio::test]
    async fn a_database_url_is_never_taken_for_a_file() {
        // Another kind of server is refused; an unreachable PostgreSQL server is an error.
        for url in [
            "mysql://user@127.0.0.1:3306/db",
            "postgres://user@127.0.0.1:1/db",
        ] {
            let Err(error) = super::Store::open(std::path::Path::new(url)).await else {
                panic!("{url} was opened");
            };
            let message = format!("{error:#}");
            assert!(message.contains(url), "{message}");
        }
        assert!(!std::path::Path::new("mysql:").exists());
        assert!(!std::path::Path::new("postgres:").exists());
        // A path with a colon in it is still a path.
        let dir = tempfile::tempdir().unwrap();
        let store = super::Store::open(&dir.path().join("a:b.db"))
            .await
            .unwrap();
        store.close().await;
    }

    async fn one_url(store: &super::Store) -> i64 {
        let (site_id, host_id) = crate::store::test_support::site_and_host(store).await;
        let found = Discovered {
            discovered_from: Some("seed".into()),
            lastmod_ms: Some(500),
            lastmod_believed: true,
            changefreq: Some("daily".into()),
            priority: Some(0.5),
            ..crate::store::test_support::page("http://a.test/x", site_id, host_id)
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
        let (stores, _dir) = stores("a_check_appends_an_observation_and_updates_the_summary").await;
        for store in stores {
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
            assert_eq!((b.copy_ms, b.known_change_ms), (Some(2_000), None));
            assert_eq!((b.rate_shape, b.rate_scale), (Some(2.0), Some(2.0)));
            assert!(b.rate_low.unwrap() < 1.0 && b.rate_high.unwrap() > 1.0);
        }
    }

    /// sqlx's `Any` driver would send PostgreSQL a NULL real as a `float4`, and the statement,
    /// prepared with it, would then refuse a number ([`super::backend::BindReal`]).
    #[tokio::test]
    async fn a_real_first_written_null_takes_a_number_later() {
        let (stores, _dir) = stores("a_real_first_written_null").await;
        for store in stores {
            let id = one_url(&store).await;
            for (at, rate) in [(2_000, None), (3_000, Some(2.0)), (4_000, None)] {
                let obs = NewObservation {
                    url_id: id,
                    checked_ms: at,
                    method: "GET",
                    status: Some(200),
                    ..Default::default()
                };
                let update = SummaryUpdate {
                    got_copy: true,
                    next_due_ms: at + 1_000,
                    rate: rate.map(|r| crate::estimate::RateEstimate::from_gamma(r, 1.0)),
                    planned_per_day: rate,
                    ..Default::default()
                };
                store.record_check(&obs, &update).await.unwrap();
            }
            let row = store.url_row("http://a.test/x").await.unwrap().unwrap();
            assert_eq!(row.checks, 3);
            assert_eq!(row.planned_per_day, Some(2.0));
        }
    }

    /// [`one_url`], copied at 2,000 and due at 1,000,000: its id and row.
    async fn one_copied_at_2_000(store: &super::Store) -> (i64, super::urls::UrlRow) {
        let id = one_url(store).await;
        let obs = NewObservation {
            url_id: id,
            checked_ms: 2_000,
            method: "GET",
            ..Default::default()
        };
        let update = SummaryUpdate {
            next_due_ms: 1_000_000,
            got_copy: true,
            ..Default::default()
        };
        store.record_check(&obs, &update).await.unwrap();
        (id, store.url_row("http://a.test/x").await.unwrap().unwrap())
    }

    #[tokio::test]
    async fn a_newer_lastmod_makes_a_checked_url_due_now() {
        let (stores, _dir) = stores("a_newer_lastmod_makes_a_checked_url_due_now").await;
        for store in stores {
            // A check that left a copy: a lastmod after the copy is a change it lacks.
            let (id, row) = one_copied_at_2_000(&store).await;
            let again = super::discovered::Discovered {
                lastmod_ms: Some(3_000),
                lastmod_believed: true,
                ..crate::store::test_support::page(&row.url, row.site_id, row.host_id)
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

            // Failing since (two failed checks, its retry at 9,000,000): a newer lastmod is a
            // known change, but the due time stays its retry, which the scheduler alone moves.
            let failed = NewObservation {
                url_id: id,
                checked_ms: 7_000,
                method: "GET",
                status: Some(404),
                ..Default::default()
            };
            let update = SummaryUpdate {
                next_due_ms: 9_000_000,
                failures: Some(2),
                ..Default::default()
            };
            store.record_check(&failed, &update).await.unwrap();
            let again = super::discovered::Discovered {
                lastmod_ms: Some(7_500),
                lastmod_believed: true,
                ..crate::store::test_support::page(&row.url, row.site_id, row.host_id)
            };
            store.upsert_discovered(&[again], 8_000).await.unwrap();
            let row = store.url_row("http://a.test/x").await.unwrap().unwrap();
            assert_eq!(row.known_change_ms, Some(7_500));
            assert_eq!(row.next_due_ms, Some(9_000_000));
        }
    }

    /// A host whose newer `lastmod`s the scheduler has found to be false alarms (a sitemap
    /// stamping each with the read's time): the `lastmod` is kept, but the copy is not known
    /// stale and the due time stays the plan's.
    #[tokio::test]
    async fn a_lastmod_not_believed_is_kept_but_makes_nothing_known() {
        let (stores, _dir) = stores("a_lastmod_not_believed_is_kept_but_makes_nothing_known").await;
        for store in stores {
            let (_, row) = one_copied_at_2_000(&store).await;
            let stamped = super::discovered::Discovered {
                lastmod_ms: Some(3_000),
                lastmod_believed: false,
                ..crate::store::test_support::page(&row.url, row.site_id, row.host_id)
            };
            store.upsert_discovered(&[stamped], 5_000).await.unwrap();
            let row = store.url_row("http://a.test/x").await.unwrap().unwrap();
            assert_eq!(row.known_change_ms, None);
            assert_eq!(row.next_due_ms, Some(1_000_000));
            assert_eq!(row.lastmod_ms, Some(3_000));
        }
    }

    #[tokio::test]
    async fn change_events_are_deduplicated() {
        let (stores, _dir) = stores("change_events_are_deduplicated").await;
        for store in stores {
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
    }

    /// A feed entry newer than the copy makes it known stale from the first such change on; one
    /// older than the copy is history only. The plan's watched span survives a save without one.
    #[tokio::test]
    async fn feed_changes_after_the_copy_are_known_and_watched_spans_kept() {
        let (stores, _dir) =
            stores("feed_changes_after_the_copy_are_known_and_watched_spans_kept").await;
        for store in stores {
            let id = one_url(&store).await;
            let obs = NewObservation {
                url_id: id,
                checked_ms: 2_000,
                method: "GET",
                ..Default::default()
            };
            let copy = SummaryUpdate {
                got_copy: true,
                ..Default::default()
            };
            store.record_check(&obs, &copy).await.unwrap();
            store.add_change_events(id, &[1_000], "feed").await.unwrap();
            let row = store.url_row("http://a.test/x").await.unwrap().unwrap();
            assert_eq!(row.known_change_ms, None);
            store
                .add_change_events(id, &[4_000, 3_000], "feed")
                .await
                .unwrap();
            let row = store.url_row("http://a.test/x").await.unwrap().unwrap();
            assert_eq!(row.known_change_ms, Some(3_000));

            let plan = |watched| super::summary::PlanUpdate {
                url_id: id,
                planned_per_day: 2.0,
                next_due_ms: 9_000,
                watched,
                rate: None,
                waits_for_feed_id: None,
                written_ms: None,
                taken_ms: None,
            };
            store
                .save_plan(vec![plan(Some((2_000, 5_000)))])
                .await
                .unwrap();
            store.save_plan(vec![plan(None)]).await.unwrap();
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
}
