//! Whether a host's validators tell the truth, learnt from its own checks (pure state).
//!
//! A host's `Last-Modified` is trusted only after it has agreed with the content fingerprint
//! (changed exactly when the content did) on [`MIN_AGREEMENTS`] checks and disagreed on at most
//! [`MAX_DISAGREEMENT`] of them: hosts that stamp every response with "now" fail at once.
//! A host's `ETag` is trusted until it stays the same while the content fingerprint changes on more
//! than [`MAX_DISAGREEMENT`] of the checks where the content changed (an ETag that varies on
//! unchanged content only costs bandwidth, so it does not count against it). Untrusted
//! validators fall back to content fingerprints.

/// Agreeing checks needed before Last-Modified is trusted.
pub const MIN_AGREEMENTS: u32 = 3;
/// Largest tolerated fraction of checks where a validator contradicts the content.
pub const MAX_DISAGREEMENT: f64 = 0.1;

/// What one full (unconditional) check showed about validators and content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ValidatorCheck {
    /// Whether the content fingerprint changed since the previous check.
    pub content_changed: bool,
    /// Whether Last-Modified changed (`None`: the host sent none, now or before).
    pub last_modified_changed: Option<bool>,
    /// Whether the ETag changed (`None`: the host sent none).
    pub etag_changed: Option<bool>,
}

/// Per-host validator trust counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct ValidatorTrust {
    /// Checks where Last-Modified moved exactly when the content did.
    pub lm_agree: u32,
    /// Checks where Last-Modified moved without the content, or stayed while it changed.
    pub lm_disagree: u32,
    /// Checks with changed content where the ETag changed too.
    pub etag_agree: u32,
    /// Checks with changed content where the ETag stayed the same.
    pub etag_disagree: u32,
}

impl ValidatorTrust {
    /// Counts one check.
    pub fn observe(&mut self, check: ValidatorCheck) {
        if let Some(lm) = check.last_modified_changed {
            if lm == check.content_changed {
                self.lm_agree += 1;
            } else {
                self.lm_disagree += 1;
            }
        }
        if let (true, Some(etag)) = (check.content_changed, check.etag_changed) {
            if etag {
                self.etag_agree += 1;
            } else {
                self.etag_disagree += 1;
            }
        }
    }

    /// Whether this host's Last-Modified may be used as a change time.
    pub fn trust_last_modified(&self) -> bool {
        let total = self.lm_agree + self.lm_disagree;
        self.lm_agree >= MIN_AGREEMENTS
            && f64::from(self.lm_disagree) <= MAX_DISAGREEMENT * f64::from(total)
    }

    /// Whether this host's ETag may be used for conditional requests and as a change signal.
    pub fn trust_etag(&self) -> bool {
        let total = self.etag_agree + self.etag_disagree;
        f64::from(self.etag_disagree) <= MAX_DISAGREEMENT * f64::from(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(content: bool, lm: Option<bool>, etag: Option<bool>) -> ValidatorCheck {
        ValidatorCheck {
            content_changed: content,
            last_modified_changed: lm,
            etag_changed: etag,
        }
    }

    #[test]
    fn honest_last_modified_is_trusted_after_a_few_checks() {
        let mut t = ValidatorTrust::default();
        assert!(!t.trust_last_modified());
        for changed in [true, false, true] {
            t.observe(check(changed, Some(changed), None));
        }
        assert!(t.trust_last_modified());
    }

    #[test]
    fn last_modified_that_moves_every_request_is_not() {
        let mut t = ValidatorTrust::default();
        for changed in [true, false, true, false, false, true, true, true] {
            t.observe(check(changed, Some(true), None));
        }
        assert!(!t.trust_last_modified());
    }

    #[test]
    fn etag_constant_while_content_changes_is_not_trusted() {
        let mut t = ValidatorTrust::default();
        assert!(t.trust_etag());
        t.observe(check(false, None, Some(true)));
        assert!(
            t.trust_etag(),
            "a varying ETag on unchanged content is harmless"
        );
        t.observe(check(true, None, Some(false)));
        assert!(!t.trust_etag());
        for _ in 0..20 {
            t.observe(check(true, None, Some(true)));
        }
        assert!(t.trust_etag(), "one miss in 21 is tolerated");
    }
}
