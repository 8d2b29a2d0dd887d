//! Whether a host's announced changes are borne out by the checks they send (pure state and
//! the scheduler's handling of an announcement).
//!
//! A feed entry dated after a page's copy, or a sitemap `lastmod` newer than it, announces that
//! the copy is stale: the page is *known* changed and goes soon
//! ([`crate::plan::known_change_delay_days`]), and a feed's entries count as the page's change
//! events. Some hosts announce what did not happen: feeds generated on request re-date every
//! entry with the time of the read, and sitemaps stamp every `lastmod` with it. Believed,
//! such a host had a page that never changed fetched at every read of its feed or sitemap,
//! and its feed's entries held the page's rate at the rate of the reads (12.8 a day for a
//! page that changed never, in `tests::announcements`); the plan then spent the site's
//! budget on those pages, and the pages that did change were starved (69 requests against
//! 639 with an honest sitemap).
//!
//! So each announcement is judged by the check it comes before. A check that finds the copy
//! unchanged is a *false alarm* of the announcing kind (the host's feeds, or its sitemap's
//! `lastmod`s); one that finds it changed bears it out (a check that could not compare,
//! [`super::Seen::Copy`], judges nothing). A page that changes `λ` a day, checked `s` days
//! after its copy, would have been found unchanged with chance `q = e^{-λs}` had the
//! announcement been false, so each judgement weighs `q` ([`Claims::judge`]): with a share `p`
//! of the announcements true, the false alarms come to `(1 - p) q` a judgement on average,
//! and the false alarms over the summed weights estimate `1 - p` whatever the pages' rates (a
//! feed re-dating pages that change hourly is not taken for honest because they keep
//! changing, nor an honest one for a liar because its pages rarely do).
//!
//! A host's announcements of one kind are believed until [`MIN_FALSE_ALARMS`] false alarms
//! are more than [`FALSE_ALARM_TOLERANCE`] of the judgements' weight ([`Claims::believed`]):
//! an honest feed dated a little after the change it lists, with a check between, or a change
//! the content's fingerprint does not see, costs one now and then. Until [`ON_PROBATION`] of
//! them have been judged, only that many are acted on ([`Claims::may_act`]), and the store
//! records none as a known change ([`Claims::proven`]): a stamping sitemap's first read made
//! every page it lists due at once (200 of them in an adversary's run); now the first read
//! costs two checks a host, and the announcements held back wait for their plan. While not
//! believed, an
//! announcement is only noted: the page stays on its plan, its feed does not count it as a
//! change or cover the page, a failing page is not brought back for it, and the check its
//! plan sends judges it all the same, so a host that mends its feed is believed again. A
//! change marked known before the host lost belief is not acted on either
//! ([`Scheduler::acted_known_change`]). Belief is kept per host, not per feed, and stored with
//! the host's validator trust. A feed that stamps its entries with the time of the read is
//! caught before any of this, by its dates ([`super::feeds::STAMPING_READS`]): its entries
//! announce nothing, so they raise no false alarms against an honest feed of its host.

use super::{HostKey, Scheduler, Seen, UrlKey, UrlKind};

/// False alarms a host may raise before its share of them is weighed: one is forgiven.
pub const MIN_FALSE_ALARMS: u32 = 2;

/// The share of its judged announcements a believed host's false alarms may be.
pub const FALSE_ALARM_TOLERANCE: f64 = 0.25;

/// Announcements of a kind a host has before its first judgements: only this many are acted
/// on until this many have been judged.
pub const ON_PROBATION: u32 = 2;

/// One kind of a host's announcements of changes (its feeds' entries, its sitemap's
/// `lastmod`s), as the checks after them showed.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Claims {
    /// The judgements' summed weights: each the chance its check would have found the page
    /// unchanged had nothing changed ([`Claims::judge`]).
    pub weight: f64,
    /// Checks that found the page unchanged.
    pub false_alarms: u32,
    /// Checks that judged an announcement.
    pub judged: u32,
    /// Announcements acted on before [`ON_PROBATION`] had been judged.
    pub acted_on_probation: u32,
}

impl Claims {
    /// A check after an announcement found the page `changed`; `unchanged_anyway` is the
    /// chance it would have found it unchanged had the announcement been false (`e^{-λs}`).
    pub fn judge(&mut self, changed: bool, unchanged_anyway: f64) {
        self.judged = self.judged.saturating_add(1);
        self.weight += unchanged_anyway.clamp(0.0, 1.0);
        if !changed {
            self.false_alarms = self.false_alarms.saturating_add(1);
        }
    }

