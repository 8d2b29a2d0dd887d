//! Tests of the planner against the reference numbers of DESIGN.md (Cho & Garcia-Molina 2003).

use super::*;

fn pages(rates: &[f64]) -> Vec<PlanPage> {
    rates
        .iter()
        .map(|&r| PlanPage {
            rate_per_day: r,
            weight: 1.0,
            host: 0,
            max_visits_per_day: f64::INFINITY,
        })
        .collect()
}

fn budget(b: f64) -> Limits {
    Limits {
        budget_per_day: b,
        host_limits_per_day: vec![],
    }
}

fn assert_close(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= tol, "got {got:?}, want {want:?}");
    }
}

#[test]
fn formulas_match_the_reference_values() {
    assert!((expected_age_days(1.0 / 7.0, 7.0) - 2.575).abs() < 5e-4);
    assert!((p_stale(1.0, 1.0) - (1.0 - (-1.0f64).exp())).abs() < 1e-12);
    // Small arguments take the series path and agree with the closed form.
    let (l, i) = (1e-4_f64, 1.0_f64);
    let closed = i / 2.0 - 1.0 / l + (1.0 - (-l * i).exp()) / (l * l * i);
    assert!((time_averaged_age(l, i) - l * i * i / 6.0).abs() < 1e-9);
    assert!((time_averaged_age(l, i) - closed).abs() < 1e-6);
    assert!((freshness(2.0, 0.5) - (1.0 - (-1.0f64).exp())).abs() < 1e-12);
    assert!(time_averaged_age(1.0, f64::INFINITY).is_infinite());
    assert_eq!(freshness(1.0, f64::INFINITY), 0.0);
}

#[test]
fn age_optimal_matches_cho_garcia_molina() {
    let p = pages(&[1.0, 2.0, 3.0, 4.0, 5.0]);
    let f = solve(Policy::AgeOptimal, &p, &budget(5.0), Objective::Age);
    assert_close(&f, &[0.835, 0.968, 1.034, 1.071, 1.093], 5e-4);
    assert!((f.iter().sum::<f64>() - 5.0).abs() < 1e-6);
    let (age, _) = mean_age_and_freshness(&p, &f);
    assert!((age - 0.2503).abs() < 5e-5, "mean age {age}");
}

#[test]
fn baselines_match_cho_garcia_molina() {
    let p = pages(&[1.0, 2.0, 3.0, 4.0, 5.0]);
    let uniform = solve(Policy::Uniform, &p, &budget(5.0), Objective::Age);
    assert_close(&uniform, &[1.0; 5], 1e-9);
    assert!((mean_age_and_freshness(&p, &uniform).0 - 0.2543).abs() < 5e-5);
    let prop = solve(Policy::Proportional, &p, &budget(5.0), Objective::Age);
    assert_close(
        &prop,
        &[1.0 / 3.0, 2.0 / 3.0, 1.0, 4.0 / 3.0, 5.0 / 3.0],
        1e-9,
    );
    assert!((mean_age_and_freshness(&p, &prop).0 - 0.3730).abs() < 5e-5);
}

#[test]
fn freshness_optimal_gives_up_on_the_fastest_page() {
    let p = pages(&[1.0, 2.0, 3.0, 4.0, 5.0]);
    let f = solve(Policy::AgeOptimal, &p, &budget(5.0), Objective::Freshness);
    assert_close(&f, &[1.150, 1.358, 1.354, 1.138, 0.0], 5e-4);
}

#[test]
fn host_limits_bind_and_the_rest_goes_elsewhere() {
    let mut p = pages(&[1.0, 2.0, 3.0, 4.0, 5.0]);
    for page in &mut p[3..] {
        page.host = 1;
    }
    let limits = Limits {
        budget_per_day: 5.0,
        host_limits_per_day: vec![f64::INFINITY, 1.0],
    };
    let (f, mult) = solve_full(Policy::AgeOptimal, &p, &limits, Objective::Age);
    assert!((f[3] + f[4] - 1.0).abs() < 1e-6, "{f:?}");
    assert!((f.iter().sum::<f64>() - 5.0).abs() < 1e-6);
    assert!(mult.host_mu[1] > mult.mu && mult.host_mu[0] == 0.0);
    for (page, &rate) in p.iter().zip(&f) {
        assert_eq!(rate_for(page, &mult), rate);
    }
    let uniform = solve(Policy::Uniform, &p, &limits, Objective::Age);
    assert_close(&uniform, &[4.0 / 3.0, 4.0 / 3.0, 4.0 / 3.0, 0.5, 0.5], 1e-9);
}

