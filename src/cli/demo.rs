//! `freshet demo`: a living synthetic web on loopback, refreshed by the real refresher on a
//! virtual clock, then judged against the truth: the true mean age of freshet's copies next to
//! what a uniform schedule with the same requests would have had in the same world.

use std::path::PathBuf;
use std::time::Duration;

use crate::demo::session::{SessionOptions, run_session};

/// Arguments of `freshet demo`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Real seconds to run for.
    #[arg(long, default_value_t = 60.0)]
    pub duration: f64,
    /// Virtual seconds per real second (3600: one virtual hour per second).
    #[arg(long, default_value_t = 3600.0)]
    pub speed: f64,
    /// The database file (default: a fresh one in a temporary folder). The schedule file is
    /// written next to it, in `freshet-demo-schedules/`.
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Seed of the synthetic world.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Budget: visits per page per day, on average, per site.
    #[arg(long, default_value_t = 2.0)]
    pub budget: f64,
    /// Multiplies the number of pages (1.0 = 120 pages on 4 sites, plus a mirror).
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `freshet demo`; returns the exit code (1 when a robots.txt Disallow was not obeyed).
pub async fn run(args: Args) -> anyhow::Result<u8> {
    anyhow::ensure!(
        args.duration.is_finite() && args.duration > 0.0,
        "--duration must be a positive number of seconds, not {}",
        args.duration
    );
    anyhow::ensure!(
        args.budget.is_finite() && args.budget > 0.0,
        "--budget must be a positive number of visits per page per day, not {}",
        args.budget
    );
    anyhow::ensure!(
        args.scale.is_finite() && args.scale > 0.0 && args.scale <= 100.0,
        "--scale must be in (0, 100], not {}",
        args.scale
    );
    let options = SessionOptions {
        seed: args.seed,
        scale: args.scale,
        duration: Duration::from_secs_f64(args.duration),
        speed: args.speed,
        visits_per_page_per_day: args.budget,
        db_path: args.db,
        progress: true,
    };
    let result = run_session(&options, crate::refresher::run).await?;
    // freshet's own estimate of its mean age and its learned rates live in the database; the
    // store's report API fills `outcome.freshet.estimated_mean_age_days` and
    // `outcome.compare_learned(..)` here once it exists.
    let outcome = result.outcome;
    if args.json {
        let report = serde_json::json!({
            "freshet": outcome.freshet,
            "uniform": outcome.uniform,
            "days": outcome.days,
            "sites": outcome.sites,
            "rates": outcome.rates,
            "politeness": outcome.politeness,
            "run": {
                "requests": result.summary.requests,
                "checks": result.summary.checks,
                "changes": result.summary.changes,
                "errors": result.summary.errors,
            },
            "db": result.db_path,
            "schedule": result.schedule_path,
        });
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", outcome.to_table());
        println!(
            "  database {}, schedule {}",
            result.db_path.display(),
            result.schedule_path.display()
        );
    }
    Ok(u8::from(outcome.politeness.disallowed_requests > 0))
}
