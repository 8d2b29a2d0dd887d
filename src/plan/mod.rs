//! Revisit planning: rates per page that minimise weighted time-averaged age under a global budget
//! and per-host limits (pure: no clock, database or network).
//!
//! # The model (Cho & Garcia-Molina, "Effective page refresh policies for web crawlers", TODS 2003)
//! A page changes as a Poisson process with rate λ per day. Last fetched `t` days ago, the expected
//! age of our copy is `Age(λ, t) = t - (1 - e^{-λt}) / λ` and it is stale with probability
//! `1 - e^{-λt}`. Refreshed every `I` days its time-averaged age is
//! `Ā(λ, I) = I/2 - 1/λ + (1 - e^{-λI}) / (λ² I)` and its freshness `F = (1 - e^{-λI}) / (λI)`.
//!
//! # The optimum
//! Choose visit rates `f_i = 1/I_i` minimising `Σ w_i Ā(λ_i, 1/f_i)` subject to `Σ f_i ≤ B` and
//! `Σ_{i on h} f_i ≤ R_h` (politeness; Kolobov et al., SIGIR 2019), and `f_i ≤ cap_i` (server
//! hints such as Crawl-delay or Cache-Control are floors on the interval). The KKT condition is
//! `w_i g(r_i) / λ_i² = μ + ν_h` with `r = λ/f` and `g` from [`curves`]: a page depends on the
//! multipliers only through `(μ + ν_h) λ² / w`, so `f = λ / g⁻¹((μ + ν_h) λ² / w)` is one table
//! lookup. Each host's own multiplier `μ_h` (the one at which it exactly meets `R_h`) does not
//! depend on `μ`, so it is found once per host, and a page then uses `max(μ, μ_h)`; an outer
//! search finds the `μ` that spends the budget. Both searches are safeguarded Newton steps in
//! log space (module [`solve`](mod@solve)), which reach the tolerance of a bisection (relative
//! 1e-12) in a handful of passes over the pages instead of about 45. Age never gives up on a
//! page (`f > 0` whenever `λ, w > 0`); the freshness objective (`w h(r) / λ = μ + ν_h`) drops pages
//! with `w / λ ≤ μ`.
//!
//! The baselines use the same water-filling: `Uniform` gives every page `w / m` (equal rates for
//! equal weights), `Proportional` gives `w λ / m`.
//!
//! # Incremental use
//! [`solve_full`] also returns the [`Multipliers`]; [`rate_for`] recomputes one page's rate from
//! them in O(1) when its estimate moves, so the daemon re-solves everything only periodically.

pub mod curves;
pub mod feed;
#[cfg(test)]
mod reference;
mod solve;

pub use feed::{
    CoveredPage, FeedPrice, covered_page, covered_page_audited, covered_visits_per_day,
    feed_could_pay, known_change_delay, known_change_delay_days, polls_to_keep_up, price_feed,
    visit_price_at,
};

/// Expected age in days of a copy fetched `since_days` ago of a page changing `rate_per_day`.
pub fn expected_age_days(rate_per_day: f64, since_days: f64) -> f64 {
    if since_days <= 0.0 || rate_per_day <= 0.0 {
        return 0.0;
    }
    let x = rate_per_day * since_days;
    if x < 1e-4 {
        // t - (1 - e^{-x})/λ = t (x/2 - x²/6 + ...), which the closed form loses to cancellation.
        return since_days * x * (0.5 - x / 6.0);
    }
    since_days + (-x).exp_m1() / rate_per_day
}

/// Probability that a copy fetched `since_days` ago is stale.
pub fn p_stale(rate_per_day: f64, since_days: f64) -> f64 {
    if since_days <= 0.0 || rate_per_day <= 0.0 {
        return 0.0;
    }
    -(-rate_per_day * since_days).exp_m1()
}

