//! What a run puts back of the feeds an earlier run (or another worker) read, and what it hands
//! the store to keep of them: a feed's cadence, what its reads showed (stamping, capacity, the
//! pages its last read listed) and the pages that waited for it. Without them a restarted run
//! took a feed for one worth nothing and read it a week later, and its pages went back to
//! their plan until checks had proven it again (`tests/feed_restarts.rs`).

use super::url_state::Coverage;
use super::{FEED_TRUST_CHECKS, Restored, Scheduler, Seen, UrlKey, UrlKind};

impl Scheduler {
    /// Puts back what an earlier run, or the worker that read it last, knew of a feed: its
    /// reads a day as planned then (the least of its cadence until a fetch here gets another
    /// document, [`super::feed_state::FeedState::planned_before_start`]), when it was read
    /// then ([`super::feed_state::FeedState::read_before_start_ms`]), what its reads showed
    /// of its capacity and the rest ([`super::FeedShown`], as the newer read left it), and its
    /// reads in a row that looked stamped (at [`super::STAMPING_READS`], its entries at the
    /// read name no change from its first read on; a new entry dated earlier starts the count
    /// again, [`Scheduler::count_stamped_read`]). `known_ms`: the last read known here before
    /// the row. Taken from a row of a read no older than that: while the feed has not been
    /// read here ([`Scheduler::feed_read_here`]), from a newer read (another worker's), and,
    /// on a host another worker holds (or held until this one gains it), from a row of the
    /// same read saved again (what a read showed is saved after its check's commit, and the
    /// check may have been taken up first). On a host held here, this worker's own reads
    /// stand: its row may lag them.
    pub(super) fn restore_feed(
        &mut self,
        feed: UrlKey,
        restored: &Restored,
        known_ms: Option<i64>,
    ) {
        let read_ms = restored.last_check_ms;
        let newer = read_ms.is_some_and(|at| known_ms.is_none_or(|known| at > known));
        let same = read_ms.is_some() && read_ms == known_ms;
        let older = read_ms.is_some_and(|at| known_ms.is_some_and(|known| at < known));
        let unread = self.feed_read_here(feed).is_none();
        let saved_again = same && !self.is_held_here(feed);
        if self.urls[feed].kind != UrlKind::Feed || older || !(unread || newer || saved_again) {
            return;
        }
        let state = self.urls[feed].feed_mut();
        state.stamped_reads = restored.feed_stamped_reads;
        state.take_up(&restored.feed_shown);
        if unread {
            state.planned_before_start = restored
                .planned_per_day
                .filter(|&per_day| per_day.is_finite() && per_day > 0.0);
            state.read_before_start_ms = restored.last_check_ms;
        }
    }

    /// Puts back that `page` waited for the announcements of `feed` when an earlier run last
    /// planned it (the store keeps it with the plan): it waits for them again at once, as
    /// proven ([`FEED_TRUST_CHECKS`]), where it went back to its plan until two checks had
    /// proven the feed again (in `tests/feed_restarts.rs`, 79 page requests in the day after a
    /// restart against 59 in the day before). Only under a policy that reads feeds, while the
    /// feed has not been read here, is on the page's host or one held here (on another host
    /// another worker may read it, and this one would never judge it; a start adds every row
    /// before it gains its first host) and is not taken to stamp its entries, on a page of its
    /// site that no feed covers yet; its first read here judges whether it reached back to the read
    /// before ([`FeedState::read_before_start_ms`]). Whether it was applied.
    ///
    /// A page whose check saw a change the feed has not listed yet is not kept as waiting
    /// ([`Scheduler::waits_to_keep`]). A read that ends a wait has the page's plan saved at
    /// once, and each check's commit writes the wait with the page's plan.
    ///
    /// [`FeedState::read_before_start_ms`]: super::feed_state::FeedState::read_before_start_ms
    pub fn restore_coverage(&mut self, page: UrlKey, feed: UrlKey) -> bool {
        let covered = self.cover_as_before(page, feed);
        self.dirty |= covered;
        covered
    }

