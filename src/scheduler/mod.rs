//! The scheduler: every revisit decision, in one pure type shared by `freshet run`, `freshet
//! simulate` and `freshet demo` (no clock, database or network inside; `now` is passed in).
//!
//! It is driven by events and answers two questions, after the shape of `quinn-proto`:
//! - events in: [`Scheduler::add_url`] (discovered, with hints), [`Scheduler::handle_fetched`]
//!   (a check and what it showed), [`Scheduler::handle_feed`] (a feed's entries),
//!   [`Scheduler::handle_sitemap_listing`] (a sitemap's `lastmod`s),
//!   [`Scheduler::handle_known_change`] (a known change the store holds),
//!   [`Scheduler::close_host`] (back-off, Retry-After), [`Scheduler::charge`] (requests made
//!   outside the frontier: robots.txt, sitemaps, hops, retries);
//! - answers: [`Scheduler::poll_request`] (the URL to request now, if any) and
//!   [`Scheduler::poll_timeout`] (not before when).
//!
//! Per URL it holds the folded sufficient statistics of the estimator ([`crate::estimate::Stats`]),
//! so history is never re-read; per host its queue, its politeness gate and its learnt validator
//! and hint trust; per site its budget (a token bucket every request is charged to), its pooled
//! prior and its solved plan ([`replan`]). A plan is re-solved every [`SchedulerConfig::replan_every_ms`],
//! and whenever URLs were added, with the priors fitted again; and once there have been as many
//! checks since the last plan as there are URLs, under the priors as they are (so a young
//! database is re-planned as its evidence grows, and a re-plan costs O(1) a check); between
//! re-plans a check moves only its own page, in O(1), through the solved multipliers
//! ([`crate::plan::rate_for`]).
//!
//! A page is due `1/f` after its last check (`f` its planned visits per day, never sooner than a
//! server's floor). A page whose change is known (a feed entry, a sitemap `lastmod`, while its
//! host's announcements of that kind are believed: [`announcements`]) goes when waiting would
//! cost more than a visit at the plan's price ([`crate::plan::feed`]); one a feed
//! has announced faithfully ("covered") waits for its announcements and is audited every
//! [`AUDIT_INTERVALS`] intervals in case the feed misses its changes (a change the feed did not
//! announce ends the coverage).

mod announcements;
mod beliefs;
mod chunked;
mod compact;
mod due_queue;
mod events;
mod feed_polls;
mod feed_state;
mod feeds;
mod freshness;
pub mod frontier;
mod groups;
mod lastmod;
pub mod policy;
mod replan;
mod restored_feeds;
mod site_pages;
mod sitemaps;
mod url_state;
mod visits;
mod workers;
pub use workers::{IdleRefill, PoolExchange, settle_pool};

use crate::estimate::{Population, Prior, Stats, ValidatorTrust};
use crate::plan::Multipliers;

pub use announcements::HostClaims;
pub use events::{Fetched, NewUrl, Request, Restored, SchedulerConfig, Seen, UrlSummary};
pub use feed_state::{CAPACITY_READS, FeedShown};
pub use feeds::{FeedListing, READ_STAMP_SLACK_MS, STAMPING_READS};
pub use freshness::Freshness;
pub use frontier::{Bucket, HostKey, SiteKey, UrlKey};
pub use groups::section_of;
pub use policy::PolicyKind;
pub use sitemaps::{MAX_SITEMAP_READS_PER_DAY, MIN_SITEMAP_READS_PER_DAY};
pub use url_state::UrlKind;
use url_state::{RetryCause, UrlState};

use chunked::Chunked;
use frontier::Frontier;

