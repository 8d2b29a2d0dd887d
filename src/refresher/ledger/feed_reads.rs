//! What a feed's reads have shown (towards the judgement that it dates its entries at each
//! read, its capacity and the rest) and which pages waited for it, between the scheduler
//! (which knows them by URL key) and the store (which keeps them by row id: the feed's with its
//! row, [`FeedReads`], and a page's with its plan): put back at a start, handed out after each
//! read with the plans the read moved. Each read (or a document that does not parse) goes to
//! the scheduler through here.

use std::collections::HashSet;

use crate::scheduler::{FeedListing, FeedShown, STAMPING_READS, UrlKey};
use crate::store::feed_reads::FeedReads;
use crate::store::summary::PlanUpdate;
use crate::store::urls::UrlRow;

use super::{Inner, Ledger};
use crate::refresher::url_ids::FORGOTTEN;

/// A feed's stored last read ([`FeedReads`]), put back at its next read here
/// ([`Inner::restore_stored_listing`]).
#[derive(Debug)]
pub(super) struct StoredListing {
    /// The pages (row ids) it listed, with the change it listed of each that waited for it.
    pub(super) listed: Vec<(i64, Option<i64>)>,
    /// The pages (row ids) its reads found to have left it.
    pub(super) left: Vec<i64>,
}

/// A feed's reads in a row that looked stamped, as its row keeps them (judged, should they not
/// parse while the judgement stands).
pub(super) fn stored_stamped_reads(row: &UrlRow) -> u8 {
    match FeedReads::parse(row.last_read_json.as_deref()) {
        Some(reads) => reads.stamped_reads,
        None if row.stamps_entries_since_ms.is_some() => STAMPING_READS,
        None => 0,
    }
}

/// What a feed's reads have shown of it, as its row keeps them (none, should they not parse;
/// counts out of range are not taken up, `FeedState::take_up`).
pub(super) fn stored_shown(row: &UrlRow) -> FeedShown {
    FeedReads::parse(row.last_read_json.as_deref()).map_or_else(FeedShown::default, |r| r.shown)
}

/// What a read of a feed asks of the refresher.
#[derive(Debug, Default)]
pub struct FeedRead {
    /// Whether its entries dated at the read name no change: the read looked stamped, or the
    /// feed is taken to stamp its entries ([`STAMPING_READS`]).
    pub stamped: bool,
    /// The URLs (row ids) whose plans to save at once ([`Ledger::plans_of`], read when they are
    /// saved: a check that lands meanwhile moves them again): the feed's, and those of the
    /// pages on hosts held here whose wait for it the read ended, or whose check's change
    /// awaited its judgement (a check proves a wait, a read only ends one or keeps it). Whether
    /// a page waits for its feed is kept with its plan
    /// ([`crate::scheduler::Scheduler::waits_to_keep`]); saved only with every plan, each
    /// quarter of an hour, a wait the read had ended came back after a kill before that save.
    /// A page whose check is in flight when the plans are read has none to save: its check's
    /// commit writes its wait ([`super::AfterCheck`]).
    pub moved: Vec<i64>,
}

/// Pages a feed covered before a read: the feed each waited for then, and whether a change its
/// check saw awaited the read's judgement (then its row may still say it waits, as the plan
/// saved before the check did).
type WaitsBefore = Vec<(UrlKey, Option<UrlKey>, bool)>;

impl Inner {
    /// [`WaitsBefore`] of `feed`.
    fn waits_before(&self, feed: UrlKey) -> WaitsBefore {
        (self.sched.feed_covers(feed).iter())
            .map(|&page| {
                let judged = self.sched.awaits_feed_judgement(page);
                (page, self.sched.waits_to_keep(page), judged)
            })
            .collect()
    }

