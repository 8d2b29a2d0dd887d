//! Sites: one row per schedule entry, updated each time the schedules are loaded, with what
//! outlives a run: the budget's saved credit and the workers' shared pool of it, when the last
//! discovery pass completed, and when the open one started (its new pages are due then).

use crate::scheduler::{PoolExchange, settle_pool};

use super::Store;
use super::writer::WriteTx;

/// A site's budget credit to save: the requests it could still send at `at_ms`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BudgetSave {
    pub site_id: i64,
    pub credit: f64,
    pub at_ms: i64,
}

/// What the store keeps of a schedule entry.
#[derive(Debug, Clone)]
pub struct SiteRecord<'a> {
    /// The site's unique name.
    pub name: &'a str,
    /// Importance relative to other sites.
    pub weight: f64,
    /// The site's fetch budget.
    pub requests_per_day: f64,
    /// The schedule file it came from.
    pub source_file: Option<&'a str>,
}

/// A discovery pass that started this long after the clock's now is another clock's far ahead
/// of this one, not a pass to join: the next starts afresh. Within it, clocks of workers a
/// little apart join one pass (a worker a few milliseconds behind must not restart the pass
/// another has just opened, which made its pages due after this one's).
pub const PASS_CLOCK_SLACK_MS: i64 = 60_000;

impl Store {
    /// Inserts or updates a site by name; returns its id.
    pub async fn upsert_site(&self, site: &SiteRecord<'_>, now_ms: i64) -> sqlx::Result<i64> {
        self.write("upsert_site", |mut tx| async move {
            let value = sqlx::query_scalar(
                "INSERT INTO sites (name, weight, requests_per_day, source_file, updated_ms)
                 VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT(name) DO UPDATE SET weight = excluded.weight,
                     requests_per_day = excluded.requests_per_day,
                     source_file = excluded.source_file, updated_ms = excluded.updated_ms,
                     unscheduled_ms = NULL
                 RETURNING id",
            )
            .bind(site.name)
            .bind(site.weight)
            .bind(site.requests_per_day)
            .bind(site.source_file)
            .bind(now_ms)
            .fetch_one(&mut *tx)
            .await?;
            Ok((tx, value))
        })
        .await
    }

    /// Marks every site but `scheduled` (the ones the schedules just loaded name, which
    /// [`Store::upsert_site`] marked scheduled) unscheduled since `now_ms`, unless it already
    /// was: the scheduled sites take over the known URLs of the unscheduled ones that they name
    /// (a renamed site takes its old name's URLs back with their history,
    /// [`super::found_writes`]). Only the rows that change are written.
    pub async fn mark_unscheduled_sites(&self, scheduled: &[i64], now_ms: i64) -> sqlx::Result<()> {
        let scheduled: std::collections::HashSet<i64> = scheduled.iter().copied().collect();
        let marked: Vec<i64> =
            sqlx::query_scalar("SELECT id FROM sites WHERE unscheduled_ms IS NULL")
                .fetch_all(self.reader())
                .await?;
        let gone: Vec<i64> = marked
            .into_iter()
            .filter(|id| !scheduled.contains(id))
            .collect();
        if gone.is_empty() {
            return Ok(());
        }
        self.write("mark_unscheduled_sites", move |mut tx| {
            let gone = gone.clone();
            async move {
                for id in gone {
                    sqlx::query(
                        "UPDATE sites SET unscheduled_ms = $1
                         WHERE id = $2 AND unscheduled_ms IS NULL",
                    )
                    .bind(now_ms)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                }
                Ok((tx, ()))
            }
        })
        .await
    }

    /// The budget credit a run left a site, and when (`None`: none saved yet).
    pub async fn site_budget(&self, site_id: i64) -> sqlx::Result<Option<(f64, i64)>> {
        let row: Option<(Option<f64>, Option<i64>)> =
            sqlx::query_as("SELECT budget_credit, budget_credit_at_ms FROM sites WHERE id = $1")
                .bind(site_id)
                .fetch_optional(self.reader())
                .await?;
        Ok(row.and_then(|(credit, at)| Some((credit?, at?))))
    }