/// Checks that must agree with a feed's announcements before a page waits for them.
pub const FEED_TRUST_CHECKS: u32 = 2;
/// A covered page with no announced change is still checked every this many planned intervals.
pub const AUDIT_INTERVALS: f64 = 8.0;
/// A prior weighs at most this many of the page's planned intervals of exposure (its shape kept
/// at least [`crate::estimate::Prior::default`]'s, or its own where that is less).
pub const PRIOR_INTERVALS: f64 = 3.0;
/// URLs found between plans are planned in at most this often (clock time).
pub const DIRTY_REPLAN_GAP_MS: i64 = 10 * 60_000;
/// A plan is solved again once its URLs have had as many checks since it as there are URLs, but
/// never sooner than this after the last plan (clock time). Before, a new database planned every
/// page at its site's even share until a re-plan ten minutes in: 20 pages that never change and
/// one that changes every 20 s got as many requests each for those ten minutes. Such a plan
/// leaves the priors as they are: refitted on a minute's checks, a small site's pooled prior
/// made its pages that never change read as changing at least a few times a day.
pub const EVIDENCE_REPLAN_GAP_MS: i64 = 60_000;
/// After a check the URL failed for certain, or that said nothing of it, the soonest it is
/// tried again (after one its host left unanswered, its planned interval:
/// [`Scheduler::retry_interval_ms`]); once it is failing, its first back-off.
pub const ERROR_RETRY_MS: i64 = 3_600_000;
/// Checks failed in a row from which a URL is failing: it leaves its site's plan (its share of
/// the budget goes to the pages that answer) and is tried again after [`ERROR_RETRY_MS`],
/// doubled at each further failure up to [`MAX_FAILING_RETRY_MS`]; its retries are counted
/// with the site's requests outside the plan. One failure (a timeout, a restart of the server)
/// keeps the URL in the plan, tried again at its planned interval (an hour at least after a
/// check it failed for certain or one that said nothing of it).
pub const FAILING_AFTER: u8 = 2;
/// The fewest visits a day a URL is planned at, as the reports read it: a failing URL (out of
/// the plan) and a page the plan gives nothing read as this.
pub const MIN_PLANNED_PER_DAY: f64 = 1e-6;
/// The most a failing URL's back-off grows to: a page gone for good costs a request a day, and
/// one that comes back is found within a day (its site's even share of the budget may space
/// its retries further: [`Scheduler::retry_interval_ms`]).
pub const MAX_FAILING_RETRY_MS: i64 = 24 * 3_600_000;

/// A site: its budget and its plan.
#[derive(Debug, Clone)]
struct SiteState {
    weight: f64,
    requests_per_day: f64,
    /// The pooled prior of its pages (empirical Bayes), for pages whose `changefreq` hint is
    /// believed (the hint centres it) and until the site has a [`SiteState::population`].
    prior: Prior,
    /// Its pages' rates as a population (nonparametric empirical Bayes), once enough have
    /// evidence: every other page's prior.
    population: Option<Population>,
    /// The rates of its pages that carry each `changefreq` (by the hint's bits), among the
    /// pages of hosts whose hints are believed, once enough have evidence.
    hint_populations: std::collections::HashMap<u64, Population>,
    /// Its groups of pages that have a population of their own ([`groups`]).
    groups: groups::SiteGroups,
    /// When the populations were last fitted.
    population_fitted_ms: Option<i64>,
    /// Checks of its pages that brought a copy (this worker's, and others' restored: all a
    /// page's at a start), and how many there were when its populations were last fitted: a
    /// plan that fits the priors fits them again once they have doubled, before the regular
    /// refit ([`replan`]); while its pages are too few to fit one, at each such plan.
    checks: u64,
    checks_at_fit: u64,
    /// When the priors its pages are weighed under last changed (a population fitted, or for
    /// a site without one its pooled Gamma), and the last such time whose estimates the store
    /// has: the estimates of pages checked before a change are written again with the plans
    /// ([`Scheduler::estimate_to_save`]), not left as their last check wrote them.
    beliefs_changed_ms: Option<i64>,
    beliefs_saved_ms: Option<i64>,
    /// The last solved plan, and the planner's host index of each host key.
    multipliers: Option<Multipliers>,
    plan_hosts: std::collections::HashMap<HostKey, usize>,
    /// When it was last planned.
    last_plan_ms: Option<i64>,
    /// Requests charged outside the plan since the last re-plan, and the smoothed rate of them.
    extra_since_plan: f64,
    overhead_per_day: f64,
    /// Requests handed out or charged, in all.
    requests: u64,
    /// URLs added.
    urls: usize,
    /// Sitemap documents its last discovery pass read (the requests a re-read costs).
    sitemap_documents: usize,
    /// Sitemap re-reads per day its last plan found worth their requests.
    sitemap_reads_per_day: Option<f64>,
    /// The plan entries of its last plan: runs of its pages alike ([`site_pages`]).
    plan_runs: usize,
}

impl SiteState {
    /// When its priors last changed, while the store has not had its estimates since.
    fn estimates_outdated_since(&self) -> Option<i64> {
        let changed = self.beliefs_changed_ms?;
        self.beliefs_saved_ms
            .is_none_or(|saved| saved < changed)
            .then_some(changed)
    }