    /// Whether announcements of this kind are acted on (see the module docs).
    pub fn believed(&self) -> bool {
        self.false_alarms < MIN_FALSE_ALARMS
            || f64::from(self.false_alarms) <= FALSE_ALARM_TOLERANCE * self.weight
    }

    /// Whether they are believed and have been judged enough to be recorded as known changes.
    pub fn proven(&self) -> bool {
        self.believed() && self.judged >= ON_PROBATION
    }

    /// Whether the next one may be acted on: believed, and proven or one of the first few.
    pub fn may_act(&self) -> bool {
        self.believed() && (self.judged >= ON_PROBATION || self.acted_on_probation < ON_PROBATION)
    }

    /// One is acted on.
    pub fn act(&mut self) {
        if self.judged < ON_PROBATION {
            self.acted_on_probation = self.acted_on_probation.saturating_add(1);
        }
    }
}

/// What a host's announcements of each kind have shown: kept with the host's validator trust
/// in the store, so that a restart, or a `--once` pass at each cron tick, does not believe a
/// stamping sitemap again until it has sent a couple of pages for nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct HostClaims {
    /// Its feeds' entries.
    pub feed: Claims,
    /// Its sitemaps' `lastmod`s.
    pub lastmod: Claims,
}

/// What announces a change of a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Announcer {
    /// A feed entry dated after the copy.
    Feed,
    /// A sitemap `lastmod` newer than the copy.
    Sitemap,
}

impl Announcer {
    const BOTH: [Announcer; 2] = [Announcer::Feed, Announcer::Sitemap];

    fn bit(self) -> u8 {
        match self {
            Announcer::Feed => 1,
            Announcer::Sitemap => 2,
        }
    }
}

/// What announced a change of a page since its copy was taken, whether a feed's read left the
/// span to the next check, and how many change events its feed counted meanwhile (up to 31),
/// in one byte of its evidence: its next check that gets a copy judges the announcements, one
/// that finds the copy unchanged takes those events back (and counts its whole span), and a
/// span left to the check is counted by it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SinceCopy(u8);

impl SinceCopy {
    /// Nothing announced, nothing counted.
    pub const NONE: SinceCopy = SinceCopy(0);
    const KINDS: u8 = 0b11;
    const LEFT_TO_CHECK: u8 = 0b100;
    const EVENTS_SHIFT: u8 = 3;

    /// Whether a feed's read left the page's span to its next check: it listed the page at
    /// the read's own time ([`super::feeds::READ_STAMP_SLACK_MS`]), and later reads count
    /// nothing of the page until that check.
    pub fn left_to_check(self) -> bool {
        self.0 & Self::LEFT_TO_CHECK != 0
    }

    /// With the span left to the next check.
    pub fn with_span_left_to_check(self) -> SinceCopy {
        SinceCopy(self.0 | Self::LEFT_TO_CHECK)
    }

    /// Whether `kind` announced a change.
    pub fn announced_by(self, kind: Announcer) -> bool {
        self.0 & kind.bit() != 0
    }

    /// Whether anything announced a change.
    pub fn announced(self) -> bool {
        self.0 & Self::KINDS != 0
    }

    /// With `kind` among the announcers.
    pub fn with(self, kind: Announcer) -> SinceCopy {
        SinceCopy(self.0 | kind.bit())
    }

    /// The change events its feed counted.
    pub fn feed_events(self) -> u8 {
        self.0 >> Self::EVENTS_SHIFT
    }

    /// With one more change event counted by its feed.
    pub fn with_feed_event(self) -> SinceCopy {
        let events = (self.feed_events() + 1).min(u8::MAX >> Self::EVENTS_SHIFT);
        let flags = self.0 & (Self::KINDS | Self::LEFT_TO_CHECK);
        SinceCopy(flags | (events << Self::EVENTS_SHIFT))
    }
}

impl Scheduler {
    /// A known change of `url` at `at_ms` the store holds (a feed entry or a sitemap `lastmod`
    /// it recorded while the host's announcements of that kind were believed): the copy is
    /// known stale, and the page goes when waiting would cost more than a visit
    /// ([`crate::plan::known_change_delay_days`]). A URL whose last check failed is tried again
    /// at once when the change is newer than that check ([`Scheduler::recall_failed`]). The
    /// announcement itself is judged where it is read ([`Scheduler::handle_sitemap_listing`],
    /// [`Scheduler::handle_feed_read`]).
    pub fn handle_known_change(&mut self, now_ms: i64, url: UrlKey, at_ms: i64) {
        self.recall_failed(now_ms, url, at_ms);
        self.mark_known(now_ms, url, at_ms);
    }

