//! A site's population of change rates as a prior: nonparametric empirical Bayes on a fixed grid
//! in `ln λ` (pure: no clock, database or network).
//!
//! A site's pages do not share one rate, and their rates are not Gamma-distributed: they spread
//! over decades, log-normal-like or with several modes (an archive and a front page). A Gamma
//! moment-matched to them ([`super::pool`]) puts its mass where the fast pages pull the mean, so a
//! slow page with little evidence is believed faster than it is, and a page with a few checks is
//! scattered around a centre that describes none of them. Instead the population itself is
//! estimated: weights `π_k` on rates `λ_k = e^{u_k}` spread evenly in `u` from once in 27 years
//! to 10,000 times a day, fitted to the pages' likelihoods `L_i(λ)` by maximising
//! `Σ_i ln Σ_k π_k L_i(λ_k)`, the nonparametric maximum-likelihood estimate of a mixing
//! distribution (Kiefer & Wolfowitz 1956; Laird, "Nonparametric maximum likelihood estimation of a
//! mixing distribution", JASA 1978). Its EM step is `π_k ← π_k mean_i (L_ik / Σ_j π_j L_ij)`;
//! each step is followed by a light smoothing of neighbouring weights (the EMS algorithm:
//! Silverman, Jones, Wilson & Nychka, JRSS B 1990), which keeps the fitted prior smooth in `u`
//! instead of the NPMLE's few spikes, and a floor that keeps every rate possible, so a page
//! faster or slower than all its neighbours is still found by its own evidence. A page's
//! posterior is then its likelihood times this prior ([`Population::posterior`]).
//! Efron ("Empirical Bayes deconvolution estimates", Biometrika 2016) reviews the approach.

use super::Stats;
use super::posterior::{Posterior, log_likelihood};

/// `ln λ` of the grid's first node: once in 10,000 days (27 years).
const LOW_U: f64 = -9.210_340_371_976_184;
/// `ln λ` of the grid's last node: 10,000 changes a day (one every 9 s).
const HIGH_U: f64 = 9.210_340_371_976_184;
/// The fastest rate a population holds, changes a day (`e^HIGH_U`): a page that changes faster
/// reads as about this under its site's population, and `explain` says so.
pub const HIGHEST_RATE_PER_DAY: f64 = 10_000.0;
/// Nodes of the grid: 0.2 in `ln λ` apart (a factor 1.22), finer than any page's own evidence
/// resolves before dozens of checks, when the prior no longer matters.
pub const NODES: usize = 93;
/// EM steps from a uniform start; a refit from the previous prior takes [`REFIT_STEPS`].
const FIT_STEPS: usize = 200;
const REFIT_STEPS: usize = 30;
/// The share of the prior spread widely around the fitted population whatever the pages say, so
/// a page somewhat faster or slower than all its neighbours is still found by its own evidence:
/// the population blurred by a Gaussian of [`FLOOR_SPREAD_U`] in `ln λ`.
const FLOOR_SHARE: f64 = 0.02;
const FLOOR_SPREAD_U: f64 = 1.5;
/// The share spread evenly over the whole grid, so every rate stays possible. It is tiny: mass
/// spread evenly in `ln λ` up to 10,000 changes a day lifts the mean rate of a page with no
/// evidence of its own by about `share × 5,000` a day (a 2% even floor made a new page of a
/// 3-a-day group read as 17 a day).
const EVERYWHERE_SHARE: f64 = 1e-6;
/// Fewest pages with evidence for a population to be estimated at all.
pub const MIN_PAGES: usize = 20;
/// Fewest pages with evidence for a group of them (a host's) to get a population of its own.
pub const MIN_GROUP_PAGES: usize = 5;
/// How many pages' worth the site's population weighs in a group's: a host with this many
/// pages with evidence reads half as its site and half as its own pages have shown.
///
/// Tried and not kept: choosing it per group by 5-fold cross-validation (the held-out pages'
/// likelihood) among the site's own population and 64, 16, 4, 1 and 0.25 pages, 8 EM steps
/// each. On the demo it chose 0.25-1 for groups unlike their site (every host's home pages,
/// the `live` host) and 4-64 for hosts like it, but neither miss moved (seeds 1-4, one run
/// each: estimated over true mean age 1.068-1.134, interval coverage 0.809-0.897, against
/// 1.055-1.159 and 0.846-0.875 with this constant). In `tests` below it chose 0.25 even for a
/// host drawn from its site's own mix (the site's smoothed population predicts less sharply
/// than a fit to the host's pages), and a slow host's quiet page read further from its truth.
const GROUP_PSEUDO_PAGES: f64 = 5.0;
/// EM steps from the site's population to a group's: few, so a group drawn from the site's
/// own mix stays near it instead of fitting its sample's noise.
const GROUP_STEPS: usize = 3;

