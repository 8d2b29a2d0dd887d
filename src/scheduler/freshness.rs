//! What the scheduler knows of each copy's freshness, and a site's freshness at one moment (the
//! refresher samples it; `report age`, the demo and the metrics read the samples).
//!
//! A page is known not to have changed over the span since its copy in which the feed covering it
//! watched it and kept quiet ([`Scheduler::watched`]). Whether the page *waits* for
//! the feed instead of its plan is a stronger bar ([`super::FEED_TRUST_CHECKS`] agreements); a
//! feed caught missing a change covers the page no more. The staleness of a copy is then judged
//! by [`CopyKnowledge::staleness`] under the page's posterior.

use crate::estimate::{CopyKnowledge, RateEstimate};

use super::{Scheduler, SiteKey, UrlKey, UrlKind};

/// A site's copies at one moment, each weighted by its importance (duplicates and redirect
/// sources count little).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Freshness {
    /// Pages that have a copy.
    pub copies: usize,
    /// Of them, copies known to be stale (a newer version was announced).
    pub known_stale: usize,
    /// Sum of their weights.
    pub weight: f64,
    /// Weighted mean expected age of the copies, days.
    pub mean_expected_age_days: f64,
    /// Weighted mean probability that a copy is stale.
    pub mean_p_stale: f64,
}

impl Scheduler {
    /// The span over which a page is known not to have changed since its copy: the feed covering
    /// it saw every change from the later of the copy, the start of its coverage and the oldest
    /// entry of its last read that overflowed, to its last read, and listed none of this page's.
    /// A feed caught missing one of the page's changes covers it no more.
    ///
    /// A believed sitemap that listed the page with a `lastmod` no newer than the copy watched
    /// it from the copy to that read ([`super::lastmod`]); when both spans exist they are joined
    /// if they touch, else the later one is taken.
    pub fn watched(&self, url: UrlKey) -> Option<(i64, i64)> {
        let by_feed = self.feed_watched(url);
        let by_sitemap = self.lastmod_watched(url);
        match (by_feed, by_sitemap) {
            (Some((from, until)), Some((taken, quiet))) if from <= quiet => {
                Some((taken, until.max(quiet)))
            }
            (Some(a), Some(b)) => Some(if a.1 >= b.1 { a } else { b }),
            (a, b) => a.or(b),
        }
    }

    /// The span watched by the feed covering `url`.
    fn feed_watched(&self, url: UrlKey) -> Option<(i64, i64)> {
        let u = &self.urls[url];
        let (feed, since, taken) = (u.covered_by?, u.covered_since_ms?, u.last_check_ms?);
        let f = self.urls[feed].feed();
        let from = taken.max(since).max(f.blind_until_ms.unwrap_or(i64::MIN));
        let until = f.last_poll_ms?;
        (until > from).then_some((from, until))
    }

    /// What is known of a page's copy; `None` without one.
    pub fn copy_knowledge(&self, url: UrlKey) -> Option<CopyKnowledge> {
        let u = &self.urls[url];
        Some(CopyKnowledge {
            taken_ms: u.last_check_ms?,
            watched: self.watched(url),
            known_change_ms: u.known_change_ms,
        })
    }

    /// The posterior on a URL's rate, summarised: mean, exact 90% interval, and the Gamma with
    /// the same P(stale) and expected age at the URL's planned interval (what is stored).
    pub fn estimate(&self, url: UrlKey) -> RateEstimate {
        let u = &self.urls[url];
        let post = self.full_posterior(url);
        let horizon_days = 1.0 / u.planned_per_day.max(1e-9);
        RateEstimate::from_posterior(&post).matching_staleness(&post, horizon_days)
    }

    /// Every site's freshness at `now_ms` (sites with no copy are left out).
    pub fn freshness(&self, now_ms: i64) -> Vec<(SiteKey, Freshness)> {
        let mut by_site = vec![Freshness::default(); self.sites.len()];
        for (key, u) in self.urls.iter().enumerate() {
            if u.kind != UrlKind::Page || u.retired {
                continue;
            }
            let Some(copy) = self.copy_knowledge(key) else {
                continue;
            };
            // Judged under the exact posterior, not the Gamma stored for the reports.
            let staleness = copy.staleness(&self.full_posterior(key), now_ms);
            let f = &mut by_site[u.site];
            f.copies += 1;
            f.known_stale += usize::from(staleness.known_stale);
            f.weight += u.weight;
            f.mean_expected_age_days += u.weight * staleness.expected_age_days;
            f.mean_p_stale += u.weight * staleness.p_stale;
        }
        by_site
            .into_iter()
            .enumerate()
            .filter(|(_, f)| f.copies > 0 && f.weight > 0.0)
            .map(|(site, mut f)| {
                f.mean_expected_age_days /= f.weight;
                f.mean_p_stale /= f.weight;
                (site, f)
            })
            .collect()
    }
}
