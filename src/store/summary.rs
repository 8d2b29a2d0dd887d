//! What the scheduler writes back to a URL's row: the summary a check leaves (validators,
//! fingerprints, estimate, plan, folded evidence; committed by [`super::check_writes`]), a
//! re-plan's rates and due times (and the estimates that priors fitted since moved) in
//! multi-row statements, and a server's floor on the interval.

use std::sync::{Arc, LazyLock};

use super::Store;
use super::backend::BindReal;
use super::batch::{Texts, placeholder_rows, power_of_two_chunks, text_for, texts};

/// How a check changes a URL's summary.
#[derive(Debug, Clone, Default)]
pub struct SummaryUpdate {
    /// Whether the response carried a usable copy (2xx or 304): only then are validators and
    /// the fingerprint replaced.
    pub got_copy: bool,
    /// New ETag.
    pub etag: Option<String>,
    /// New raw Last-Modified.
    pub last_modified: Option<String>,
    /// New fingerprint.
    pub fingerprint: Option<u64>,
    /// New content fingerprint.
    pub content_fingerprint: Option<u64>,
    /// The floor on the revisit interval: the server's (Cache-Control max-age; a sitemap's
    /// Retry-After too),
    /// or for a feed its `ttl` if longer.
    pub min_interval_ms: Option<i64>,
    /// The estimate after this check.
    pub rate: Option<crate::estimate::RateEstimate>,
    /// Planned visits per day.
    pub planned_per_day: Option<f64>,
    /// Next due time.
    pub next_due_ms: i64,
    /// The folded evidence after this check (JSON).
    pub stats: Option<String>,
    /// The scheduler's count of the URL's checks that failed in a row after this check
    /// (`None`: not the scheduler's check, such as a sitemap's read; the count stands).
    pub failures: Option<u8>,
    /// The host's validator trust after this check, when the check taught it something:
    /// (host id, JSON), written in the check's transaction.
    pub host_trust: Option<(i64, String)>,
    /// When the check was handed to the store (clock ms), for other workers reading what
    /// changed since their last read ([`UrlScope::WrittenAfter`]); its request may have
    /// started long before. Read after its plan was taken: a save of plans taken later keeps
    /// its own ([`super::summary_writes`]).
    pub written_ms: Option<i64>,
    /// The scheduler's check: `Some` of the feed (row id) whose announcements the URL waits for
    /// after it ([`crate::scheduler::Scheduler::waits_to_keep`]; `Some(None)`: none), written
    /// with its plan, so that a check that ends a wait or starts one is kept by a kill right
    /// after it. `None`: not the scheduler's check (a sitemap's read); the stored wait stands.
    pub waits_for_feed_id: Option<Option<i64>>,
    /// The kind the URL was checked as (`page`, `feed`, `sitemap`): the summary is written only
    /// if its row is still of that kind (`None`: whatever its kind), and the observation is
    /// appended either way. A page's check in flight when discovery made its row a sitemap
    /// (`refresher::sitemap_kinds`) put the page's copy and plan on the sitemap's row.
    pub checked_as: Option<&'static str>,
}

/// A re-planned URL.
#[derive(Debug, Clone)]
pub struct PlanUpdate {
    /// The URL.
    pub url_id: i64,
    /// Planned visits per day.
    pub planned_per_day: f64,
    /// Next due time.
    pub next_due_ms: i64,
    /// A span after its copy over which it is known not to have changed (a quiet feed). A
    /// span the row already has is kept when there is none now: judging a copy ignores a span
    /// from before it.
    pub watched: Option<(i64, i64)>,
    /// Its estimate, when the priors it is weighed under changed since its last check wrote
    /// one (`None`: the stored one stands).
    pub rate: Option<PlannedEstimate>,
    /// The feed (its row id) whose announcements it waits for instead of its plan.
    pub waits_for_feed_id: Option<i64>,
    /// When the plan was handed to the store (clock ms), for a plan the other workers should
    /// take up at their next round ([`super::urls::UrlScope::WrittenAfter`]: a feed read's,
    /// which ends waits); the row's `written_ms` moves on to it, never back. `None`: the save
    /// of every plan, which each worker makes of its own.
    pub written_ms: Option<i64>,
    /// When the plan was taken (clock ms), kept as the row's `plan_saved_ms`: a check whose
    /// plan was taken before it and whose commit lands after this save keeps this plan
    /// ([`super::summary_writes`]): a feed read's. `None`: the row's stamp stands (the save of
    /// every plan, whose plans a check's would differ from only by what came between).
    pub taken_ms: Option<i64>,
}

