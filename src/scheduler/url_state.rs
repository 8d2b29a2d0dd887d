//! What the scheduler keeps per URL: its place in the site and host, its hints, the folded
//! evidence of its checks, its plan, and for a feed which pages it covers.

use crate::clock::MS_PER_DAY;
use crate::estimate::Stats;

use super::announcements::{Announcer, SinceCopy};
use super::compact::{MaybeMs, MaybeRate, MaybeSpan};
use super::policy::{self, PolicyKind};
use super::{Fetched, HostKey, NewUrl, Seen, SiteKey, UrlKey};

use super::feed_state::{FeedCounted, FeedState, NO_FEED};

/// A page (kept fresh) or a feed (read for the changes it announces).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UrlKind {
    /// A page.
    Page,
    /// A feed (RSS, Atom, JSON Feed).
    Feed,
}

/// A page's coverage by the feed that lists it: its evidence then comes from the feed.
#[derive(Debug, Clone, PartialEq)]
pub struct Coverage {
    /// The feed.
    pub feed: UrlKey,
    /// The start of the read's window in which the feed first listed it.
    pub since_ms: i64,
    /// The latest change a read here saw the feed list for it (clock ms): a document that
    /// keeps an older entry but not the page's no longer lists the page. Unknown for a wait
    /// taken up from the store.
    pub listed_ms: Option<i64>,
    /// A change a check saw that the feed had not announced ([`Unannounced`]). The next read
    /// of the feed must list it, or the feed misses this page's changes and no longer covers
    /// it, unless the feed was blind for part of the span.
    pub unannounced: Option<Unannounced>,
    /// Changes checks saw that the feed never listed, judged at reads that could not tell
    /// (blind for part of the span), since the feed last listed one: a feed that overflows at
    /// every read could otherwise keep a page it never announces.
    pub unjudged: u32,
    /// Checks since it was covered whose change (or quiet) the feed had announced (or kept
    /// quiet about): a page waits for its feed only once the feed has proven itself for it.
    pub agreements: u32,
}

impl Coverage {
    /// Whether the feed has proven itself for the page ([`super::FEED_TRUST_CHECKS`]).
    pub fn proven(&self) -> bool {
        self.agreements >= super::FEED_TRUST_CHECKS
    }
}

/// A change a check saw that the feed had not announced when the check came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unannounced {
    /// The copy before (clock ms).
    pub from_ms: i64,
    /// The check (clock ms).
    pub to_ms: i64,
    /// Whether the check counted the change as evidence (over its span, or over the part of
    /// it no read had counted): then the change is counted already, whatever the feed's
    /// verdict.
    pub counted: bool,
}

/// What a URL's checks (and its feed's reads) taught, and what follows from them (a retry after
/// a failure or a deferral, the server's floor, a feed's part), boxed apart from its
/// [`UrlState`]: most known URLs have never been checked (a sitemap names millions that the
/// budget reaches over weeks), and those carry none of it. A URL whose checks only failed (a
/// host that is down) or were deferred holds one for its retry time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Evidence {
    /// The folded evidence of its checks (and feed events).
    pub stats: Stats,
    /// When the copy was taken (the last successful check).
    pub last_check_ms: MaybeMs,
    /// After a failed check, or a request put off: when to try again ([`UrlState::retry`]).
    retry_at_ms: MaybeMs,
    /// When it was last checked, whatever the check showed (stored as the row's last check).
    last_attempt_ms: MaybeMs,
    /// A change newer than the copy that is known (feed entry, sitemap `lastmod`): there is a
    /// copy, so there is evidence ([`UrlState::known_change_ms`]).
    known_change_ms: MaybeMs,
    /// The end of the last span its evidence counted (a check that counted, or a read of its
    /// feed while the feed covered it): a feed that starts covering it counts its silence only
    /// after this, not over time a check already counted.
    pub evidence_until_ms: MaybeMs,
    /// The last check that saw a change: (the copy before, the check). The next sitemap read
    /// must give the page a `lastmod` after that copy (see [`super::lastmod`]).
    pub change_to_confirm: MaybeSpan,
    /// The latest sitemap read that listed the page with a `lastmod` no newer than the copy
    /// (worth what the host's `lastmod`s have shown, see [`super::lastmod`]).
    pub lastmod_quiet_until_ms: MaybeMs,
    /// The feed that announces its changes and since when, for a page a feed covers (most
    /// pages have none, and carry no empty one).
    pub coverage: Option<Box<Coverage>>,
    /// For a feed: what it covers (none for a page). See [`UrlState::feed`].
    feed: Option<Box<FeedState>>,
    /// The server's floor on the interval, whole seconds ([`UrlState::min_interval_ms`]:
    /// Cache-Control max-age is given in seconds, and may be a year).
    min_interval_s: u32,
    /// Checks that failed since the last that did not ([`UrlState::failures`]).
    failures: u8,
    /// One of those failures was the URL's for certain ([`Seen::Failed`]), not only a check
    /// its host left unanswered while answering others (not stored: after a start, none).
    failed_for_certain: bool,
    /// Why its retry time is set, and whether an announced change may bring it forward.
    retry_cause: RetryCause,
    /// What announced a change since the copy, and the change events its feed counted, for its
    /// next check to judge ([`super::announcements`]).
    since_copy: SinceCopy,
}

