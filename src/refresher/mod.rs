//! The refresher: the daemon behind `freshet run` and `freshet demo`.
//!
//! It is the [`crate::scheduler::Scheduler`] (every revisit decision, the same one `freshet
//! simulate` drives) with the real network and the store around it:
//! - at start the scheduler is rebuilt from the summary rows (folded evidence, due times, learnt
//!   trust), so a restart resumes where the last run stopped;
//! - the loop asks the scheduler for the next request and hands each to a task ([`checks`]),
//!   which fetches politely, reports the outcome back and commits the observation with the URL's
//!   new summary in one transaction (the store has one writer); no task ever waits for a host:
//!   a closed host simply is not handed out;
//! - discovery ([`discovery`]) runs as its own task per site at its `rediscover` times, beside
//!   fetching; feeds are read when the scheduler says ([`feeds`]);
//! - the loop ([`main_loop`]) sleeps until the scheduler's next instant, a discovery time or a
//!   finished task.
//!
//! Shutdown: the shutdown future is watched from the first instant of [`run`] (opening the store,
//! the first discovery pass, everything). When it resolves the stop flag is set: no new check
//! starts, and every task waiting on a host returns at once (the politeness pool races its
//! waits with the flag). Checks in flight get [`SHUTDOWN_GRACE`] to finish and commit; what is
//! still running then is aborted (a write it had already queued for a group commit is still
//! committed, before the store closes; else the server's answer is not recorded, and the host's
//! persisted gap still covers the request). Then the politeness journal is flushed and the pool
//! closed (checkpointing the WAL). A failed task or a store
//! error is recorded and the daemon goes on.
//!
//! Politeness survives restarts: each host's gap, back-off and Retry-After are persisted as they
//! change and restored at start into the pool and the scheduler's host gates
//! ([`crate::politeness::saved`]). A one-pass run skips hosts closed for longer than the pass,
//! and says so ([`RunSummary::skipped_hosts`]).

mod admission;
mod checks;
mod context;
mod dedup_hook;
mod dedup_state;
mod discoveries;
mod discovery;
mod discovery_due;
mod evidence;
mod feeds;
mod fetching;
mod found_pages;
mod hand_over;
mod kinds;
mod lease_state;
mod leases;
mod ledger;
mod listings;
mod main_loop;
mod request;
mod robots_cache;
mod robots_rules;
mod sample_grid;
mod schedule_problems;
mod shared_discovery;
mod sitemap_kinds;
mod url_ids;
mod url_locks;
mod waits;
mod watch;

use main_loop::{ONCE_PATIENCE_MS, main_loop, save_budgets};
/// The largest sitemap or feed document read (`freshet inspect` reads the same).
pub use request::MAX_DOCUMENT_BYTES;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use tracing::{info, warn};

use crate::clock::{self, MS_PER_DAY, SharedClock};
use crate::politeness::Stop;
use crate::schedule;
use crate::scheduler::{PolicyKind, SchedulerConfig};
use crate::store::errors::ErrorRecord;
use crate::store::run_lock::RunLock;
use crate::store::urls::{UrlPages, UrlScope};
use crate::store::{Backend, Store};
use context::Context;
pub use context::Counters;
use lease_state::Leasing;
pub use lease_state::WorkerOptions;
use ledger::Ledger;
pub use schedule_problems::ScheduleProblems;
use schedule_problems::no_site_message;
pub use waits::CheckWaits;
pub use watch::{Watch, status_line};

/// Which revisit policy the refresher uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum PolicyChoice {
    /// Learned change rates, age-optimal plan.
    #[default]
    Learned,
    /// Uniform within each site's budget, sitemap changefreq as a hint (the baseline).
    Uniform,
}

impl PolicyChoice {
    /// The scheduler's policy.
    pub fn kind(self) -> PolicyKind {
        match self {
            PolicyChoice::Learned => PolicyKind::Learned,
            PolicyChoice::Uniform => PolicyKind::Uniform,
        }
    }

    /// The name stored with each run.
    pub fn name(self) -> &'static str {
        self.kind().name()
    }
}

/// Everything one refresher run needs.
#[derive(Clone)]
pub struct RunOptions {
    /// Schedule files or folders of them.
    pub schedules: Vec<PathBuf>,
    /// The database: a SQLite file or a postgres:// URL (created and migrated on first use).
    pub db_path: PathBuf,
    /// One full pass (discover, fetch everything due, exit) instead of running continuously.
    pub once: bool,
    /// The clock: system time, or a virtual clock for the demo and tests.
    pub clock: SharedClock,
    /// Host names mapped to loopback addresses (demo and tests); empty for the real web.
    pub resolve: Vec<(String, SocketAddr)>,
    /// The revisit policy.
    pub policy: PolicyChoice,
    /// With a postgres:// database, how this worker shares the hosts with other workers.
    pub worker: WorkerOptions,
    /// The run lock of a SQLite `db_path`, when the caller took it already (the demo holds it
    /// from clearing an earlier demo database to the end of its report); `None`: the run
    /// takes it ([`crate::store::run_lock::lock_for_run`]).
    pub run_lock: Option<Arc<RunLock>>,
}

