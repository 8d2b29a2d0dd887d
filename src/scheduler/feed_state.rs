//! What the scheduler keeps per feed beside a page's state: the pages it covers, what its reads
//! have shown of it (capacity, whether it lists every change, whether it stamps its entries at the
//! read), and how much of a check's span its reads counted already.

use super::UrlKey;

/// A feed's part: the pages it covers and the time it has watched them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FeedState {
    /// Pages it has listed (and still covers).
    pub covers: Vec<UrlKey>,
    /// When it was last read here (see [`super::Scheduler::feed_read_here`]).
    pub last_poll_ms: Option<i64>,
    /// Its host's holding when it was last read here (the count of
    /// [`super::Scheduler::host_gained`]).
    pub poll_holding: u32,
    /// Its host's holding when it was last fetched here with a copy got (the read's check;
    /// the read itself comes after its entries are stored): a row of that fetch is this
    /// worker's own.
    pub fetch_holding: Option<u32>,
    /// What its reads have shown of it (capacity, every change, the site's share of its
    /// entries): kept over a restart with its row.
    pub shown: FeedShown,
    /// Whether it is worth its polls (see [`super::feed_polls`]): only then do the pages it covers
    /// wait for its announcements instead of following the plan.
    pub worth: bool,
    /// The oldest entry of its last read that overflowed (listed only changes newer than the
    /// read before): what it dropped happened before this, so its silence says nothing of the
    /// time before it.
    pub blind_until_ms: Option<i64>,
    /// Reads in a row whose entries newer than the read before (two or more) all carried the
    /// read's own time ([`super::feeds::READ_STAMP_SLACK_MS`]): from
    /// [`super::feeds::STAMPING_READS`] on, the feed stamps its entries when it is asked for,
    /// and such entries announce nothing.
    pub stamped_reads: u8,
    /// The site's pages its last read listed (sorted): a page listed again at the read's time
    /// was re-dated.
    pub listed_last_read: Vec<UrlKey>,
    /// The site's pages its reads found to have left it (`Scheduler::drop_pages_no_longer_listed`),
    /// oldest first, until a read lists one again; the latest [`LEFT_KEPT`]. Kept with the
    /// feed's row for the workers that hold those pages' hosts and not the feed's, which
    /// cannot tell themselves: a wait for it kept aside there is forgotten, and a worker that
    /// gains both hosts does not take it up as the page's row says.
    pub left: Vec<UrlKey>,
    /// The reads a day an earlier run (or the worker that read it last) planned for it: the
    /// least of its cadence (all of it while it covers nothing here), until a fetch of it gets
    /// a document other than the one read then ([`super::Scheduler::feed_fetched`]) or a
    /// document that lists entries (a 304 lists none and keeps it). Until a read shows what it covers and how full it runs, the plan took it for
    /// a feed worth nothing, read weekly: after a restart, a feed read 19 times in 12 hours
    /// went unread for a week.
    pub planned_before_start: Option<f64>,
    /// When an earlier run last read it, while it has not been read here: pages it covered
    /// then wait for it again at once ([`super::Scheduler::restore_coverage`]), and its first
    /// read here that does not reach back to this instant (full, its oldest entry newer) may
    /// have dropped their changes, and sends them back to their plan.
    pub read_before_start_ms: Option<i64>,
}

/// What a feed's reads have shown of it, kept over a restart with its row: without it, the
/// first plan of a run priced a feed that covers pages as one whose capacity is two entries,
/// read monthly as futile.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct FeedShown {
    /// The most entries it lists at once (its capacity, as far as can be seen), the site's
    /// pages' and others' alike: the most a document of it has listed, until
    /// [`CAPACITY_READS`] documents in a row list one smaller number of entries, which is its
    /// capacity then. A feed whose capacity was cut (a blog's "show at most" setting) would
    /// otherwise never be full again, and its overflows, which drop changes of the pages
    /// waiting for it, never seen. A cap lists the same number at every read; a feed of the
    /// last day's changes lists fewer as they age out over a quiet night, and taken to be cut
    /// to those it would look full, and overflowed, at the next two new entries.
    pub most_entries: usize,
    /// Documents in a row that listed the same number of entries, `count_below`, fewer than
    /// [`FeedShown::most_entries`].
    pub reads_below_most: u8,
    pub count_below: usize,
    /// Whether it has shown that it lists every change: a document of it listed one of the
    /// site's pages at two times. Until then it may list each page once, at its latest change
    /// (most feeds do). One such read is taken as proof, though two links that name one page
    /// could pass for it: asking for a second left the feeds of `simulate --hosts 200 --budget
    /// 0.2 --signals 0.2` on the less informative rule longer, and freshet went from 0.9993 to
    /// 1.0006 times the oracle's mean age.
    pub lists_every_change: bool,
    /// Entries it has listed over all its reads, and of them the site's pages': what of its
    /// capacity their changes have.
    pub entries_listed: f64,
    pub entries_kept: f64,
    /// Its latest document's `ttl` (ms), a floor on the time between its reads with the
    /// server's ([`super::UrlState::min_interval_ms`]): a 304 keeps it. `None`: it gave none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<i64>,
}

