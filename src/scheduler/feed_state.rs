//! What the scheduler keeps per feed beside a page's state: the pages it covers, what its reads
//! have shown of it (capacity, whether it lists every change, whether it stamps its entries at the
//! read), and how much of a check's span its reads counted already.

use super::UrlKey;

/// A feed's part: the pages it covers and the time it has watched them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FeedState {
    /// Pages it has listed (and still covers).
    pub covers: Vec<UrlKey>,
    /// When it was last read.
    pub last_poll_ms: Option<i64>,
    /// The most entries it has listed at once (its capacity, as far as can be seen), the site's
    /// pages' and others' alike.
    pub most_entries: usize,
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
    /// Whether it is worth its polls (see [`super::replan`]): only then do the pages it covers
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
    /// [`FeedState::most_entries`].
    pub most_entries: usize,
    /// [`FeedState::lists_every_change`].
    pub lists_every_change: bool,
    /// [`FeedState::entries_listed`].
    pub entries_listed: f64,
    /// [`FeedState::entries_kept`].
    pub entries_kept: f64,
}

impl FeedState {
    /// What its reads have shown, to keep.
    pub fn shown(&self) -> FeedShown {
        FeedShown {
            most_entries: self.most_entries,
            lists_every_change: self.lists_every_change,
            entries_listed: self.entries_listed,
            entries_kept: self.entries_kept,
        }
    }

    /// Takes up what reads elsewhere (an earlier run, another worker) have shown: the most
    /// entries either saw, proof of every change from either, and the counts of whichever
    /// saw more entries.
    pub fn take_up(&mut self, shown: &FeedShown) {
        self.most_entries = self.most_entries.max(shown.most_entries);
        self.lists_every_change |= shown.lists_every_change;
        if shown.entries_listed > self.entries_listed {
            self.entries_listed = shown.entries_listed;
            self.entries_kept = shown.entries_kept.clamp(0.0, shown.entries_listed);
        }
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
    most_entries: 0,
    lists_every_change: false,
    entries_listed: 0.0,
    entries_kept: 0.0,
    worth: false,
    blind_until_ms: None,
    stamped_reads: 0,
    listed_last_read: Vec::new(),
    planned_before_start: None,
    read_before_start_ms: None,
};