/// An estimate written with a plan, and the last check it follows: a row whose last check is
/// later (committed meanwhile, or another worker's) keeps the estimate that check wrote.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlannedEstimate {
    /// The estimate.
    pub estimate: crate::estimate::RateEstimate,
    /// The URL's last check it was computed after, clock ms.
    pub after_check_ms: i64,
}

impl Store {
    /// Writes re-planned rates and due times in one transaction (weights belong to the dedup
    /// engine, which may change them while a plan is being solved), by multi-row statements
    /// ([`super::batch`]). The refresher hands a large plan over a few thousand URLs at a time
    /// (`Ledger::plans`), so that neither a copy of every URL's plan nor one long transaction
    /// holding up the checks' commits is needed.
    pub async fn save_plan(&self, rows: Vec<PlanUpdate>) -> sqlx::Result<()> {
        // Grouped like the checks' writes, so that it commits after every check queued before it
        // (a check's older plan must not overwrite this one).
        let rows = Arc::new(rows);
        self.write_grouped("save_plan", move |mut tx| {
            let rows = rows.clone();
            async move {
                let mut chunks = Vec::new();
                power_of_two_chunks(&rows, &mut chunks);
                for chunk in chunks {
                    let mut query = sqlx::query(text_for(&SAVE_PLANS, &tx, chunk.len()));
                    for row in chunk {
                        let rate = row.rate.as_ref().map(|r| &r.estimate);
                        query = query
                            .bind(row.url_id)
                            .bind(row.planned_per_day)
                            .bind(row.next_due_ms)
                            .bind(row.watched.map(|w| w.0))
                            .bind(row.watched.map(|w| w.1))
                            .bind(row.rate.map(|r| r.after_check_ms))
                            .bind_real(rate.map(|e| e.rate_per_day))
                            .bind_real(rate.map(|e| e.low))
                            .bind_real(rate.map(|e| e.high.min(1e12)))
                            .bind_real(rate.map(|e| e.shape))
                            .bind_real(rate.map(|e| e.rate))
                            .bind(row.waits_for_feed_id)
                            .bind(row.written_ms)
                            .bind(row.taken_ms);
                    }
                    query.execute(&mut *tx).await?;
                }
                Ok((tx, ()))
            }
        })
        .await
    }
}

/// The feed a page's plan waits for (`v.waits_for_feed_id`), if its row is still a feed's: a
/// worker started on the schedule before another worker's start made that row a sitemap's
/// (`Store::declare_kinds`) still plans the page as waiting for it, and wrote the sitemap's id
/// back at each save, across restarts.
pub(super) const WAIT_ON_A_FEED: &str =
    "(SELECT f.id FROM urls f WHERE f.id = v.waits_for_feed_id AND f.kind = 'feed')";

