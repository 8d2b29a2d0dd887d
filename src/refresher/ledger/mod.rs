//! The scheduler inside the daemon: one [`Scheduler`] behind a std Mutex (nothing async happens
//! while it is held), with the store's row ids mapped to the scheduler's keys. Every revisit
//! decision of `freshet run` is the scheduler's; this only translates ids and rows.
//!
//! Once the refresher's loop starts the samples' grid, whoever takes the lock first after one of
//! its instants has passed judges every copy at that instant before anything changes
//! ([`super::sample_grid`]).

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use crate::clock::SharedClock;
use crate::estimate::{Stats, changefreq_per_day};
use crate::politeness::HeldHosts;
use crate::scheduler::{
    Fetched, HostKey, NewUrl, Request, Restored, Scheduler, SchedulerConfig, SiteKey, UrlKey,
    UrlKind, UrlSummary, section_of,
};
use crate::store::reports::FreshnessSample;
use crate::store::urls::UrlRow;

mod budget;
mod feed_reads;
mod plans;
mod rekey;
mod trust;

pub use trust::StoredTrust;

use super::sample_grid::SampleGrid;
use super::url_ids::UrlIds;

/// A request the scheduler handed out, in the store's terms.
#[derive(Debug, Clone)]
pub struct Due {
    /// The URL's row id (its text and the rest of its row are read from the store by the check,
    /// not kept in memory for every URL).
    pub url_id: i64,
    /// Page or feed.
    pub kind: UrlKind,
    /// Its site's row id.
    pub site_id: i64,
}

/// What a stored row says of a URL's past, for the scheduler.
fn restored_of(row: &UrlRow) -> Restored {
    let stats: Stats = row
        .stats
        .as_deref()
        .and_then(|json| serde_json::from_str(json).ok())
        .unwrap_or_default();
    Restored {
        // The copy's time, not the last check's: one that failed since leaves the copy as old.
        last_check_ms: row.copy_ms,
        last_attempt_ms: row.last_checked_ms,
        stats,
        failures: u8::try_from(row.failures.max(0)).unwrap_or(u8::MAX),
        due_ms: row.next_due_ms,
        min_interval_ms: row.min_interval_ms.unwrap_or(0),
        known_change_ms: row.known_change_ms,
        checks: u64::try_from(row.checks).unwrap_or(0),
        planned_per_day: row.planned_per_day,
        feed_stamped_reads: feed_reads::stored_stamped_reads(row),
        feed_shown: feed_reads::stored_shown(row),
    }
}

/// The scheduler with the store's ids.
pub struct Ledger {
    inner: Mutex<Inner>,
    /// Told whenever a URL handed out comes back (fetched, deferred, refused, a feed read): its
    /// host may take its next request now. The refresher's loop hands that out at once, not
    /// once the check's commit and filing have ended ([`Ledger::returned`]).
    returned: tokio::sync::Notify,
    /// With several workers on one database, the hosts this one holds: a host added while
    /// another worker holds it is handed to that worker at once.
    held: Option<HeldHosts>,
}

struct Inner {
    sched: Scheduler,
    /// The row id of each URL key, and back.
    urls: UrlIds,
    host_keys: HashMap<i64, HostKey>,
    /// The scheduler's host of each politeness key: the store's `http://x` and `https://x`
    /// rows are one host for the frontier's gate, as for the pool.
    politeness_hosts: HashMap<String, HostKey>,
    site_keys: HashMap<i64, SiteKey>,
    site_ids: Vec<i64>,
    /// Each site's budget spend (by site key) as last handed out to be saved
    /// ([`Ledger::budget_saves`]).
    saved_spent: Vec<f64>,
    /// When a URL was last added (a one-pass run also fetches what its own reading found).
    last_added_ms: Option<i64>,
    /// The samples' grid once started, with the samples judged and not taken yet.
    sampling: Option<Sampling>,
    /// Feeds' pages an earlier run's last read listed (row ids, and the change it listed of
    /// each page that waited for it), and those its reads found to have left it, put back at
    /// their first read.
    stored_listings: HashMap<UrlKey, feed_reads::StoredListing>,
    /// The pages (row ids) each feed's stored reads found to have left it, by the feed's row
    /// id, while it is not read here ([`Inner::take_up_left`]).
    feeds_left: HashMap<i64, HashSet<i64>>,
    /// Pages added from their rows that waited for a feed when last planned, by the feed's
    /// row id, while that feed is not known here or its host is held elsewhere.
    stored_waits: HashMap<i64, HashSet<UrlKey>>,
    /// The feed (row id) each page of `stored_waits` waits for as its latest row says: a
    /// later row that names another, or none, leaves a stale entry there, which this does
    /// not match.
    parked_waits: HashMap<UrlKey, i64>,
}

