//! When a URL goes next: its due time after a check or an event (its plan's interval, a
//! server's floor, a retry, a known change, a feed's coverage), and the O(1) re-plan of one page
//! between full re-plans, how a failed check counts towards a URL leaving its plan, how an
//! announced change brings a failed URL's retry forward, and a request handed out but not made
//! (put off or refused).

use crate::clock::MS_PER_DAY;
use crate::plan;

use super::{AUDIT_INTERVALS, HostKey, RetryCause, Scheduler, Seen, UrlKey, UrlKind, frontier};

impl Scheduler {
    /// Queues a URL in its host's part of the frontier ([`frontier::Frontier::set_due`]).
    pub(super) fn set_due(&mut self, url: UrlKey, due_ms: Option<i64>, lead_ms: i64) {
        let home = (self.urls[url].host(), self.urls[url].site());
        self.frontier.set_due(url, home, due_ms, lead_ms);
    }

    /// Queues a URL for its next visit after a check (or an event) at `at_ms`.
    pub(super) fn schedule(&mut self, url: UrlKey, at_ms: i64) {
        let u = &self.urls[url];
        if u.retired || u.in_flight {
            return;
        }
        let interval = self.planned_interval_ms(url) as i64;
        let floor = u.min_interval_ms();
        let last = u.last_check_ms().unwrap_or(i64::MIN / 4);
        let retry = u.retry().map(|(at, _)| at);
        // A retry goes at its time, never ahead of it: a failing URL's planned interval is a
        // year, and half of it ahead would send it whenever its site's bucket is full.
        let lead = match retry {
            Some(_) => 0,
            None => (frontier::MAX_EARLY_SHARE * interval as f64) as i64,
        };
        let due = match (
            u.kind,
            self.acted_known_change(url),
            self.covering_feed(url),
        ) {
            _ if retry.is_some() => retry.unwrap_or(at_ms),
            _ if u.last_check_ms().is_none() => at_ms,
            // A covered page goes when waiting would cost more than a visit at the plan's price.
            (UrlKind::Page, Some(known), Some(_)) => match self.visit_price(url) {
                Some(price) => {
                    let rate = self.full_posterior(url).mean();
                    let delay = plan::known_change_delay(rate, price);
                    (known + (delay * MS_PER_DAY) as i64).max(last + floor)
                }
                None => known.max(last + interval.max(floor)),
            },
            (UrlKind::Page, None, Some(_)) => {
                last + ((AUDIT_INTERVALS * interval as f64) as i64).max(floor)
            }
            // A known change sends a page when waiting would cost more than a visit.
            (UrlKind::Page, Some(known), None) => {
                let rate = self.full_posterior(url).mean();
                let delay = plan::known_change_delay_days(rate, interval as f64 / MS_PER_DAY);
                (known + (delay * MS_PER_DAY) as i64)
                    .min(last + interval)
                    .max(last + floor)
            }
            _ => last + interval.max(floor),
        };
        // Sent ahead, never before the server's floor has run out (a feed's `ttl` cut short
        // by the lead of a plan that would read it every half hour).
        let lead = lead.min((due - last.saturating_add(floor)).max(0));
        self.set_due(url, Some(due), lead);
    }

    /// Counts a check of `url` at `at_ms` in its failures in a row ([`Seen`]: an unanswered
    /// check counts only when its host answered another check since this URL's last), and
    /// notes when the URL was tried and its host last answered.
    pub(super) fn count_failure(&mut self, url: UrlKey, host: HostKey, seen: Seen, at_ms: i64) {
        let u = &mut self.urls[url];
        // One request to a host at a time: the order of checks is the order of their times.
        let host_answered = self.hosts[host]
            .last_answer_ms
            .is_some_and(|answer| u.last_attempt_ms().is_none_or(|last| answer > last));
        match seen {
            Seen::Failed => u.add_failure(true),
            Seen::Unanswered if host_answered => u.add_failure(false),
            _ => {}
        }
        u.set_last_attempt_ms(at_ms);
        if seen.got_copy() {
            let answer = &mut self.hosts[host].last_answer_ms;
            *answer = Some(answer.map_or(at_ms, |last| last.max(at_ms)));
        }
    }

