//! Feeds in the scheduler: which pages a feed covers, what its entries teach (exact change
//! events over the time it watched), when a page is known stale, and when a feed has proven
//! itself for a page so that the page waits for its announcements. How often a feed is read is
//! priced in [`super::feed_polls`].

use std::collections::{HashMap, HashSet};

use crate::clock::MS_PER_DAY;

use super::announcements::Announcer;
use super::feed_state::FeedCounted;
use super::url_state::{Coverage, Unannounced};
use super::{Scheduler, UrlKey, UrlKind};

/// An entry dated less than this before the read carries the time the feed was generated, not
/// when its page changed (a feed that stamps every entry with the time it is asked for, or a
/// page that changed in the last minute: the two cannot be told apart). Counted as a change
/// at that time, with the time after it, every such read added one change over no time at
/// all: in a probe of a feed re-dating 40 pages at each read, pages that change every 6 h
/// were estimated at 1,584 changes a day after four reads and 5,560 after six, and were
/// then left unvisited for hours as changing too fast to keep. Such an entry still makes its
/// page known stale (its host's checks judge that, [`super::announcements`]); the span it
/// falls in is left to the page's checks.
pub const READ_STAMP_SLACK_MS: i64 = 60_000;

/// Reads in a row whose new entries all carry the read's time after which a feed is taken to
/// stamp its entries when it is asked for ([`FeedState::stamped_reads`]): its entries at the
/// read then announce nothing, and its pages follow their plan. A feed generated on request
/// lists every page it holds at every read, so announced, each read sent all of them for
/// nothing, and their checks, finding most unchanged, took belief from every feed of the
/// host, an honest one beside it included ([`super::announcements`]). Two reads, because a
/// read whose few new entries all changed in the last minute happens to an honest busy feed
/// now and then, twice in a row hardly ever.
///
/// [`FeedState::stamped_reads`]: super::feed_state::FeedState::stamped_reads
pub const STAMPING_READS: u8 = 2;

/// Changes checks saw that a feed never listed, each at a read that could not tell (it was
/// blind for part of the span), after which the feed is taken to miss the page's changes.
const UNJUDGED_MISSES: u32 = 3;

/// What a feed document listed before any of its entries were left out (links to other hosts
/// or refused by the site's patterns, entries without a time or in the future): whether a read
/// overflowed is a property of the document, not of the entries kept. Judged on the entries
/// kept, a read holding more foreign entries than usual looked less full than ever and its
/// overflow went unseen (its span counted as watched, the changes it dropped as none), and a
/// foreign entry older than the last read, left out, made a read look overflowed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FeedListing {
    /// Entries in the document.
    pub entries: usize,
    /// The oldest time among them (clock ms), if any had one.
    pub oldest_ms: Option<i64>,
    /// The newest time among them no later than the read: a document whose entries are all
    /// no newer than the read before lists nothing new (a feed re-read unchanged, from a
    /// server without validators). `None`: no dates to tell, taken as new.
    pub newest_ms: Option<i64>,
    /// When the request for it was sent (clock ms), if known: an entry dated after this, or
    /// less than [`READ_STAMP_SLACK_MS`] before, is dated at the read. Without it, the read's
    /// own time stands for it.
    pub requested_ms: Option<i64>,
    /// Whether every entry is dated no later than the read, listed in order of date (newest
    /// first, or oldest first): a document of a feed that keeps its entries by date, which can
    /// tell that a page is missing from it ([`Scheduler::handle_feed_read`]). An entry without
    /// a time or dated ahead may be the page's, and a pinned post, or entries in another
    /// order (per source, by popularity), keep what is older without keeping all that is newer.
    pub kept_by_date: bool,
    /// The document's `ttl` (ms): not read again before this long after the read
    /// ([`super::FeedShown::ttl_ms`]); `Some(None)`: a document without one. `None`: no
    /// document was read (a 304 lists none), and the `ttl` of the last one stands.
    pub ttl_ms: Option<Option<i64>>,
}