/// A population prior: weights on the grid of rates.
#[derive(Debug, Clone, PartialEq)]
pub struct Population {
    /// `π_k`, summing to 1.
    weights: Vec<f64>,
}

/// `u_k`, the log rate of node `k`.
pub fn node_u(k: usize) -> f64 {
    LOW_U + (HIGH_U - LOW_U) * k as f64 / (NODES - 1) as f64
}

impl Population {
    /// Fits the population to the pages' evidence (each [`Stats`] one page's), starting from
    /// `previous` when given (fewer steps); `None` with fewer than [`MIN_PAGES`] pages that have
    /// any evidence.
    pub fn fit<'a>(
        pages: impl IntoIterator<Item = &'a Stats>,
        previous: Option<&Population>,
    ) -> Option<Self> {
        let us: Vec<f64> = (0..NODES).map(node_u).collect();
        let (likelihoods, pages_used) = likelihood_rows(pages, &us);
        if pages_used < MIN_PAGES {
            return None;
        }
        let (mut weights, steps) = match previous {
            Some(p) => (p.weights.clone(), REFIT_STEPS),
            None => (vec![1.0 / NODES as f64; NODES], FIT_STEPS),
        };
        let mut next = vec![0.0; NODES];
        for _ in 0..steps {
            node_shares(&likelihoods, &weights, &mut next);
            next.iter_mut().for_each(|n| *n /= pages_used as f64);
            smooth(&next, &mut weights);
        }
        Some(Self { weights })
    }

    /// `ln π(u)` per unit of `u`, interpolated between nodes (log-linearly) and flat beyond
    /// the grid's ends.
    pub fn log_density(&self, u: f64) -> f64 {
        let x =
            ((u - LOW_U) / (HIGH_U - LOW_U) * (NODES - 1) as f64).clamp(0.0, (NODES - 1) as f64);
        let k = (x.floor() as usize).min(NODES - 2);
        let f = x - k as f64;
        let step = (HIGH_U - LOW_U) / (NODES - 1) as f64;
        let (a, b) = (self.weights[k].ln(), self.weights[k + 1].ln());
        a + f * (b - a) - step.ln()
    }

    /// The posterior of a page's rate given its evidence, with this population as the prior.
    pub fn posterior(&self, stats: &Stats) -> Posterior {
        Posterior::with_prior_density(stats, |u| self.log_density(u), self.span())
    }

    /// The population of a group of this population's pages (one host's): the maximum a
    /// posteriori mixing weights of the group's own pages under a Dirichlet prior centred on
    /// this population with the weight of [`GROUP_PSEUDO_PAGES`] pages,
    /// `π'_k = (α π_k + Σ_i r_ik) / (α + n)` with `r_ik` page `i`'s posterior share of node
    /// `k` under `π'`, iterated [`GROUP_STEPS`] times from `π`, then smoothed and floored as
    /// the site's is.
    ///
    /// A site that joins hosts of different paces (a news front and an archive) pools them into
    /// one population with a mode for each; a page with little evidence of its own would then
    /// read as the whole site's mix (the demo's slow `live` pages were believed 2.5 times as
    /// fast as they were). Under its host's population it reads as its host's pages have
    /// shown; a host like its site keeps about the site's population. `None` with fewer than
    /// [`MIN_GROUP_PAGES`] pages that have evidence.
    pub fn for_group<'a>(&self, pages: impl IntoIterator<Item = &'a Stats>) -> Option<Self> {
        let us: Vec<f64> = (0..NODES).map(node_u).collect();
        let (likelihoods, used) = likelihood_rows(pages, &us);
        if used < MIN_GROUP_PAGES {
            return None;
        }
        let mut weights = self.weights.clone();
        let mut shares = vec![0.0; NODES];
        for _ in 0..GROUP_STEPS {
            node_shares(&likelihoods, &weights, &mut shares);
            let denominator = GROUP_PSEUDO_PAGES + used as f64;
            for ((w, site), share) in weights.iter_mut().zip(&self.weights).zip(&shares) {
                *w = (GROUP_PSEUDO_PAGES * site + share) / denominator;
            }
        }
        // The site's floor, which the pseudo-pages' share would thin out: a page faster or
        // slower than all its group is still found by its own evidence.
        let raw = weights.clone();
        smooth(&raw, &mut weights);
        Some(Self { weights })
    }

    /// The interval of `u` the grid covers (the prior has no mass outside it).
    pub fn span(&self) -> (f64, f64) {
        (LOW_U, HIGH_U)
    }
}

