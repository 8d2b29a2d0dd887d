//! What the scheduler knows of each copy's freshness, and a site's freshness at one moment (the
//! refresher samples it; `report age`, the demo and the metrics read the samples).
//!
//! A page is known not to have changed over the span since its copy in which the feed covering it
//! watched it and kept quiet, and less surely where its sitemap kept quiet, by what its host's
//! `lastmod`s are worth ([`Scheduler::watched`]). Whether the page *waits* for
//! the feed instead of its plan is a stronger bar ([`super::FEED_TRUST_CHECKS`] agreements); a
//! feed caught missing a change covers the page no more. The staleness of a copy is then judged
//! by [`CopyKnowledge::staleness`] under the page's posterior.

use crate::estimate::staleness::Quiet;
use crate::estimate::{self, CopyKnowledge, RateEstimate};

use super::url_state::UrlState;
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
    /// The one span after its copy that counts as watched for a page, the time before it unseen:
    /// what the reports store (`watched_from_ms`, `watched_until_ms`) and judge with the stored
    /// Gamma. The scheduler's own samples judge the feed's and the sitemap's spans apart
    /// ([`Scheduler::copy_knowledge`]).
    ///
    /// The feed covering the page saw every change from the later of the copy, the start of its
    /// coverage and the oldest entry of its last read that overflowed, to its last read, and
    /// listed none of this page's: that span is watched. A feed caught missing one of the
    /// page's changes covers it no more.
    ///
    /// A sitemap that listed the page with a `lastmod` no newer than the copy kept quiet from
    /// the copy to that read; its silence is worth the share `q` of changes its host's
    /// `lastmod`s show ([`super::lastmod`]: all on a believed host): `(1 - q)` of the time it
    /// alone kept quiet is unseen, and is counted at the front of the span (P(stale) exact, the
    /// expected age a little over), as is the time neither watched, between the last quiet read
    /// and a feed span that starts after it.
    pub fn watched(&self, url: UrlKey) -> Option<(i64, i64)> {
        let by_feed = self.feed_watched(url);
        let Some((taken, quiet, shown)) = self.lastmod_quiet(url) else {
            return by_feed;
        };
        // The feed's span, the part of it inside the sitemap's, and the time neither watched
        // (between the last quiet read and a feed span that starts after it).
        let (end, feed_part, gap) = match by_feed {
            Some((from, until)) if from > quiet => (until, 0, from - quiet),
            Some((from, until)) => (until.max(quiet), (until.min(quiet) - from).max(0), 0),
            None => (quiet, 0, 0),
        };
        let sitemap_alone = (quiet - taken - feed_part) as f64;
        let start = taken + ((1.0 - shown) * sitemap_alone).round() as i64 + gap;
        (end > start).then_some((start, end))
    }

    /// The span watched by the feed covering `url`.
    fn feed_watched(&self, url: UrlKey) -> Option<(i64, i64)> {
        let u = &self.urls[url];
        let coverage = u.evidence().coverage.as_deref()?;
        let (feed, since, taken) = (coverage.feed, coverage.since_ms, u.last_check_ms()?);
        let f = self.urls[feed].feed();
        let from = taken.max(since).max(f.blind_until_ms.unwrap_or(i64::MIN));
        let until = self.feed_read_here(feed)?;
        (until > from).then_some((from, until))
    }

    /// What is known of a page's copy; `None` without one: the span its feed watched, and the
    /// span its sitemap kept quiet with the share of changes the host's `lastmod`s show, each
    /// for what it is ([`CopyKnowledge::staleness`]; [`Scheduler::watched`] joins them into the
    /// one span the reports store).
    pub fn copy_knowledge(&self, url: UrlKey) -> Option<CopyKnowledge> {
        let u = &self.urls[url];
        Some(CopyKnowledge {
            taken_ms: u.last_check_ms()?,
            watched: self.feed_watched(url),
            quiet: self
                .lastmod_quiet(url)
                .map(|(_, until_ms, shown)| Quiet { until_ms, shown }),
            known_change_ms: self.acted_known_change(url),
        })
    }

    /// The posterior on a URL's rate, summarised: mean, exact 90% interval, and the Gamma with
    /// the same P(stale) and expected age at the URL's planned interval (what is stored).
    pub fn estimate(&self, url: UrlKey) -> RateEstimate {
        let post = self.full_posterior(url);
        let horizon_days = 1.0 / self.planned_rate(url);
        RateEstimate::from_posterior(&post).matching_staleness(&post, horizon_days)
    }

    /// Every site's freshness at `now_ms` (sites with no copy are left out).
    ///
    /// A copy known to be stale has its known age; the others are judged under their posterior
    /// (a few microseconds each), and a site with more than [`JUDGED_PER_SITE`] of them has one
    /// in `k = ⌈n / JUDGED_PER_SITE⌉` judged, drawn afresh at each sample, and their weighted
    /// sums scaled to all of them: the mean of a large site is then as good as a sample of
    /// about `n / k` makes it, at the cost of that many posteriors, not millions, while the
    /// refresher waits.
    pub fn freshness(&self, now_ms: i64) -> Vec<(SiteKey, Freshness)> {
        self.freshness_judging(now_ms, JUDGED_PER_SITE)
    }

    /// [`Scheduler::freshness`], judging about `judged_per_site` copies of each site.
    pub(super) fn freshness_judging(
        &self,
        now_ms: i64,
        judged_per_site: usize,
    ) -> Vec<(SiteKey, Freshness)> {
        let mut unknown_per_site = vec![0usize; self.sites.len()];
        // With several workers, each judges the copies of the hosts it holds (the holder reads
        // their sitemaps and feeds, so it knows what watched them); the store adds the parts.
        let judged_here = |u: &UrlState| {
            u.kind == UrlKind::Page && !u.retired && !self.frontier.is_elsewhere(u.host())
        };
        for u in self.urls.iter().filter(|u| judged_here(u)) {
            let known = u
                .known_change_ms()
                .zip(u.last_check_ms())
                .is_some_and(|(k, t)| k > t);
            unknown_per_site[u.site()] += usize::from(u.last_check_ms().is_some() && !known);
        }
        let strides: Vec<usize> = unknown_per_site
            .iter()
            .map(|&n| n.div_ceil(judged_per_site.max(1)).max(1))
            .collect();
        let mut sums = vec![SiteSums::default(); self.sites.len()];
        for (key, u) in self.urls.iter().enumerate() {
            if !judged_here(u) {
                continue;
            }
            let Some(copy) = self.copy_knowledge(key) else {
                continue;
            };
            let s = &mut sums[u.site()];
            s.copies += 1;
            s.weight += u.weight();
            if copy.known_change_ms.is_some_and(|k| k > copy.taken_ms) {
                // Known stale: its age is known, no posterior needed.
                let staleness = copy.staleness(&estimate::Prior::default(), now_ms);
                s.known_stale += 1;
                s.known_age += u.weight() * staleness.expected_age_days;
                s.known_p += u.weight();
                continue;
            }
            s.unknown_weight += u.weight();
            // One in `stride`, drawn afresh at each sample by a hash of the URL and the instant,
            // so no order of the URLs lines up with the sample.
            let stride = strides[u.site()] as u64;
            if stride > 1 && !drawn(key, now_ms).is_multiple_of(stride) {
                continue;
            }
            // Judged under the exact posterior, not the Gamma stored for the reports.
            let staleness = copy.staleness(&self.full_posterior(key), now_ms);
            s.judged_weight += u.weight();
            s.judged_age += u.weight() * staleness.expected_age_days;
            s.judged_p += u.weight() * staleness.p_stale;
        }
        sums.into_iter()
            .enumerate()
            .filter(|(_, s)| s.copies > 0 && s.weight > 0.0)
            .map(|(site, s)| {
                let scale = if s.judged_weight > 0.0 {
                    s.unknown_weight / s.judged_weight
                } else {
                    0.0
                };
                let freshness = Freshness {
                    copies: s.copies,
                    known_stale: s.known_stale,
                    weight: s.weight,
                    mean_expected_age_days: (s.known_age + scale * s.judged_age) / s.weight,
                    mean_p_stale: (s.known_p + scale * s.judged_p) / s.weight,
                };
                (site, freshness)
            })
            .collect()
    }
}

/// A well-mixed hash of a URL and an instant (SplitMix64's finaliser).
fn drawn(url: UrlKey, now_ms: i64) -> u64 {
    let mut z = (url as u64) ^ (now_ms as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// About how many copies of a site are judged under their posterior at one freshness sample
/// (each is drawn with probability `1 / ⌈n / JUDGED_PER_SITE⌉`).
pub const JUDGED_PER_SITE: usize = 20_000;

/// One site's sums for [`Scheduler::freshness`].
#[derive(Debug, Clone, Default)]
struct SiteSums {
    copies: usize,
    known_stale: usize,
    weight: f64,
    /// Weighted sums over the copies known stale.
    known_age: f64,
    known_p: f64,
    /// The weight of the other copies, of those judged, and the judged copies' weighted sums.
    unknown_weight: f64,
    judged_weight: f64,
    judged_age: f64,
    judged_p: f64,
}
