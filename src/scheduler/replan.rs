//! Solving the plan: pool each site's pages into a prior (empirical Bayes), judge each host's
//! `changefreq` hints against what its pages taught, price each feed against the age it cuts,
//! and solve the age-optimal rates under the site's budget and its hosts' limits
//! ([`crate::plan::solve_runs`], the site's pages as runs of pages alike: [`super::site_pages`]).
//! How a feed is priced: [`super::feed_polls`].

use std::collections::HashMap;

use crate::clock::MS_PER_DAY;
use crate::estimate::population::MIN_PAGES;
use crate::estimate::{self, Population, Prior, Stats, pool};
use crate::plan::{self, Limits, Objective, PlanPage};

use super::policy::{self, PolicyKind};
use super::site_pages::SitePages;
use super::{AUDIT_INTERVALS, HostKey, Scheduler, SiteKey, UrlKey, UrlKind, UrlState};

/// A page agrees with its `changefreq` hint when the hint is within this factor of the 90%
/// interval its own evidence gives its rate (a hint is a coarse category: an honest one is
/// within about this factor of the page's rate).
const HINT_TOLERANCE: f64 = 5.0;
/// Pages judging a host's hints before they are believed, and the share of them that may
/// disagree (hints that lie are worse than none).
const HINT_MIN_JUDGES: usize = 3;
const HINT_DISAGREEMENT_SHARE: f64 = 0.2;
/// Pages sampled for a site's pooled prior, and per host to judge its hints.
const POOL_SAMPLE: usize = 4_000;
const HINT_JUDGES: usize = 50;
/// Checks a page, on average, from which a site's stored estimates are taken as written under
/// a population like the one a start fits ([`Scheduler::take_stored_estimates`]).
const ESTABLISHED_CHECKS: f64 = 3.0;
/// How far (in `ln`) a site's pooled Gamma must move for its pages' stored estimates to be
/// written again: 1%.
const GAMMA_MOVED: f64 = 0.01;
/// How often a site's population of rates is fitted again (each fit moves every page's
/// posterior a little; the pages' own evidence moves them between fits).
pub(super) const POPULATION_REFIT_MS: i64 = 6 * 3_600_000;
/// The half-life of the smoothed rate of a site's requests outside its plan: the regular
/// re-plan's period, so each regular re-plan weighs the last period as much as all before it.
const OVERHEAD_HALF_LIFE_DAYS: f64 = 0.25;
/// The share of a site's budget always left to its pages, whatever its overheads.
const MIN_PAGE_SHARE: f64 = 0.1;
/// The most times a site is solved again for what its covered pages save, and the change in the
/// savings (a share of the site's budget) at which they are taken as settled.
const MAX_SAVINGS_ROUNDS: usize = 8;
const SAVINGS_SETTLED: f64 = 1e-4;

impl Scheduler {
    /// Solves every site's plan again and re-queues every URL by it; with `fit_priors`, fits
    /// the sites' priors and judges their hints first (a regular or first plan, or one for URLs
    /// added; not one for checks alone, see [`Scheduler::poll_request`]).
    pub(super) fn replan(&mut self, now_ms: i64, fit_priors: bool) {
        let first = self.last_replan_ms.is_none();
        self.last_replan_ms = Some(now_ms);
        self.checks_since_replan = 0;
        if fit_priors {
            self.dirty = false;
            self.last_fit_ms = Some(now_ms);
            self.next_replan_ms = now_ms.saturating_add(self.config.replan_every_ms);
        }
        if fit_priors && self.config.policy == PolicyKind::Learned {
            self.pool_priors(now_ms);
            self.judge_hints();
            // (A run's first plan is always one that fits the priors: `dirty` starts set.)
            if first {
                self.take_stored_estimates();
            }
        }
        // The URLs in play grouped by site, in key order (a counting sort, 4 bytes a URL: a
        // list per site of 8-byte keys, doubling as it filled, cost 8 to 16).
        let sites = self.sites.len();
        let mut starts = vec![0usize; sites + 1];
        for u in self.urls.iter().filter(|u| !u.retired) {
            starts[u.site() + 1] += 1;
        }
        for site in 0..sites {
            starts[site + 1] += starts[site];
        }
        self.urls_at_replan = starts[sites] as u64;
        let mut next = starts.clone();
        let mut by_site = vec![0u32; starts[sites]];
        for (key, u) in self.urls.iter().enumerate() {
            if !u.retired {
                by_site[next[u.site()]] = u32::try_from(key).expect("fewer than 2^32 URLs");
                next[u.site()] += 1;
            }
        }
        for site in 0..sites {
            self.replan_site(site, &by_site[starts[site]..starts[site + 1]], now_ms);
        }
        for url in by_site {
            let url = url as UrlKey;
            // Never checked: still due when they were found.
            if self.urls[url].last_check_ms().is_some() {
                self.schedule(url, now_ms);
            }
        }
    }