    /// Its budget spread evenly over its URLs as they stand now: visits a day each.
    fn even_share_per_day(&self) -> f64 {
        self.requests_per_day / self.urls.max(1) as f64
    }
}

/// A host: politeness and what it has taught.
#[derive(Debug, Clone, Default)]
struct HostState {
    min_interval_ms: i64,
    trust: ValidatorTrust,
    /// Whether its sitemap `changefreq` hints are believed: not before its pages' own evidence
    /// has judged them ([`Scheduler::judge_hints`]).
    believe_hints: bool,
    /// What its sitemap `lastmod`s have shown.
    lastmod: lastmod::LastmodTrust,
    /// What the checks after its feeds' entries found ([`announcements`]).
    feed_claims: announcements::Claims,
    /// The last check of any of its URLs that left a copy (`None`: none since the start): an
    /// [`Seen::Unanswered`] check after it is the URL's failure, not the host's.
    last_answer_ms: Option<i64>,
    /// Times this worker gained it ([`Scheduler::host_gained`]): a feed on it read in an
    /// earlier holding is not read here since ([`Scheduler::feed_read_here`]).
    holdings: u32,
}

/// The scheduler (see the module docs).
#[derive(Debug)]
pub struct Scheduler {
    config: SchedulerConfig,
    frontier: Frontier,
    sites: Vec<SiteState>,
    hosts: Vec<HostState>,
    urls: Chunked<UrlState>,
    /// When the plans are next solved again.
    next_replan_ms: i64,
    /// URLs were added or retired since the last plan.
    dirty: bool,
    /// When the plans were last solved, and when last with the priors fitted.
    last_replan_ms: Option<i64>,
    last_fit_ms: Option<i64>,
    /// The URLs in play (not retired) they planned.
    urls_at_replan: u64,
    /// Checks since (this worker's and, with several, the others' it took up).
    checks_since_replan: u64,
    /// The latest change of any site's priors, and the latest the store has the estimates of
    /// (each site's own are in its [`SiteState`]): whether a save is owed, in O(1).
    beliefs_changed_ms: Option<i64>,
    beliefs_saved_ms: Option<i64>,
    /// The latest change whose save failed (it waits for the next regular save).
    beliefs_tried_ms: Option<i64>,
    /// What each URL in flight added to its site's requests outside the plan when it was
    /// handed out (a failing URL's retry, a known change's advance), given back with the
    /// request if it is not made ([`Scheduler::take_back`]); at most one URL a host.
    advance_in_flight: std::collections::HashMap<UrlKey, f64>,
}

impl Scheduler {
    /// An empty scheduler.
    pub fn new(config: SchedulerConfig) -> Self {
        Self {
            frontier: Frontier::new(config.fetch_ahead),
            config,
            sites: Vec::new(),
            hosts: Vec::new(),
            urls: Chunked::default(),
            next_replan_ms: i64::MIN,
            dirty: true,
            last_replan_ms: None,
            last_fit_ms: None,
            urls_at_replan: 0,
            checks_since_replan: 0,
            beliefs_changed_ms: None,
            beliefs_saved_ms: None,
            beliefs_tried_ms: None,
            advance_in_flight: std::collections::HashMap::new(),
        }
    }

    /// The policy it follows.
    pub fn policy(&self) -> PolicyKind {
        self.config.policy
    }

    /// Adds a site with its weight and budget; its bucket starts full.
    pub fn add_site(&mut self, weight: f64, requests_per_day: f64, now_ms: i64) -> SiteKey {
        let bucket = Bucket::new(requests_per_day, self.config.bucket_span_ms, now_ms);
        let key = self.frontier.add_site(bucket);
        self.sites.push(SiteState {
            weight,
            requests_per_day,
            prior: Prior::default(),
            population: None,
            hint_populations: Default::default(),
            groups: Default::default(),
            population_fitted_ms: None,
            checks: 0,
            checks_at_fit: 0,
            beliefs_changed_ms: None,
            beliefs_saved_ms: None,
            multipliers: None,
            plan_hosts: Default::default(),
            last_plan_ms: None,
            extra_since_plan: 0.0,
            overhead_per_day: 0.0,
            requests: 0,
            urls: 0,
            sitemap_documents: 0,
            sitemap_reads_per_day: None,
            plan_runs: 0,
        });
        key
    }

