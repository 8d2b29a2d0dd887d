//! The truth the demo judges freshet by: the true time-averaged age of a copy, the same for a
//! uniform schedule with the same number of requests, and how learned rates compare with the true
//! ones (pure).
//!
//! **Age** of a copy at time t (Cho & Garcia-Molina 2003): 0 while the copy is current, else
//! t - c where c is the first change after the copy was last synchronised. A fetch at s makes the
//! copy current as of s (it sees every change at or before s). Over a window [from, to] the
//! time-averaged age is (1 / (to - from)) ∫ age(t) dt. Between two syncs a and b with the first
//! missed change c in (a, b) the integral is (b - c)² / 2. The window is assumed to open with a
//! copy current as of the last sync at or before `from`, or as of `from` when there is none: both
//! policies compared start from the same copy.
//!
//! **Uniform baseline**: k requests on one page over [from, to] are evenly spaced I = (to - from)/k
//! apart with a seeded phase φ ∈ [0, I): syncs at from + φ + jI. This is the textbook uniform
//! policy (Cho & Garcia-Molina 2003), whose expected age for a Poisson page is
//! Ā(λ, I) = I/2 - 1/λ + (1 - e^{-λI})/(λ²I). Any plan of visit rates per page becomes sync
//! times the same way ([`plan_syncs`]): the uniform schedule is the plan with equal rates, the
//! demo's oracle the age-optimal plan on the true rates.
//!
//! **Rates**: the ratio learned / true per page, its median, and Spearman's rank correlation.
//!
//! **Staleness under an uncertain rate**: freshet holds a Gamma(a, b) posterior on each page's
//! rate λ (shape a, rate b in days). A copy checked t days ago is current when no change
//! happened since, with probability E[e^{-λt}] = (b / (b + t))^a (the Gamma's Laplace transform:
//! the posterior predictive), so P(stale) = 1 - (1 + t/b)^{-a} ([`crate::estimate::Prior::p_stale`]).

use crate::clock::MS_PER_DAY;

/// ∫ age(t) dt over [from, to] in ms², for a page with `changes` (ascending) whose copy was
/// synchronised at `syncs` (any order).
pub fn age_integral_ms2(changes: &[i64], syncs: &[i64], from: i64, to: i64) -> f64 {
    if to <= from {
        return 0.0;
    }
    let mut syncs: Vec<i64> = syncs.to_vec();
    syncs.sort_unstable();
    let before = syncs.partition_point(|&s| s <= from);
    let mut synced = if before > 0 { syncs[before - 1] } else { from };
    let mut start = from;
    let mut total = 0.0;
    let inner = syncs[before..].iter().copied().take_while(|&s| s < to);
    for end in inner.chain(std::iter::once(to)) {
        total += segment(changes, synced, start, end);
        synced = end;
        start = end;
    }
    total
}

/// ∫ age over [start, end) for a copy synchronised at `synced` ≤ start.
fn segment(changes: &[i64], synced: i64, start: i64, end: i64) -> f64 {
    let next = changes.partition_point(|&c| c <= synced);
    match changes.get(next) {
        Some(&c) if c < end => {
            let lo = start.max(c);
            let (b, l) = ((end - c) as f64, (lo - c) as f64);
            (b * b - l * l) / 2.0
        }
        _ => 0.0,
    }
}

/// The time-averaged age over [from, to], in days.
pub fn mean_age_days(changes: &[i64], syncs: &[i64], from: i64, to: i64) -> f64 {
    if to <= from {
        return 0.0;
    }
    age_integral_ms2(changes, syncs, from, to) / (to - from) as f64 / MS_PER_DAY
}

/// The true age of a copy at `t_ms`, in ms: 0 while current, else the time since the first
/// change after the last sync at or before `t_ms`; `None` when no sync happened by then (there is
/// no copy). `changes` and `syncs` ascending.
pub fn copy_age_at_ms(changes: &[i64], syncs: &[i64], t_ms: i64) -> Option<i64> {
    let synced = *syncs[..syncs.partition_point(|&s| s <= t_ms)].last()?;
    let missed = changes.partition_point(|&c| c <= synced);
    Some(match changes.get(missed) {
        Some(&c) if c <= t_ms => t_ms - c,
        _ => 0,
    })
}