impl FeedListing {
    /// The listing of a feed whose every entry is one of the site's pages, with its time.
    pub fn of(entries: &[(UrlKey, i64)]) -> FeedListing {
        FeedListing {
            entries: entries.len(),
            oldest_ms: entries.iter().map(|&(_, at)| at).min(),
            newest_ms: entries.iter().map(|&(_, at)| at).max(),
            requested_ms: None,
            kept_by_date: true,
            ttl_ms: Some(None),
        }
    }

    /// Whether an entry dated `at_ms`, in this listing read at `now_ms`, is dated at the read
    /// ([`READ_STAMP_SLACK_MS`]).
    pub fn dated_at_the_read(&self, at_ms: i64, now_ms: i64) -> bool {
        let requested = self.requested_ms.unwrap_or(now_ms).min(now_ms);
        at_ms > requested - READ_STAMP_SLACK_MS
    }
}

impl Scheduler {
    /// A feed was read at `now_ms` and listed `entries` (page, change time) and nothing else.
    pub fn handle_feed(&mut self, now_ms: i64, feed: UrlKey, entries: &[(UrlKey, i64)]) {
        self.handle_feed_read(now_ms, feed, entries, FeedListing::of(entries));
    }

    /// A feed was read at `now_ms`: `listing` is the whole document, `entries` (page, change
    /// time) the entries on the site's pages. Pages it lists are covered by it from then on; an
    /// entry newer than a page's copy makes it known stale. Returns whether its entries dated
    /// at the read were taken for no changes ([`STAMPING_READS`]): the store keeps none.
    pub fn handle_feed_read(
        &mut self,
        now_ms: i64,
        feed: UrlKey,
        entries: &[(UrlKey, i64)],
        listing: FeedListing,
    ) -> bool {
        if !self.config.policy.uses_feeds() {
            return false;
        }
        // Oldest first, whatever the document's order (real feeds list the newest first): a
        // page's first sighting is its oldest listed change, and that change is the one that
        // made its copy stale.
        let mut entries = entries.to_vec();
        entries.sort_by_key(|&(page, at)| (at, page));
        let last_poll = self.feed_read_here(feed);
        let at_the_read = |at: i64| listing.dated_at_the_read(at, now_ms);
        let stamped_read = self.count_stamped_read(feed, &entries, at_the_read);
        let stamps_entries = self.stamps_feed_entries(feed);
        let ignores_stamps = stamped_read || stamps_entries;
        // A page whose host's feed entries have proven false alarms, or listed by a feed that
        // stamps its entries, is not covered: it goes back to its plan
        // ([`super::announcements`], [`STAMPING_READS`]).
        let unbelieved: Vec<UrlKey> = (self.urls[feed].feed().covers.iter().copied())
            .filter(|&page| stamps_entries || !self.believes_feed_entries(self.urls[page].host()))
            .collect();
        for page in unbelieved {
            self.uncover(page);
            self.schedule(page, now_ms);
        }
        // The first read here of a feed an earlier run read: the spans of the pages it covered
        // then ([`Scheduler::restore_coverage`]) were counted by that run's reads and checks up
        // to instants not kept, so this read counts none of them and leaves each to the page's
        // next check (counted from the read on, a change it lists from before the read was
        // counted by that check over the minutes after the read).
        let read_before_start = match last_poll {
            // (The later of the stored read and one of its own from before the host was
            // given away, should no row have come since.)
            None => {
                let f = self.urls[feed].feed_mut();
                f.read_before_start_ms.take().max(f.last_poll_ms)
            }
            Some(_) => None,
        };
        if read_before_start.is_some() {
            for page in self.urls[feed].feed().covers.clone() {
                self.urls[page].leave_span_to_check();
            }
        }
        // One change listed twice (two links that name one page) is one change.
        entries.dedup();
        self.drop_pages_no_longer_listed(now_ms, feed, &entries, listing);
        // A feed lists its last few entries: if it is as full as it runs (its capacity,
        // `FeedShown::most_entries`) and every entry is newer than the last poll, some may have
        // been dropped, and every page it covers may have changed unseen.
        let oldest = listing.oldest_ms.map(|at| at.min(now_ms));
        let full = self.urls[feed].feed().shown.full(listing.entries);
        let overflowed = full && last_poll.is_some_and(|last| oldest.is_some_and(|o| o > last));
        // A first read after a start that does not reach back to the read before it may have
        // dropped changes of the time between (a long stop): as after an overflow, its pages
        // go back to their plan until it proves itself again.
        let dropped_before_start =
            full && read_before_start.is_some_and(|before| oldest.is_some_and(|o| o > before));
        // A page of the site listed at two times: this read lists more than each page's latest
        // change.
        let mut listed = HashSet::new();
        let repeats = entries.iter().any(|&(page, _)| {
            let u = &self.urls[page];
            page != feed && u.kind == UrlKind::Page && !u.retired && !listed.insert(page)
        });
        let state = self.urls[feed].feed_mut();
        // A document read (not a 304): what it covers and how full it runs are known from here
        // on, and the cadence an earlier run planned is no longer needed.
        if listing.entries > 0 {
            state.planned_before_start = None;
        }
        state.shown.lists_every_change |= repeats;
        let every_change = state.shown.lists_every_change;
        let lists_news = match (last_poll.or(read_before_start), listing.newest_ms) {
            (Some(before), Some(newest)) => newest > before,
            _ => true,
        };
        (state.shown).document_read(listing.entries, entries.len(), lists_news);
        let ttl_changed = listing.ttl_ms.is_some_and(|ttl| ttl != state.shown.ttl_ms);
        if let Some(ttl) = listing.ttl_ms {
            state.shown.ttl_ms = ttl;
        }
        let start = match (last_poll, oldest) {
            (Some(_), Some(oldest)) if overflowed => oldest,
            (Some(last), _) => last,
            (None, _) => now_ms,
        };
        // After an overflow nothing is known of the dropped entries: its pages go back to their
        // plan until the feed proves itself again.
        if overflowed || dropped_before_start {
            self.urls[feed].feed_mut().blind_until_ms =
                if overflowed { Some(start) } else { oldest };
            self.unprove(now_ms, feed);
        }
        // What the read saw completely: every change since the last read, or after an overflow
        // every change since its oldest entry, that entry included (read from now backwards,
        // the span ends at the entry that filled the feed: a stopping time, so the span and its
        // changes are a fair sample of the page's process, and the blind time before it is
        // simply unseen). Leaving the reads that overflowed out would leave out the busiest
        // spans: in the demo's `news` host they held 124-146 changes a day, the others 94-110.
        // Each page counts the span from where its evidence ends (a check between two reads
        // counted the time before). Per page: where this read's count starts, and whether an
        // entry right there counts (the overflow's oldest, for a page covered before the read).
        //
        // A feed that may list each page once, at its latest change, shows at most one change
        // of a page per read however many came: there, a page's latest listed change counts
        // with the time after it, and the time before it in the span not at all (the
        // likelihood of "the last change was at t": unbiased whatever came before, as a
        // `Last-Modified` is). Counting it as the span's only change held a page changing
        // once between reads at about two thirds of its rate.
        //
        // A page listed at the read's own time has its span left to its next check, and no
        // read counts anything of it until then ([`READ_STAMP_SLACK_MS`]): a later read that
        // counted the silence after it put the check's change where nothing changed.
        let mut stamped: HashSet<UrlKey> = (entries.iter())
            .filter(|&&(_, at)| at_the_read(at))
            .map(|&(page, _)| page)
            .collect();
        stamped.extend(
            (self.urls[feed].feed().covers.iter().copied())
                .filter(|&page| self.urls[page].since_copy().left_to_check()),
        );
        let mut counted_from: HashMap<UrlKey, (i64, bool)> = HashMap::new();
        let mut latest: HashMap<UrlKey, i64> = HashMap::new();
        for page in self.urls[feed].feed().covers.clone() {
            if stamped.contains(&page) {
                continue;
            }
            let e = self.urls[page].evidence_mut();
            let from = start.max(e.evidence_until_ms.get().unwrap_or(i64::MIN));
            e.stats
                .add_exact(0.0, (now_ms - from).max(0) as f64 / MS_PER_DAY);
            e.evidence_until_ms = Some(now_ms.max(from)).into();
            counted_from.insert(page, (from, overflowed && from == start));
        }
        for &(page, at) in &entries {
            if page == feed || self.urls[page].kind != UrlKind::Page || self.urls[page].retired {
                continue;
            }
            // A read that looks stamped, or a feed taken to stamp, announces nothing by its
            // entries at the read: one acted on, even on probation, raised false alarms
            // against every feed of the host.
            if at_the_read(at)
                && self.urls[page]
                    .last_check_ms()
                    .is_some_and(|last| at > last)
            {
                self.urls[page].leave_span_to_check();
            }
            if ignores_stamps && at_the_read(at) {
                continue;
            }
            // Not believed: only noted, for the page's next check to judge.
            if !self.believes_feed_entries(self.urls[page].host()) {
                self.announce(page, at, Announcer::Feed);
                continue;
            }
            let u = &mut self.urls[page];
            // (Oldest first: the read's latest listed change of the page stays, not the
            // latest of all reads, which a feed that moves a date back would keep.)
            if let Some(c) = (u.evidence_mut().coverage.as_deref_mut()).filter(|c| c.feed == feed) {
                c.listed_ms = Some(at);
            }
            match u.covered_by() {
                // A page it does not cover is covered from a change it lists for the first time:
                // an entry the last read held too was there when the page was not covered (the
                // feed was found to miss its changes, or the page was not known yet).
                None if last_poll.is_some_and(|last| at <= last) => {}
                None => {
                    // Coverage starts at the first sighting, which is not itself counted: it was
                    // selected by being a change. Its silence since counts only after what the
                    // page's checks counted already (a check after the change saw it).
                    let e = u.evidence_mut();
                    e.coverage = Some(Box::new(Coverage {
                        feed,
                        since_ms: start,
                        listed_ms: Some(at),
                        unannounced: None,
                        unjudged: 0,
                        agreements: 0,
                    }));
                    // A first sighting at the read's own time counts nothing: its page's
                    // checks count the span ([`READ_STAMP_SLACK_MS`]).
                    if !stamped.contains(&page) {
                        let from = at
                            .max(start)
                            .max(e.evidence_until_ms.get().unwrap_or(i64::MIN));
                        e.stats
                            .add_exact(0.0, (now_ms - from).max(0) as f64 / MS_PER_DAY);
                        e.evidence_until_ms = Some(now_ms.max(from)).into();
                        counted_from.insert(page, (from, false));
                    }
                    self.urls[feed].feed_mut().covers.push(page);
                }
                // A change inside the span this read counted for the page.
                Some(f)
                    if f == feed
                        && counted_from
                            .get(&page)
                            .is_some_and(|&(from, edge)| at > from || (edge && at == from)) =>
                {
                    if every_change {
                        u.evidence_mut().stats.add_exact(1.0, 0.0);
                        if u.last_check_ms().is_some_and(|last| at > last) {
                            u.note_feed_event();
                        }
                    } else {
                        let last = latest.entry(page).or_insert(at);
                        *last = (*last).max(at);
                    }
                }
                Some(_) => {}
            }
            self.recall_failed(now_ms, page, at);
            if self.announce(page, at, Announcer::Feed) {
                self.mark_known(now_ms, page, at);
            }
        }
        for (page, at) in latest {
            let (from, _) = counted_from[&page];
            if self.urls[page]
                .last_check_ms()
                .is_some_and(|last| at > last)
            {
                self.urls[page].note_feed_event();
            }
            let stats = &mut self.urls[page].evidence_mut().stats;
            stats.events += 1.0;
            stats.exposure_days =
                (stats.exposure_days - (at - from).max(0) as f64 / MS_PER_DAY).max(0.0);
        }
        // A change a check saw must be listed by now: if it is, the feed has proven itself once
        // more for this page; if not, it misses this page's changes, unless the feed was blind
        // for part of the check's span (a read that overflowed, this one or one before, dropped
        // what happened before its oldest entry): then nothing is known either way. Judging
        // only at reads that did not overflow, and whatever the feed had dropped, took pages
        // from a feed that lists every change (9 of the 12 in three demo runs). A feed that is
        // blind at every read cannot keep a page whose changes it never lists for long: after
        // [`UNJUDGED_MISSES`] such changes in a row it is taken to miss them.
        let blind_until = self.urls[feed].feed().blind_until_ms;
        let suspects: Vec<UrlKey> = self.urls[feed]
            .feed()
            .covers
            .iter()
            .copied()
            .filter(|&p| {
                self.urls[p]
                    .evidence()
                    .coverage
                    .as_ref()
                    .is_some_and(|c| c.unannounced.is_some())
            })
            .collect();
        for page in suspects {
            let Some(coverage) = self.urls[page].evidence_mut().coverage.as_deref_mut() else {
                continue;
            };
            let Some(seen) = coverage.unannounced.take() else {
                continue;
            };
            // (A feed that may list only a page's latest change lists a later one instead.)
            let listed = entries.iter().any(|&(p, at)| {
                p == page
                    && at > seen.from_ms
                    && (at <= seen.to_ms || !every_change)
                    && !(ignores_stamps && at_the_read(at))
            });
            let missed = if listed {
                coverage.agreements += 1;
                coverage.unjudged = 0;
                false
            } else if blind_until.is_none_or(|blind| blind <= seen.from_ms) {
                true
            } else {
                coverage.unjudged += 1;
                coverage.unjudged >= UNJUDGED_MISSES
            };
            if missed {
                self.count_missed_change(page, seen);
                self.uncover(page);
            }
        }
        let holding = self.hosts[self.urls[feed].host()].holdings;
        let f = self.urls[feed].feed_mut();
        f.last_poll_ms = Some(now_ms);
        f.poll_holding = holding;
        if ttl_changed {
            // Its check queued it on the floor it knew: the document's `ttl` moves it, and
            // the next plan reads it no more often ([`super::feed_polls`]).
            self.schedule(feed, now_ms);
            self.dirty = true;
        }
        ignores_stamps
    }

