//! Estimating a page's change rate from changed / unchanged checks with freshet as a library:
//! daily checks of a page that changes once a day on average (simulated, seeded), and the
//! posterior with its 90% interval next to the naive "changes seen / days watched".
//!
//! Run: `cargo run --example estimate_rate`

use freshet::estimate::{self, Check, Evidence, Prior};
use rand::{Rng, SeedableRng, rngs::StdRng};

fn main() {
    let true_rate: f64 = 1.0;
    let mut rng = StdRng::seed_from_u64(7);
    let mut checks = vec![Check {
        at_days: 0.0,
        changed: None,
        last_modified_days: None,
    }];
    let mut changed = 0;
    for day in 1..=60 {
        // P(at least one change in a day) = 1 - e^{-λ}.
        let saw = rng.random_bool(1.0 - (-true_rate).exp());
        changed += u32::from(saw);
        checks.push(Check {
            at_days: f64::from(day),
            changed: Some(saw),
            last_modified_days: None,
        });
    }
    let evidence = Evidence {
        checks,
        ..Default::default()
    };
    let posterior = estimate::estimate(&evidence, &Prior::default());
    println!(
        "true rate {true_rate:.2}/day; naive X/T {:.2}/day",
        f64::from(changed) / 60.0
    );
    println!(
        "freshet: {:.2}/day (90% interval {:.2} .. {:.2})",
        posterior.rate_per_day, posterior.low, posterior.high
    );
}