/// What the store keeps of a URL after its check ([`Ledger::fetched`]).
pub struct AfterCheck {
    /// Its estimate and plan.
    pub summary: UrlSummary,
    /// Its folded evidence (JSON).
    pub stats: String,
    /// The feed (row id) it waits for after the check, as kept for a later run
    /// ([`crate::scheduler::Scheduler::waits_to_keep`]).
    pub waits_for_feed_id: Option<i64>,
}

/// The instants the copies are judged at, on the refresher's clock, and what was judged.
struct Sampling {
    clock: SharedClock,
    grid: SampleGrid,
    judged: Vec<FreshnessSample>,
}

impl Inner {
    /// Every site's freshness at `now_ms`, as the store keeps it.
    fn freshness(&self, now_ms: i64) -> Vec<FreshnessSample> {
        self.sched
            .freshness(now_ms)
            .into_iter()
            .map(|(site, f)| FreshnessSample {
                site_id: self.site_ids[site],
                at_ms: now_ms,
                copies: f.copies as i64,
                known_stale: f.known_stale as i64,
                weight: f.weight,
                mean_expected_age_days: f.mean_expected_age_days,
                mean_p_stale: f.mean_p_stale,
            })
            .collect()
    }

    /// Judges the copies at every instant of the grid that has passed, with what is held now:
    /// nothing changed since, as every change takes the lock first.
    fn judge_passed_instants(&mut self) {
        let Some(sampling) = self.sampling.as_mut() else {
            return;
        };
        let now_ms = sampling.clock.now_ms();
        if now_ms < sampling.grid.next_ms() {
            return;
        }
        let instants: Vec<i64> = sampling.grid.passed(now_ms).collect();
        let judged: Vec<FreshnessSample> = instants
            .into_iter()
            .flat_map(|at_ms| self.freshness(at_ms))
            .collect();
        if let Some(sampling) = self.sampling.as_mut() {
            sampling.judged.extend(judged);
        }
    }
}

impl Ledger {
    /// An empty ledger.
    pub fn new(config: SchedulerConfig) -> Self {
        Self {
            inner: Mutex::new(Inner {
                sched: Scheduler::new(config),
                urls: UrlIds::default(),
                host_keys: HashMap::new(),
                politeness_hosts: HashMap::new(),
                site_keys: HashMap::new(),
                site_ids: Vec::new(),
                saved_spent: Vec::new(),
                last_added_ms: None,
                sampling: None,
                stored_listings: HashMap::new(),
                feeds_left: HashMap::new(),
                stored_waits: HashMap::new(),
                parked_waits: HashMap::new(),
            }),
            returned: tokio::sync::Notify::new(),
            held: None,
        }
    }

    /// Hands out requests only for hosts `held` holds (several workers on one database).
    pub fn with_held_hosts(mut self, held: Option<HeldHosts>) -> Self {
        self.held = held;
        self
    }

    /// The politeness key of every host the scheduler knows.
    pub fn politeness_keys(&self) -> Vec<String> {
        self.lock().politeness_hosts.keys().cloned().collect()
    }