/// Documents in a row that list one number of entries, fewer than a feed's capacity, after which
/// that number is its capacity ([`FeedShown::most_entries`]).
pub const CAPACITY_READS: u8 = 4;

impl FeedShown {
    /// Whether a document listing `entries` is as full as the feed runs (a feed of one entry
    /// or none is taken to hold two).
    pub fn full(&self, entries: usize) -> bool {
        entries >= self.most_entries.max(2)
    }

    /// Takes in a document that listed `entries` entries, `kept` of them the site's pages, and
    /// whether it `lists_news`: an entry newer than the read before (or dates that cannot
    /// tell). A document that lists fewer than the capacity and nothing new neither counts
    /// towards a cut nor breaks a run of reads: it may be the last one read again (a server
    /// without validators), and a feed of the last days' changes re-read over a quiet spell
    /// would otherwise be taken to be cut to what it lists then, and its next new entries for
    /// an overflow.
    pub fn document_read(&mut self, entries: usize, kept: usize, lists_news: bool) {
        if entries == 0 {
            return;
        }
        if entries >= self.most_entries {
            self.most_entries = entries;
            (self.reads_below_most, self.count_below) = (0, 0);
        } else if lists_news && entries != self.count_below {
            (self.reads_below_most, self.count_below) = (1, entries);
        } else if lists_news {
            self.reads_below_most += 1;
            if self.reads_below_most >= CAPACITY_READS {
                self.most_entries = entries;
                (self.reads_below_most, self.count_below) = (0, 0);
            }
        }
        self.entries_listed += entries as f64;
        self.entries_kept += kept.min(entries) as f64;
    }

    /// The share of its entries that are the site's pages (1 before a read).
    pub fn own_share(&self) -> f64 {
        if self.entries_listed > 0.0 {
            (self.entries_kept / self.entries_listed).clamp(0.0, 1.0)
        } else {
            1.0
        }
    }
}

/// The most pages a feed's [`FeedState::left`] keeps.
/// (The page's holder takes them up at its next round, seconds later; a read that finds more
/// leave at once than this, a feed restructured, leaves the oldest to the pages' checks.)
pub const LEFT_KEPT: usize = 1_024;

impl FeedState {
    /// A read found that `page` has left the feed.
    pub(super) fn note_left(&mut self, page: UrlKey) {
        self.left.retain(|&p| p != page);
        if self.left.len() >= LEFT_KEPT {
            self.left.remove(0);
        }
        self.left.push(page);
    }

    /// Takes up what reads elsewhere (an earlier run, another worker) have shown, from a read
    /// newer than any here: its capacity as that read left it (a cut capacity stays cut),
    /// proof of every change from either, and the counts of whichever saw more entries.
    pub fn take_up(&mut self, shown: &FeedShown) {
        let mine = &mut self.shown;
        if shown.most_entries > 0 {
            mine.most_entries = shown.most_entries;
            mine.reads_below_most = shown.reads_below_most.min(CAPACITY_READS - 1);
            mine.count_below = shown.count_below.min(shown.most_entries);
        }
        mine.lists_every_change |= shown.lists_every_change;
        if shown.entries_listed > mine.entries_listed {
            mine.entries_listed = shown.entries_listed;
            mine.entries_kept = shown.entries_kept.clamp(0.0, shown.entries_listed);
        }
        mine.ttl_ms = shown.ttl_ms;
    }
}