    /// Ends the coverage of the pages a document of `feed` no longer lists although it keeps
    /// two of the site's entries older than the change it last listed of each, and one as new:
    /// in a feed that keeps its entries by date ([`FeedListing::kept_by_date`]), its latest
    /// few (each page once, or every change) or its last days', such a page's entry would
    /// still be there, so the feed stopped listing the page (it moved to a section the feed
    /// does not cover, or was taken out of it) and will not announce its changes. Left to the
    /// checks, such a page waited until one saw a change the next read did not list, and a
    /// check that saw none proved the feed once more: in `tests/feed_restarts.rs`, pages a
    /// feed stopped listing went up to 33 hours between visits while the pages it listed had
    /// their changes fetched within the hour. A page whose last listed change is older than
    /// the entries kept fell off the end as the feed filled, and stays covered: its next change
    /// brings it back. Two older entries, not one, so that one entry dated wrong does not
    /// uncover the pages that fell off the end; one as new as the page's, so that a stale
    /// document (a cache's copy from before the page was listed) does not. The read counts
    /// nothing of the span for a page it drops: its checks do.
    fn drop_pages_no_longer_listed(
        &mut self,
        now_ms: i64,
        feed: UrlKey,
        entries: &[(UrlKey, i64)],
        listing: FeedListing,
    ) {
        if !listing.kept_by_date || entries.is_empty() {
            return;
        }
        // `entries` oldest first: the second oldest, and the newest.
        let second_oldest = entries.get(1).map_or(i64::MAX, |&(_, at)| at);
        let newest = entries.last().map_or(i64::MIN, |&(_, at)| at);
        let listed: HashSet<UrlKey> = entries.iter().map(|&(page, _)| page).collect();
        let dropped: Vec<UrlKey> = (self.urls[feed].feed().covers.iter().copied())
            .filter(|page| !listed.contains(page))
            .filter(|&page| {
                let coverage = self.urls[page].evidence().coverage.as_deref();
                coverage.is_some_and(|c| {
                    c.feed == feed
                        && c.listed_ms
                            .is_some_and(|t| second_oldest < t && t <= newest)
                })
            })
            .collect();
        for page in dropped {
            let seen = (self.urls[page].evidence_mut().coverage.as_deref_mut())
                .and_then(|c| c.unannounced.take());
            if let Some(seen) = seen {
                self.count_missed_change(page, seen);
            }
            self.uncover(page);
            self.urls[feed].feed_mut().note_left(page);
            if !self.urls[page].in_flight {
                self.schedule(page, now_ms);
            }
        }
    }