    /// Adds a host whose requests must be `min_interval_ms` apart, open from `open_at_ms`.
    pub fn add_host(&mut self, min_interval_ms: i64, open_at_ms: i64) -> HostKey {
        let key = self.frontier.add_host(open_at_ms);
        self.hosts.push(HostState {
            min_interval_ms: min_interval_ms.max(0),
            ..Default::default()
        });
        key
    }

    /// Changes a host's interval (a Crawl-delay was read); re-planned at the next plan.
    pub fn set_host_interval(&mut self, host: HostKey, min_interval_ms: i64) {
        self.hosts[host].min_interval_ms = min_interval_ms.max(0);
    }

    /// Restores what an earlier run learnt about a host's validators.
    pub fn set_host_trust(&mut self, host: HostKey, trust: ValidatorTrust) {
        self.hosts[host].trust = trust;
    }

    /// What a host's validators have taught so far.
    pub fn host_trust(&self, host: HostKey) -> ValidatorTrust {
        self.hosts[host].trust
    }

    /// Makes room for `additional` more URLs at once, exactly (a start knows how many it will
    /// add: each chunk of their states and slots is made once, at its size).
    pub fn reserve_urls(&mut self, additional: usize) {
        self.urls.reserve_exact(additional);
        self.frontier.reserve_urls(additional);
    }

    /// Adds a discovered URL, due now.
    pub fn add_url(&mut self, now_ms: i64, url: NewUrl) -> UrlKey {
        let key = self.frontier.add_url();
        self.sites[url.site].urls += 1;
        self.urls.push(UrlState::new(url));
        self.urls[key].group = self.group_of(key);
        self.set_due(key, Some(now_ms), 0);
        self.dirty = true;
        key
    }

    /// Puts back what an earlier run knew of a URL just added.
    pub fn restore(&mut self, url: UrlKey, restored: Restored) {
        // A check newer than any known here (another worker's, taken up) is evidence as this
        // worker's own are: it counts towards the next plan.
        let known = self.urls[url].last_check_ms();
        let newer_check = restored
            .last_check_ms
            .is_some_and(|at| known.is_none_or(|last| at > last));
        if newer_check {
            self.checks_since_replan += 1;
            // Its site's priors count every check it had at a start, one taken up later.
            let site = self.urls[url].site();
            self.sites[site].checks += if known.is_none() {
                restored.checks.max(1)
            } else {
                1
            };
        }
        self.restore_feed(url, &restored, known);
        let u = &mut self.urls[url];
        // A URL never checked has none to put back, and is given no box of evidence.
        if restored.stats != Stats::default() || restored.last_check_ms.is_some() {
            let e = u.evidence_mut();
            e.stats = restored.stats;
            e.last_check_ms = restored.last_check_ms.into();
        }
        // The stored count replaces the one known here, 0 too (another worker's check may have
        // answered since); while it is not 0 the last check failed, and the stored due time is
        // its retry's.
        if restored.failures > 0 || u.failures() > 0 {
            u.set_failures(restored.failures);
            // Whether this step's early retry was spent is not stored: after a restart an
            // announcement brings it no sooner than halfway through the step (a `--once` pass
            // at each cron tick would otherwise send a dead page whose sitemap stamps its
            // `lastmod` at every read at each pass).
            u.set_retry(match restored.failures {
                0 => None,
                _ => restored.due_ms.map(|due| (due, RetryCause::Restored)),
            });
        }
        // When it was last tried: what an announced change must be newer than to bring a
        // failing URL back ([`Scheduler::recall_failed`]).
        if let Some(at) = restored.last_attempt_ms
            && u.last_attempt_ms().is_none_or(|known| at > known)
        {
            u.set_last_attempt_ms(at);
        }
        u.set_min_interval_ms(restored.min_interval_ms);
        u.set_known_change_ms(restored.known_change_ms);
        let due = restored.due_ms.or(restored.last_check_ms.map(|_| i64::MIN));
        if let Some(due) = due {
            self.set_due(url, Some(due), 0);
        }
    }

    /// Updates the hints of a URL discovery found again.
    pub fn update_hints(&mut self, url: UrlKey, changefreq_per_day: Option<f64>, weight: f64) {
        let u = &mut self.urls[url];
        u.changefreq_per_day = changefreq_per_day.into();
        u.set_weight(weight);
    }

