//! Several workers on one database, as the scheduler sees them: hosts another worker holds
//! (nothing of them is handed out here) and each site's budget cut to the part this worker's
//! hosts are planned to take.
//!
//! A site's credit (its bucket's saved-up requests) is never made by a change of shares: a
//! worker whose share shrinks gives what its smaller bucket cannot hold to the site's pool, and
//! one with room takes from it ([`settle_pool`], kept in the database's `sites` row). Credit
//! is made only by the workers' refills (their shares' rates add up to the site's, but for
//! the moments between two workers' rounds when their shares overlap), by the pool's refill
//! for the time no worker ran (a worker starting alone, from when the last other worker's
//! heartbeat ran out), and by a new site's full pool. So, counted from the site's first run,
//! the workers spend at most the budget of the time since and one bucket; at one instant the
//! pool and the buckets may hold up to two buckets (the workers had nothing to spend while
//! shares moved), which a span starting then may spend on top of its own budget. A killed
//! worker's credit is lost: the site spends less.

use super::{Bucket, HostKey, Scheduler, SiteKey, UrlKey};
use crate::clock::MS_PER_DAY;

impl Scheduler {
    /// Another worker holds `host` (`true`: nothing of it is handed out) or this one does.
    pub fn set_host_elsewhere(&mut self, host: HostKey, elsewhere: bool) {
        self.frontier.set_elsewhere(host, elsewhere);
        if elsewhere {
            // What it answered while held here says nothing of its pages' checks once it
            // comes back: another worker's meanwhile are judged by that worker.
            self.hosts[host].last_answer_ms = None;
        }
    }

    /// This worker gained `host` (from another worker, from none, or again after its lease
    /// lapsed: another may have held it meanwhile): what its reads of the feeds on it showed
    /// before is another holding's ([`Scheduler::feed_read_here`]).
    pub fn host_gained(&mut self, host: HostKey) {
        self.hosts[host].holdings += 1;
        self.set_host_elsewhere(host, false);
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
            .set_rate(site, per_day, self.config.bucket_span_ms, now_ms)
    }

    /// The most credit all of `site`'s budget holds (a bucket of one worker holding every host).
    pub fn whole_budget(&self, site: SiteKey) -> f64 {
        Bucket::capacity_of(
            self.sites[site].requests_per_day,
            self.config.bucket_span_ms,
        )
    }

    /// Spends `share` of `site`'s budget here, and answers what to hand the site's pool and
    /// ask of it ([`settle_pool`]; `None`: nothing): the credit beyond a smaller share (of a
    /// request or more: less is dropped), and the room of a bucket with a share that has room
    /// for a request or cannot send one. With [`IdleRefill::Since`] the pool first refills for
    /// the time no worker ran (and is settled whatever is handed or asked).
    pub fn share_budget_with_pool(
        &mut self,
        site: SiteKey,
        share: f64,
        now_ms: i64,
        idle: IdleRefill,
    ) -> Option<PoolExchange> {
        let beyond = self.share_budget(site, share, now_ms);
        let deposit = if beyond >= 1.0 { beyond } else { 0.0 };
        let room = self.budget_room(site, now_ms);
        let can_send = self.budget_credit(site, now_ms) >= 1.0;
        let want = if share > 0.0 && (room >= 1.0 || !can_send) {
            room
        } else {
            0.0
        };
        let refill = match idle {
            IdleRefill::None => None,
            IdleRefill::Since { others_until_ms } => Some(others_until_ms.unwrap_or(i64::MIN)),
        };
        (deposit > 0.0 || want > 0.0 || refill.is_some()).then(|| PoolExchange {
            deposit,
            want,
            capacity: self.whole_budget(site),
            refill_per_day: refill.map(|_| self.sites[site].requests_per_day),
            refill_from_ms: refill.unwrap_or(i64::MIN),
        })
    }

    /// The credit `site`'s bucket here holds now (negative: a debt).
    pub fn budget_credit(&mut self, site: SiteKey, now_ms: i64) -> f64 {
        self.frontier.budget_credit(site, now_ms)
    }

    /// The credit `site`'s bucket here has room for.
    pub fn budget_room(&mut self, site: SiteKey, now_ms: i64) -> f64 {
        self.frontier.budget_room(site, now_ms)
    }

    /// Adds credit the site's pool handed over.
    pub fn grant_budget(&mut self, site: SiteKey, n: f64, now_ms: i64) {
        self.frontier.grant(site, now_ms, n);
    }