    /// A change a check saw and left to the page's feed, which missed it: the change counts
    /// after all, unless the check counted it already (the feed's quiet over the span stays,
    /// a little evidence of slowness that the check's change outweighs).
    fn count_missed_change(&mut self, page: UrlKey, seen: Unannounced) {
        if !seen.counted {
            let days = (seen.to_ms - seen.from_ms) as f64 / MS_PER_DAY;
            (self.urls[page].evidence_mut().stats).add_check(days, Some(true), None);
        }
    }

    /// Whether a read of `feed` listing `entries` looks stamped, counted towards
    /// [`STAMPING_READS`]. Of its entries newer than the read before (on the site's pages):
    /// one not `at_the_read` starts the count again; else, if two or more are pages its last
    /// read listed, all at the read's time (re-dated), the read looks stamped and adds one. A
    /// feed of the last minute's changes, a new page each time, re-dates nothing. (A first
    /// read after a start goes on from what the run before kept: [`Scheduler::restore_feed`],
    /// [`Scheduler::restore_feed_listing`].)
    fn count_stamped_read(
        &mut self,
        feed: UrlKey,
        entries: &[(UrlKey, i64)],
        at_the_read: impl Fn(i64) -> bool,
    ) -> bool {
        let last_poll = self.feed_read_here(feed);
        let state = self.urls[feed].feed();
        let mut listed: Vec<(UrlKey, i64)> = (entries.iter().copied())
            .filter(|&(page, _)| page != feed && self.urls[page].kind == UrlKind::Page)
            .collect();
        let new: Vec<(UrlKey, i64)> = (listed.iter().copied())
            .filter(|&(page, at)| {
                !self.urls[page].retired && last_poll.is_none_or(|last| at > last)
            })
            .collect();
        let new_pages: HashSet<UrlKey> = new.iter().map(|&(page, _)| page).collect();
        let relisted = (state.listed_last_read.iter())
            .filter(|page| new_pages.contains(page))
            .count();
        let dated_earlier = new.iter().any(|&(_, at)| !at_the_read(at));
        listed.sort_unstable();
        listed.dedup_by_key(|&mut (page, _)| page);
        let listed: Vec<UrlKey> = listed.into_iter().map(|(page, _)| page).collect();
        let state = self.urls[feed].feed_mut();
        // (A 304 lists nothing and leaves the list.)
        if !entries.is_empty() {
            state
                .left
                .retain(|page| listed.binary_search(page).is_err());
            state.listed_last_read = listed;
        }
        let stamped = !dated_earlier && relisted >= 2;
        if dated_earlier {
            state.stamped_reads = 0;
        } else if stamped {
            state.stamped_reads = state.stamped_reads.saturating_add(1);
        }
        stamped
    }

