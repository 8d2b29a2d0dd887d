//! The `run` part of `freshet bench`: the real refresher (`freshet run --once`: scheduler,
//! fetcher, politeness, the single SQLite writer, the dedup engine) against the loopback web of
//! [`super::bench_web`], many virtual hosts and no politeness limit that binds.
//!
//! Throughput: a web of at most [`CHECKED_URLS`] pages is fetched once (every page new, all
//! 200s), one page in ten is changed, and a second pass 60 days later (virtual clock) checks every
//! page again: about 90% 304s and 10% changed 17 KB pages, each check committed to SQLite before
//! it counts. `checks_per_second` is the checks the database holds from that pass over the pass's
//! whole wall time (start-up and the last commit included); the server's own count of the
//! requests it answered, and their rate between its first and last page request, stand beside it.
//! `cpu_ms_per_check` is the process's CPU time over the pass per check committed: unlike the
//! rate, it hardly moves when the machine is busy with something else. The loopback server runs
//! in this process, on a thread of its own: `server_cpu_ms_per_check` is its part, and
//! `refresher_cpu_ms_per_check` the rest (what a deployment's refresher would spend).
//!
//! With `--postgres SERVER` the passes run on a new PostgreSQL database of that server each
//! (dropped afterwards) instead of a SQLite file: what one worker gets from PostgreSQL.
//!
//! Memory: a web of `--pages` pages is discovered from its sitemaps by a pass whose budget fetches
//! only a few hundred of them, then the refresher is started again on that database (a restart
//! loads every URL's summary into the scheduler). `bytes_per_url` is the peak resident memory over
//! both passes above the memory before the first, divided by the URLs known. The process's peak
//! is reset before (as in the sitemap part); memory an earlier part freed but the allocator kept may
//! be reused here, so `--only run` gives the cleanest figure.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use sqlx::AnyConnection;
use sqlx::Connection as _;

use super::bench_figures::{Figures, cpu_seconds, reset_peak, status_bytes};
use super::bench_web::BenchWeb;
use crate::clock::{MS_PER_DAY, VirtualClock};
use crate::refresher::{self, PolicyChoice, RunOptions, RunSummary};

/// The most pages the throughput passes check (every one of them is first fetched whole).
pub const CHECKED_URLS: usize = 20_000;
/// The run part's hosts unless `--hosts` says otherwise: every host holds a socket on each side
/// (the refresher's and the server's, both in this process) for up to 20 s after its last
/// request, and discovery reads thousands of hosts in that time: more hosts run out of file
/// descriptors where the hard limit is in the tens of thousands.
pub const DEFAULT_MAX_HOSTS: usize = 2_000;
/// The memory passes' budget: requests a day, so that only this many pages are fetched.
const MEMORY_PASS_BUDGET: f64 = 500.0;
/// When the first pass runs (virtual clock): 2026-01-01T00:00:00Z.
const ORIGIN_MS: i64 = 1_767_225_600_000;