    /// Takes out all of `site`'s credit here (a debt stays): at a worker's start (a new bucket is
    /// full, but what it holds is the pool's to hand over) and at its end (into the pool).
    pub fn take_budget_credit(&mut self, site: SiteKey, now_ms: i64) -> f64 {
        self.frontier.take_budget_credit(site, now_ms)
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

    /// [`Scheduler::is_newer_copy`], or the copy known here, a row of the same check written
    /// again (a feed's, with what its read showed, is saved after the read's check): on a host
    /// another worker holds (or held until this one gains it), or of a feed on a host held
    /// here that was not fetched here since it was gained (its previous holder's read, in
    /// flight at the handover, saved what it showed after the gain took the row up: kept to
    /// newer copies alone, the gaining worker never took it up; its own fetch's row, before
    /// its read is handled, is not taken up: helper-122).
    pub fn is_latest_copy(&self, url: UrlKey, copy_ms: i64) -> bool {
        let u = &self.urls[url];
        let saved_again = !self.is_held_here(url)
            || (u.kind == super::UrlKind::Feed && !self.feed_fetched_here(url));
        self.is_newer_copy(url, copy_ms)
            || (saved_again && !u.in_flight && u.last_check_ms() == Some(copy_ms))
    }
}

/// Whether a round refills the sites' pools for the time no worker ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleRefill {
    /// Some worker's bucket was refilling all along (this one's, or another's).
    None,
    /// This worker's first round, with no other worker alive: each pool refills at its site's
    /// rate from when it was last settled, but not before `others_until_ms`, when the last
    /// other worker's heartbeat ran out (if any).
    Since { others_until_ms: Option<i64> },
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
    /// A worker starting alone: the pool first refills at this rate (requests a day) since it
    /// was last settled, when no worker's bucket was refilling.
    pub refill_per_day: Option<f64>,
    /// ... but not before this instant: the last other worker was alive till then (a lone
    /// daemon whose bucket had room for nothing did not settle the pool, and its credit,
    /// lost with it when it was killed, refilled while it lived).
    pub refill_from_ms: i64,
}

impl PoolExchange {
    /// Hands in `deposit` and asks nothing (a site's whole bucket holds `capacity`).
    pub fn deposit(deposit: f64, capacity: f64) -> Self {
        Self {
            deposit,
            want: 0.0,
            capacity,
            refill_per_day: None,
            refill_from_ms: i64::MIN,
        }
    }
}

/// The pool after `exchange` at `now_ms`, and the credit it hands over. `pool` is what it held
/// and when (never settled: full, as a new site's bucket is). A worker starting alone first
/// refills it for the time since; then the deposit comes in (the pool holds at most the site's
/// whole bucket), and as much of `want` as it holds goes out.
pub fn settle_pool(pool: Option<(f64, i64)>, exchange: PoolExchange, now_ms: i64) -> (f64, f64) {
    let capacity = exchange.capacity.max(0.0);
    let mut held = match pool {
        None => capacity,
        Some((held, at_ms)) => {
            let idle_ms = now_ms
                .saturating_sub(at_ms.max(exchange.refill_from_ms))
                .max(0) as f64;
            let refill = exchange
                .refill_per_day
                .map_or(0.0, |per_day| per_day.max(0.0) * idle_ms / MS_PER_DAY);
            held.max(0.0) + refill
        }
    };
    held = (held.min(capacity) + exchange.deposit.max(0.0)).min(capacity);
    let handed = exchange.want.max(0.0).min(held);
    (held - handed, handed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(deposit: f64, want: f64) -> PoolExchange {
        PoolExchange {
            want,
            ..PoolExchange::deposit(deposit, 1_000.0)
        }
    }

    #[test]
    fn a_pool_hands_out_what_it_holds_and_holds_at_most_the_sites_bucket() {
        let at = |held: f64| Some((held, 0));
        // Never settled: full, as a new site's bucket.
        assert_eq!(settle_pool(None, exchange(0.0, 600.0), 0), (400.0, 600.0));
        assert_eq!(
            settle_pool(at(400.0), exchange(0.0, 600.0), 5),
            (0.0, 400.0)
        );
        // A deposit comes in before the ask is met; the pool never holds more than the bucket.
        assert_eq!(
            settle_pool(at(0.0), exchange(300.0, 100.0), 5),
            (200.0, 100.0)
        );
        assert_eq!(
            settle_pool(at(900.0), exchange(300.0, 0.0), 5),
            (1_000.0, 0.0)
        );
        // Nonsense in (a negative ask or deposit, a pool beyond the bucket) is held to sense.
        assert_eq!(
            settle_pool(at(5_000.0), exchange(-1.0, -1.0), 5),
            (1_000.0, 0.0)
        );
        // Workers running: no refill however long since. A worker starting alone: the site's
        // rate since the pool was last settled (here a tenth of a day of 1,000 a day).
        assert_eq!(
            settle_pool(at(0.0), exchange(0.0, 500.0), MS_PER_DAY as i64 / 10),
            (0.0, 0.0)
        );
        let alone = PoolExchange {
            refill_per_day: Some(1_000.0),
            ..exchange(0.0, 500.0)
        };
        let (left, handed) = settle_pool(at(0.0), alone, MS_PER_DAY as i64 / 10);
        assert!((handed - 100.0).abs() < 1e-9 && left.abs() < 1e-9);
        // ... from when the last other worker was alive, if later (a killed one's credit
        // refilled while it lived): here half the tenth of a day.
        let after_a_kill = PoolExchange {
            refill_from_ms: MS_PER_DAY as i64 / 20,
            ..alone
        };
        let (_, handed) = settle_pool(at(0.0), after_a_kill, MS_PER_DAY as i64 / 10);
        assert!((handed - 50.0).abs() < 1e-9, "{handed}");
    }
}