/// The rate to plan a page by when its rate is known only as a posterior: the rate whose age
/// cut from one more visit, at the page's planned interval `t`, is the expected cut,
/// `q(λ_eff t) = E[q(λ t)]` with `expected_q` that expectation ([`curves::q`]). The optimum
/// of `E[Ā(f, λ)] + μ f` is where the expected cut meets `μ`, and since `q` is concave the
/// posterior mean overstates it for a page whose rate is uncertain: a page that is slow or
/// fast with even odds is worth fewer visits than one known to change at the average rate.
/// Evaluated at the last plan's interval, it is a fixed point the periodic re-plan reaches.
/// `None` when the interval or the expectation gives no answer.
pub fn certainty_equivalent_rate(interval_days: f64, expected_q: f64) -> Option<f64> {
    if !(interval_days > 0.0 && interval_days.is_finite()) {
        return None;
    }
    let r = curves::q_inv(expected_q);
    (r.is_finite() && r > 0.0).then(|| r / interval_days)
}

/// Time-averaged age in days of a page refreshed every `interval_days` (infinite for an infinite
/// interval of a changing page).
pub fn time_averaged_age(rate_per_day: f64, interval_days: f64) -> f64 {
    if rate_per_day <= 0.0 || interval_days <= 0.0 {
        return 0.0;
    }
    if interval_days.is_infinite() {
        return f64::INFINITY;
    }
    let x = rate_per_day * interval_days;
    if x < 1e-3 {
        // (1/λ)(x/2 - 1 + (1 - e^{-x})/x) = (1/λ)(x²/6 - x³/24 + x⁴/120 - ...)
        return x * x / rate_per_day * (1.0 / 6.0 - x * (1.0 / 24.0 - x / 120.0));
    }
    interval_days / 2.0 - 1.0 / rate_per_day - (-x).exp_m1() / (rate_per_day * x)
}

/// Time-averaged freshness (fraction of time the copy is current) refreshed every `interval_days`.
pub fn freshness(rate_per_day: f64, interval_days: f64) -> f64 {
    if rate_per_day <= 0.0 || interval_days <= 0.0 {
        return 1.0;
    }
    if interval_days.is_infinite() {
        return 0.0;
    }
    let x = rate_per_day * interval_days;
    if x < 1e-8 {
        return 1.0 - x / 2.0;
    }
    -(-x).exp_m1() / x
}

/// One page as the planner sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlanPage {
    /// Estimated changes per day (the posterior mean; never 0 from `estimate`).
    pub rate_per_day: f64,
    /// Importance (site weight; small for duplicates and redirect sources).
    pub weight: f64,
    /// Index into [`Limits::host_limits_per_day`].
    pub host: usize,
    /// Most visits per day this page may get: the floor on its interval from Crawl-delay,
    /// Retry-After, Cache-Control max-age or feed ttl; `f64::INFINITY` when there is none.
    pub max_visits_per_day: f64,
}

/// The budgets a plan must respect.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Limits {
    /// Total visits per day over all pages (`f64::INFINITY` would mean no budget at all).
    pub budget_per_day: f64,
    /// Visits per day allowed per host, indexed by [`PlanPage::host`]; `f64::INFINITY` or a
    /// missing entry means no limit.
    pub host_limits_per_day: Vec<f64>,
}

impl Limits {
    fn host_limit(&self, host: usize) -> f64 {
        self.host_limits_per_day
            .get(host)
            .copied()
            .unwrap_or(f64::INFINITY)
    }
}

/// What the optimal policy optimises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Objective {
    /// Minimise weighted time-averaged age (freshet's choice: never gives up on a page).
    #[default]
    Age,
    /// Maximise weighted freshness (gives up on pages that change too fast for the budget).
    Freshness,
}

/// How visits are shared out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// The baseline: the same rate (times weight) for every page, within the budget, water-filled
    /// under host limits and caps. To use sitemap `changefreq` as a hint, cap each page's
    /// `max_visits_per_day` at (a multiple of) its changefreq rate: a "yearly" page then stops at
    /// its cap and the water-filling gives what it frees to the others.
    Uniform,
    /// Rates proportional to `w λ` (Cho & Garcia-Molina show this is worse than uniform).
    Proportional,
    /// The KKT optimum of the [`Objective`] (age-optimal by default).
    AgeOptimal,
}

