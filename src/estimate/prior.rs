//! The Gamma prior on a change rate, and empirical-Bayes pooling of many URLs into one.
//!
//! Pooling (a host's or a site's URLs) fits a Gamma to the URLs' posterior means by the method of
//! moments, subtracting the average posterior variance from the spread of the means so that noisy
//! estimates do not widen the prior (Morris, "Parametric empirical Bayes inference", JASA 1983).
//! The fitted shape is kept weak (at most [`MAX_POOLED_SHAPE`] pseudo-changes): a host's pages differ,
//! and a prior that is too sure would hide a page's own evidence.

use statrs::distribution::{Continuous, ContinuousCDF, Gamma};

/// A Gamma(shape, rate) distribution of changes per day: a prior, or a posterior summary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prior {
    /// Pseudo-changes.
    pub shape: f64,
    /// Pseudo-exposure in days.
    pub rate: f64,
}

/// The most pseudo-changes a pooled prior may carry.
pub const MAX_POOLED_SHAPE: f64 = 2.0;

impl Default for Prior {
    /// Knowing nothing: Gamma(0.1, one minute). Its density in `ln λ` is `∝ λ^{0.1} e^{-λ · 1 min}`,
    /// rising by only a factor 1.26 a decade from once in years up to about once a minute, and
    /// falling fast beyond: web pages' rates span that whole range, and a prior must not decide
    /// where in it a page lies (its 90% interval: 9e-11 to 840 changes a day). One minute of
    /// pseudo-exposure is less than any page's own checks give, so an hour of unchanged checks
    /// already outweighs it (the old default, Gamma(0.5, 5 days), carried five days of exposure
    /// and held a page changing at every hourly check to about 5 per day). The mean (144 per day)
    /// is dominated by the fast end: it is not a guess of a typical page's rate.
    fn default() -> Self {
        Self {
            shape: 0.1,
            rate: 1.0 / 1440.0,
        }
    }
}

impl Prior {
    /// A prior with this mean (changes per day) and strength (pseudo-changes); `None` if either is
    /// not a positive finite number.
    pub fn with_mean(mean_per_day: f64, shape: f64) -> Option<Self> {
        (mean_per_day > 0.0 && mean_per_day.is_finite() && shape > 0.0 && shape.is_finite()).then(
            || Self {
                shape,
                rate: shape / mean_per_day,
            },
        )
    }

    /// The log of its density in `u = ln λ` (a density in `λ` times `λ`):
    /// `a ln b - ln Γ(a) + a u - b e^u`.
    pub fn log_density_in_log_rate(&self, u: f64) -> f64 {
        self.shape * self.rate.ln() - statrs::function::gamma::ln_gamma(self.shape) + self.shape * u
            - self.rate * u.exp()
    }

    /// The mean in changes per day.
    pub fn mean(&self) -> f64 {
        self.shape / self.rate
    }

    /// The variance of the rate.
    pub fn variance(&self) -> f64 {
        self.shape / (self.rate * self.rate)
    }

    /// The 90% credible interval of the rate: between its 5% and 95% quantiles (see
    /// [`super::Posterior::interval_90`]).
    pub fn interval_90(&self) -> (f64, f64) {
        (self.quantile(0.05), self.quantile(0.95))
    }

    /// The `p` quantile of the rate (0 for `p ≤ 0`, infinite for `p ≥ 1`).
    ///
    /// statrs' inverse CDF stops at an absolute tolerance of 1e-9, which is most of the value for
    /// the far-left quantiles of a small shape (the 5% quantile of Gamma(0.1, 1) is 6e-14). A few
    /// Newton steps in `ln x` on the log of the nearer tail's probability polish it (near 0 the
    /// CDF is `∝ x^α`: its log is linear in `ln x`, and Newton lands in one step).
    pub fn quantile(&self, p: f64) -> f64 {
        if p.is_nan() || p <= 0.0 {
            return 0.0;
        }
        if p >= 1.0 {
            return f64::INFINITY;
        }
        let Ok(unit) = Gamma::new(self.shape, 1.0) else {
            return f64::NAN;
        };
        let mut x = unit.inverse_cdf(p);
        for _ in 0..8 {
            let density = x * unit.pdf(x);
            // (ln tail(x) - ln tail_p, d/d ln x of ln tail(x)) for the tail that holds min(p, 1-p).
            let (miss, slope) = if p < 0.5 {
                let c = unit.cdf(x);
                ((c / p).ln(), density / c)
            } else {
                let s = unit.sf(x);
                ((s / (1.0 - p)).ln(), -density / s)
            };
            let step = miss / slope;
            if !(x > 0.0 && step.is_finite()) {
                break;
            }
            x *= (-step.clamp(-5.0, 5.0)).exp();
            if step.abs() < 1e-13 {
                break;
            }
        }
        x / self.rate
    }