    /// [`FeedRead::moved`] after a read of `feed`: the feed, and the pages whose wait the
    /// read ended, or that awaited its judgement. (A page the read begins to cover has no
    /// agreement yet, and waits for nothing.)
    fn moved_by_read(&self, feed: UrlKey, before: WaitsBefore) -> Vec<i64> {
        let mut pages: Vec<UrlKey> = (before.into_iter())
            .filter(|&(page, waited, judged)| judged || self.sched.waits_to_keep(page) != waited)
            .map(|(page, _, _)| page)
            .filter(|&page| self.sched.is_held_here(page))
            .collect();
        pages.sort_unstable();
        pages.dedup();
        // (The feed's own plan only while its host is held here: a read in flight when the
        // host went would save it over the new holder's.)
        (std::iter::once(feed).filter(|&feed| self.sched.is_held_here(feed)))
            .chain(pages)
            .map(|key| self.urls.id_of(key))
            .collect()
    }

    /// Keeps the pages a feed's stored last read listed until its next read here (they may not
    /// all be known yet while the rows are being added): an earlier run's, or another worker's
    /// newer one.
    pub(super) fn keep_stored_listing(&mut self, feed: UrlKey, row: &UrlRow) {
        if let Some(reads) = FeedReads::parse(row.last_read_json.as_deref())
            && !(reads.listed.is_empty() && reads.left.is_empty())
        {
            let dates = reads.listed_ms.into_iter().chain(std::iter::repeat(None));
            let listed = reads.listed.into_iter().zip(dates).collect();
            let left = reads.left;
            self.stored_listings
                .insert(feed, StoredListing { listed, left });
        }
    }

    /// Takes up the pages a feed's row says its reads found to have left it
    /// ([`FeedReads::left`]: another worker's reads, or an earlier run's), unless the feed was
    /// read here since its host was gained (its own reads judge its pages). A page's wait for
    /// it known here only from the rows is forgotten: kept aside (its feed's host held
    /// elsewhere), the rows this worker writes stop naming the feed; taken up as waiting, it
    /// goes back to its plan. Such a page's row is not taken to wait for it
    /// ([`Inner::has_left`]), at a start or a round, nor when this worker gains the feed's
    /// host, until its first read here.
    /// Before, no one judged such a wait while the hosts were held apart: the feed's reader
    /// could not write the page's row, and the page's holder did not read the feed; a worker
    /// that gained both took the page up as waiting for announcements that never came, and
    /// audited it only every eight planned intervals.
    /// A page taken up as waiting goes back to its plan at once
    /// ([`crate::scheduler::Scheduler::follow_own_plan`]), not at its waiting due time, eight
    /// planned intervals after its last check, until the next solve. Returns the pages on hosts
    /// held here whose wait it ended, whose plans to save now (their rows name the feed until
    /// then; a page held elsewhere is its holder's to save).
    pub(super) fn take_up_left(&mut self, feed: UrlKey, row: &UrlRow, now_ms: i64) -> Vec<i64> {
        let mut ended = Vec::new();
        if row.kind != "feed" || self.sched.feed_read_here(feed).is_some() {
            return ended;
        }
        let left: HashSet<i64> = FeedReads::parse(row.last_read_json.as_deref())
            .map(|reads| reads.left.into_iter().collect())
            .unwrap_or_default();
        for &page_id in &left {
            let Some(page) = self.urls.key_of(page_id) else {
                continue;
            };
            if self.parked_waits.get(&page) == Some(&row.id) {
                self.unpark(page);
                ended.push(page_id);
            } else if self.sched.covered_by(page) == Some(feed)
                && self.sched.take_up_wait(page, None)
            {
                self.sched.follow_own_plan(now_ms, page);
                ended.push(page_id);
            }
        }
        if left.is_empty() {
            self.feeds_left.remove(&row.id);
        } else {
            self.feeds_left.insert(row.id, left);
        }
        ended.retain(|&id| {
            self.urls
                .key_of(id)
                .is_some_and(|k| self.sched.is_held_here(k))
        });
        ended.sort_unstable();
        ended
    }

    /// Whether the feed of row `feed_id`'s stored reads found that `page` has left it
    /// ([`Inner::take_up_left`]).
    fn has_left(&self, page: UrlKey, feed_id: i64) -> bool {
        (self.feeds_left.get(&feed_id)).is_some_and(|left| left.contains(&self.urls.id_of(page)))
    }

