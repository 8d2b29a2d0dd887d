//! What every refresher task shares: the store, the clock, the host pool, the sites with their
//! fetchers and plans, learnt validator trust, and the run's counters.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::clock::SharedClock;
use crate::estimate::{Prior, ValidatorCheck, ValidatorTrust};
use crate::fetch::{FetchConfig, Fetcher};
use crate::plan::Multipliers;
use crate::politeness::HostPool;
use crate::schedule::Site;
use crate::store::Store;
use crate::store::sites::SiteRecord;
use crate::store::urls::UrlRow;

use super::dedup_hook::Dedup;
use super::robots_cache::RobotsCache;
use super::{PolicyChoice, RunOptions, RunSummary};

/// The User-Agent freshet sends unless a site sets its own.
pub const DEFAULT_USER_AGENT: &str = concat!(
    "freshet/",
    env!("CARGO_PKG_VERSION"),
    " (+https://github.com/freshet/freshet)"
);

/// A site of the schedules, with what the refresher keeps for it.
pub struct SiteState {
    /// The site's row id.
    pub id: i64,
    /// The validated schedule entry.
    pub site: Site,
    /// Its HTTP client (user agent, timeouts and body cap are per site).
    pub fetcher: Fetcher,
    /// The robots.txt product token derived from its user agent.
    pub agent_token: String,
}

/// A site's last full plan, for incremental updates between re-plans.
#[derive(Debug, Clone)]
pub struct SitePlan {
    /// The solved multipliers: a page's rate is `plan::rate_for(page, &multipliers)`.
    pub multipliers: Multipliers,
    /// Host id -> the planner's host index.
    pub host_index: HashMap<i64, usize>,
    /// The site's pooled prior (empirical Bayes over its pages' estimates).
    pub prior: Prior,
    /// Hosts whose sitemap changefreq hints proved wrong: ignored.
    pub distrusted_hint_hosts: std::collections::HashSet<i64>,
}

/// Counters of a run, updated by every task.
#[derive(Debug, Default)]
pub struct Counters {
    /// Requests sent, of every kind.
    pub requests: AtomicU64,
    /// Page checks recorded.
    pub checks: AtomicU64,
    /// Checks that saw a change.
    pub changes: AtomicU64,
    /// Errors recorded.
    pub errors: AtomicU64,
}

impl Counters {
    /// A snapshot.
    pub fn summary(&self) -> RunSummary {
        RunSummary {
            requests: self.requests.load(Ordering::Relaxed),
            checks: self.checks.load(Ordering::Relaxed),
            changes: self.changes.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
        }
    }

    /// Adds `n` to a counter.
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

/// Shared state of one run.
pub struct Context {
    /// The database.
    pub store: Store,
    /// The one clock.
    pub clock: SharedClock,
    /// Per-host politeness.
    pub pool: HostPool,
    /// The sites, by position; `site(id)` finds one by row id.
    pub sites: Vec<SiteState>,
    /// Which revisit policy plans the rates.
    pub policy: PolicyChoice,
    /// robots.txt per origin.
    pub robots: RobotsCache,
    /// Set when shutdown was asked: no new check starts.
    pub stopping: AtomicBool,
    /// The run's counters.
    pub counters: Counters,
    /// Each site's last plan (a std Mutex: nothing async happens while it is held).
    pub plans: Mutex<HashMap<i64, SitePlan>>,
    /// Learnt validator trust per host id (std Mutex, never held across an await).
    pub trust: Mutex<HashMap<i64, ValidatorTrust>>,
    /// When each site is next re-discovered (clock ms).
    pub next_discovery: Mutex<HashMap<i64, i64>>,
    /// The duplicate and canonical-page engine, loaded from the store at start.
    pub dedup: Dedup,
}

impl Context {
    /// Registers the sites in the store and builds their clients.
    pub async fn new(
        store: Store,
        clock: SharedClock,
        sites: Vec<Site>,
        options: &RunOptions,
    ) -> anyhow::Result<Context> {
        let mut states = Vec::with_capacity(sites.len());
        for site in sites {
            let record = SiteRecord {
                name: &site.name,
                weight: site.weight,
                requests_per_day: site.requests_per_day,
                source_file: site.source.to_str(),
            };
            let id = store.upsert_site(&record, clock.now_ms()).await?;
            let user_agent = site
                .user_agent
                .clone()
                .unwrap_or_else(|| DEFAULT_USER_AGENT.into());
            let agent_token = product_token(&user_agent);
            let fetcher = Fetcher::new(FetchConfig {
                user_agent,
                connect_timeout: Duration::from_secs(10).min(site.timeout),
                read_timeout: Duration::from_secs(20).min(site.timeout),
                total_timeout: site.timeout,
                max_body_bytes: site.max_body,
                max_redirects: 5,
                resolve: options.resolve.clone(),
            })?;
            states.push(SiteState {
                id,
                site,
                fetcher,
                agent_token,
            });
        }
        let dedup = Dedup::load(&store, crate::dedup::DedupConfig::default()).await?;
        // What earlier runs learnt about each host's validators.
        let trust: HashMap<i64, ValidatorTrust> = store
            .host_trust()
            .await?
            .into_iter()
            .filter_map(|(id, json)| Some((id, serde_json::from_str(&json).ok()?)))
            .collect();
        Ok(Context {
            dedup,
            pool: HostPool::new(clock.clone()),
            robots: RobotsCache::default(),
            store,
            clock,
            sites: states,
            policy: options.policy,
            stopping: AtomicBool::new(false),
            counters: Counters::default(),
            plans: Mutex::new(HashMap::new()),
            trust: Mutex::new(trust),
            next_discovery: Mutex::new(HashMap::new()),
        })
    }