    /// Whether `host`'s feed entries dated after a copy are taken as its page's changes.
    pub fn believes_feed_entries(&self, host: HostKey) -> bool {
        self.claims(host, Announcer::Feed).believed()
    }

    /// Whether the store records `host`'s feed entries dated after a copy as known changes:
    /// believed and past their probation.
    pub fn records_feed_entries(&self, host: HostKey) -> bool {
        self.claims(host, Announcer::Feed).proven()
    }

    /// Whether the store records `host`'s sitemap `lastmod`s newer than a copy as known
    /// changes: believed and past their probation.
    pub fn records_newer_lastmods(&self, host: HostKey) -> bool {
        self.claims(host, Announcer::Sitemap).proven()
    }

    /// What `host`'s announcements have shown, to be stored.
    pub fn host_claims(&self, host: HostKey) -> HostClaims {
        let host = &self.hosts[host];
        HostClaims {
            feed: host.feed_claims,
            lastmod: host.lastmod.claims,
        }
    }

    /// Puts back what `host`'s announcements had shown (a start).
    pub fn set_host_claims(&mut self, host: HostKey, claims: HostClaims) {
        let host = &mut self.hosts[host];
        host.feed_claims = claims.feed;
        host.lastmod.claims = claims.lastmod;
    }

    /// Notes an announcement by `kind` that `url` changed at `at_ms`, to be judged by its next
    /// check, if that is after its copy; returns whether it is to be acted on (its host's
    /// announcements of that kind are believed, and proven or among the first few).
    pub(super) fn announce(&mut self, url: UrlKey, at_ms: i64, kind: Announcer) -> bool {
        let u = &mut self.urls[url];
        if u.last_check_ms().is_none_or(|last| at_ms <= last) {
            return false;
        }
        // (A feed a sitemap lists is read on its own terms, not judged as a page.)
        if u.kind != UrlKind::Page {
            return true;
        }
        u.note_announcement(kind);
        let host = u.host();
        let claims = self.claims_mut(host, kind);
        let act = claims.may_act();
        if act {
            claims.act();
        }
        act
    }

    fn claims(&self, host: HostKey, kind: Announcer) -> &Claims {
        let host = &self.hosts[host];
        match kind {
            Announcer::Feed => &host.feed_claims,
            Announcer::Sitemap => &host.lastmod.claims,
        }
    }

    fn claims_mut(&mut self, host: HostKey, kind: Announcer) -> &mut Claims {
        let host = &mut self.hosts[host];
        match kind {
            Announcer::Feed => &mut host.feed_claims,
            Announcer::Sitemap => &mut host.lastmod.claims,
        }
    }

    /// The known change of `url` that its schedule acts on: none when what announced it since
    /// the copy is no longer believed (it was marked before its host's announcements of that
    /// kind proved false alarms). A change put back from the store stands.
    pub(super) fn acted_known_change(&self, url: UrlKey) -> Option<i64> {
        let u = &self.urls[url];
        let known = u.known_change_ms()?;
        let since_copy = u.since_copy();
        let believed = !since_copy.announced()
            || Announcer::BOTH.iter().any(|&kind| {
                since_copy.announced_by(kind) && self.claims(u.host(), kind).believed()
            });
        believed.then_some(known)
    }

    /// A check of `url` at `at_ms` left a copy, and saw `seen`: judges the announcements made
    /// since the last copy (before the check is folded into its evidence), and takes back the
    /// change events its feed counted meanwhile if the copy is unchanged. Returns whether it
    /// took any back: the check then counts its span itself.
    pub(super) fn judge_announcements(&mut self, url: UrlKey, at_ms: i64, seen: Seen) -> bool {
        // A check that got no copy leaves all of it for the next (a span left to the check
        // stays so: a read after it would count the silence where the change lies).
        if !seen.got_copy() {
            return false;
        }
        let since_copy = self.urls[url].take_since_copy();
        let changed = match seen {
            Seen::Changed => true,
            Seen::Unchanged => false,
            _ => return false, // nothing to compare: nothing judged
        };
        let Some(last) = self.urls[url].last_check_ms() else {
            return false;
        };
        let taken_back = !changed && since_copy.feed_events() > 0;
        if taken_back {
            let stats = &mut self.urls[url].evidence_mut().stats;
            stats.events = (stats.events - f64::from(since_copy.feed_events())).max(0.0);
        }
        if since_copy.announced() {
            let rate = self.full_posterior(url).mean();
            let days = (at_ms - last).max(0) as f64 / crate::clock::MS_PER_DAY;
            let unchanged_anyway = (-rate * days).exp();
            let host = self.urls[url].host();
            for kind in Announcer::BOTH {
                if since_copy.announced_by(kind) {
                    self.claims_mut(host, kind).judge(changed, unchanged_anyway);
                }
            }
        }
        taken_back
    }