    /// This worker gained the host `key` (`open_at_ms`: when its politeness lets it be
    /// contacted, as the database says), or another worker holds it (`None`).
    pub fn set_held(&self, key: &str, open_at_ms: Option<i64>) {
        let mut inner = self.lock();
        if let Some(&host) = inner.politeness_hosts.get(key) {
            match open_at_ms {
                Some(open_at) => {
                    inner.sched.close_host(host, open_at);
                    inner.sched.host_gained(host);
                    inner.take_up_waits_on_held_feeds();
                }
                None => inner.sched.set_host_elsewhere(host, true),
            }
        }
    }

    /// Takes up what the rows say of URLs it knows (another worker checked them: their
    /// evidence, due time, known change and wait for a feed), and adds the ones it does not.
    /// Returns the pages whose wait for a feed the feeds' rows ended here
    /// ([`Inner::take_up_left`]): their plans to save now.
    pub fn take_over(
        &self,
        rows: &[UrlRow],
        now_ms: i64,
        host_gate: impl Fn(&UrlRow) -> (String, i64, i64),
    ) -> Vec<i64> {
        let mut ended = Vec::new();
        {
            let mut inner = self.lock();
            for row in rows {
                if let Some(key) = inner.urls.key_of(row.id) {
                    // (A feed's listing is taken from another worker's latest read only.)
                    let latest =
                        (row.copy_ms).is_some_and(|at| inner.sched.is_latest_copy(key, at));
                    inner.sched.restore(key, restored_of(row));
                    if latest {
                        inner.keep_stored_listing(key, row);
                    }
                    ended.extend(inner.take_up_left(key, row, now_ms));
                }
            }
            // Once every feed among the rows is taken up (when it was last read).
            for row in rows {
                if let Some(key) = inner.urls.key_of(row.id) {
                    inner.take_up_stored_wait(key, row);
                }
            }
        }
        self.sync(rows, now_ms, host_gate);
        ended
    }

    /// Of `rows` (on hosts held here), those holding a copy newer than the scheduler knows
    /// (another worker's check that committed after this worker took the host), or a feed's
    /// read saved again after this worker gained its host and before it read it
    /// ([`crate::scheduler::Scheduler::is_latest_copy`]); or a feed it does not know, a sitemap
    /// row that a worker's start made a feed ([`crate::store::Store::declare_kinds`]: its id is
    /// older than the new rows read by id).
    pub fn newer_than_known(&self, rows: Vec<UrlRow>) -> Vec<UrlRow> {
        let inner = self.lock();
        rows.into_iter()
            .filter(|row| {
                let copy_ms = restored_of(row).last_check_ms;
                match (inner.urls.key_of(row.id), copy_ms) {
                    (Some(key), Some(copy_ms)) => inner.sched.is_latest_copy(key, copy_ms),
                    (None, _) => row.kind == "feed",
                    _ => false,
                }
            })
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.judge_passed_instants();
        inner
    }

    /// Starts judging the copies at the instants every `every_ms` of `clock`, from the next.
    pub fn start_sampling(&self, clock: SharedClock, every_ms: i64) {
        let grid = SampleGrid::after(clock.now_ms(), every_ms);
        self.lock().sampling = Some(Sampling {
            clock,
            grid,
            judged: Vec::new(),
        });
    }

    /// The next instant the copies are judged at, once sampling has started.
    pub fn next_sample_ms(&self) -> Option<i64> {
        self.lock().sampling.as_ref().map(|s| s.grid.next_ms())
    }

    /// Whether samples judged wait for [`Ledger::take_samples`].
    pub fn samples_waiting(&self) -> bool {
        self.lock()
            .sampling
            .as_ref()
            .is_some_and(|s| !s.judged.is_empty())
    }

    /// The samples judged at the instants passed since the last call, oldest first.
    pub fn take_samples(&self) -> Vec<FreshnessSample> {
        self.lock()
            .sampling
            .as_mut()
            .map(|s| std::mem::take(&mut s.judged))
            .unwrap_or_default()
    }

    /// Adds a site with its weight and budget.
    pub fn add_site(&self, site_id: i64, weight: f64, requests_per_day: f64, now_ms: i64) {
        let mut inner = self.lock();
        let key = inner.sched.add_site(weight, requests_per_day, now_ms);
        inner.site_keys.insert(site_id, key);
        inner.site_ids.push(site_id);
        inner.saved_spent.push(0.0);
    }

