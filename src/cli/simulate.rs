//! `freshet simulate`: compare revisit policies in a deterministic simulated web
//! (see [`crate::simulate`] for the world and the policies).

use std::time::Instant;

use anyhow::bail;

use crate::simulate::{self, FeedEntries, POLICIES, SimConfig, WorldConfig};

/// Arguments of `freshet simulate`. Defaults describe a web like the one crawl studies report:
/// log-normal change rates (median one change per 5 days, σ = 1.5), skewed hosts, half the hosts
/// with an honest Last-Modified, noisy sitemap changefreq hints.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Number of pages.
    #[arg(long, default_value_t = 20_000)]
    pub pages: usize,
    /// Number of hosts.
    #[arg(long, default_value_t = 100)]
    pub hosts: usize,
    /// Simulated days.
    #[arg(long, allow_negative_numbers = true, default_value_t = 90.0)]
    pub days: f64,
    /// Visits per page per day on average (the total budget is this × pages).
    #[arg(long, allow_negative_numbers = true, default_value_t = 0.5)]
    pub budget: f64,
    /// Seed of the world and the policies.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Fraction of pages announced in their host's feed (each feed lists its last 20 changes, or
    /// with `--feed-entries latest-change` the last 20 pages that changed).
    #[arg(long, allow_negative_numbers = true, default_value_t = 0.0)]
    pub signals: f64,
    /// What a feed lists: every change of its pages, each page once at its latest change (as
    /// most real feeds do), or those pages each dated with the poll's time (a feed that
    /// re-dates its entries: announcements of changes that never came).
    #[arg(long, value_enum, default_value_t = FeedEntries::EveryChange)]
    pub feed_entries: FeedEntries,
    /// Days before measuring starts (default: a third of the run, at most 30).
    #[arg(long, allow_negative_numbers = true)]
    pub warmup: Option<f64>,
    /// Median change rate per day.
    #[arg(long, allow_negative_numbers = true, default_value_t = 0.2)]
    pub median_rate: f64,
    /// Spread of ln(change rate).
    #[arg(long, allow_negative_numbers = true, default_value_t = 1.5)]
    pub rate_sigma: f64,
    /// Only these policies, comma-separated (oracle, oracle-signals, freshet, uniform,
    /// proportional, changefreq, nutch); all by default (oracle-signals, the oracle reading the
    /// feeds as freshet does, only with --signals).
    #[arg(long, value_delimiter = ',')]
    pub policies: Vec<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Runs `freshet simulate`; returns the exit code.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    if args.pages == 0 || args.hosts == 0 {
        bail!("--pages and --hosts must be at least 1");
    }
    if !(args.days > 0.0 && args.days.is_finite() && args.budget > 0.0 && args.budget.is_finite()) {
        bail!("--days and --budget must be positive numbers");
    }
    if !(0.0..=1.0).contains(&args.signals) {
        bail!("--signals must be a fraction between 0 and 1");
    }
    if !(args.median_rate > 0.0 && args.rate_sigma >= 0.0) {
        bail!("--median-rate must be positive and --rate-sigma non-negative");
    }
    if let Some(unknown) = args
        .policies
        .iter()
        .find(|p| !POLICIES.iter().any(|(name, _)| name == p))
    {
        let names: Vec<&str> = POLICIES.iter().map(|(name, _)| *name).collect();
        bail!(
            "--policies: no policy named {unknown:?} (there are {})",
            names.join(", ")
        );
    }
    let config = SimConfig {
        world: WorldConfig {
            pages: args.pages,
            hosts: args.hosts,
            days: args.days,
            budget: args.budget,
            signals: args.signals,
            feed_entries: args.feed_entries,
            median_rate: args.median_rate,
            rate_sigma: args.rate_sigma,
            seed: args.seed,
            ..WorldConfig::default()
        },
        warmup_days: args
            .warmup
            .unwrap_or_else(|| SimConfig::default_warmup(args.days)),
        policies: args.policies.clone(),
    };
    let started = Instant::now();
    let report = tokio::task::spawn_blocking(move || simulate::run(&config)).await?;
    if args.json {
        crate::outln!("{}", serde_json::to_string(&report)?);
        return Ok(0);
    }
    let warmup = args
        .warmup
        .unwrap_or_else(|| SimConfig::default_warmup(args.days));
    crate::outln!(
        "{} pages, {} hosts, {} days (measured after {warmup} days), budget {} visits/page/day, signals {}{}",
        args.pages,
        args.hosts,
        args.days,
        args.budget,
        args.signals,
        match (args.signals > 0.0, args.feed_entries) {
            (true, FeedEntries::LatestChange) => " (feeds list each page's latest change)",
            (true, FeedEntries::Redated) => " (feeds date each entry with the poll's time)",
            _ => "",
        }
    );
    let oracle = report.policies.get("oracle").map(|r| r.mean_age_days);
    crate::outln!(
        "{:<14} {:>14} {:>10} {:>10} {:>12} {:>12}",
        "policy",
        "mean age (d)",
        "vs oracle",
        "freshness",
        "page fetches",
        "requests"
    );
    for (name, _) in POLICIES {
        let Some(r) = report.policies.get(name) else {
            continue;
        };
        let vs_oracle = oracle.map_or("-".to_string(), |oracle| {
            format!("{:.1}%", 100.0 * (r.mean_age_days / oracle - 1.0))
        });
        crate::outln!(
            "{:<14} {:>14.4} {:>10} {:>10.4} {:>12} {:>12}",
            name,
            r.mean_age_days,
            vs_oracle,
            r.freshness,
            r.fetches,
            r.requests
        );
    }
    crate::outln!(
        "{:<14} {:>14} {:>14} {:>10} {:>12} {:>12}",
        "staleness",
        "est. age (d)",
        "true age (d)",
        "est/true",
        "mean p_stale",
        "stale share"
    );
    for (name, _) in POLICIES {
        let Some(s) = report.policies.get(name).map(|r| r.staleness) else {
            continue;
        };
        crate::outln!(
            "{:<14} {:>14.4} {:>14.4} {:>10.3} {:>12.4} {:>12.4}",
            name,
            s.estimated_mean_age_days,
            s.true_mean_age_days,
            s.estimated_mean_age_days / s.true_mean_age_days,
            s.mean_p_stale,
            s.true_stale_share
        );
    }
    crate::outln!(
        "budget in the measured window: {:.0} requests; every policy is the same scheduler \
         (only the network is simulated); ran in {:.1}s",
        report.budget_requests,
        started.elapsed().as_secs_f64()
    );
    Ok(0)
}
