//! One demo session: generate the world, serve it on loopback on a virtual clock, write the
//! schedule, hand everything to a refresher for a real duration while showing progress, then
//! judge what it fetched.
//!
//! The refresher is a parameter (the CLI passes [`crate::refresher::run`]), so the session runs
//! and is tested with any client, and the world stays usable without the refresher.

use std::future::Future;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;

use super::outcome::{self, DemoOutcome, Judge};
use super::schedule::{ScheduleConfig, requests_per_day, write_schedule};
use super::server::{RequestLog, RequestRecord};
use super::world::{World, WorldConfig};
use crate::clock::{MS_PER_DAY, SharedClock, VirtualClock};
use crate::refresher::{PolicyChoice, RunOptions, RunSummary};
use crate::store::run_lock::RunLock;

/// The shutdown future handed to the refresher.
pub type Shutdown = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The share of the run before judging starts.
pub const WARM_UP_SHARE: f64 = 0.2;

/// What a session is asked to do.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// World seed (also seeds the uniform baseline's phases).
    pub seed: u64,
    /// Multiplies the world's page counts.
    pub scale: f64,
    /// Real time the refresher runs for.
    pub duration: Duration,
    /// Virtual seconds per real second.
    pub speed: f64,
    /// Budget: visits per page per day, on average, per site.
    pub visits_per_page_per_day: f64,
    /// The database file; None = a fresh one in a temporary folder.
    pub db_path: Option<PathBuf>,
    /// Show progress on stderr.
    pub progress: bool,
    /// Which changes the refresher learns (the schedule's `change_signal`).
    pub change_signal: crate::schedule::ChangeSignal,
    /// Refreshers run side by side on the one database (more than one: a PostgreSQL `db_path`,
    /// on which they lease hosts and share the budget).
    pub workers: usize,
    /// The run lock of `db_path`, when the caller holds it (see [`RunOptions::run_lock`]).
    pub run_lock: Option<Arc<RunLock>>,
}

impl Default for SessionOptions {
    fn default() -> Self {
        Self {
            seed: 1,
            scale: 1.0,
            duration: Duration::from_secs(60),
            speed: 3600.0,
            visits_per_page_per_day: 2.0,
            db_path: None,
            progress: false,
            change_signal: crate::schedule::ChangeSignal::default(),
            workers: 1,
            run_lock: None,
        }
    }
}

/// Whether `db` is a PostgreSQL database; more than one worker on a file is refused (they share
/// a PostgreSQL database, leasing its hosts).
pub fn is_postgres_for(workers: usize, db: &Path) -> anyhow::Result<bool> {
    let on_postgres = matches!(
        crate::store::Location::parse(db)?,
        crate::store::Location::Postgres(_)
    );
    anyhow::ensure!(
        workers == 1 || on_postgres,
        "{workers} workers share a PostgreSQL database (--db postgres://...), not a file"
    );
    Ok(on_postgres)
}

/// The folder of the demo's schedule beside the database file `db`, named after it:
/// `freshet-demo-schedules/` beside `freshet-demo.db`. Two demos run side by side on two
/// databases in one folder once shared one folder named so, and the second to start wrote its
/// schedule over the first's: the first refresher went on against the
/// second's web (it made 3,168 requests; its own server saw none).
pub fn schedules_beside(db: &Path) -> PathBuf {
    let stem = db
        .file_stem()
        .map_or_else(|| "freshet-demo".into(), |s| s.to_string_lossy());
    let folder = db
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    folder.join(format!("{stem}-schedules"))
}

/// What a session produced.
#[derive(Debug)]
pub struct SessionResult {
    /// The judgement (estimate and learned rates left for the caller, who can read the database).
    pub outcome: DemoOutcome,
    /// What the refresher said it did.
    pub summary: RunSummary,
    /// The world that was served.
    pub world: Arc<World>,
    /// Every request the server saw, in arrival order.
    pub log: Vec<RequestRecord>,
    /// The database file the refresher used.
    pub db_path: PathBuf,
    /// The schedule file it was given.
    pub schedule_path: PathBuf,
}