    /// Changes a URL's weight (the dedup engine found it a duplicate, or canonical again) and
    /// plans it again at once.
    pub fn set_weight(&mut self, now_ms: i64, url: UrlKey, weight: f64) {
        if self.urls[url].set_weight(weight) {
            self.replan_one(url);
            self.schedule(url, now_ms);
        }
    }

    /// Takes a URL out of the frontier (disallowed, out of the schedule, gone).
    pub fn retire(&mut self, url: UrlKey) {
        self.urls[url].retired = true;
        self.set_due(url, None, 0);
        self.dirty = true;
    }

    /// Brings a retired URL back (robots.txt allows it again), due now.
    pub fn revive(&mut self, now_ms: i64, url: UrlKey) {
        if self.urls[url].retired {
            self.urls[url].retired = false;
            self.set_due(url, Some(now_ms), 0);
            self.dirty = true;
        }
    }

    /// Whether a URL is retired.
    pub fn is_retired(&self, url: UrlKey) -> bool {
        self.urls[url].retired
    }

    /// A site's budget credit now and the instant it is taken at, for a later run to restore.
    pub fn budget_state(&mut self, site: SiteKey, now_ms: i64) -> (f64, i64) {
        self.frontier.budget_state(site, now_ms)
    }

    /// Puts back the budget credit an earlier run left a site ([`Scheduler::budget_state`]).
    pub fn restore_budget(&mut self, site: SiteKey, credit: f64, at_ms: i64, now_ms: i64) {
        self.frontier.restore_bucket(site, credit, at_ms, now_ms);
    }

    /// Requests charged to a site's budget less those given back, since it was added (it
    /// changes only when the budget's credit does but for the refill).
    pub fn budget_spent(&mut self, site: SiteKey) -> f64 {
        self.frontier.budget_spent(site)
    }

    /// Charges `n` requests made outside the frontier to a site.
    pub fn charge(&mut self, site: SiteKey, now_ms: i64, n: u32) {
        self.frontier.charge(site, now_ms, f64::from(n));
        let s = &mut self.sites[site];
        s.extra_since_plan += f64::from(n);
        s.requests += u64::from(n);
    }

    /// Closes a host until `open_at_ms` (back-off, Retry-After): no task waits on it.
    pub fn close_host(&mut self, host: HostKey, open_at_ms: i64) {
        self.frontier.close_until(host, open_at_ms);
    }

    /// When a host may be contacted.
    pub fn host_open_at(&self, host: HostKey) -> i64 {
        self.frontier.open_at(host)
    }

    /// Requests a site made, in all.
    pub fn site_requests(&self, site: SiteKey) -> u64 {
        self.sites[site].requests
    }

    /// The URL to request now, if any (re-planning first when a plan is due).
    pub fn poll_request(&mut self, now_ms: i64) -> Option<Request> {
        if now_ms >= self.next_replan_ms.min(self.due_replan_at()) {
            // The priors are fitted again on their own times, not for checks alone: a site's
            // pooled prior fitted on a minute of checks made its pages that never change read
            // as changing at least a few times a day.
            let fit_priors = now_ms >= self.next_replan_ms.min(self.dirty_replan_at());
            self.replan(now_ms, fit_priors);
        }
        let popped = self.frontier.pop(now_ms)?;
        self.sites[popped.site].requests += 1;
        let advance = if self.is_failing(popped.url) {
            1.0 // its retries are outside the plan, which left it out
        } else {
            self.unplanned_advance(popped.url, now_ms)
        };
        self.sites[popped.site].extra_since_plan += advance;
        if advance > 0.0 {
            self.advance_in_flight.insert(popped.url, advance);
        }
        self.urls[popped.url].in_flight = true;
        Some(Request {
            url: popped.url,
            host: popped.host,
            site: popped.site,
            kind: self.urls[popped.url].kind,
        })
    }

    /// When [`Scheduler::poll_request`] may next have something to do (`None`: never, until an
    /// event comes).
    pub fn poll_timeout(&mut self) -> Option<i64> {
        let wake = self.frontier.next_wake();
        let replan = self.due_replan_at();
        match wake {
            Some(w) => Some(w.min(replan).min(self.next_replan_ms)),
            None if replan < i64::MAX => Some(replan),
            None => None,
        }
    }

