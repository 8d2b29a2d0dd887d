//! What every refresher task shares: the store, the clock, the host pool, the sites with their
//! fetchers, robots.txt, the scheduler ([`Ledger`]), the dedup engine and the run's counters.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use url::Url;

use crate::clock::SharedClock;
use crate::fetch::{FetchConfig, Fetcher};
use crate::metrics::Metrics;
use crate::politeness::{HostPool, Journal, Stop};
use crate::schedule::Site;
use crate::store::Store;
use crate::store::discovered::Discovered;
use crate::store::refusals::{Refusal, RefusalReason};
use crate::store::sites::SiteRecord;
use crate::store::urls::UrlRow;

use super::dedup_state::Dedup;
use super::lease_state::Leasing;
use super::ledger::Ledger;
use super::robots_cache::RobotsCache;
use super::url_locks::UrlLocks;
use super::waits::WaitSums;
use super::{RunOptions, RunSummary};

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
    /// Its pages (by row id) that discovery read as sitemaps, and when
    /// ([`super::sitemap_kinds::probe_page`]).
    pub probed_pages: std::sync::Mutex<std::collections::HashMap<i64, Probed>>,
}

/// A page of a site that discovery read as a sitemap (`sitemap_kinds::probe_page`): in which
/// pass, and until when (clock ms) no pass reads it so again.
#[derive(Debug, Clone, Copy)]
pub struct Probed {
    pub(super) pass_started_ms: i64,
    pub(super) until_ms: i64,
}

/// Counters of a run, updated by every task.
#[derive(Debug, Default)]
pub struct Counters {
    /// Page checks recorded.
    pub checks: AtomicU64,
    /// Checks that saw a change.
    pub changes: AtomicU64,
    /// Errors recorded.
    pub errors: AtomicU64,
    /// Page bodies whose main text was extracted.
    pub extractions: AtomicU64,
    /// Where the page checks spent their time.
    pub waits: WaitSums,
}

impl Counters {
    /// A snapshot.
    pub fn summary(&self) -> RunSummary {
        RunSummary {
            checks: self.checks.load(Ordering::Relaxed),
            changes: self.changes.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
            extractions: self.extractions.load(Ordering::Relaxed),
            waits: self.waits.snapshot(),
            ..RunSummary::default()
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
    /// robots.txt per origin.
    pub robots: RobotsCache,
    /// Every revisit decision: the scheduler, with the store's ids.
    pub ledger: Ledger,
    /// Set when shutdown was asked: no new check starts, and no task waits on a host.
    pub stop: Stop,
    /// The run's counters.
    pub counters: Counters,
    /// What the run exposes to Prometheus and the status line (reported where things happen).
    pub metrics: Metrics,
    /// The duplicate and canonical-page engine, loaded from the store at start.
    pub dedup: Dedup,
    /// One check of a URL at a time, from reading its row to the dedup engine's verdict.
    pub url_locks: UrlLocks,
    /// With several workers on one database, this worker's leases on hosts.
    pub leasing: Option<Leasing>,
    /// When this worker started (clock ms): a row stored since was not seen by its start's
    /// declaration of the kinds its schedule names.
    pub started_ms: i64,
}

impl Context {
    /// Registers the sites in the store and builds their clients.
    pub async fn new(
        store: Store,
        clock: SharedClock,
        sites: Vec<Site>,
        options: &RunOptions,
        ledger: Ledger,
        stop: Stop,
        leasing: Option<Leasing>,
    ) -> anyhow::Result<Context> {
        let started_ms = clock.now_ms();
        let mut states = Vec::with_capacity(sites.len());
        for site in sites {
            let record = SiteRecord {
                name: &site.name,
                weight: site.weight,
                requests_per_day: site.requests_per_day,
                source_file: site.source.to_str(),
            };
            let id = store.upsert_site(&record, clock.now_ms()).await?;
            store
                .set_site_change_signal(id, site.change_signal.as_str())
                .await?;
            ledger.add_site(id, site.weight, site.requests_per_day, clock.now_ms());
            if leasing.is_none()
                && let Some((credit, at_ms)) = store.site_budget(id).await?
            {
                ledger.restore_budget(id, credit, at_ms, clock.now_ms());
            }
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
                allow_networks: site.allow_networks.clone(),
            })?;
            states.push(SiteState {
                id,
                site,
                fetcher,
                agent_token,
                probed_pages: Default::default(),
            });
        }
        if leasing.is_some() {
            // On PostgreSQL each site's credit is in its pool, handed out at the first lease
            // round (`leases::round`): a new bucket holds and refills nothing till then.
            ledger.hold_no_budget(clock.now_ms());
        }
        let dedup = Dedup::load(&store, crate::dedup::DedupConfig::default()).await?;
        let mut pool = HostPool::new(clock.clone())
            .with_stop(stop.clone())
            .with_patience(crate::politeness::CLOSED_HOST_PATIENCE)
            .with_journal(Journal::new(store.clone(), clock.clone()));
        if let Some(leasing) = &leasing {
            pool = pool.with_held_hosts(leasing.held.clone());
        }
        Ok(Context {
            dedup,
            pool,
            robots: RobotsCache::default(),
            ledger,
            store,
            clock,
            sites: states,
            stop,
            counters: Counters::default(),
            metrics: Metrics::new(),
            url_locks: Default::default(),
            leasing,
            started_ms,
        })
    }

    /// The site with row id `id`.
    pub fn site(&self, id: i64) -> Option<&SiteState> {
        self.sites.iter().find(|s| s.id == id)
    }

