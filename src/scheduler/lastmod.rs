//! What a sitemap's `lastmod` says of a copy, and whether a host's `lastmod` has earned belief.
//!
//! A sitemap read at `R` that lists a page with a `lastmod` newer than the copy says the copy is
//! stale ([`super::Scheduler::handle_known_change`]). One that lists it with a `lastmod` no newer
//! than the copy says the page did not change between the copy and `R`: the span is watched, as
//! a quiet feed watches it ([`super::Scheduler::watched`]), but only on a host whose `lastmod`
//! is believed. Stale or made-up `lastmod`s are common (a sitemap generated once, or stamped with
//! the build time), so belief is learnt from the host's own pages: a check that saw a page change
//! between two copies expects the next read of the sitemap to give it a `lastmod` after the
//! earlier copy. That is an agreement; a `lastmod` no newer is a disagreement. A host is believed
//! after [`LASTMOD_AGREEMENTS`] agreements while its disagreements stay under
//! [`LASTMOD_TOLERANCE`] of its judgements.

use super::{Scheduler, UrlKey};

/// Agreements before a host's `lastmod` is believed.
pub const LASTMOD_AGREEMENTS: u32 = 3;

/// The share of judgements that may disagree on a believed host (a sitemap regenerated a little
/// after the change it should show).
pub const LASTMOD_TOLERANCE: f64 = 0.1;

/// What a host's sitemap `lastmod`s have shown so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LastmodTrust {
    /// Reads that showed a change a check had seen.
    pub agreements: u32,
    /// Reads that did not.
    pub disagreements: u32,
}

impl LastmodTrust {
    /// Whether the host's `lastmod`s are believed.
    pub fn believed(&self) -> bool {
        let judged = f64::from(self.agreements + self.disagreements);
        self.agreements >= LASTMOD_AGREEMENTS
            && f64::from(self.disagreements) <= LASTMOD_TOLERANCE * judged
    }
}

impl Scheduler {
    /// A sitemap read at `read_ms` listed `url` with `lastmod_ms` (or none): judges the host's
    /// `lastmod` against a change a check saw, and on a believed host extends the span over which
    /// the copy is known current. A newer `lastmod` is a known change (see
    /// [`Scheduler::handle_known_change`], which the caller also calls).
    pub fn handle_sitemap_listing(&mut self, url: UrlKey, read_ms: i64, lastmod_ms: Option<i64>) {
        let Some(lastmod) = lastmod_ms else {
            return;
        };
        let host = self.urls[url].host;
        let u = &mut self.urls[url];
        if let Some((before, seen)) = u.change_to_confirm
            && read_ms > seen
        {
            u.change_to_confirm = None;
            let trust = &mut self.hosts[host].lastmod;
            if lastmod > before {
                trust.agreements += 1;
            } else {
                trust.disagreements += 1;
            }
        }
        let believed = self.hosts[host].lastmod.believed();
        let u = &mut self.urls[url];
        if believed
            && u.last_check_ms
                .is_some_and(|taken| lastmod <= taken && read_ms > taken)
        {
            u.lastmod_quiet_until_ms = u.lastmod_quiet_until_ms.max(Some(read_ms));
        }
    }

    /// The span after the copy of `url` over which a believed sitemap showed no change, if any.
    pub(super) fn lastmod_watched(&self, url: UrlKey) -> Option<(i64, i64)> {
        let u = &self.urls[url];
        let (taken, until) = (u.last_check_ms?, u.lastmod_quiet_until_ms?);
        (until > taken && self.hosts[u.host].lastmod.believed()).then_some((taken, until))
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
        };
        assert!(!trust(0, 0).believed());
        assert!(!trust(2, 0).believed());
        assert!(trust(3, 0).believed());
        assert!(!trust(3, 1).believed());
        assert!(trust(9, 1).believed());
        assert!(!trust(20, 5).believed());
    }
}
