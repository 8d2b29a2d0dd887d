//! A feed's reads towards the judgement that it dates its entries at each read, between the
//! scheduler (which counts them by URL key) and the store (which keeps them by row id with the
//! feed's row, [`FeedReads`]): put back at a start, handed out after each read.

use crate::scheduler::{STAMPING_READS, UrlKey};
use crate::store::feed_reads::FeedReads;
use crate::store::urls::UrlRow;

use super::{Inner, Ledger};

/// A feed's reads in a row that looked stamped, as its row keeps them (judged, should they not
/// parse while the judgement stands).
pub(super) fn stored_stamped_reads(row: &UrlRow) -> u8 {
    match FeedReads::parse(row.last_read_json.as_deref()) {
        Some(reads) => reads.stamped_reads,
        None if row.stamps_entries_since_ms.is_some() => STAMPING_READS,
        None => 0,
    }
}

impl Inner {
    /// Keeps the pages a feed's stored last read listed until its next read here (they may not
    /// all be known yet while the rows are being added): an earlier run's, or another worker's
    /// newer one.
    pub(super) fn keep_stored_listing(&mut self, feed: UrlKey, row: &UrlRow) {
        if let Some(reads) = FeedReads::parse(row.last_read_json.as_deref())
            && !reads.listed.is_empty()
        {
            self.stored_listings.insert(feed, reads.listed);
        }
    }

    /// Puts back the pages a feed's stored last read listed, at its next read here.
    pub(super) fn restore_stored_listing(&mut self, feed: UrlKey) {
        if let Some(ids) = self.stored_listings.remove(&feed) {
            let keys = ids.iter().filter_map(|&id| self.urls.key_of(id)).collect();
            self.sched.restore_feed_listing(feed, keys);
        }
    }
}

impl Ledger {
    /// What the reads of the feed `feed_id` have shown towards the judgement, for the store.
    pub fn feed_reads(&self, feed_id: i64) -> Option<FeedReads> {
        let inner = self.lock();
        let key = inner.urls.key_of(feed_id)?;
        let (stamped_reads, listed) = inner.sched.feed_reads(key);
        Some(FeedReads {
            stamped_reads,
            listed: listed.iter().map(|&page| inner.urls.id_of(page)).collect(),
        })
    }
}
