//! How often a site's sitemaps are worth re-reading, priced in the same plan as its pages.
//!
//! A re-read costs one request per sitemap document (an index and its children). What it buys:
//! new URLs, and on a host whose `lastmod`s are believed ([`super::lastmod`]) the changes of pages
//! that no proven feed announces, which then make their copies known stale and send them early.
//! That is what a feed poll buys, so the price is the feed's ([`super::feed_polls`]): with `Λ` the
//! weighted rate of such changes that find a current copy and `μ` the plan's marginal value of a
//! request, `c` requests a read, the reads per day that minimise age plus requests are
//! `φ = (Λ / 3μc)^{1/3}`, between [`MIN_SITEMAP_READS_PER_DAY`] (new URLs must still be found) and
//! [`MAX_SITEMAP_READS_PER_DAY`]; unpriced (cost unknown, or a budget that does not bind), only the
//! cron limits them. The schedule's `rediscover` cron stays the most often a site is
//! re-read; the refresher reads it at the first cron time at least `1/φ` after the last read.

use super::site_pages::SitePages;
use super::{Scheduler, SiteKey};
use crate::plan::Multipliers;

/// The least a site's sitemaps are re-read: daily, so that new URLs are found.
pub const MIN_SITEMAP_READS_PER_DAY: f64 = 1.0;

/// The most a priced site's sitemaps are re-read (every quarter of an hour).
pub const MAX_SITEMAP_READS_PER_DAY: f64 = 96.0;

impl Scheduler {
    /// A discovery pass of `site` read `documents` sitemap documents: the cost of the next.
    pub fn set_sitemap_documents(&mut self, site: SiteKey, documents: usize) {
        self.sites[site].sitemap_documents = documents;
    }

    /// Sitemap re-reads per day the site's last plan found worth their requests; `None` when it
    /// sets no limit (never planned with a known cost, or a budget that does not bind): then the
    /// `rediscover` cron alone decides.
    pub fn sitemap_reads_per_day(&self, site: SiteKey) -> Option<f64> {
        self.sites[site].sitemap_reads_per_day
    }

    /// Prices the site's sitemap reads against the solved plan (`rates` of the runs of `pages`).
    pub(super) fn price_sitemaps(
        &mut self,
        site: SiteKey,
        pages: &SitePages,
        rates: &[f64],
        multipliers: &Multipliers,
    ) {
        let documents = self.sites[site].sitemap_documents;
        let phi = if documents == 0 || !(multipliers.mu > 0.0 && multipliers.mu.is_finite()) {
            None
        } else {
            let mut lambda_w = 0.0;
            let (runs, _) = pages.runs();
            for (url, run) in pages.iter() {
                let (page, f) = (&runs[run], rates[run]);
                let u = &self.urls[url];
                if self.covering_feed(url).is_some() || !self.hosts[u.host()].lastmod.believed() {
                    continue;
                }
                lambda_w +=
                    page.weight * page.rate_per_day * f / (f + page.rate_per_day).max(1e-12);
            }
            Some(
                (lambda_w / (3.0 * multipliers.mu * documents as f64))
                    .cbrt()
                    .clamp(MIN_SITEMAP_READS_PER_DAY, MAX_SITEMAP_READS_PER_DAY),
            )
        };
        self.sites[site].sitemap_reads_per_day = phi;
    }
}
