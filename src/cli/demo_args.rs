//! The arguments of `freshet demo`, and the bounds a demo can run within.

use std::path::PathBuf;

use crate::schedule::ChangeSignal;

/// Arguments of `freshet demo`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Real seconds to run for.
    #[arg(long, allow_negative_numbers = true, default_value_t = 60.0)]
    pub duration: f64,
    /// Virtual seconds per real second (14400: four virtual hours per second, so the default
    /// minute is ten virtual days: the first pass over the web alone takes half a day of the
    /// budget, and learning needs days of checks after it).
    #[arg(long, allow_negative_numbers = true, default_value_t = 14400.0)]
    pub speed: f64,
    /// The database file, kept afterwards for `freshet report`, `freshet explain` and
    /// `sqlite3`; an earlier demo database there is replaced. The schedule file is written next
    /// to it, in a folder named after it (`freshet-demo-schedules/` beside `freshet-demo.db`).
    #[arg(long, default_value = "freshet-demo.db")]
    pub db: PathBuf,
    /// Seed of the synthetic world.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Budget: visits per page per day, on average, per site.
    #[arg(long, allow_negative_numbers = true, default_value_t = 2.0)]
    pub budget: f64,
    /// Multiplies the number of pages (1.0 = 136 pages on 5 sites, plus a mirror).
    #[arg(long, allow_negative_numbers = true, default_value_t = 1.0)]
    pub scale: f64,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Which changes the refresher learns the rates of: `content` (of the main text; noise
    /// such as ads, counters and tokens does not count) or `bytes` (any change of the body).
    #[arg(long, default_value = "content", value_parser = parse_change_signal)]
    pub change_signal: ChangeSignal,
    /// Refreshers run side by side on one PostgreSQL database (`--db postgres://...`), leasing
    /// the hosts and sharing each site's budget as `freshet run` workers do.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
}

/// The longest `--duration`, real seconds: a week (1e20 s panicked converting it).
const MAX_DURATION_S: f64 = 7.0 * 86_400.0;
/// The fastest `--speed`, virtual seconds per real second (1e300 ran on a clock past any date
/// and judged nothing).
const MAX_SPEED: f64 = 1e7;
/// The most virtual days a demo may span: every page's changes are drawn for the whole run
/// before it starts (ten years of the default world are about 2 million change times).
const MAX_VIRTUAL_DAYS: f64 = 3_650.0;

/// `--change-signal`: `content` or `bytes`.
fn parse_change_signal(text: &str) -> Result<ChangeSignal, String> {
    match text.to_ascii_lowercase().as_str() {
        "content" => Ok(ChangeSignal::Content),
        "bytes" => Ok(ChangeSignal::Bytes),
        _ => Err(format!("`{text}`: expected \"content\" or \"bytes\"")),
    }
}

impl Args {
    /// Refuses what the demo cannot run, naming the option, before anything is touched.
    pub fn check(&self) -> anyhow::Result<()> {
        let args = self;
        anyhow::ensure!(
            args.duration.is_finite() && args.duration > 0.0 && args.duration <= MAX_DURATION_S,
            "--duration must be a positive number of seconds up to {MAX_DURATION_S} (a week), not {:?}",
            args.duration
        );
        anyhow::ensure!(
            args.speed.is_finite() && args.speed > 0.0 && args.speed <= MAX_SPEED,
            "--speed must be a positive number of virtual seconds per real second up to \
             {MAX_SPEED}, not {:?}",
            args.speed
        );
        let virtual_days = args.duration * args.speed / 86_400.0;
        anyhow::ensure!(
            virtual_days <= MAX_VIRTUAL_DAYS,
            "--duration {} at --speed {} spans {virtual_days:.0} virtual days: the world's changes \
             are drawn for the whole run, so at most {MAX_VIRTUAL_DAYS} (shorten --duration or \
             lower --speed)",
            args.duration,
            args.speed
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
        anyhow::ensure!(
            (1..=16).contains(&args.workers),
            "--workers must be from 1 to 16, not {}",
            args.workers
        );
        Ok(())
    }
}