/// The solved Lagrange multipliers, enough to recompute any page's rate in O(1).
#[derive(Debug, Clone, PartialEq)]
pub struct Multipliers {
    /// The policy these multipliers belong to.
    pub policy: Policy,
    /// The objective these multipliers belong to.
    pub objective: Objective,
    /// The budget's multiplier μ (0 when the budget does not bind).
    pub mu: f64,
    /// Per host, the multiplier `μ_h` at which the host exactly meets its limit (0 when its pages
    /// cannot reach it); a page uses `max(μ, μ_h)`, i.e. `ν_h = max(0, μ_h - μ)`.
    pub host_mu: Vec<f64>,
}

impl Multipliers {
    /// The effective multiplier `μ + ν_h` for pages of `host`.
    pub fn effective(&self, host: usize) -> f64 {
        self.mu.max(self.host_mu.get(host).copied().unwrap_or(0.0))
    }
}

/// A page's visits per day at effective multiplier `m` (decreasing in `m`; the cap at `m = 0`).
fn response(policy: Policy, objective: Objective, page: &PlanPage, m: f64) -> f64 {
    let (lambda, w) = (page.rate_per_day, page.weight);
    if !(lambda > 0.0 && w > 0.0) {
        return 0.0;
    }
    let f = if m <= 0.0 {
        f64::INFINITY
    } else {
        match (policy, objective) {
            (Policy::Uniform, _) => w / m,
            (Policy::Proportional, _) => w * lambda / m,
            (Policy::AgeOptimal, Objective::Age) => lambda / curves::g_inv(m * lambda * lambda / w),
            (Policy::AgeOptimal, Objective::Freshness) => {
                let y = m * lambda / w;
                if y >= 1.0 {
                    0.0
                } else {
                    lambda / curves::h_inv(y)
                }
            }
        }
    };
    f.min(page.max_visits_per_day).max(0.0)
}

/// Visits per day of one page under solved multipliers: the O(1) incremental update.
pub fn rate_for(page: &PlanPage, mult: &Multipliers) -> f64 {
    response(mult.policy, mult.objective, page, mult.effective(page.host))
}

/// Solves a plan: visits per day per page, and the multipliers for [`rate_for`] (see
/// [`solve`](mod@solve) for how the multipliers are found quickly).
pub fn solve_full(
    policy: Policy,
    pages: &[PlanPage],
    limits: &Limits,
    objective: Objective,
) -> (Vec<f64>, Multipliers) {
    let mult = solve::multipliers(policy, pages, None, limits, objective);
    let rates = pages.iter().map(|p| rate_for(p, &mult)).collect();
    (rates, mult)
}

/// [`solve_full`] for runs of identical pages: `pages[i]` stands for `counts[i]` pages alike
/// (every field equal), which the plan gives equal visits. The visits per day of one page of
/// each run, and the multipliers. A site's pages that were never checked are alike (one prior,
/// one weight, one host, no floor): planned as runs, a million of them cost a few entries.
pub fn solve_runs(
    policy: Policy,
    pages: &[PlanPage],
    counts: &[u32],
    limits: &Limits,
    objective: Objective,
) -> (Vec<f64>, Multipliers) {
    assert_eq!(pages.len(), counts.len(), "a count per run");
    let mult = solve::multipliers(policy, pages, Some(counts), limits, objective);
    let rates = pages.iter().map(|p| rate_for(p, &mult)).collect();
    (rates, mult)
}

/// Solves a plan: visits per day per page.
pub fn solve(
    policy: Policy,
    pages: &[PlanPage],
    limits: &Limits,
    objective: Objective,
) -> Vec<f64> {
    solve_full(policy, pages, limits, objective).0
}

/// Mean time-averaged age and freshness of pages visited at `rates` (unweighted means).
pub fn mean_age_and_freshness(pages: &[PlanPage], rates: &[f64]) -> (f64, f64) {
    if pages.is_empty() {
        return (0.0, 1.0);
    }
    let n = pages.len() as f64;
    let (mut age, mut fresh) = (0.0, 0.0);
    for (p, &f) in pages.iter().zip(rates) {
        let interval = if f > 0.0 { 1.0 / f } else { f64::INFINITY };
        age += time_averaged_age(p.rate_per_day, interval);
        fresh += freshness(p.rate_per_day, interval);
    }
    (age / n, fresh / n)
}

#[cfg(test)]
mod tests;
