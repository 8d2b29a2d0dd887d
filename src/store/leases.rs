//! Host leases: how several `freshet run` workers on one PostgreSQL database share the hosts so
//! that each host is contacted by one worker at a time (table `leases`: migrations
//! `sqlite/0014_leases.sql` and `postgres/0002_leases.sql`).
//!
//! A worker runs a round every few seconds ([`Store::lease_round`]), one transaction: its
//! heartbeat row; the number of live workers, hence its fair share of the hosts (all of them
//! divided by the workers, rounded up); it renews what it holds, gives back what it was asked to
//! (hosts it no longer contacts: it gives a host back only once no request to it is in flight),
//! and claims free or expired hosts up to its share with `FOR UPDATE SKIP LOCKED`, each worker
//! reading the free rows in its own order ([`spread_of`]) so that claims rarely collide. A
//! killed worker's hosts are taken when its leases expire. Only lease rows are used, never
//! advisory locks or server-side functions, so the same SQL runs on the engines that speak
//! PostgreSQL's protocol (CockroachDB, YugabyteDB).
//!
//! The workers share each site's budget through table `budget_parts`
//! ([`Store::share_budget_parts`]): each writes at its round the visits a day its plan gives the
//! hosts it holds, and spends the budget in proportion to its part of the sum.

use std::collections::HashMap;

use xxhash_rust::xxh3::xxh3_64;

use super::Store;

/// How long after its last heartbeat a worker's row is deleted (clock ms).
const GONE_WORKER_MS: i64 = 24 * 3_600_000;
/// How long after a worker last named a host ([`Store::add_lease_keys`]) it is taken to be gone
/// from every schedule (clock ms): it no longer counts in the fair share and is not claimed,
/// and its row is deleted once no lease on it runs (its holder no longer renews it, so it
/// lapses as a lease the database could not renew does). Workers name the hosts they know
/// every hour; a row's time is written again only when a day old.
pub const GONE_HOST_MS: i64 = 7 * 24 * 3_600_000;
const SEEN_REFRESH_MS: i64 = 24 * 3_600_000;

/// What a lease round left the worker with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseRound {
    /// The hosts it holds (politeness keys), sorted.
    pub held: Vec<String>,
    /// Its fair share: the most hosts it should hold.
    pub share: usize,
    /// Workers alive (their heartbeat not expired), itself included.
    pub workers: i64,
    /// Until when the last other worker that still has a heartbeat row (alive, or killed
    /// within a day) was alive as far as the database knows: its heartbeat's expiry.
    pub others_until_ms: Option<i64>,
}

/// Where a key or a worker falls in the order of free hosts (31 bits, so that two add up
/// without overflow on either database).
pub fn spread_of(text: &str) -> i64 {
    (xxh3_64(text.as_bytes()) & 0x7fff_ffff) as i64
}

impl Store {
    /// Makes `keys` leasable (a free lease row each) and records that a worker named them at
    /// `now_ms` (a host no worker names for [`GONE_HOST_MS`] is gone); a key's lease is left as
    /// it is.
    pub async fn add_lease_keys(&self, keys: &[String], now_ms: i64) -> sqlx::Result<()> {
        let keys = keys.to_vec();
        self.write("add_lease_keys", move |mut tx| {
            let keys = keys.clone();
            async move {
                for key in &keys {
                    sqlx::query(
                        "INSERT INTO leases (kind, key, spread, seen_ms) VALUES ('host', $1, $2, $3)
                         ON CONFLICT (kind, key) DO UPDATE SET seen_ms = excluded.seen_ms
                         WHERE leases.seen_ms < $4",
                    )
                    .bind(key)
                    .bind(spread_of(key))
                    .bind(now_ms)
                    .bind(now_ms.saturating_sub(SEEN_REFRESH_MS))
                    .execute(&mut *tx)
                    .await?;
                }
                Ok((tx, ()))
            }
        })
        .await
    }