/// EM's E-step: into `shares`, each node's posterior share summed over the pages,
/// `Σ_i π_k L_ik / Σ_j π_j L_ij`, for likelihood rows `likelihoods` under the weights `π`.
fn node_shares(likelihoods: &[f64], weights: &[f64], shares: &mut [f64]) {
    shares.iter_mut().for_each(|x| *x = 0.0);
    for l in likelihoods.chunks_exact(NODES) {
        let total: f64 = l.iter().zip(weights).map(|(l, w)| l * w).sum();
        if total > 0.0 {
            for ((share, l), w) in shares.iter_mut().zip(l).zip(weights) {
                *share += l * w / total;
            }
        }
    }
}

/// Each page's likelihood at the nodes `us`, scaled to a top of 1, one row per page with
/// evidence, and how many rows.
fn likelihood_rows<'a>(
    pages: impl IntoIterator<Item = &'a Stats>,
    us: &[f64],
) -> (Vec<f64>, usize) {
    let mut rows: Vec<f64> = Vec::new();
    let mut row = Vec::with_capacity(us.len());
    let mut used = 0;
    for stats in pages {
        if stats.events <= 0.0 && stats.exposure_days <= 0.0 && stats.changed_intervals.is_empty() {
            continue;
        }
        log_likelihood(stats, us, &mut row);
        let top = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !top.is_finite() {
            continue;
        }
        rows.extend(row.iter().map(|l| (l - top).exp()));
        used += 1;
    }
    (rows, used)
}