/// Why a URL's retry time is set ([`UrlState::retry`]), and whether a change announced after its
/// last check may bring it forward ([`super::Scheduler::recall_failed`]): once in each step of
/// its back-off, so that a sitemap stamping every `lastmod` with the time it is read, or a feed
/// re-dating its entries, sends a dead page at most twice as often as its back-off would.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RetryCause {
    /// A check that gave no copy: an announced change may bring it forward.
    #[default]
    Failure,
    /// An announced change brought it forward: its check is the step's one early retry.
    Recalled,
    /// The early retry failed too: the retry after it waits out its back-off.
    RecallSpent,
    /// Put back from the store, which does not keep whether the step's early retry was
    /// spent: an announcement brings it forward, but no sooner than halfway between its last
    /// check and its retry (so restarts, or a `--once` pass at each cron tick, send a dead
    /// page at most twice in each step too).
    Restored,
    /// A request put off (a fetch window, robots.txt out of reach, a host another worker
    /// holds): a time that is not the URL's, which no announcement moves.
    PutOff,
}

/// The evidence of a URL that has none.
static NO_EVIDENCE: Evidence = Evidence {
    stats: Stats {
        events: 0.0,
        exposure_days: 0.0,
        changed_intervals: Vec::new(),
    },
    last_check_ms: MaybeMs::NONE,
    retry_at_ms: MaybeMs::NONE,
    last_attempt_ms: MaybeMs::NONE,
    known_change_ms: MaybeMs::NONE,
    evidence_until_ms: MaybeMs::NONE,
    change_to_confirm: MaybeSpan::NONE,
    lastmod_quiet_until_ms: MaybeMs::NONE,
    coverage: None,
    feed: None,
    min_interval_s: 0,
    failures: 0,
    failed_for_certain: false,
    retry_cause: RetryCause::Failure,
    since_copy: SinceCopy::NONE,
};

/// One URL: what every plan reads, and the box of its [`Evidence`] once it has some.
#[derive(Debug, Clone)]
pub struct UrlState {
    /// Its site and host, 32 bits each ([`UrlState::site`], [`UrlState::host`]).
    site_key: u32,
    host_key: u32,
    /// Importance within the site ([`UrlState::weight`]; single precision: a weight is a
    /// share, and every known URL holds one).
    weight_share: f32,
    /// Its group's population in its site's ([`super::groups`]), or [`super::groups::NO_GROUP`].
    pub group: u32,
    /// Nutch's adaptive interval (the nutch policy only; single precision, held by every URL);
    /// 0 until its first check ([`UrlState::nutch_interval_days`]).
    nutch_interval: f32,
    pub kind: UrlKind,
    /// A request is in flight.
    pub in_flight: bool,
    /// Out of the frontier (disallowed, gone, out of the schedule).
    pub retired: bool,
    /// Its section ([`super::section_of`]).
    pub section: u64,
    pub changefreq_per_day: MaybeRate,
    pub true_rate: MaybeRate,
    /// Planned visits per day, once a plan has given it some ([`UrlState::planned_per_day`]).
    planned_per_day: f64,
    /// No plan has given it a rate yet: until one does, it is planned at its site's share of the
    /// budget as the site stands ([`Scheduler::planned_rate`](super::Scheduler::planned_rate)).
    awaiting_plan: bool,
    /// What its checks taught ([`UrlState::evidence`]), none before the first.
    evidence: Option<Box<Evidence>>,
}

