//! The exact posterior of one URL's change rate, tabulated (pure: no clock, database or network).
//!
//! With a Gamma(a, b) prior, `k` exactly timed changes in exposure `T` and `n_i` checks that saw
//! a change `t_i` days after the previous one, the posterior density of the rate is
//!
//! ```text
//! p(λ) ∝ λ^{A-1} e^{-Bλ} Π_i (1 - e^{-λ t_i})^{n_i},   A = a + k, B = b + T.
//! ```
//!
//! Without changed-only checks it is exactly Gamma(A, B) and every summary has a closed form
//! ([`Prior`]'s methods). Otherwise it is tabulated on a grid uniform in `u = ln λ`, where the
//! density `e^{ℓ(u)}`, `ℓ(u) = A u - B e^u + Σ n_i ln(1 - e^{-e^u t_i})` (the Jacobian `λ` folded
//! into `λ^A`), is log-concave: `ℓ'' = -Bλ + Σ n_i x φ'(x) < 0` with `x = λ t_i` and
//! `φ(x) = x / (e^x - 1)` decreasing. So the mode is found by safeguarded Newton on `ℓ'`, the grid
//! spans the interval where `ℓ` is within [`TAIL_NATS`] of its maximum (everything beyond is below
//! `e^{-TAIL_NATS}` of the mass), and nothing is assumed about the shape in between: when every
//! check saw a change the likelihood is flat towards `λ = ∞` and the posterior is as wide as the
//! prior allows there, which a Gamma fitted at the mode cannot show.
//!
//! Expectations use the trapezoid rule on the grid (for a smooth density that decays at both ends
//! it converges geometrically in the number of nodes); the CDF integrates the density as
//! piecewise exponential in `u` (log-linear between nodes), which also inverts in closed form for
//! quantiles.

mod grid;
mod log_density;

use super::{Prior, Stats};
use grid::Grid;
use log_density::{Bin, LogPosterior};

/// Nodes of the grid in `u = ln λ`. A Gaussian-shaped posterior in `u` spans `±√(2 · 36) = ±8.5`
/// standard deviations, 5.6 nodes to each; skewed ones (every check changed) are resolved better
/// where their mass is. Expectations then agree with a grid 32 times finer to 1e-9 and quantiles
/// to 2e-4 (relative; the tests check both), and a posterior with 20 bins costs ~30 µs.
pub const GRID_NODES: usize = 96;

/// How far (in nats of log density) below its maximum the grid reaches at each end.
pub const TAIL_NATS: f64 = 36.0;

/// A change-rate posterior: exactly Gamma, or tabulated in `ln λ`.
#[derive(Debug, Clone, PartialEq)]
pub struct Posterior {
    /// The form and its data.
    form: Form,
    /// Posterior mean, changes per day.
    mean: f64,
    /// Posterior variance.
    variance: f64,
}

#[derive(Debug, Clone, PartialEq)]
enum Form {
    /// No changed-only checks: the conjugate posterior.
    Gamma(Prior),
    /// The general case.
    Grid(Grid),
}

impl Posterior {
    /// The posterior of a rate given sufficient statistics and a Gamma prior (a shape or rate
    /// that is not positive is taken as a tiny positive number, as in [`super::RateEstimate`]).
    pub fn new(stats: &Stats, prior: &Prior) -> Self {
        Self::with_nodes(stats, prior, GRID_NODES)
    }

    /// [`Posterior::new`] on a grid of `nodes` (≥ 2) nodes.
    fn with_nodes(stats: &Stats, prior: &Prior, nodes: usize) -> Self {
        let a = positive_or(prior.shape, 1e-6) + stats.events.max(0.0);
        let b = positive_or(prior.rate, 1e-9) + stats.exposure_days.max(0.0);
        let bins = bins_of(stats);
        if bins.is_empty() {
            let gamma = Prior { shape: a, rate: b };
            return Self {
                mean: gamma.mean(),
                variance: gamma.variance(),
                form: Form::Gamma(gamma),
            };
        }
        let everywhere = (f64::NEG_INFINITY, f64::INFINITY);
        let post = LogPosterior { a, b, bins: &bins };
        let grid = Grid::new(&post, nodes.max(2), |_| 0.0, everywhere);
        Self::from_grid(grid)
    }

