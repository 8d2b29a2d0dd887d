//! What the ledger has learnt of each host's honesty, and how the store keeps it: its
//! validators' trust ([`ValidatorTrust`]) and what its announced changes have shown
//! ([`HostClaims`]), as one JSON value in the host's row, saved with the check that taught it
//! and put back at a start.

use serde::{Deserialize, Serialize};

use super::Ledger;
use crate::estimate::ValidatorTrust;
use crate::scheduler::HostClaims;

/// A host's learnt trust as the store keeps it. Rows written before announcements were judged
/// hold the validators' alone, and load with nothing judged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct StoredTrust {
    /// Its validators'.
    #[serde(flatten)]
    pub validators: ValidatorTrust,
    /// Its announcements'.
    #[serde(default)]
    pub announcements: HostClaims,
}

impl Ledger {
    /// What a host's validators have taught.
    pub fn trust(&self, host_id: i64) -> ValidatorTrust {
        let inner = self.lock();
        inner
            .host_keys
            .get(&host_id)
            .map(|&h| inner.sched.host_trust(h))
            .unwrap_or_default()
    }

    /// Everything learnt of a host's honesty, to be stored.
    pub fn stored_trust(&self, host_id: i64) -> StoredTrust {
        let inner = self.lock();
        match inner.host_keys.get(&host_id) {
            Some(&h) => StoredTrust {
                validators: inner.sched.host_trust(h),
                announcements: inner.sched.host_claims(h),
            },
            None => StoredTrust::default(),
        }
    }

    /// Puts back what was learnt of a host's honesty (a start).
    pub fn set_trust(&self, host_id: i64, trust: StoredTrust) {
        let mut inner = self.lock();
        if let Some(&host) = inner.host_keys.get(&host_id) {
            inner.sched.set_host_trust(host, trust.validators);
            inner.sched.set_host_claims(host, trust.announcements);
        }
    }

    /// Whether the store records the host's feed entries dated after a page's copy as known
    /// changes ([`crate::scheduler::Scheduler::records_feed_entries`]; not those of a host not
    /// met yet).
    pub fn records_feed_entries(&self, host_id: i64) -> bool {
        let inner = self.lock();
        (inner.host_keys.get(&host_id)).is_some_and(|&h| inner.sched.records_feed_entries(h))
    }

    /// Whether the feed `feed_id` stamps its entries with the time of its reads
    /// ([`crate::scheduler::STAMPING_READS`]): such entries name no change.
    pub fn feed_stamps_entries(&self, feed_id: i64) -> bool {
        let inner = self.lock();
        (inner.urls.key_of(feed_id)).is_some_and(|key| inner.sched.stamps_feed_entries(key))
    }

    /// Whether the store records the host's sitemap `lastmod`s newer than a page's copy as
    /// known changes ([`crate::scheduler::Scheduler::records_newer_lastmods`]).
    pub fn records_newer_lastmods(&self, host_id: i64) -> bool {
        let inner = self.lock();
        (inner.host_keys.get(&host_id)).is_some_and(|&h| inner.sched.records_newer_lastmods(h))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_written_before_announcements_were_judged_loads_and_a_new_one_round_trips() {
        let old: StoredTrust =
            serde_json::from_str(r#"{"lm_agree":3,"lm_disagree":0,"etag_agree":1}"#).unwrap();
        assert_eq!(old.validators.lm_agree, 3);
        assert_eq!(old.announcements, HostClaims::default());
        let mut trust = old;
        trust.announcements.lastmod.false_alarms = 4;
        trust.announcements.feed.weight = 2.5;
        let json = serde_json::to_string(&trust).unwrap();
        assert!(json.contains(r#""lm_agree":3"#), "{json}");
        assert_eq!(serde_json::from_str::<StoredTrust>(&json).unwrap(), trust);
    }
}
