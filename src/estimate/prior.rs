//! The Gamma prior on a change rate, and empirical-Bayes pooling of many URLs into one.
//!
//! Pooling (a host's or a site's URLs) fits a Gamma to the URLs' posterior means by the method of
//! moments, subtracting the average posterior variance from the spread of the means so that noisy
//! estimates do not widen the prior (Morris, "Parametric empirical Bayes inference", JASA 1983).
//! The fitted shape is kept weak (at most [`MAX_POOLED_SHAPE`] pseudo-changes): a host's pages differ,
//! and a prior that is too sure would hide a page's own evidence.

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
    /// Knowing nothing: mean one change per 10 days, as weak as half a change. Web pages' rates
    /// span hours to years, so the prior must be wide.
    fn default() -> Self {
        Self {
            shape: 0.5,
            rate: 5.0,
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

    /// The mean in changes per day.
    pub fn mean(&self) -> f64 {
        self.shape / self.rate
    }

    /// The variance of the rate.
    pub fn variance(&self) -> f64 {
        self.shape / (self.rate * self.rate)
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
