//! The per-page cost curves of the planner and their inverses, tabulated once.
//!
//! With `r = λ / f` (expected changes per refresh interval):
//! - age: `g(r) = r²/2 - 1 + (1 + r) e^{-r}`, so that `-d Ā / d f = g(r) / λ²`
//!   (Cho & Garcia-Molina, TODS 2003, age variant). `g` rises from 0 (≈ r³/3) to ∞ (≈ r²/2).
//! - freshness: `h(r) = 1 - (1 + r) e^{-r}`, so that `d F / d f = h(r) / λ`. `h` rises from 0 to 1.
//!
//! The optimum condition needs `g⁻¹` and `h⁻¹` for every page at every bisection step, so both
//! are tabulated on a logarithmic grid and read by interpolation in log-log space (relative error
//! about 1e-6), which is what makes planning millions of URLs a matter of seconds.

use std::sync::OnceLock;

/// `g(r) = r²/2 - 1 + (1 + r) e^{-r}`, computed without cancellation for small `r`.
pub fn g(r: f64) -> f64 {
    if r < 0.1 {
        // Σ_{k≥3} (-1)^{k+1} (k-1)/k! r^k
        let r3 = r * r * r;
        let tail = 1.0 / 144.0 - r * (1.0 / 840.0 - r * (1.0 / 5760.0 - r / 45360.0));
        r3 * (1.0 / 3.0 - r * (1.0 / 8.0 - r * (1.0 / 30.0 - r * tail)))
    } else {
        r * r / 2.0 - 1.0 + (1.0 + r) * (-r).exp()
    }
}

/// `h(r) = 1 - (1 + r) e^{-r}`, computed without cancellation for small `r`.
pub fn h(r: f64) -> f64 {
    if r < 0.1 {
        // Σ_{k≥2} (-1)^k (k-1)/k! r^k
        let r2 = r * r;
        let tail = 1.0 / 30.0 - r * (1.0 / 144.0 - r * (1.0 / 840.0 - r / 5760.0));
        r2 * (0.5 - r * (1.0 / 3.0 - r * (1.0 / 8.0 - r * tail)))
    } else {
        1.0 - (1.0 + r) * (-r).exp()
    }
}

/// `q(r) = g(r) / r²`: the age one more visit a day cuts, `-dĀ/df`, times `f²`. It rises from 0
/// (≈ r/3: a slow page's cut is proportional to its rate) to 1/2 (a page that changes between
/// every two visits: the cut no longer depends on its rate), so it is concave, and a rate
/// known only as a spread of values cuts less than its mean would: see
/// [`super::certainty_equivalent_rate`].
pub fn q(r: f64) -> f64 {
    if r.is_nan() || r <= 0.0 {
        return 0.0;
    }
    if r.is_infinite() {
        return 0.5;
    }
    if r < 0.1 {
        // g's series divided by r².
        let tail = 1.0 / 144.0 - r * (1.0 / 840.0 - r * (1.0 / 5760.0 - r / 45360.0));
        r * (1.0 / 3.0 - r * (1.0 / 8.0 - r * (1.0 / 30.0 - r * tail)))
    } else {
        g(r) / (r * r)
    }
}

/// `E[q(λ t)]` for a rate `λ ~ Gamma(shape α, rate β)`, in closed form. As
/// `q(r) = ∫_0^1 u (1 - e^{-r u}) du` and `E[e^{-λ s}] = (1 + s/β)^{-α}`, with `z = t/β` it is
/// `1/2 - ∫_0^1 u (1 + z u)^{-α} du = 1/2 - (φ(2 - α) - φ(1 - α)) / z²`, `φ(c) = ((1 + z)^c - 1) / c`.
/// Where that cancels (small `z`: both `φ` are about `z`, their difference `z²/2`) it is summed as
/// the series `Σ_k (-1)^{k+1} α(α+1)…(α+k-1) z^k / (k! (k+2))`, whose terms shrink at least
/// twofold while `z` and `(α + 1) z` stay below 1/2. A tabulated Gamma cannot stand in for this
/// when `α ≪ 1` (a pooled prior worth a few short intervals): its grid in `ln λ` then spans
/// hundreds of e-folds, and the tail that carries the mean falls between two nodes.
pub fn q_expected_under_gamma(shape: f64, rate: f64, t: f64) -> f64 {
    if !(shape > 0.0 && rate > 0.0 && t > 0.0) {
        return 0.0;
    }
    let (a, z) = (shape, t / rate);
    if z.is_infinite() || a.is_infinite() {
        return 0.5;
    }
    if z < 0.5 && (a + 1.0) * z < 0.5 {
        // term_k = (-1)^{k+1} α(α+1)…(α+k-1) z^k / k!, over (k + 2).
        let (mut sum, mut term) = (0.0, a * z);
        for k in 1..200 {
            let add = term / (k + 2) as f64;
            sum += add;
            if add.abs() <= 1e-17 * sum.abs() {
                break;
            }
            term *= -(a + k as f64) * z / (k + 1) as f64;
        }
        return sum;
    }
    let ln_1pz = z.ln_1p();
    let phi = |c: f64| {
        let x = c * ln_1pz;
        if x.abs() < 1e-8 {
            ln_1pz * (1.0 + x / 2.0)
        } else {
            x.exp_m1() / c
        }
    };
    let below_half = (phi(2.0 - a) - phi(1.0 - a)) / (z * z);
    if below_half.is_finite() {
        (0.5 - below_half).clamp(0.0, 0.5)
    } else {
        0.5 // z past 1e150: every rate the Gamma allows changes many times an interval
    }
}

