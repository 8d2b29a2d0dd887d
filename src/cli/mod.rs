//! The command-line interface: argument structs and dispatch. Each command lives in its own file
//! with its own `Args` struct and a `run` function returning the process exit code.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub mod bench;
pub mod bench_dedup;
pub mod bench_figures;
pub mod bench_plan;
pub mod bench_run;
pub mod bench_scheduler;
pub mod bench_sitemap;
pub mod bench_web;
pub mod check;
pub mod demo;
mod demo_args;
pub mod explain;
mod explain_wait;
pub mod export;
pub mod inspect;
pub mod inspect_duplicates;
pub mod inspect_fetch;
pub mod inspect_page;
pub mod inspect_source;
pub mod migrate;
pub mod output;
pub mod plan;
pub mod report;
pub mod run;
pub mod simulate;

/// freshet keeps local copies of websites fresh.
#[derive(Debug, Parser)]
#[command(name = "freshet", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate schedule files (default: schedules/).
    Check(check::Args),
    /// Run the refresher: continuously, or one pass with --once.
    Run(run::Args),
    /// Print reports from the database.
    #[command(subcommand)]
    Report(report::Command),
    /// Show how freshet reads one robots.txt, sitemap, feed, or set of pages.
    #[command(subcommand)]
    Inspect(inspect::Command),
    /// Compute revisit rates for given change rates and a budget.
    Plan(plan::Args),
    /// Compare revisit policies in a deterministic simulated web.
    Simulate(simulate::Args),
    /// Run the real refresher against a synthetic web on loopback.
    Demo(demo::Args),
    /// Everything freshet knows about one URL.
    Explain(explain::Args),
    /// Export stored documents.
    #[command(subcommand)]
    Export(export::Command),
    /// Copy a database into a new one: a SQLite file into PostgreSQL, say.
    Migrate(migrate::Args),
    /// Benchmarks to size a deployment by: the planner, the sitemap reader, the dedup engine.
    Bench(bench::Args),
}

/// Runs the parsed command line and returns the exit code.
/// `shutdown` ([`run::shutdown_signal`], installed by `main` before anything else) resolves to
/// the signal's number; it stops `run` cleanly and ends any other command at once with the
/// shell's `128 + signal` code.
pub async fn dispatch(
    cli: Cli,
    shutdown: impl Future<Output = i32> + Send + 'static,
) -> anyhow::Result<ExitCode> {
    let shutdown = match cli.command {
        Command::Run(_) => Some(shutdown),
        _ => {
            tokio::spawn(async move {
                let signal = shutdown.await;
                std::process::exit(128 + signal);
            });
            None
        }
    };
    let code = match cli.command {
        Command::Check(args) => check::run(args).await?,
        Command::Run(args) => run::run(args, shutdown.expect("kept for run")).await?,
        Command::Report(cmd) => report::run(cmd).await?,
        Command::Inspect(cmd) => inspect::run(cmd).await?,
        Command::Plan(args) => plan::run(args).await?,
        Command::Simulate(args) => simulate::run(args).await?,
        Command::Demo(args) => demo::run(args).await?,
        Command::Explain(args) => explain::run(args).await?,
        Command::Export(cmd) => export::run(cmd).await?,
        Command::Migrate(args) => migrate::run(args).await?,
        Command::Bench(args) => bench::run(args).await?,
    };
    Ok(ExitCode::from(code))
}
