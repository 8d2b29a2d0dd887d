//! `freshet bench`: throughput figures of the planner and the estimator (and, from the dedup
//! part, the fingerprints). Timings are printed, never asserted.

use std::time::Instant;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, LogNormal};

use crate::estimate::{self, Prior, Stats};
use crate::plan::{self, Limits, Objective, PlanPage, Policy};

/// Arguments of `freshet bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// URLs to plan.
    #[arg(long, default_value_t = 1_000_000)]
    pub pages: usize,
    /// Hosts the URLs are spread over.
    #[arg(long, default_value_t = 1_000)]
    pub hosts: usize,
    /// Which benchmarks to run.
    #[arg(long, value_enum, default_value = "all")]
    pub only: Which,
}

/// `--only`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Which {
    /// Everything.
    All,
    /// The planner and the estimator.
    Planner,
    /// Fingerprints, simhash and the near-duplicate index.
    Dedup,
}

/// Runs `freshet bench`; returns the exit code.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    if matches!(args.only, Which::All | Which::Planner) {
        let pages = args.pages;
        let hosts = args.hosts.max(1);
        tokio::task::spawn_blocking(move || bench_planner(pages, hosts)).await??;
    }
    if matches!(args.only, Which::All | Which::Dedup) {
        tokio::task::spawn_blocking(|| {
            let options = super::bench_dedup::DedupBenchOptions::default();
            super::bench_dedup::run_dedup_bench(&options, &mut super::output::stdout())
        })
        .await??;
    }
    Ok(0)
}

/// Plans `pages` URLs over `hosts` hosts from scratch and estimates their rates; prints timings.
pub fn bench_planner(pages: usize, hosts: usize) -> anyhow::Result<()> {
    let mut rng = StdRng::seed_from_u64(42);
    let rates = LogNormal::new(0.2f64.ln(), 1.5)?;
    let plan_pages: Vec<PlanPage> = (0..pages)
        .map(|_| {
            let u: f64 = rng.random();
            PlanPage {
                rate_per_day: rates.sample(&mut rng),
                weight: if rng.random_bool(0.05) { 0.05 } else { 1.0 },
                host: ((hosts as f64 * u * u) as usize).min(hosts - 1),
                max_visits_per_day: if rng.random_bool(0.01) {
                    1.0
                } else {
                    f64::INFINITY
                },
            }
        })
        .collect();
    let mut sizes = vec![0.0_f64; hosts];
    for p in &plan_pages {
        sizes[p.host] += 1.0;
    }
    let limits = Limits {
        budget_per_day: 0.5 * pages as f64,
        host_limits_per_day: sizes.iter().map(|s| (0.8 * s).max(1.0)).collect(),
    };
    let started = Instant::now();
    plan::curves::warm_up();
    crate::outln!(
        "planner: tables built in {:.3}s",
        started.elapsed().as_secs_f64()
    );
    for (name, policy, objective) in [
        ("age-optimal", Policy::AgeOptimal, Objective::Age),
        (
            "freshness-optimal",
            Policy::AgeOptimal,
            Objective::Freshness,
        ),
        ("uniform", Policy::Uniform, Objective::Age),
    ] {
        let started = Instant::now();
        let (rates, mult) = plan::solve_full(policy, &plan_pages, &limits, objective);
        let elapsed = started.elapsed().as_secs_f64();
        let (age, fresh) = plan::mean_age_and_freshness(&plan_pages, &rates);
        crate::outln!(
            "planner: {name:<18} {pages} URLs, {hosts} hosts in {elapsed:.2}s ({:.0} URLs/s); \
             visits/day {:.0} of {:.0}; mean age {age:.3} d, freshness {fresh:.3}",
            pages as f64 / elapsed,
            rates.iter().sum::<f64>(),
            limits.budget_per_day,
        );
        let started = Instant::now();
        let mut check = 0.0;
        for p in &plan_pages {
            check += plan::rate_for(p, &mult);
        }
        let per = started.elapsed().as_secs_f64() / pages as f64;
        crate::outln!(
            "planner: {name:<18} incremental rate_for {:.0} ns/URL (sum {check:.0})",
            per * 1e9
        );
    }
    // The estimator: 30 checks per URL, a third with changes at irregular intervals.
    let sample = pages.min(200_000);
    let stats: Vec<Stats> = (0..sample)
        .map(|_| {
            let mut s = Stats::default();
            for _ in 0..30 {
                let interval = rng.random_range(0.2..3.0);
                s.add_check(interval, Some(rng.random_bool(0.33)), None);
            }
            s
        })
        .collect();
    let started = Instant::now();
    let mut total = 0.0;
    for s in &stats {
        total += estimate::estimate_stats(s, &Prior::default()).rate_per_day;
    }
    let with_interval = started.elapsed().as_secs_f64() / sample as f64;
    let started = Instant::now();
    for s in &stats {
        total += estimate::posterior(s, &Prior::default()).mean();
    }
    let mean_only = started.elapsed().as_secs_f64() / sample as f64;
    crate::outln!(
        "estimator: {sample} URLs × 30 checks: {:.1} µs/URL with the 90% interval, {:.1} µs/URL \
         mean only (checksum {total:.0})",
        with_interval * 1e6,
        mean_only * 1e6
    );
    Ok(())
}
