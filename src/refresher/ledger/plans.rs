//! The plans and estimates the store keeps ([`Ledger::plans`]): what each check's commit and
//! the save of every plan write of a URL's plan, its wait for a feed and its estimate.

use crate::scheduler::{SiteKey, UrlKey};
use crate::store::summary::{PlanUpdate, PlannedEstimate};

use super::{Inner, Ledger};

impl Inner {
    /// A URL's plan as the store keeps it (no estimate: the stored one stands); `None` while
    /// it is not due at all.
    pub(super) fn plan_update(&self, key: UrlKey, url_id: i64) -> Option<PlanUpdate> {
        let (planned_per_day, due) = self.sched.planned(key);
        Some(PlanUpdate {
            url_id,
            planned_per_day,
            next_due_ms: due?,
            watched: self.sched.watched(key),
            rate: None,
            waits_for_feed_id: self.wait_to_store(key),
            written_ms: None,
            taken_ms: None,
        })
    }

    /// The feed (row id) a URL waits for, as the store keeps it
    /// ([`crate::scheduler::Scheduler::waits_to_keep`]), or the one kept aside for it while
    /// that feed's host is held elsewhere: the row keeps naming it, so this worker takes it up
    /// when it gains that host, and so does a restart or the page's next holder. (Written as
    /// none, a page whose feed another worker held lost its proven wait at the first save of
    /// every plan, and waited for two checks to prove the feed again once the host was gained.)
    pub(super) fn wait_to_store(&self, key: UrlKey) -> Option<i64> {
        match self.sched.waits_to_keep(key) {
            Some(feed) => Some(self.urls.id_of(feed)),
            None => self.parked_waits.get(&key).copied(),
        }
    }

    /// Forgets the wait kept aside for `page` once a feed covers it here (that one, or
    /// another; proven or not): the row names that feed, or none while a change a check saw
    /// awaits its read, from now on, not the one kept aside in between (helper-119).
    pub(super) fn settle_parked(&mut self, page: UrlKey) {
        if self.sched.is_covered(page) {
            self.unpark(page);
        }
    }
}

impl Ledger {
    /// The sites whose priors changed since the store last had their estimates, with when
    /// ([`Scheduler::outdated_estimates`]): [`Ledger::plans`] gives their pages' estimates.
    pub fn outdated_estimates(&self) -> Vec<(SiteKey, i64)> {
        self.lock().sched.outdated_estimates()
    }

    /// Whether some site's priors changed since the store last had its estimates (O(1)).
    pub fn estimates_outdated(&self) -> bool {
        self.lock().sched.estimates_outdated()
    }

    /// A save of those estimates failed ([`Scheduler::estimates_save_failed`]).
    pub fn estimates_save_failed(&self, tried: &[(SiteKey, i64)]) {
        self.lock().sched.estimates_save_failed(tried);
    }

    /// The store has those estimates now ([`Scheduler::estimates_saved`]).
    pub fn estimates_saved(&self, saved: &[(SiteKey, i64)]) {
        self.lock().sched.estimates_saved(saved);
    }

    /// The planned rate and due time of the URLs whose keys are in `keys`, for the store's
    /// reports, and their estimates where priors fitted since their last check moved them.
    /// A page kept waiting aside that a feed covers here now forgets the wait kept aside
    /// first ([`Inner::settle_parked`]), so the plan written names the feed it waits for here.
    pub fn plans(&self, keys: std::ops::Range<usize>) -> Vec<PlanUpdate> {
        let mut inner = self.lock();
        let end = keys.end.min(inner.urls.len());
        let keys = keys.start.min(end)..end;
        // (The range's own: a save writes every plan a range at a time, and each range looked
        // through every page kept waiting aside.)
        if !inner.parked_waits.is_empty() {
            for page in keys.clone() {
                if inner.parked_waits.contains_key(&page) {
                    inner.settle_parked(page);
                }
            }
        }
        inner
            .urls
            .ids(keys.clone())
            .iter()
            .zip(keys)
            .map(|(id, key)| (key, id))
            // With several workers, each writes the plans of the hosts it holds only.
            .filter(|&(key, _)| inner.sched.is_held_here(key))
            .filter_map(|(key, id)| {
                Some(PlanUpdate {
                    rate: inner
                        .sched
                        .estimate_to_save(key)
                        .map(|(after_check_ms, estimate)| PlannedEstimate {
                            estimate,
                            after_check_ms,
                        }),
                    ..inner.plan_update(key, *id)?
                })
            })
            .collect()
    }
}