impl UrlState {
    /// A new URL, awaiting a plan (Nutch's interval not started: see
    /// [`UrlState::nutch_interval_days`]).
    pub fn new(url: NewUrl) -> Self {
        let mut state = Self {
            site_key: u32::try_from(url.site).expect("fewer than 2^32 sites"),
            host_key: u32::try_from(url.host).expect("fewer than 2^32 hosts"),
            weight_share: url.weight as f32,
            group: super::groups::NO_GROUP,
            nutch_interval: 0.0,
            kind: url.kind,
            in_flight: false,
            retired: false,
            section: url.section,
            changefreq_per_day: url.changefreq_per_day.into(),
            true_rate: url.true_rate.into(),
            planned_per_day: 0.0,
            awaiting_plan: true,
            evidence: None,
        };
        if url.kind == UrlKind::Feed {
            state.evidence_mut().feed = Some(Box::default());
        }
        state
    }

    /// What its checks taught (an empty one before the first).
    pub fn evidence(&self) -> &Evidence {
        self.evidence.as_deref().unwrap_or(&NO_EVIDENCE)
    }

    /// Its checks that failed in a row, up to the last (0 when the last that was not
    /// [`Seen::Inconclusive`] did not fail).
    pub fn failures(&self) -> u8 {
        self.evidence().failures
    }

    /// When it is to be tried again, and why (`None`: on its plan).
    pub fn retry(&self) -> Option<(i64, RetryCause)> {
        let e = self.evidence();
        e.retry_at_ms.get().map(|at| (at, e.retry_cause))
    }

    /// Sets when it is to be tried again and why (`None`: on its plan again).
    pub fn set_retry(&mut self, retry: Option<(i64, RetryCause)>) {
        let e = self.evidence_mut();
        e.retry_at_ms = retry.map(|(at, _)| at).into();
        e.retry_cause = retry.map_or(RetryCause::Failure, |(_, cause)| cause);
    }

    /// When it was last checked, whatever the check showed (the store keeps it).
    pub fn last_attempt_ms(&self) -> Option<i64> {
        self.evidence().last_attempt_ms.get()
    }

    /// It was checked at `at_ms`.
    pub fn set_last_attempt_ms(&mut self, at_ms: i64) {
        self.evidence_mut().last_attempt_ms = Some(at_ms).into();
    }

    /// Its checks that failed in a row, as the store kept them ([`super::Scheduler::restore`]).
    pub fn set_failures(&mut self, failures: u8) {
        self.evidence_mut().failures = failures;
    }

    /// One more check that failed (`for_certain`: a [`Seen::Failed`] one).
    pub fn add_failure(&mut self, for_certain: bool) {
        let e = self.evidence_mut();
        e.failures = e.failures.saturating_add(1);
        e.failed_for_certain |= for_certain;
    }

    /// Whether a failure of its current run was the URL's for certain ([`Seen::Failed`]).
    pub fn failed_for_certain(&self) -> bool {
        self.evidence().failed_for_certain
    }

    /// What its checks taught, made if it had none.
    pub fn evidence_mut(&mut self) -> &mut Evidence {
        self.evidence.get_or_insert_with(Box::default)
    }

    /// Whether it holds evidence of its own (a box of it).
    #[cfg(test)]
    pub fn has_evidence(&self) -> bool {
        self.evidence.is_some()
    }

    /// The folded evidence of its checks.
    pub fn stats(&self) -> &Stats {
        &self.evidence().stats
    }

    /// When its copy was taken.
    pub fn last_check_ms(&self) -> Option<i64> {
        self.evidence().last_check_ms.get()
    }

    /// A change newer than the copy that is known (feed entry, sitemap `lastmod`).
    pub fn known_change_ms(&self) -> Option<i64> {
        self.evidence().known_change_ms.get()
    }

    /// Sets the known change (a URL with no evidence is given none for "none").
    pub fn set_known_change_ms(&mut self, at_ms: Option<i64>) {
        if at_ms.is_some() || self.evidence.is_some() {
            self.evidence_mut().known_change_ms = at_ms.into();
        }
    }

    /// A change since the copy was announced by `kind` ([`super::announcements`]).
    pub fn note_announcement(&mut self, kind: Announcer) {
        let e = self.evidence_mut();
        e.since_copy = e.since_copy.with(kind);
    }

    /// Its feed counted a change event since the copy.
    pub fn note_feed_event(&mut self) {
        let e = self.evidence_mut();
        e.since_copy = e.since_copy.with_feed_event();
    }

