//! A deterministic discrete-event world that compares revisit policies against the oracle.
//!
//! [`world`] makes a seeded web (pages with Poisson changes and log-normal rates, hosts with limits
//! and validators, noisy sitemap hints, feeds); [`engine`] answers one policy's requests from it
//! and measures age and freshness exactly. Every policy is the same [`crate::scheduler::Scheduler`]
//! that `freshet run` drives, with the same budget bucket, frontier and politeness; only the
//! network is simulated. The policies ([`crate::scheduler::PolicyKind`]):
//! - `oracle`: the age-optimal plan with the true rates and no signals;
//! - `oracle-signals`: the oracle reading the feeds as freshet does (run with `--signals`): the
//!   most the feeds can give, so whether freshet can beat the oracle with them at all;
//! - `freshet`: learnt rates, pooled priors, validator and hint trust, feeds priced at the margin;
//! - `uniform`: the same rate for every page, water-filled under host limits;
//! - `proportional`: rates proportional to the true change rates;
//! - `changefreq`: the age-optimal plan believing the sitemap hints;
//! - `nutch`: adaptive intervals (× 0.8 on change, × 1.4 when unchanged) scaled to the budget.

pub mod engine;
pub mod world;

use std::collections::BTreeMap;

pub use engine::PolicyResult;
pub use world::{FeedEntries, Page, World, WorldConfig};

use crate::scheduler::PolicyKind;

/// A simulation: the world and where measuring starts.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// The world to make.
    pub world: WorldConfig,
    /// Days before measuring starts (learning and start-up effects settle).
    pub warmup_days: f64,
    /// The policies to run (names of [`POLICIES`]); empty runs them all.
    pub policies: Vec<String>,
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
    /// The budget over the measured window: every policy's requests should come to this.
    pub budget_requests: f64,
    /// Results by policy name.
    pub policies: BTreeMap<String, PolicyResult>,
}

/// The policies in the order they are shown, with the scheduler policy each names.
pub const POLICIES: [(&str, PolicyKind); 7] = [
    ("oracle", PolicyKind::Oracle),
    ("oracle-signals", PolicyKind::OracleSignals),
    ("freshet", PolicyKind::Learned),
    ("uniform", PolicyKind::Uniform),
    ("proportional", PolicyKind::Proportional),
    ("changefreq", PolicyKind::Changefreq),
    ("nutch", PolicyKind::Nutch),
];

/// Generates the world and runs every policy on it (in parallel threads; results do not depend
/// on scheduling).
pub fn run(config: &SimConfig) -> Report {
    let world = World::generate(&config.world);
    let warmup = config.warmup_days.clamp(0.0, config.world.days);
    let results: Vec<(String, PolicyResult)> = std::thread::scope(|scope| {
        let handles: Vec<_> = POLICIES
            .iter()
            .filter(|&&(name, policy)| {
                if config.policies.is_empty() {
                    // Without feeds, the oracle that reads them is the oracle.
                    policy != PolicyKind::OracleSignals || config.world.signals > 0.0
                } else {
                    config.policies.iter().any(|p| p == name)
                }
            })
            .map(|&(name, policy)| {
                let world = &world;
                scope.spawn(move || (name.to_string(), engine::run(world, policy, warmup)))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a policy thread panicked"))
            .collect()
    });
    let budget_requests =
        config.world.budget * config.world.pages as f64 * (config.world.days - warmup);
    Report {
        budget_requests,
        policies: results.into_iter().collect(),
    }
}

#[cfg(test)]
mod tests;