#[test]
fn caps_are_floors_on_the_interval() {
    let mut p = pages(&[1.0, 2.0, 3.0, 4.0, 5.0]);
    p[4].max_visits_per_day = 0.5;
    let f = solve(Policy::AgeOptimal, &p, &budget(5.0), Objective::Age);
    assert!((f[4] - 0.5).abs() < 1e-12);
    assert!((f.iter().sum::<f64>() - 5.0).abs() < 1e-6);
    // A budget larger than every cap allows is left unspent.
    let all_capped: Vec<PlanPage> = p
        .iter()
        .map(|x| PlanPage {
            max_visits_per_day: 1.0,
            ..*x
        })
        .collect();
    let f = solve(
        Policy::AgeOptimal,
        &all_capped,
        &budget(50.0),
        Objective::Age,
    );
    assert_close(&f, &[1.0; 5], 1e-12);
}

#[test]
fn age_never_gives_up_and_weights_matter() {
    let mut p = pages(&[0.001, 1.0, 1000.0]);
    p[1].weight = 0.0;
    let f = solve(Policy::AgeOptimal, &p, &budget(1.0), Objective::Age);
    assert!(f[0] > 0.0 && f[2] > 0.0);
    assert_eq!(f[1], 0.0);
    assert!(f.iter().sum::<f64>() <= 1.0 + 1e-9);
}

#[test]
fn degenerate_inputs_do_not_panic() {
    assert!(solve(Policy::AgeOptimal, &[], &budget(5.0), Objective::Age).is_empty());
    let f = solve(
        Policy::AgeOptimal,
        &pages(&[1.0, 2.0]),
        &budget(0.0),
        Objective::Age,
    );
    assert_close(&f, &[0.0, 0.0], 0.0);
    let nan = pages(&[f64::NAN, 1.0]);
    let f = solve(Policy::AgeOptimal, &nan, &budget(1.0), Objective::Age);
    assert_eq!(f[0], 0.0);
    assert!((f[1] - 1.0).abs() < 1e-9);
}

#[test]
fn runs_of_identical_pages_are_planned_as_the_pages_themselves() {
    // Three runs over two hosts, one capped and a host at its limit: the runs' plan is the plan
    // of every page written out, for each policy and objective.
    let run = |rate: f64, weight: f64, host: usize, cap: f64| PlanPage {
        rate_per_day: rate,
        weight,
        host,
        max_visits_per_day: cap,
    };
    let runs = [
        run(0.5, 1.0, 0, f64::INFINITY),
        run(3.0, 0.5, 0, 0.2),
        run(0.05, 1.0, 1, f64::INFINITY),
        run(2.0, 1.0, 1, f64::INFINITY),
    ];
    let counts = [1_000, 7, 0, 40];
    let written_out: Vec<PlanPage> = runs
        .iter()
        .zip(counts)
        .flat_map(|(p, c)| std::iter::repeat_n(*p, c as usize))
        .collect();
    let limits = Limits {
        budget_per_day: 300.0,
        host_limits_per_day: vec![f64::INFINITY, 30.0],
    };
    for (policy, objective) in [
        (Policy::AgeOptimal, Objective::Age),
        (Policy::AgeOptimal, Objective::Freshness),
        (Policy::Uniform, Objective::Age),
        (Policy::Proportional, Objective::Age),
    ] {
        let (by_run, run_mult) = solve_runs(policy, &runs, &counts, &limits, objective);
        let (each, mult) = solve_full(policy, &written_out, &limits, objective);
        assert!(
            (run_mult.mu - mult.mu).abs() <= 1e-9 * mult.mu,
            "{policy:?} {objective:?}: μ {} against {}",
            run_mult.mu,
            mult.mu
        );
        let mut page = 0;
        for (r, &c) in counts.iter().enumerate() {
            for _ in 0..c {
                assert!(
                    (by_run[r] - each[page]).abs() <= 1e-9 * each[page].max(1e-12),
                    "{policy:?} {objective:?}: run {r} {} against {}",
                    by_run[r],
                    each[page]
                );
                page += 1;
            }
        }
        let spent: f64 = by_run
            .iter()
            .zip(counts)
            .map(|(f, c)| f * f64::from(c))
            .sum();
        assert!(spent <= limits.budget_per_day * (1.0 + 1e-9), "{spent}");
    }
}
