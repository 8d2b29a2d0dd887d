//! The two databases the store runs on, and every difference between them in one place: what
//! `--db` names, how each opens its pools and runs its migrations, how a write transaction
//! begins, which failures are worth another try, and which placeholders a batched statement
//! binds fastest. The queries themselves are one set, written in the SQL both speak (`$N`
//! placeholders, `ON CONFLICT`, `CASE` instead of SQLite's scalar `MAX`/`MIN`), and run through
//! sqlx's `Any` driver; a batched statement's text is also kept with `?` for SQLite
//! ([`Backend::anonymous_placeholders`]).
//!
//! SQLite is the embedded default: a file, one writer connection (the process never competes
//! with itself for SQLite's single write lock) and read-only readers that WAL mode never makes
//! wait. PostgreSQL (`--db postgres://...`) lets several `freshet run` workers share one
//! database; its schema is `migrations/postgres`, the twin of `migrations/sqlite`.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{AnyPool, AssertSqlSafe, ConnectOptions};

/// Which database a store is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// Connections in the reader pool: reports and loads are few, and both databases let them read
/// while the writer writes.
const READERS: u32 = 4;

/// What `--db` names: a SQLite file, or a PostgreSQL server's URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location<'a> {
    SqliteFile(&'a Path),
    Postgres(&'a str),
}

impl<'a> Location<'a> {
    /// Reads `--db`: `postgres://` and `postgresql://` URLs name a server; any other
    /// `scheme://` is refused (it would otherwise become a folder named after its scheme with a
    /// SQLite file in it); the rest is a file path (a colon alone does not make a URL).
    pub fn parse(db: &'a Path) -> anyhow::Result<Location<'a>> {
        let text = db.to_str().unwrap_or_default();
        if let Some((scheme, _)) = text.split_once("://")
            && !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        {
            return match scheme.to_ascii_lowercase().as_str() {
                "postgres" | "postgresql" => Ok(Location::Postgres(text)),
                _ => anyhow::bail!(
                    "--db {text}: freshet keeps its state in a SQLite file or a PostgreSQL \
                     server and does not speak to {scheme}:// servers; pass a file path (such \
                     as freshet.db) or a postgres:// URL"
                ),
            };
        }
        Ok(Location::SqliteFile(db))
    }
}

/// The pools of an opened, migrated database.
pub(super) struct Pools {
    pub writer: AnyPool,
    pub reader: AnyPool,
    pub backend: Backend,
}

impl Backend {
    /// The database a connection is on.
    pub(super) fn of(connection: &sqlx::AnyConnection) -> Self {
        match connection.backend_name() {
            "SQLite" => Backend::Sqlite,
            _ => Backend::Postgres,
        }
    }

    /// Whether a statement's placeholders are best written `?` rather than `$N` (each used once,
    /// in order). SQLite binds an anonymous `?` at once, where it finds a `$N` by walking the
    /// statement's list of names: binding a batched statement of 1,344 values walked it about
    /// 900,000 steps, 3.4% of a check's CPU (`perf` on `bench --only run`). PostgreSQL knows
    /// only `$N`.
    pub(super) fn anonymous_placeholders(self) -> bool {
        self == Backend::Sqlite
    }

    /// The statement that begins a write transaction. SQLite's `IMMEDIATE` takes the write lock
    /// up front, where the busy timeout applies, instead of failing at once when a read must be
    /// upgraded; PostgreSQL locks rows as it writes them.
    pub(super) fn begin_write(self) -> &'static str {
        match self {
            Backend::Sqlite => "BEGIN IMMEDIATE",
            Backend::Postgres => "BEGIN",
        }
    }

    /// What must open a transaction whose reads all see the database as it stood at its first
    /// (the source of a copy, read table by table while workers may write): SQLite's deferred
    /// read transaction does so already in WAL mode; PostgreSQL's default reads each statement
    /// afresh.
    pub(super) fn snapshot_read(self) -> Option<&'static str> {
        match self {
            Backend::Sqlite => None,
            Backend::Postgres => Some("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"),
        }
    }

    /// What follows a `SELECT` of rows to claim: PostgreSQL locks them, skipping rows another
    /// worker is claiming at the same moment; SQLite has one writer at a time already.
    pub(super) fn skip_locked(self) -> &'static str {
        match self {
            Backend::Sqlite => "",
            Backend::Postgres => " FOR UPDATE SKIP LOCKED",
        }
    }

    /// Whether a write that failed with `error` is worth running again: the database was busy
    /// (SQLite: locked by another process beyond the busy timeout; PostgreSQL: a serialization
    /// failure or a deadlock between workers), or the writer connection stayed taken beyond the
    /// pool's acquire timeout.
    pub(super) fn is_transient(self, error: &sqlx::Error) -> bool {
        /// SQLite's primary result code for "database is locked" (extended codes keep it in the
        /// low byte: `SQLITE_BUSY_RECOVERY`, `SQLITE_BUSY_SNAPSHOT`, `SQLITE_BUSY_TIMEOUT`).
        const SQLITE_BUSY: i32 = 5;
        match error {
            sqlx::Error::PoolTimedOut => true,
            sqlx::Error::Database(db) => {
                let Some(code) = db.code() else { return false };
                match self {
                    Backend::Sqlite => code
                        .parse::<i32>()
                        .is_ok_and(|code| code & 0xff == SQLITE_BUSY),
                    // serialization_failure, deadlock_detected, lock_not_available
                    Backend::Postgres => matches!(&*code, "40001" | "40P01" | "55P03"),
                }
            }
            _ => false,
        }
    }
}