    /// The copy of `page` is known stale since `at_ms`: it goes when waiting would cost more
    /// than a visit ([`Scheduler::schedule`]).
    pub(super) fn mark_known(&mut self, now_ms: i64, page: UrlKey, at_ms: i64) {
        let u = &mut self.urls[page];
        if u.last_check_ms().is_some_and(|last| at_ms > last) && u.known_change_ms().is_none() {
            u.set_known_change_ms(Some(at_ms));
            if !u.in_flight && !u.retired {
                self.schedule(page, now_ms);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_false_alarm_is_forgiven_and_a_second_is_weighed() {
        let mut claims = Claims::default();
        claims.judge(false, 1.0);
        assert!(claims.believed(), "{claims:?}");
        claims.judge(false, 1.0);
        assert!(!claims.believed(), "{claims:?}");
        // Six checks that could only have found a change because one was made.
        for _ in 0..6 {
            claims.judge(true, 1.0);
        }
        assert!(claims.believed(), "{claims:?}");
    }

    #[test]
    fn the_first_announcements_are_acted_on_two_at_a_time_until_two_are_judged() {
        let mut claims = Claims::default();
        for _ in 0..ON_PROBATION {
            assert!(claims.may_act() && !claims.proven());
            claims.act();
        }
        assert!(!claims.may_act(), "{claims:?}");
        claims.judge(true, 1.0);
        assert!(!claims.may_act() && !claims.proven(), "{claims:?}");
        claims.judge(true, 1.0);
        assert!(claims.may_act() && claims.proven(), "{claims:?}");
    }

    #[test]
    fn a_change_the_page_would_have_made_anyway_bears_out_little() {
        let mut claims = Claims::default();
        for _ in 0..2 {
            claims.judge(false, 1.0);
        }
        // Changes of a page that changes every hour, checked a day after its copy.
        for _ in 0..100 {
            claims.judge(true, (-24.0f64).exp());
        }
        assert!(!claims.believed(), "{claims:?}");
    }

    /// Half the announcements false, on pages that would have been found unchanged anyway
    /// with chance one half: the false alarms are about half the weight, and the host is not
    /// believed (counting the changes found as the announcements borne out, 1 in 3 of the
    /// judgements were false alarms, and it was).
    #[test]
    fn the_false_alarms_over_the_weight_estimate_the_share_of_false_announcements() {
        let mut claims = Claims::default();
        // Of 8 announcements, 4 true (found changed) and 4 false, of which half found changed
        // anyway.
        for changed in [true, true, true, true, true, true, false, false] {
            claims.judge(changed, 0.5);
        }
        assert_eq!(claims.false_alarms, 2);
        assert!((claims.weight - 4.0).abs() < 1e-12);
        assert!(!claims.believed(), "{claims:?}");
    }

    #[test]
    fn a_byte_holds_the_announcers_a_span_left_to_check_and_up_to_31_feed_events() {
        let mut since = SinceCopy::NONE.with(Announcer::Sitemap);
        for _ in 0..100 {
            since = since.with_feed_event();
        }
        since = since.with(Announcer::Feed);
        assert_eq!(since.feed_events(), 31);
        assert!(since.announced_by(Announcer::Feed) && since.announced_by(Announcer::Sitemap));
        assert!(!since.left_to_check());
        let left = since.with_span_left_to_check().with_feed_event();
        assert!(left.left_to_check() && left.announced_by(Announcer::Feed));
        assert_eq!(left.feed_events(), 31);
        let only_feed = SinceCopy::NONE.with(Announcer::Feed).with_feed_event();
        assert!(!only_feed.announced_by(Announcer::Sitemap));
        assert_eq!(only_feed.feed_events(), 1);
        assert!(!SinceCopy::NONE.with_feed_event().announced());
    }
}
