//! What a sitemap's `lastmod` says of a copy, and whether a host's `lastmod` has earned belief.
//!
//! A sitemap read at `R` that lists a page with a `lastmod` newer than the copy says the copy is
//! stale ([`super::Scheduler::handle_known_change`]). One that lists it with a `lastmod` no newer
//! than the copy says the page did not change between the copy and `R` as far as the sitemap
//! shows changes. Stale or made-up `lastmod`s are common (a sitemap generated once, or stamped
//! with the build time), so how far it does is learnt from the host's own pages: a check that saw
//! a page change between two copies expects the next read of the sitemap to give it a `lastmod`
//! after the earlier copy. That is an agreement; a `lastmod` no newer is a disagreement. A host is
//! believed after [`LASTMOD_AGREEMENTS`] agreements while its disagreements stay under
//! [`LASTMOD_TOLERANCE`] of its judgements: its sitemap's silence then watches the span as a
//! quiet feed does ([`super::Scheduler::watched`]), and its reads are priced in the plan.
//!
//! Before that, the silence is worth the share `q` of changes the sitemap has shown (the mean of
//! a uniform prior updated by the judgements, [`LastmodTrust::shown_share`]): the changes it
//! does not show are a Poisson process of rate `(1 - q)λ`, so a quiet span of length `w` leaves
//! `(1 - q)w` of it unseen, spread over the span ([`crate::estimate::CopyKnowledge::staleness`];
//! the one span stored for the reports, [`super::Scheduler::watched`], counts that time at its
//! front: P(stale) exact for a given λ, the expected age slightly over). The estimate
//! then agrees with what the refresher does, which acts on any newer `lastmod` at once: on a
//! host that has not yet earned belief (pages that rarely change give few judgements), a change
//! its sitemap shows is fetched soon after the read, and an estimate that ignored the
//! sitemap's silence held those copies older than they were (the demo's `live` and `docs`
//! hosts, 1.5 to 4 times). The uniform prior gives an unjudged host one half: generous where
//! stale `lastmod`s are common, but a host's first few judgements move it quickly (one in five
//! after three misses). `q` is the host's, not a coin per change; taking its mean where the
//! staleness is concave in it errs towards older copies.

use super::announcements::{Announcer, Claims};
use super::{Scheduler, UrlKey};

/// Agreements before a host's `lastmod` is believed.
pub const LASTMOD_AGREEMENTS: u32 = 3;

/// The share of judgements that may disagree on a believed host (a sitemap regenerated a little
/// after the change it should show).
pub const LASTMOD_TOLERANCE: f64 = 0.1;

/// What a host's sitemap `lastmod`s have shown so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LastmodTrust {
    /// Reads that showed a change a check had seen.
    pub agreements: u32,
    /// Reads that did not.
    pub disagreements: u32,
    /// What the checks after a newer `lastmod` found: a sitemap that stamps every `lastmod`
    /// with the time it is read agrees with every change, and announces as many that never
    /// came ([`super::announcements`]).
    pub claims: Claims,
}

impl LastmodTrust {
    /// Whether the host's `lastmod`s are believed: they show its pages' changes and few that
    /// did not happen.
    pub fn believed(&self) -> bool {
        let judged = f64::from(self.agreements + self.disagreements);
        self.claims.believed()
            && self.agreements >= LASTMOD_AGREEMENTS
            && f64::from(self.disagreements) <= LASTMOD_TOLERANCE * judged
    }

    /// The share of a page's changes the host's sitemap is taken to show: all on a believed
    /// host, else the posterior mean `(a + 1) / (a + d + 2)` of a uniform prior (one half before
    /// any judgement, falling towards 0 on a stale sitemap).
    pub fn shown_share(&self) -> f64 {
        if self.believed() {
            return 1.0;
        }
        let (a, d) = (f64::from(self.agreements), f64::from(self.disagreements));
        (a + 1.0) / (a + d + 2.0)
    }
}

impl Scheduler {
    /// A sitemap read at `read_ms` listed `url` with `lastmod_ms` (or none): judges the host's
    /// `lastmod` against a change a check saw, and extends the span over which the sitemap kept
    /// quiet since the copy. A newer `lastmod` announces a change, for the page's next check to
    /// judge, and makes the copy known stale if the host's newer `lastmod`s are believed
    /// ([`super::announcements`]).
    pub fn handle_sitemap_listing(&mut self, url: UrlKey, read_ms: i64, lastmod_ms: Option<i64>) {
        let Some(lastmod) = lastmod_ms else {
            return;
        };
        let host = self.urls[url].host();
        if let Some((before, seen)) = self.urls[url].evidence().change_to_confirm.get()
            && read_ms > seen
        {
            self.urls[url].evidence_mut().change_to_confirm = super::compact::MaybeSpan::NONE;
            let trust = &mut self.hosts[host].lastmod;
            if lastmod > before {
                trust.agreements += 1;
            } else {
                trust.disagreements += 1;
            }
        }
        // (A page with a copy has evidence: only those are written to.)
        if self.urls[url]
            .last_check_ms()
            .is_some_and(|taken| lastmod <= taken && read_ms > taken)
        {
            let e = self.urls[url].evidence_mut();
            e.lastmod_quiet_until_ms = e.lastmod_quiet_until_ms.get().max(Some(read_ms)).into();
        }
        if self.announce(url, lastmod, Announcer::Sitemap) {
            // (The store records it as a known change only once the host's are proven.)
            self.recall_failed(read_ms, url, lastmod);
            self.mark_known(read_ms, url, lastmod);
        }
    }

    /// The span after the copy of `url` over which its sitemap showed no change, if any, as
    /// (copy, last quiet read, the share of changes the host's `lastmod`s show).
    pub(super) fn lastmod_quiet(&self, url: UrlKey) -> Option<(i64, i64, f64)> {
        let u = &self.urls[url];
        let (taken, until) = (
            u.last_check_ms()?,
            u.evidence().lastmod_quiet_until_ms.get()?,
        );
        (until > taken).then(|| (taken, until, self.hosts[u.host()].lastmod.shown_share()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn belief_needs_agreements_and_few_disagreements() {
        let trust = |agreements, disagreements| LastmodTrust {
            agreements,
            disagreements,
            ..Default::default()
        };
        assert!(!trust(0, 0).believed());
        assert!(!trust(2, 0).believed());
        assert!(trust(3, 0).believed());
        assert!(!trust(3, 1).believed());
        assert!(trust(9, 1).believed());
        assert!(!trust(20, 5).believed());
    }

    #[test]
    fn the_shown_share_is_all_once_believed_and_learnt_before() {
        let share = |agreements, disagreements| {
            LastmodTrust {
                agreements,
                disagreements,
                ..Default::default()
            }
            .shown_share()
        };
        assert_eq!(share(0, 0), 0.5);
        assert_eq!(share(2, 0), 0.75);
        assert_eq!(share(3, 0), 1.0);
        assert_eq!(share(0, 8), 0.1);
        assert!(share(3, 1) < 1.0 && share(3, 1) > share(2, 1));
    }
}
