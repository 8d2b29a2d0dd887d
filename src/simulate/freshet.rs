//! freshet's own policy in the simulator: it starts knowing nothing but the sitemap hints, learns
//! every page's rate with [`crate::estimate`] from what its own fetches (and, when the world has
//! them, feeds) show, and revisits at the rates [`crate::plan`] gives: the same code the daemon runs.
//!
//! - After every fetch the page's posterior is updated and its rate recomputed in O(1) from the
//!   last plan's multipliers ([`plan::rate_for`]); every [`Freshet::REPLAN_DAYS`] the whole plan is
//!   re-solved, host priors re-pooled (empirical Bayes) and feed poll rates re-chosen.
//! - Last-Modified is used only once the host's [`ValidatorTrust`] trusts it.
//! - A page seen in its host's feed is *covered*: its rate is learnt from the feed's exact change
//!   times, a listed change makes it due at once, and it keeps only a token weight in the plan.

use super::baselines::world_limits;
use super::engine::{Observation, Strategy, TickCtx};
use super::world::World;
use crate::estimate::{
    self, Evidence, Prior, Stats, ValidatorCheck, ValidatorTrust, posterior, prior_with_hints,
};
use crate::plan::{self, Multipliers, Objective, PlanPage, Policy};

/// Plan weight of a page whose changes a feed announces: a safety net only.
const COVERED_WEIGHT: f64 = 0.02;
/// Most feed polls per day.
const MAX_FEED_POLLS: f64 = 96.0;

/// The learning policy.
#[derive(Debug)]
pub struct Freshet {
    stats: Vec<Stats>,
    last_fetch: Vec<f64>,
    last_lm: Vec<Option<f64>>,
    plan_pages: Vec<PlanPage>,
    trust: Vec<ValidatorTrust>,
    host_prior: Vec<Prior>,
    mult: Option<Multipliers>,
    next_replan: f64,
    covered: Vec<bool>,
    /// Feed exposure of the host at the moment the page became covered.
    cover_offset: Vec<f64>,
    has_feed: Vec<bool>,
    feed_exposure: Vec<f64>,
    feed_last_poll: Vec<f64>,
    feed_rate: Vec<f64>,
    feed_next: Vec<f64>,
}

impl Freshet {
    /// Days between full re-plans.
    pub const REPLAN_DAYS: f64 = 1.0;

    /// A policy that knows the world's pages, hosts, limits and sitemap hints, and nothing else.
    pub fn new(world: &World) -> Self {
        let n = world.pages.len();
        let h = world.hosts.len();
        let mut has_feed = vec![false; h];
        if world.config.signals > 0.0 {
            for p in world.pages.iter().filter(|p| p.announced) {
                has_feed[p.host] = true;
            }
        }
        Self {
            stats: vec![Stats::default(); n],
            last_fetch: vec![0.0; n],
            last_lm: vec![None; n],
            plan_pages: super::baselines::plan_pages(world, std::iter::repeat(0.0)),
            trust: vec![ValidatorTrust::default(); h],
            host_prior: vec![Prior::default(); h],
            mult: None,
            next_replan: 0.0,
            covered: vec![false; n],
            cover_offset: vec![0.0; n],
            has_feed,
            feed_exposure: vec![0.0; h],
            feed_last_poll: vec![0.0; h],
            feed_rate: vec![1.0; h],
            feed_next: vec![0.0; h],
        }
    }

    /// The posterior mean of one page's rate.
    fn estimate(&self, world: &World, page: usize) -> Prior {
        let p = &world.pages[page];
        let hints = Evidence {
            changefreq_per_day: p.changefreq,
            ..Default::default()
        };
        let mut prior = prior_with_hints(&hints, &self.host_prior[p.host]);
        if self.covered[page] {
            // Feed exposure is conjugate: it adds to the Gamma rate.
            prior.rate += self.feed_exposure[p.host] - self.cover_offset[page];
        }
        posterior(&self.stats[page], &prior)
    }

    fn refresh_page(&mut self, world: &World, page: usize) -> f64 {
        self.plan_pages[page].rate_per_day = self.estimate(world, page).mean();
        self.plan_pages[page].weight = if self.covered[page] {
            COVERED_WEIGHT
        } else {
            1.0
        };
        self.mult
            .as_ref()
            .map_or(0.0, |m| plan::rate_for(&self.plan_pages[page], m))
    }

    fn due(&self, page: usize, rate: f64) -> f64 {
        if rate > 0.0 {
            self.last_fetch[page] + 1.0 / rate
        } else {
            f64::INFINITY
        }
    }

