//! The demo's report: from the world (which knows every change) and the server's request log
//! (which knows every fetch), the true time-averaged age of freshet's copies per site, what a
//! uniform schedule with the same requests would have had in the same world, and whether the
//! client was polite, as the server saw it.
//!
//! A page's copy is synchronised by a GET answered 200 or 304 on any URL serving it (a mirror URL
//! refreshes the same content). HEAD never refreshes a copy: when it shows no change the copy was
//! current anyway, when it shows one the copy is still old. Requests are attributed to the site
//! owning the host (a mirror counts for the site it mirrors), and every request counts (robots.txt,
//! sitemaps, feeds, redirects): the uniform schedule gets the same total, spread evenly over every
//! page of the world (the textbook uniform policy), all spent on pages.
//!
//! The **oracle** is the best a scheduler could have done with the same requests: the
//! age-optimal plan ([`crate::plan::solve`]) on the world's *true* rates, under the schedule's
//! per-host limits (its interval, or a longer Crawl-delay), turned into syncs the way the uniform
//! plan is ([`truth::plan_syncs`]) and measured the same way. Like the uniform schedule it plans
//! every distinct page once, on its own host (a mirror adds no pages).

use std::fmt::Write as _;

use super::calibration::{self, Calibration, UrlBelief};
use super::noise::{self, NoisePages};
use super::server::RequestRecord;
use super::truth::{self, RateComparison};
use super::world::{Host, World};
use crate::clock::MS_PER_DAY;
use crate::plan::{self, Limits, Objective, PlanPage, Policy};

/// One policy's figures over the whole world.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PolicyFigures {
    /// The true time-averaged age of the copies, averaged over pages, in days.
    pub true_mean_age_days: f64,
    /// The policy's own estimate of that (freshet's, from its database; None when not known).
    pub estimated_mean_age_days: Option<f64>,
    /// Requests spent.
    pub requests: u64,
}

/// One site's figures.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SiteOutcome {
    /// Host name of the site (its mirror is folded in).
    pub site: String,
    /// Distinct pages.
    pub pages: usize,
    /// Requests to the site's hosts.
    pub requests: u64,
    /// GETs that synchronised a page copy (200 or 304).
    pub page_syncs: u64,
    /// True mean age of freshet's copies, days.
    pub true_mean_age_days: f64,
    /// True mean age of the site's pages under the uniform schedule (the same total requests
    /// spread evenly over every page of the world), days.
    pub uniform_mean_age_days: f64,
}

/// Politeness as the server saw it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Politeness {
    /// Requests to a path under a robots.txt `Disallow` (must be 0).
    pub disallowed_requests: u64,
    /// Per host: spacing figures.
    pub hosts: Vec<HostSpacing>,
}

/// One host's request spacing, in clock milliseconds.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HostSpacing {
    /// Host name.
    pub host: String,
    /// Requests it received.
    pub requests: u64,
    /// The smallest gap between two consecutive requests (None under two requests).
    pub min_gap_ms: Option<i64>,
    /// The gap the client owed it: the longer of the schedule's interval and Crawl-delay.
    pub required_gap_ms: i64,
    /// Gaps shorter than required minus the tolerance.
    pub violations: u64,
}

/// Everything the demo reports.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DemoOutcome {
    /// Start of the judged window (clock ms).
    pub from_ms: i64,
    /// End of the judged window (clock ms).
    pub to_ms: i64,
    /// Length of the window, days.
    pub days: f64,
    /// The schedule's budget over the window: its `requests_per_day` times `days` (what freshet
    /// was allowed to spend, next to `freshet.requests`, what it spent).
    pub budget_requests: f64,
    /// freshet's figures.
    pub freshet: PolicyFigures,
    /// The uniform schedule's figures in the same world.
    pub uniform: PolicyFigures,
    /// The oracle's figures: the age-optimal plan on the true rates with the same requests.
    pub oracle: PolicyFigures,
    /// Per site.
    pub sites: Vec<SiteOutcome>,
    /// Learned against true rates, when learned rates were supplied.
    pub rates: Option<RateComparison>,
    /// freshet's beliefs about its copies at the end against the truth, when supplied.
    pub calibration: Option<Calibration>,
    /// Politeness as the server saw it.
    pub politeness: Politeness,
    /// The noise-only pages: their share of the requests, and (when supplied) learnt rates.
    pub noise_pages: NoisePages,
}