    fn from_grid(grid: Grid) -> Self {
        let mean: f64 = grid
            .weights
            .iter()
            .zip(&grid.rates)
            .map(|(w, l)| w * l)
            .sum();
        let variance: f64 = grid
            .weights
            .iter()
            .zip(&grid.rates)
            .map(|(w, l)| w * (l - mean) * (l - mean))
            .sum();
        Self {
            form: Form::Grid(grid),
            mean,
            variance,
        }
    }

    /// The posterior of a rate given sufficient statistics and a prior given as its log density
    /// in `u = ln λ` with its mass within `span` (a population of rates: see
    /// [`super::Population::posterior`]): always tabulated, on a grid placed by the evidence
    /// under the default prior, whose density then trades that prior for the given one.
    pub fn with_prior_density(
        stats: &Stats,
        log_density: impl Fn(f64) -> f64,
        span: (f64, f64),
    ) -> Self {
        let reference = Prior::default();
        let a = reference.shape + stats.events.max(0.0);
        let b = reference.rate + stats.exposure_days.max(0.0);
        let bins = bins_of(stats);
        let prior_log_density =
            |u: f64| log_density(u) - (reference.shape * u - reference.rate * u.exp());
        let post = LogPosterior { a, b, bins: &bins };
        let grid = Grid::new(&post, GRID_NODES, prior_log_density, span);
        Self::from_grid(grid)
    }

    /// The posterior under a mixture of Gamma priors, `(weight, prior)` (weights summing to
    /// 1), tabulated within `span` in `u = ln λ`: the evidence weighs the parts by how well
    /// each foretold it (Bayesian model averaging), so a page unlike the part most of the
    /// weight is on moves to the other as its evidence grows.
    pub fn with_gamma_mixture(stats: &Stats, parts: &[(f64, Prior)], span: (f64, f64)) -> Self {
        let log_density = |u: f64| {
            let terms: Vec<f64> = parts
                .iter()
                .map(|(weight, prior)| weight.ln() + prior.log_density_in_log_rate(u))
                .collect();
            let top = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            top + terms.iter().map(|t| (t - top).exp()).sum::<f64>().ln()
        };
        Self::with_prior_density(stats, log_density, span)
    }

    /// Posterior mean, changes per day (> 0).
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// Posterior variance of the rate.
    pub fn variance(&self) -> f64 {
        self.variance
    }

    /// The `p` quantile of the rate (0 for `p ≤ 0`, infinite for `p ≥ 1`).
    pub fn quantile(&self, p: f64) -> f64 {
        match &self.form {
            Form::Gamma(g) => g.quantile(p),
            Form::Grid(grid) => grid.quantile(p),
        }
    }

    /// The 90% credible interval: the central one, between the 5% and 95% quantiles, unless a
    /// site's population of rates (a tabulated posterior) makes the lowest rates the posterior
    /// holds its likeliest: then the central interval would leave out the likeliest 5%, and the
    /// interval is the one from 0 to the 90% quantile, which holds 90% as well and is there the
    /// highest-density one. A central interval there began at a thousandth of a change a day and
    /// left out every page that never changes (the demo's home pages: six of its 136 judged
    /// pages, by construction). A Gamma posterior keeps the central interval even when its shape
    /// is below 1 (its density infinite at 0): that pile-up at 0 is the vague default prior's
    /// shape, not something pages have shown, and an interval from 0 there held the truth less
    /// often (with the default prior, on pages whose rates are log-uniform from 0.01 to 1,000 a
    /// day, `estimate::tests`: 84% to 86% of them, the central interval 88.5% to 89.4%).
    pub fn interval_90(&self) -> (f64, f64) {
        match &self.form {
            Form::Gamma(g) => g.interval_90(),
            Form::Grid(grid) if grid.density_highest_at_lowest_rate() => (0.0, grid.quantile(0.9)),
            Form::Grid(grid) => (grid.quantile(0.05), grid.quantile(0.95)),
        }
    }

    /// Probability that a copy fetched `since_days` ago is stale: `1 - E[e^{-λt}]` (0 for a
    /// time that is not positive).
    pub fn p_stale(&self, since_days: f64) -> f64 {
        match &self.form {
            Form::Gamma(g) => g.p_stale(since_days),
            Form::Grid(grid) => grid.expect(since_days, |l, t| -(-l * t).exp_m1()),
        }
    }