/// `q⁻¹(y)` for `0 ≤ y < 1/2` (0 at or below 0, ∞ from 1/2), by bisection in `ln r` between
/// the bounds `3y ≤ r ≤ (1/2 - y)^{-1/2}` (`q` lies below its tangent `r/3` at 0 and above
/// `1/2 - 1/r²`).
pub fn q_inv(y: f64) -> f64 {
    if y.is_nan() || y <= 0.0 {
        return 0.0;
    }
    if y >= 0.5 {
        return f64::INFINITY;
    }
    let (mut lo, mut hi) = ((3.0 * y).ln(), -0.5 * (0.5 - y).ln());
    if hi <= lo {
        return lo.exp();
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if q(mid.exp()) < y {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-12 {
            break;
        }
    }
    (0.5 * (lo + hi)).exp()
}

/// Solves `curve(r) = y` for increasing `curve` by bisection on `[0, hi]` (slow; builds tables).
fn invert_exact(curve: fn(f64) -> f64, y: f64) -> f64 {
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    while curve(hi) < y {
        hi *= 2.0;
        if hi > 1e300 {
            return f64::INFINITY;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if curve(mid) < y {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= hi * 1e-15 {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// A table of `ln r` against `ln y` on an even grid of `ln y`.
struct Table {
    ln_lo: f64,
    step: f64,
    ln_r: Vec<f64>,
}

impl Table {
    fn build(curve: fn(f64) -> f64, y_lo: f64, y_hi: f64, points: usize) -> Self {
        let (ln_lo, ln_hi) = (y_lo.ln(), y_hi.ln());
        let step = (ln_hi - ln_lo) / (points - 1) as f64;
        let ln_r = (0..points)
            .map(|i| invert_exact(curve, (ln_lo + step * i as f64).exp()).ln())
            .collect();
        Self { ln_lo, step, ln_r }
    }

    /// Interpolated `ln r` for `ln y` inside the table, `None` outside.
    fn lookup(&self, ln_y: f64) -> Option<f64> {
        let x = (ln_y - self.ln_lo) / self.step;
        if !(x >= 0.0 && x < (self.ln_r.len() - 1) as f64) {
            return None;
        }
        let i = x as usize;
        let t = x - i as f64;
        Some(self.ln_r[i] + t * (self.ln_r[i + 1] - self.ln_r[i]))
    }

    /// As [`Table::lookup`], with the slope `d ln r / d ln y` of the segment read.
    fn lookup_with_slope(&self, ln_y: f64) -> Option<(f64, f64)> {
        let x = (ln_y - self.ln_lo) / self.step;
        if !(x >= 0.0 && x < (self.ln_r.len() - 1) as f64) {
            return None;
        }
        let i = x as usize;
        let t = x - i as f64;
        let rise = self.ln_r[i + 1] - self.ln_r[i];
        Some((self.ln_r[i] + t * rise, rise / self.step))
    }
}

const G_LO: f64 = 1e-15;
const G_HI: f64 = 1e15;
const H_LO: f64 = 1e-15;
const H_HI: f64 = 0.5;

fn g_table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| Table::build(g, G_LO, G_HI, 1 << 14))
}

fn h_table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    // h⁻¹ is steep near 1, so the table stops at 1/2 and the tail is solved by Newton.
    TABLE.get_or_init(|| Table::build(h, H_LO, H_HI, 1 << 14))
}

/// `g⁻¹(y)` for `y ≥ 0` (0 at 0, ∞ at ∞).
pub fn g_inv(y: f64) -> f64 {
    if y <= 0.0 {
        return 0.0;
    }
    if y.is_infinite() {
        return f64::INFINITY;
    }
    match g_table().lookup(y.ln()) {
        Some(ln_r) => ln_r.exp(),
        // Outside the table the asymptotes are exact to double precision.
        None if y < G_LO => (3.0 * y).cbrt(),
        None => (2.0 * (y + 1.0)).sqrt(),
    }
}

/// `h⁻¹(y)` for `0 ≤ y < 1` (∞ for `y ≥ 1`).
pub fn h_inv(y: f64) -> f64 {
    if y <= 0.0 {
        return 0.0;
    }
    if y >= 1.0 {
        return f64::INFINITY;
    }
    match h_table().lookup(y.ln()) {
        Some(ln_r) => ln_r.exp(),
        None if y < H_LO => (2.0 * y).sqrt(),
        None => h_inv_tail(y),
    }
}

/// `ln g⁻¹(y)` from `ln y`, with its slope `d ln g⁻¹ / d ln y`: the same table and asymptotes as
/// [`g_inv`], read in log space so that the planner's fast solve needs no logarithm per page, and
/// the slope gives it the derivative of its total for Newton steps.
pub fn ln_g_inv(ln_y: f64) -> (f64, f64) {
    if let Some(found) = g_table().lookup_with_slope(ln_y) {
        return found;
    }
    if ln_y < G_LO.ln() {
        // g⁻¹(y) = (3y)^{1/3}
        ((3.0_f64.ln() + ln_y) / 3.0, 1.0 / 3.0)
    } else {
        // g⁻¹(y) = (2(y + 1))^{1/2}
        let y = ln_y.exp();
        (0.5 * (2.0 * (y + 1.0)).ln(), 0.5 * y / (y + 1.0))
    }
}

/// `ln h⁻¹(y)` from `ln y < 0`, with its slope `d ln h⁻¹ / d ln y` (as [`ln_g_inv`] for `h`).
pub fn ln_h_inv(ln_y: f64) -> (f64, f64) {
    if let Some(found) = h_table().lookup_with_slope(ln_y) {
        return found;
    }
    if ln_y < H_LO.ln() {
        // h⁻¹(y) = (2y)^{1/2}
        (0.5 * (2.0_f64.ln() + ln_y), 0.5)
    } else {
        // d ln r / d ln y = y / (r h'(r)) with h'(r) = r e^{-r}
        let y = ln_y.exp();
        let r = h_inv_tail(y);
        (r.ln(), y * r.exp() / (r * r))
    }
}

/// `h⁻¹(y)` for `y ≥ 1/2` by Newton on `r - ln(1 + r) = -ln(1 - y)`, which is convex and increasing.
fn h_inv_tail(y: f64) -> f64 {
    let target = -(1.0 - y).ln();
    let mut r = target + (1.0 + target).ln();
    for _ in 0..50 {
        let step = (r - (1.0 + r).ln() - target) * (1.0 + r) / r;
        r -= step;
        if step.abs() <= 1e-13 * r {
            break;
        }
    }
    r
}

/// Pre-builds both tables (a few milliseconds) so a benchmark does not time their construction.
pub fn warm_up() {
    let _ = (g_table(), h_table());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_match_closed_forms_where_both_are_accurate() {
        for r in [0.1_f64, 0.0999] {
            let closed = r * r / 2.0 - 1.0 + (1.0 + r) * (-r).exp();
            assert!((g(r) - closed).abs() / closed < 1e-9, "g({r})");
            let closed_h = 1.0 - (1.0 + r) * (-r).exp();
            assert!((h(r) - closed_h).abs() / closed_h < 1e-9, "h({r})");
        }
    }

    #[test]
    fn q_is_g_over_r_squared_and_inverts() {
        for &r in &[1e-6, 0.01, 0.099, 0.1, 0.5, 2.0, 30.0, 1e4] {
            let direct = g(r) / (r * r);
            assert!((q(r) - direct).abs() <= 1e-9 * direct.max(1e-12), "q({r})");
            let back = q_inv(q(r));
            assert!((back - r).abs() <= 1e-8 * r, "q_inv(q({r})) = {back}");
        }
        assert_eq!(q_inv(0.0), 0.0);
        assert!(q_inv(0.5).is_infinite());
    }

    /// `E[q(λ t)]` under Gamma(α, β) by brute force: the trapezoid rule on 200,000 nodes in
    /// `u = ln λ`, where `q(e^u t)` times the density is smooth and decays at both ends.
    fn q_expected_by_quadrature(shape: f64, rate: f64, t: f64) -> f64 {
        let scale = (1.0 / t).min(1.0 / rate);
        let top = (shape + 40.0 * shape.sqrt() + 80.0) / rate;
        let (lo, hi) = ((1e-12 * scale).ln(), top.ln());
        let n = 200_000;
        let h = (hi - lo) / n as f64;
        let ln_norm = shape * rate.ln() - statrs::function::gamma::ln_gamma(shape);
        (0..=n)
            .map(|i| {
                let u = lo + i as f64 * h;
                let end = if i == 0 || i == n { 0.5 } else { 1.0 };
                end * q(u.exp() * t) * (ln_norm + shape * u - rate * u.exp()).exp()
            })
            .sum::<f64>()
            * h
    }

    #[test]
    fn the_expected_cut_under_a_gamma_matches_brute_force_for_any_shape() {
        // (α, β, t): a pooled prior shrunk to a few short intervals (α ≪ 1, where a tabulated
        // Gamma was 55,000 times too small), α at and near 1 and 2 (where φ divides by 0), the
        // small-z series, a sharp posterior, and an interval far past the mean.
        let mut cases = vec![
            (0.0223, 0.00325, 0.0002),
            (0.1, 0.004, 0.01),
            (0.5, 1.0, 1.0),
            (1.0, 2.0, 0.5),
            (2.0, 1.0, 3.0),
            (5.0, 10.0, 1e-5),
            (50.0, 0.5, 2.0),
            (0.02, 1e-3, 1e3),
            (1.0 + 1e-9, 1.0, 0.7),
            (2.0 - 1e-9, 1.0, 0.7),
        ];
        // Either side of where the series hands over to the closed form, for thin and sharp
        // Gammas (and where an earlier switch-over lost five digits to cancellation).
        for a in [1e-4, 0.02, 1e4] {
            for z in [0.5 / (a + 1.0), 1e-3 / (a + 4.0)] {
                cases.push((a, 1.0, 0.999 * z));
                cases.push((a, 1.0, 1.001 * z));
            }
        }
        for (shape, rate, t) in cases {
            let closed = q_expected_under_gamma(shape, rate, t);
            let brute = q_expected_by_quadrature(shape, rate, t);
            assert!(
                (closed - brute).abs() <= 1e-10 * brute,
                "Gamma({shape}, {rate}) at t = {t}: {closed} vs {brute}"
            );
        }
        // At a known rate (α → ∞ with the mean held) it is q at the mean.
        let (mean, t) = (3.0, 0.2);
        let sharp = q_expected_under_gamma(1e7, 1e7 / mean, t);
        assert!((sharp - q(mean * t)).abs() <= 1e-6 * q(mean * t));
        assert_eq!(q_expected_under_gamma(0.5, 1.0, 0.0), 0.0);
    }

    #[test]
    fn inverses_round_trip() {
        for r in [1e-6, 1e-3, 0.05, 0.3, 1.0, 2.5, 10.0, 1e3, 1e6] {
            let back = g_inv(g(r));
            assert!((back - r).abs() / r < 1e-5, "g_inv(g({r})) = {back}");
        }
        for r in [1e-6, 1e-3, 0.05, 0.3, 1.0, 2.5, 10.0, 25.0] {
            let back = h_inv(h(r));
            assert!((back - r).abs() / r < 1e-5, "h_inv(h({r})) = {back}");
        }
        assert_eq!(g_inv(0.0), 0.0);
        assert!(h_inv(1.0).is_infinite());
    }

    #[test]
    fn log_space_lookups_agree_with_the_inverses_and_their_slopes() {
        // Inside each table, below it and above it.
        for y in [1e-20, 1e-9, 0.01, 1.0, 37.0, 1e9, 1e20] {
            let (ln_r, slope) = ln_g_inv(f64::ln(y));
            assert!(
                (ln_r.exp() - g_inv(y)).abs() <= 1e-12 * g_inv(y),
                "g at {y}"
            );
            let dy = 1e-4;
            let numeric = (g_inv(y * (1.0 + dy)).ln() - g_inv(y).ln()) / (1.0 + dy).ln();
            assert!(
                (slope - numeric).abs() < 1e-3,
                "g slope at {y}: {slope} vs {numeric}"
            );
        }
        for y in [1e-20, 1e-6, 0.01, 0.3, 0.7, 0.99] {
            let (ln_r, slope) = ln_h_inv(f64::ln(y));
            assert!(
                (ln_r.exp() - h_inv(y)).abs() <= 1e-12 * h_inv(y),
                "h at {y}"
            );
            let dy = 1e-6;
            let numeric = (h_inv(y * (1.0 + dy)).ln() - h_inv(y).ln()) / (1.0 + dy).ln();
            assert!(
                (slope - numeric).abs() < 1e-3 * slope.max(1.0),
                "h slope at {y}: {slope} vs {numeric}"
            );
        }
    }
}