    /// Saves sites' budget credits (queued at once: committed no later than any write queued
    /// after it, such as the politeness reservation of a request the credit paid for). The
    /// future answers once committed; dropping it leaves the write queued.
    pub fn save_site_budgets(
        &self,
        saves: Vec<BudgetSave>,
    ) -> impl Future<Output = sqlx::Result<()>> + Send + 'static + use<> {
        self.queue_budget_saves(saves)
    }

    /// Settles each site's exchange with its budget pool ([`settle_pool`]) at `now_ms` in one
    /// transaction (each row locked while it is read and written, so two workers' exchanges
    /// never see the same credit); answers, by site id, the credit handed over.
    pub async fn exchange_budget_pools(
        &self,
        exchanges: Vec<(i64, PoolExchange)>,
        now_ms: i64,
    ) -> sqlx::Result<Vec<(i64, f64)>> {
        self.write("exchange_budget_pools", move |mut tx| {
            let exchanges = exchanges.clone();
            async move {
                let mut handed = Vec::with_capacity(exchanges.len());
                for (site_id, exchange) in exchanges {
                    // A write that changes nothing locks the row (PostgreSQL) and reads it.
                    let pool: Option<(Option<f64>, Option<i64>)> = sqlx::query_as(
                        "UPDATE sites SET budget_pool = budget_pool WHERE id = $1
                         RETURNING budget_pool, budget_pool_at_ms",
                    )
                    .bind(site_id)
                    .fetch_optional(&mut *tx)
                    .await?;
                    let Some((held, at_ms)) = pool else {
                        continue;
                    };
                    let pool = held.map(|held| (held, at_ms.unwrap_or(now_ms)));
                    let (left, given) = settle_pool(pool, exchange, now_ms);
                    sqlx::query(
                        "UPDATE sites SET budget_pool = $1, budget_pool_at_ms = $2 WHERE id = $3",
                    )
                    .bind(left)
                    .bind(now_ms)
                    .bind(site_id)
                    .execute(&mut *tx)
                    .await?;
                    handed.push((site_id, given));
                }
                Ok((tx, handed))
            }
        })
        .await
    }

    /// Records which changes a site's estimator learns (`content` or `bytes`).
    pub async fn set_site_change_signal(&self, site_id: i64, signal: &str) -> sqlx::Result<()> {
        self.write("set_site_change_signal", |mut tx| async move {
            sqlx::query("UPDATE sites SET change_signal = $1 WHERE id = $2")
                .bind(signal)
                .bind(site_id)
                .execute(&mut *tx)
                .await?;
            Ok((tx, ()))
        })
        .await
    }

    /// Which changes a site's estimator learns, as last recorded (None: not recorded).
    pub async fn site_change_signal(&self, site_id: i64) -> sqlx::Result<Option<String>> {
        sqlx::query_scalar("SELECT change_signal FROM sites WHERE id = $1")
            .bind(site_id)
            .fetch_optional(self.reader())
            .await
            .map(Option::flatten)
    }

    /// Since when a site is in none of the schedules the last run loaded (`None`: scheduled).
    pub async fn site_unscheduled_ms(&self, site_id: i64) -> sqlx::Result<Option<i64>> {
        sqlx::query_scalar("SELECT unscheduled_ms FROM sites WHERE id = $1")
            .bind(site_id)
            .fetch_optional(self.reader())
            .await
            .map(Option::flatten)
    }

    /// The names of every site in the database.
    pub async fn site_names(&self) -> sqlx::Result<Vec<String>> {
        sqlx::query_scalar("SELECT name FROM sites ORDER BY name")
            .fetch_all(self.reader())
            .await
    }

    /// When the site's last discovery pass completed.
    pub async fn site_discovered_ms(&self, site_id: i64) -> sqlx::Result<Option<i64>> {
        sqlx::query_scalar("SELECT discovered_ms FROM sites WHERE id = $1")
            .bind(site_id)
            .fetch_one(self.reader())
            .await
    }

    /// Opens a discovery pass of the site at `now_ms`, or joins the pass that is open: one that
    /// started after the last pass completed, no more than `joinable_ms` before `now_ms` and no
    /// more than [`PASS_CLOCK_SLACK_MS`] after it (a restart's next attempt at a pass cut short,
    /// or another worker's pass at the same `rediscover` time). Returns the pass's start, never
    /// after `now_ms`. [`Self::set_site_discovered`] closes it.
    pub async fn open_discovery_pass(
        &self,
        site_id: i64,
        now_ms: i64,
        joinable_ms: i64,
    ) -> sqlx::Result<i64> {
        self.write("open_discovery_pass", |mut tx| async move {
            sqlx::query(
                "UPDATE sites SET pass_started_ms = $1
                 WHERE id = $2 AND (pass_started_ms IS NULL OR pass_started_ms < $3
                     OR pass_started_ms > $4 OR discovered_ms >= pass_started_ms)",
            )
            .bind(now_ms)
            .bind(site_id)
            .bind(now_ms.saturating_sub(joinable_ms))
            .bind(now_ms.saturating_add(PASS_CLOCK_SLACK_MS))
            .execute(&mut *tx)
            .await?;
            let started: Option<i64> =
                sqlx::query_scalar("SELECT pass_started_ms FROM sites WHERE id = $1")
                    .bind(site_id)
                    .fetch_one(&mut *tx)
                    .await?;
            Ok((tx, started.unwrap_or(now_ms).min(now_ms)))
        })
        .await
    }

    /// Records that a discovery pass of the site completed.
    pub async fn set_site_discovered(&self, site_id: i64, at_ms: i64) -> sqlx::Result<()> {
        self.write("set_site_discovered", |mut tx| async move {
            sqlx::query("UPDATE sites SET discovered_ms = $1 WHERE id = $2")
                .bind(at_ms)
                .bind(site_id)
                .execute(&mut *tx)
                .await?;
            Ok((tx, ()))
        })
        .await
    }
}

