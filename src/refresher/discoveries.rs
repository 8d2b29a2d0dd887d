//! Discovery of every site in a refresher run: when each site's discovery pass is next due,
//! which passes are running (each its own task beside fetching), and, with several workers,
//! which sites a host gained makes due again.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tokio::task::JoinSet;
use tracing::warn;

use super::context::Context;
use super::{discovery, discovery_due};
use crate::politeness::key_of;
use crate::store::errors::ErrorRecord;

/// Discovery of every site: when each is next due, and which are running.
pub(super) struct Discoveries {
    pub(super) tasks: JoinSet<(i64, anyhow::Result<i64>)>,
    /// The site each running task works on, so a panicked one is still finished.
    pub(super) task_sites: HashMap<tokio::task::Id, i64>,
    next: HashMap<i64, i64>,
    pub(super) running: HashSet<i64>,
    /// Sites whose first pass of this run has finished.
    pub(super) done_once: HashSet<i64>,
    /// Running sites to discover again as soon as they finish (hosts gained meanwhile).
    again: HashSet<i64>,
}

impl Discoveries {
    /// With several workers, a site is also due at the start when a sitemap on a host this
    /// worker holds was never read or is due (`discovery_due::first_discovery_due_here`).
    pub(super) async fn new(ctx: &Context) -> anyhow::Result<Self> {
        let now = ctx.clock.now_ms();
        let mut next = HashMap::new();
        for site in &ctx.sites {
            let due = if ctx.leasing.is_some() {
                discovery_due::first_discovery_due_here(ctx, site, now).await?
            } else {
                discovery_due::first_discovery_due(ctx, site, now).await?
            };
            next.insert(site.id, due);
        }
        Ok(Self {
            tasks: JoinSet::new(),
            task_sites: HashMap::new(),
            next,
            running: HashSet::new(),
            done_once: HashSet::new(),
            again: HashSet::new(),
        })
    }

    /// This worker just took the hosts `gained`: the sites with sitemaps, feeds or seeds there
    /// are discovered again now (their sitemaps were another worker's to read), and every site
    /// when a gained host is none of theirs (a sitemap a robots.txt names elsewhere).
    pub(super) fn hosts_gained(&mut self, ctx: &Context, gained: &[String], now: i64) {
        if gained.is_empty() {
            return;
        }
        let sources: Vec<(i64, HashSet<String>)> = ctx
            .sites
            .iter()
            .map(|site| {
                let keys = site.site.origins().iter().map(|o| key_of(o)).collect();
                (site.id, keys)
            })
            .collect();
        let foreign = gained
            .iter()
            .any(|key| sources.iter().all(|(_, keys)| !keys.contains(key)));
        for (id, keys) in sources {
            if foreign || gained.iter().any(|key| keys.contains(key)) {
                if self.running.contains(&id) {
                    self.again.insert(id);
                } else {
                    self.next.insert(id, now);
                }
            }
        }
    }

    /// Starts a task for every site whose time has come (with several workers, each reads the
    /// sitemaps and robots.txt files on the hosts it holds).
    pub(super) fn start_due(&mut self, ctx: &Arc<Context>, now: i64) {
        for site in &ctx.sites {
            let due = self.next.get(&site.id).copied().unwrap_or(i64::MAX);
            if due > now || self.running.contains(&site.id) {
                continue;
            }
            if self.running.insert(site.id) {
                let ctx = Arc::clone(ctx);
                let id = site.id;
                let handle = self.tasks.spawn(async move {
                    let Some(site) = ctx.site(id) else {
                        return (id, Ok(i64::MAX));
                    };
                    (id, discovery::discover(&ctx, site).await)
                });
                self.task_sites.insert(handle.id(), id);
            }
        }
    }

    /// Records a finished pass; a failed one is recorded and tried again in an hour.
    pub(super) async fn finished(
        &mut self,
        ctx: &Context,
        site_id: i64,
        result: anyhow::Result<i64>,
    ) {
        self.running.remove(&site_id);
        self.done_once.insert(site_id);
        let next = match result {
            Ok(next) => next,
            Err(error) => {
                warn!(site_id, error = %error, "discovery failed; trying again in an hour");
                ctx.count_error();
                let name = ctx.site(site_id).map_or("", |s| s.site.name.as_str());
                ctx.metrics.error(name, "discovery");
                let record = ErrorRecord {
                    scope: "discovery",
                    site: ctx.site(site_id).map(|s| s.site.name.clone()),
                    message: format!("{error:#}"),
                    ..Default::default()
                };
                let _ = ctx.store.record_error(ctx.clock.now_ms(), &record).await;
                ctx.clock.now_ms() + 3_600_000
            }
        };
        let next = if self.again.remove(&site_id) {
            ctx.clock.now_ms()
        } else {
            next
        };
        self.next.insert(site_id, next);
    }

    /// The earliest time a site not running is due.
    pub(super) fn next_due(&self) -> Option<i64> {
        self.next
            .iter()
            .filter(|(id, _)| !self.running.contains(id))
            .map(|(_, &t)| t)
            .min()
    }
}