    /// When the next request may go as things stand (`None`: nothing is queued): unlike
    /// [`Scheduler::poll_timeout`], never a re-plan's time.
    pub fn next_request_at(&mut self) -> Option<i64> {
        self.frontier.next_wake()
    }

    /// When a plan is due before its regular time (`i64::MAX`: not before): at once before the
    /// first plan; when URLs were added or retired since the last, [`DIRTY_REPLAN_GAP_MS`] after
    /// it (new URLs are due at once meanwhile anyway); when its URLs have had as many checks
    /// since it as there are URLs, [`EVIDENCE_REPLAN_GAP_MS`] after it.
    fn due_replan_at(&self) -> i64 {
        let Some(last) = self.last_replan_ms else {
            return i64::MIN;
        };
        let mut at = self.dirty_replan_at();
        if self.checks_since_replan >= self.urls_at_replan.max(1) {
            at = at.min(last.saturating_add(EVIDENCE_REPLAN_GAP_MS));
        }
        at
    }

    /// When URLs added or retired since the last plan with the priors fitted are planned in
    /// with them fitted again (`i64::MAX`: none were): [`DIRTY_REPLAN_GAP_MS`] after it, at once
    /// before the first.
    fn dirty_replan_at(&self) -> i64 {
        match (self.dirty, self.last_fit_ms) {
            (false, _) => i64::MAX,
            (true, None) => i64::MIN,
            (true, Some(last)) => last.saturating_add(DIRTY_REPLAN_GAP_MS),
        }
    }

    /// URLs due by `at_ms` still waiting (a one-pass run ends when none is left).
    pub fn due_by(&self, at_ms: i64) -> usize {
        self.frontier.due_by(at_ms, |url| self.urls[url].host())
    }

    /// A check of `url` was made; the host is free again once this returns.
    pub fn handle_fetched(&mut self, now_ms: i64, url: UrlKey, fetched: Fetched) {
        if !self.urls[url].in_flight {
            return; // reported already: the host may be busy with another request by now
        }
        self.advance_in_flight.remove(&url);
        let (host, site) = (self.urls[url].host(), self.urls[url].site());
        let gate = fetched.at_ms.max(now_ms) + self.hosts[host].min_interval_ms;
        self.frontier
            .close_until(host, gate.max(fetched.host_open_at_ms.unwrap_or(i64::MIN)));
        self.frontier.release(host);
        if fetched.extra_requests > 0 {
            self.charge(site, now_ms, fetched.extra_requests);
        }
        if let Some(lesson) = fetched.lesson {
            self.hosts[host].trust.observe(lesson);
        }
        let trust_lm = self.hosts[host].trust.trust_last_modified();
        let feed_counted = self.feed_counted_past_last_check(url);
        if self.config.policy == PolicyKind::Nutch && self.urls[url].nutch_interval_days().is_none()
        {
            let start = self.nutch_interval_days(url);
            self.urls[url].start_nutch_interval(start);
        }
        self.checks_since_replan += 1;
        if self.urls[url].kind == UrlKind::Page && fetched.seen.got_copy() {
            self.sites[site].checks += 1;
        }
        self.feed_fetched(url, fetched.seen);
        let u = &mut self.urls[url];
        u.in_flight = false;
        if let Some(floor) = fetched.min_interval_ms {
            u.set_min_interval_ms(floor);
        }
        // A check whose copy shows the feed's events since the last false counts its span.
        let taken_back = self.judge_announcements(url, fetched.at_ms, fetched.seen);
        let feed_counted = feed_counted.filter(|_| !taken_back);
        let u = &mut self.urls[url];
        u.observe(&fetched, trust_lm, self.config.policy, feed_counted);
        self.count_failure(url, host, fetched.seen, fetched.at_ms);
        self.replan_one(url);
        if !fetched.seen.got_copy() {
            let interval = self.retry_interval_ms(url, fetched.seen);
            // (Read before the check's retry is set: whether this check was an early one.)
            let cause = match self.urls[url].retry() {
                Some((_, RetryCause::Recalled)) => RetryCause::RecallSpent,
                _ => RetryCause::Failure,
            };
            self.urls[url].set_retry(Some((fetched.at_ms + interval, cause)));
        }
        self.schedule(url, fetched.at_ms.max(now_ms));
    }

    /// Number of URLs known.
    pub fn url_count(&self) -> usize {
        self.urls.len()
    }
}

#[cfg(test)]
mod tests;