    /// Expected age in days of a copy fetched `since_days` ago: `E[t - (1 - e^{-λt})/λ]` (0 for
    /// a time that is not positive).
    pub fn expected_age_days(&self, since_days: f64) -> f64 {
        match &self.form {
            Form::Gamma(g) => g.expected_age_days(since_days),
            Form::Grid(grid) => grid.expect(since_days, age_given_rate),
        }
    }

    /// The posterior itself when it is a Gamma (no changed-only checks), whose expectations
    /// have closed forms.
    pub fn conjugate(&self) -> Option<Prior> {
        match &self.form {
            Form::Gamma(g) => Some(*g),
            Form::Grid(_) => None,
        }
    }

    /// `E[g(λ)]` on the posterior's grid; None for a Gamma posterior ([`Self::conjugate`]), whose
    /// expectations need closed forms: tabulated, a Gamma of shape far below 1 (a pooled prior
    /// worth a few short intervals) spreads its nodes over hundreds of e-folds and misses the
    /// tail that carries the mean.
    pub fn expect_on_grid(&self, g: impl Fn(f64) -> f64) -> Option<f64> {
        match &self.form {
            Form::Grid(grid) => Some(grid.expect(1.0, |l, _| g(l))),
            Form::Gamma(_) => None,
        }
    }

    /// The Gamma with the same mean and variance (for pooling, storage and the planner); the
    /// posterior itself when it is a Gamma.
    pub fn gamma(&self) -> Prior {
        match &self.form {
            Form::Gamma(g) => *g,
            Form::Grid(_) => Prior {
                shape: self.mean * self.mean / self.variance,
                rate: self.mean / self.variance,
            },
        }
    }
}

/// The changed-only checks of `stats` that carry information.
fn bins_of(stats: &Stats) -> Vec<Bin> {
    stats
        .changed_intervals
        .iter()
        .filter(|&&(t, n)| t > 0.0 && t.is_finite() && n > 0.0 && n.is_finite())
        .map(|&(t, n)| Bin { t, n, ln_t: t.ln() })
        .collect()
}

/// The log-likelihood of the evidence in `stats` at each rate `e^u` of `us` (up to a constant),
/// into `out`.
pub(super) fn log_likelihood(stats: &Stats, us: &[f64], out: &mut Vec<f64>) {
    let bins = bins_of(stats);
    // With A = k and B = T (no prior), ℓ(u) is the log-likelihood: the Jacobian λ and a flat
    // prior in λ cancel to a flat one in u.
    let post = LogPosterior {
        a: stats.events.max(0.0),
        b: stats.exposure_days.max(0.0),
        bins: &bins,
    };
    out.clear();
    out.extend(us.iter().map(|&u| post.value(u)));
}

/// `x` if it is a positive finite number, else `fallback`.
fn positive_or(x: f64, fallback: f64) -> f64 {
    if x > 0.0 && x.is_finite() {
        x
    } else {
        fallback
    }
}

/// Expected age of a copy `t` days old at a known rate (as `plan::expected_age_days`, which this
/// module does not call: data flows from `estimate` to `plan`, not back).
fn age_given_rate(rate: f64, t: f64) -> f64 {
    if t <= 0.0 || rate <= 0.0 {
        return 0.0;
    }
    let x = rate * t;
    if x < 1e-4 {
        // t - (1 - e^{-x})/λ = t (x/2 - x²/6 + ...), which the closed form loses to cancellation.
        return t * x * (0.5 - x / 6.0);
    }
    t + (-x).exp_m1() / rate
}

#[cfg(test)]
mod tests {
    use super::*;
    use statrs::distribution::{Continuous, ContinuousCDF, Gamma};

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    /// `E[g(λ)]` under Gamma(shape, rate) by brute force: the midpoint rule on a fine grid in
    /// `ln λ`, independent of every formula above.
    fn gamma_expectation(shape: f64, rate: f64, g: impl Fn(f64) -> f64) -> f64 {
        let d = Gamma::new(shape, rate).unwrap();
        let (lo, hi, n) = ((1e-12_f64).ln(), (200.0 / rate).ln(), 400_000);
        let h = (hi - lo) / n as f64;
        (0..n)
            .map(|j| {
                let l = (lo + h * (j as f64 + 0.5)).exp();
                d.pdf(l) * l * h * g(l)
            })
            .sum()
    }