    /// A change announced at `change_ms` (a feed's entry, a sitemap `lastmod`) of a URL whose
    /// last check failed: when it is newer than that check, the page may be back (an article
    /// that answered 404 until it was published, a page restored), and its retry comes
    /// forward to the change, or now if that is past. Only a failure's retry moves (not a
    /// request put off), and once in each step of its back-off ([`RetryCause`]): the same
    /// announcement read again is not newer than the check it sent (the last attempt, stored
    /// with the URL, so a restart keeps it), and if that check fails too, the next retry waits
    /// out its back-off whatever is announced meanwhile (a sitemap that stamps every
    /// `lastmod` with the time it is read cannot send a dead page at each read).
    pub(super) fn recall_failed(&mut self, now_ms: i64, url: UrlKey, change_ms: i64) {
        let u = &self.urls[url];
        if u.in_flight || u.retired {
            return;
        }
        let tried = u.last_attempt_ms().or(u.last_check_ms());
        let (retry, not_before) = match (u.retry(), tried) {
            (Some((retry, RetryCause::Failure)), _) => (retry, now_ms),
            (Some((retry, RetryCause::Restored)), Some(tried)) => {
                (retry, now_ms.max(tried + (retry - tried) / 2))
            }
            _ => return,
        };
        let at = change_ms.max(not_before);
        if tried.is_none_or(|tried| change_ms > tried) && at < retry {
            self.urls[url].set_retry(Some((at, RetryCause::Recalled)));
            self.set_due(url, Some(at), 0);
        }
    }

    /// Whether a URL is failing ([`super::FAILING_AFTER`] checks failed in a row): out of its
    /// site's plan, tried again on its own schedule ([`Scheduler::retry_interval_ms`]).
    pub(super) fn is_failing(&self, url: UrlKey) -> bool {
        self.urls[url].failures() >= super::FAILING_AFTER
    }

    /// How long after a check `seen` that gave no copy the URL is tried again: before it is
    /// failing, its planned interval (an hour at least unless its host left it unanswered);
    /// once failing, an hour doubled at each further failure up to
    /// a day, and never sooner than its site's even share of the budget would visit it (the
    /// budget holds: a site's failing URLs never take more of it than their number's share).
    /// A URL whose failures were all checks its host left unanswered (a 5xx, a timeout: a
    /// page served by a cache while the server behind it is down may be failing only for an
    /// hour) takes the even share only once its back-off has reached a day: before, it comes
    /// back within hours of the server, not weeks later on a large site's even share.
    pub(super) fn retry_interval_ms(&self, url: UrlKey, seen: Seen) -> i64 {
        if !self.is_failing(url) {
            // A check its host left unanswered (a 5xx, a 429, a timeout) goes again on the
            // page's plan: the host's back-off spaces its requests, and a page planned every
            // minute is not put off for an hour by its host's minute of trouble. A check the
            // URL failed for certain (a 404), or one that said nothing of it (its redirect's
            // target host in trouble: nothing spaces those), waits an hour at least. Never
            // sooner than the server's floor.
            let planned = self.planned_interval_ms(url) as i64;
            let unanswered = seen == Seen::Unanswered && !self.urls[url].failed_for_certain();
            let interval = match unanswered {
                true => planned,
                false => planned.max(super::ERROR_RETRY_MS),
            };
            return interval.max(self.urls[url].min_interval_ms());
        }
        let doublings = u32::from(self.urls[url].failures() - super::FAILING_AFTER).min(16);
        let backoff = (super::ERROR_RETRY_MS << doublings).min(super::MAX_FAILING_RETRY_MS);
        if !self.urls[url].failed_for_certain() && backoff < super::MAX_FAILING_RETRY_MS {
            return backoff;
        }
        let even_share = self.sites[self.urls[url].site()].even_share_per_day();
        // At most a year, as the longest planned interval.
        let share_interval =
            (MS_PER_DAY / even_share.max(1e-9)).min(super::beliefs::MAX_INTERVAL_MS);
        backoff.max(share_interval as i64)
    }

    /// The share of a visit its plan did not count: a page no feed covers, sent ahead of its
    /// planned interval by a known change, spends the part of the interval it skips (the plan
    /// sees it in the site's overheads at the next re-plan).
    pub(super) fn unplanned_advance(&self, url: UrlKey, now_ms: i64) -> f64 {
        let u = &self.urls[url];
        let (UrlKind::Page, Some(_), Some(last)) =
            (u.kind, self.acted_known_change(url), u.last_check_ms())
        else {
            return 0.0;
        };
        if self.covering_feed(url).is_some() {
            return 0.0; // its visits after announced changes are priced in the plan
        }
        let interval = self.planned_interval_ms(url);
        ((last as f64 + interval - now_ms as f64) / interval).clamp(0.0, 1.0)
    }