/// How [`evaluate`] judges.
#[derive(Debug, Clone)]
pub struct Judge {
    /// Start of the window (usually the clock's origin).
    pub from_ms: i64,
    /// End of the window (the clock when the run stopped).
    pub to_ms: i64,
    /// Seed of the uniform schedule's phases.
    pub seed: u64,
    /// The schedule's budget, requests per day ([`super::schedule::requests_per_day`]).
    pub budget_per_day: f64,
    /// The schedule's per-host minimum interval, clock ms (Crawl-delay may ask for more).
    pub host_interval_ms: i64,
    /// Slack on measured gaps: the server stamps arrival in clock time, and at speed 3600 a
    /// millisecond of real jitter is 3.6 clock seconds.
    pub gap_tolerance_ms: i64,
}

/// Judges the fetches in `log` against `world`.
pub fn evaluate(world: &World, log: &[RequestRecord], judge: &Judge) -> DemoOutcome {
    let (from, to) = (judge.from_ms, judge.to_ms);
    let mut syncs: Vec<Vec<i64>> = vec![Vec::new(); world.pages.len()];
    let mut site_requests = vec![0u64; world.hosts.len()];
    let mut site_syncs = vec![0u64; world.hosts.len()];
    let mut disallowed = 0;
    let mut arrivals: Vec<Vec<i64>> = vec![Vec::new(); world.hosts.len()];
    let prefixes: Vec<Option<String>> = world.hosts.iter().map(|h| h.disallowed_prefix()).collect();
    for record in log {
        let Some((h, host)) = world.host(&record.host) else {
            continue;
        };
        let site = world.site_of(h);
        if record.at_ms >= from {
            site_requests[site] += 1;
        }
        arrivals[h].push(record.at_ms);
        if prefixes[h]
            .as_deref()
            .is_some_and(|p| record.path.starts_with(p))
        {
            disallowed += 1;
        }
        if let Some(page) = record.synced_page(host) {
            syncs[page].push(record.at_ms);
            site_syncs[site] += 1;
        }
    }

    // The uniform schedule spreads every request freshet made in the window evenly over every
    // page.
    let requests: u64 = site_requests.iter().sum();
    let days = (to - from) as f64 / MS_PER_DAY;
    let pages = world.pages.len();
    let even = if pages > 0 && days > 0.0 {
        requests as f64 / pages as f64 / days
    } else {
        0.0
    };
    let uniform_plan = truth::plan_syncs(&vec![even; pages], from, to, judge.seed);
    let oracle_plan = truth::plan_syncs(
        &oracle_rates(world, requests, days, judge),
        from,
        to,
        judge.seed,
    );
    let mut sites = Vec::new();
    let (mut freshet_sum, mut uniform_sum, mut oracle_sum) = (0.0, 0.0, 0.0);
    for (h, host) in world.hosts.iter().enumerate() {
        if host.mirror_of.is_some() {
            continue;
        }
        let (mut mine, mut uniform) = (0.0, 0.0);
        for &id in &host.pages {
            let changes = &world.pages[id].changes;
            mine += truth::mean_age_days(changes, &syncs[id], from, to);
            uniform += truth::mean_age_days(changes, &uniform_plan[id], from, to);
            oracle_sum += truth::mean_age_days(changes, &oracle_plan[id], from, to);
        }
        let n = host.pages.len().max(1) as f64;
        sites.push(SiteOutcome {
            site: host.name.clone(),
            pages: host.pages.len(),
            requests: site_requests[h],
            page_syncs: site_syncs[h],
            true_mean_age_days: mine / n,
            uniform_mean_age_days: uniform / n,
        });
        freshet_sum += mine;
        uniform_sum += uniform;
    }
    let n = world.pages.len().max(1) as f64;

    let hosts = world
        .hosts
        .iter()
        .zip(arrivals)
        .map(|(host, times)| spacing(host, times, judge))
        .collect();

    DemoOutcome {
        from_ms: from,
        to_ms: to,
        days,
        budget_requests: judge.budget_per_day * days,
        freshet: PolicyFigures {
            true_mean_age_days: freshet_sum / n,
            estimated_mean_age_days: None,
            requests,
        },
        uniform: PolicyFigures {
            true_mean_age_days: uniform_sum / n,
            estimated_mean_age_days: None,
            requests,
        },
        oracle: PolicyFigures {
            true_mean_age_days: oracle_sum / n,
            estimated_mean_age_days: None,
            requests: oracle_plan.iter().map(|s| s.len() as u64).sum(),
        },
        sites,
        rates: None,
        calibration: None,
        politeness: Politeness {
            disallowed_requests: disallowed,
            hosts,
        },
        noise_pages: noise::noise_figures(world, log, from, to, requests),
    }
}