/// Writes sites' budget credits in `saves`' order (the group commit hands each site's last).
pub(super) async fn write_budget_saves(
    mut tx: WriteTx,
    saves: impl Iterator<Item = &BudgetSave>,
) -> sqlx::Result<WriteTx> {
    for save in saves {
        sqlx::query(
            "UPDATE sites SET budget_credit = $1, budget_credit_at_ms = $2
             WHERE id = $3",
        )
        .bind(save.credit)
        .bind(save.at_ms)
        .bind(save.site_id)
        .execute(&mut *tx)
        .await?;
    }
    Ok(tx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::stores;

    /// Two workers' exchanges with one site's pool, on SQLite and PostgreSQL: what one hands
    /// in the other can take, and nothing is handed out twice.
    #[tokio::test]
    async fn a_sites_pool_hands_each_credit_out_once() {
        let (stores, _dir) = stores("a_sites_pool_hands_each_credit_out_once").await;
        for store in stores {
            let record = SiteRecord {
                name: "s",
                weight: 1.0,
                requests_per_day: 96_000.0,
                source_file: None,
            };
            let site = store.upsert_site(&record, 0).await.unwrap();
            let other = store
                .upsert_site(
                    &SiteRecord {
                        name: "t",
                        ..record
                    },
                    0,
                )
                .await
                .unwrap();
            let ask = |deposit: f64, want: f64| PoolExchange {
                want,
                ..PoolExchange::deposit(deposit, 1_000.0)
            };
            // A new site's pool is full: the first worker takes its bucket's worth.
            let first = store
                .exchange_budget_pools(vec![(site, ask(0.0, 1_000.0))], 0)
                .await
                .unwrap();
            assert_eq!(first, vec![(site, 1_000.0)]);
            // A late worker finds nothing until the first hands in what its smaller share
            // cannot hold; then it takes that, and only that.
            let late = store
                .exchange_budget_pools(vec![(site, ask(0.0, 333.0))], 0)
                .await
                .unwrap();
            assert_eq!(late, vec![(site, 0.0)]);
            store
                .exchange_budget_pools(vec![(site, ask(600.0, 0.0))], 0)
                .await
                .unwrap();
            let (late, again) = tokio::join!(
                store.exchange_budget_pools(
                    vec![(site, ask(0.0, 400.0)), (other, ask(0.0, 10.0))],
                    0
                ),
                store.exchange_budget_pools(vec![(site, ask(0.0, 400.0))], 0),
            );
            let handed: f64 = late.unwrap()[0].1 + again.unwrap()[0].1;
            assert_eq!(handed, 600.0, "the 600 handed in, once");
            // A site that is gone is skipped.
            assert!(
                store
                    .exchange_budget_pools(vec![(9_999, ask(0.0, 1.0))], 0)
                    .await
                    .unwrap()
                    .is_empty()
            );
            store.close().await;
        }
    }

    /// The start of the pass `open_discovery_pass` opens or joins.
    async fn opens(store: &Store, site: i64, now_ms: i64, joinable_ms: i64) -> i64 {
        store
            .open_discovery_pass(site, now_ms, joinable_ms)
            .await
            .unwrap()
    }

    /// A discovery pass's start is the site's, not one attempt's: a restart in the middle of a
    /// pass, or a second worker at the same time, joins it; a completed pass closes it; one
    /// open for longer than it may be joined, or that started well after now, is not joined.
    #[tokio::test]
    async fn a_discovery_pass_is_joined_until_it_completes() {
        const DAY: i64 = 86_400_000;
        let (stores, _dir) = stores("a_discovery_pass_is_joined_until_it_completes").await;
        for store in stores {
            let (site, _) = crate::store::test_support::site_and_host(&store).await;
            let other = SiteRecord {
                name: "t",
                weight: 1.0,
                requests_per_day: 1.0,
                source_file: None,
            };
            let other = store.upsert_site(&other, 0).await.unwrap();
            assert_eq!(opens(&store, site, 1_000, DAY).await, 1_000);
            // A restart's next attempt, or another worker, joins it; another site has its own.
            assert_eq!(opens(&store, site, 5_000, DAY).await, 1_000);
            assert_eq!(opens(&store, other, 5_000, DAY).await, 5_000);
            // Completed: the next pass starts afresh.
            store.set_site_discovered(site, 6_000).await.unwrap();
            assert_eq!(opens(&store, site, 7_000, DAY).await, 7_000);
            assert_eq!(opens(&store, site, 8_000, DAY).await, 7_000);
            // Open for longer than it may be joined: abandoned.
            let late = 7_000 + DAY + 1;
            assert_eq!(opens(&store, site, late, DAY).await, late);
            assert_eq!(opens(&store, site, late + 10, 5).await, late + 10);
            // A worker whose clock is a little behind joins the pass (its pages never due in
            // its own future); far behind, it starts its own.
            let behind = late + 10 - PASS_CLOCK_SLACK_MS;
            assert_eq!(opens(&store, site, behind, DAY).await, behind);
            assert_eq!(opens(&store, site, late + 20, DAY).await, late + 10);
            let far = late - 2 * PASS_CLOCK_SLACK_MS;
            assert_eq!(opens(&store, site, far, DAY).await, far);
            store.close().await;
        }
    }
}