    /// What a visit a day is worth in the page's weighted age at its site's last plan (`μ/w`).
    pub(super) fn visit_price(&self, url: UrlKey) -> Option<f64> {
        let u = &self.urls[url];
        let site = &self.sites[u.site()];
        let host = site.plan_hosts.get(&u.host())?;
        let weight = site.weight * u.weight();
        let mu = site.multipliers.as_ref()?.effective(*host);
        (weight > 0.0 && mu.is_finite()).then(|| mu / weight)
    }

    /// Re-plans one page with its site's last multipliers (O(1)). A URL no full plan has reached yet keeps its even share of the budget until one does (the
    /// multipliers were solved without it, for a site that may have grown many times since).
    pub(super) fn replan_one(&mut self, url: UrlKey) {
        if self.urls[url].kind != UrlKind::Page || self.urls[url].planned_per_day().is_none() {
            return; // a feed's polls are priced at the full re-plan, as a new URL is
        }
        let site = self.urls[url].site();
        let Some(mult) = &self.sites[site].multipliers else {
            return;
        };
        let Some(&host) = self.sites[site].plan_hosts.get(&self.urls[url].host()) else {
            return;
        };
        if self.is_failing(url) {
            // Out of the plan from its second failure, not from the next full re-plan.
            self.urls[url].set_planned_per_day(super::MIN_PLANNED_PER_DAY);
            return;
        }
        let page = self.plan_page(url, host);
        let f = plan::rate_for(&page, mult);
        if f.is_finite() && f > 0.0 {
            self.urls[url].set_planned_per_day(f);
        }
    }

    /// A request handed out was not made (outside the site's fetch window, robots.txt disallows
    /// it for now, the host closed): the host is free at once and keeps its turn among hosts,
    /// the site gets its credit back and the URL waits until `until_ms`.
    pub fn defer(&mut self, now_ms: i64, url: UrlKey, until_ms: i64) {
        if !self.take_back(now_ms, url) {
            return;
        }
        // Respected by every later re-plan, like a retry.
        self.urls[url].set_retry(Some((until_ms, RetryCause::PutOff)));
        self.set_due(url, Some(until_ms), 0);
    }

    /// Frees the host of a request handed out but not made, and gives its site the request back
    /// (a URL that robots.txt disallows costs nothing each time its rules are re-read); false
    /// when the URL was not in flight (reported already).
    fn take_back(&mut self, now_ms: i64, url: UrlKey) -> bool {
        if !self.urls[url].in_flight {
            return false;
        }
        let (host, site) = (self.urls[url].host(), self.urls[url].site());
        self.frontier.take_back(host);
        self.frontier.refund(site, now_ms, 1.0);
        let advance = self.advance_in_flight.remove(&url).unwrap_or(0.0);
        let s = &mut self.sites[site];
        s.requests = s.requests.saturating_sub(1);
        s.extra_since_plan -= advance;
        self.urls[url].in_flight = false;
        true
    }

    /// A request handed out was refused before it was made (its URL does not parse, its site is
    /// gone): the host is free at once and the URL retired ([`Scheduler::retire_with_covers`]).
    pub fn refuse(&mut self, now_ms: i64, url: UrlKey) {
        if self.take_back(now_ms, url) {
            self.retire_with_covers(now_ms, url);
        }
    }

    /// A URL whose row is of another kind or site now (another worker's start,
    /// [`crate::store::Store::declare_kinds`]), in flight or not: retired, its host freed if
    /// it was handed out, and no feed covers it any more (the caller adds it again under a new
    /// key, as its row says).
    pub fn refuse_as_rekeyed(&mut self, now_ms: i64, url: UrlKey) {
        self.take_back(now_ms, url);
        self.retire_with_covers(now_ms, url);
        if self.urls[url].evidence().coverage.is_some() {
            self.uncover(url);
        }
    }

    /// Retires a URL; the pages a feed so retired covered follow their own plans at once: no
    /// announcement of it will come.
    fn retire_with_covers(&mut self, now_ms: i64, url: UrlKey) {
        self.retire(url);
        if self.urls[url].kind == UrlKind::Feed {
            for page in self.urls[url].feed().covers.clone() {
                self.uncover(page);
                self.follow_own_plan(now_ms, page);
            }
        }
    }
}
