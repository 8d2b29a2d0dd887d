//! The scheduler's own costs in the `plan` part of `freshet bench`: the full re-plan `freshet
//! run` does every six hours and whenever URLs were found (the site's population of rates and
//! its groups' fitted from the pages' evidence, hints judged, the plan solved, every URL
//! re-queued), and the freshness sample it takes every quarter of an hour (its copies'
//! staleness under their posteriors, at most about 20,000 a site), both while the refresher
//! waits on the scheduler's lock.
//!
//! The synthetic site: URLs spread over hosts with the plan part's skew, five sections each,
//! log-normal change rates (median 0.2 a day, σ = 1.5), each URL with ten daily checks of
//! evidence drawn from its rate.

use std::time::Instant;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, LogNormal};

use crate::clock::MS_PER_DAY;
use crate::estimate::Stats;
use crate::scheduler::{NewUrl, Restored, Scheduler, SchedulerConfig, UrlKind};

/// The most URLs the scheduler is built with (its state takes several hundred bytes a URL).
pub const MAX_URLS: usize = 1_000_000;

/// `scheduler_urls`, `scheduler_replan_seconds` and `freshness_sample_seconds` for `pages` URLs
/// (at most [`MAX_URLS`]) over `hosts` hosts.
pub fn figures(pages: usize, hosts: usize) -> anyhow::Result<Vec<(&'static str, f64)>> {
    let pages = pages.min(MAX_URLS);
    let hosts = hosts.clamp(1, pages.max(1));
    let mut rng = StdRng::seed_from_u64(7);
    let rates = LogNormal::new(0.2f64.ln(), 1.5)?;
    let now = 10 * MS_PER_DAY as i64;
    let mut sched = Scheduler::new(SchedulerConfig::default());
    let site = sched.add_site(1.0, 0.5 * pages as f64, 0);
    let host_keys: Vec<_> = (0..hosts).map(|_| sched.add_host(0, 0)).collect();
    for i in 0..pages {
        let u: f64 = rng.random();
        let host = host_keys[((hosts as f64 * u * u) as usize).min(hosts - 1)];
        let rate: f64 = rates.sample(&mut rng);
        let mut stats = Stats::default();
        for _ in 0..10 {
            let changed = rng.random::<f64>() < 1.0 - (-rate).exp();
            stats.add_check(1.0, Some(changed), None);
        }
        let key = sched.add_url(
            0,
            NewUrl {
                site,
                host,
                kind: UrlKind::Page,
                weight: 1.0,
                changefreq_per_day: None,
                true_rate: None,
                section: (i % 5) as u64,
            },
        );
        sched.restore(
            key,
            Restored {
                last_check_ms: Some(now - rng.random_range(0..MS_PER_DAY as i64)),
                stats,
                ..Restored::default()
            },
        );
    }
    let started = Instant::now();
    // The first request re-plans: everything was just added.
    std::hint::black_box(sched.poll_request(now));
    let replan_seconds = started.elapsed().as_secs_f64();
    let started = Instant::now();
    std::hint::black_box(sched.freshness(now));
    let freshness_seconds = started.elapsed().as_secs_f64();
    Ok(vec![
        ("scheduler_urls", pages as f64),
        ("scheduler_replan_seconds", replan_seconds),
        ("freshness_sample_seconds", freshness_seconds),
    ])
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_figures_are_there() {
        let figures = super::figures(2_000, 20).expect("figures");
        let names: Vec<&str> = figures.iter().map(|(name, _)| *name).collect();
        assert_eq!(
            names,
            [
                "scheduler_urls",
                "scheduler_replan_seconds",
                "freshness_sample_seconds"
            ]
        );
        assert!(figures.iter().all(|(_, v)| v.is_finite() && *v >= 0.0));
        assert_eq!(figures[0].1, 2_000.0);
    }
}