    /// The site with row id `id`.
    pub fn site(&self, id: i64) -> Option<&SiteState> {
        self.sites.iter().find(|s| s.id == id)
    }

    /// The earliest time any site is due for discovery.
    pub fn next_discovery_ms(&self) -> Option<i64> {
        let next = self
            .next_discovery
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        next.values().copied().min()
    }

    /// The learnt validator trust of a host.
    pub fn trust_of(&self, host_id: i64) -> ValidatorTrust {
        let trust = self.trust.lock().unwrap_or_else(|e| e.into_inner());
        trust.get(&host_id).copied().unwrap_or_default()
    }

    /// Learns from one check what a host's validators are worth; returns the new state as
    /// JSON, for the store.
    pub fn learn_trust(&self, host_id: i64, lesson: ValidatorCheck) -> String {
        let mut trust = self.trust.lock().unwrap_or_else(|e| e.into_inner());
        let state = trust.entry(host_id).or_default();
        state.observe(lesson);
        serde_json::to_string(state).unwrap_or_default()
    }

    /// The pooled prior of a site's last plan, and whether the host's changefreq hints are
    /// still believed.
    pub fn prior_of(&self, site_id: i64, host_id: i64) -> (Prior, bool) {
        let plans = self.plans.lock().unwrap_or_else(|e| e.into_inner());
        plans.get(&site_id).map_or((Prior::default(), true), |p| {
            (p.prior, !p.distrusted_hint_hosts.contains(&host_id))
        })
    }

    /// A page's visits per day after its estimate moved: the site's last solved multipliers
    /// applied to this one page (O(1)); before any plan, one visit a day.
    pub fn planned_rate(
        &self,
        site: &SiteState,
        row: &UrlRow,
        rate_per_day: f64,
        min_interval_ms: Option<i64>,
    ) -> f64 {
        let plans = self.plans.lock().unwrap_or_else(|e| e.into_inner());
        let Some(plan) = plans.get(&site.id) else {
            return 1.0;
        };
        let host = plan
            .host_index
            .get(&row.host_id)
            .copied()
            .unwrap_or(usize::MAX);
        let mut row = row.clone();
        row.min_interval_ms = min_interval_ms.or(row.min_interval_ms);
        let page = super::planning::page_for(self.policy, site, &row, rate_per_day, host);
        let f = crate::plan::rate_for(&page, &plan.multipliers);
        if f.is_finite() && f > 0.0 { f } else { 1e-3 }
    }

    /// When a site is next re-discovered, if known in this run.
    pub fn next_discovery_of(&self, site_id: i64) -> Option<i64> {
        let next = self
            .next_discovery
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        next.get(&site_id).copied()
    }

    /// Sets when a site is next re-discovered.
    pub fn set_next_discovery(&self, site_id: i64, at_ms: i64) {
        let mut next = self
            .next_discovery
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        next.insert(site_id, at_ms);
    }

    /// Counts an error.
    pub fn count_error(&self) {
        Counters::add(&self.counters.errors, 1);
    }
}

/// The robots.txt product token of a User-Agent: its first word up to `/` ("freshet").
pub fn product_token(user_agent: &str) -> String {
    user_agent
        .split(|c: char| c == '/' || c.is_whitespace())
        .next()
        .unwrap_or("freshet")
        .to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn product_token_is_the_first_word() {
        assert_eq!(super::product_token(super::DEFAULT_USER_AGENT), "freshet");
        assert_eq!(super::product_token("MyBot/2.0 (x)"), "MyBot");
    }
}
