//! A posterior tabulated on a grid uniform in `u = ln λ`: built over the span where the log
//! density is within [`super::TAIL_NATS`] of its maximum, expectations by the trapezoid rule, the
//! CDF and quantiles as piecewise exponential in `u` (see [`super`]).

use super::log_density::LogPosterior;

/// The posterior tabulated at `u_j = u_0 + j h`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Grid {
    /// `u_0`, the log rate of the first node.
    pub(super) u0: f64,
    /// `h`, the spacing in log rate.
    pub(super) step: f64,
    /// `λ_j = e^{u_j}`, kept because expectations need them at every call.
    pub(super) rates: Vec<f64>,
    /// Log density in `u` at each node, minus its maximum (so at most 0).
    pub(super) log_density: Vec<f64>,
    /// Trapezoid weights summing to 1: `E[g(λ)] ≈ Σ w_j g(λ_j)`.
    pub(super) weights: Vec<f64>,
    /// Mass below each node (0 at the first, 1 at the last), integrating the density as
    /// log-linear between nodes with a correction for the curvature of the log density.
    pub(super) cdf: Vec<f64>,
}

impl Grid {
    /// The grid of `post` with `extra(u)` added to its log density (a change of prior: it must
    /// not move the mass far beyond where `post` has it, since the grid spans only that), within
    /// `bounds` in `u` (where the new prior has its mass) unless `post` has none there.
    pub(super) fn new(
        post: &LogPosterior<'_>,
        nodes: usize,
        extra: impl Fn(f64) -> f64,
        bounds: (f64, f64),
    ) -> Self {
        let mode = post.mode();
        let peak = post.value(mode);
        let (_, d2) = post.slope(mode);
        // The standard deviation of the Gaussian with the mode's curvature, within reason.
        let scale = if d2 < 0.0 && d2.is_finite() {
            (-1.0 / d2).sqrt().clamp(1e-6, 1.0)
        } else {
            1.0
        };
        let mut lo = post.tail_end(mode, peak, scale, -1.0);
        let mut hi = post.tail_end(mode, peak, scale, 1.0);
        if lo.max(bounds.0) < hi.min(bounds.1) {
            (lo, hi) = (lo.max(bounds.0), hi.min(bounds.1));
        }
        let step = (hi - lo) / (nodes - 1) as f64;
        let rates: Vec<f64> = (0..nodes).map(|j| (lo + step * j as f64).exp()).collect();
        let mut log_density: Vec<f64> = (0..nodes)
            .map(|j| {
                let u = lo + step * j as f64;
                post.value(u) + extra(u)
            })
            .collect();
        let top = log_density
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        for v in &mut log_density {
            // Below e^{-700} a node holds nothing; the floor keeps the log-linear pieces finite.
            *v = (*v - top).max(-700.0);
        }
        let density: Vec<f64> = log_density.iter().map(|v| v.exp()).collect();
        let mut weights = density.clone();
        weights[0] *= 0.5;
        weights[nodes - 1] *= 0.5;
        let total: f64 = weights.iter().sum();
        for w in &mut weights {
            *w /= total;
        }
        // Second differences of ℓ: the curvature the log-linear pieces leave out.
        let curvature: Vec<f64> = (0..nodes)
            .map(|j| {
                let mid = j.clamp(1, nodes.saturating_sub(2).max(1));
                match (log_density.get(mid - 1), log_density.get(mid + 1)) {
                    (Some(before), Some(after)) => before - 2.0 * log_density[mid] + after,
                    _ => 0.0,
                }
            })
            .collect();
        let mut cdf = Vec::with_capacity(nodes);
        let mut acc = 0.0;
        cdf.push(0.0);
        for j in 1..nodes {
            let linear = log_mean(
                density[j - 1],
                density[j],
                log_density[j] - log_density[j - 1],
            );
            // ℓ = chord + κ v (v - h) / 2 on the piece adds -κ h² / 12 of its mass.
            let bend = (1.0 - (curvature[j - 1] + curvature[j]) / 24.0).clamp(0.5, 2.0);
            acc += step * linear * bend;
            cdf.push(acc);
        }
        for c in &mut cdf {
            *c /= acc;
        }
        Self {
            u0: lo,
            step,
            rates,
            log_density,
            weights,
            cdf,
        }
    }

    /// Whether the density in `λ` (`e^{ℓ(u)} / λ`) is highest at the first node: the lowest
    /// rates the grid holds are the likeliest. The grid holds nothing below its first node, so
    /// this is a density highest at 0 cut where the prior's grid ends (a population's slowest
    /// rate, once in 27 years, stands for everything slower down to never) or where it became
    /// negligible.
    pub(super) fn density_highest_at_lowest_rate(&self) -> bool {
        let in_rate = |j: usize| self.log_density[j] - (self.u0 + self.step * j as f64);
        let first = in_rate(0);
        (1..self.log_density.len()).all(|j| in_rate(j) <= first)
    }

    /// `E[g(λ, t)]`, 0 when `t` is not positive.
    pub(super) fn expect(&self, t: f64, g: impl Fn(f64, f64) -> f64) -> f64 {
        if t.is_nan() || t <= 0.0 {
            return 0.0;
        }
        self.weights
            .iter()
            .zip(&self.rates)
            .map(|(w, &l)| w * g(l, t))
            .sum()
    }

    pub(super) fn quantile(&self, p: f64) -> f64 {
        if p.is_nan() || p <= 0.0 {
            return 0.0;
        }
        if p >= 1.0 {
            return f64::INFINITY;
        }
        // The cell [j, j + 1] with cdf[j] ≤ p < cdf[j + 1].
        let j = self
            .cdf
            .partition_point(|&c| c <= p)
            .clamp(1, self.cdf.len() - 1)
            - 1;
        let width = self.cdf[j + 1] - self.cdf[j];
        let fraction = if width > 0.0 {
            (p - self.cdf[j]) / width
        } else {
            0.0
        };
        // Within the piece, the log-linear shape places the quantile (its curvature only
        // rescaled the piece's mass).
        let (l0, l1) = (self.log_density[j], self.log_density[j + 1]);
        let (f0, f1) = (l0.exp(), l1.exp());
        let mass = fraction * self.step * log_mean(f0, f1, l1 - l0);
        let k = (l1 - l0) / self.step;
        // ∫_0^s f0 e^{k v} dv = f0 (e^{ks} - 1) / k = mass.
        let s = if (k * self.step).abs() < 1e-9 {
            mass / f0
        } else {
            (k * mass / f0).ln_1p() / k
        };
        let s = if s.is_finite() {
            s.clamp(0.0, self.step)
        } else {
            self.step
        };
        (self.u0 + self.step * j as f64 + s).exp()
    }
}

/// `∫_0^1 f_0^{1-v} f_1^v dv = (f_1 - f_0) / ln(f_1 / f_0)`, the mass of a log-linear piece
/// (per unit width) with `diff = ln f_1 - ln f_0`.
fn log_mean(f0: f64, f1: f64, diff: f64) -> f64 {
    if diff.abs() < 1e-9 {
        0.5 * (f0 + f1)
    } else {
        (f1 - f0) / diff
    }
}