    /// One round for `worker` at `now_ms`: heartbeat, give back `release`, renew the rest of
    /// what it holds until `now_ms + ttl_ms`, claim free or expired hosts up to its share.
    pub async fn lease_round(
        &self,
        worker: &str,
        now_ms: i64,
        ttl_ms: i64,
        release: &[String],
    ) -> sqlx::Result<LeaseRound> {
        let skip_locked = self.writer.backend.skip_locked();
        let claim = format!(
            "UPDATE leases SET worker = $1, until_ms = $2
             WHERE kind = 'host' AND key IN (
                 SELECT key FROM leases
                 WHERE kind = 'host' AND (worker IS NULL OR until_ms <= $3) AND seen_ms >= $6
                 ORDER BY (spread + $4) % 2147483648, key
                 LIMIT $5{skip_locked})
             RETURNING key"
        );
        let (worker, release) = (worker.to_string(), release.to_vec());
        self.write("lease_round", move |mut tx| {
            let (worker, release, claim) = (worker.clone(), release.clone(), claim.clone());
            async move {
                let until = now_ms + ttl_ms;
                sqlx::query(
                    "INSERT INTO leases (kind, key, worker, until_ms) VALUES ('worker', $1, $1, $2)
                     ON CONFLICT (kind, key) DO UPDATE SET worker = excluded.worker,
                         until_ms = excluded.until_ms",
                )
                .bind(&worker)
                .bind(until)
                .execute(&mut *tx)
                .await?;
                // Heartbeats of workers gone for a day (each process leases under a name of
                // its own, so every restart leaves one behind).
                sqlx::query("DELETE FROM leases WHERE kind = 'worker' AND until_ms < $1")
                    .bind(now_ms.saturating_sub(GONE_WORKER_MS))
                    .execute(&mut *tx)
                    .await?;
                let workers: i64 = sqlx::query_scalar(
                    "SELECT COUNT(*) FROM leases WHERE kind = 'worker' AND until_ms > $1",
                )
                .bind(now_ms)
                .fetch_one(&mut *tx)
                .await?;
                // Hosts gone from every schedule: not counted, not claimed, not renewed, and
                // their rows deleted once no lease on them runs.
                let gone = now_ms.saturating_sub(GONE_HOST_MS);
                sqlx::query(
                    "DELETE FROM leases WHERE kind = 'host' AND seen_ms < $1
                     AND (worker IS NULL OR until_ms <= $2)",
                )
                .bind(gone)
                .bind(now_ms)
                .execute(&mut *tx)
                .await?;
                let hosts: i64 = sqlx::query_scalar(
                    "SELECT COUNT(*) FROM leases WHERE kind = 'host' AND seen_ms >= $1",
                )
                .bind(gone)
                .fetch_one(&mut *tx)
                .await?;
                let share = (hosts as usize).div_ceil(workers.max(1) as usize);
                let others_until_ms: Option<i64> = sqlx::query_scalar(
                    "SELECT MAX(until_ms) FROM leases WHERE kind = 'worker' AND key <> $1",
                )
                .bind(&worker)
                .fetch_one(&mut *tx)
                .await?;
                for key in &release {
                    sqlx::query(
                        "UPDATE leases SET worker = NULL, until_ms = 0
                         WHERE kind = 'host' AND key = $1 AND worker = $2",
                    )
                    .bind(key)
                    .bind(&worker)
                    .execute(&mut *tx)
                    .await?;
                }
                let mut held: Vec<String> = sqlx::query_scalar(
                    "UPDATE leases SET until_ms = $2 WHERE kind = 'host' AND worker = $1
                     AND seen_ms >= $3 RETURNING key",
                )
                .bind(&worker)
                .bind(until)
                .bind(gone)
                .fetch_all(&mut *tx)
                .await?;
                if held.len() < share {
                    let claimed: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(claim))
                        .bind(&worker)
                        .bind(until)
                        .bind(now_ms)
                        .bind(spread_of(&worker))
                        .bind((share - held.len()) as i64)
                        .bind(gone)
                        .fetch_all(&mut *tx)
                        .await?;
                    held.extend(claimed);
                }
                held.sort_unstable();
                Ok((
                    tx,
                    LeaseRound {
                        held,
                        share,
                        workers,
                        others_until_ms,
                    },
                ))
            }
        })
        .await
    }

    /// Writes `worker`'s part of each site's budget (`parts`: site id, the visits a day its plan
    /// gives the URLs on the hosts it holds), valid until `until_ms`, and answers per site the
    /// sum of the parts valid at `now_ms`, its own included: its share of the budget is its
    /// part over that sum.
    pub async fn share_budget_parts(
        &self,
        worker: &str,
        now_ms: i64,
        until_ms: i64,
        parts: &[(i64, f64)],
    ) -> sqlx::Result<HashMap<i64, f64>> {
        let (worker, parts) = (worker.to_string(), parts.to_vec());
        self.write("share_budget_parts", move |mut tx| {
            let (worker, parts) = (worker.clone(), parts.clone());
            async move {
                // The parts of workers gone for a day (killed, so never dropped at shutdown).
                sqlx::query("DELETE FROM budget_parts WHERE until_ms < $1")
                    .bind(now_ms.saturating_sub(GONE_WORKER_MS))
                    .execute(&mut *tx)
                    .await?;
                for (site_id, planned) in &parts {
                    sqlx::query(
                        "INSERT INTO budget_parts (site_id, worker, planned_per_day, until_ms)
                         VALUES ($1, $2, $3, $4)
                         ON CONFLICT (site_id, worker) DO UPDATE SET
                             planned_per_day = excluded.planned_per_day,
                             until_ms = excluded.until_ms",
                    )
                    .bind(site_id)
                    .bind(&worker)
                    .bind(planned.max(0.0))
                    .bind(until_ms)
                    .execute(&mut *tx)
                    .await?;
                }
                let sums: Vec<(i64, f64)> = sqlx::query_as(
                    "SELECT site_id, SUM(planned_per_day) FROM budget_parts
                     WHERE until_ms > $1 GROUP BY site_id",
                )
                .bind(now_ms)
                .fetch_all(&mut *tx)
                .await?;
                Ok((tx, sums.into_iter().collect()))
            }
        })
        .await
    }

    /// The worker that holds the host lease of `key` at `now_ms`, if any (`explain`: a page's
    /// wait for a feed on a host another worker holds is kept aside).
    pub async fn host_holder(&self, key: &str, now_ms: i64) -> sqlx::Result<Option<String>> {
        let holder: Option<Option<String>> = sqlx::query_scalar(
            "SELECT worker FROM leases WHERE kind = 'host' AND key = $1 AND until_ms > $2",
        )
        .bind(key)
        .bind(now_ms)
        .fetch_optional(self.reader())
        .await?;
        Ok(holder.flatten())
    }

    /// Gives back every lease `worker` holds, deletes its heartbeat, and drops its budget
    /// parts (a clean shutdown: the others take its hosts and budget at their next round
    /// instead of waiting for the leases to expire).
    pub async fn release_all_leases(&self, worker: &str) -> sqlx::Result<()> {
        let worker = worker.to_string();
        self.write("release_all_leases", move |mut tx| {
            let worker = worker.clone();
            async move {
                sqlx::query("DELETE FROM leases WHERE kind = 'worker' AND key = $1")
                    .bind(&worker)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query("UPDATE leases SET worker = NULL, until_ms = 0 WHERE worker = $1")
                    .bind(&worker)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query("DELETE FROM budget_parts WHERE worker = $1")
                    .bind(&worker)
                    .execute(&mut *tx)
                    .await?;
                Ok((tx, ()))
            }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use crate::store::test_support::stores;

    fn keys(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("h{i}.test:80")).collect()
    }

    #[tokio::test]
    async fn workers_split_the_hosts_and_take_over_a_dead_ones() {
        let (stores, _dir) = stores("workers_split_the_hosts").await;
        for store in stores {
            assert_eq!(store.host_holder("h0.test:80", 0).await.unwrap(), None);
            store.add_lease_keys(&keys(10), 0).await.unwrap();
            store.add_lease_keys(&keys(10), 0).await.unwrap();
            let a = store.lease_round("a", 0, 1_000, &[]).await.unwrap();
            assert_eq!((a.held.len(), a.workers), (10, 1), "{a:?}");
            // A second worker: its share is half, but a holds everything until it gives back.
            let b = store.lease_round("b", 100, 1_000, &[]).await.unwrap();
            assert_eq!((b.held.len(), b.share, b.workers), (0, 5, 2));
            let a = store.lease_round("a", 200, 1_000, &[]).await.unwrap();
            assert_eq!(a.share, 5);
            let surplus = a.held[5..].to_vec();
            let a = store.lease_round("a", 300, 1_000, &surplus).await.unwrap();
            assert_eq!(a.held.len(), 5);
            let b = store.lease_round("b", 400, 1_000, &[]).await.unwrap();
            assert_eq!(b.held, surplus);
            let holder = async |key: &str, at: i64| store.host_holder(key, at).await.unwrap();
            assert_eq!(holder(&a.held[0], 450).await.as_deref(), Some("a"));
            assert_eq!(holder(&surplus[0], 450).await.as_deref(), Some("b"));
            assert_eq!(holder(&a.held[0], 1_300).await, None, "its lease ran out");
            // a dies: its heartbeat and leases expire, and b takes everything.
            let b = store.lease_round("b", 1_350, 1_000, &[]).await.unwrap();
            assert_eq!((b.held.len(), b.workers), (10, 1), "{b:?}");
            // a was alive, as far as the database knows, till its last heartbeat ran out.
            assert_eq!(b.others_until_ms, Some(1_300));
            // A clean shutdown frees at once.
            store.release_all_leases("b").await.unwrap();
            let c = store.lease_round("c", 1_400, 1_000, &[]).await.unwrap();
            assert_eq!(c.held.len(), 10);
            assert_eq!(c.others_until_ms, Some(1_300), "b's heartbeat went with it");
            // b's heartbeat went with its shutdown; a's a day after its last one.
            let heartbeats = |store: &crate::store::Store| {
                let store = store.clone();
                async move {
                    sqlx::query_scalar::<_, String>(
                        "SELECT key FROM leases WHERE kind = 'worker' ORDER BY key",
                    )
                    .fetch_all(store.reader())
                    .await
                    .unwrap()
                }
            };
            assert_eq!(heartbeats(&store).await, ["a", "c"]);
            store
                .lease_round("c", 1_301 + super::GONE_WORKER_MS, 1_000, &[])
                .await
                .unwrap();
            assert_eq!(heartbeats(&store).await, ["c"]);
        }
    }

    /// A host no worker has named for a week (gone from every schedule) no longer counts in the
    /// fair share, is neither claimed nor renewed, and its row goes once its lease has run out
    /// (not before: a request to it may be in flight); a host a worker names again is leasable
    /// again.
    #[tokio::test]
    async fn hosts_no_worker_names_any_more_leave_the_share() {
        let (stores, _dir) = stores("hosts_no_worker_names").await;
        let week = super::GONE_HOST_MS;
        let rows = |store: &crate::store::Store| {
            let store = store.clone();
            async move {
                sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM leases WHERE kind = 'host'")
                    .fetch_one(store.reader())
                    .await
                    .unwrap()
            }
        };
        for store in stores {
            store.add_lease_keys(&keys(10), 0).await.unwrap();
            let a = store
                .lease_round("a", week - 100, 1_000, &[])
                .await
                .unwrap();
            assert_eq!(a.held.len(), 10);
            // A week on, the schedules name six of them; a's leases on all ten still run.
            store.add_lease_keys(&keys(6), week + 200).await.unwrap();
            let b = store
                .lease_round("b", week + 300, 1_000, &[])
                .await
                .unwrap();
            assert_eq!((b.held.len(), b.share, b.workers), (0, 3, 2), "{b:?}");
            assert_eq!(rows(&store).await, 10);
            // a renews only the six.
            let a = store
                .lease_round("a", week + 400, 1_000, &[])
                .await
                .unwrap();
            assert_eq!(a.held, keys(6));
            assert_eq!(
                rows(&store).await,
                10,
                "their leases run until {}",
                week + 900
            );
            // Its leases on the other four have run out: their rows go.
            let b = store
                .lease_round("b", week + 1_000, 1_000, &[])
                .await
                .unwrap();
            assert!(b.held.is_empty(), "{b:?}");
            assert_eq!(rows(&store).await, 6);
            // Named again: a host like any other.
            store.add_lease_keys(&keys(8), week + 1_100).await.unwrap();
            let b = store
                .lease_round("b", week + 1_200, 1_000, &[])
                .await
                .unwrap();
            assert_eq!((b.held.len(), b.share), (2, 4), "{b:?}");
        }
    }

    #[tokio::test]
    async fn budget_parts_add_up_over_the_live_workers() {
        let (stores, _dir) = stores("budget_parts_add_up").await;
        for store in stores {
            let a = store
                .share_budget_parts("a", 0, 1_000, &[(1, 30.0), (2, 5.0)])
                .await
                .unwrap();
            assert_eq!((a[&1], a[&2]), (30.0, 5.0));
            let b = store
                .share_budget_parts("b", 100, 1_100, &[(1, 10.0)])
                .await
                .unwrap();
            assert_eq!((b[&1], b[&2]), (40.0, 5.0));
            // a's parts are renewed; b's have run out.
            let a = store
                .share_budget_parts("a", 1_200, 2_200, &[(1, 20.0), (2, 5.0)])
                .await
                .unwrap();
            assert_eq!((a[&1], a[&2]), (20.0, 5.0));
            // A clean shutdown drops a's parts at once.
            store.release_all_leases("a").await.unwrap();
            let c = store
                .share_budget_parts("c", 1_300, 2_300, &[(2, 1.0)])
                .await
                .unwrap();
            assert_eq!((c.get(&1), c[&2]), (None, 1.0));
        }
    }
}