    /// A URL was added from its row (after the scheduler restored it, and with its row id
    /// known): a page that waited for a feed when it was last planned waits for it again
    /// ([`crate::scheduler::Scheduler::restore_coverage`]) once both are known here (rows come
    /// in batches by id, and a page's feed may come in a later one, when the pages kept
    /// waiting for it are taken up), and the feed is on the page's host or one held here.
    pub(super) fn restore_stored_waits(&mut self, key: UrlKey, row: &UrlRow) {
        if row.kind == "feed" {
            self.take_up_parked(key, row.id);
        }
        let Some(feed_id) = (row.waits_for_feed_id)
            .filter(|&feed_id| row.kind == "page" && !self.has_left(key, feed_id))
        else {
            return;
        };
        match self.urls.key_of(feed_id) {
            Some(feed) => self.restore_wait(key, feed, feed_id),
            None => self.park_wait(key, feed_id),
        }
    }

    /// `page` waits for `feed` (row `feed_id`) again, as at a start; kept parked while the
    /// feed's host is held elsewhere (a start adds every row before it gains its first host),
    /// and taken up once it is gained ([`Inner::take_up_waits_on_held_feeds`]).
    fn restore_wait(&mut self, page: UrlKey, feed: UrlKey, feed_id: i64) {
        if !self.sched.restore_coverage(page, feed) && !self.sched.is_held_here(feed) {
            self.park_wait(page, feed_id);
        }
    }

    /// This worker gained a host (its rows taken over before it counts as held here,
    /// `refresher::leases`): the pages parked waiting for a feed now held here, while its host
    /// was held elsewhere, wait for it (re-planned soon, as at a start: gains are few, where
    /// most rounds that move a wait leave it to the next solve). Before, a page whose feed is on
    /// another host never waited for it again: its wait was restored at the start, when no
    /// host is held, or not at all.
    pub(super) fn take_up_waits_on_held_feeds(&mut self) {
        let held: Vec<(UrlKey, i64)> = (self.stored_waits.keys())
            .filter_map(|&id| Some((self.urls.key_of(id)?, id)))
            .filter(|&(feed, _)| self.sched.is_held_here(feed))
            .collect();
        for (feed, feed_id) in held {
            self.take_up_parked(feed, feed_id);
        }
    }

    /// The pages parked waiting for `feed` (row `feed_id`) whose latest row still names it
    /// wait for it ([`Inner::restore_wait`]: parked again while its host is held elsewhere).
    fn take_up_parked(&mut self, feed: UrlKey, feed_id: i64) {
        for page in self.stored_waits.remove(&feed_id).unwrap_or_default() {
            if self.parked_waits.get(&page) == Some(&feed_id) {
                self.parked_waits.remove(&page);
                self.restore_wait(page, feed, feed_id);
            }
        }
    }

    /// Keeps that `page` waits for the feed of row `feed_id`, not known here yet or on a host
    /// held elsewhere.
    fn park_wait(&mut self, page: UrlKey, feed_id: i64) {
        if self.parked_waits.insert(page, feed_id) != Some(feed_id) {
            self.stored_waits.entry(feed_id).or_default().insert(page);
        }
    }

    /// Forgets the wait parked for `page`: its row no longer names it (the page waits here for
    /// a feed, or was taken over naming another or none).
    pub(super) fn unpark(&mut self, page: UrlKey) {
        let Some(feed_id) = self.parked_waits.remove(&page) else {
            return;
        };
        if let Some(pages) = self.stored_waits.get_mut(&feed_id) {
            pages.remove(&page);
            if pages.is_empty() {
                self.stored_waits.remove(&feed_id);
            }
        }
    }

    /// A known page's row, taken over from another worker ([`super::Ledger::take_over`]): its
    /// wait as that worker left it ([`crate::scheduler::Scheduler::take_up_wait`]). A feed not
    /// known here yet is waited for as at a start ([`Inner::restore_stored_waits`]), and one on
    /// a host held elsewhere once this worker gains it ([`Inner::take_up_waits_on_held_feeds`]).
    /// (A stale entry of a set of parked pages, the page's latest row naming another feed or
    /// none, is told by `parked_waits`.)
    pub(super) fn take_up_stored_wait(&mut self, key: UrlKey, row: &UrlRow) {
        if row.kind != "page" {
            return;
        }
        let feed_id = (row.waits_for_feed_id).filter(|&feed_id| !self.has_left(key, feed_id));
        let feed = feed_id.and_then(|id| self.urls.key_of(id));
        self.sched.take_up_wait(key, feed);
        match (feed_id, feed) {
            (Some(feed_id), None) => self.park_wait(key, feed_id),
            (Some(feed_id), Some(feed)) if !self.sched.is_held_here(feed) => {
                self.park_wait(key, feed_id)
            }
            _ => self.unpark(key),
        }
    }

