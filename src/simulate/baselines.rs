//! The policies freshet is compared with: fixed-rate plans (oracle, uniform, proportional,
//! changefreq) and Nutch-style adaptive intervals.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::engine::{Observation, Strategy};
use super::world::World;
use crate::plan::{self, Limits, Objective, PlanPage, Policy};

/// The planner's view of a world's pages with the given rates (weights 1, no caps).
pub fn plan_pages(world: &World, rates: impl Iterator<Item = f64>) -> Vec<PlanPage> {
    world
        .pages
        .iter()
        .zip(rates)
        .map(|(p, rate)| PlanPage {
            rate_per_day: rate,
            weight: 1.0,
            host: p.host,
            max_visits_per_day: f64::INFINITY,
        })
        .collect()
}

/// The world's budget and host limits.
pub fn world_limits(world: &World) -> Limits {
    Limits {
        budget_per_day: world.config.budget * world.pages.len() as f64,
        host_limits_per_day: world.hosts.iter().map(|h| h.limit_per_day).collect(),
    }
}

/// A policy that visits each page at a fixed rate, with a random phase.
#[derive(Debug)]
pub struct FixedRates {
    name: String,
    rates: Vec<f64>,
    seed: u64,
}

impl FixedRates {
    /// Plans `policy` on the world with `rates` as the believed change rates.
    pub fn planned(name: &str, world: &World, policy: Policy, rates: Vec<f64>) -> Self {
        let pages = plan_pages(world, rates.into_iter());
        let rates = plan::solve(policy, &pages, &world_limits(world), Objective::Age);
        Self {
            name: name.to_string(),
            rates,
            seed: world.config.seed ^ 0x5eed,
        }
    }
}

impl Strategy for FixedRates {
    fn name(&self) -> &str {
        &self.name
    }

    fn start(&mut self, _world: &World) -> Vec<f64> {
        let mut rng = StdRng::seed_from_u64(self.seed);
        self.rates
            .iter()
            .map(|&f| {
                if f > 0.0 {
                    rng.random::<f64>() / f
                } else {
                    f64::INFINITY
                }
            })
            .collect()
    }

    fn on_fetch(&mut self, _world: &World, page: usize, t: f64, _obs: Observation) -> f64 {
        let f = self.rates[page];
        if f > 0.0 { t + 1.0 / f } else { f64::INFINITY }
    }
}

/// Nutch's AdaptiveFetchSchedule: the interval shrinks by 0.8 after a change and grows by 1.4
/// after none, clamped to [`Nutch::MIN_INTERVAL`, `Nutch::MAX_INTERVAL`]; it starts at the
/// uniform interval. The engine's budget credit limits it like every other policy.
#[derive(Debug)]
pub struct Nutch {
    interval: Vec<f64>,
    seed: u64,
}

impl Nutch {
    /// Shortest interval: an hour.
    pub const MIN_INTERVAL: f64 = 1.0 / 24.0;
    /// Longest interval: 90 days.
    pub const MAX_INTERVAL: f64 = 90.0;

    /// Starts every page at the uniform interval of the world's budget.
    pub fn new(world: &World) -> Self {
        let start = (1.0 / world.config.budget).clamp(Self::MIN_INTERVAL, Self::MAX_INTERVAL);
        Self {
            interval: vec![start; world.pages.len()],
            seed: world.config.seed ^ 0xa7c4,
        }
    }
}

impl Strategy for Nutch {
    fn name(&self) -> &str {
        "nutch"
    }

    fn start(&mut self, _world: &World) -> Vec<f64> {
        let mut rng = StdRng::seed_from_u64(self.seed);
        self.interval
            .iter()
            .map(|i| rng.random::<f64>() * i)
            .collect()
    }

    fn on_fetch(&mut self, _world: &World, page: usize, t: f64, obs: Observation) -> f64 {
        let factor = if obs.changed { 0.8 } else { 1.4 };
        let i = (self.interval[page] * factor).clamp(Self::MIN_INTERVAL, Self::MAX_INTERVAL);
        self.interval[page] = i;
        t + i
    }
}