    /// Whether a feed stamps its entries with the time of the read ([`STAMPING_READS`]).
    pub fn stamps_feed_entries(&self, feed: UrlKey) -> bool {
        self.urls[feed].feed().stamped_reads >= STAMPING_READS
    }

    /// How far a read of a feed counted past the page's last check, if it did (its evidence
    /// runs past that check), and what that leaves a check to count: the feed's entries, not
    /// the check, are the evidence of the time up to there, and the check counts only the rest
    /// ([`FeedCounted`]). Read before the check is judged: the check may end the coverage.
    pub(super) fn feed_counted_past_last_check(&self, page: UrlKey) -> Option<FeedCounted> {
        let u = &self.urls[page];
        let last = u.last_check_ms()?;
        let until_ms = (u.evidence().evidence_until_ms.get()).filter(|&until| until > last)?;
        // Part of the span a read could not see (its feed was blind before an overflowed
        // read's oldest entry, after the last check), and the change a check sees may be one a
        // read counted (a change event since the copy).
        let blind = u.covered_by().is_some_and(|feed| {
            (self.urls[feed].feed().blind_until_ms).is_some_and(|blind| blind > last)
        });
        let explained = u.since_copy().feed_events() > 0;
        Some(FeedCounted {
            until_ms,
            explained,
            blind,
        })
    }