/// The true freshness of a set of copies at one instant.
#[derive(Debug, Clone, PartialEq)]
pub struct TrueFreshness {
    /// Copies there are (synced at least once by then).
    pub copies: usize,
    /// Of them, changed since their last sync.
    pub stale: usize,
    /// Weighted mean age of those copies, days (0 without copies).
    pub mean_age_days: f64,
    /// Their weighted share that is stale (0 without copies).
    pub share_stale: f64,
}

/// [`TrueFreshness`] at `t_ms` of copies given as (changes, syncs, weight), both ascending:
/// what freshet's sampled estimate (`freshness_samples`) is judged against, each copy weighed as
/// freshet weighs it ([`super::copies`]).
pub fn true_freshness_at<'a>(
    copies: impl IntoIterator<Item = (&'a [i64], &'a [i64], f64)>,
    t_ms: i64,
) -> TrueFreshness {
    let (mut count, mut stale) = (0usize, 0usize);
    let (mut weight, mut stale_weight, mut age_ms) = (0.0, 0.0, 0.0);
    for (changes, syncs, w) in copies {
        if let Some(age) = copy_age_at_ms(changes, syncs, t_ms) {
            count += 1;
            stale += usize::from(age > 0);
            weight += w;
            stale_weight += if age > 0 { w } else { 0.0 };
            age_ms += w * age as f64;
        }
    }
    let total = if weight > 0.0 { weight } else { 1.0 };
    TrueFreshness {
        copies: count,
        stale,
        mean_age_days: age_ms / total / MS_PER_DAY,
        share_stale: stale_weight / total,
    }
}

/// `requests` syncs evenly spaced over [from, to] with phase `phase` ∈ [0, 1) of an interval.
pub fn uniform_syncs(requests: u64, phase: f64, from: i64, to: i64) -> Vec<i64> {
    if requests == 0 || to <= from {
        return Vec::new();
    }
    let interval = (to - from) as f64 / requests as f64;
    let phase = phase.clamp(0.0, 1.0 - f64::EPSILON) * interval;
    (0..requests)
        .map(|j| from + (phase + j as f64 * interval) as i64)
        .collect()
}

/// A plan's sync times per page over [from, to], for `rates_per_day` (visits per day, one per
/// page; non-finite or negative counts as 0). Page i is due x_i = rate_i × (to - from) in days
/// syncs; it gets ⌊x_i⌋, and the round(Σ x_i) - Σ ⌊x_i⌋ left over go one each to pages drawn
/// without replacement, weighted by their fractional parts, in a seeded order (the largest keys
/// u^{1/w}, Efraimidis & Spirakis 2006), so the plan spends round(Σ x_i) requests in all. A
/// page's k syncs are evenly spaced (to - from)/k apart with a seeded phase ([`uniform_syncs`]).
/// With equal rates this is the uniform schedule: every page gets the same count, and the extra
/// requests go to the first pages of a seeded order.
pub fn plan_syncs(rates_per_day: &[f64], from: i64, to: i64, seed: u64) -> Vec<Vec<i64>> {
    if to <= from {
        return vec![Vec::new(); rates_per_day.len()];
    }
    let days = (to - from) as f64 / MS_PER_DAY;
    let due: Vec<f64> = rates_per_day
        .iter()
        .map(|&r| {
            if r.is_finite() && r > 0.0 {
                r * days
            } else {
                0.0
            }
        })
        .collect();
    let mut counts: Vec<u64> = due.iter().map(|x| x.floor() as u64).collect();
    let whole: u64 = counts.iter().sum();
    let mut rng = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x005e_ed0f;
    // Key ln(u)/w orders pages as u^{1/w} does; a page with nothing left over never draws.
    let mut keys: Vec<(f64, usize)> = due
        .iter()
        .enumerate()
        .map(|(p, x)| {
            let u = unit(&mut rng).max(f64::MIN_POSITIVE);
            let w = x - x.floor();
            (
                if w > 0.0 {
                    u.ln() / w
                } else {
                    f64::NEG_INFINITY
                },
                p,
            )
        })
        .collect();
    keys.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let extra = (due.iter().sum::<f64>().round() as u64).saturating_sub(whole);
    for &(key, p) in keys.iter().take(extra as usize) {
        if key > f64::NEG_INFINITY {
            counts[p] += 1;
        }
    }
    counts
        .into_iter()
        .map(|k| uniform_syncs(k, unit(&mut rng), from, to))
        .collect()
}