/// One smoothing pass of EMS: each weight becomes `¼, ½, ¼` of itself and its neighbours (the
/// ends reflect), then the floor is mixed in; the result sums to 1.
fn smooth(raw: &[f64], out: &mut [f64]) {
    let n = raw.len();
    for k in 0..n {
        let before = raw[k.saturating_sub(1)];
        let after = raw[(k + 1).min(n - 1)];
        out[k] = 0.25 * before + 0.5 * raw[k] + 0.25 * after;
    }
    let total: f64 = out.iter().sum();
    let step = (HIGH_U - LOW_U) / (n - 1) as f64;
    let reach = (4.0 * FLOOR_SPREAD_U / step).ceil() as usize;
    let kernel: Vec<f64> = (0..=reach)
        .map(|d| (-0.5 * (d as f64 * step / FLOOR_SPREAD_U).powi(2)).exp())
        .collect();
    let blurred: Vec<f64> = (0..n)
        .map(|k| {
            (k.saturating_sub(reach)..(k + reach + 1).min(n))
                .map(|j| out[j] * kernel[k.abs_diff(j)])
                .sum()
        })
        .collect();
    let blurred_total: f64 = blurred.iter().sum();
    let own = 1.0 - FLOOR_SHARE - EVERYWHERE_SHARE;
    for (w, b) in out.iter_mut().zip(&blurred) {
        *w = own * *w / total + FLOOR_SHARE * b / blurred_total + EVERYWHERE_SHARE / n as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pages whose rates are `rates`, each observed with exact change times for `days`.
    fn pages(rates: &[f64], days: f64) -> Vec<Stats> {
        rates
            .iter()
            .map(|&r| Stats {
                events: (r * days).round(),
                exposure_days: days,
                changed_intervals: Vec::new(),
            })
            .collect()
    }

    #[test]
    fn a_page_with_no_evidence_reads_as_its_population() {
        // Pages spread around 3 a day: a new page's mean is about theirs, not lifted by the
        // floor's reach up to 10,000 a day; a page that changed at every one of many hourly
        // checks is still found far faster than all of them.
        let rates: Vec<f64> = (0..100)
            .map(|i| 3.0 * 1.5f64.powf(i as f64 / 50.0 - 1.0))
            .collect();
        let p = Population::fit(&pages(&rates, 60.0), None).expect("enough pages");
        let mean: f64 = rates.iter().sum::<f64>() / rates.len() as f64;
        let new_page = p.posterior(&Stats::default()).mean();
        assert!((new_page / mean - 1.0).abs() < 0.15, "{new_page} vs {mean}");
        let always = Stats {
            changed_intervals: vec![(1.0 / 24.0, 200.0)],
            ..Stats::default()
        };
        assert!(
            p.posterior(&always).quantile(0.05) > 30.0,
            "{:?}",
            p.posterior(&always).interval_90()
        );
    }

    #[test]
    fn a_quiet_page_has_an_interval_from_zero_where_pages_never_change() {
        let quiet = Stats {
            exposure_days: 10.0,
            ..Stats::default()
        };
        // No page of the site is slower than once in 20 days: a page quiet for ten days is
        // believed about that slow, not slower, and its interval is central.
        let changing: Vec<f64> = (0..100)
            .map(|i| 0.05 * 1.05f64.powf(f64::from(i)))
            .collect();
        let p = Population::fit(&pages(&changing, 60.0), None).expect("enough pages");
        let (low, high) = p.posterior(&quiet).interval_90();
        assert!(low > 0.01 && high < 1.0, "{low} {high}");
        // A third of them never changed in 60 days: the slowest rates the population holds are
        // the likeliest for a quiet page, and its interval starts at 0, holding a page that
        // never changes.
        let mut rates = changing;
        rates.extend([0.0; 50]);
        let p = Population::fit(&pages(&rates, 60.0), None).expect("enough pages");
        let post = p.posterior(&quiet);
        let (low, high) = post.interval_90();
        assert_eq!((low, high), (0.0, post.quantile(0.9)));
        assert!(high < 1.0, "{high}");
        // A page that changes has its interval around its rate, away from 0.
        let busy = Stats {
            events: 20.0,
            exposure_days: 10.0,
            ..Stats::default()
        };
        let (low, high) = p.posterior(&busy).interval_90();
        assert!(low > 1.0 && high < 3.5, "{low} {high}");
    }

    #[test]
    fn two_groups_of_pages_give_a_prior_with_two_modes() {
        let mut rates = vec![0.02; 100];
        rates.extend(vec![5.0; 100]);
        let stats = pages(&rates, 60.0);
        let p = Population::fit(&stats, None).expect("enough pages");
        let density = |rate: f64| p.log_density(rate.ln());
        assert!(density(0.02) > density(0.3) + 2.0, "{p:?}");
        assert!(density(5.0) > density(0.3) + 2.0, "{p:?}");
        // The floor keeps every rate possible.
        assert!(density(1000.0).is_finite());
        // Half the mass at each group (less the floor and the smoothing's spill).
        let mass_near = |rate: f64| -> f64 {
            (0..NODES)
                .filter(|&k| (node_u(k) - rate.ln()).abs() <= 1.0)
                .map(|k| p.weights[k])
                .sum()
        };
        for rate in [0.02, 5.0] {
            let mass = mass_near(rate);
            assert!((0.4..=0.5).contains(&mass), "{mass} near {rate}: {p:?}");
        }
    }

    /// Pages whose rates are `rates`, each checked daily for `days` days; whether each check
    /// saw a change is drawn (seeded) with probability `1 - e^{-rate}`.
    fn checked_daily(rates: &[f64], days: usize, seed: u64) -> Vec<Stats> {
        let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut uniform = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        rates
            .iter()
            .map(|&r| {
                let mut stats = Stats::default();
                for _ in 0..days {
                    let changed = uniform() < 1.0 - (-r).exp();
                    stats.add_check(1.0, Some(changed), None);
                }
                stats
            })
            .collect()
    }

    #[test]
    fn a_host_reads_as_its_own_pages_not_as_the_site_it_is_pooled_into() {
        // A site of fast pages (80 at 2 a day) and one host of slow ones (20 at 0.04 a day),
        // ten daily checks each. Under the site's population, a new page reads as the mix of
        // both, and a slow page that stayed quiet as what quiet pages of the whole site have in
        // common; under its host's population, each reads as its host's pages.
        let mut rates = vec![2.0; 80];
        rates.extend(vec![0.04; 20]);
        let stats = checked_daily(&rates, 10, 7);
        let site = Population::fit(&stats, None).expect("enough pages");
        let slow = site.for_group(&stats[80..]).expect("enough pages");
        let fast = site.for_group(&stats[..80]).expect("enough pages");
        let new = Stats::default();
        let quiet = Stats {
            exposure_days: 10.0,
            ..Stats::default()
        };
        let mean = |p: &Population, s: &Stats| p.posterior(s).mean();
        let off = |rate: f64, truth: f64| (rate / truth).ln().abs();
        assert!(off(mean(&slow, &new), 0.04) < off(mean(&site, &new), 0.04));
        // (A fast page that changed at nearly every daily check bounds its rate from below
        // only: the fast pages read somewhat above 2.)
        assert!(mean(&fast, &new) > mean(&site, &new));
        assert!(mean(&slow, &new) < 0.25 * mean(&fast, &new), "{slow:?}");
        // Ten quiet days say most of it already: the host changes it little.
        let (own, pooled) = (mean(&slow, &quiet), mean(&site, &quiet));
        assert!((own / pooled - 1.0).abs() < 0.1, "{own} vs {pooled}");
    }

    #[test]
    fn a_host_like_its_site_keeps_about_its_population_and_a_few_pages_none() {
        let rates: Vec<f64> = (0..200)
            .map(|i| 0.5 * 4f64.powf(i as f64 / 100.0 - 1.0))
            .collect();
        let stats = checked_daily(&rates, 20, 3);
        let site = Population::fit(&stats, None).expect("enough pages");
        // Every fifth page: a host drawn from the site's own mix.
        let host = site
            .for_group(stats.iter().step_by(5))
            .expect("enough pages");
        for page in [&Stats::default(), &stats[0], &stats[199]] {
            let (own, pooled) = (host.posterior(page).mean(), site.posterior(page).mean());
            assert!((own / pooled - 1.0).abs() < 0.15, "{own} vs {pooled}");
        }
        assert_eq!(site.for_group(&stats[..MIN_GROUP_PAGES - 1]), None);
    }

    #[test]
    fn too_few_pages_give_no_population() {
        assert!(Population::fit(&pages(&[1.0; 5], 10.0), None).is_none());
        assert!(Population::fit(&vec![Stats::default(); 50], None).is_none());
    }
}