/// What a column holds, as both databases declare it (the four kinds the schema uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ColumnKind {
    Integer,
    Real,
    Text,
    Blob,
}

impl Backend {
    /// The columns of `table` in their order, with their kinds.
    pub(super) async fn columns(
        self,
        pool: &AnyPool,
        table: &str,
    ) -> sqlx::Result<Vec<(String, ColumnKind)>> {
        let query = match self {
            Backend::Sqlite => "SELECT name, type FROM pragma_table_info($1) ORDER BY cid",
            Backend::Postgres => {
                "SELECT column_name::text, data_type::text FROM information_schema.columns
                 WHERE table_schema = current_schema() AND table_name = $1
                 ORDER BY ordinal_position"
            }
        };
        let rows: Vec<(String, String)> = sqlx::query_as(query).bind(table).fetch_all(pool).await?;
        Ok(rows
            .into_iter()
            .map(|(name, declared)| {
                let declared = declared.to_ascii_lowercase();
                let kind = if declared.contains("int") {
                    ColumnKind::Integer
                } else if declared.contains("real") || declared.contains("double") {
                    ColumnKind::Real
                } else if declared.contains("blob") || declared.contains("bytea") {
                    ColumnKind::Blob
                } else {
                    ColumnKind::Text
                };
                (name, kind)
            })
            .collect())
    }

    /// What must follow a copy of `table`'s rows, ids included: PostgreSQL's identity columns
    /// start their next id past the copied ones.
    pub(super) fn after_copy(self, table: &str) -> Option<String> {
        const WITH_IDENTITY: &[&str] = &[
            "sites",
            "hosts",
            "urls",
            "observations",
            "errors",
            "runs",
            "dedup_redirect_errors",
        ];
        (self == Backend::Postgres && WITH_IDENTITY.contains(&table)).then(|| {
            format!(
                "SELECT setval(pg_get_serial_sequence('{table}', 'id'),
                               COALESCE(MAX(id), 0) + 1, false) FROM {table}"
            )
        })
    }
}

/// Binding a real that may be NULL. sqlx 0.9's `Any` driver hands PostgreSQL a NULL `f64` as a
/// `float4` (and a NULL `f32` as a `float8`): a statement first prepared with a NULL real then
/// fails on a number with "incorrect binary data format". Such reals go through
/// [`BindReal::bind_real`], which binds a NULL the way that gives a `float8`.
pub(super) trait BindReal {
    /// Binds `value`, a NULL as a `float8` on PostgreSQL.
    fn bind_real(self, value: Option<f64>) -> Self;
}

impl BindReal for sqlx::query::Query<'_, sqlx::Any, sqlx::any::AnyArguments> {
    fn bind_real(self, value: Option<f64>) -> Self {
        match value {
            Some(value) => self.bind(value),
            None => self.bind(None::<f32>),
        }
    }
}

impl<O> BindReal for sqlx::query::QueryAs<'_, sqlx::Any, O, sqlx::any::AnyArguments> {
    fn bind_real(self, value: Option<f64>) -> Self {
        match value {
            Some(value) => self.bind(value),
            None => self.bind(None::<f32>),
        }
    }
}

impl<O> BindReal for sqlx::query::QueryScalar<'_, sqlx::Any, O, sqlx::any::AnyArguments> {
    fn bind_real(self, value: Option<f64>) -> Self {
        match value {
            Some(value) => self.bind(value),
            None => self.bind(None::<f32>),
        }
    }
}