    fn replan(&mut self, world: &World, t: f64, ctx: &mut TickCtx) {
        let n = world.pages.len();
        // Empirical Bayes: each host's prior from its pages that have evidence of their own.
        let mut by_host: Vec<Vec<Prior>> = vec![Vec::new(); world.hosts.len()];
        for page in 0..n {
            let s = &self.stats[page];
            if s.exposure_days > 0.0 || !s.changed_intervals.is_empty() || self.covered[page] {
                by_host[world.pages[page].host].push(self.estimate(world, page));
            }
        }
        for (prior, posteriors) in self.host_prior.iter_mut().zip(&by_host) {
            *prior = estimate::pool(posteriors, Prior::default());
        }
        for page in 0..n {
            self.plan_pages[page].rate_per_day = self.estimate(world, page).mean();
            self.plan_pages[page].weight = if self.covered[page] {
                COVERED_WEIGHT
            } else {
                1.0
            };
        }
        let mut limits = world_limits(world);
        let (_, first) = plan::solve_full(
            Policy::AgeOptimal,
            &self.plan_pages,
            &limits,
            Objective::Age,
        );
        // Feeds: choose poll rates at the plan's price of a fetch, then take their cost out.
        let mut covered_rates: Vec<Vec<f64>> = vec![Vec::new(); world.hosts.len()];
        for page in (0..n).filter(|&p| self.covered[p]) {
            covered_rates[world.pages[page].host].push(self.plan_pages[page].rate_per_day);
        }
        let full_budget = limits.budget_per_day;
        for h in (0..world.hosts.len()).filter(|&h| self.has_feed[h]) {
            let poll = plan::feed_poll_rate(
                &covered_rates[h],
                first.mu,
                world.config.feed_capacity,
                MAX_FEED_POLLS,
            );
            self.feed_rate[h] = poll.rate_per_day.max(1.0);
            let cost = poll.cost_per_day.max(self.feed_rate[h]);
            limits.budget_per_day -= cost;
            let host_limit = &mut limits.host_limits_per_day[h];
            *host_limit = (*host_limit - cost).max(0.1 * *host_limit);
        }
        limits.budget_per_day = limits.budget_per_day.max(0.1 * full_budget);
        let (rates, mult) = plan::solve_full(
            Policy::AgeOptimal,
            &self.plan_pages,
            &limits,
            Objective::Age,
        );
        self.mult = Some(mult);
        for (page, &rate) in rates.iter().enumerate() {
            ctx.reschedule(page, self.due(page, rate).max(t));
        }
    }

    fn poll_feed(&mut self, world: &World, h: usize, t: f64, ctx: &mut TickCtx) {
        let capacity = world.config.feed_capacity;
        let entries = world.hosts[h].feed_at(t, capacity);
        let last = self.feed_last_poll[h];
        // A full feed whose oldest entry is newer than the last poll may have dropped changes.
        let start = match entries.first() {
            Some(&(oldest, _)) if entries.len() == capacity && oldest > last => oldest,
            _ => last,
        };
        let before = self.feed_exposure[h];
        for &(at, page) in entries.iter().filter(|(at, _)| *at > last) {
            if !self.covered[page] {
                // Coverage starts at the first sighting, which itself is not counted: it was
                // selected by being a change.
                self.covered[page] = true;
                self.cover_offset[page] = before + (at - start).max(0.0);
            } else if at >= start {
                self.stats[page].add_exact(1.0, 0.0);
            }
            if at > self.last_fetch[page] {
                ctx.reschedule(page, t);
            }
        }
        self.feed_exposure[h] += t - start;
        self.feed_last_poll[h] = t;
    }
}

impl Strategy for Freshet {
    fn name(&self) -> &str {
        "freshet"
    }

    fn start(&mut self, _world: &World) -> Vec<f64> {
        // The first tick re-plans from the hints and schedules everything.
        vec![f64::INFINITY; self.stats.len()]
    }

    fn on_fetch(&mut self, world: &World, page: usize, t: f64, obs: Observation) -> f64 {
        let host = world.pages[page].host;
        let lm_changed = match (obs.last_modified, self.last_lm[page]) {
            (Some(now), Some(before)) => Some(now != before),
            _ => None,
        };
        self.trust[host].observe(ValidatorCheck {
            content_changed: obs.changed,
            last_modified_changed: lm_changed,
            etag_changed: None,
        });
        if !self.covered[page] {
            let lm_age = obs
                .last_modified
                .filter(|_| self.trust[host].trust_last_modified())
                .map(|lm| t - lm);
            self.stats[page].add_check(t - self.last_fetch[page], Some(obs.changed), lm_age);
        }
        self.last_fetch[page] = t;
        self.last_lm[page] = obs.last_modified;
        let rate = self.refresh_page(world, page);
        self.due(page, rate)
    }

    fn on_tick(&mut self, world: &World, t: f64, ctx: &mut TickCtx) {
        if t >= self.next_replan {
            self.replan(world, t, ctx);
            self.next_replan = t + Self::REPLAN_DAYS;
        }
        for h in 0..world.hosts.len() {
            if self.has_feed[h] && self.feed_next[h] <= t && ctx.try_spend(h) {
                self.poll_feed(world, h, t, ctx);
                self.feed_next[h] = t + 1.0 / self.feed_rate[h];
            }
        }
    }
}
