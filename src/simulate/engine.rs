//! The simulated network: runs one policy's [`Scheduler`] against a world and measures it.
//!
//! This is the only thing the simulator supplies: the scheduler is the one `freshet run` drives,
//! and a request here is answered from the world instead of over HTTP. A page's answer says
//! whether it changed since this policy's copy and what Last-Modified its host sends; a feed's
//! answer lists its last entries. Requests are instantaneous; the host's gate, the site's budget
//! and every decision are the scheduler's. Age and freshness are integrated exactly between
//! fetches from the page's change times, over the measured window after the warm-up; requests
//! (feeds included) are counted in the same window.

use super::world::World;
use crate::clock::MS_PER_DAY;
use crate::estimate::ValidatorCheck;
use crate::scheduler::{
    Fetched, NewUrl, PolicyKind, Restored, Scheduler, SchedulerConfig, Seen, UrlKey, UrlKind,
};

/// A policy's measured result.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PolicyResult {
    /// Time-averaged age in days over pages and the measured window.
    pub mean_age_days: f64,
    /// Fraction of page-time the copy was current.
    pub freshness: f64,
    /// Page fetches in the measured window.
    pub fetches: u64,
    /// Every request in the measured window: page fetches and feed polls.
    pub requests: u64,
    /// How well the scheduler knew its copies' staleness, sampled over the measured window.
    pub staleness: SampledStaleness,
}

/// The scheduler's own estimate of its copies' staleness ([`Scheduler::freshness`], what the
/// refresher records as `freshness_samples`) against the world's truth at the same instants:
/// [`SAMPLES_PER_DAY`] a day over the measured window, every page weighing the same.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct SampledStaleness {
    /// Instants sampled.
    pub samples: u64,
    /// Mean over the samples of the scheduler's mean expected age of its copies, days.
    pub estimated_mean_age_days: f64,
    /// Mean over the same samples of the copies' true age, days.
    pub true_mean_age_days: f64,
    /// Mean over the samples of the scheduler's mean probability that a copy is stale.
    pub mean_p_stale: f64,
    /// Mean over the samples of the share of copies truly stale.
    pub true_stale_share: f64,
}

/// How often the staleness is sampled in the measured window.
pub const SAMPLES_PER_DAY: f64 = 0.25;

impl SampledStaleness {
    /// Adds the instant `now`: the scheduler's estimate and the truth of `copies` in `world`.
    fn sample(&mut self, sched: &Scheduler, copies: &Copies, world: &World, now: i64) {
        let Some((_, estimate)) = sched.freshness(now).into_iter().next() else {
            return;
        };
        let t = days(now);
        let (mut stale, mut age) = (0usize, 0.0);
        for (page, p) in world.pages.iter().enumerate() {
            let next_change = p.next_change_after(copies.taken[page]);
            if next_change <= t {
                stale += 1;
                age += t - next_change;
            }
        }
        let n = world.pages.len().max(1) as f64;
        self.samples += 1;
        self.estimated_mean_age_days += estimate.mean_expected_age_days;
        self.mean_p_stale += estimate.mean_p_stale;
        self.true_mean_age_days += age / n;
        self.true_stale_share += stale as f64 / n;
    }

    /// The sums made means.
    fn finish(mut self) -> Self {
        let n = self.samples.max(1) as f64;
        self.estimated_mean_age_days /= n;
        self.true_mean_age_days /= n;
        self.mean_p_stale /= n;
        self.true_stale_share /= n;
        self
    }
}

/// Exact age and freshness integrals of one page's copy taken at `copy` and held until `t`,
/// clipped to `[warmup, ∞)`.
fn integrate(next_change: f64, copy: f64, t: f64, warmup: f64) -> (f64, f64) {
    let lo = copy.max(warmup);
    if t <= lo {
        return (0.0, 0.0);
    }
    let fresh = (t.min(next_change) - lo).max(0.0);
    let age = if next_change >= t {
        0.0
    } else {
        let a = lo.max(next_change) - next_change;
        let b = t - next_change;
        (b * b - a * a) / 2.0
    };
    (age, fresh)
}

fn days(ms: i64) -> f64 {
    ms as f64 / MS_PER_DAY
}

fn ms(days: f64) -> i64 {
    (days * MS_PER_DAY).round() as i64
}

/// What the simulated web knows of one policy's copies.
struct Copies {
    /// When each page's copy was taken, days.
    taken: Vec<f64>,
    /// The Last-Modified each page's last answer gave.
    last_modified: Vec<Option<f64>>,
    /// Scheduler key of each page, and the page (or feed's host) of each key.
    key_of_page: Vec<UrlKey>,
    target: Vec<Target>,
}

#[derive(Debug, Clone, Copy)]
enum Target {
    Page(usize),
    Feed(usize),
}