/// The age-optimal plan on the world's true rates: visits per day per page, spending `requests`
/// over `days` (every page weighs the same), each host held to one request per
/// [`required_gap_ms`].
fn oracle_rates(world: &World, requests: u64, days: f64, judge: &Judge) -> Vec<f64> {
    if requests == 0 || days <= 0.0 {
        return vec![0.0; world.pages.len()];
    }
    let pages: Vec<PlanPage> = world
        .pages
        .iter()
        .map(|p| PlanPage {
            rate_per_day: p.rate_per_day,
            weight: 1.0,
            host: p.home,
            max_visits_per_day: f64::INFINITY,
        })
        .collect();
    let limits = Limits {
        budget_per_day: requests as f64 / days,
        host_limits_per_day: world
            .hosts
            .iter()
            .map(|h| MS_PER_DAY / required_gap_ms(h, judge).max(1) as f64)
            .collect(),
    };
    plan::solve(Policy::AgeOptimal, &pages, &limits, Objective::Age)
}

/// The least gap a client owes `host`: the schedule's interval, or a longer Crawl-delay.
fn required_gap_ms(host: &Host, judge: &Judge) -> i64 {
    judge
        .host_interval_ms
        .max(host.crawl_delay_s.map_or(0, |s| i64::from(s) * 1000))
}

fn spacing(host: &Host, mut times: Vec<i64>, judge: &Judge) -> HostSpacing {
    times.sort_unstable();
    let required = required_gap_ms(host, judge);
    let gaps = times.windows(2).map(|w| w[1] - w[0]);
    HostSpacing {
        host: host.name.clone(),
        requests: times.len() as u64,
        min_gap_ms: gaps.clone().min(),
        required_gap_ms: required,
        violations: gaps
            .filter(|&g| g < required - judge.gap_tolerance_ms)
            .count() as u64,
    }
}

impl DemoOutcome {
    /// Compares learned rates, given as (URL, rate per day), with the world's true rates; URLs
    /// that are not pages of the world are ignored, and a page learned under several URLs (a
    /// mirror) counts once per URL.
    pub fn compare_learned(&mut self, world: &World, learned: &[(String, f64)]) {
        let pairs: Vec<(f64, f64)> = learned
            .iter()
            .filter_map(|(url, rate)| {
                let page = world.page_for_url(url)?;
                Some((world.pages[page].rate_per_day, *rate))
            })
            .collect();
        self.rates = truth::compare_rates(&pairs);
    }

    /// Judges freshet's beliefs about its copies (page URLs in the order they should count, see
    /// [`calibration`]) at the end of the window, against the world and the server's `log`.
    pub fn calibrate(&mut self, world: &World, log: &[RequestRecord], beliefs: &[UrlBelief]) {
        self.calibration = calibration::calibrate(world, log, self.to_ms, beliefs);
    }

