//! Whether a host's validators tell the truth, learnt from its own checks (pure state), in both
//! directions.
//!
//! - `Last-Modified` is trusted as a change time only after it has agreed with the content
//!   fingerprint (changed exactly when the content did) on [`MIN_AGREEMENTS`] checks and disagreed
//!   on at most [`MAX_DISAGREEMENT`] of them: hosts that stamp every response with "now" fail at once.
//! - `ETag` is trusted as a change signal until it stays the same while the content changes on
//!   more than [`MAX_DISAGREEMENT`] of the checks where the content changed.
//! - `If-None-Match` is worth sending only if the host's ETag is also *stable*: a host whose ETag
//!   changes while the content does not (per-server or per-request ETags) can never answer 304,
//!   so after [`MIN_CHURN`] such checks, and while they outnumber the checks where an unchanged
//!   content kept its ETag, it gets no `If-None-Match` (its full GETs keep teaching, so a host that
//!   mends its ETags gets them back).
//! - A `304 Not Modified` is a claim, not evidence: the [`AUDIT_EVERY`]-th 304 from a host is
//!   followed at once by an unconditional GET of the same URL (an *audit*). Seconds apart, a
//!   different fingerprint means the 304 hid a change. Each clean audit in a row doubles the 304s
//!   until the next, up to [`MAX_AUDIT_EVERY`] (an honest host's audits cost 1/160 of its 304s
//!   in the end, not 1/10 for ever); a caught one (or a full check that finds a change behind
//!   unmoved validators), or any audit while the host is not believed, starts again at
//!   [`AUDIT_EVERY`]. Full checks that confirm the copy restore belief, not the spacing. A host caught on more than
//!   [`MAX_DISAGREEMENT`] of its audits gets no conditional requests at all (every check is a
//!   full GET compared by fingerprint); full GETs whose validators stayed with the content count
//!   as clean audits, so trust can come back.
//!
//! The decisions are methods here so `run`, `demo` and `simulate` share them; the scheduler only
//! holds one [`ValidatorTrust`] per host and calls [`ValidatorTrust::observe`].

/// Agreeing checks needed before Last-Modified is trusted.
pub const MIN_AGREEMENTS: u32 = 3;
/// Largest tolerated fraction of checks where a validator contradicts the content.
pub const MAX_DISAGREEMENT: f64 = 0.1;
/// Checks with unchanged content but a new ETag before `If-None-Match` is dropped.
pub const MIN_CHURN: u32 = 2;
/// A host's 304s between two audits (the audit follows the AUDIT_EVERY-th) until it has passed
/// one.
pub const AUDIT_EVERY: u32 = 10;
/// The most 304s between two audits, reached after four clean audits in a row.
pub const MAX_AUDIT_EVERY: u32 = 160;

/// What one check showed about validators and content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ValidatorCheck {
    /// Whether the content fingerprint changed since the previous check.
    pub content_changed: bool,
    /// Whether Last-Modified changed (`None`: the host sent none, now or before).
    pub last_modified_changed: Option<bool>,
    /// Whether the ETag changed (`None`: the host sent none, or no body was compared).
    pub etag_changed: Option<bool>,
    /// The check was a 304 to a conditional request (counts towards the next audit).
    pub not_modified: bool,
    /// The check was an audit after a 304: `Some(true)` when it found the content changed (the
    /// 304 lied), `Some(false)` when it confirmed the copy.
    pub audit: Option<bool>,
}

/// Per-host validator trust counters (stored as JSON with the host; new fields default to 0
/// so rows written before them still load).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ValidatorTrust {
    /// Checks where Last-Modified moved exactly when the content did.
    pub lm_agree: u32,
    /// Checks where Last-Modified moved without the content, or stayed while it changed.
    pub lm_disagree: u32,
    /// Checks with changed content where the ETag changed too.
    pub etag_agree: u32,
    /// Checks with changed content where the ETag stayed the same.
    pub etag_disagree: u32,
    /// Full checks with unchanged content that kept their ETag.
    pub etag_stable: u32,
    /// Full checks with unchanged content that came with a new ETag.
    pub etag_churn: u32,
    /// 304s since the last audit.
    pub since_audit: u32,
    /// Audits (and full checks with unchanged validators) that confirmed the content.
    pub audits_clean: u32,
    /// Audits (and full checks with unchanged validators) that found the content changed.
    pub audits_caught: u32,
    /// Clean audits of believed 304s since the last caught one: each doubles the 304s until the
    /// next audit.
    pub clean_in_a_row: u32,
}

