//! The refresher: the daemon behind `freshet run` and `freshet demo`.
//!
//! One loop, one direction: load the schedules; for each site whose `rediscover` time has come,
//! read robots.txt, sitemaps and feeds into the `urls` table ([`discovery`]); re-plan the site's
//! revisit rates ([`planning`]); then hand the URLs that are due to one task per host
//! ([`checks`]), which fetches them politely, most age-reducing first, and records each check.
//!
//! The frontier is the `urls` table itself: `next_due_ms` is indexed, and each pass reads the
//! earliest due URLs of every host that has no task running (a Mercator-style per-host queue,
//! rebuilt from the summary rows rather than kept in memory, so a kill loses nothing that was
//! committed and a restart resumes where it stopped). Hosts are independent: a slow or
//! backed-off host never holds the others up.
//!
//! Shutdown: when the shutdown future resolves, no new check starts; checks in flight finish and
//! are committed; then the pool is closed (checkpointing the WAL).

mod checks;
mod context;
mod dedup_hook;
mod discovery;
mod evidence;
mod planning;
mod robots_cache;

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Context as _;
use tokio::task::JoinSet;
use tracing::{info, warn};

use crate::clock::{self, SharedClock};
use crate::schedule;
use crate::store::Store;
use crate::store::errors::ErrorRecord;
use context::Context;
pub use context::Counters;

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
    /// The name stored with each run.
    pub fn name(self) -> &'static str {
        match self {
            PolicyChoice::Learned => "learned",
            PolicyChoice::Uniform => "uniform",
        }
    }
}

/// Everything one refresher run needs.
pub struct RunOptions {
    /// Schedule files or folders of them.
    pub schedules: Vec<PathBuf>,
    /// The SQLite database file (created and migrated on first use).
    pub db_path: PathBuf,
    /// One full pass (discover, fetch everything due, exit) instead of running continuously.
    pub once: bool,
    /// The clock: system time, or a virtual clock for the demo and tests.
    pub clock: SharedClock,
    /// Host names mapped to loopback addresses (demo and tests); empty for the real web.
    pub resolve: Vec<(String, SocketAddr)>,
    /// The revisit policy.
    pub policy: PolicyChoice,
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
}

/// How many due URLs of one host a task takes at a time.
const URLS_PER_HOST_TASK: i64 = 32;
/// How many hosts are worked on at once.
const MAX_HOST_TASKS: usize = 64;
/// The longest the loop sleeps before looking again (clock time).
const MAX_IDLE: Duration = Duration::from_secs(300);
/// How often (clock time) every site is re-planned from scratch; in between, each check
/// updates its own URL's rate incrementally.
const REPLAN_EVERY: Duration = Duration::from_secs(3600);

/// Runs the refresher until `shutdown` resolves (or one pass when `once`), committing as it goes.
pub async fn run(
    options: RunOptions,
    shutdown: impl Future<Output = ()> + Send,
) -> anyhow::Result<RunSummary> {
    let clock = options.clock.clone();
    let loaded = schedule::load(&options.schedules);
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
    if loaded.sites.is_empty() {
        store.close().await;
        anyhow::bail!(
            "no valid site in {} ({} schedule problems; `freshet check` lists them)",
            options
                .schedules
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            loaded.errors.len()
        );
    }
    let ctx = Arc::new(
        Context::new(store.clone(), clock.clone(), loaded.sites, &options)
            .await
            .context("starting the refresher")?,
    );
    let run_id = store
        .start_run(clock.now_ms(), options.policy.name(), clock.speed())
        .await?;
    let result = main_loop(&ctx, options.once, shutdown).await;
    // The dedup engine saves in batches when it is large: write what is still pending.
    if let Err(error) = dedup_hook::flush(&ctx).await {
        warn!(error = %error, "the dedup engine's last changes could not be saved");
    }
    let summary = ctx.counters.summary();
    store
        .update_run(run_id, Some(clock.now_ms()), summary_counts(&summary))
        .await?;
    store.close().await;
    result.map(|()| summary)
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

async fn main_loop(
    ctx: &Arc<Context>,
    once: bool,
    shutdown: impl Future<Output = ()> + Send,
) -> anyhow::Result<()> {
    tokio::pin!(shutdown);
    let mut tasks: JoinSet<()> = JoinSet::new();
    // Which host each running task works on, so a finished (or panicked) task frees its host.
    let mut task_hosts: HashMap<tokio::task::Id, i64> = HashMap::new();
    let mut last_full_plan_ms = i64::MIN;
    // With --once, only what is due by the end of the first discovery is fetched.
    let mut once_cutoff: Option<i64> = None;
    loop {
        let now = ctx.clock.now_ms();
        let discovered = discovery::discover_due_sites(ctx, now, &ctx.stopping).await?;
        if discovered || now.saturating_sub(last_full_plan_ms) >= REPLAN_EVERY.as_millis() as i64 {
            planning::replan_all(ctx).await?;
            last_full_plan_ms = ctx.clock.now_ms();
        }
        let cutoff = if once {
            *once_cutoff.get_or_insert(ctx.clock.now_ms())
        } else {
            ctx.clock.now_ms()
        };
        if !ctx.stopping.load(Ordering::Relaxed) {
            let due = ctx
                .store
                .due_urls_by_host(cutoff, URLS_PER_HOST_TASK)
                .await?;
            let busy: HashSet<i64> = task_hosts.values().copied().collect();
            for (host_id, rows) in due {
                if busy.contains(&host_id) {
                    continue;
                }
                if task_hosts.len() >= MAX_HOST_TASKS {
                    break;
                }
                let ctx = Arc::clone(ctx);
                let handle = tasks.spawn(async move { checks::check_host_urls(&ctx, rows).await });
                task_hosts.insert(handle.id(), host_id);
            }
        }
        if once && tasks.is_empty() {
            info!("one pass done");
            return Ok(());
        }
        if ctx.stopping.load(Ordering::Relaxed) && tasks.is_empty() {
            return Ok(());
        }
        let wake_at = next_wake(ctx, once).await?;
        tokio::select! {
            () = &mut shutdown, if !ctx.stopping.load(Ordering::Relaxed) => {
                info!(in_flight = tasks.len(), "shutting down: finishing checks in flight");
                ctx.stopping.store(true, Ordering::Relaxed);
            }
            Some(done) = tasks.join_next_with_id(), if !tasks.is_empty() => {
                let id = match done {
                    Ok((id, ())) => id,
                    Err(err) => {
                        // A failed host task must not take the daemon down: its host is freed
                        // and its URLs stay due.
                        warn!(error = %err, "a host task failed");
                        err.id()
                    }
                };
                task_hosts.remove(&id);
            }
            () = clock::sleep_until(ctx.clock.as_ref(), wake_at) => {}
        }
    }
}

/// When the loop should look again: the earliest due URL or discovery, capped at [`MAX_IDLE`].
async fn next_wake(ctx: &Context, once: bool) -> anyhow::Result<i64> {
    let now = ctx.clock.now_ms();
    if once {
        return Ok(now + MAX_IDLE.as_millis() as i64);
    }
    let mut wake = now + MAX_IDLE.as_millis() as i64;
    if let Some(due) = ctx.store.earliest_due().await? {
        wake = wake.min(due);
    }
    if let Some(discovery) = ctx.next_discovery_ms() {
        wake = wake.min(discovery);
    }
    Ok(wake.max(now + 1))
}