/// The first bytes of every SQLite database file.
const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// An error when `path` holds something that is not a SQLite database (a mistyped `--db`):
/// sqlx's pool would retry its connection for the busy timeout, logging each failure, and end
/// on "pool timed out". A missing or empty file is a new database.
fn refuse_a_file_not_sqlite(path: &Path) -> anyhow::Result<()> {
    use std::io::Read;
    let Ok(mut file) = std::fs::File::open(path) else {
        return Ok(()); // missing (created), or unreadable (sqlx says why)
    };
    let mut head = Vec::with_capacity(SQLITE_HEADER.len());
    file.by_ref()
        .take(SQLITE_HEADER.len() as u64)
        .read_to_end(&mut head)
        .with_context(|| format!("reading {}", path.display()))?;
    if head.is_empty() || head == SQLITE_HEADER {
        return Ok(());
    }
    anyhow::bail!(
        "{} is not a SQLite database (it does not start with SQLite's header): check --db",
        path.display()
    )
}

/// An error when writing a command's output to `out` would destroy a database: `out` is the
/// file the database `db` leads to (symlinks, `.` and `..` followed) or its WAL, shared-memory
/// or journal file, or `out` is any SQLite database. `freshet export warc --out f.db --db f.db`
/// once replaced the database with the WARC and said it had written it.
pub fn refuse_an_output_over_a_database(out: &Path, db: &Path) -> anyhow::Result<()> {
    use std::io::Read;
    if let Location::SqliteFile(db_file) = Location::parse(db)? {
        let db_file = super::run_lock::file_the_path_leads_to(db_file)?;
        let out_file = super::run_lock::file_the_path_leads_to(out)?;
        let of_the_database = ["", "-wal", "-shm", "-journal"].iter().any(|suffix| {
            let mut file = db_file.clone().into_os_string();
            file.push(suffix);
            out_file.as_os_str() == file
        });
        if of_the_database {
            anyhow::bail!(
                "--out {} is the database --db {} (or one of its files): writing there would \
                 destroy it; name another file",
                out.display(),
                db.display()
            );
        }
    }
    let mut head = Vec::with_capacity(SQLITE_HEADER.len());
    // Only a regular file is looked into: a terminal, a pipe or a FIFO (`/dev/stdout`) would
    // wait for input.
    if std::fs::metadata(out).is_ok_and(|meta| meta.is_file()) {
        let mut file =
            std::fs::File::open(out).with_context(|| format!("opening {}", out.display()))?;
        file.by_ref()
            .take(SQLITE_HEADER.len() as u64)
            .read_to_end(&mut head)
            .with_context(|| format!("reading {}", out.display()))?;
    }
    if head == SQLITE_HEADER {
        anyhow::bail!(
            "--out {} is a SQLite database: it is not written over; name another file",
            out.display()
        );
    }
    Ok(())
}

/// Whether the SQLite file at `path` holds freshet's tables, read without changing it (reports
/// must not migrate another program's database given by mistake).
pub(super) async fn is_freshet_sqlite(path: &Path) -> anyhow::Result<bool> {
    use sqlx::Connection;
    refuse_a_file_not_sqlite(path)?;
    let options = SqliteConnectOptions::new().filename(path).read_only(true);
    let mut conn = sqlx::SqliteConnection::connect_with(&options)
        .await
        .with_context(|| format!("opening database {}", path.display()))?;
    let tables: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'
         AND name IN ('_sqlx_migrations', 'urls', 'observations')",
    )
    .fetch_one(&mut conn)
    .await
    .with_context(|| format!("reading the tables of {}", path.display()))?;
    conn.close().await.ok();
    Ok(tables == 3)
}

/// The file name to give the `Any` driver for the SQLite file at `path`: the file the path leads
/// to (the one the run lock locks: [`super::run_lock::file_the_path_leads_to`]), with `%`
/// escaped. Why: the driver's URL collapses `dir/..` as text, not as the kernel resolves it
/// after a symlink (and reads a relative path's first folder as the URL's host), and decodes
/// `%41` to `A`, so `--db state/../freshet.db` or `--db a%41.db` opened another file than the
/// one named (and than the reports, which open the path as it is, read).
fn file_for_url(path: &Path) -> anyhow::Result<std::path::PathBuf> {
    // Elsewhere the resolved path is a `\\?\C:\...` name the driver's URL cannot hold.
    if cfg!(not(unix)) {
        return Ok(path.to_path_buf());
    }
    let file = super::run_lock::file_the_path_leads_to(path)?;
    Ok(match file.to_str() {
        Some(text) if text.contains('%') => text.replace('%', "%25").into(),
        _ => file,
    })
}