    /// Each site's priors: its pages' own evidence pooled into a Gamma and, once enough pages
    /// have some, into populations of rates: one of all its pages (hints left out: they are
    /// judged against these) and one per `changefreq` value among the pages whose hints are
    /// believed, so a hint says exactly as much as the pages that carry it have shown.
    ///
    /// Called at the plans that fit the priors (the first, the regular ones, those for URLs
    /// added). A site's populations are fitted at those every [`POPULATION_REFIT_MS`], and
    /// sooner once the site's checks have doubled since the last fit. Tried and taken back: fitting them at the plans for checks alone too, so a young
    /// site would not wait for the regular plan. On a minute's evidence (one interval a page)
    /// the fitted population held a page seen unchanged once over three minutes at 4 a day,
    /// its 90% interval up to 3, P(stale) 0.001: in helper-83's s7, its pages changing every 2
    /// minutes then had 3 requests in 11 minutes and claimed 0.026 against 0.553 stale.
    fn pool_priors(&mut self, now_ms: i64) {
        let population_due: Vec<bool> = self
            .sites
            .iter()
            .map(|s| {
                let grown = s.checks >= (MIN_PAGES as u64).max(2 * s.checks_at_fit);
                let old = s
                    .population_fitted_ms
                    .is_none_or(|at| now_ms - at >= POPULATION_REFIT_MS);
                grown || old
            })
            .collect();
        let mut posteriors: Vec<Vec<Prior>> = vec![Vec::new(); self.sites.len()];
        let mut evidence: Vec<Vec<&Stats>> = vec![Vec::new(); self.sites.len()];
        let mut by_hint: Vec<HashMap<u64, Vec<&Stats>>> = vec![HashMap::new(); self.sites.len()];
        // A few thousand pages of a site fix its prior as well as all of them would: every
        // `stride`-th of each site's (one stride for all URLs left a 40-page site among a
        // million URLs with no page sampled, and no population ever).
        let wanted = |u: &&UrlState| u.kind == UrlKind::Page && !u.retired;
        let mut site_pages = vec![0usize; self.sites.len()];
        for u in self.urls.iter().filter(wanted) {
            site_pages[u.site()] += 1;
        }
        let strides: Vec<usize> = site_pages
            .iter()
            .map(|&n| (n / POOL_SAMPLE).max(1))
            .collect();
        let mut met = vec![0usize; self.sites.len()];
        for u in self.urls.iter().filter(wanted) {
            met[u.site()] += 1;
            if !met[u.site()].is_multiple_of(strides[u.site()]) {
                continue;
            }
            // The Gamma takes only pages with some exposure: a page whose every check saw a
            // change only bounds its rate from below, and its posterior's upper tail is the
            // prior's own. The populations take every likelihood as it is.
            if u.stats().exposure_days > 0.0 {
                posteriors[u.site()].push(estimate::posterior(u.stats(), &Prior::default()));
            }
            evidence[u.site()].push(u.stats());
            if let Some(hint) = u
                .changefreq_per_day
                .get()
                .filter(|_| self.hosts[u.host()].believe_hints)
            {
                by_hint[u.site()]
                    .entry(hint.to_bits())
                    .or_default()
                    .push(u.stats());
            }
        }
        let mut fitted = Vec::new();
        for (site, (s, list)) in self.sites.iter().zip(&posteriors).enumerate() {
            let prior = pool(list, Prior::default());
            if !population_due[site] {
                fitted.push((prior, None));
                continue;
            }
            let population = Population::fit(evidence[site].iter().copied(), s.population.as_ref());
            let hinted: HashMap<u64, Population> = by_hint[site]
                .iter()
                .filter_map(|(&hint, pages)| {
                    let previous = s.hint_populations.get(&hint);
                    Some((hint, Population::fit(pages.iter().copied(), previous)?))
                })
                .collect();
            fitted.push((prior, population.map(|p| (p, hinted))));
        }
        let mut refitted = vec![false; self.sites.len()];
        for (site, (s, (prior, populations))) in self.sites.iter_mut().zip(fitted).enumerate() {
            // A site without a population weighs its pages under the Gamma: its change moves
            // their estimates (a site with no page checked, or the same Gamma, moves none).
            let gamma_moved = s.population.is_none()
                && !posteriors[site].is_empty()
                && ((prior.shape / s.prior.shape).ln().abs() > GAMMA_MOVED
                    || (prior.rate / s.prior.rate).ln().abs() > GAMMA_MOVED);
            s.prior = prior;
            if let Some((population, hinted)) = populations {
                s.checks_at_fit = s.checks;
                s.population = Some(population);
                s.hint_populations = hinted;
                s.population_fitted_ms = Some(now_ms);
                refitted[site] = true;
            }
            if refitted[site] || gamma_moved {
                s.beliefs_changed_ms = Some(now_ms);
                self.beliefs_changed_ms = Some(now_ms);
            }
        }
        self.fit_groups(&refitted, now_ms);
    }

