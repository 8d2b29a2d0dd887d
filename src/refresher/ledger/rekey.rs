//! A URL whose row another worker's start gave another kind or site while this worker runs on
//! the schedule it started with ([`crate::store::Store::declare_kinds`]): the scheduler's old
//! key is retired and the URL added again under a new one, as its row says.

use crate::store::urls::UrlRow;

use super::Ledger;

impl Ledger {
    /// The URL of `row` was handed out under a key of another kind or site than its row's: the
    /// old key is refused ([`crate::scheduler::Scheduler::refuse_as_rekeyed`]) and forgotten,
    /// with what this ledger kept aside for it, and the row added as [`Ledger::sync`] adds a
    /// new one. Answers whether it is checked here from now on: a page or a feed of a site
    /// this worker knows (a sitemap's row is discovery's; another site's, its workers').
    pub fn rekey(
        &self,
        now_ms: i64,
        row: &UrlRow,
        host_gate: impl Fn(&UrlRow) -> (String, i64, i64),
    ) -> bool {
        {
            let mut inner = self.lock();
            if let Some(old) = inner.urls.key_of(row.id) {
                inner.sched.refuse_as_rekeyed(now_ms, old);
                inner.unpark(old);
                inner.stored_listings.remove(&old);
                inner.urls.forget(row.id);
            }
        }
        self.sync(std::slice::from_ref(row), now_ms, host_gate);
        self.lock().urls.key_of(row.id).is_some()
    }
}
