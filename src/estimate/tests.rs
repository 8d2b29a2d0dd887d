//! Tests that would fail if an estimator were biased: each simulates a page with a known rate.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp};

use super::*;

/// Poisson change times on [0, days).
fn changes(rng: &mut StdRng, rate: f64, days: f64) -> Vec<f64> {
    let gap = Exp::new(rate).unwrap();
    let mut t = 0.0;
    let mut out = Vec::new();
    loop {
        t += gap.sample(rng);
        if t >= days {
            return out;
        }
        out.push(t);
    }
}

/// Checks at `times` of a page changing at `change_times`, with Last-Modified if `lm`.
fn observe(change_times: &[f64], times: &[f64], lm: bool) -> Vec<Check> {
    let mut prev = f64::NEG_INFINITY;
    times
        .iter()
        .map(|&t| {
            let last = change_times.partition_point(|&c| c <= t);
            let last_change = last.checked_sub(1).map(|i| change_times[i]);
            let changed = last_change.is_some_and(|c| c > prev);
            prev = t;
            Check {
                at_days: t,
                changed: Some(changed),
                last_modified_days: if lm {
                    Some(last_change.unwrap_or(-1.0))
                } else {
                    None
                },
            }
        })
        .collect()
}

#[test]
fn regular_intervals_are_unbiased_where_the_naive_ratio_is_37_percent_low() {
    let mut rng = StdRng::seed_from_u64(7);
    let (rate, interval, n) = (1.0, 1.0, 5000);
    let times: Vec<f64> = (0..=n).map(|i| i as f64 * interval).collect();
    let ch = changes(&mut rng, rate, n as f64 + 1.0);
    let checks = observe(&ch, &times, false);
    let x = checks[1..]
        .iter()
        .filter(|c| c.changed == Some(true))
        .count() as u32;
    let naive = x as f64 / (n as f64 * interval);
    assert!(naive < 0.66 * rate, "naive {naive}");
    let est = regular_interval_rate(n, x, interval);
    assert!((est - rate).abs() < 0.04 * rate, "regular {est}");
    // The full posterior, from the same checks, agrees.
    let post = estimate(
        &Evidence {
            checks,
            ..Default::default()
        },
        &Prior::default(),
    );
    assert!(
        (post.rate_per_day - rate).abs() < 0.04 * rate,
        "posterior {post:?}"
    );
    assert!(post.low < rate && rate < post.high);
}

#[test]
fn irregular_intervals_mle_finds_the_rate() {
    let mut rng = StdRng::seed_from_u64(11);
    let rate = 0.8;
    let mut t = 0.0;
    let mut times = vec![0.0];
    for _ in 0..4000 {
        t += rng.random_range(0.05..4.0);
        times.push(t);
    }
    let ch = changes(&mut rng, rate, t + 1.0);
    let checks = observe(&ch, &times, false);
    let (mut changed, mut unchanged) = (Vec::new(), Vec::new());
    for w in checks.windows(2) {
        let dt = w[1].at_days - w[0].at_days;
        if w[1].changed == Some(true) {
            changed.push(dt)
        } else {
            unchanged.push(dt)
        }
    }
    let mle = irregular_mle(&changed, &unchanged).unwrap();
    assert!((mle - rate).abs() < 0.05 * rate, "mle {mle}");
    let naive = changed.len() as f64 / t;
    assert!(naive < 0.8 * rate, "naive {naive}");
    let post = estimate(
        &Evidence {
            checks,
            ..Default::default()
        },
        &Prior::default(),
    );
    assert!(
        (post.rate_per_day - mle).abs() < 0.01 * mle,
        "{post:?} vs {mle}"
    );
    assert_eq!(irregular_mle(&[1.0], &[]), None);
    assert_eq!(irregular_mle(&[], &[1.0]), Some(0.0));
}