    /// At a run's first plan: the stored estimates of an established site (at least
    /// [`ESTABLISHED_CHECKS`] checks a page) were written under priors fitted to about the
    /// evidence this plan fitted them to, and stand; a young site's were likely written under
    /// the vague prior before its first fit (a run stopped minutes in), and are written
    /// again. (Every page's estimate rewritten at each start would cost a `--once`
    /// pass over a million URLs about ten seconds.)
    fn take_stored_estimates(&mut self) {
        let mut checked = vec![0u64; self.sites.len()];
        for u in self.urls.iter() {
            if u.kind == UrlKind::Page && !u.retired && u.last_check_ms().is_some() {
                checked[u.site()] += 1;
            }
        }
        let mut all_stand = true;
        for (s, checked) in self.sites.iter_mut().zip(checked) {
            if s.checks as f64 >= ESTABLISHED_CHECKS * checked as f64 {
                s.beliefs_saved_ms = s.beliefs_changed_ms;
            }
            all_stand &= s.estimates_outdated_since().is_none();
        }
        if all_stand {
            self.beliefs_saved_ms = self.beliefs_changed_ms;
        }
    }

    /// Believes a host's `changefreq` hints while its pages' own evidence agrees with them:
    /// every page with a hint and any evidence judges it against the 90% interval of its rate
    /// under the vague prior (evidence alone: a page with little of it agrees with any hint, a
    /// page seen changing daily disagrees with `yearly`). A host is believed once
    /// [`HINT_MIN_JUDGES`] pages have judged and at most [`HINT_DISAGREEMENT_SHARE`] of them
    /// disagree; before that its hints are not (a hint earns belief as a `lastmod` does: the
    /// demo's shop, whose hints are random, had its pages' staleness estimated at a fifth of the
    /// truth while its hints were believed by default).
    fn judge_hints(&mut self) {
        // Per host: pages that judged, and of them those that disagreed.
        let mut judged: HashMap<HostKey, (usize, usize)> = HashMap::new();
        for u in self.urls.iter().filter(|u| u.kind == UrlKind::Page) {
            let Some(hint) = u.changefreq_per_day.get() else {
                continue;
            };
            let stats = u.stats();
            if stats.exposure_days <= 0.0
                && stats.events <= 0.0
                && stats.changed_intervals.is_empty()
            {
                continue;
            }
            let (judges, disagreements) = judged.entry(u.host()).or_default();
            if *judges >= HINT_JUDGES {
                continue;
            }
            let (low, high) = estimate::posterior(stats, &Prior::default()).interval_90();
            *judges += 1;
            if hint * HINT_TOLERANCE < low || hint > high * HINT_TOLERANCE {
                *disagreements += 1;
            }
        }
        for (host, (judges, disagreements)) in judged {
            self.hosts[host].believe_hints = judges >= HINT_MIN_JUDGES
                && disagreements as f64 <= HINT_DISAGREEMENT_SHARE * judges as f64;
        }
    }

