//! freshet's own policy in the simulator: it starts knowing nothing but the sitemap hints, learns
//! every page's rate with [`crate::estimate`] from what its own fetches (and, when the world has
//! them, feeds) show, and revisits at the rates [`crate::plan`] gives: the same code the daemon runs.
//!
//! - After every fetch the page's posterior is updated and its rate recomputed in O(1) from the
//!   last plan's multipliers ([`plan::rate_for`]); every [`Freshet::REPLAN_DAYS`] the whole plan is
//!   re-solved and host priors re-pooled (empirical Bayes).
//! - Last-Modified is used only once the host's [`ValidatorTrust`] trusts it.
//! - A page seen in its host's feed is *covered*: its rate is learnt from the feed's exact change
//!   times and it is fetched as [`crate::plan::feed`] describes (once the feed lists a change and
//!   `1/f` days have passed); the plan is re-solved with the fetches this saves returned to the
//!   budget, minus the feed polls (at most hourly or a tenth of the host's limit). When a feed
//!   overflowed, its pages fall back to the plan.

use super::baselines::world_limits;
use super::engine::{Observation, Strategy, TickCtx};
use super::world::World;
use crate::estimate::{
    Evidence, Prior, Stats, ValidatorCheck, ValidatorTrust, pool, posterior, prior_with_hints,
};
use crate::plan::{self, Multipliers, Objective, PlanPage, Policy};

/// Most feed polls per day (the engine's tick is an hour).
const MAX_FEED_POLLS: f64 = 24.0;
/// Largest share of a host's limit its feed polls may take.
const FEED_HOST_SHARE: f64 = 0.1;

/// The learning policy.
#[derive(Debug)]
pub struct Freshet {
    stats: Vec<Stats>,
    last_fetch: Vec<f64>,
    last_lm: Vec<Option<f64>>,
    plan_pages: Vec<PlanPage>,
    /// Planned visits per day per page.
    rates: Vec<f64>,
    trust: Vec<ValidatorTrust>,
    host_prior: Vec<Prior>,
    mult: Option<Multipliers>,
    next_replan: f64,
    covered: Vec<bool>,
    /// A covered page's change is known (from its feed) and not yet fetched.
    pending: Vec<bool>,
    /// Feed exposure of the host at the moment the page became covered.
    cover_offset: Vec<f64>,
    covered_by_host: Vec<Vec<usize>>,
    has_feed: Vec<bool>,
    feed_exposure: Vec<f64>,
    feed_last_poll: Vec<f64>,
    feed_rate: Vec<f64>,
    feed_next: Vec<f64>,
}

impl Freshet {
    /// Days between full re-plans.
    pub const REPLAN_DAYS: f64 = 1.0;

    /// A policy that knows the world's pages, hosts, limits, sitemap hints and which hosts have a
    /// feed, and nothing else.
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
            rates: vec![0.0; n],
            trust: vec![ValidatorTrust::default(); h],
            host_prior: vec![Prior::default(); h],
            mult: None,
            next_replan: 0.0,
            covered: vec![false; n],
            pending: vec![false; n],
            cover_offset: vec![0.0; n],
            covered_by_host: vec![Vec::new(); h],
            has_feed,
            feed_exposure: vec![0.0; h],
            feed_last_poll: vec![0.0; h],
            feed_rate: vec![1.0; h],
            feed_next: vec![0.0; h],
        }
    }

    /// The posterior of one page's rate.
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

    /// When `page` should be fetched next at planned rate `rate`: on schedule, or for a covered
    /// page only once a change is known.
    fn due(&self, page: usize, rate: f64, now: f64) -> f64 {
        if rate <= 0.0 || (self.covered[page] && !self.pending[page]) {
            return f64::INFINITY;
        }
        (self.last_fetch[page] + 1.0 / rate).max(now)
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
            *prior = pool(posteriors, Prior::default());
        }
        for page in 0..n {
            self.plan_pages[page].rate_per_day = self.estimate(world, page).mean();
        }
        let base = world_limits(world);
        // Feed polls come out of the budget and the host's limit.
        let mut limits = base.clone();
        for h in (0..world.hosts.len()).filter(|&h| self.has_feed[h]) {
            let changes: f64 = self.covered_by_host[h]
                .iter()
                .map(|&p| self.plan_pages[p].rate_per_day)
                .sum();
            let phi = plan::feed_poll_rate(
                changes,
                MAX_FEED_POLLS,
                base.host_limits_per_day[h],
                FEED_HOST_SHARE,
            );
            self.feed_rate[h] = phi;
            limits.budget_per_day -= phi;
            limits.host_limits_per_day[h] -= phi;
        }
        // Covered pages use fewer fetches than planned: give the savings back, and solve again.
        let mut solved = plan::solve_full(
            Policy::AgeOptimal,
            &self.plan_pages,
            &limits,
            Objective::Age,
        );
        for _ in 0..2 {
            let mut with_savings = limits.clone();
            for page in (0..n).filter(|&p| self.covered[p]) {
                let (f, l) = (solved.0[page], self.plan_pages[page].rate_per_day);
                let saved = f - plan::covered_visits_per_day(f, l);
                with_savings.budget_per_day += saved;
                with_savings.host_limits_per_day[world.pages[page].host] += saved;
            }
            solved = plan::solve_full(
                Policy::AgeOptimal,
                &self.plan_pages,
                &with_savings,
                Objective::Age,
            );
        }
        let (rates, mult) = solved;
        self.rates = rates;
        self.mult = Some(mult);
        for page in 0..n {
            ctx.reschedule(page, self.due(page, self.rates[page], t));
        }
    }

    fn poll_feed(&mut self, world: &World, h: usize, t: f64, ctx: &mut TickCtx) {
        let capacity = world.config.feed_capacity;
        let entries = world.hosts[h].feed_at(t, capacity);
        let last = self.feed_last_poll[h];
        // A full feed whose oldest entry is newer than the last poll may have dropped changes:
        // its pages fall back to the plan.
        let overflowed =
            entries.len() == capacity && entries.first().is_some_and(|&(oldest, _)| oldest > last);
        let start = if overflowed { entries[0].0 } else { last };
        if overflowed {
            for i in 0..self.covered_by_host[h].len() {
                let page = self.covered_by_host[h][i];
                self.pending[page] = true;
                ctx.reschedule(page, self.due(page, self.rates[page], t));
            }
        }
        let before = self.feed_exposure[h];
        for &(at, page) in entries.iter().filter(|(at, _)| *at > last) {
            if !self.covered[page] {
                // Coverage starts at the first sighting, which itself is not counted: it was
                // selected by being a change.
                self.covered[page] = true;
                self.cover_offset[page] = before + (at - start).max(0.0);
                self.covered_by_host[h].push(page);
            } else if at >= start {
                self.stats[page].add_exact(1.0, 0.0);
            }
            if at > self.last_fetch[page] && !self.pending[page] {
                self.pending[page] = true;
                ctx.reschedule(page, self.due(page, self.rates[page], t));
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
        // The first tick plans from the hints and schedules everything.
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
        self.pending[page] = false;
        self.plan_pages[page].rate_per_day = self.estimate(world, page).mean();
        if let Some(mult) = &self.mult {
            self.rates[page] = plan::rate_for(&self.plan_pages[page], mult);
        }
        self.due(page, self.rates[page], t)
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