/// Opens (creating and migrating if needed) the SQLite file at `path`: WAL,
/// `synchronous=NORMAL`, the busy timeout, foreign keys.
pub(super) async fn open_sqlite(path: &Path, busy_timeout: Duration) -> anyhow::Result<Pools> {
    sqlx::any::install_default_drivers();
    refuse_a_file_not_sqlite(path)?;
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating the folder of {}", path.display()))?;
    }
    // The `Any` driver opens SQLite from a URL, which carries the file and its mode; the rest
    // is set on each new connection.
    let url = |options: SqliteConnectOptions| {
        AnyConnectOptions::from_url(&options.to_url_lossy()).map_err(anyhow::Error::from)
    };
    let file = SqliteConnectOptions::new().filename(file_for_url(path)?);
    let pragmas: Arc<str> = format!(
        "PRAGMA busy_timeout = {}; PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;",
        busy_timeout.as_millis()
    )
    .into();
    let reader_pragmas = pragmas.clone();
    let writer = AnyPoolOptions::new()
        .max_connections(1)
        // Kept open for the store's life: the WAL and its index stay in place for the read-only
        // readers, which could not recreate them.
        .min_connections(1)
        // A SQLite connection is a file handle in this process, with no link to break: a ping
        // before each use was a round trip to its thread for nothing (see `reader` below).
        .test_before_acquire(false)
        .idle_timeout(None)
        .max_lifetime(None)
        // Waiting for the writer is normal; past this, the write is retried as busy.
        .acquire_timeout(busy_timeout)
        .after_connect(move |conn, _| {
            let pragmas = AssertSqlSafe(pragmas.clone());
            Box::pin(async move {
                sqlx::raw_sql(pragmas).execute(&mut *conn).await?;
                sqlx::raw_sql("PRAGMA journal_mode = WAL")
                    .execute(&mut *conn)
                    .await?;
                Ok(())
            })
        })
        .connect_with(url(file.clone().create_if_missing(true))?)
        .await
        .with_context(|| format!("opening database {}", path.display()))?;
    sqlx::migrate!("./migrations/sqlite")
        .run(&writer)
        .await
        .with_context(|| format!("migrating database {}", path.display()))?;
    let reader = AnyPoolOptions::new()
        .max_connections(READERS)
        // sqlx pings a pooled connection before lending it by default: on SQLite that was a
        // second round trip to the connection's thread for every read, the checks' row reads
        // included (2.4% of a run's CPU in `perf`, besides the task switches).
        .test_before_acquire(false)
        .after_connect(move |conn, _| {
            let pragmas = AssertSqlSafe(reader_pragmas.clone());
            Box::pin(async move {
                sqlx::raw_sql(pragmas).execute(&mut *conn).await?;
                Ok(())
            })
        })
        .connect_with(url(file.read_only(true))?)
        .await
        .with_context(|| format!("opening database {} for reading", path.display()))?;
    Ok(Pools {
        writer,
        reader,
        backend: Backend::Sqlite,
    })
}

/// Connects to the PostgreSQL server at `url` and brings its schema up to date (under a lock row,
/// so workers starting together migrate once: [`super::migration_lock`]).
pub(super) async fn open_postgres(url: &str, busy_timeout: Duration) -> anyhow::Result<Pools> {
    sqlx::any::install_default_drivers();
    let shown = redact(url);
    let options = AnyConnectOptions::from_url(
        &url.parse()
            .with_context(|| format!("--db {shown}: not a URL"))?,
    )?;
    // One connection first, for its own error: the pool hid it behind "pool timed out while
    // waiting for an open connection" after the whole timeout (a refused port), or a protocol
    // error with no hint (a port that speaks something else).
    let hint = "is a PostgreSQL server listening there, and are the user, password and \
                database in the URL right?";
    match tokio::time::timeout(busy_timeout, options.connect()).await {
        Err(_) => anyhow::bail!("connecting to {shown}: no answer in {busy_timeout:?} ({hint})"),
        Ok(Err(err)) => {
            return Err(err).with_context(|| format!("connecting to {shown} ({hint})"));
        }
        Ok(Ok(connection)) => {
            let _ = sqlx::Connection::close(connection).await;
        }
    }
    let writer = AnyPoolOptions::new()
        .max_connections(1)
        .acquire_timeout(busy_timeout)
        .connect_with(options.clone())
        .await
        .with_context(|| format!("connecting to {shown}"))?;
    super::migration_lock::migrate_postgres(&writer, &shown).await?;
    let reader = AnyPoolOptions::new()
        .max_connections(READERS)
        .connect_with(options)
        .await
        .with_context(|| format!("connecting to {shown} for reading"))?;
    Ok(Pools {
        writer,
        reader,
        backend: Backend::Postgres,
    })
}