impl ValidatorTrust {
    /// Counts one check.
    pub fn observe(&mut self, check: ValidatorCheck) {
        if check.not_modified {
            self.since_audit = self.since_audit.saturating_add(1);
        }
        if let Some(lm) = check.last_modified_changed {
            if lm == check.content_changed {
                self.lm_agree += 1;
            } else {
                self.lm_disagree += 1;
            }
        }
        match (check.content_changed, check.etag_changed) {
            (true, Some(true)) => self.etag_agree += 1,
            (true, Some(false)) => self.etag_disagree += 1,
            (false, Some(true)) if !check.not_modified => self.etag_churn += 1,
            (false, Some(false)) if !check.not_modified => self.etag_stable += 1,
            _ => {}
        }
        match check.audit {
            Some(caught) => {
                self.since_audit = 0;
                self.count_audit(caught);
                // Only an audit of a 304 the host is believed for spaces the next one out.
                if !caught && self.trust_not_modified() {
                    self.clean_in_a_row = self.clean_in_a_row.saturating_add(1);
                }
            }
            // A full check whose validators did not move is what a conditional request would
            // have got a 304 for: it tells whether that 304 would have been true.
            None if !check.not_modified
                && (check.etag_changed == Some(false)
                    || (check.etag_changed.is_none()
                        && check.last_modified_changed == Some(false))) =>
            {
                self.count_audit(check.content_changed);
            }
            None => {}
        }
    }

    /// Counts an audit or a full check that stands for one. A caught one, or any while the
    /// host's 304s are not believed, starts the spacing of audits again.
    fn count_audit(&mut self, caught: bool) {
        if caught {
            self.audits_caught += 1;
        } else {
            self.audits_clean += 1;
        }
        if caught || !self.trust_not_modified() {
            self.clean_in_a_row = 0;
        }
    }

    /// Whether this host's Last-Modified may be used as a change time.
    pub fn trust_last_modified(&self) -> bool {
        let total = self.lm_agree + self.lm_disagree;
        self.lm_agree >= MIN_AGREEMENTS
            && f64::from(self.lm_disagree) <= MAX_DISAGREEMENT * f64::from(total)
    }

    /// Whether this host's ETag may be used as a change signal.
    pub fn trust_etag(&self) -> bool {
        let total = self.etag_agree + self.etag_disagree;
        f64::from(self.etag_disagree) <= MAX_DISAGREEMENT * f64::from(total)
    }

    /// Whether this host's 304s are believed: not caught hiding a change on more than
    /// [`MAX_DISAGREEMENT`] of its audits.
    pub fn trust_not_modified(&self) -> bool {
        let total = self.audits_clean + self.audits_caught;
        f64::from(self.audits_caught) <= MAX_DISAGREEMENT * f64::from(total)
    }

    /// Whether to send `If-None-Match`: the ETag is a truthful change signal, stable on unchanged
    /// content (else a 304 can never come), and the host's 304s are believed.
    pub fn send_if_none_match(&self) -> bool {
        let churning = self.etag_churn >= MIN_CHURN && self.etag_churn > self.etag_stable;
        self.trust_etag() && !churning && self.trust_not_modified()
    }

    /// Whether to send `If-Modified-Since`: the host's 304s are believed.
    pub fn send_if_modified_since(&self) -> bool {
        self.trust_not_modified()
    }

    /// Whether the 304 just received must be audited (an unconditional GET right away): it is
    /// the [`ValidatorTrust::audit_every`]-th since the last audit.
    pub fn audit_after_304(&self) -> bool {
        self.since_audit.saturating_add(1) >= self.audit_every()
    }