    /// [`Scheduler::restore_coverage`] but for the plan, which takes it up at its next
    /// solve.
    fn cover_as_before(&mut self, page: UrlKey, feed: UrlKey) -> bool {
        let (p, f) = (&self.urls[page], &self.urls[feed]);
        let Some(read_before) = (f.kind == UrlKind::Feed)
            .then(|| f.feed().read_before_start_ms)
            .flatten()
        else {
            return false;
        };
        if !self.config.policy.uses_feeds()
            || p.kind != UrlKind::Page
            || p.retired
            || f.retired
            || p.site() != f.site()
            || p.covered_by().is_some()
            || self.feed_read_here(feed).is_some()
            || (f.host() != p.host() && !self.is_held_here(feed))
            || self.stamps_feed_entries(feed)
        {
            return false;
        }
        self.urls[page].evidence_mut().coverage = Some(Box::new(Coverage {
            feed,
            since_ms: read_before,
            listed_ms: None,
            unannounced: None,
            unjudged: 0,
            agreements: FEED_TRUST_CHECKS,
        }));
        self.urls[feed].feed_mut().covers.push(page);
        true
    }

    /// Takes up a page's wait as the store keeps it (`feed`: the feed it waits for, or none),
    /// written by the worker that holds or held its host: of a page another worker checked, and
    /// of each page of a host this worker gains. A wait known here only from the store (its
    /// feed not read here) goes when the row no longer names its feed: the holder's read or
    /// check ended it, and taking it over as it was left the page waiting for announcements
    /// the feed had shown it misses, until it missed another change. A wait the row names is
    /// put back as at a start ([`Scheduler::restore_coverage`]). A feed read here (since this
    /// worker last gained its host, [`Scheduler::feed_read_here`]) judged its pages itself,
    /// and their waits stand. The row's due time, taken up with it, already follows the wait;
    /// the plan takes the change up at its next solve (as a read's changes to coverage),
    /// not sooner: with several workers most rounds move a wait. Whether anything changed.
    pub fn take_up_wait(&mut self, page: UrlKey, feed: Option<UrlKey>) -> bool {
        let current = self.urls[page].covered_by();
        // (A wait the row names on a feed this page's coverage here has not proven yet, one an
        // earlier holding's read began, is put back as proven, as the row says.)
        let proven = (self.urls[page].evidence().coverage.as_deref()).is_some_and(|c| c.proven());
        if current == feed && (feed.is_none() || proven) {
            return false;
        }
        let mut changed = false;
        if let Some(current) = current
            && self.feed_read_here(current).is_none()
        {
            self.uncover(page);
            changed = true;
        }
        match feed {
            Some(feed) => self.cover_as_before(page, feed) || changed,
            None => changed,
        }
    }

    /// A page no longer waiting for a feed, for what another worker's reads of it found
    /// (`take_up_wait` leaves the plan to the next solve), follows its own plan at once:
    /// planned again with its site's last multipliers and queued by its last check, as a
    /// page whose weight changed is.
    pub fn follow_own_plan(&mut self, now_ms: i64, page: UrlKey) {
        self.replan_one(page);
        self.schedule(page, now_ms);
    }

    /// A fetch of a feed got a document other than its copy, or its first: what it covers is
    /// learnt from it (if it parses), and the cadence an earlier run planned is dropped
    /// ([`super::feed_state::FeedState::planned_before_start`]). An unchanged one (a 304)
    /// lists what the read before listed, and keeps it.
    pub(super) fn feed_fetched(&mut self, feed: UrlKey, seen: Seen) {
        if self.urls[feed].kind != UrlKind::Feed {
            return;
        }
        let holding = self.hosts[self.urls[feed].host()].holdings;
        let state = self.urls[feed].feed_mut();
        // (Only a fetch that got its copy writes the row's copy time as its own, the row
        // [`Scheduler::is_latest_copy`] must not take for the previous holder's: a failed
        // fetch leaves the row's, which that holder's read may still save again, helper-123.)
        if seen.got_copy() {
            state.fetch_holding = Some(holding);
        }
        if matches!(seen, Seen::Changed | Seen::Copy) {
            state.planned_before_start = None;
        }
    }

    /// Whether `feed` was fetched here since this worker last gained its host (its read may
    /// still be on its way: [`Scheduler::feed_read_here`] says when it was read).
    pub(super) fn feed_fetched_here(&self, feed: UrlKey) -> bool {
        let holding = self.hosts[self.urls[feed].host()].holdings;
        self.urls[feed].feed().fetch_holding == Some(holding)
    }

