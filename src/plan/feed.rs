//! How often to poll a feed that announces changes of some pages (pure).
//!
//! Polling a host's feed every `p = 1/φ` days and fetching each announced page only when the feed
//! lists a change leaves every such page exactly as fresh as fetching it every `p` days, so its
//! time-averaged age is `Ā(λ_i, p)`, but it costs only the poll plus one fetch per interval with a
//! change: `cost(φ) = φ (1 + Σ_i (1 - e^{-λ_i/φ}))`. Given the budget's multiplier μ from the main
//! plan, the poll rate minimises the Lagrangian `Σ w_i Ā(λ_i, 1/φ) + μ cost(φ)` (one dimension,
//! golden-section search in `ln φ`). A feed lists only its last `capacity` entries, so the rate is
//! also kept high enough that one interval expects at most half of them.

use super::time_averaged_age;

/// The chosen poll rate of one feed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FeedPoll {
    /// Feed polls per day.
    pub rate_per_day: f64,
    /// Expected fetches per day: the polls plus the fetches of announced pages that changed.
    pub cost_per_day: f64,
}

/// Expected fetches per day of polling every `1/phi` days: the polls plus the changed pages.
pub fn feed_cost(rates: &[f64], phi: f64) -> f64 {
    phi * (1.0 + rates.iter().map(|&l| -(-l / phi).exp_m1()).sum::<f64>())
}

/// The poll rate for a feed announcing pages with `rates` (weights 1), budget multiplier `mu`,
/// a feed that lists `capacity` entries, and at most `max_rate` polls per day.
pub fn feed_poll_rate(rates: &[f64], mu: f64, capacity: usize, max_rate: f64) -> FeedPoll {
    let total: f64 = rates.iter().sum();
    let min_rate = (2.0 * total / capacity.max(1) as f64).min(max_rate);
    let lagrangian = |ln_phi: f64| {
        let phi = ln_phi.exp();
        rates
            .iter()
            .map(|&l| time_averaged_age(l, 1.0 / phi))
            .sum::<f64>()
            + mu * feed_cost(rates, phi)
    };
    let (mut a, mut b) = ((1.0 / 365.0_f64).ln(), max_rate.max(1.0 / 365.0).ln());
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..80 {
        let c = b - ratio * (b - a);
        let d = a + ratio * (b - a);
        if lagrangian(c) < lagrangian(d) {
            b = d;
        } else {
            a = c;
        }
    }
    let phi = (0.5 * (a + b)).exp().max(min_rate);
    FeedPoll {
        rate_per_day: phi,
        cost_per_day: feed_cost(rates, phi),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busier_feeds_are_polled_more_and_cost_less_than_fixed_visits() {
        let slow = feed_poll_rate(&[0.1; 10], 0.01, 20, 96.0);
        let fast = feed_poll_rate(&[2.0; 10], 0.01, 20, 96.0);
        assert!(fast.rate_per_day > slow.rate_per_day);
        // Fetching 10 pages every poll would cost 11 φ; the feed costs much less for slow pages.
        assert!(slow.cost_per_day < 3.0 * slow.rate_per_day, "{slow:?}");
        // A dearer budget (larger μ) polls less.
        let dear = feed_poll_rate(&[2.0; 10], 1.0, 20, 96.0);
        assert!(dear.rate_per_day < fast.rate_per_day);
    }

    #[test]
    fn capacity_forces_a_floor() {
        let poll = feed_poll_rate(&[10.0; 40], 1e3, 20, 1000.0);
        assert!(poll.rate_per_day >= 2.0 * 400.0 / 20.0 - 1e-9);
    }
}
