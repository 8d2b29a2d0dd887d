//! `freshet run`: the refresher, continuously (Ctrl-C / SIGTERM finish the checks in flight,
//! commit and exit 0) or one full pass with `--once`.

use std::path::PathBuf;
use std::sync::Arc;

use crate::clock::SystemClock;
use crate::refresher::{self, PolicyChoice, RunOptions};

/// Arguments of `freshet run`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Schedule files or folders of them.
    #[arg(long, default_value = "schedules")]
    pub schedules: Vec<PathBuf>,
    /// The database file (created and migrated on first use).
    #[arg(long, default_value = "freshet.db")]
    pub db: PathBuf,
    /// One full pass (discover, fetch everything due, exit) instead of running continuously.
    #[arg(long)]
    pub once: bool,
    /// How revisit rates are chosen.
    #[arg(long, value_enum, default_value_t = PolicyChoice::Learned)]
    pub policy: PolicyChoice,
}

/// Runs `freshet run`; returns the exit code.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let options = RunOptions {
        schedules: args.schedules,
        db_path: args.db.clone(),
        once: args.once,
        clock: Arc::new(SystemClock),
        resolve: Vec::new(),
        policy: args.policy,
    };
    let summary = refresher::run(options, shutdown_signal()).await?;
    eprintln!(
        "freshet: {} requests, {} checks, {} changes seen, {} errors; database {}",
        summary.requests,
        summary.checks,
        summary.changes,
        summary.errors,
        args.db.display()
    );
    Ok(0)
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