    /// Probability that a copy fetched `since_days` ago is stale, averaged over this Gamma:
    /// `1 - E[e^{-λt}] = 1 - (β / (β + t))^α`.
    pub fn p_stale(&self, since_days: f64) -> f64 {
        if since_days.is_nan() || since_days <= 0.0 {
            return 0.0;
        }
        -(-self.shape * (since_days / self.rate).ln_1p()).exp_m1()
    }

    /// Expected age in days of a copy fetched `since_days` ago, averaged over this Gamma:
    /// `E[t - (1 - e^{-λt})/λ] = t - ∫_0^t (β / (β + s))^α ds
    /// = t - β ((1 + t/β)^{1-α} - 1) / (1 - α)` (`β ln(1 + t/β)` at α = 1).
    pub fn expected_age_days(&self, since_days: f64) -> f64 {
        if since_days.is_nan() || since_days <= 0.0 {
            return 0.0;
        }
        if since_days.is_infinite() {
            return f64::INFINITY;
        }
        let (a, b, t) = (self.shape, self.rate, since_days);
        let z = t / b;
        if (a + 2.0) * z < 1e-4 {
            // t (α z / 2) (1 - (α + 1) z / 3 + (α + 1)(α + 2) z² / 12): the closed form cancels.
            return t * (a * z / 2.0) * (1.0 - (a + 1.0) * z / 3.0 * (1.0 - (a + 2.0) * z / 4.0));
        }
        let r = z.ln_1p();
        let c = (1.0 - a) * r;
        let integral = if c.abs() < 1e-8 {
            b * r * (1.0 + c / 2.0)
        } else {
            b * c.exp_m1() / (1.0 - a)
        };
        (t - integral).max(0.0)
    }
}

/// Pools many URLs' posteriors (see [`super::RateEstimate::gamma`]) into a prior for their host or
/// site; `fallback` when fewer than three are given or they carry no usable spread. Pass only URLs
/// with evidence of their own: a URL without any is just the prior again.
pub fn pool(posteriors: &[Prior], fallback: Prior) -> Prior {
    let usable: Vec<&Prior> = posteriors
        .iter()
        .filter(|e| e.shape > 0.0 && e.rate > 0.0 && e.mean().is_finite())
        .collect();
    if usable.len() < 3 {
        return fallback;
    }
    let n = usable.len() as f64;
    let mean = usable.iter().map(|e| e.mean()).sum::<f64>() / n;
    let spread = usable
        .iter()
        .map(|e| (e.mean() - mean).powi(2))
        .sum::<f64>()
        / (n - 1.0);
    let noise = usable
        .iter()
        .map(|e| e.variance())
        .filter(|v| v.is_finite())
        .sum::<f64>()
        / n;
    // Never claim more agreement than "the means' spread"/4 would: noise may swamp the spread.
    let between = (spread - noise).max(spread / 4.0);
    if !(between > 0.0 && mean > 0.0) {
        return fallback;
    }
    let shape = (mean * mean / between).min(MAX_POOLED_SHAPE);
    Prior::with_mean(mean, shape).unwrap_or(fallback)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooling_recovers_the_group_mean_and_stays_weak() {
        let estimates: Vec<Prior> = (1..=50)
            .map(|i| Prior {
                shape: 20.0,
                rate: 20.0 / (0.5 + 0.02 * f64::from(i)),
            })
            .collect();
        let p = pool(&estimates, Prior::default());
        let true_mean = estimates.iter().map(|e| e.mean()).sum::<f64>() / 50.0;
        assert!((p.mean() - true_mean).abs() < 1e-9, "{p:?}");
        assert!(p.shape <= MAX_POOLED_SHAPE);
        assert_eq!(pool(&estimates[..2], Prior::default()), Prior::default());
    }
}