    /// A feed's read left the span since the last check to the next one.
    pub fn leave_span_to_check(&mut self) {
        let e = self.evidence_mut();
        e.since_copy = e.since_copy.with_span_left_to_check();
    }

    /// What was announced and counted since the copy.
    pub fn since_copy(&self) -> SinceCopy {
        self.evidence().since_copy
    }

    /// What was announced and counted since the copy, forgotten: a check judges it.
    pub fn take_since_copy(&mut self) -> SinceCopy {
        match self.evidence.as_deref_mut() {
            Some(e) => std::mem::take(&mut e.since_copy),
            None => SinceCopy::NONE,
        }
    }

    /// Nutch's adaptive interval, days; `None` before its first check, while the interval is
    /// its site's even share of the budget as the site stands
    /// ([`super::Scheduler::nutch_interval_days`]), the same for every such URL whatever order
    /// they were found in (a URL found after others were checked starts at the share then).
    pub fn nutch_interval_days(&self) -> Option<f64> {
        (self.nutch_interval > 0.0).then_some(f64::from(self.nutch_interval))
    }

    /// Starts Nutch's interval at `days` (at its first check: the site's even share then).
    pub fn start_nutch_interval(&mut self, days: f64) {
        self.nutch_interval = days as f32;
    }

    /// Its site.
    pub fn site(&self) -> SiteKey {
        self.site_key as SiteKey
    }

    /// Its host.
    pub fn host(&self) -> HostKey {
        self.host_key as HostKey
    }

    /// Its importance within the site.
    pub fn weight(&self) -> f64 {
        f64::from(self.weight_share)
    }

    /// Sets its importance within the site; whether that changed it (as it is held).
    pub fn set_weight(&mut self, weight: f64) -> bool {
        let held = weight as f32;
        let changed = held != self.weight_share;
        self.weight_share = held;
        changed
    }

    /// The floor on its interval, ms (0: none): the server's, and for a feed its latest
    /// document's `ttl` ([`FeedShown::ttl_ms`](super::FeedShown::ttl_ms)), whichever is longer.
    pub fn min_interval_ms(&self) -> i64 {
        let server = i64::from(self.evidence().min_interval_s) * 1_000;
        let ttl = self.evidence().feed.as_deref().and_then(|f| f.shown.ttl_ms);
        server.max(ttl.unwrap_or(0))
    }

    /// Sets the server's floor on its interval (rounded up to a second; 0 or less: none).
    pub fn set_min_interval_ms(&mut self, ms: i64) {
        let seconds = ms.max(0).saturating_add(999) / 1_000;
        let seconds = u32::try_from(seconds).unwrap_or(u32::MAX);
        if seconds != self.evidence().min_interval_s {
            self.evidence_mut().min_interval_s = seconds;
        }
    }

    /// The feed that covers it, if any.
    pub fn covered_by(&self) -> Option<UrlKey> {
        self.evidence().coverage.as_ref().map(|c| c.feed)
    }

    /// Its feed part (an empty one for a page).
    pub fn feed(&self) -> &FeedState {
        self.evidence().feed.as_deref().unwrap_or(&NO_FEED)
    }

    /// Its feed part, made if it had none (a feed's is made with it).
    pub fn feed_mut(&mut self) -> &mut FeedState {
        debug_assert_eq!(self.kind, UrlKind::Feed, "a page has no feed part");
        self.evidence_mut().feed.get_or_insert_with(Box::default)
    }

    /// The visits a day a plan gave it (`None` before any plan has).
    pub fn planned_per_day(&self) -> Option<f64> {
        (!self.awaiting_plan).then_some(self.planned_per_day)
    }

    /// Sets the visits a day its plan gives it.
    pub fn set_planned_per_day(&mut self, per_day: f64) {
        self.planned_per_day = per_day;
        self.awaiting_plan = false;
    }

