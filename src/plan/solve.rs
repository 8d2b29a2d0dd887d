//! The solve behind [`super::solve_full`] and [`super::solve_runs`]: the multipliers of the module docs, found in a handful
//! of passes over the pages instead of a hundred (pure: no clock, database or network).
//!
//! The plain method (kept in `reference.rs` as the oracle the tests compare against) bisects
//! each multiplier in log space down to a relative width of 1e-12: about 45 passes per host and
//! 45 over every page for the budget, each page paying a `ln`, a table read and an `exp` per
//! pass. Profiled on 1M URLs over 1,000 hosts that was 2.5 s, nearly all of it in those per-page
//! evaluations (`ln` and `exp` from libm, the table read, the division). Here:
//! - pages are grouped by host once (a counting sort) into a flat array of what a page's
//!   response needs in log space: `ln(λ²/w)` (`ln(λ/w)` for freshness), `ln λ` and its cap.
//!   At `x = ln m` a page costs one table read (`curves::ln_g_inv(x + ln(λ²/w))`) and one `exp`;
//! - each multiplier is found by Newton's method on `ln T(x) = ln target`, kept inside a bracket
//!   and falling back to bisection when a step leaves it or stalls. A total over many pages is
//!   close to a power of `m` (between `m^{-1/2}` and `m^{-1/3}` for age), so `ln T` is nearly
//!   linear in `x` and a few steps reach the same 1e-12 tolerance; the table segment's slope
//!   gives `dT/dx` in the same pass. Each step aims a hair past the predicted root so that the
//!   last two points fall on either side of it and close the bracket;
//! - a host at its limit adds a constant to the budget's total while `μ ≤ μ_h`: it is summed once.
//!
//! The answers are the reference's to its tolerance: both return a multiplier within a relative
//! 1e-12 of the root, and the rates are then computed by the same [`super::rate_for`].

use super::{Limits, Multipliers, Objective, PlanPage, Policy, curves};

/// Relative precision of a multiplier, as the reference bisection's: the answer `m` has
/// `total(m) ≤ target < total(m / (1 + 1e-12))`. In `x = ln m` it is an absolute width.
const TOLERANCE: f64 = 1e-12;
/// Multipliers are searched in [1e-300, 1e300], as the reference does (`ln 1e300`).
const LN_CEILING: f64 = 690.775_527_898_213_7;
const LN_FLOOR: f64 = -LN_CEILING;
/// A bound on the passes of one search (never reached: bisection alone needs about 50).
const MAX_STEPS: usize = 400;

/// Which curve a page's response follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Curve {
    /// Age-optimal: `f = λ / g⁻¹(m λ² / w)`.
    Age,
    /// Freshness-optimal: `f = λ / h⁻¹(m λ / w)`, 0 once `m λ / w ≥ 1`.
    Freshness,
    /// The baselines: `f = w / m` (uniform) or `w λ / m` (proportional).
    Inverse,
}

/// One page as the search reads it: a response at `x = ln m` is `exp(ln_numerator - ln r)` with
/// `ln r` the curve's inverse at `ln y = x + ln_scale`, capped at `cap`.
#[derive(Debug, Clone, Copy)]
struct Term {
    ln_scale: f64,
    ln_numerator: f64,
    /// The page's most visits per day (≥ 0, ∞ when uncapped): its response at `m = 0`.
    cap: f64,
}

impl Curve {
    fn of(policy: Policy, objective: Objective) -> Self {
        match (policy, objective) {
            (Policy::AgeOptimal, Objective::Age) => Curve::Age,
            (Policy::AgeOptimal, Objective::Freshness) => Curve::Freshness,
            (Policy::Uniform | Policy::Proportional, _) => Curve::Inverse,
        }
    }

    /// The page's term, or `None` for a page whose response is always 0 (as in `response`).
    fn term(self, policy: Policy, page: &PlanPage) -> Option<Term> {
        let (lambda, w) = (page.rate_per_day, page.weight);
        if !(lambda > 0.0 && w > 0.0) {
            return None;
        }
        let (ln_lambda, ln_w) = (lambda.ln(), w.ln());
        let (ln_scale, ln_numerator) = match (self, policy) {
            (Curve::Age, _) => (2.0 * ln_lambda - ln_w, ln_lambda),
            (Curve::Freshness, _) => (ln_lambda - ln_w, ln_lambda),
            (Curve::Inverse, Policy::Proportional) => (0.0, ln_w + ln_lambda),
            (Curve::Inverse, _) => (0.0, ln_w),
        };
        // `f.min(cap).max(0.0)` in `response`: a NaN cap caps nothing, a negative one to 0.
        let cap = if page.max_visits_per_day.is_nan() {
            f64::INFINITY
        } else {
            page.max_visits_per_day.max(0.0)
        };
        Some(Term {
            ln_scale,
            ln_numerator,
            cap,
        })
    }
}