    /// Puts back the pages the last read of a feed the store knows listed (an earlier run's,
    /// or another worker's newer one), before its next read here: that read can then tell
    /// re-dated pages as the one before would have, and, by the change that read listed of
    /// each page waiting for it (`listed`'s dates), a page that has left the feed
    /// ([`Scheduler::handle_feed_read`]) where its wait was taken up from the store.
    ///
    /// `left`: the pages its reads there found to have left it ([`FeedState::left`]).
    ///
    /// [`FeedState::left`]: super::feed_state::FeedState::left
    pub fn restore_feed_listing(
        &mut self,
        feed: UrlKey,
        listed: Vec<(UrlKey, Option<i64>)>,
        left: Vec<UrlKey>,
    ) {
        if self.urls[feed].kind != UrlKind::Feed {
            return;
        }
        let left = (left.into_iter())
            .filter(|&page| page != feed && self.urls[page].kind == UrlKind::Page)
            .collect();
        self.urls[feed].feed_mut().left = left;
        let mut pages = Vec::with_capacity(listed.len());
        for (page, at) in listed {
            if page == feed || self.urls[page].kind != UrlKind::Page {
                continue;
            }
            pages.push(page);
            // A wait taken up from the store knows no change its feed listed of the page.
            let coverage = self.urls[page].evidence_mut().coverage.as_deref_mut();
            if let Some(c) = coverage.filter(|c| c.feed == feed && c.listed_ms.is_none()) {
                c.listed_ms = at;
            }
        }
        pages.sort_unstable();
        pages.dedup();
        self.urls[feed].feed_mut().listed_last_read = pages;
    }

    /// The change `feed` last listed of `page`, if the page waits for it
    /// ([`super::url_state::Coverage::listed_ms`]): kept with the feed's row, so that the
    /// first read after a start can tell that a page has left it.
    pub fn listed_change(&self, feed: UrlKey, page: UrlKey) -> Option<i64> {
        let coverage = self.urls[page].evidence().coverage.as_deref()?;
        coverage.listed_ms.filter(|_| coverage.feed == feed)
    }

    /// What a feed's reads have shown, to keep over a restart: its reads in a row that looked
    /// stamped and the pages its last read listed ([`super::STAMPING_READS`]), and its
    /// capacity and the rest ([`super::FeedShown`]).
    pub fn feed_reads(&self, feed: UrlKey) -> (u8, &[UrlKey], super::FeedShown) {
        let state = self.urls[feed].feed();
        (state.stamped_reads, &state.listed_last_read, state.shown)
    }

    /// The pages `feed`'s reads found to have left it, until it lists them again
    /// ([`super::feed_state::FeedState::left`]).
    pub fn feed_left(&self, feed: UrlKey) -> &[UrlKey] {
        &self.urls[feed].feed().left
    }

    /// The pages `feed` covers (none for a page): whether each waits for it is kept with its
    /// plan ([`Scheduler::waits_to_keep`]).
    pub fn feed_covers(&self, feed: UrlKey) -> &[UrlKey] {
        &self.urls[feed].feed().covers
    }

    /// Whether a change a check of `page` saw awaits its feed's next read
    /// ([`super::url_state::Coverage::unannounced`]): meanwhile the page's wait is not kept.
    pub fn awaits_feed_judgement(&self, page: UrlKey) -> bool {
        let coverage = self.urls[page].evidence().coverage.as_deref();
        coverage.is_some_and(|c| c.unannounced.is_some())
    }

    /// The feed a page waits for as the store keeps it for a later run
    /// ([`Scheduler::restore_coverage`]): [`Scheduler::covering_feed`], but none while a
    /// change a check saw waits for the feed's next read to judge it
    /// ([`super::url_state::Coverage::unannounced`], not kept): a run that ends first, as each
    /// `run --once` pass may, would otherwise put the page back as waiting at every start,
    /// and a feed that misses its changes would never be found out.
    pub fn waits_to_keep(&self, url: UrlKey) -> Option<UrlKey> {
        let coverage = self.urls[url].evidence().coverage.as_deref()?;
        (coverage.unannounced.is_none())
            .then(|| self.covering_feed(url))
            .flatten()
    }

    /// Whether a feed covers `url` here, proven or not.
    pub fn is_covered(&self, url: UrlKey) -> bool {
        self.covered_by(url).is_some()
    }

    /// The feed that covers `url` here, proven or not, worth its polls or not.
    pub fn covered_by(&self, url: UrlKey) -> Option<UrlKey> {
        self.urls[url].covered_by()
    }
}