    /// A fetch of a feed got a document that does not parse: it announces nothing, and as
    /// after an overflow, its pages go back to their plan until it proves itself again (pages
    /// that waited for it, restored at a start, waited for it all the run).
    pub fn feed_unreadable(&mut self, now_ms: i64, feed: UrlKey) {
        if self.urls[feed].kind == UrlKind::Feed {
            self.unprove(now_ms, feed);
        }
    }

    /// The pages `feed` covers go back to their plan until it proves itself again for each
    /// ([`super::FEED_TRUST_CHECKS`]): after a read that overflowed or may have dropped changes, or
    /// a document that does not parse.
    fn unprove(&mut self, now_ms: i64, feed: UrlKey) {
        for page in self.urls[feed].feed().covers.clone() {
            if let Some(coverage) = self.urls[page].evidence_mut().coverage.as_deref_mut() {
                coverage.agreements = 0;
            }
            if !self.urls[page].in_flight {
                self.schedule(page, now_ms);
            }
        }
    }

    /// When `feed` was last read here, while its host is held here and since this worker last
    /// gained it ([`Scheduler::host_gained`]; a read in flight when the host went finishes in
    /// the holding before): a read of an earlier holding says nothing of what another
    /// worker's reads and checks found meanwhile (which waits its reads ended, where its
    /// pages' spans end), and the rows it wrote are taken up as an earlier run's are
    /// ([`Scheduler::restore_feed`], [`Scheduler::take_up_wait`]). Taken for read here for
    /// good, a worker that got a host back kept waits the other had ended, and judged its
    /// first read against its own old one.
    pub fn feed_read_here(&self, feed: UrlKey) -> Option<i64> {
        let f = self.urls[feed].feed();
        let host = self.urls[feed].host();
        let holding = self.hosts[host].holdings;
        (f.last_poll_ms).filter(|_| f.poll_holding == holding && !self.frontier.is_elsewhere(host))
    }

    /// Ends a page's coverage by its feed (the feed missed one of its changes).
    pub(super) fn uncover(&mut self, page: UrlKey) {
        if let Some(coverage) = self.urls[page].evidence_mut().coverage.take() {
            self.urls[coverage.feed]
                .feed_mut()
                .covers
                .retain(|&p| p != page);
        }
    }

    /// The feed whose announcements a page waits for, if it is worth its polls (only pages are
    /// covered). The store keeps it with the plan, so that `explain` can say why the page's
    /// next visit lies past its planned interval.
    pub fn covering_feed(&self, url: UrlKey) -> Option<UrlKey> {
        let u = &self.urls[url];
        let coverage = u.evidence().coverage.as_deref()?;
        (self.urls[coverage.feed].feed().worth && coverage.proven()).then_some(coverage.feed)
    }
}