/// What a run did, for progress lines and the demo's report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunSummary {
    /// Requests sent (all hosts, including robots.txt, sitemaps, feeds and redirect hops).
    pub requests: u64,
    /// Checks of pages recorded as observations.
    pub checks: u64,
    /// Checks that saw a change.
    pub changes: u64,
    /// Errors recorded.
    pub errors: u64,
    /// Page bodies whose main text was extracted (a body that is the copy's byte for byte is
    /// not extracted again).
    pub extractions: u64,
    /// Hosts a one-pass run left closed by back-off or Retry-After for longer than the pass:
    /// (politeness key, closed until Unix ms).
    pub skipped_hosts: Vec<(String, i64)>,
    /// What a one-pass run left due for a later pass: it could not be requested within the
    /// pass (the sites' budgets, or a host skipped above).
    pub left: Option<LeftDue>,
    /// Where the page checks waited (real time, for `freshet bench`).
    pub waits: CheckWaits,
    /// The schedule files skipped for their problems (nothing from them was applied).
    pub schedule_problems: ScheduleProblems,
    /// A one-pass run stopped by a signal before its pass was done.
    pub cut_short: bool,
    /// A worker among several that never held a host: the others held them all.
    pub held_no_host: bool,
}

/// URLs a one-pass run left due, and when the first of them could go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeftDue {
    /// How many.
    pub urls: u64,
    /// The earliest clock time (Unix ms) the scheduler would hand one out, if it knows one.
    pub next_at_ms: Option<i64>,
}

/// URL rows read at once when the scheduler is filled from the store (at start, after a
/// discovery): the rows of a million URLs would otherwise be held all at once beside it.
pub(crate) const ROWS_PER_READ: i64 = 10_000;
/// How long (real time) checks in flight get to finish after a shutdown is asked, before they are
/// aborted: the process must be gone within about two seconds whatever the hosts are doing.
pub const SHUTDOWN_GRACE: Duration = Duration::from_millis(800);
/// How often (clock time) every URL's planned rate and due time are written for the reports, and
/// every site's freshness is sampled.
const SAVE_PLANS_EVERY_MS: i64 = 15 * 60_000;
/// URLs whose plans one write stores ([`save_plans`]).
const PLANS_PER_WRITE: usize = 4_096;
/// The same while estimates are written with them: about 5 ms of posteriors under the
/// ledger's lock, which the checks' own updates wait for.
const ESTIMATES_PER_WRITE: usize = 512;

/// Runs the refresher until `shutdown` resolves (or one pass when `once`), committing as it goes.
/// `shutdown` is watched from the start, whatever the run is doing.
pub async fn run(
    options: RunOptions,
    shutdown: impl Future<Output = ()> + Send,
) -> anyhow::Result<RunSummary> {
    run_watched(options, Watch::default(), shutdown).await
}

/// [`run`], watched as `watch` asks: Prometheus metrics on a listener, a live status line.
pub async fn run_watched(
    options: RunOptions,
    watch: Watch,
    shutdown: impl Future<Output = ()> + Send,
) -> anyhow::Result<RunSummary> {
    let stop = Stop::new();
    let body = run_until_stopped(options, stop.clone(), watch);
    tokio::pin!(body, shutdown);
    let mut asked = false;
    loop {
        tokio::select! {
            result = &mut body => return result,
            () = &mut shutdown, if !asked => {
                asked = true;
                info!("shutting down: no new request; checks in flight finish or are cut short");
                stop.stop();
            }
        }
    }
}