    #[test]
    fn without_changed_intervals_it_is_the_conjugate_gamma_in_closed_form() {
        let stats = Stats {
            events: 3.0,
            exposure_days: 10.0,
            changed_intervals: vec![],
        };
        let prior = Prior {
            shape: 0.1,
            rate: 1e-3,
        };
        let post = Posterior::new(&stats, &prior);
        let (a, b) = (3.1, 10.001);
        assert_eq!(post.gamma(), Prior { shape: a, rate: b });
        assert!(rel(post.mean(), a / b) < 1e-12 && rel(post.variance(), a / (b * b)) < 1e-12);
        let d = Gamma::new(a, b).unwrap();
        for p in [0.001, 0.05, 0.5, 0.95, 0.999] {
            assert!(rel(d.cdf(post.quantile(p)), p) < 1e-9, "quantile {p}");
        }
        for t in [1e-6, 0.01, 0.3, 3.0, 100.0] {
            let stale = gamma_expectation(a, b, |l| -(-l * t).exp_m1());
            let age = gamma_expectation(a, b, |l| age_given_rate(l, t));
            assert!(rel(post.p_stale(t), stale) < 1e-6, "p_stale({t})");
            assert!(rel(post.expected_age_days(t), age) < 1e-6, "age({t})");
        }
        // A tiny shape: the far-left quantile is ~1e-14 / rate, below statrs' own tolerance.
        let thin = Prior {
            shape: 0.1,
            rate: 1.0,
        };
        let q = thin.quantile(0.05);
        let d = Gamma::new(0.1, 1.0).unwrap();
        assert!(q > 0.0 && rel(d.cdf(q), 0.05) < 1e-6, "{q}");
    }

    #[test]
    fn the_interval_is_central_unless_the_density_is_highest_at_the_lowest_rates() {
        let gamma = |events: f64, exposure_days: f64, shape: f64, rate: f64| {
            let stats = Stats {
                events,
                exposure_days,
                changed_intervals: vec![],
            };
            Posterior::new(&stats, &Prior { shape, rate })
        };
        // Changes seen: the density rises from 0 to a mode, and the interval is central.
        let seen = gamma(2.0, 1.0, 1.0, 1.0);
        let d = Gamma::new(3.0, 2.0).unwrap();
        let (low, high) = seen.interval_90();
        assert!((d.cdf(low) - 0.05).abs() < 1e-9 && (d.cdf(high) - 0.95).abs() < 1e-9);
        // None seen under a vague prior of shape below 1: still central.
        let quiet = gamma(0.0, 10.0, 0.8, 2.0);
        let (low, high) = quiet.interval_90();
        assert_eq!((low, high), (quiet.quantile(0.05), quiet.quantile(0.95)));
        // Tabulated (changed-only checks): a page that changed is away from 0 (a quiet page
        // under a population holding pages that never change starts at 0, holding 90%:
        // `population::tests::a_quiet_page_has_an_interval_from_zero_where_pages_never_change`).
        let changed = Posterior::new(
            &Stats {
                events: 0.0,
                exposure_days: 4.0,
                changed_intervals: vec![(0.5, 3.0), (2.0, 1.0)],
            },
            &Prior {
                shape: 0.5,
                rate: 0.5,
            },
        );
        assert!(matches!(changed.form, Form::Grid(_)));
        let (low, high) = changed.interval_90();
        assert_eq!(
            (low, high),
            (changed.quantile(0.05), changed.quantile(0.95))
        );
    }