    /// A page as the planner sees it under the scheduler's policy.
    pub(super) fn plan_page(&self, url: UrlKey, host_index: usize) -> PlanPage {
        let u = &self.urls[url];
        // A failing URL has no share of the budget: its retries go on their own schedule.
        let weight = match self.is_failing(url) {
            true => 0.0,
            false => self.sites[u.site()].weight * u.weight(),
        };
        let fallback = Prior::default().mean();
        let rate = match self.config.policy {
            PolicyKind::Learned => self.planning_rate(url),
            PolicyKind::Oracle | PolicyKind::OracleSignals | PolicyKind::Proportional => {
                u.true_rate.get().unwrap_or(fallback)
            }
            PolicyKind::Uniform => 1.0,
            PolicyKind::Changefreq => u
                .changefreq_per_day
                .get()
                .unwrap_or(policy::TYPICAL_RATE_PER_DAY),
            PolicyKind::Nutch => 1.0 / self.nutch_interval_days(url),
        };
        // Nutch shares the budget in proportion to its adaptive rates (uniform water-filling
        // with the rate as the weight).
        let weight = if self.config.policy == PolicyKind::Nutch {
            weight / self.nutch_interval_days(url)
        } else {
            weight
        };
        PlanPage {
            rate_per_day: rate.max(1e-9),
            weight,
            host: host_index,
            max_visits_per_day: if u.min_interval_ms() > 0 {
                MS_PER_DAY / u.min_interval_ms() as f64
            } else {
                f64::INFINITY
            },
        }
    }

    /// Nutch's adaptive interval of `url`, days; before its first check, its site's even share
    /// of the budget as the site stands (Nutch starts every URL at one configured interval,
    /// `db.fetch.interval.default`), so the order URLs were found in changes no plan.
    pub(super) fn nutch_interval_days(&self, url: UrlKey) -> f64 {
        let u = &self.urls[url];
        u.nutch_interval_days().unwrap_or_else(|| {
            let even_share = self.sites[u.site()].even_share_per_day();
            (1.0 / even_share.max(1e-9)).clamp(
                policy::NUTCH_MIN_INTERVAL_DAYS,
                policy::NUTCH_MAX_INTERVAL_DAYS,
            )
        })
    }

    /// The rate freshet plans a page by: its posterior's certainty-equivalent rate at its
    /// planned interval ([`plan::certainty_equivalent_rate`]), the mean once the rate is known
    /// within a percent. A page never checked is taken at its site's even share of the budget:
    /// its own planned interval is the share it was given when it was added (the whole budget
    /// for a site's first URL, a millionth for its millionth), which said nothing and made every
    /// such page a plan entry of its own ([`super::site_pages`]).
    pub(super) fn planning_rate(&self, url: UrlKey) -> f64 {
        let post = self.full_posterior(url);
        let mean = post.mean();
        if post.variance() <= 1e-4 * mean * mean {
            return mean;
        }
        let u = &self.urls[url];
        let per_day = match u.last_check_ms() {
            Some(_) => self.planned_rate(url),
            None => self.sites[u.site()].even_share_per_day(),
        };
        let t = 1.0 / per_day.max(1e-9);
        let expected_q = match post.conjugate() {
            Some(gamma) => plan::curves::q_expected_under_gamma(gamma.shape, gamma.rate, t),
            None => post
                .expect_on_grid(|rate| plan::curves::q(rate * t))
                .unwrap_or(0.0),
        };
        plan::certainty_equivalent_rate(t, expected_q).unwrap_or(mean)
    }

    pub(super) fn host_limit_per_day(&self, host: HostKey) -> f64 {
        match self.hosts[host].min_interval_ms {
            0 => f64::INFINITY,
            ms => MS_PER_DAY / ms as f64,
        }
    }