#[test]
fn last_modified_estimator_of_cho_and_garcia_molina() {
    let mut rng = StdRng::seed_from_u64(3);
    let (rate, interval, n) = (2.0, 1.0, 3000u32);
    let times: Vec<f64> = (0..=n).map(|i| f64::from(i) * interval).collect();
    let ch = changes(&mut rng, rate, f64::from(n) + 1.0);
    let checks = observe(&ch, &times, true);
    let (mut x, mut exposure) = (0u32, 0.0);
    for w in checks.windows(2) {
        if w[1].changed == Some(true) {
            x += 1;
            exposure += w[1].at_days - w[1].last_modified_days.unwrap();
        } else {
            exposure += interval;
        }
    }
    let est = last_modified_rate(n, x, exposure);
    assert!((est - rate).abs() < 0.05 * rate, "lm {est}");
    let naive = f64::from(x) / (f64::from(n) * interval);
    assert!(naive < 0.9 * rate, "naive {naive}");
    // With λI = 2 the change-only estimator has little to go on; Last-Modified does better.
    let post = estimate(
        &Evidence {
            checks,
            ..Default::default()
        },
        &Prior::default(),
    );
    assert!((post.rate_per_day - rate).abs() < 0.05 * rate, "{post:?}");
    assert_eq!(last_modified_rate(5, 5, 2.0), 2.0);
}

#[test]
fn feed_events_are_conjugate() {
    let evidence = Evidence {
        exact: Stats {
            events: 30.0,
            exposure_days: 10.0,
            changed_intervals: vec![],
        },
        ..Default::default()
    };
    let prior = Prior {
        shape: 1.0,
        rate: 1.0,
    };
    let post = estimate(&evidence, &prior);
    assert!((post.shape - 31.0).abs() < 1e-12 && (post.rate - 11.0).abs() < 1e-12);
    assert!((post.rate_per_day - 31.0 / 11.0).abs() < 1e-12);
}

#[test]
fn posterior_intervals_cover_the_truth() {
    let mut rng = StdRng::seed_from_u64(99);
    let prior = Prior {
        shape: 1.0,
        rate: 2.0,
    };
    let draw = rand_distr::Gamma::new(prior.shape, 1.0 / prior.rate).unwrap();
    let (mut covered, trials) = (0, 600);
    for _ in 0..trials {
        let rate: f64 = draw.sample(&mut rng).max(1e-6);
        let mut t = 0.0;
        let mut times = vec![0.0];
        for _ in 0..15 {
            t += rng.random_range(0.2..2.0);
            times.push(t);
        }
        let ch = changes(&mut rng, rate, t + 1.0);
        let lm = rng.random_bool(0.3);
        let checks = observe(&ch, &times, lm);
        let post = estimate(
            &Evidence {
                checks,
                ..Default::default()
            },
            &prior,
        );
        assert!(post.rate_per_day > 0.0 && post.low <= post.rate_per_day);
        if post.low <= rate && rate <= post.high {
            covered += 1;
        }
    }
    let coverage = covered as f64 / trials as f64;
    assert!(
        (0.85..=0.95).contains(&coverage),
        "90% intervals covered {coverage}"
    );
}

#[test]
fn hints_are_weak_and_estimates_never_zero() {
    let none = estimate(&Evidence::default(), &Prior::default());
    assert!((none.rate_per_day - Prior::default().mean()).abs() < 1e-12);
    let hinted = Evidence {
        changefreq_per_day: changefreq_per_day("hourly"),
        ..Default::default()
    };
    assert!((estimate(&hinted, &Prior::default()).rate_per_day - 24.0).abs() < 1e-9);
    // 30 unchanged daily checks outweigh an "hourly" hint.
    let checks = (0..=30)
        .map(|i| Check {
            at_days: f64::from(i),
            changed: Some(false),
            last_modified_days: None,
        })
        .collect();
    let e = estimate(
        &Evidence {
            checks,
            ..hinted.clone()
        },
        &Prior::default(),
    );
    assert!(e.rate_per_day > 0.0 && e.rate_per_day < 0.1, "{e:?}");
    let ttl = Evidence {
        feed_ttl_days: Some(1.0),
        ..hinted
    };
    assert!(estimate(&ttl, &Prior::default()).rate_per_day <= 1.0 + 1e-9);
    // Every check changed: still finite.
    let all: Vec<Check> = (0..=10)
        .map(|i| Check {
            at_days: f64::from(i),
            changed: Some(true),
            last_modified_days: None,
        })
        .collect();
    let e = estimate(
        &Evidence {
            checks: all,
            ..Default::default()
        },
        &Prior::default(),
    );
    assert!(e.rate_per_day.is_finite() && e.rate_per_day > 1.0, "{e:?}");
}