    /// A discovery pass of the site read `documents` sitemap documents; returns the re-reads
    /// per day its plan finds worth their requests (`None`: no limit but the cron).
    pub fn sitemaps_read(&self, site_id: i64, documents: usize) -> Option<f64> {
        let mut inner = self.lock();
        let site = inner.site_keys.get(&site_id).copied()?;
        inner.sched.set_sitemap_documents(site, documents);
        inner.sched.sitemap_reads_per_day(site)
    }

    /// A sitemap read listed these URLs: (row id, read at, lastmod), clock ms (see
    /// [`crate::scheduler::Scheduler::handle_sitemap_listing`]).
    pub fn sitemap_listings(&self, listings: &[(i64, i64, i64)]) {
        let mut inner = self.lock();
        for &(row_id, read_ms, lastmod_ms) in listings {
            if let Some(key) = inner.urls.key_of(row_id) {
                inner
                    .sched
                    .handle_sitemap_listing(key, read_ms, Some(lastmod_ms));
            }
        }
    }

    /// Adds the rows' URLs it does not know (restoring what an earlier run learnt) and refreshes
    /// the hints and known changes of the ones it does. `host_gate` gives a row's politeness
    /// key, the host's interval and when it opens (its persisted back-off and gap).
    pub fn sync(
        &self,
        rows: &[UrlRow],
        now_ms: i64,
        host_gate: impl Fn(&UrlRow) -> (String, i64, i64),
    ) {
        let mut inner = self.lock();
        for row in rows {
            let kind = match row.kind.as_str() {
                "page" => UrlKind::Page,
                "feed" => UrlKind::Feed,
                _ => continue,
            };
            let Some(&site) = inner.site_keys.get(&row.site_id) else {
                continue; // a site no longer in the schedules
            };
            let changefreq = row.changefreq.as_deref().and_then(changefreq_per_day);
            if let Some(key) = inner.urls.key_of(row.id) {
                inner.sched.update_hints(key, changefreq, row.weight);
                if let Some(at) = row.known_change_ms {
                    inner.sched.handle_known_change(now_ms, key, at);
                }
                continue;
            }
            let host = match inner.host_keys.get(&row.host_id) {
                Some(&host) => host,
                None => {
                    let (key, interval, open_at) = host_gate(row);
                    let host = match inner.politeness_hosts.get(&key) {
                        Some(&host) => {
                            inner.sched.close_host(host, open_at);
                            host
                        }
                        None => {
                            let host = inner.sched.add_host(interval, open_at);
                            // Elsewhere unless leased here (a lease past its margin still
                            // counts: the pool refuses its permits until it is renewed).
                            if let Some(held) = &self.held
                                && !held.is_leased(&key)
                            {
                                inner.sched.set_host_elsewhere(host, true);
                            }
                            inner.politeness_hosts.insert(key, host);
                            host
                        }
                    };
                    inner.host_keys.insert(row.host_id, host);
                    host
                }
            };
            let key = inner.sched.add_url(
                now_ms,
                NewUrl {
                    site,
                    host,
                    kind,
                    weight: row.weight,
                    changefreq_per_day: changefreq,
                    true_rate: None,
                    section: section_of(&row.url),
                },
            );
            inner.sched.restore(key, restored_of(row));
            inner.keep_stored_listing(key, row);
            inner.urls.push(row.id, key);
            // (A page whose wait this ends, at a start or for a feed new here, keeps its row
            // naming the feed until its next check or the save of every plan.)
            inner.take_up_left(key, row, now_ms);
            inner.restore_stored_waits(key, row);
            inner.last_added_ms = Some(now_ms);
        }
    }

    /// The next request to make now, if any.
    pub fn poll(&self, now_ms: i64) -> Option<Due> {
        let mut inner = self.lock();
        let Request {
            url, kind, site, ..
        } = inner.sched.poll_request(now_ms)?;
        Some(Due {
            url_id: inner.urls.id_of(url),
            kind,
            site_id: inner.site_ids[site],
        })
    }