    fn replan_site(&mut self, site: SiteKey, urls: &[u32], now_ms: i64) {
        let s = &mut self.sites[site];
        // What the site spends outside its plan (sitemaps, robots.txt, hops, retries), smoothed.
        if let Some(last) = s.last_plan_ms {
            let days = (now_ms - last) as f64 / MS_PER_DAY;
            if days > 0.0 {
                // Weighed by the time it covers (half from the last six hours): a minute's
                // burst of robots.txt and sitemap reads at a start is not a daily rate.
                // (At least 0: a request given back after the last plan is subtracted here.)
                let rate = (s.extra_since_plan / days).max(0.0);
                let weight = 1.0 - 0.5f64.powf(days / OVERHEAD_HALF_LIFE_DAYS);
                s.overhead_per_day += weight * (rate - s.overhead_per_day);
                s.extra_since_plan = 0.0;
            }
        }
        s.last_plan_ms = Some(now_ms);
        let total = s.requests_per_day;
        let mut limits = Limits {
            budget_per_day: (total - s.overhead_per_day).max(total * MIN_PAGE_SHARE),
            host_limits_per_day: Vec::new(),
        };
        let mut plan_hosts: HashMap<HostKey, usize> = HashMap::new();
        let mut pages = SitePages::new(urls);
        let mut feeds: Vec<UrlKey> = Vec::new();
        for (position, url) in urls.iter().map(|&url| url as UrlKey).enumerate() {
            let host = self.urls[url].host();
            let index = *plan_hosts.entry(host).or_insert_with(|| {
                limits
                    .host_limits_per_day
                    .push(self.host_limit_per_day(host));
                limits.host_limits_per_day.len() - 1
            });
            match self.urls[url].kind {
                UrlKind::Page => pages.push(position, self.plan_page(url, index)),
                UrlKind::Feed => feeds.push(url),
            }
        }
        let objective = Objective::Age;
        let planner = self.config.policy.planner();
        let (runs, counts) = pages.runs();
        let mut solved = plan::solve_runs(planner, runs, counts, &limits, objective);
        // Feeds: priced at the margin of the plan without them, then paid for out of the budget
        // and their host's limit; what covered pages save goes back to the budget.
        if !feeds.is_empty() {
            let mut with_feeds = limits.clone();
            for &feed in &feeds {
                let host = plan_hosts[&self.urls[feed].host()];
                // A failing feed is read on its retries alone (counted outside the plan), and
                // its pages do not wait for it.
                let (phi, worth) = match self.is_failing(feed) {
                    true => (0.0, false),
                    false => self.feed_polls(feed, &pages, &solved.0, &solved.1, host),
                };
                self.urls[feed].set_planned_per_day(phi);
                self.urls[feed].feed_mut().worth = worth;
                with_feeds.budget_per_day -= phi;
                with_feeds.host_limits_per_day[host] -= phi;
            }
            // The pages that wait for a feed: their run, and the feed's polls a day.
            let covered: Vec<(usize, f64)> = pages
                .iter()
                .filter_map(|(p, run)| {
                    let feed = self.covering_feed(p)?;
                    Some((run, self.planned_rate(feed)))
                })
                .collect();
            with_feeds.budget_per_day = with_feeds.budget_per_day.max(total * MIN_PAGE_SHARE);
            for hl in &mut with_feeds.host_limits_per_day {
                *hl = hl.max(0.0);
            }
            solved = plan::solve_runs(planner, runs, counts, &with_feeds, objective);
            if !covered.is_empty() {
                // What covered pages save depends on the plan it pays for: solve again until the
                // savings settle (a fixed point; it settles in a few rounds).
                let mut last_saved = 0.0;
                for _ in 0..MAX_SAVINGS_ROUNDS {
                    let mut with_savings = with_feeds.clone();
                    let mut saved_in_all = 0.0;
                    for &(run, polls) in &covered {
                        let page = &runs[run];
                        let f = solved.0[run];
                        let price = solved.1.effective(page.host) / page.weight;
                        let audit_days = AUDIT_INTERVALS / f;
                        let cost =
                            plan::covered_page_audited(page.rate_per_day, polls, price, audit_days)
                                .visits_per_day;
                        // What it saves, or costs beyond its plan (a page the plan starves may
                        // be worth fetching after each announced change).
                        let saved = f - cost;
                        with_savings.budget_per_day += saved;
                        with_savings.host_limits_per_day[page.host] += saved;
                        saved_in_all += saved;
                    }
                    with_savings.budget_per_day =
                        with_savings.budget_per_day.max(total * MIN_PAGE_SHARE);
                    for hl in &mut with_savings.host_limits_per_day {
                        *hl = hl.max(0.0);
                    }
                    solved = plan::solve_runs(planner, runs, counts, &with_savings, objective);
                    let settled = (saved_in_all - last_saved).abs() <= SAVINGS_SETTLED * total;
                    last_saved = saved_in_all;
                    if settled {
                        break;
                    }
                }
            }
        }
        let (rates, multipliers) = solved;
        self.price_sitemaps(site, &pages, &rates, &multipliers);
        for (url, run) in pages.iter() {
            let f = rates[run];
            // A failing URL (weight 0) gets nothing, read as the floor like any page given none.
            let planned = match f.is_finite() && f > 0.0 {
                true => f,
                false => super::MIN_PLANNED_PER_DAY,
            };
            self.urls[url].set_planned_per_day(planned);
        }
        let s = &mut self.sites[site];
        s.multipliers = Some(multipliers);
        s.plan_hosts = plan_hosts;
        s.plan_runs = pages.runs().0.len();
    }
}