/// [`run`] with the stop flag instead of the shutdown future.
async fn run_until_stopped(
    options: RunOptions,
    stop: Stop,
    watch: Watch,
) -> anyhow::Result<RunSummary> {
    let clock = options.clock.clone();
    let loaded = schedule::load(&options.schedules);
    if loaded.sites.is_empty()
        && let Ok(crate::store::Location::SqliteFile(path)) =
            crate::store::Location::parse(&options.db_path)
        && !path.exists()
    {
        // Nothing to run and no database yet: none is made only to hold the problems.
        anyhow::bail!("{}", no_site_message(&options, &loaded));
    }
    // Held to the end of the run: a second run on one SQLite file is refused.
    let _run_lock = match &options.run_lock {
        Some(held) => Some(Arc::clone(held)),
        None => crate::store::run_lock::lock_for_run(&options.db_path)?.map(Arc::new),
    };
    let store = Store::open(&options.db_path).await?;
    for error in &loaded.errors {
        warn!(%error, "schedule problem: nothing from this file is applied");
        let record = ErrorRecord {
            scope: "schedule",
            file: Some(error.file.display().to_string()),
            line: Some(error.line as i64),
            message: error.to_string(),
            ..Default::default()
        };
        store.record_error(clock.now_ms(), &record).await?;
    }
    for sentence in schedule::shared_host_notes(&loaded.sites) {
        info!("{sentence}");
    }
    for sentence in loaded
        .sites
        .iter()
        .flat_map(|site| site.stopped_for_good(clock.now()))
    {
        warn!("{sentence}");
        let record = ErrorRecord {
            scope: "schedule",
            message: sentence,
            ..Default::default()
        };
        store.record_error(clock.now_ms(), &record).await?;
    }
    if loaded.sites.is_empty() {
        store.close().await;
        anyhow::bail!("{}", no_site_message(&options, &loaded));
    }
    let schedule_problems = ScheduleProblems::of(&loaded.errors);
    let config = SchedulerConfig {
        policy: options.policy.kind(),
        // One pass may spend up to a day's budget at once, and takes only what is due.
        fetch_ahead: !options.once,
        bucket_span_ms: if options.once {
            MS_PER_DAY
        } else {
            SchedulerConfig::default().bucket_span_ms
        },
        ..SchedulerConfig::default()
    };
    // Several workers may share a PostgreSQL database: each contacts only the hosts it leases.
    let longest_request = loaded
        .sites
        .iter()
        .map(|s| s.timeout)
        .max()
        .unwrap_or_default();
    let leasing = (store.backend() == Backend::Postgres)
        .then(|| Leasing::new(&options.worker, longest_request, clock.speed()));
    let held = leasing.as_ref().map(|l| l.held.clone());
    // Sites in none of the files are unscheduled (their URLs go to the sites that name them
    // again: a rename); with a file skipped, nobody can tell a site removed from one unread.
    let every_file_read = loaded.errors.is_empty();
    let ctx = Arc::new(
        Context::new(
            store.clone(),
            clock.clone(),
            loaded.sites,
            &options,
            Ledger::new(config).with_held_hosts(held),
            stop,
            leasing,
        )
        .await
        .context("starting the refresher")?,
    );
    if every_file_read {
        let scheduled: Vec<i64> = ctx.sites.iter().map(|s| s.id).collect();
        store
            .mark_unscheduled_sites(&scheduled, clock.now_ms())
            .await?;
    }
    // A URL the schedule names as a feed or a sitemap is read as one, whatever named it
    // first; before the scheduler is filled, so that it is planned so.
    let no_longer_pages = kinds::declare(&store, &ctx.sites, clock.now_ms()).await?;
    dedup_hook::forget(&ctx, &no_longer_pages).await;
    // Politeness as the last run left it, before any request and before the scheduler's hosts;
    // every known host at the strictest rate of the sites on it.
    ctx.pool.restore(&store.load_politeness().await?);
    robots_rules::configure_known_hosts(&ctx).await?;
    // The scheduler as the last run left it (a database from before folded evidence was kept
    // has it folded from its observations, once).
    let stored = store.count_schedulable().await?;
    ctx.ledger
        .reserve_urls(usize::try_from(stored).unwrap_or(0));
    let mut pages = UrlPages::new(UrlScope::Schedulable, ROWS_PER_READ);
    while let Some(mut rows) = pages.next(&store).await? {
        if let (Some(leasing), Some(last)) = (&ctx.leasing, rows.last()) {
            // Other workers' new URLs are read from here on.
            leasing.saw_url_ids(last.id);
        }
        for row in rows
            .iter_mut()
            .filter(|r| r.stats.is_none() && r.checks > 0)
        {
            let stats = evidence::fold_history(&store, row.id, clock.now_ms()).await?;
            row.stats = serde_json::to_string(&stats).ok();
        }
        ctx.sync_rows(&rows);
    }
    for (host_id, json) in store.host_trust().await? {
        if let Ok(trust) = serde_json::from_str::<ledger::StoredTrust>(&json) {
            ctx.ledger.set_trust(host_id, trust);
        }
    }
    if let Some(leasing) = &ctx.leasing {
        // The hosts held decide which sites' discovery is due at the start (Discoveries::new).
        leases::round(&ctx, leasing, false).await?;
    }
    let run_id = store
        .start_run(clock.now_ms(), options.policy.name(), clock.speed())
        .await?;
    let watching = watch::start(&ctx, watch);
    let result = main_loop(&ctx, options.once).await;
    drop(watching);
    let mut skipped_hosts = Vec::new();
    if options.once {
        skipped_hosts = ctx.pool.closed_hosts(clock.now_ms() + ONCE_PATIENCE_MS);
        for (host, until) in &skipped_hosts {
            warn!(
                host = %host,
                until = %clock::ms_to_rfc3339(*until),
                "host skipped: closed (back-off or Retry-After) for longer than the pass"
            );
        }
    }
    // The dedup engine saves in batches when it is large: write what is still pending.
    if let Err(error) = dedup_hook::flush(&ctx).await {
        warn!(error = %error, "the dedup engine's last changes could not be saved");
    }
    // The samples of the instants passed since the loop last stored them.
    if !store_samples(&ctx).await
        && let Err(error) = save_plans(&ctx).await
    {
        warn!(error = %error, "the last plan could not be saved");
    }
    let left = result.as_ref().ok().copied().flatten();
    let summary = RunSummary {
        skipped_hosts,
        left,
        schedule_problems,
        cut_short: options.once && ctx.is_stopping(),
        // (A worker alone that knows no host yet held none either, and is not told so.)
        held_no_host: ctx.leasing.as_ref().is_some_and(|l| !l.held.ever_held())
            && !ctx.ledger.politeness_keys().is_empty(),
        // Counted as they go, not as they are answered: a request a shutdown cut short was
        // seen by its server too.
        requests: ctx.pool.requests_sent(),
        ..ctx.counters.summary()
    };
    // The run's row failing to update still lets the journal's last writes and the leases'
    // release go through the store before it closes; the error is returned after.
    let recorded = store
        .update_run(run_id, Some(clock.now_ms()), summary_counts(&summary))
        .await;
    ctx.pool.flush().await;
    if let Some(leasing) = &ctx.leasing {
        // What this worker's buckets hold goes back to the sites' pools for the others.
        leases::exchange_budget_pools(&ctx, ctx.ledger.take_budgets(clock.now_ms())).await;
        if let Err(error) = store.release_all_leases(&leasing.worker).await {
            warn!(error = %error, "the leases could not be given back: they expire on their own");
        }
    }
    store.close().await;
    recorded?;
    result.map(|_| summary)
}