/// A uniform draw in [0, 1).
fn unit(state: &mut u64) -> f64 {
    (splitmix(state) >> 11) as f64 / (1u64 << 53) as f64
}

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// How learned change rates compare with the true ones.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RateComparison {
    /// Pages compared.
    pub pages: usize,
    /// Median of learned / true.
    pub median_ratio: f64,
    /// Share of pages whose learned rate is within a factor 2 of the true one.
    pub within_factor_2: f64,
    /// Spearman's rank correlation between learned and true rates (None under 3 pages).
    pub spearman: Option<f64>,
}

/// Compares (true, learned) rate pairs; pairs with a non-positive or non-finite rate are skipped.
pub fn compare_rates(pairs: &[(f64, f64)]) -> Option<RateComparison> {
    let pairs: Vec<(f64, f64)> = pairs
        .iter()
        .copied()
        .filter(|(t, l)| t.is_finite() && l.is_finite() && *t > 0.0 && *l > 0.0)
        .collect();
    if pairs.is_empty() {
        return None;
    }
    let mut ratios: Vec<f64> = pairs.iter().map(|(t, l)| l / t).collect();
    let within = ratios.iter().filter(|r| (0.5..=2.0).contains(*r)).count();
    Some(RateComparison {
        pages: pairs.len(),
        median_ratio: median(&mut ratios),
        within_factor_2: within as f64 / pairs.len() as f64,
        spearman: spearman(&pairs),
    })
}

/// The median (mean of the middle two for an even count); NaN for an empty slice.
pub fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_unstable_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