    /// Adds URLs found outside a discovery pass (links of a page, entries of a feed) and hands
    /// their rows to the scheduler at once.
    pub async fn add_found(&self, found: &[Discovered]) -> anyhow::Result<()> {
        if found.is_empty() {
            return Ok(());
        }
        self.store
            .upsert_discovered(found, self.clock.now_ms())
            .await?;
        let mut rows = Vec::with_capacity(found.len());
        for d in found {
            if let Some(row) = self.store.url_row(&d.url).await? {
                rows.push(row);
            }
        }
        self.sync_rows(&rows);
        Ok(())
    }

    /// Hands stored URL rows to the scheduler: new ones are added (with what an earlier run
    /// learnt), known ones get their new hints and known changes. Pages the schedule's
    /// `include` / `exclude` refuse and that a check has already refused (it filed the refusal
    /// and took them out of the plan, [`super::fetching`]) are left out, so a restart does not
    /// hand each out to refuse it again.
    pub fn sync_rows(&self, rows: &[UrlRow]) {
        let refused = |row: &&UrlRow| {
            row.kind == "page"
                && row.next_due_ms.is_none()
                && self.site(row.site_id).is_some_and(|site| {
                    site.site.has_url_filters()
                        && Url::parse(&row.url)
                            .is_ok_and(|url| site.site.refused_by(&url).is_some())
                })
        };
        if rows.iter().any(|row| refused(&row)) {
            let kept: Vec<UrlRow> = rows.iter().filter(|row| !refused(row)).cloned().collect();
            self.ledger
                .sync(&kept, self.clock.now_ms(), |row| self.host_gate(row));
            return;
        }
        self.ledger
            .sync(rows, self.clock.now_ms(), |row| self.host_gate(row));
    }

    /// Adds the URL of `row` to the scheduler again under a key of its row's kind and site
    /// ([`Ledger::rekey`]); answers whether it is checked here from now on. (What else a row
    /// of another kind changes: [`super::kinds::took_its_kind`].)
    pub fn rekey(&self, row: &UrlRow) -> bool {
        (self.ledger).rekey(self.clock.now_ms(), row, |row| self.host_gate(row))
    }

    /// Hands the scheduler what stored rows say of URLs another worker checked (their
    /// evidence and due times replace what this worker knew), adding the ones it lacks; then
    /// saves the plans of the pages whose wait for a feed the feeds' rows ended here, so that
    /// their rows stop naming the feed now rather than at the save of every plan.
    pub async fn take_over_rows(&self, rows: &[UrlRow]) {
        let ended = (self.ledger).take_over(rows, self.clock.now_ms(), |row| self.host_gate(row));
        if let Err(err) = self.save_plans_now(&ended).await {
            tracing::warn!(error = %err, "the plans of pages no longer waiting for a feed were not saved: the next save of every plan takes them up");
            self.count_error();
        }
    }

    /// Saves the plans of `url_ids` now, written and taken now: other workers take them up at
    /// their next round. (Read before the plans are: a check whose plan was taken after them
    /// was written later, and its commit, should it land after this save, is not taken for an
    /// older plan.)
    pub async fn save_plans_now(&self, url_ids: &[i64]) -> sqlx::Result<()> {
        if url_ids.is_empty() {
            return Ok(());
        }
        let written_ms = Some(self.clock.now_ms());
        let mut plans = self.ledger.plans_of(url_ids);
        for plan in &mut plans {
            plan.written_ms = written_ms;
            plan.taken_ms = written_ms;
        }
        if plans.is_empty() {
            return Ok(());
        }
        self.store.save_plan(plans).await
    }

    /// A row's politeness key, its host's interval and when the host opens.
    fn host_gate(&self, row: &UrlRow) -> (String, i64, i64) {
        let schedule = self
            .site(row.site_id)
            .map_or(Duration::ZERO, |s| s.site.host_rate.min_interval());
        let key = crate::politeness::key_of(&row.url);
        let interval = self
            .robots
            .interval(&key)
            .map_or(schedule, |i| i.max(schedule));
        // Open when the pool says: a gap or closure restored from an earlier run holds.
        let open_at = self.pool.next_allowed_ms(&key);
        (key, crate::clock::duration_ms(interval), open_at)
    }

    /// Records URLs refused by one of freshet's rules for `site` (`refused`: URL, reason, the
    /// rule that decided), found in `source`; `explain` shows them. Not errors: nothing failed.
    pub async fn refuse(
        &self,
        site: &SiteState,
        source: Option<&str>,
        refused: Vec<(String, RefusalReason, String)>,
    ) -> anyhow::Result<()> {
        let rows: Vec<Refusal> = refused
            .into_iter()
            .map(|(url, reason, rule)| Refusal {
                url,
                reason,
                rule,
                site: Some(site.site.name.clone()),
                source: source.map(str::to_string),
            })
            .collect();
        self.store
            .record_refusals(self.clock.now_ms(), &rows)
            .await?;
        Ok(())
    }

    /// Counts an error.
    pub fn count_error(&self) {
        Counters::add(&self.counters.errors, 1);
    }

    /// Whether another worker may hold the host of `origin` now (several workers on one
    /// database): nothing is asked of it here, its holder reads what is there.
    pub fn held_elsewhere(&self, origin: &str) -> bool {
        self.leasing
            .as_ref()
            .is_some_and(|leasing| leasing.held_elsewhere(origin, self.clock.now_ms()))
    }

    /// Whether shutdown was asked.
    pub fn is_stopping(&self) -> bool {
        self.stop.is_stopped()
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
