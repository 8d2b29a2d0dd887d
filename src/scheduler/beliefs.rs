//! What the scheduler believes of a URL: its change-rate posterior under its site's pooled
//! populations or prior, and the summary the store and the reports read.

use crate::clock::MS_PER_DAY;

/// The share of a small site's prior left to the vague default beside its pooled Gamma
/// ([`Scheduler::gamma_posterior`]).
const VAGUE_SHARE: f64 = 0.1;
/// Where such a mixture's posterior is tabulated, in `u = ln λ` (changes a day): from once in
/// 2.7 million years to 3 million a day, wider than any page's evidence places it.
const MIXTURE_SPAN: (f64, f64) = (-20.0, 15.0);
use crate::estimate::{self, Posterior, Prior, Stats};

use super::{PRIOR_INTERVALS, Scheduler, SiteKey, UrlKey, UrlSummary};

/// The longest planned interval a URL waits.
pub(super) const MAX_INTERVAL_MS: f64 = 365.0 * MS_PER_DAY;

impl Scheduler {
    /// The change-rate posterior of a URL: its evidence under its site's population of rates:
    /// the population of the pages with its `changefreq` while its host's hints are believed,
    /// else of its group of the site's pages ([`super::groups`]) or all of them; before there is one,
    /// under the pooled Gamma (centred on a
    /// believed hint). A feed's reads are weighed under the vague default prior.
    pub fn full_posterior(&self, url: UrlKey) -> Posterior {
        let u = &self.urls[url];
        if u.kind == super::UrlKind::Feed {
            // A feed is no page of its site: its own reads alone speak for it.
            return Posterior::new(u.stats(), &self.capped(url, Prior::default()));
        }
        let site = &self.sites[u.site()];
        let population = match u
            .changefreq_per_day
            .get()
            .filter(|_| self.hosts[u.host()].believe_hints)
        {
            Some(hint) => site.hint_populations.get(&hint.to_bits()),
            None => site
                .groups
                .populations
                .get(u.group as usize)
                .or(site.population.as_ref()),
        };
        match population {
            Some(population) => population.posterior(u.stats()),
            None => self.gamma_posterior(url),
        }
    }

    /// A URL's posterior under its site's pooled Gamma, with [`VAGUE_SHARE`] of the prior
    /// left to the vague default (both capped alike, [`Scheduler::prior_of`]). A pooled Gamma
    /// of shape near 1 holds almost no mass near 0: on a small site whose other pages change
    /// fast, a page that never changes read as changing at least a few times a day, its
    /// interval leaving 0 out after dozens of unchanged checks (helper-82's finding 1: 120 a
    /// day, 3.2 to 390, after 34). Its evidence now moves it to the vague part instead, as a
    /// population's floor does for the pages of larger sites.
    fn gamma_posterior(&self, url: UrlKey) -> Posterior {
        let pooled = self.prior_of(url);
        let vague = self.capped(url, Prior::default());
        // A pooled Gamma no more concentrated than the vague one holds as much near 0.
        if pooled.shape <= vague.shape {
            return Posterior::new(self.urls[url].stats(), &pooled);
        }
        let parts = [(1.0 - VAGUE_SHARE, pooled), (VAGUE_SHARE, vague)];
        Posterior::with_gamma_mixture(self.urls[url].stats(), &parts, MIXTURE_SPAN)
    }

    /// The prior a URL's evidence is weighed against: its site's pooled prior, centred on its
    /// `changefreq` while its host's hints are believed.
    pub(super) fn prior_of(&self, url: UrlKey) -> Prior {
        let u = &self.urls[url];
        let hints = estimate::Evidence {
            changefreq_per_day: u
                .changefreq_per_day
                .get()
                .filter(|_| self.hosts[u.host()].believe_hints),
            ..Default::default()
        };
        let prior = estimate::prior_with_hints(&hints, &self.sites[u.site()].prior);
        self.capped(url, prior)
    }

    /// `prior` capped for a URL (see [`Scheduler::prior_of`]).
    fn capped(&self, url: UrlKey, mut prior: Prior) -> Prior {
        // The prior never outweighs the evidence's own time scale: its pseudo-exposure is at
        // most a few of the page's own intervals (DESIGN.md), so pooling and hints cannot hide
        // a page that changes far faster than its neighbours. The cap keeps the prior's mean
        // while it can, but never leaves it more diffuse than knowing nothing
        // ([`Prior::default`]'s shape): scaled without that floor, a budget far above a page's
        // needs made its shape tiny (2e-4 for a pooled shape of 2 at 200,000 planned visits a
        // day), whose 90% interval lay near 0 (a few unchanged checks then said "never
        // changes") while the mean stayed at the population's. Where
        // the floor holds, the mean rises instead (the page may change as often as it is
        // checked) and its first checks bring it down.
        let most = PRIOR_INTERVALS / self.planned_rate(url);
        if prior.rate > most {
            let floor = prior.shape.min(Prior::default().shape);
            prior = Prior {
                shape: (prior.shape * most / prior.rate).max(floor),
                rate: most,
            };
        }
        prior
    }

