//! A deterministic discrete-event world that compares revisit policies against the oracle.
//!
//! [`world`] makes a seeded web (pages with Poisson changes and log-normal rates, hosts with limits
//! and validators, noisy sitemap hints, feeds), [`engine`] runs one policy over it under the same
//! budget and host limits as every other and integrates age and freshness exactly, and the
//! policies are [`freshet`] (the real `estimate` and `plan` code, learning from its own fetches) and
//! the [`baselines`]:
//! - `oracle`: the age-optimal plan with the true rates and no signals;
//! - `uniform`: the same rate for every page, water-filled under host limits;
//! - `proportional`: rates proportional to the true change rates;
//! - `changefreq`: the age-optimal plan believing the sitemap hints (the default prior's mean
//!   where there is none);
//! - `nutch`: adaptive intervals (× 0.8 on change, × 1.4 when unchanged).

pub mod baselines;
pub mod engine;
pub mod freshet;
pub mod world;

use std::collections::BTreeMap;

pub use engine::PolicyResult;
pub use world::{Page, World, WorldConfig};

use crate::estimate::Prior;
use crate::plan::Policy;

/// A simulation: the world and where measuring starts.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// The world to make.
    pub world: WorldConfig,
    /// Days before measuring starts (learning and start-up effects settle).
    pub warmup_days: f64,
}

impl SimConfig {
    /// The default warm-up: a third of the run, at most 30 days.
    pub fn default_warmup(days: f64) -> f64 {
        (days / 3.0).min(30.0)
    }
}

/// Every policy's result, by name.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Report {
    /// Results by policy name.
    pub policies: BTreeMap<String, PolicyResult>,
}

/// The policies in the order they are shown.
pub const POLICIES: [&str; 6] = [
    "oracle",
    "freshet",
    "uniform",
    "proportional",
    "changefreq",
    "nutch",
];

fn run_policy(world: &World, name: &str, warmup: f64) -> PolicyResult {
    let true_rates = || world.pages.iter().map(|p| p.rate).collect::<Vec<_>>();
    let mut strategy: Box<dyn engine::Strategy> = match name {
        "oracle" => Box::new(baselines::FixedRates::planned(
            name,
            world,
            Policy::AgeOptimal,
            true_rates(),
        )),
        "uniform" => Box::new(baselines::FixedRates::planned(
            name,
            world,
            Policy::Uniform,
            true_rates(),
        )),
        "proportional" => Box::new(baselines::FixedRates::planned(
            name,
            world,
            Policy::Proportional,
            true_rates(),
        )),
        "changefreq" => {
            let hints = world
                .pages
                .iter()
                .map(|p| p.changefreq.unwrap_or(Prior::default().mean()))
                .collect();
            Box::new(baselines::FixedRates::planned(
                name,
                world,
                Policy::AgeOptimal,
                hints,
            ))
        }
        "nutch" => Box::new(baselines::Nutch::new(world)),
        _ => Box::new(freshet::Freshet::new(world)),
    };
    engine::run(world, strategy.as_mut(), warmup)
}

/// Generates the world and runs every policy on it (in parallel threads; results do not depend
/// on scheduling).
pub fn run(config: &SimConfig) -> Report {
    let world = World::generate(&config.world);
    let warmup = config.warmup_days.clamp(0.0, config.world.days);
    let results: Vec<(String, PolicyResult)> = std::thread::scope(|scope| {
        let handles: Vec<_> = POLICIES
            .iter()
            .map(|&name| {
                let world = &world;
                scope.spawn(move || (name.to_string(), run_policy(world, name, warmup)))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a policy thread panicked"))
            .collect()
    });
    Report {
        policies: results.into_iter().collect(),
    }
}

#[cfg(test)]
mod tests;