/// How much of a check's span the reads of its page's feed counted already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedCounted {
    /// Where the reads' count ends: past the page's last check.
    pub until_ms: i64,
    /// Whether the change a check saw may be one the reads counted (a change event of the
    /// page since its copy).
    pub explained: bool,
    /// Whether part of the span went unseen by the reads and uncounted (an overflowed read
    /// was blind before its oldest entry, after the last check): the check then counts
    /// nothing, whatever it saw (counting the rest only as silence, or its change after the
    /// reads, leaned one way or the other).
    pub blind: bool,
}

impl FeedCounted {
    /// Whether a check at `at_ms` that saw a change counts it over the time after the reads
    /// (not counting the check at all lost the change it saw).
    pub fn counts_change(self, at_ms: i64) -> bool {
        !self.explained && !self.blind && self.until_ms < at_ms
    }
}

/// The feed part of a URL that has none.
pub(super) static NO_FEED: FeedState = FeedState {
    covers: Vec::new(),
    last_poll_ms: None,
    poll_holding: 0,
    fetch_holding: None,
    shown: FeedShown {
        most_entries: 0,
        reads_below_most: 0,
        count_below: 0,
        lists_every_change: false,
        entries_listed: 0.0,
        entries_kept: 0.0,
        ttl_ms: None,
    },
    worth: false,
    blind_until_ms: None,
    stamped_reads: 0,
    listed_last_read: Vec::new(),
    left: Vec::new(),
    planned_before_start: None,
    read_before_start_ms: None,
};

#[cfg(test)]
mod tests {
    use super::*;

    /// The capacity of a feed that lists `counts` in turn.
    fn capacity(counts: &[usize]) -> usize {
        let mut shown = FeedShown::default();
        for &n in counts {
            shown.document_read(n, n, true);
        }
        shown.most_entries
    }

    /// A feed of the last days' changes read again and again unchanged (no validators) over a
    /// quiet spell: the documents list nothing new, and the capacity stays.
    #[test]
    fn documents_that_list_nothing_new_do_not_cut_the_capacity() {
        let mut shown = FeedShown::default();
        shown.document_read(20, 20, true);
        shown.document_read(6, 6, true);
        for _ in 0..10 {
            shown.document_read(6, 6, false);
        }
        assert_eq!(shown.most_entries, 20, "re-reads of one document");
        // One of the last day's entries aged out, nothing new came: no run starts at five.
        shown.document_read(5, 5, false);
        for _ in 1..CAPACITY_READS {
            shown.document_read(6, 6, true);
        }
        assert_eq!(shown.most_entries, 6, "the run goes on across the re-reads");
    }

    #[test]
    fn a_capacity_is_cut_by_documents_listing_one_smaller_number_in_a_row() {
        assert_eq!(capacity(&[20, 20, 5, 5, 5]), 20, "three below");
        assert_eq!(capacity(&[20, 20, 5, 5, 5, 5]), 5, "the fourth");
        assert_eq!(
            capacity(&[20, 5, 5, 5, 20, 5, 5, 5]),
            20,
            "a full one between"
        );
        assert_eq!(capacity(&[20, 5, 5, 5, 5, 20]), 20, "back up at once");
        // A 304 or an empty document lists nothing and changes nothing.
        assert_eq!(capacity(&[20, 5, 0, 5, 5, 0, 5]), 5);
        // A feed of the last day's changes: fewer as they age out, then more again.
        assert_eq!(capacity(&[9, 7, 4, 2, 1, 3, 6, 8, 5, 2]), 9);
    }

    /// A read newer than any here (an earlier run's, another worker's) brings its capacity,
    /// a cut one included; a row that shows nothing keeps what is known here.
    #[test]
    fn a_newer_read_s_capacity_is_taken_whole() {
        let mut state = FeedState::default();
        state.shown.document_read(20, 20, true);
        let mut cut = FeedShown::default();
        for _ in 0..=CAPACITY_READS {
            cut.document_read(if cut.most_entries == 0 { 20 } else { 2 }, 2, true);
        }
        assert_eq!(cut.most_entries, 2);
        state.take_up(&cut);
        assert_eq!(state.shown.most_entries, 2);
        state.take_up(&FeedShown::default());
        assert_eq!(state.shown.most_entries, 2);
        let stored = FeedShown {
            most_entries: 20,
            reads_below_most: 200,
            count_below: 50,
            ..FeedShown::default()
        };
        state.take_up(&stored);
        let taken = (state.shown.reads_below_most, state.shown.count_below);
        assert_eq!(
            taken,
            (CAPACITY_READS - 1, 20),
            "counts out of range are bounded"
        );
    }
}