    /// Folds one check in. A check over time a feed's read counted already counts only the
    /// rest (`feed_counted`); a check that saw a change the feed has not announced yet is judged
    /// at the next read (see [`Coverage::unannounced`]).
    pub fn observe(
        &mut self,
        fetched: &Fetched,
        trust_last_modified: bool,
        kind: PolicyKind,
        feed_counted: Option<FeedCounted>,
    ) {
        let at = fetched.at_ms;
        let changed = match fetched.seen {
            Seen::Failed | Seen::Unanswered | Seen::Inconclusive => return,
            Seen::Copy => None,
            Seen::Changed => Some(true),
            Seen::Unchanged => Some(false),
        };
        let known_change = self.known_change_ms();
        if let (PolicyKind::Nutch, Some(c), Some(interval)) =
            (kind, changed, self.nutch_interval_days())
        {
            self.nutch_interval = policy::nutch_interval(interval, c) as f32;
        }
        let e = self.evidence_mut();
        e.known_change_ms = MaybeMs::NONE;
        e.retry_at_ms = MaybeMs::NONE;
        e.retry_cause = RetryCause::Failure;
        e.failures = 0;
        e.failed_for_certain = false;
        let last = e.last_check_ms.get();
        if let (Some(coverage), Some(changed)) = (e.coverage.as_deref_mut(), changed) {
            match (changed, known_change, last) {
                // Not a disagreement yet: the check may simply have come before the feed was
                // read. The next read must list it (see `Scheduler::handle_feed`).
                (true, None, Some(last)) => {
                    coverage.unannounced = Some(Unannounced {
                        from_ms: last,
                        to_ms: at,
                        counted: feed_counted.is_none_or(|f| f.counts_change(at)),
                    })
                }
                (true, Some(_), _) | (false, None, _) => coverage.agreements += 1,
                _ => coverage.agreements = 0,
            }
        }
        // A feed's own reads count too: they are what its row reports (a feed that changed at
        // 60 of 61 reads read as its site's prior, 0.77 a day, with nothing of its own).
        // Nothing plans by them: a feed is priced by the pages it covers.
        match (feed_counted, last, changed) {
            (None, Some(last), Some(_)) => {
                let interval = (at - last) as f64 / MS_PER_DAY;
                let lm_age = fetched
                    .last_modified_ms
                    .filter(|_| trust_last_modified)
                    .map(|lm| (at - lm) as f64 / MS_PER_DAY);
                e.stats.add_check(interval, changed, lm_age);
                e.evidence_until_ms = Some(at).into();
            }
            // A read counted the span up to `until`: the check counts the rest, where the
            // change it saw lies unless the feed listed one in the span.
            (Some(counted), Some(_), Some(changed)) if counted.until_ms < at && !counted.blind => {
                let rest = (at - counted.until_ms) as f64 / MS_PER_DAY;
                if !changed {
                    e.stats.add_exact(0.0, rest);
                } else if counted.counts_change(at) {
                    e.stats.add_changed(rest, 1.0);
                }
                e.evidence_until_ms = Some(at).into();
            }
            _ => {}
        }
        if let (Some(true), Some(last)) = (changed, last) {
            e.change_to_confirm = Some((last, at)).into();
        }
        e.last_check_ms = Some(at).into();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_never_checked_carries_no_evidence() {
        // Every known URL holds one of these in memory (`Scheduler::urls`): what only checked
        // pages and feeds' pages need is boxed, so the many URLs never checked do not carry it.
        // (312 bytes when a page carried its feed coverage inline, 256 while its instants and
        // rates were `Option`s of 16 bytes each, 192 with `usize` site and host, an `f64`
        // weight and its server floor in ms, 176 with the evidence inline.)
        let size = std::mem::size_of::<UrlState>();
        assert!(size <= 64, "UrlState is {size} bytes");
        assert_eq!(std::mem::size_of::<Option<Box<Coverage>>>(), 8);
        // Every checked URL's box: 120 bytes before its last attempt was kept (the failure
        // rules), whose flags and retry cause fit beside its count of failures.
        let evidence = std::mem::size_of::<Evidence>();
        assert!(evidence <= 128, "Evidence is {evidence} bytes");
        let url = NewUrl {
            site: 0,
            host: 0,
            kind: UrlKind::Page,
            weight: 1.0,
            changefreq_per_day: Some(1.0),
            true_rate: None,
            section: 0,
        };
        let mut page = UrlState::new(url.clone());
        assert!(!page.has_evidence());
        page.set_min_interval_ms(0);
        assert!(!page.has_evidence(), "a floor of none is no evidence");
        let failed = Fetched::at(1_000, Seen::Failed);
        page.observe(&failed, false, PolicyKind::Learned, None);
        assert!(!page.has_evidence(), "a failed check takes no copy");
        let copy = Fetched::at(2_000, Seen::Copy);
        page.observe(&copy, false, PolicyKind::Learned, None);
        assert_eq!(page.last_check_ms(), Some(2_000));
        let feed = UrlState::new(NewUrl {
            kind: UrlKind::Feed,
            ..url
        });
        assert!(feed.has_evidence(), "a feed's part is made with it");
    }
}
