//! The `plan` part of `freshet bench`: from-scratch age-optimal planning of N URLs over H hosts
//! under a budget and per-host limits (and the freshness-optimal and uniform plans beside it), the
//! incremental update after one observation (the URL's rate estimate, then its planned rate under
//! the solved multipliers) as a latency, the estimator's throughput, and the scheduler's own
//! re-plan and freshness sample ([`super::bench_scheduler`]).
//!
//! The synthetic URLs: log-normal change rates (median 0.2 a day, σ = 1.5), 5% of small weight
//! (duplicates), 1% capped at a visit a day (a Crawl-delay or max-age floor), spread over hosts
//! with a skew (host `⌊H u²⌋`, u uniform: a few large hosts, many small ones). The budget is half
//! a visit per URL a day and each host may take 0.8 visits per URL it holds a day, so both the
//! budget and many host limits bind.

use std::hint::black_box;
use std::time::Instant;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, LogNormal};

use super::bench_figures::Figures;
use crate::estimate::{self, Prior, Stats};
use crate::plan::{self, Limits, Objective, PlanPage, Policy};

/// Observations timed one by one for the incremental update's latency.
const UPDATES: usize = 20_000;
/// URLs whose estimates are timed for the estimator's throughput.
const ESTIMATES: usize = 200_000;

/// The synthetic plan: pages and their limits.
fn synthetic_plan(
    rng: &mut StdRng,
    pages: usize,
    hosts: usize,
) -> anyhow::Result<(Vec<PlanPage>, Limits)> {
    let rates = LogNormal::new(0.2f64.ln(), 1.5)?;
    let plan_pages: Vec<PlanPage> = (0..pages)
        .map(|_| {
            let u: f64 = rng.random();
            PlanPage {
                rate_per_day: rates.sample(rng),
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
    Ok((plan_pages, limits))
}

/// Runs the plan part on `pages` URLs over `hosts` hosts.
pub fn run(pages: usize, hosts: usize) -> anyhow::Result<Figures> {
    let mut rng = StdRng::seed_from_u64(42);
    let (plan_pages, limits) = synthetic_plan(&mut rng, pages, hosts)?;
    let started = Instant::now();
    plan::curves::warm_up();
    let tables_seconds = started.elapsed().as_secs_f64();

    let started = Instant::now();
    let (rates, mult) = plan::solve_full(Policy::AgeOptimal, &plan_pages, &limits, Objective::Age);
    let seconds = started.elapsed().as_secs_f64();
    let (mean_age, freshness) = plan::mean_age_and_freshness(&plan_pages, &rates);
    let visits: f64 = rates.iter().sum();
    let hosts_at_limit = mult.host_mu.iter().filter(|&&m| m > mult.mu).count();
    drop(rates);

    let timed = |policy, objective| {
        let started = Instant::now();
        black_box(plan::solve_full(policy, &plan_pages, &limits, objective));
        started.elapsed().as_secs_f64()
    };
    let freshness_seconds = timed(Policy::AgeOptimal, Objective::Freshness);
    let uniform_seconds = timed(Policy::Uniform, Objective::Age);

    let (mean_ms, p99_ms, max_ms) = incremental_updates(&mut rng, &plan_pages, &mult);
    let (with_interval_us, mean_only_us) = estimator(&mut rng, pages.min(ESTIMATES));
    drop((plan_pages, mult));
    let scheduler = super::bench_scheduler::figures(pages, hosts)?;

    let mut figures = vec![
        ("urls", pages as f64),
        ("hosts", hosts as f64),
        ("seconds", seconds),
        ("urls_per_second", pages as f64 / seconds.max(1e-9)),
        ("incremental_update_ms", mean_ms),
        ("incremental_update_p99_ms", p99_ms),
        ("incremental_update_max_ms", max_ms),
        ("freshness_objective_seconds", freshness_seconds),
        ("uniform_seconds", uniform_seconds),
        ("tables_seconds", tables_seconds),
        ("budget_visits_per_day", limits.budget_per_day),
        ("planned_visits_per_day", visits),
        ("hosts_at_limit", hosts_at_limit as f64),
        ("mean_age_days", mean_age),
        ("mean_freshness", freshness),
        ("estimate_with_interval_us", with_interval_us),
        ("estimate_mean_only_us", mean_only_us),
    ];
    figures.extend(scheduler);
    Ok(figures)
}

/// The daemon's work after one observation of a URL: fold the check into its statistics,
/// re-estimate its rate (the posterior mean) and re-plan it under the solved multipliers. Each
/// update is timed alone; returns the mean, 99th percentile and largest, in milliseconds.
fn incremental_updates(
    rng: &mut StdRng,
    pages: &[PlanPage],
    mult: &plan::Multipliers,
) -> (f64, f64, f64) {
    let prior = Prior::default();
    let mut samples: Vec<(Stats, PlanPage)> = (0..UPDATES)
        .map(|_| {
            let mut stats = Stats::default();
            for _ in 0..30 {
                stats.add_check(
                    rng.random_range(0.2..3.0),
                    Some(rng.random_bool(0.33)),
                    None,
                );
            }
            (stats, pages[rng.random_range(0..pages.len())])
        })
        .collect();
    let checks: Vec<(f64, bool)> = (0..UPDATES)
        .map(|_| (rng.random_range(0.2..3.0), rng.random_bool(0.33)))
        .collect();
    let mut latencies: Vec<f64> = Vec::with_capacity(UPDATES);
    for ((stats, page), &(interval, changed)) in samples.iter_mut().zip(&checks) {
        let started = Instant::now();
        stats.add_check(interval, Some(changed), None);
        page.rate_per_day = estimate::posterior(stats, &prior).mean();
        black_box(plan::rate_for(page, mult));
        latencies.push(started.elapsed().as_secs_f64() * 1e3);
    }
    latencies.sort_by(f64::total_cmp);
    let mean = latencies.iter().sum::<f64>() / latencies.len() as f64;
    let p99 = latencies[(latencies.len() * 99 / 100).min(latencies.len() - 1)];
    (mean, p99, latencies[latencies.len() - 1])
}

/// The estimator on `count` URLs of 30 checks each, a third with changes at irregular
/// intervals: microseconds per URL with the 90% interval, and for the posterior mean only.
fn estimator(rng: &mut StdRng, count: usize) -> (f64, f64) {
    let stats: Vec<Stats> = (0..count)
        .map(|_| {
            let mut s = Stats::default();
            for _ in 0..30 {
                s.add_check(
                    rng.random_range(0.2..3.0),
                    Some(rng.random_bool(0.33)),
                    None,
                );
            }
            s
        })
        .collect();
    let started = Instant::now();
    for s in &stats {
        black_box(estimate::estimate_stats(s, &Prior::default()).rate_per_day);
    }
    let with_interval = started.elapsed().as_secs_f64() * 1e6 / count as f64;
    let started = Instant::now();
    for s in &stats {
        black_box(estimate::posterior(s, &Prior::default()).mean());
    }
    let mean_only = started.elapsed().as_secs_f64() * 1e6 / count as f64;
    (with_interval, mean_only)
}
