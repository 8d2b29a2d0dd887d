//! `freshet plan`: revisit rates for given change rates and a budget, with their mean age and
//! freshness (a window onto [`crate::plan`]).

use std::path::PathBuf;

use anyhow::{Context, bail};

use crate::plan::{self, Limits, Objective, PlanPage, Policy};

/// Arguments of `freshet plan`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Change rates per day, comma-separated (e.g. `1,2,3,4,5`).
    // Hyphen values: `-1,2` is no number to clap, and would be read as a flag, not refused as
    // a negative rate.
    #[arg(
        long,
        allow_hyphen_values = true,
        value_delimiter = ',',
        required_unless_present = "rates_file"
    )]
    pub rates: Vec<f64>,
    /// A file with one rate per line, optionally `rate,host` (blank lines and `#` comments skipped).
    #[arg(long, conflicts_with = "rates")]
    pub rates_file: Option<PathBuf>,
    /// Visits per day in total.
    #[arg(long, allow_negative_numbers = true)]
    pub budget: f64,
    /// Visits per day allowed per host.
    #[arg(long, allow_negative_numbers = true)]
    pub host_limit: Option<f64>,
    /// What to optimise.
    #[arg(long, value_enum, default_value = "age")]
    pub objective: ObjectiveArg,
    /// The policy: the optimum, or a baseline.
    #[arg(long, value_enum, default_value = "optimal")]
    pub policy: PolicyArg,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// `--objective`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ObjectiveArg {
    /// Minimise time-averaged age.
    Age,
    /// Maximise freshness.
    Freshness,
}

/// `--policy`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum PolicyArg {
    /// The optimum of the objective.
    Optimal,
    /// The same rate for every page.
    Uniform,
    /// Rates proportional to change rates.
    Proportional,
}

/// Reads `rate[,host]` lines; host names are numbered in order of first appearance.
fn read_rates_file(path: &PathBuf) -> anyhow::Result<Vec<(f64, String)>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut out = Vec::new();
    for (no, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (rate, host) = match line.split_once(',') {
            Some((r, h)) => (r.trim(), h.trim().to_string()),
            None => (line, String::new()),
        };
        let rate: f64 = rate.parse().with_context(|| {
            format!(
                "{}:{}: `{rate}` is not a rate per day",
                path.display(),
                no + 1
            )
        })?;
        out.push((rate, host));
    }
    Ok(out)
}

/// Runs `freshet plan`; returns the exit code.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let rows: Vec<(f64, String)> = match &args.rates_file {
        Some(path) => read_rates_file(path)?,
        None => args.rates.iter().map(|&r| (r, String::new())).collect(),
    };
    if let Some(bad) = rows.iter().find(|(r, _)| !(r.is_finite() && *r >= 0.0)) {
        bail!("rates must be finite and non-negative, got {}", bad.0);
    }
    if !(args.budget.is_finite() && args.budget >= 0.0) {
        bail!("--budget must be a non-negative number of visits per day");
    }
    let mut hosts: Vec<String> = Vec::new();
    let pages: Vec<PlanPage> = rows
        .iter()
        .map(|(rate, host)| {
            let index = hosts.iter().position(|h| h == host).unwrap_or_else(|| {
                hosts.push(host.clone());
                hosts.len() - 1
            });
            PlanPage {
                rate_per_day: *rate,
                weight: 1.0,
                host: index,
                max_visits_per_day: f64::INFINITY,
            }
        })
        .collect();
    let host_limit = args.host_limit.unwrap_or(f64::INFINITY);
    let limits = Limits {
        budget_per_day: args.budget,
        host_limits_per_day: vec![host_limit; hosts.len()],
    };
    let objective = match args.objective {
        ObjectiveArg::Age => Objective::Age,
        ObjectiveArg::Freshness => Objective::Freshness,
    };
    let policy = match args.policy {
        PolicyArg::Optimal => Policy::AgeOptimal,
        PolicyArg::Uniform => Policy::Uniform,
        PolicyArg::Proportional => Policy::Proportional,
    };
    let rates = plan::solve(policy, &pages, &limits, objective);
    let (age, fresh) = plan::mean_age_and_freshness(&pages, &rates);
    if args.json {
        let out = serde_json::json!({
            "rates_per_day": rates,
            "mean_age_days": age,
            "mean_freshness": fresh,
        });
        crate::outln!("{out}");
        return Ok(0);
    }
    crate::outln!(
        "{:>12} {:>14} {:>12} {:>10}  host",
        "change/day",
        "visits/day",
        "age (days)",
        "freshness"
    );
    for ((page, &f), (_, host)) in pages.iter().zip(&rates).zip(&rows) {
        let interval = if f > 0.0 { 1.0 / f } else { f64::INFINITY };
        crate::outln!(
            "{:>12.4} {:>14.4} {:>12.4} {:>10.4}  {}",
            page.rate_per_day,
            f,
            plan::time_averaged_age(page.rate_per_day, interval),
            plan::freshness(page.rate_per_day, interval),
            host
        );
    }
    crate::outln!(
        "visits/day used: {:.4} of {}",
        rates.iter().sum::<f64>(),
        args.budget
    );
    crate::outln!("mean age: {age:.4} days   mean freshness: {fresh:.4}");
    Ok(0)
}