/// Stores the samples the ledger judged at the grid's instants passed since the last call
/// (none: nothing to do), with the plans for the reports. With several workers each sample is
/// this worker's part of its site's, added up in the store. Priors fitted since the last save
/// (a young site's population) move estimates the reports read: they are saved at once too,
/// not at the next sample. Whether the plans were saved.
async fn store_samples(ctx: &Context) -> bool {
    let samples = ctx.ledger.take_samples();
    if samples.is_empty() && !ctx.ledger.estimates_outdated() {
        return false;
    }
    if let Err(error) = save_plans(ctx).await {
        warn!(error = %error, "the plan could not be saved for the reports");
    }
    if !samples.is_empty() {
        let add_up = ctx.leasing.is_some();
        if let Err(error) = ctx.store.add_freshness_samples(&samples, add_up).await {
            warn!(error = %error, "the freshness samples could not be saved");
        }
    }
    true
}

/// Stores every URL's planned rate and due time for the reports, [`PLANS_PER_WRITE`] URLs at a
/// time: a copy of every URL's plan at once was a tenth of the peak memory of a restart, and
/// one transaction over a million URLs held up the checks' commits for seconds. The estimates
/// of pages whose site's priors were fitted again after their last check go with them
/// ([`Ledger::outdated_estimates`]), [`ESTIMATES_PER_WRITE`] URLs at a time (each a posterior
/// computed under the ledger's lock); after a failed save they wait for the next regular one.
async fn save_plans(ctx: &Context) -> sqlx::Result<()> {
    let outdated = ctx.ledger.outdated_estimates();
    let per_write = if outdated.is_empty() {
        PLANS_PER_WRITE
    } else {
        ESTIMATES_PER_WRITE
    };
    let mut start = 0;
    while start < ctx.ledger.url_count() {
        let end = start + per_write;
        // (Not stamped as taken, `PlanUpdate::taken_ms`: a worker whose lease ran out before
        // its round noticed saves plans that are no longer its, and a stamp would keep them
        // over the new holder's checks until its own save.)
        if let Err(error) = ctx.store.save_plan(ctx.ledger.plans(start..end)).await {
            ctx.ledger.estimates_save_failed(&outdated);
            return Err(error);
        }
        start = end;
    }
    ctx.ledger.estimates_saved(&outdated);
    Ok(())
}

fn summary_counts(summary: &RunSummary) -> [i64; 4] {
    [
        summary.requests,
        summary.checks,
        summary.changes,
        summary.errors,
    ]
    .map(|n| n as i64)
}