    /// The 304s from one audit to the next: [`AUDIT_EVERY`], doubled by each clean audit in a
    /// row, at most [`MAX_AUDIT_EVERY`].
    pub fn audit_every(&self) -> u32 {
        AUDIT_EVERY
            .saturating_mul(1 << self.clean_in_a_row.min(8))
            .min(MAX_AUDIT_EVERY)
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
            ..Default::default()
        }
    }

    fn not_modified() -> ValidatorCheck {
        ValidatorCheck {
            not_modified: true,
            ..Default::default()
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

    #[test]
    fn an_etag_that_changes_on_unchanged_content_stops_if_none_match_and_can_earn_it_back() {
        let mut t = ValidatorTrust::default();
        assert!(t.send_if_none_match());
        t.observe(check(false, None, Some(true)));
        assert!(t.send_if_none_match(), "one new ETag is not yet a habit");
        t.observe(check(false, None, Some(true)));
        assert!(!t.send_if_none_match());
        assert!(t.trust_etag(), "it still moves when the content does");
        for _ in 0..3 {
            t.observe(check(false, None, Some(false)));
        }
        assert!(t.send_if_none_match(), "stable ETags again");
    }

    #[test]
    fn the_tenth_304_is_audited_first_and_a_caught_lie_stops_conditional_requests() {
        let mut t = ValidatorTrust::default();
        for _ in 0..AUDIT_EVERY - 1 {
            assert!(!t.audit_after_304());
            t.observe(not_modified());
        }
        assert!(t.audit_after_304());
        // A clean audit: the counter starts again, trust stays.
        t.observe(ValidatorCheck {
            audit: Some(false),
            ..check(false, None, Some(false))
        });
        assert!(!t.audit_after_304());
        assert!(t.send_if_none_match() && t.send_if_modified_since());
        // The next audit finds a change behind the 304.
        for _ in 0..AUDIT_EVERY - 1 {
            t.observe(not_modified());
        }
        t.observe(ValidatorCheck {
            audit: Some(true),
            ..check(true, None, Some(false))
        });
        assert!(!t.trust_not_modified());
        assert!(!t.send_if_none_match() && !t.send_if_modified_since());
        // Full checks whose validators stayed with the content restore it, slowly.
        for _ in 0..7 {
            t.observe(check(false, Some(false), Some(false)));
        }
        assert!(!t.trust_not_modified(), "1 caught of 9 is too many");
        t.observe(check(false, Some(false), Some(false)));
        assert!(t.trust_not_modified());
        // A host forgiven starts again at the shortest spacing of audits.
        assert_eq!(t.audit_every(), AUDIT_EVERY);
    }

    /// 304s until `t` asks for an audit, each counted.
    fn until_audit(t: &mut ValidatorTrust) -> u32 {
        let mut n = 1;
        while !t.audit_after_304() {
            t.observe(not_modified());
            n += 1;
            assert!(
                n <= MAX_AUDIT_EVERY,
                "no audit within {MAX_AUDIT_EVERY} 304s"
            );
        }
        t.observe(not_modified());
        n
    }

    #[test]
    fn clean_audits_in_a_row_space_the_next_ones_out_and_a_caught_lie_starts_again() {
        let mut t = ValidatorTrust::default();
        let clean = ValidatorCheck {
            audit: Some(false),
            ..check(false, None, Some(false))
        };
        let mut gaps = Vec::new();
        for _ in 0..6 {
            gaps.push(until_audit(&mut t));
            t.observe(clean);
        }
        assert_eq!(gaps, [10, 20, 40, 80, 160, 160]);
        assert_eq!(until_audit(&mut t), MAX_AUDIT_EVERY);
        t.observe(ValidatorCheck {
            audit: Some(true),
            ..check(true, None, Some(false))
        });
        assert_eq!(until_audit(&mut t), AUDIT_EVERY);
        // Not believed now (1 caught of 7): a clean audit does not space the next one out.
        t.observe(clean);
        assert_eq!(t.audit_every(), AUDIT_EVERY);
        // A full check whose unchanged validators hid a change is caught too.
        let mut t = ValidatorTrust::default();
        until_audit(&mut t);
        t.observe(clean);
        assert_eq!(t.audit_every(), 2 * AUDIT_EVERY);
        t.observe(check(true, Some(false), Some(false)));
        assert_eq!(t.audit_every(), AUDIT_EVERY);
        // Full checks that confirm the copy (no 304 audited) do not space the audits out.
        let mut honest = ValidatorTrust::default();
        for _ in 0..20 {
            honest.observe(check(false, Some(false), Some(false)));
        }
        assert_eq!(honest.audit_every(), AUDIT_EVERY);
    }

    #[test]
    fn old_stored_trust_without_the_new_counters_still_loads() {
        let t: ValidatorTrust = serde_json::from_str(
            r#"{"lm_agree":3,"lm_disagree":0,"etag_agree":1,"etag_disagree":0}"#,
        )
        .unwrap();
        assert_eq!(t.lm_agree, 3);
        assert_eq!(t.since_audit, 0);
        assert!(t.send_if_none_match());
        assert_eq!(t.audit_every(), AUDIT_EVERY);
    }
}