/// A folder removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(what: &str, urls: usize) -> std::io::Result<Self> {
        let path = std::env::temp_dir().join(format!(
            "freshet-bench-{what}-{}-{urls}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path)?;
        Ok(Self(path))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One site spanning every host of `web`, its budget `requests_per_day`, politeness far above
/// what the refresher can send, sitemaps re-read only once a year.
fn schedule_toml(web: &BenchWeb, requests_per_day: f64) -> String {
    let sitemaps: Vec<String> = web.sitemaps().iter().map(|s| format!("\"{s}\"")).collect();
    format!(
        "[[site]]\n\
         name = \"bench\"\n\
         sitemaps = [{}]\n\
         requests_per_day = {requests_per_day:.1}\n\
         host_rate = \"1000/s\"\n\
         rediscover = \"0 0 0 1 1 *\"\n\
         allow_networks = [\"127.0.0.0/8\"]\n",
        sitemaps.join(", ")
    )
}

/// A schedule in a temporary folder, and a database: a SQLite file beside it, or a new
/// database on a PostgreSQL server (dropped by [`Setup::finish`]).
struct Setup {
    dir: TempDir,
    schedule: PathBuf,
    /// The PostgreSQL server and the database made on it.
    postgres: Option<(String, String)>,
}

impl Setup {
    async fn new(
        what: &str,
        web: &BenchWeb,
        urls: usize,
        requests_per_day: f64,
        postgres: Option<&str>,
    ) -> anyhow::Result<Self> {
        let dir = TempDir::new(what, urls)?;
        let schedule = dir.0.join("bench.toml");
        std::fs::write(&schedule, schedule_toml(web, requests_per_day))?;
        let postgres = match postgres {
            Some(server) => {
                let name = format!(
                    "freshet_bench_{}_{}_{urls}",
                    what.replace('-', "_"),
                    std::process::id()
                );
                let url = crate::store::create_postgres_database(server, &name).await?;
                Some((server.to_string(), url))
            }
            None => None,
        };
        Ok(Self {
            dir,
            schedule,
            postgres,
        })
    }

    /// The database, as `--db` takes it.
    fn db(&self) -> PathBuf {
        match &self.postgres {
            Some((_, url)) => PathBuf::from(url),
            None => self.dir.0.join("freshet.db"),
        }
    }

    /// A connection to the database for counting (read-only on SQLite).
    async fn connect(&self) -> anyhow::Result<AnyConnection> {
        sqlx::any::install_default_drivers();
        let url = match &self.postgres {
            Some((_, url)) => url.clone(),
            None => format!("sqlite://{}?mode=ro", self.db().display()),
        };
        Ok(AnyConnection::connect(&url).await?)
    }

    /// The database's size in bytes.
    async fn db_bytes(&self) -> anyhow::Result<f64> {
        if self.postgres.is_none() {
            return Ok(std::fs::metadata(self.db()).map_or(0, |m| m.len()) as f64);
        }
        let mut conn = self.connect().await?;
        let (bytes,): (i64,) = sqlx::query_as("SELECT pg_database_size(current_database())")
            .fetch_one(&mut conn)
            .await?;
        conn.close().await?;
        Ok(bytes as f64)
    }

    /// One count from the database.
    async fn count(&self, query: &'static str, bind: i64) -> anyhow::Result<i64> {
        let mut conn = self.connect().await?;
        let (count,): (i64,) = sqlx::query_as(query)
            .bind(bind)
            .fetch_one(&mut conn)
            .await?;
        conn.close().await?;
        Ok(count)
    }

    /// Checks the database holds from `since_ms` on (clock time).
    async fn committed_checks(&self, since_ms: i64) -> anyhow::Result<i64> {
        self.count(
            "SELECT COUNT(*) FROM observations WHERE checked_ms >= $1",
            since_ms,
        )
        .await
    }

    /// Pages the database knows.
    async fn known_pages(&self) -> anyhow::Result<i64> {
        self.count(
            "SELECT COUNT(*) FROM urls WHERE kind = 'page' AND id > $1",
            0,
        )
        .await
    }

    /// Drops the PostgreSQL database (the SQLite file goes with the folder).
    async fn finish(self) -> anyhow::Result<()> {
        if let Some((server, url)) = &self.postgres {
            let name = url.rsplit('/').next().unwrap_or_default();
            crate::store::drop_postgres_database(server, name).await?;
        }
        Ok(())
    }

    /// One `run --once` pass with the clock reading `at_ms` at its start.
    async fn pass(&self, web: &BenchWeb, at_ms: i64) -> anyhow::Result<RunSummary> {
        let options = RunOptions {
            schedules: vec![self.schedule.clone()],
            db_path: self.db(),
            once: true,
            clock: Arc::new(VirtualClock::new(at_ms, 1.0)),
            resolve: web.resolve(),
            policy: PolicyChoice::Learned,
            worker: Default::default(),
            run_lock: None,
        };
        refresher::run(options, std::future::pending()).await
    }
}

/// The throughput passes over `urls` pages on `hosts` hosts.
async fn throughput(urls: usize, hosts: usize, postgres: Option<&str>) -> anyhow::Result<Figures> {
    let web = BenchWeb::start(urls, hosts).await?;
    // A budget the passes never reach: every page due is checked.
    let setup = Setup::new("run", &web, urls, 10.0 * urls as f64, postgres).await?;
    let (started, cpu_started) = (Instant::now(), cpu_seconds());
    let first = setup.pass(&web, ORIGIN_MS).await?;
    let first_seconds = started.elapsed().as_secs_f64();
    let first_cpu = cpu_seconds() - cpu_started;
    let first_counts = web.counts();

    web.next_generation();
    web.reset_counts();
    let second_at = ORIGIN_MS + 60 * MS_PER_DAY as i64;
    let (started, cpu_started) = (Instant::now(), cpu_seconds());
    let server_cpu_started = web.server_cpu_seconds();
    let second = setup.pass(&web, second_at).await?;
    let seconds = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu_started;
    let server_cpu = web.server_cpu_seconds() - server_cpu_started;
    let counts = web.counts();
    let committed = setup.committed_checks(second_at).await? as f64;
    web.stop().await;
    let answered = (counts.ok + counts.not_modified) as f64;
    let db_bytes = setup.db_bytes().await?;
    setup.finish().await?;
    let waits = second.waits;
    let wait = |sum_us| waits.mean_ms(sum_us);
    Ok(vec![
        ("checked_urls", urls as f64),
        ("checked_hosts", hosts as f64),
        ("checks_per_second", committed / seconds),
        ("checks_committed", committed),
        ("pass_seconds", seconds),
        ("cpu_ms_per_check", 1000.0 * cpu / committed.max(1.0)),
        (
            "server_cpu_ms_per_check",
            1000.0 * server_cpu / committed.max(1.0),
        ),
        (
            "refresher_cpu_ms_per_check",
            1000.0 * (cpu - server_cpu) / committed.max(1.0),
        ),
        ("server_answered_200", counts.ok as f64),
        ("server_answered_304", counts.not_modified as f64),
        ("server_changed_share", counts.ok as f64 / answered.max(1.0)),
        (
            "server_pages_per_second",
            answered / counts.page_seconds.max(1e-9),
        ),
        ("refresher_checks", second.checks as f64),
        // Bodies whose main text was extracted (not a 200 that is the copy's byte for byte).
        ("refresher_extractions", second.extractions as f64),
        // Where a check of the pass waited, per check (means; see refresher::waits).
        ("check_wait_ms", wait(waits.total_us)),
        ("admission_wait_ms", wait(waits.admission_us)),
        ("request_wait_ms", wait(waits.request_us)),
        ("commit_wait_ms", wait(waits.commit_us)),
        ("dedup_wait_ms", wait(waits.dedup_us)),
        ("refresher_errors", second.errors as f64),
        ("first_pass_seconds", first_seconds),
        (
            "first_pass_checks_per_second",
            first.checks as f64 / first_seconds,
        ),
        ("first_pass_server_200", first_counts.ok as f64),
        (
            "first_pass_cpu_ms_per_check",
            1000.0 * first_cpu / first.checks.max(1) as f64,
        ),
        ("db_bytes_per_checked_url", db_bytes / urls.max(1) as f64),
    ])
}

/// The memory passes over `urls` pages on `hosts` hosts.
async fn memory(urls: usize, hosts: usize, postgres: Option<&str>) -> anyhow::Result<Figures> {
    let web = BenchWeb::start(urls, hosts).await?;
    let setup = Setup::new("run-memory", &web, urls, MEMORY_PASS_BUDGET, postgres).await?;
    let rss_before = status_bytes("VmRSS").unwrap_or(0);
    let reset = reset_peak();
    let started = Instant::now();
    let discovered = setup.pass(&web, ORIGIN_MS).await?;
    let discovery_seconds = started.elapsed().as_secs_f64();
    let discovery_peak = status_bytes("VmHWM").unwrap_or(0);
    let started = Instant::now();
    // A day on: the budget's credit, saved by the first pass, has refilled (an hour on, a
    // restart has an hour's refill to spend, not the pass's budget).
    let restarted = setup.pass(&web, ORIGIN_MS + 86_400_000).await?;
    let restart_seconds = started.elapsed().as_secs_f64();
    let peak = status_bytes("VmHWM").unwrap_or(0);
    let db_bytes = setup.db_bytes().await?;
    web.stop().await;
    // Per URL the refresher knows (all of them, unless discovery failed somewhere).
    let known = setup.known_pages().await?.max(1) as f64;
    setup.finish().await?;
    let per_url = |peak: u64| peak.saturating_sub(rss_before) as f64 / known;
    Ok(vec![
        ("urls", urls as f64),
        ("known_urls", known),
        ("hosts", hosts as f64),
        ("bytes_per_url", per_url(peak)),
        ("discovery_bytes_per_url", per_url(discovery_peak)),
        ("peak_rss_bytes", peak as f64),
        ("rss_before_bytes", rss_before as f64),
        ("peak_reset", f64::from(u8::from(reset))),
        ("discovery_seconds", discovery_seconds),
        ("discovery_checks", discovered.checks as f64),
        ("restart_seconds", restart_seconds),
        ("restart_checks", restarted.checks as f64),
        ("db_bytes_per_url", db_bytes / known),
    ])
}

/// Runs the run part: throughput on at most [`CHECKED_URLS`] of the `urls`, memory with all
/// `urls` known, on SQLite files or on databases of the `postgres` server. Called from a
/// blocking thread of the runtime.
pub fn run(urls: usize, hosts: usize, postgres: Option<&str>) -> anyhow::Result<Figures> {
    let handle = tokio::runtime::Handle::current();
    let checked = urls.min(CHECKED_URLS);
    // Enough hosts that the refresher's checks in flight never wait on one host.
    let checked_hosts = hosts.clamp(1, checked).max(checked.min(200));
    let mut figures = handle.block_on(memory(urls, hosts, postgres))?;
    figures.extend(handle.block_on(throughput(checked, checked_hosts, postgres))?);
    Ok(figures)
}