/// Creates a new, empty database `name` on the PostgreSQL server that `server` (a postgres://
/// URL of any database there) reaches, and answers the new database's URL. For tests and
/// benchmarks, which each want a database of their own on one throwaway server.
pub async fn create_postgres_database(server: &str, name: &str) -> anyhow::Result<String> {
    on_server(server, &format!("CREATE DATABASE {}", checked(name)?))
        .await
        .with_context(|| format!("creating database {name}"))?;
    let mut url = url::Url::parse(server)?;
    url.set_path(&format!("/{name}"));
    Ok(url.to_string())
}

/// Drops the database `name` from the PostgreSQL server that `server` reaches (benchmarks drop
/// the databases they made).
pub async fn drop_postgres_database(server: &str, name: &str) -> anyhow::Result<()> {
    on_server(
        server,
        &format!("DROP DATABASE IF EXISTS {}", checked(name)?),
    )
    .await
    .with_context(|| format!("dropping database {name}"))
}

/// `name` if it is a database name of letters, digits and underscores (it goes into SQL text).
fn checked(name: &str) -> anyhow::Result<&str> {
    anyhow::ensure!(
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
        "a database name of letters, digits and underscores, not {name:?}"
    );
    Ok(name)
}

/// Runs one statement on its own connection to `server` (CREATE and DROP DATABASE may not run
/// inside a transaction or a pool's session).
async fn on_server(server: &str, statement: &str) -> anyhow::Result<()> {
    use sqlx::Connection;
    let mut conn = sqlx::postgres::PgConnection::connect(server)
        .await
        .with_context(|| format!("connecting to {}", redact(server)))?;
    sqlx::raw_sql(AssertSqlSafe(statement.to_string()))
        .execute(&mut conn)
        .await?;
    conn.close().await?;
    Ok(())
}

/// `url` with its password, if any, replaced by `***`, for messages.
pub fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn db_names_a_file_or_a_postgres_server() {
        let parse = |text: &'static str| Location::parse(Path::new(text));
        assert_eq!(
            parse("freshet.db").unwrap(),
            Location::SqliteFile(Path::new("freshet.db"))
        );
        assert_eq!(
            parse("a:b.db").unwrap(),
            Location::SqliteFile(Path::new("a:b.db"))
        );
        assert_eq!(
            parse("postgres://u@127.0.0.1:5432/db").unwrap(),
            Location::Postgres("postgres://u@127.0.0.1:5432/db")
        );
        assert!(matches!(
            parse("postgresql://h/db").unwrap(),
            Location::Postgres(_)
        ));
        let error = format!("{:#}", parse("mysql://h/db").unwrap_err());
        assert!(error.contains("mysql://"), "{error}");
        assert_eq!(redact("postgres://u:secret@h/db"), "postgres://u:***@h/db");
    }

    /// The store opens the file its path names as the kernel reads it (and as the run lock and
    /// the reports do): a `..` after a symlink, and a `%` in a name, are not read as in a URL.
    #[cfg(unix)]
    #[tokio::test]
    async fn the_store_opens_the_file_its_path_names() {
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("real/sub");
        std::fs::create_dir_all(&deep).unwrap();
        std::os::unix::fs::symlink(&deep, dir.path().join("link")).unwrap();
        for (given, made) in [
            ("link/../f.db", "real/f.db"),
            ("a%41.db", "a%41.db"),
            ("real/../b.db", "b.db"),
        ] {
            let store = crate::store::Store::open(&dir.path().join(given))
                .await
                .unwrap();
            store.close().await;
            assert!(dir.path().join(made).is_file(), "{given} made no {made}");
        }
        assert!(!dir.path().join("f.db").exists());
        assert!(!dir.path().join("aA.db").exists());
        let lock = super::super::run_lock::lock_for_run(&dir.path().join("link/../f.db"))
            .unwrap()
            .expect("locked");
        let error = super::super::run_lock::lock_for_run(&dir.path().join("real/f.db"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("another `freshet run`"), "{error}");
        drop(lock);
    }
}