/// Spearman's rank correlation (Pearson on average ranks, so ties are handled).
pub fn spearman(pairs: &[(f64, f64)]) -> Option<f64> {
    if pairs.len() < 3 {
        return None;
    }
    let xs = ranks(&pairs.iter().map(|p| p.0).collect::<Vec<_>>());
    let ys = ranks(&pairs.iter().map(|p| p.1).collect::<Vec<_>>());
    let n = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in xs.iter().zip(&ys) {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
    }
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

/// Average ranks (1-based) of `values`.
fn ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            ranks[k] = rank;
        }
        i = j + 1;
    }
    ranks
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = MS_PER_DAY as i64;

    #[test]
    fn one_change_then_one_fetch() {
        // Change at day 1, fetch at day 3, window [0, 4]: age 0..2 over [1, 3], integral 2.
        let integral = age_integral_ms2(&[DAY], &[3 * DAY], 0, 4 * DAY);
        assert!((integral / (DAY as f64 * DAY as f64) - 2.0).abs() < 1e-12);
        assert!((mean_age_days(&[DAY], &[3 * DAY], 0, 4 * DAY) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn only_the_first_missed_change_counts() {
        // Changes at 1 and 2, no fetch, window [0, 4]: age = t - 1 on [1, 4], integral 4.5.
        assert!((mean_age_days(&[DAY, 2 * DAY], &[], 0, 4 * DAY) - 4.5 / 4.0).abs() < 1e-12);
        // A fetch at exactly the change time sees it.
        assert_eq!(mean_age_days(&[DAY], &[DAY], 0, 4 * DAY), 0.0);
    }

    #[test]
    fn sync_before_window_is_the_starting_copy() {
        // Synced at -1, change at -0.5 (before the window): stale from the start, age t + 0.5.
        // ∫_0^2 (t + 0.5) dt = 2 + 1 = 3; fetch at 2, nothing after: mean 3 / 4.
        let m = mean_age_days(&[-DAY / 2], &[-DAY, 2 * DAY], 0, 4 * DAY);
        assert!((m - 0.75).abs() < 1e-12, "{m}");
        // Without any sync the window opens with a current copy.
        assert_eq!(mean_age_days(&[-DAY / 2], &[], 0, 4 * DAY), 0.0);
    }

    #[test]
    fn uniform_age_matches_the_closed_form_on_average() {
        // λ = 2/day, interval 0.5 day: Ā = I/2 - 1/λ + (1 - e^{-λI})/(λ²I) ≈ 0.0660.
        let (lambda, interval) = (2.0_f64, 0.5_f64);
        let expected = interval / 2.0 - 1.0 / lambda
            + (1.0 - (-lambda * interval).exp()) / (lambda * lambda * interval);
        let mut state = 7u64;
        let days = 4000;
        let mut changes = Vec::new();
        let mut t = 0.0;
        loop {
            let u = ((splitmix(&mut state) >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            t += -u.ln() / lambda;
            if t > days as f64 {
                break;
            }
            changes.push((t * MS_PER_DAY) as i64);
        }
        let syncs = uniform_syncs((days as f64 / interval) as u64, 0.3, 0, days * DAY);
        let m = mean_age_days(&changes, &syncs, 0, days * DAY);
        assert!((m - expected).abs() < 0.004, "{m} vs {expected}");
    }

    /// The uniform schedule as [`plan_syncs`] gets it: `requests` over `pages` equal rates.
    fn uniform_plan(requests: u64, pages: usize, from: i64, to: i64, seed: u64) -> Vec<Vec<i64>> {
        let rate = requests as f64 / pages as f64 / ((to - from) as f64 / MS_PER_DAY);
        plan_syncs(&vec![rate; pages], from, to, seed)
    }

    #[test]
    fn uniform_plan_spreads_requests_evenly() {
        let plan = uniform_plan(10, 4, 0, 12 * DAY, 1);
        let counts: Vec<usize> = plan.iter().map(Vec::len).collect();
        assert_eq!(counts.iter().sum::<usize>(), 10);
        assert!(counts.iter().all(|&c| c == 2 || c == 3));
        let three = plan.iter().find(|s| s.len() == 3).unwrap();
        assert_eq!(three[1] - three[0], 4 * DAY);
        assert!(three[0] >= 0 && three[0] < 4 * DAY);
        assert_eq!(plan, uniform_plan(10, 4, 0, 12 * DAY, 1));
        assert_ne!(plan, uniform_plan(10, 4, 0, 12 * DAY, 2));
        // Any even split, whatever the rounding of rate × days.
        for (requests, pages) in [(7, 7), (1000, 3), (999, 37), (0, 5)] {
            let plan = uniform_plan(requests, pages, 0, 3 * DAY + 7, 9);
            let counts: Vec<u64> = plan.iter().map(|s| s.len() as u64).collect();
            assert_eq!(
                counts.iter().sum::<u64>(),
                requests,
                "{requests} over {pages}"
            );
            let low = requests / pages as u64;
            assert!(
                counts.iter().all(|&c| c == low || c == low + 1),
                "{counts:?}"
            );
        }
    }

    #[test]
    fn planned_syncs_follow_each_page_rate() {
        // 10 days: rates 2.55, 0.25, 0 and a broken one are due 25.5, 2.5, 0 and 0 syncs.
        let rates = [2.55, 0.25, 0.0, f64::NAN];
        let mut fractional = 0;
        for seed in 0..200 {
            let plan = plan_syncs(&rates, 0, 10 * DAY, seed);
            let counts: Vec<usize> = plan.iter().map(Vec::len).collect();
            assert_eq!(counts[0] + counts[1], 28, "{counts:?}");
            assert_eq!(&counts[2..], &[0, 0]);
            assert!(counts[1] == 2 || counts[1] == 3, "{counts:?}");
            assert!(
                plan[0]
                    .windows(2)
                    .all(|w| (w[1] - w[0] - 10 * DAY / counts[0] as i64).abs() <= 1)
            );
            assert!(plan.iter().flatten().all(|&t| (0..10 * DAY).contains(&t)));
            fractional += usize::from(counts[0] == 26);
        }
        // Both fractions are a half: the one leftover request is a fair draw between them.
        assert!((60..140).contains(&fractional), "{fractional} of 200");
        assert_eq!(plan_syncs(&rates, 5, 5, 1), vec![Vec::<i64>::new(); 4]);
    }

    #[test]
    fn true_freshness_at_an_instant() {
        // Page A: synced at 1, changes at 2 and 3: at day 4 its age is 2 days.
        // Page B: synced at 1 and 3, change at 2: current at day 4 (the sync at 3 saw it).
        // Page C: never synced by day 4: no copy, not counted.
        let (a_changes, a_syncs) = (vec![2 * DAY, 3 * DAY], vec![DAY]);
        let (b_changes, b_syncs) = (vec![2 * DAY], vec![DAY, 3 * DAY]);
        let (c_changes, c_syncs) = (vec![DAY], vec![5 * DAY]);
        assert_eq!(copy_age_at_ms(&a_changes, &a_syncs, 4 * DAY), Some(2 * DAY));
        assert_eq!(copy_age_at_ms(&b_changes, &b_syncs, 4 * DAY), Some(0));
        assert_eq!(copy_age_at_ms(&c_changes, &c_syncs, 4 * DAY), None);
        // A sync at exactly the instant makes the copy current; a change at it has no age yet.
        assert_eq!(copy_age_at_ms(&[DAY], &[DAY], DAY), Some(0));
        assert_eq!(copy_age_at_ms(&[2 * DAY], &[DAY], 2 * DAY), Some(0));
        let pages = [
            (a_changes.as_slice(), a_syncs.as_slice(), 1.0),
            (b_changes.as_slice(), b_syncs.as_slice(), 1.0),
            (c_changes.as_slice(), c_syncs.as_slice(), 1.0),
        ];
        let f = true_freshness_at(pages, 4 * DAY);
        assert_eq!((f.copies, f.stale), (2, 1));
        assert!((f.mean_age_days - 1.0).abs() < 1e-12);
        assert!((f.share_stale - 0.5).abs() < 1e-12);
        // Weighed as freshet weighs them: A at 1, B at 3.
        let weighted = [pages[0], (pages[1].0, pages[1].1, 3.0), pages[2]];
        let w = true_freshness_at(weighted, 4 * DAY);
        assert_eq!((w.copies, w.stale), (2, 1));
        assert!((w.mean_age_days - 0.5).abs() < 1e-12);
        assert!((w.share_stale - 0.25).abs() < 1e-12);
        let none = true_freshness_at(pages, 0);
        assert_eq!(
            (none.copies, none.mean_age_days, none.share_stale),
            (0, 0.0, 0.0)
        );
    }

    fn p_stale_gamma(shape: f64, rate: f64, since_days: f64) -> f64 {
        crate::estimate::Prior { shape, rate }.p_stale(since_days)
    }

    #[test]
    fn p_stale_under_a_gamma_posterior() {
        // a = 1, b = 1 (an exponential prior), one day: 1 - 1/2.
        assert!((p_stale_gamma(1.0, 1.0, 1.0) - 0.5).abs() < 1e-15);
        // a = 2, b = 4, two days: 1 - (4/6)² = 5/9.
        assert!((p_stale_gamma(2.0, 4.0, 2.0) - 5.0 / 9.0).abs() < 1e-15);
        assert_eq!(p_stale_gamma(2.0, 4.0, 0.0), 0.0);
        assert_eq!(p_stale_gamma(0.0, 4.0, 2.0), 0.0);
        assert_eq!(p_stale_gamma(2.0, 0.0, 2.0), 1.0);
        assert!(p_stale_gamma(f64::NAN, 1.0, 1.0).is_nan());
        assert!(p_stale_gamma(2.0, 4.0, 1e9) > 1.0 - 1e-12);
        // Tiny t: about a t / b, not lost to cancellation.
        let small = p_stale_gamma(3.0, 2.0, 1e-12);
        assert!((small - 1.5e-12).abs() < 1e-20, "{small}");
        // A sure rate (a, b large, a/b = λ) is the Poisson 1 - e^{-λt}; an unsure one is below.
        let (lambda, t) = (0.7, 1.3);
        let sure = p_stale_gamma(lambda * 1e8, 1e8, t);
        assert!(
            (sure - crate::plan::p_stale(lambda, t)).abs() < 1e-7,
            "{sure}"
        );
        assert!(p_stale_gamma(lambda * 2.0, 2.0, t) < crate::plan::p_stale(lambda, t));
        // Monotone in t.
        let ps: Vec<f64> = (0..50)
            .map(|k| p_stale_gamma(1.5, 2.0, k as f64 * 0.3))
            .collect();
        assert!(ps.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn rate_comparison() {
        let pairs = [(1.0, 2.0), (2.0, 2.0), (4.0, 3.0), (0.0, 1.0)];
        let c = compare_rates(&pairs).unwrap();
        assert_eq!(c.pages, 3);
        assert_eq!(c.median_ratio, 1.0);
        assert!((c.within_factor_2 - 1.0).abs() < 1e-12);
        // Ranks (1,2,3) vs (1.5,1.5,3): correlation 0.866.
        assert!((c.spearman.unwrap() - 0.75_f64.sqrt()).abs() < 1e-9);
        assert_eq!(compare_rates(&[]), None);
        let mut even = [4.0, 1.0, 3.0, 2.0];
        assert_eq!(median(&mut even), 2.5);
    }
}
