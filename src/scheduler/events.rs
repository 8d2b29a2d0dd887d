//! What the scheduler is told and what it answers: its configuration, a URL discovered, a URL
//! restored from an earlier run, a check's outcome, a request handed out, a URL's summary.

use crate::estimate::{RateEstimate, Stats, ValidatorCheck};

#[cfg(doc)]
use super::Scheduler;
use super::frontier::{self, HostKey, SiteKey, UrlKey};
use super::{PolicyKind, UrlKind};

/// How a scheduler behaves.
#[derive(Debug, Clone, PartialEq)]
pub struct SchedulerConfig {
    /// The revisit policy.
    pub policy: PolicyKind,
    /// How often every site's plan is solved again from scratch.
    pub replan_every_ms: i64,
    /// How long a stretch of its budget a site may save up (requests then go out evenly).
    pub bucket_span_ms: f64,
    /// Whether a URL may go early when its site's credit would otherwise be thrown away.
    pub fetch_ahead: bool,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        Self {
            policy: PolicyKind::Learned,
            replan_every_ms: 6 * 3_600_000,
            bucket_span_ms: frontier::BUCKET_SPAN_MS,
            fetch_ahead: true,
        }
    }
}

/// A URL as discovery found it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewUrl {
    /// Its site.
    pub site: SiteKey,
    /// Its host.
    pub host: HostKey,
    /// Page or feed.
    pub kind: UrlKind,
    /// Importance within the site (1; less for duplicates and redirect sources).
    pub weight: f64,
    /// The sitemap `changefreq`, as changes per day.
    pub changefreq_per_day: Option<f64>,
    /// The true rate (simulation only; used by the oracle and proportional policies).
    pub true_rate: Option<f64>,
    /// Its section ([`section_of`]; 0 when there is none), which groups it with the pages most
    /// like it.
    pub section: u64,
}

/// What the store remembers of a URL from an earlier run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Restored {
    /// Last successful check (the copy's time).
    pub last_check_ms: Option<i64>,
    /// Its last check, whatever it gave (a failed one too): when it was last tried.
    pub last_attempt_ms: Option<i64>,
    /// The folded evidence.
    pub stats: Stats,
    /// Its checks that failed in a row, up to the last ([`Seen::Failed`]).
    pub failures: u8,
    /// When it was due.
    pub due_ms: Option<i64>,
    /// The floor on its interval as its row keeps it: the server's, or for a feed its `ttl`
    /// if longer (kept as the server's until an answer sets that anew; the `ttl` comes back
    /// with what the feed's reads showed, [`super::FeedShown::ttl_ms`]).
    pub min_interval_ms: i64,
    /// A known change newer than the copy.
    pub known_change_ms: Option<i64>,
    /// Checks it has had in all (their count, for its site's priors: [`Scheduler::restore`]).
    pub checks: u64,
    /// For a feed: its reads in a row that looked stamped ([`super::STAMPING_READS`]).
    pub feed_stamped_reads: u8,
    /// Its planned visits a day (for a feed, its reads a day).
    pub planned_per_day: Option<f64>,
    /// For a feed: what its reads have shown of it.
    pub feed_shown: super::FeedShown,
}

/// What a check showed about the content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// The content differs from the copy.
    Changed,
    /// The content is the copy's.
    Unchanged,
    /// A copy, but nothing to compare with (the first one, or no validator to judge by).
    Copy,
    /// No copy, and the fault is the URL's: a 4xx that answers for the URL (a 404, a 410), a
    /// redirect chain that loops or leads into a path robots.txt disallows, a body refused.
    /// Checks that fail in a row take it out of its site's plan ([`super::FAILING_AFTER`]).
    Failed,
    /// No copy, and no answer that is the URL's alone: a 5xx, 408 or 429, no connection, a
    /// timeout, a transfer cut short, a hop's robots.txt out of reach, a check that could not
    /// be recorded or whose task panicked. It counts as a failure of the URL only when its host
    /// answered another check since the URL's last one (a page broken on a working host);
    /// otherwise it is the host's trouble, which the host's back-off answers, and the URL keeps
    /// its plan and its count (a site down for a day does not send every page out of the plan).
    Unanswered,
    /// No copy, and nothing learnt of the URL: the redirect went to a host another worker
    /// holds, and that worker checks the target.
    Inconclusive,
}

impl Seen {
    /// Whether the check left a copy.
    pub fn got_copy(self) -> bool {
        matches!(self, Seen::Changed | Seen::Unchanged | Seen::Copy)
    }
}

/// One check, as the shell reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct Fetched {
    /// When the check was made.
    pub at_ms: i64,
    /// What it showed.
    pub seen: Seen,
    /// The Last-Modified the server gave.
    pub last_modified_ms: Option<i64>,
    /// What the check taught about the host's validators (full GETs with a previous copy).
    pub lesson: Option<ValidatorCheck>,
    /// Requests beyond the one handed out (redirect hops, retries): charged to the site.
    pub extra_requests: u32,
    /// The server's floor on the interval as the answer sets it (Cache-Control max-age), ms: 0
    /// ends it (a new response without one). `None`: the answer says nothing of it (a 304
    /// without one, an error, no answer), and it stands.
    pub min_interval_ms: Option<i64>,
    /// The host may not be contacted before this (politeness gate, back-off, Retry-After).
    pub host_open_at_ms: Option<i64>,
}

impl Fetched {
    /// A plain check at `at_ms` that saw `seen`.
    pub fn at(at_ms: i64, seen: Seen) -> Self {
        Self {
            at_ms,
            seen,
            last_modified_ms: None,
            lesson: None,
            extra_requests: 0,
            min_interval_ms: None,
            host_open_at_ms: None,
        }
    }
}

/// A request handed out by [`Scheduler::poll_request`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// The URL.
    pub url: UrlKey,
    /// Its host (busy until the check is reported).
    pub host: HostKey,
    /// Its site (already charged).
    pub site: SiteKey,
    /// Page or feed.
    pub kind: UrlKind,
}

/// What the scheduler says of a URL, for the store and the reports.
#[derive(Debug, Clone, PartialEq)]
pub struct UrlSummary {
    /// The change-rate posterior.
    pub estimate: RateEstimate,
    /// Planned visits per day.
    pub planned_per_day: f64,
    /// When it is due (`None`: not queued, e.g. in flight or retired).
    pub due_ms: Option<i64>,
    /// Whether a feed announces its changes.
    pub covered: bool,
    /// The span after its copy counted as watched (see [`Scheduler::watched`]).
    pub watched: Option<(i64, i64)>,
    /// Its checks that failed in a row, up to the last.
    pub failures: u8,
    /// The floor on its interval, ms (0: none): the server's, or for a feed its `ttl` if longer.
    pub min_interval_ms: i64,
}