    #[test]
    fn the_grid_reproduces_a_gamma_exactly_enough() {
        // A changed interval of a billion days says nothing (1 - e^{-λt} = 1 wherever the mass
        // is), so the tabulated posterior must be the Gamma itself.
        let stats = Stats {
            events: 2.0,
            exposure_days: 1.5,
            changed_intervals: vec![(1e9, 1.0)],
        };
        let prior = Prior {
            shape: 0.5,
            rate: 0.5,
        };
        let grid = Posterior::new(&stats, &prior);
        assert!(matches!(grid.form, Form::Grid(_)));
        let exact = Prior {
            shape: 2.5,
            rate: 2.0,
        };
        assert!(rel(grid.mean(), exact.mean()) < 1e-9, "{}", grid.mean());
        assert!(rel(grid.variance(), exact.variance()) < 1e-9);
        for p in [0.01, 0.05, 0.5, 0.95, 0.99] {
            let (q, want) = (grid.quantile(p), exact.quantile(p));
            assert!(rel(q, want) < 5e-4, "quantile {p}: {q} vs {want}");
        }
        for t in [0.01, 0.3, 3.0, 100.0] {
            assert!(
                rel(grid.p_stale(t), exact.p_stale(t)) < 1e-9,
                "p_stale({t})"
            );
            let age = (grid.expected_age_days(t), exact.expected_age_days(t));
            assert!(rel(age.0, age.1) < 1e-9, "age({t}): {age:?}");
        }
    }

    #[test]
    fn the_grid_agrees_with_one_32_times_finer() {
        let mut stats = Stats::default();
        for (i, t) in [0.01, 0.04, 0.1, 0.3, 1.0, 2.0].iter().enumerate() {
            stats.add_changed(*t, 1.0 + i as f64);
            stats.add_check(*t, Some(false), None);
        }
        let all_changed = Stats {
            changed_intervals: vec![(1.0 / 24.0, 30.0)],
            ..Default::default()
        };
        let prior = Prior {
            shape: 0.1,
            rate: 1.0 / 1440.0,
        };
        for stats in [stats, all_changed] {
            let (post, fine) = (
                Posterior::new(&stats, &prior),
                Posterior::with_nodes(&stats, &prior, 32 * GRID_NODES),
            );
            assert!(rel(post.mean(), fine.mean()) < 1e-6);
            assert!(rel(post.variance(), fine.variance()) < 1e-6);
            for p in [0.05, 0.5, 0.95] {
                let (q, want) = (post.quantile(p), fine.quantile(p));
                assert!(rel(q, want) < 2e-4, "quantile {p}: {q} vs {want}");
            }
            for t in [0.001, 0.05, 1.0] {
                assert!(rel(post.p_stale(t), fine.p_stale(t)) < 1e-6);
                assert!(rel(post.expected_age_days(t), fine.expected_age_days(t)) < 1e-6);
            }
        }
    }

    /// Prints the cost of one posterior; run with
    /// `cargo test --release --lib estimate::posterior -- --ignored --nocapture`.
    #[test]
    #[ignore = "timing, not a check: prints µs per call"]
    fn cost_per_call() {
        use std::time::Instant;
        let prior = Prior::default();
        let urls: Vec<Stats> = (0..2000)
            .map(|u| {
                let mut s = Stats::default();
                for i in 0..20 {
                    // 20 bins of distinct intervals, some unchanged exposure.
                    let t = 0.01 * 1.3_f64.powi(i) * (1.0 + 0.001 * f64::from(u % 7));
                    s.add_changed(t, 1.0 + f64::from(i % 3));
                    s.add_check(t, Some(false), None);
                }
                s
            })
            .collect();
        assert!(urls.iter().all(|s| s.changed_intervals.len() == 20));
        let mut sum = 0.0;
        for nodes in [64, GRID_NODES, 128, 256] {
            // The best of five rounds: the machine is shared.
            let mut per_call = f64::INFINITY;
            for _ in 0..5 {
                let started = Instant::now();
                for s in &urls {
                    sum += Posterior::with_nodes(s, &prior, nodes).mean();
                }
                per_call = per_call.min(started.elapsed().as_secs_f64() / urls.len() as f64);
            }
            println!(
                "20 bins, {nodes} nodes: {:.1} µs per posterior",
                per_call * 1e6
            );
        }
        let started = Instant::now();
        for s in &urls {
            let (lo, hi) = Posterior::new(s, &prior).interval_90();
            sum += lo + hi;
        }
        let interval = started.elapsed().as_secs_f64() / urls.len() as f64;
        let started = Instant::now();
        for s in &urls {
            sum += super::super::posterior(s, &prior).mean();
        }
        let gamma = started.elapsed().as_secs_f64() / urls.len() as f64;
        println!(
            "20 bins: Posterior::new + interval_90 {:.1} µs, posterior() {:.1} µs (checksum {sum:.3})",
            interval * 1e6,
            gamma * 1e6
        );
    }
}