/// Runs one session with `refresh` as the refresher (`options.workers` of them side by side).
pub async fn run_session<F, Fut>(
    options: &SessionOptions,
    refresh: F,
) -> anyhow::Result<SessionResult>
where
    F: Fn(RunOptions, Shutdown) -> Fut,
    Fut: Future<Output = anyhow::Result<RunSummary>>,
{
    anyhow::ensure!(
        options.workers >= 1,
        "at least one worker, not {}",
        options.workers
    );
    anyhow::ensure!(
        options.speed.is_finite() && options.speed > 0.0,
        "--speed must be a positive number, not {}",
        options.speed
    );
    let virtual_days = options.duration.as_secs_f64() * options.speed / 86_400.0;
    let config = WorldConfig {
        seed: options.seed,
        scale: options.scale,
        // Room for a refresher that is slow to stop: pages keep changing past the end.
        horizon_days: virtual_days * 1.5 + 1.0,
        ..WorldConfig::default()
    };
    let world = Arc::new(World::generate(&config));
    let clock: SharedClock = Arc::new(VirtualClock::new(config.origin_ms, options.speed));
    let server = super::start(world.clone(), clock.clone())
        .await
        .context("starting the demo server on 127.0.0.1")?;

    let temporary = options.db_path.is_none();
    let own_folder = std::env::temp_dir().join(format!("freshet-demo-{}", std::process::id()));
    let db_path = match &options.db_path {
        Some(path) => path.clone(),
        None => own_folder.join("freshet.db"),
    };
    let on_postgres = is_postgres_for(options.workers, &db_path)?;
    let schedule_config = ScheduleConfig {
        visits_per_page_per_day: options.visits_per_page_per_day,
        change_signal: options.change_signal,
        ..ScheduleConfig::default()
    };
    // The schedule goes next to a database file, or into a folder of its own.
    let schedule_dir = if on_postgres {
        own_folder.join("freshet-demo-schedules")
    } else {
        schedules_beside(&db_path)
    };
    let schedule_path = write_schedule(&schedule_dir, &world, server.addr.port(), &schedule_config)
        .with_context(|| format!("writing the demo schedule into {}", schedule_dir.display()))?;

    let run_options = RunOptions {
        schedules: vec![schedule_dir],
        db_path: db_path.clone(),
        once: false,
        clock: clock.clone(),
        resolve: server.resolve(),
        policy: PolicyChoice::Learned,
        worker: Default::default(),
        run_lock: options.run_lock.clone(),
    };
    let ticker = options.progress.then(|| {
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(show_progress(
            server.log.clone(),
            clock.clone(),
            config.origin_ms,
            options.duration,
            stopped,
        ));
        (stop, task)
    });
    let summary = run_workers(&refresh, run_options, options).await;
    let end_ms = clock.now_ms();
    if let Some((stop, task)) = ticker {
        let _ = stop.send(());
        let _ = task.await;
    }
    let log = server.log.snapshot();
    server.stop().await;
    let summary = match summary {
        Ok(summary) => summary,
        Err(err) => {
            if temporary {
                // Nothing worth keeping in a folder of our own making.
                let _ = std::fs::remove_dir_all(&own_folder);
            }
            return Err(err.context("the refresher failed"));
        }
    };

    // Both policies are judged after a warm-up (the first fifth of the run), in which freshet
    // discovers the web and learns; the uniform schedule gets as many requests as freshet made
    // inside the judged window, and a copy current at its start.
    let warm_up_ms = ((end_ms - config.origin_ms) as f64 * WARM_UP_SHARE) as i64;
    let judge = Judge {
        from_ms: config.origin_ms + warm_up_ms,
        to_ms: end_ms,
        seed: options.seed,
        budget_per_day: requests_per_day(&world, &schedule_config),
        host_interval_ms: schedule_config.host_min_interval.as_millis() as i64,
        // Ten real milliseconds of arrival jitter, in clock time.
        gap_tolerance_ms: (options.speed * 10.0) as i64,
    };
    let outcome = outcome::evaluate(&world, &log, &judge);
    Ok(SessionResult {
        outcome,
        summary,
        world,
        log,
        db_path,
        schedule_path,
    })
}

/// Runs `options.workers` refreshers side by side for the session's duration (each under its own
/// name, `demo-1`, `demo-2`, ...), and adds up what they did; the first failure is the session's.
async fn run_workers<F, Fut>(
    refresh: &F,
    run_options: RunOptions,
    options: &SessionOptions,
) -> anyhow::Result<RunSummary>
where
    F: Fn(RunOptions, Shutdown) -> Fut,
    Fut: Future<Output = anyhow::Result<RunSummary>>,
{
    use futures_util::FutureExt as _;
    let shutdown = tokio::time::sleep(options.duration).shared();
    let runs = (1..=options.workers).map(|n| {
        let mut run_options = run_options.clone();
        if options.workers > 1 {
            run_options.worker.name = Some(format!("demo-{n}"));
            // A tenth of a real second is minutes of the demo's clock: the workers see each
            // other's URLs, and share the budget by them, within that.
            run_options.worker.round_every = Some(Duration::from_millis(100));
        }
        refresh(run_options, Box::pin(shutdown.clone()))
    });
    let mut total = RunSummary::default();
    for summary in futures_util::future::join_all(runs).await {
        let summary = summary?;
        total.requests += summary.requests;
        total.checks += summary.checks;
        total.changes += summary.changes;
        total.errors += summary.errors;
        total.skipped_hosts.extend(summary.skipped_hosts);
    }
    Ok(total)
}

/// Redraws a progress line (a terminal) or prints one every ten seconds (a log) until `stop`.
async fn show_progress(
    log: RequestLog,
    clock: SharedClock,
    origin_ms: i64,
    duration: Duration,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    let terminal = std::io::stderr().is_terminal();
    let bar = indicatif::ProgressBar::new(duration.as_secs().max(1));
    if terminal {
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{bar:30} {pos:>3}/{len}s  {msg}")
        {
            bar.set_style(style);
        }
    } else {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let started = Instant::now();
    let mut last_line = Instant::now();
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = &mut stop => break,
        }
        let records = log.snapshot();
        let not_modified = records.iter().filter(|r| r.status == 304).count();
        let message = format!(
            "virtual day {:.2}: {} requests, {} answered 304",
            (clock.now_ms() - origin_ms) as f64 / MS_PER_DAY,
            records.len(),
            not_modified
        );
        if terminal {
            bar.set_position(started.elapsed().as_secs());
            bar.set_message(message);
        } else if last_line.elapsed() >= Duration::from_secs(10) {
            eprintln!("freshet demo: {message}");
            last_line = Instant::now();
        }
    }
    bar.finish_and_clear();
}