    /// The estimate of a URL to write with its plan, with the last check it follows: while the
    /// priors it is weighed under changed after that check wrote one and the store has not had
    /// them since (`None`: the stored estimate stands, or it was never checked).
    pub fn estimate_to_save(&self, url: UrlKey) -> Option<(i64, estimate::RateEstimate)> {
        let u = &self.urls[url];
        let changed = self.sites[u.site()].estimates_outdated_since()?;
        let checked = u.last_check_ms()?;
        (checked < changed && u.kind == super::UrlKind::Page && !u.retired)
            .then(|| (checked, self.estimate(url)))
    }

    /// The sites whose priors changed since the store last had their estimates, with when:
    /// what a save of the plans makes good ([`Scheduler::estimates_saved`]).
    pub fn outdated_estimates(&self) -> Vec<(SiteKey, i64)> {
        self.sites
            .iter()
            .enumerate()
            .filter_map(|(key, s)| Some((key, s.estimates_outdated_since()?)))
            .collect()
    }

    /// The store has the estimates under the priors of these sites as they were at these
    /// times ([`Scheduler::outdated_estimates`], taken before the save began: priors fitted
    /// during it are saved by the next).
    pub fn estimates_saved(&mut self, saved: &[(SiteKey, i64)]) {
        for &(site, at) in saved {
            let s = &mut self.sites[site];
            s.beliefs_saved_ms = s.beliefs_saved_ms.max(Some(at));
            self.beliefs_saved_ms = self.beliefs_saved_ms.max(Some(at));
        }
    }

    /// Whether some site's priors changed since the store last had its estimates: whether
    /// [`Scheduler::outdated_estimates`] has any (in O(1): the latest change against the
    /// latest saved).
    pub fn estimates_outdated(&self) -> bool {
        self.beliefs_changed_ms > self.beliefs_saved_ms.max(self.beliefs_tried_ms)
    }

    /// A save of these sites' estimates failed: they stay outdated, for the next regular
    /// save of the plans, but no longer ask for one at once.
    pub fn estimates_save_failed(&mut self, tried: &[(SiteKey, i64)]) {
        for &(_, at) in tried {
            self.beliefs_tried_ms = self.beliefs_tried_ms.max(Some(at));
        }
    }

    /// What the scheduler says of a URL now.
    pub fn summary(&self, url: UrlKey) -> UrlSummary {
        let u = &self.urls[url];
        UrlSummary {
            estimate: self.estimate(url),
            planned_per_day: self.planned_rate(url),
            due_ms: self.frontier.due_of(url),
            covered: u.evidence().coverage.is_some(),
            watched: self.watched(url),
            failures: u.failures(),
            min_interval_ms: u.min_interval_ms(),
        }
    }

    /// A URL's planned visits per day and when it is due (cheap: no quantiles).
    pub fn planned(&self, url: UrlKey) -> (f64, Option<i64>) {
        (self.planned_rate(url), self.frontier.due_of(url))
    }

    /// A URL's planned visits per day: its plan's, or before a plan has reached it, its site's
    /// budget spread evenly over the site's URLs as they stand now. (A share fixed when the URL
    /// was added gave the k-th URL found `budget / k`: the first pages of a large sitemap were
    /// saved and reported at many times the budget until the next plan.)
    pub fn planned_rate(&self, url: UrlKey) -> f64 {
        let u = &self.urls[url];
        let per_day = u
            .planned_per_day()
            .unwrap_or_else(|| self.sites[u.site()].even_share_per_day());
        per_day.max(super::MIN_PLANNED_PER_DAY)
    }

    /// A URL's planned interval in milliseconds (at most a year).
    pub fn planned_interval_ms(&self, url: UrlKey) -> f64 {
        (MS_PER_DAY / self.planned_rate(url)).min(MAX_INTERVAL_MS)
    }

    /// The folded evidence of a URL (what the store keeps).
    pub fn stats(&self, url: UrlKey) -> &Stats {
        self.urls[url].stats()
    }
}