    /// When [`Ledger::poll`] may next have something.
    pub fn timeout(&self) -> Option<i64> {
        self.lock().sched.poll_timeout()
    }

    /// When the next request may go as things stand (not a re-plan's time).
    pub fn next_request_at(&self) -> Option<i64> {
        self.lock().sched.next_request_at()
    }

    /// When a URL was last added.
    pub fn last_added_ms(&self) -> Option<i64> {
        self.lock().last_added_ms
    }

    /// URLs due by `at_ms` still waiting.
    pub fn due_by(&self, at_ms: i64) -> usize {
        self.lock().sched.due_by(at_ms)
    }

    /// Reports a check; returns what the store should keep of the URL.
    pub fn fetched(&self, now_ms: i64, url_id: i64, fetched: Fetched) -> Option<AfterCheck> {
        let mut inner = self.lock();
        let key = inner.urls.key_of(url_id)?;
        inner.sched.handle_fetched(now_ms, key, fetched);
        inner.settle_parked(key);
        let after = AfterCheck {
            stats: serde_json::to_string(inner.sched.stats(key)).unwrap_or_default(),
            summary: inner.sched.summary(key),
            waits_for_feed_id: inner.wait_to_store(key),
        };
        drop(inner);
        self.returned.notify_one();
        Some(after)
    }

    /// Waits until a URL handed out comes back (at once if one came back since the last wait):
    /// a host's next URL is handed out as its last check's request ends. A loop that polled
    /// only as checks ended left a host idle while its last check committed and was filed: a
    /// database another process held locked stopped every host with a check waiting on it.
    pub async fn returned(&self) {
        self.returned.notified().await;
    }

    /// Hands a URL back unfetched (its site's credit with it), due again at `until_ms`.
    pub fn defer(&self, now_ms: i64, url_id: i64, until_ms: i64) {
        let mut inner = self.lock();
        if let Some(key) = inner.urls.key_of(url_id) {
            inner.sched.defer(now_ms, key, until_ms);
        }
        drop(inner);
        self.returned.notify_one();
    }

    /// Changes a URL's planner weight (the dedup engine's verdict).
    pub fn set_weight(&self, url_id: i64, weight: f64, now_ms: i64) {
        let mut inner = self.lock();
        if let Some(key) = inner.urls.key_of(url_id) {
            inner.sched.set_weight(now_ms, key, weight);
        }
    }

    /// A URL handed out can never be requested (its site or row is gone, it does not parse).
    pub fn refuse(&self, now_ms: i64, url_id: i64) {
        let mut inner = self.lock();
        if let Some(key) = inner.urls.key_of(url_id) {
            inner.sched.refuse(now_ms, key);
        }
        drop(inner);
        self.returned.notify_one();
    }

    /// A host is closed until `until_ms` (back-off, Retry-After): nothing of it is handed out
    /// before then.
    pub fn close_host(&self, host_id: i64, until_ms: i64) {
        let mut inner = self.lock();
        if let Some(&host) = inner.host_keys.get(&host_id) {
            inner.sched.close_host(host, until_ms);
        }
    }

    /// A host's politeness interval changed (a Crawl-delay was read).
    pub fn set_host_interval(&self, host_id: i64, interval_ms: i64) {
        let mut inner = self.lock();
        if let Some(&host) = inner.host_keys.get(&host_id) {
            inner.sched.set_host_interval(host, interval_ms);
        }
    }

    /// Every site's freshness at `now_ms`, as the store keeps it.
    pub fn freshness(&self, now_ms: i64) -> Vec<FreshnessSample> {
        self.lock().freshness(now_ms)
    }

    /// Makes room for `additional` more URLs at once (a start knows how many it will add).
    pub fn reserve_urls(&self, additional: usize) {
        let mut inner = self.lock();
        inner.sched.reserve_urls(additional);
        inner.urls.reserve(additional);
    }

    /// How many URLs the ledger knows: the keys [`Ledger::plans`] takes are below it.
    pub fn url_count(&self) -> usize {
        self.lock().urls.len()
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod worker_tests;