    /// The report as a table for people.
    pub fn to_table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{:<22} {:>6} {:>9} {:>14} {:>17}",
            "site", "pages", "requests", "true age (d)", "uniform age (d)"
        );
        for s in &self.sites {
            let _ = writeln!(
                out,
                "{:<22} {:>6} {:>9} {:>14.4} {:>17.4}",
                s.site, s.pages, s.requests, s.true_mean_age_days, s.uniform_mean_age_days
            );
        }
        let pages: usize = self.sites.iter().map(|s| s.pages).sum();
        let _ = writeln!(
            out,
            "{:<22} {:>6} {:>9} {:>14.4} {:>17.4}",
            "all",
            pages,
            self.freshet.requests,
            self.freshet.true_mean_age_days,
            self.uniform.true_mean_age_days
        );
        let _ = writeln!(out, "\nover {:.2} virtual days:", self.days);
        let estimate = self
            .freshet
            .estimated_mean_age_days
            .map_or("unknown".to_string(), |e| format!("{e:.4} days"));
        let _ = writeln!(
            out,
            "  freshet: true mean age {:.4} days, its own estimate {estimate}, {} requests",
            self.freshet.true_mean_age_days, self.freshet.requests
        );
        let _ = writeln!(
            out,
            "  budget: {:.0} requests by the schedule over the window, freshet made {}",
            self.budget_requests, self.freshet.requests
        );
        let _ = writeln!(
            out,
            "  uniform: true mean age {:.4} days with the same {} requests",
            self.uniform.true_mean_age_days, self.uniform.requests
        );
        let _ = writeln!(
            out,
            "  oracle:  true mean age {:.4} days, the age-optimal plan on the true rates with {} \
             requests",
            self.oracle.true_mean_age_days, self.oracle.requests
        );
        let n = &self.noise_pages;
        let rate = |r: Option<f64>| r.map_or("n/a".to_string(), |r| format!("{r:.3}/d"));
        let _ = writeln!(
            out,
            "  noise-only pages: {} ({:.0}% of pages) took {} requests ({:.1}%); true content \
             rate {:.3}/d, learnt: content {}, bytes {}, scheduler's {}",
            n.pages,
            n.share_of_pages * 100.0,
            n.requests,
            n.share_of_requests * 100.0,
            n.mean_true_rate,
            rate(n.mean_learnt_content_rate),
            rate(n.mean_learnt_byte_rate),
            rate(n.mean_learnt_rate),
        );
        match &self.rates {
            Some(r) => {
                let rho = r.spearman.map_or("n/a".to_string(), |s| format!("{s:.2}"));
                let _ = writeln!(
                    out,
                    "  learned vs true rates over {} URLs: median ratio {:.2}, {:.0}% within 2x, \
                     Spearman {rho}",
                    r.pages,
                    r.median_ratio,
                    r.within_factor_2 * 100.0
                );
            }
            None => out.push_str("  learned rates: not available\n"),
        }
        match &self.calibration {
            Some(c) => {
                let _ = writeln!(
                    out,
                    "  calibration over {} checked pages: {:.0}% stale at the end, freshet's mean \
                     P(stale) {:.0}%, {:.0}% of true rates inside its 90% intervals (an estimator \
                     seeing every change: {:.0}%); mean age then {:.4} d, freshet expected {:.4} d",
                    c.pages,
                    c.true_stale_share * 100.0,
                    c.mean_p_stale * 100.0,
                    c.interval_coverage_90 * 100.0,
                    c.exact_counts_coverage_90 * 100.0,
                    c.true_mean_age_days,
                    c.expected_mean_age_days
                );
                if let (Some(p), Some(share), Some(estimate), Some(truth)) = (
                    c.sampled_mean_p_stale,
                    c.sampled_true_stale_share,
                    c.sampled_expected_mean_age_days,
                    c.sampled_true_mean_age_days,
                ) {
                    let _ = writeln!(
                        out,
                        "  over the window, freshet's copies (time average of the freshness \
                         samples): {:.1}% stale, freshet's mean P(stale) {:.1}%; mean age \
                         {truth:.4} d, freshet expected {estimate:.4} d",
                        share * 100.0,
                        p * 100.0
                    );
                }
            }
            None => out.push_str("  calibration: not available\n"),
        }
        let violations: u64 = self.politeness.hosts.iter().map(|h| h.violations).sum();
        let _ = writeln!(
            out,
            "  politeness: {} requests to robots-disallowed paths, {} gaps shorter than a host's limit",
            self.politeness.disallowed_requests, violations
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::world::WorldConfig;

    #[test]
    fn mirror_fetch_refreshes_the_page_and_counts_for_its_site() {
        let world = World::generate(&WorldConfig::default());
        let from = world.config.origin_ms;
        let to = from + 2 * MS_PER_DAY as i64;
        let (_, docs) = world.host("docs.freshet.test").unwrap();
        let page = &world.pages[docs.pages[0]];
        let judge = Judge {
            from_ms: from,
            to_ms: to,
            seed: 1,
            budget_per_day: 100.0,
            host_interval_ms: 1000,
            gap_tolerance_ms: 0,
        };
        let log = vec![
            RequestRecord::get(from + 10, "mirror.freshet.test", &page.path, 200),
            RequestRecord::get(from + 20, "news.freshet.test", "/private/drafts", 200),
            RequestRecord::get(from + 30, "news.freshet.test", "/robots.txt", 200),
        ];
        let outcome = evaluate(&world, &log, &judge);
        let docs_row = outcome
            .sites
            .iter()
            .find(|s| s.site == "docs.freshet.test")
            .unwrap();
        assert_eq!(docs_row.requests, 1);
        assert_eq!(docs_row.page_syncs, 1);
        assert_eq!(outcome.freshet.requests, 3);
        assert_eq!(outcome.uniform.requests, 3);
        assert!((outcome.budget_requests - 200.0).abs() < 1e-9);
        assert_eq!(outcome.politeness.disallowed_requests, 1);
        let news = &outcome.politeness.hosts[0];
        assert_eq!(news.min_gap_ms, Some(10));
        assert_eq!(news.required_gap_ms, 120_000);
        assert_eq!(news.violations, 1);
        let table = outcome.to_table();
        assert!(table.contains("docs.freshet.test"));
        assert!(table.contains("budget: 200 requests"), "{table}");
    }

    /// A small world judged over `days` after `requests` robots.txt fetches in the window.
    fn judged(seed: u64, days: i64, requests: i64, host_interval_ms: i64) -> DemoOutcome {
        let world = World::generate(&WorldConfig {
            seed,
            scale: 0.1,
            horizon_days: days as f64 + 1.0,
            ..WorldConfig::default()
        });
        let from = world.config.origin_ms;
        let to = from + days * MS_PER_DAY as i64;
        let log: Vec<RequestRecord> = (0..requests)
            .map(|k| {
                RequestRecord::get(
                    from + k * (to - from) / requests,
                    "blog.freshet.test",
                    "/robots.txt",
                    200,
                )
            })
            .collect();
        let judge = Judge {
            from_ms: from,
            to_ms: to,
            seed,
            budget_per_day: 0.0,
            host_interval_ms,
            gap_tolerance_ms: 0,
        };
        evaluate(&world, &log, &judge)
    }

    #[test]
    fn the_oracle_spends_the_same_requests_and_beats_uniform() {
        for seed in 1..=6 {
            // 16 pages, 480 requests over 20 days.
            let outcome = judged(seed, 20, 480, 1000);
            assert_eq!(outcome.oracle.requests, 480);
            assert!(
                outcome.oracle.true_mean_age_days <= outcome.uniform.true_mean_age_days,
                "seed {seed}: oracle {:?} uniform {:?}",
                outcome.oracle,
                outcome.uniform
            );
        }
    }

    #[test]
    fn the_oracle_keeps_to_the_host_limits() {
        // One request a host a day: 5 hosts with pages, 20 days, whatever the budget.
        let outcome = judged(1, 20, 480, MS_PER_DAY as i64);
        assert!(
            (98..=102).contains(&outcome.oracle.requests),
            "{:?}",
            outcome.oracle
        );
        assert!(outcome.oracle.true_mean_age_days > outcome.uniform.true_mean_age_days);
        let none = judged(1, 20, 0, 1000);
        assert_eq!(none.oracle.requests, 0);
        // No requests: both leave every copy as the window found it.
        assert!((none.oracle.true_mean_age_days - none.uniform.true_mean_age_days).abs() < 1e-9);
    }

    #[test]
    fn learned_rates_are_matched_by_url() {
        let world = World::generate(&WorldConfig::default());
        let judge = Judge {
            from_ms: world.config.origin_ms,
            to_ms: world.config.origin_ms + 1000,
            seed: 1,
            budget_per_day: 100.0,
            host_interval_ms: 0,
            gap_tolerance_ms: 0,
        };
        let mut outcome = evaluate(&world, &[], &judge);
        let learned: Vec<(String, f64)> = world.hosts[0]
            .pages
            .iter()
            .map(|&id| {
                let p = &world.pages[id];
                (
                    format!("http://news.freshet.test:1{}", p.path),
                    p.rate_per_day * 2.0,
                )
            })
            .chain(std::iter::once(("http://elsewhere.test/".to_string(), 1.0)))
            .collect();
        outcome.compare_learned(&world, &learned);
        let rates = outcome.rates.unwrap();
        assert_eq!(rates.pages, world.hosts[0].pages.len());
        assert!((rates.median_ratio - 2.0).abs() < 1e-9);
        assert!(rates.spearman.unwrap() > 0.999);
    }
}
