//! The five-page example of DESIGN.md with freshet as a library: pages changing 1..5 times a
//! day, a budget of 5 visits a day. Prints the age-optimal visit rates and the mean
//! time-averaged age next to the uniform schedule's.
//!
//! Run: `cargo run --example plan_five_pages`

use freshet::plan::{self, Limits, Objective, PlanPage, Policy};

fn main() {
    let pages: Vec<PlanPage> = (1..=5)
        .map(|rate| PlanPage {
            rate_per_day: f64::from(rate),
            weight: 1.0,
            host: 0,
            max_visits_per_day: f64::INFINITY,
        })
        .collect();
    let limits = Limits {
        budget_per_day: 5.0,
        host_limits_per_day: Vec::new(),
    };
    for policy in [Policy::AgeOptimal, Policy::Uniform] {
        let rates = plan::solve(policy, &pages, &limits, Objective::Age);
        let (age, freshness) = plan::mean_age_and_freshness(&pages, &rates);
        let shown: Vec<String> = rates.iter().map(|f| format!("{f:.3}")).collect();
        println!(
            "{policy:?}: visits/day [{}], mean age {age:.4} d, freshness {freshness:.4}",
            shown.join(", ")
        );
    }
}
