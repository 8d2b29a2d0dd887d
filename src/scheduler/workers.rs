//! Several workers on one database, as the scheduler sees them: hosts another worker holds
//! (nothing of them is handed out here) and each site's budget cut to the part this worker's
//! hosts are planned to take.

use super::{HostKey, Scheduler, UrlKey};

impl Scheduler {
    /// Another worker holds `host` (`true`: nothing of it is handed out) or this one does.
    pub fn set_host_elsewhere(&mut self, host: HostKey, elsewhere: bool) {
        self.frontier.set_elsewhere(host, elsewhere);
    }

    /// With several workers, each spends the part of a site's budget that the pages of the hosts
    /// it holds are planned to take: the budget times their share of the site's planned visits
    /// (of its URLs, before anything is planned). The workers' parts add up to the budget.
    pub fn share_budgets(&mut self, now_ms: i64) {
        // Per site: planned visits in all and here, URLs in all and here.
        let mut parts = vec![(0.0, 0.0, 0u64, 0u64); self.sites.len()];
        for u in self.urls.iter().filter(|u| !u.retired) {
            let part = &mut parts[u.site];
            part.0 += u.planned_per_day;
            part.2 += 1;
            if !self.frontier.is_elsewhere(u.host) {
                part.1 += u.planned_per_day;
                part.3 += 1;
            }
        }
        for (site, (all, here, urls, urls_here)) in parts.into_iter().enumerate() {
            let share = if all > 0.0 {
                here / all
            } else if urls > 0 {
                urls_here as f64 / urls as f64
            } else {
                1.0
            };
            let per_day = self.sites[site].requests_per_day * share;
            self.frontier
                .bucket_mut(site)
                .set_rate(per_day, self.config.bucket_span_ms, now_ms);
        }
    }

    /// Whether this worker holds the host of `url` (always, with one worker).
    pub fn is_held_here(&self, url: UrlKey) -> bool {
        !self.frontier.is_elsewhere(self.urls[url].host)
    }
}