    /// Puts back the pages a feed's stored last read listed, at its next read here.
    pub(super) fn restore_stored_listing(&mut self, feed: UrlKey) {
        if let Some(StoredListing { listed, left }) = self.stored_listings.remove(&feed) {
            let keys = (listed.iter())
                .filter_map(|&(id, at)| Some((self.urls.key_of(id)?, at)))
                .collect();
            let left = left.iter().filter_map(|&id| self.urls.key_of(id)).collect();
            self.sched.restore_feed_listing(feed, keys, left);
        }
    }
}

impl Ledger {
    /// A feed's document did not parse ([`crate::scheduler::Scheduler::feed_unreadable`]).
    /// Returns the URLs whose plans to save now ([`FeedRead::moved`]).
    pub fn feed_unreadable(&self, now_ms: i64, feed_id: i64) -> Vec<i64> {
        let mut inner = self.lock();
        let Some(feed) = inner.urls.key_of(feed_id) else {
            return Vec::new();
        };
        let before = inner.waits_before(feed);
        inner.sched.feed_unreadable(now_ms, feed);
        inner.moved_by_read(feed, before)
    }

    /// The plans of the URLs `url_ids` as the scheduler holds them now, for the store (none
    /// for a URL not due at all, or in flight).
    pub fn plans_of(&self, url_ids: &[i64]) -> Vec<PlanUpdate> {
        let inner = self.lock();
        (url_ids.iter())
            .filter_map(|&id| inner.plan_update(inner.urls.key_of(id)?, id))
            .collect()
    }

    /// A feed was read: `listing` is what the document held, `entries` (URL row id, change
    /// time) its entries on the site's pages. A 304 lists nothing.
    pub fn feed_read(
        &self,
        now_ms: i64,
        feed_id: i64,
        entries: &[(i64, i64)],
        listing: FeedListing,
    ) -> FeedRead {
        let mut inner = self.lock();
        let Some(feed) = inner.urls.key_of(feed_id) else {
            return FeedRead::default();
        };
        let keyed: Vec<(UrlKey, i64)> = entries
            .iter()
            .filter_map(|(id, at)| Some((inner.urls.key_of(*id)?, *at)))
            .collect();
        inner.restore_stored_listing(feed);
        inner.feeds_left.remove(&feed_id);
        let before = inner.waits_before(feed);
        let stamped = inner.sched.handle_feed_read(now_ms, feed, &keyed, listing);
        let moved = inner.moved_by_read(feed, before);
        drop(inner);
        self.returned.notify_one();
        FeedRead { stamped, moved }
    }

    /// What the reads of the feed `feed_id` have shown towards the judgement, for the store.
    pub fn feed_reads(&self, feed_id: i64) -> Option<FeedReads> {
        let inner = self.lock();
        let key = inner.urls.key_of(feed_id)?;
        let (stamped_reads, listed, shown) = inner.sched.feed_reads(key);
        // (Not a page whose key was forgotten, its row of another kind now: `Ledger::rekey`.)
        let listed: Vec<(i64, Option<i64>)> = (listed.iter())
            .map(|&page| (inner.urls.id_of(page), inner.sched.listed_change(key, page)))
            .filter(|&(id, _)| id != FORGOTTEN)
            .collect();
        let listed_ms: Vec<Option<i64>> = listed.iter().map(|&(_, ms)| ms).collect();
        Some(FeedReads {
            stamped_reads,
            listed: listed.iter().map(|&(id, _)| id).collect(),
            left: (inner.sched.feed_left(key).iter())
                .map(|&page| inner.urls.id_of(page))
                .filter(|&id| id != FORGOTTEN)
                .collect(),
            listed_ms: if listed_ms.iter().any(Option::is_some) {
                listed_ms
            } else {
                Vec::new()
            },
            shown,
        })
    }
}