/// A term's visits per day at `x = ln m` and its derivative in `x`.
#[inline(always)]
fn respond(curve: Curve, term: &Term, x: f64) -> (f64, f64) {
    let ln_y = x + term.ln_scale;
    let (ln_r, slope) = match curve {
        Curve::Age => curves::ln_g_inv(ln_y),
        Curve::Freshness if ln_y >= 0.0 => return (0.0, 0.0),
        Curve::Freshness => curves::ln_h_inv(ln_y),
        Curve::Inverse => (ln_y, 1.0),
    };
    let f = (term.ln_numerator - ln_r).exp();
    if f >= term.cap {
        (term.cap, 0.0)
    } else {
        (f, -slope * f)
    }
}

/// The total visits per day of `terms` at `x = ln m`, and its derivative in `x`.
fn total(curve: Curve, terms: &[Term], x: f64) -> (f64, f64) {
    if x == f64::INFINITY {
        return (0.0, 0.0); // an infinite multiplier: a host allowed nothing
    }
    // One loop per curve, so that the match is not paid per page.
    match curve {
        Curve::Age => sum(terms, |t| respond(Curve::Age, t, x)),
        Curve::Freshness => sum(terms, |t| respond(Curve::Freshness, t, x)),
        Curve::Inverse => sum(terms, |t| respond(Curve::Inverse, t, x)),
    }
}

/// The sums of `respond_one` over `terms`.
#[inline(always)]
fn sum(terms: &[Term], respond_one: impl Fn(&Term) -> (f64, f64)) -> (f64, f64) {
    terms.iter().fold((0.0, 0.0), |(t, d), term| {
        let (f, df) = respond_one(term);
        (t + f, d + df)
    })
}

/// Pages grouped by host: host `h`'s terms are `terms[starts[h]..starts[h + 1]]`.
struct ByHost {
    starts: Vec<usize>,
    terms: Vec<Term>,
}

impl ByHost {
    /// `counts[i]` pages like `pages[i]` (one each without counts): a run of `c` identical
    /// pages is one term whose response is `c` times a page's (its numerator `c` times, in
    /// log space, and its cap `c` times).
    fn new(
        curve: Curve,
        policy: Policy,
        pages: &[PlanPage],
        counts: Option<&[u32]>,
        hosts: usize,
    ) -> Self {
        let count = |i: usize| counts.map_or(1, |c| c[i]);
        let mut starts = vec![0usize; hosts + 1];
        for (i, p) in pages.iter().enumerate() {
            if p.rate_per_day > 0.0 && p.weight > 0.0 && count(i) > 0 {
                starts[p.host + 1] += 1; // the pages `Curve::term` keeps
            }
        }
        for h in 0..hosts {
            starts[h + 1] += starts[h];
        }
        let mut next = starts.clone();
        let filler = Term {
            ln_scale: 0.0,
            ln_numerator: 0.0,
            cap: 0.0,
        };
        let mut terms = vec![filler; starts[hosts]];
        for (i, p) in pages.iter().enumerate() {
            let c = count(i);
            if c == 0 {
                continue;
            }
            if let Some(mut term) = curve.term(policy, p) {
                if c > 1 {
                    term.ln_numerator += f64::from(c).ln();
                    term.cap *= f64::from(c);
                }
                terms[next[p.host]] = term;
                next[p.host] += 1;
            }
        }
        ByHost { starts, terms }
    }

    fn host(&self, h: usize) -> &[Term] {
        &self.terms[self.starts[h]..self.starts[h + 1]]
    }
}

/// The total at `m = 0`: every page at its cap.
fn total_at_zero(terms: &[Term]) -> f64 {
    terms.iter().map(|t| t.cap).sum()
}

/// Solves the multipliers of a plan (see the module docs) of `counts[i]` pages like `pages[i]`
/// (one each without counts).
pub(super) fn multipliers(
    policy: Policy,
    pages: &[PlanPage],
    counts: Option<&[u32]>,
    limits: &Limits,
    objective: Objective,
) -> Multipliers {
    let curve = Curve::of(policy, objective);
    let hosts = pages.iter().map(|p| p.host + 1).max().unwrap_or(0);
    let by_host = ByHost::new(curve, policy, pages, counts, hosts);
    let host_mu: Vec<f64> = (0..hosts)
        .map(|h| {
            let limit = limits.host_limit(h);
            let terms = by_host.host(h);
            if terms.is_empty() || limit.is_infinite() {
                return 0.0;
            }
            find_multiplier(limit.max(0.0), total_at_zero(terms), |x| {
                total(curve, terms, x)
            })
        })
        .collect();
    // What a host adds to the budget's total while the budget's μ is below its μ_h.
    let host_ln_mu: Vec<f64> = host_mu.iter().map(|m| m.ln()).collect();
    let held: Vec<f64> = (0..hosts)
        .map(|h| {
            if host_mu[h] > 0.0 {
                total(curve, by_host.host(h), host_ln_mu[h]).0
            } else {
                total_at_zero(by_host.host(h))
            }
        })
        .collect();
    let at_zero = held.iter().sum();
    let mu = find_multiplier(limits.budget_per_day.max(0.0), at_zero, |x| {
        (0..hosts).fold((0.0, 0.0), |(t, d), h| {
            if x < host_ln_mu[h] {
                (t + held[h], d)
            } else {
                let (ht, hd) = total(curve, by_host.host(h), x);
                (t + ht, d + hd)
            }
        })
    });
    Multipliers {
        policy,
        objective,
        mu,
        host_mu,
    }
}

