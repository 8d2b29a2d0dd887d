//! The log density of a rate posterior in `u = ln λ` for one URL's evidence, with its slope and
//! mode (see [`super`] for the model), and the changed-only checks it sums over.

use super::TAIL_NATS;

/// Changed-only checks that saw a change `t` days after the previous check, `n` times.
pub(super) struct Bin {
    /// Days between the check and the one before it.
    pub(super) t: f64,
    /// How many such checks (a [`Stats`] bin merges intervals within 1%).
    pub(super) n: f64,
    /// `ln t`, so that short intervals cost no logarithm (see [`LogPosterior::value`]).
    pub(super) ln_t: f64,
}

/// `ℓ(u)` and its derivatives for one URL's evidence.
pub(super) struct LogPosterior<'a> {
    /// Prior shape plus exactly timed changes.
    pub(super) a: f64,
    /// Prior rate plus exposure, days (> 0, which keeps the posterior proper).
    pub(super) b: f64,
    /// Changed-only checks.
    pub(super) bins: &'a [Bin],
}

/// Beyond this `x = λt`, `ln(1 - e^{-x}) > -e^{-40}`: nothing a double can add to the sum.
const FLAT_X: f64 = 40.0;

/// Below this `x`, `ln(1 - e^{-x})` comes from its series in `x` (error below `x⁶ / 181440`,
/// 1e-13).
const SERIES_X: f64 = 0.05;

/// Above this `x`, `ln(1 - e^{-x})` comes from its series in `e^{-x}` (error below `e^{-4x} / 4`,
/// 3e-15).
const TAIL_X: f64 = 8.0;

impl LogPosterior<'_> {
    /// `ℓ(u)`, the log density in `u = ln λ` up to a constant. This is the cost of a posterior
    /// (once per node and bin), so intervals far from the rate's own time scale skip the
    /// transcendental functions.
    pub(super) fn value(&self, u: f64) -> f64 {
        let l = u.exp();
        let mut s = self.a * u - self.b * l;
        for bin in self.bins {
            let x = l * bin.t;
            if x < SERIES_X {
                // ln(1 - e^{-x}) = ln x - x/2 + x²/24 - x⁴/2880 + ...
                let x2 = x * x;
                s += bin.n * (u + bin.ln_t - x / 2.0 + x2 / 24.0 - x2 * x2 / 2880.0);
            } else if x < TAIL_X {
                s += bin.n * (-(-x).exp_m1()).ln();
            } else if x < FLAT_X {
                // ln(1 - e) = -(e + e²/2 + e³/3 + ...) with e = e^{-x} < 3.4e-4.
                let e = (-x).exp();
                s -= bin.n * e * (1.0 + e * (0.5 + e / 3.0));
            }
        }
        s
    }

    /// `(ℓ'(u), ℓ''(u))`.
    pub(super) fn slope(&self, u: f64) -> (f64, f64) {
        let l = u.exp();
        let (mut d1, mut d2) = (self.a - self.b * l, -self.b * l);
        for &Bin { t, n, .. } in self.bins {
            let x = l * t;
            if x >= FLAT_X {
                continue;
            }
            // φ(x) = x / (e^x - 1) and x φ'(x) = x (e^x - 1 - x e^x) / (e^x - 1)².
            let (phi, x_dphi) = if x < 1e-4 {
                (1.0 - x / 2.0 + x * x / 12.0, -x / 2.0 + x * x / 6.0)
            } else {
                let em1 = x.exp_m1();
                (x / em1, x * (em1 - x * (em1 + 1.0)) / (em1 * em1))
            };
            d1 += n * phi;
            d2 += n * x_dphi;
        }
        (d1, d2)
    }

    /// The mode in `u`: `ℓ'` falls from `A + Σ n_i > 0` to `-∞`, so Newton safeguarded by a
    /// bracket (expanded or bisected when a step leaves it) finds its one root.
    pub(super) fn mode(&self) -> f64 {
        let changes: f64 = self.bins.iter().map(|bin| bin.n).sum();
        let exposure: f64 = self.bins.iter().map(|bin| bin.t * bin.n).sum::<f64>() + self.b;
        let mut u = ((self.a + changes) / exposure).ln();
        let (mut lo, mut hi) = (f64::NEG_INFINITY, f64::INFINITY);
        for _ in 0..200 {
            let (d1, d2) = self.slope(u);
            if d1 > 0.0 {
                lo = u;
            } else {
                hi = u;
            }
            // A step of at most e^4 in rate: where the likelihood is flat, ℓ'' is tiny.
            let newton = -d1 / d2;
            let mut next = u + if newton.is_finite() {
                newton.clamp(-4.0, 4.0)
            } else {
                4.0_f64.copysign(d1)
            };
            if !(next > lo && next < hi) {
                next = match (lo.is_finite(), hi.is_finite()) {
                    (true, true) => 0.5 * (lo + hi),
                    (true, false) => lo + 2.0,
                    _ => hi - 2.0,
                };
            }
            let done = (next - u).abs() < 1e-12 * (1.0 + u.abs()) || hi - lo < 1e-12;
            u = next;
            if done {
                break;
            }
        }
        u
    }

    /// Where `ℓ` has fallen [`TAIL_NATS`] below `ℓ(mode)`, walking from the mode in `direction`
    /// (±1): first to where the Gaussian with the mode's curvature would cross (`scale` is its
    /// standard deviation), doubling the step until outside, then bisecting a few times; a point
    /// at or beyond the crossing (by at most 1/16 of the distance).
    pub(super) fn tail_end(&self, mode: f64, peak: f64, scale: f64, direction: f64) -> f64 {
        let floor = peak - TAIL_NATS;
        let (mut inside, mut outside) = (0.0, (2.0 * TAIL_NATS).sqrt() * scale);
        for _ in 0..64 {
            if self.value(mode + direction * outside) < floor {
                break;
            }
            inside = outside;
            outside *= 2.0;
        }
        for _ in 0..4 {
            let mid = 0.5 * (inside + outside);
            if self.value(mode + direction * mid) < floor {
                outside = mid;
            } else {
                inside = mid;
            }
        }
        mode + direction * outside
    }
}
