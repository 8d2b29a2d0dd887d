//! Several workers on one database, as the scheduler sees them: hosts another worker holds
//! (nothing of them is handed out here) and each site's budget cut to the part this worker's
//! hosts are planned to take.

use super::{HostKey, Scheduler, SiteKey, UrlKey};

impl Scheduler {
    /// Another worker holds `host` (`true`: nothing of it is handed out) or this one does.
    pub fn set_host_elsewhere(&mut self, host: HostKey, elsewhere: bool) {
        self.frontier.set_elsewhere(host, elsewhere);
    }

    /// With several workers, this one's part of each site's budget (by site key): the visits a
    /// day its plan gives the URLs on the hosts it holds (a URL no plan has reached yet counts
    /// its even share of the site's budget, [`Scheduler::planned_rate`]). Each worker's share of the
    /// budget is its part over the sum of all workers' parts ([`Scheduler::share_budget`]), so
    /// the shares add up to one.
    pub fn budget_parts(&self) -> Vec<f64> {
        // Per site: planned visits in all and here, URLs in all and here.
        let mut parts = vec![(0.0, 0.0, 0u64, 0u64); self.sites.len()];
        for (url, u) in self.urls.iter().enumerate().filter(|(_, u)| !u.retired) {
            let planned = self.planned_rate(url);
            let part = &mut parts[u.site()];
            part.0 += planned;
            part.2 += 1;
            if !self.frontier.is_elsewhere(u.host()) {
                part.1 += planned;
                part.3 += 1;
            }
        }
        parts
            .into_iter()
            .enumerate()
            .map(|(site, (all, here, urls, urls_here))| {
                if all > 0.0 {
                    here
                } else if urls > 0 {
                    self.sites[site].requests_per_day * urls_here as f64 / urls as f64
                } else {
                    0.0
                }
            })
            .collect()
    }

    /// Spends `share` (0 to 1) of `site`'s budget here.
    pub fn share_budget(&mut self, site: SiteKey, share: f64, now_ms: i64) {
        let per_day = self.sites[site].requests_per_day * share.clamp(0.0, 1.0);
        self.frontier
            .bucket_mut(site)
            .set_rate(per_day, self.config.bucket_span_ms, now_ms);
    }

    /// Whether this worker holds the host of `url` (always, with one worker).
    pub fn is_held_here(&self, url: UrlKey) -> bool {
        !self.frontier.is_elsewhere(self.urls[url].host())
    }

    /// Whether a copy taken at `copy_ms` (another worker's check of `url`, committed after
    /// this worker took its host) is newer than what this worker knows of `url`, and no
    /// request of its own to `url` is in flight: its evidence is then taken up.
    pub fn is_newer_copy(&self, url: UrlKey, copy_ms: i64) -> bool {
        let u = &self.urls[url];
        !u.in_flight && u.last_check_ms().is_none_or(|known| copy_ms > known)
    }
}
