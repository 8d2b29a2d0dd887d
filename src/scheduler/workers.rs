//! Several workers on one database, as the scheduler sees them: hosts another worker holds
//! (nothing of them is handed out here) and each site's budget cut to the part this worker's
//! hosts are planned to take.
//!
//! A site's credit (its bucket's saved-up requests) is never made by a change of shares: a
//! worker whose share shrinks gives what its smaller bucket cannot hold to the site's pool, and
//! one with room takes from it ([`settle_pool`], kept in the database's `sites` row). So the
//! workers' credits and the pool add up to at most one bucket of the site's, however hosts move
//! between workers; a killed worker's credit is lost (the site spends less, never more).

use super::{Bucket, HostKey, Scheduler, SiteKey, UrlKey};

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

    /// Spends `share` (0 to 1) of `site`'s budget here; answers the credit it held beyond its
    /// new share's bucket, which goes back to the site's pool ([`settle_pool`]).
    pub fn share_budget(&mut self, site: SiteKey, share: f64, now_ms: i64) -> f64 {
        let per_day = self.sites[site].requests_per_day * share.clamp(0.0, 1.0);
        self.frontier
            .bucket_mut(site)
            .set_rate(per_day, self.config.bucket_span_ms, now_ms)
    }

    /// The most credit all of `site`'s budget holds (a bucket of one worker holding every host).
    pub fn whole_budget(&self, site: SiteKey) -> f64 {
        Bucket::capacity_of(
            self.sites[site].requests_per_day,
            self.config.bucket_span_ms,
        )
    }

    /// The credit `site`'s bucket here has room for.
    pub fn budget_room(&mut self, site: SiteKey, now_ms: i64) -> f64 {
        self.frontier.bucket_mut(site).room(now_ms)
    }

    /// Adds credit the site's pool handed over.
    pub fn grant_budget(&mut self, site: SiteKey, n: f64, now_ms: i64) {
        self.frontier.bucket_mut(site).grant(now_ms, n);
    }

    /// Takes out all of `site`'s credit here (a debt stays): at a worker's start (a new bucket is
    /// full, but what it holds is the pool's to hand over) and at its end (into the pool).
    pub fn take_budget_credit(&mut self, site: SiteKey, now_ms: i64) -> f64 {
        self.frontier.bucket_mut(site).take_credit(now_ms)
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

/// What a worker hands a site's pool and asks of it at once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PoolExchange {
    /// Credit handed in.
    pub deposit: f64,
    /// Credit asked for (the room in the worker's bucket).
    pub want: f64,
    /// The site's whole bucket: the most the pool holds.
    pub capacity: f64,
}

/// The pool after `exchange`, and the credit it hands over: the deposit first (the pool holds
/// at most the site's whole bucket; a pool never written is full, as a new site's bucket is),
/// then as much of `want` as it holds.
pub fn settle_pool(pool: Option<f64>, exchange: PoolExchange) -> (f64, f64) {
    let capacity = exchange.capacity.max(0.0);
    let held = pool.unwrap_or(capacity).clamp(0.0, capacity);
    let held = (held + exchange.deposit.max(0.0)).min(capacity);
    let handed = exchange.want.max(0.0).min(held);
    (held - handed, handed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(deposit: f64, want: f64) -> PoolExchange {
        PoolExchange {
            deposit,
            want,
            capacity: 1_000.0,
        }
    }

    #[test]
    fn a_pool_hands_out_what_it_holds_and_holds_at_most_the_sites_bucket() {
        // Never written: full, as a new site's bucket.
        assert_eq!(settle_pool(None, exchange(0.0, 600.0)), (400.0, 600.0));
        assert_eq!(settle_pool(Some(400.0), exchange(0.0, 600.0)), (0.0, 400.0));
        // A deposit comes in before the ask is met; the pool never holds more than the bucket.
        assert_eq!(
            settle_pool(Some(0.0), exchange(300.0, 100.0)),
            (200.0, 100.0)
        );
        assert_eq!(
            settle_pool(Some(900.0), exchange(300.0, 0.0)),
            (1_000.0, 0.0)
        );
        // Nonsense in (a negative ask or deposit, a pool beyond the bucket) is held to sense.
        assert_eq!(
            settle_pool(Some(5_000.0), exchange(-1.0, -1.0)),
            (1_000.0, 0.0)
        );
    }
}
