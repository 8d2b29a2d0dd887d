//! The revisit policies the scheduler can follow: freshet's own (learned rates, age-optimal plan,
//! feeds) and the baselines it is compared with. Every policy shares the frontier, the budget and
//! the politeness of [`super::Scheduler`]; they differ only in the rate the planner is told for a
//! page and in how the planner shares visits out.

use crate::plan::Policy;

/// A revisit policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicyKind {
    /// freshet: learnt change rates (pooled priors, trusted validators and hints, feeds priced
    /// against what they save), age-optimal plan.
    #[default]
    Learned,
    /// The age-optimal plan given the true change rates (simulation only: the world knows them).
    Oracle,
    /// The oracle reading feeds as freshet does (simulation only): what a web's feeds are worth
    /// to a policy that knows every rate, so the most they can give freshet. Where it is no
    /// better than the oracle, the feeds cannot pay for their reads.
    #[serde(rename = "oracle-signals")]
    OracleSignals,
    /// The same visit rate for every page (the textbook baseline).
    Uniform,
    /// Visit rates proportional to the true change rates (simulation only).
    Proportional,
    /// The age-optimal plan believing the sitemap `changefreq` hints.
    Changefreq,
    /// Nutch's adaptive interval (× 0.8 after a change, × 1.4 after none), scaled to the budget.
    Nutch,
}

impl PolicyKind {
    /// The name shown in reports and stored with each run.
    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Learned => "learned",
            PolicyKind::Oracle => "oracle",
            PolicyKind::OracleSignals => "oracle-signals",
            PolicyKind::Uniform => "uniform",
            PolicyKind::Proportional => "proportional",
            PolicyKind::Changefreq => "changefreq",
            PolicyKind::Nutch => "nutch",
        }
    }

    /// How the planner shares visits out under this policy.
    pub fn planner(self) -> Policy {
        match self {
            PolicyKind::Learned
            | PolicyKind::Oracle
            | PolicyKind::OracleSignals
            | PolicyKind::Changefreq => Policy::AgeOptimal,
            PolicyKind::Uniform | PolicyKind::Nutch => Policy::Uniform,
            PolicyKind::Proportional => Policy::Proportional,
        }
    }

    /// Whether the policy learns from feeds (freshet's own, and the oracle that reads them).
    pub fn uses_feeds(self) -> bool {
        matches!(self, PolicyKind::Learned | PolicyKind::OracleSignals)
    }

    /// Whether the policy needs the true rates (simulation only).
    pub fn needs_true_rates(self) -> bool {
        matches!(
            self,
            PolicyKind::Oracle | PolicyKind::OracleSignals | PolicyKind::Proportional
        )
    }
}

/// The change rate the changefreq baseline assumes for a page without a hint: one change in ten
/// days (the old default prior's mean; the estimator's own prior is deliberately far wider).
pub const TYPICAL_RATE_PER_DAY: f64 = 0.1;

/// Nutch's AdaptiveFetchSchedule bounds: an hour to 90 days.
pub const NUTCH_MIN_INTERVAL_DAYS: f64 = 1.0 / 24.0;
/// See [`NUTCH_MIN_INTERVAL_DAYS`].
pub const NUTCH_MAX_INTERVAL_DAYS: f64 = 90.0;

/// Nutch's next interval after a check that did or did not see a change.
pub fn nutch_interval(interval_days: f64, changed: bool) -> f64 {
    let factor = if changed { 0.8 } else { 1.4 };
    (interval_days * factor).clamp(NUTCH_MIN_INTERVAL_DAYS, NUTCH_MAX_INTERVAL_DAYS)
}