static SAVE_PLANS: LazyLock<Texts> = LazyLock::new(|| {
    // An estimate is written only over one from the check it follows or an earlier one.
    let estimate = ["rate_per_day", "rate_low", "rate_high", "rate_shape", "rate_scale"]
        .map(|column| {
            format!(
                "{column} = CASE WHEN v.rate_per_day IS NOT NULL AND (urls.last_checked_ms IS NULL \
                 OR urls.last_checked_ms <= v.after_check_ms) THEN v.{column} ELSE urls.{column} END"
            )
        })
        .join(",\n                 ");
    texts(|n| {
        format!(
            "WITH v(id, planned_per_day, next_due_ms, watched_from_ms, watched_until_ms,
                    after_check_ms, rate_per_day, rate_low, rate_high, rate_shape, rate_scale,
                    waits_for_feed_id, written_ms, taken_ms)
                 AS (VALUES {})
             UPDATE urls SET planned_per_day = v.planned_per_day, next_due_ms = v.next_due_ms,
                 waits_for_feed_id = {wait},
                 written_ms = CASE WHEN v.written_ms IS NOT NULL AND (urls.written_ms IS NULL
                     OR urls.written_ms < v.written_ms) THEN v.written_ms ELSE urls.written_ms END,
                 plan_saved_ms = COALESCE(v.taken_ms, urls.plan_saved_ms),
                 watched_from_ms = COALESCE(v.watched_from_ms, urls.watched_from_ms),
                 watched_until_ms = COALESCE(v.watched_until_ms, urls.watched_until_ms),
                 {estimate}
             FROM v WHERE urls.id = v.id AND urls.kind <> 'sitemap'",
            placeholder_rows(n, 14),
            wait = WAIT_ON_A_FEED
        )
    })
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::discovered::Discovered;

    fn estimate(i: usize) -> crate::estimate::RateEstimate {
        crate::estimate::RateEstimate {
            rate_per_day: 1.0 + i as f64,
            low: 0.25,
            high: 4.0 + i as f64,
            shape: 0.5,
            rate: 2.0,
        }
    }

    #[tokio::test]
    async fn a_plan_of_many_urls_is_written_by_chunks_every_row_its_own() {
        let (stores, _dir) = crate::store::test_support::stores("plan_of_many_urls").await;
        for store in stores {
            let (site_id, host_id) = crate::store::test_support::site_and_host(&store).await;
            // 100 rows: chunks of 64, 32 and 4.
            let found: Vec<Discovered> = (0..100)
                .map(|i| Discovered {
                    // (Row 0 is the feed some rows wait for.)
                    kind: if i == 0 { "feed" } else { "page" },
                    ..crate::store::test_support::page(
                        &format!("http://a.test/{i}"),
                        site_id,
                        host_id,
                    )
                })
                .collect();
            let ids = store.upsert_discovered(&found, 1_000).await.unwrap();
            let plans: Vec<PlanUpdate> = ids
                .iter()
                .enumerate()
                .map(|(i, &url_id)| PlanUpdate {
                    url_id,
                    planned_per_day: i as f64 + 0.5,
                    next_due_ms: 10_000 + i as i64,
                    watched: (i % 3 == 0).then_some((i as i64, 2 * i as i64)),
                    rate: (i % 2 == 0).then(|| PlannedEstimate {
                        estimate: estimate(i),
                        after_check_ms: 0,
                    }),
                    waits_for_feed_id: (i % 4 == 1).then_some(ids[0]),
                    written_ms: None,
                    taken_ms: None,
                })
                .collect();
            // An estimate already stored stands where the plan brings none.
            store.save_plan(plans.clone()).await.unwrap();
            let none = plans
                .iter()
                .map(|plan| PlanUpdate {
                    rate: None,
                    ..plan.clone()
                })
                .collect();
            store.save_plan(none).await.unwrap();
            let status = store.url_status(None).await.unwrap();
            for (i, &id) in ids.iter().enumerate() {
                let row = status.iter().find(|r| r.url_id == id).unwrap();
                assert_eq!(
                    (row.planned_per_day, row.next_due_ms),
                    (Some(i as f64 + 0.5), Some(10_000 + i as i64)),
                    "row {i}"
                );
                let watched = (row.watched_from_ms, row.watched_until_ms);
                let want = (i % 3 == 0).then_some((i as i64, 2 * i as i64)).unzip();
                assert_eq!(watched, want, "row {i}");
                let waits = store.url_row(&row.url).await.unwrap().unwrap();
                assert_eq!(
                    waits.waits_for_feed_id,
                    (i % 4 == 1).then_some(ids[0]),
                    "row {i}"
                );
                let rate = (
                    row.rate_per_day,
                    row.rate_low,
                    row.rate_high,
                    row.rate_shape,
                    row.rate_scale,
                );
                let want = (i % 2 == 0).then(|| {
                    let e = estimate(i);
                    (e.rate_per_day, e.low, e.high, e.shape, e.rate)
                });
                assert_eq!(
                    rate,
                    want.map_or((None, None, None, None, None), |w| {
                        (Some(w.0), Some(w.1), Some(w.2), Some(w.3), Some(w.4))
                    }),
                    "row {i}"
                );
            }
            store.close().await;
        }
    }

    /// A plan's estimate replaces one written after the same check or an earlier one, and
    /// never one a later check wrote (committed between the plan's reading and its write, or
    /// another worker's).
    #[tokio::test]
    async fn a_plans_estimate_never_replaces_a_later_checks() {
        let (stores, _dir) = crate::store::test_support::stores("plans_estimate").await;
        for store in stores {
            let (site_id, host_id) = crate::store::test_support::site_and_host(&store).await;
            let found: Vec<Discovered> = ["http://a.test/a", "http://a.test/b"]
                .iter()
                .map(|url| crate::store::test_support::page(url, site_id, host_id))
                .collect();
            let ids = store.upsert_discovered(&found, 1_000).await.unwrap();
            crate::store::test_support::checked_at(&store, 5_000).await;
            let plans = |rates: [(usize, i64); 2]| {
                ids.iter()
                    .zip(rates)
                    .map(|(&url_id, (i, after_check_ms))| PlanUpdate {
                        url_id,
                        planned_per_day: 1.0,
                        next_due_ms: 9_000,
                        watched: None,
                        waits_for_feed_id: None,
                        written_ms: None,
                        taken_ms: None,
                        rate: Some(PlannedEstimate {
                            estimate: estimate(i),
                            after_check_ms,
                        }),
                    })
                    .collect::<Vec<_>>()
            };
            let rates = async |store: &Store| {
                let status = store.url_status(None).await.unwrap();
                ids.iter()
                    .map(|id| {
                        let row = status.iter().find(|r| r.url_id == *id).unwrap();
                        (row.rate_per_day, row.rate_high)
                    })
                    .collect::<Vec<_>>()
            };
            store
                .save_plan(plans([(1, 5000), (1, 5000)]))
                .await
                .unwrap();
            assert_eq!(
                rates(&store).await,
                vec![(Some(2.0), Some(5.0)), (Some(2.0), Some(5.0))]
            );
            // b's last check (5 s) is later than the one its new estimate follows.
            store
                .save_plan(plans([(7, 5000), (7, 4000)]))
                .await
                .unwrap();
            assert_eq!(
                rates(&store).await,
                vec![(Some(8.0), Some(11.0)), (Some(2.0), Some(5.0))]
            );
            store.close().await;
        }
    }

    /// A feed read's plans move their rows' `written_ms` on, for the other workers' next
    /// round; the save of every plan, and an older time, leave it.
    #[tokio::test]
    async fn a_plan_written_for_the_other_workers_moves_its_row_on() {
        let (stores, _dir) = crate::store::test_support::stores("plan_written_ms").await;
        for store in stores {
            let (site_id, host_id) = crate::store::test_support::site_and_host(&store).await;
            let found = crate::store::test_support::page("http://a.test/p", site_id, host_id);
            let id = store.upsert_discovered(&[found], 0).await.unwrap()[0];
            let written_after = async |at: i64| {
                let scope = crate::store::urls::UrlScope::WrittenAfter(at);
                let mut pages = crate::store::urls::UrlPages::new(scope, 10);
                let rows = pages.next(&store).await.unwrap().unwrap_or_default();
                rows.iter().any(|row| row.id == id)
            };
            let plan = |written_ms| PlanUpdate {
                url_id: id,
                planned_per_day: 1.0,
                next_due_ms: 9_000,
                watched: None,
                rate: None,
                waits_for_feed_id: None,
                written_ms,
                taken_ms: None,
            };
            store.save_plan(vec![plan(None)]).await.unwrap();
            assert!(!written_after(0).await, "the save of every plan");
            store.save_plan(vec![plan(Some(500))]).await.unwrap();
            assert!(written_after(499).await && !written_after(500).await);
            store.save_plan(vec![plan(Some(300))]).await.unwrap();
            store.save_plan(vec![plan(None)]).await.unwrap();
            assert!(written_after(499).await, "never moved back");
            store.close().await;
        }
    }
}