/// The smallest multiplier `m` (to [`TOLERANCE`]) whose total is at most `target`, for a total
/// that falls as `m` grows, given the total at `m = 0` and `eval(ln m) = (total, d total/d ln m)`.
/// The reference bisection's contract: 0 when the total at 0 already fits, ∞ when no multiplier
/// up to 1e300 makes it fit.
fn find_multiplier(target: f64, at_zero: f64, mut eval: impl FnMut(f64) -> (f64, f64)) -> f64 {
    if at_zero <= target {
        return 0.0;
    }
    if target <= 0.0 {
        return f64::INFINITY;
    }
    let ln_target = target.ln();
    // `above`: the largest x seen whose total is above the target; `fits`: the smallest at or below.
    let (mut above, mut fits): (Option<f64>, Option<f64>) = (None, None);
    // How far a step may go while the root is not bracketed (doubles when used up, as the
    // reference's search for a bracket goes by factors of 16).
    let mut reach = 16f64.ln();
    let mut widths = [f64::INFINITY; 2];
    let mut x = 0.0_f64; // m = 1, where the reference starts too
    for _ in 0..MAX_STEPS {
        let (t, dt) = eval(x);
        if t > target {
            above = Some(x);
        } else {
            fits = Some(x);
        }
        match (above, fits) {
            (Some(a), Some(f)) if f - a <= TOLERANCE => return f.exp(),
            (Some(a), None) if a >= LN_CEILING => return f64::INFINITY,
            (None, Some(f)) if f <= LN_FLOOR => return f.exp(),
            _ => {}
        }
        let width = match (above, fits) {
            (Some(a), Some(f)) => f - a,
            _ => f64::INFINITY,
        };
        let stalled = width.is_finite() && width > 0.5 * widths[0];
        widths = [widths[1], width];
        // Newton on ln T(x) = ln target, aimed half a tolerance past the predicted root.
        let mut next = f64::NAN;
        if t > 0.0 && t.is_finite() && dt < 0.0 && dt.is_finite() {
            let mut step = -(t.ln() - ln_target) * t / dt;
            if !width.is_finite() && step.abs() > 4.0 * reach {
                step = 4.0 * reach * step.signum();
                reach *= 2.0;
            }
            next = x + step + 0.5 * TOLERANCE * step.signum();
        }
        let inside = above.is_none_or(|a| next > a) && fits.is_none_or(|f| next < f);
        if !next.is_finite() || !inside || stalled {
            next = match (above, fits) {
                (Some(a), Some(f)) => 0.5 * (a + f),
                (Some(a), None) => (a + reach).min(LN_CEILING),
                (None, Some(f)) => (f - reach).max(LN_FLOOR),
                (None, None) => unreachable!("every step records a side"),
            };
            if width.is_infinite() {
                reach *= 2.0;
            }
        }
        x = next;
    }
    fits.map_or(f64::INFINITY, f64::exp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_root_of_a_power_law_to_the_tolerance() {
        // T(m) = 100 m^{-1/2}: T = 5 at m = 400.
        let m = find_multiplier(5.0, f64::INFINITY, |x| {
            let t = 100.0 * (-0.5 * x).exp();
            (t, -0.5 * t)
        });
        assert!((m / 400.0 - 1.0).abs() < 2e-12, "{m}");
    }

    #[test]
    fn keeps_the_reference_contract_at_the_edges() {
        let never = |_: f64| (1.0, 0.0);
        assert_eq!(find_multiplier(2.0, 1.0, never), 0.0);
        assert_eq!(find_multiplier(0.0, 1.0, never), f64::INFINITY);
        assert_eq!(find_multiplier(0.5, 1.0, never), f64::INFINITY);
        // A step function: no derivative to follow, so bisection finds the jump at m = e^3.
        let m = find_multiplier(0.5, 1.0, |x| (if x < 3.0 { 1.0 } else { 0.0 }, 0.0));
        assert!((m.ln() - 3.0).abs() <= 2e-12, "{m}");
    }
}