/// A scheduler for `policy` that knows the world's site, hosts, pages (with their sitemap hints)
/// and feeds, holding a copy of every page taken at day 0.
fn scheduler_for(world: &World, policy: PolicyKind) -> (Scheduler, Copies) {
    let mut sched = Scheduler::new(SchedulerConfig {
        policy,
        ..SchedulerConfig::default()
    });
    let n = world.pages.len();
    let site = sched.add_site(1.0, world.config.budget * n as f64, 0);
    let hosts: Vec<_> = world
        .hosts
        .iter()
        .map(|h| sched.add_host((MS_PER_DAY / h.limit_per_day).ceil() as i64, 0))
        .collect();
    let mut copies = Copies {
        taken: vec![0.0; n],
        last_modified: (0..n).map(|p| world.last_modified(p, 0.0)).collect(),
        key_of_page: Vec::with_capacity(n),
        target: Vec::with_capacity(n),
    };
    for (i, p) in world.pages.iter().enumerate() {
        let key = sched.add_url(
            0,
            NewUrl {
                site,
                host: hosts[p.host],
                kind: UrlKind::Page,
                weight: 1.0,
                changefreq_per_day: p.changefreq,
                true_rate: Some(p.rate),
                section: 0,
            },
        );
        sched.restore(
            key,
            Restored {
                last_check_ms: Some(0),
                ..Restored::default()
            },
        );
        copies.key_of_page.push(key);
        copies.target.push(Target::Page(i));
    }
    if policy.uses_feeds() {
        for (h, &host) in hosts.iter().enumerate().filter(|(h, _)| world.has_feed(*h)) {
            sched.add_url(
                0,
                NewUrl {
                    site,
                    host,
                    kind: UrlKind::Feed,
                    weight: 1.0,
                    changefreq_per_day: None,
                    true_rate: None,
                    section: 0,
                },
            );
            copies.target.push(Target::Feed(h));
        }
    }
    (sched, copies)
}

/// Runs one policy over the world and measures it after `warmup` days.
pub fn run(world: &World, policy: PolicyKind, warmup: f64) -> PolicyResult {
    let (mut sched, mut copies) = scheduler_for(world, policy);
    let end = ms(world.config.days);
    let (mut age_sum, mut fresh_sum) = (0.0, 0.0);
    let (mut fetches, mut requests) = (0u64, 0u64);
    let mut now = 0i64;
    let mut staleness = SampledStaleness::default();
    let sample_every = ms(1.0 / SAMPLES_PER_DAY).max(1);
    let mut next_sample = ms(warmup);
    while now < end {
        while let Some(request) = sched.poll_request(now) {
            let t = days(now);
            if t >= warmup {
                requests += 1;
            }
            match copies.target[request.url] {
                Target::Page(page) => {
                    let p = &world.pages[page];
                    let next_change = p.next_change_after(copies.taken[page]);
                    let (a, f) = integrate(next_change, copies.taken[page], t, warmup);
                    age_sum += a;
                    fresh_sum += f;
                    if t >= warmup {
                        fetches += 1;
                    }
                    let changed = next_change <= t;
                    let last_modified = world.last_modified(page, t);
                    let lm_moved = match (last_modified, copies.last_modified[page]) {
                        (Some(now), Some(before)) => Some(now != before),
                        _ => None,
                    };
                    copies.taken[page] = t;
                    copies.last_modified[page] = last_modified;
                    let fetched = Fetched {
                        last_modified_ms: last_modified.map(ms),
                        lesson: Some(ValidatorCheck {
                            content_changed: changed,
                            last_modified_changed: lm_moved,
                            etag_changed: None,
                            ..Default::default()
                        }),
                        ..Fetched::at(
                            now,
                            if changed {
                                Seen::Changed
                            } else {
                                Seen::Unchanged
                            },
                        )
                    };
                    sched.handle_fetched(now, request.url, fetched);
                }
                Target::Feed(host) => {
                    sched.handle_fetched(now, request.url, Fetched::at(now, Seen::Copy));
                    let entries: Vec<(UrlKey, i64)> = world.hosts[host]
                        .feed_at(t, world.config.feed_capacity, world.config.feed_entries)
                        .iter()
                        .map(|&(at, page)| (copies.key_of_page[page], ms(at)))
                        .collect();
                    sched.handle_feed(now, request.url, &entries);
                }
            }
        }
        let wake = sched.poll_timeout().map(|wake| wake.max(now + 1));
        // Nothing happens before the wake: the state now is the state at every instant until it.
        while next_sample < wake.unwrap_or(end).min(end) {
            staleness.sample(&sched, &copies, world, next_sample.max(now));
            next_sample += sample_every;
        }
        match wake {
            Some(wake) => now = wake,
            None => break,
        }
    }
    let horizon = world.config.days;
    for (page, p) in world.pages.iter().enumerate() {
        let taken = copies.taken[page];
        let (a, f) = integrate(p.next_change_after(taken), taken, horizon, warmup);
        age_sum += a;
        fresh_sum += f;
    }
    let page_days = world.pages.len() as f64 * (horizon - warmup).max(f64::MIN_POSITIVE);
    PolicyResult {
        mean_age_days: age_sum / page_days,
        freshness: fresh_sum / page_days,
        fetches,
        requests,
        staleness: staleness.finish(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integrals_are_exact() {
        // Copy at 0, change at 1, fetched at 3: stale for 2 days, age integral 2²/2.
        assert_eq!(integrate(1.0, 0.0, 3.0, 0.0), (2.0, 1.0));
        // Measured only from 2: age from 1 to 3 over [2, 3] = (2² - 1²)/2.
        assert_eq!(integrate(1.0, 0.0, 3.0, 2.0), (1.5, 0.0));
        assert_eq!(integrate(f64::INFINITY, 0.0, 3.0, 0.0), (0.0, 3.0));
    }
}
