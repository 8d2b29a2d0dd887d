//! Small worlds where the ordering of policies must hold (no timing).

use super::*;

fn small(signals: f64, seed: u64) -> Report {
    run(&SimConfig {
        world: WorldConfig {
            pages: 2000,
            hosts: 20,
            days: 40.0,
            signals,
            seed,
            ..Default::default()
        },
        warmup_days: 15.0,
    })
}

#[test]
fn freshet_learns_close_to_the_oracle_and_beats_the_baselines() {
    let r = small(0.0, 5);
    let age = |name: &str| r.policies[name].mean_age_days;
    assert!(age("oracle") <= age("uniform"), "{r:?}");
    assert!(age("freshet") < age("uniform"), "{r:?}");
    assert!(age("freshet") < 1.25 * age("oracle"), "{r:?}");
    assert!(age("freshet") < age("nutch") / 2.0, "{r:?}");
    assert!(age("uniform") < age("proportional"), "{r:?}");
    let budget = 0.5 * 2000.0 * 25.0;
    for (name, res) in &r.policies {
        assert!(
            res.fetches as f64 <= 1.01 * budget,
            "{name} used {} > {budget}",
            res.fetches
        );
    }
}

#[test]
fn feeds_put_freshet_below_the_oracle() {
    let r = small(0.3, 1);
    assert!(
        r.policies["freshet"].mean_age_days < r.policies["oracle"].mean_age_days,
        "{r:?}"
    );
}

#[test]
fn runs_are_deterministic() {
    assert_eq!(small(0.1, 9), small(0.1, 9));
}
