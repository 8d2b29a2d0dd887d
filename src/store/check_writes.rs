//! The write every check makes: its observation appended and its URL's summary updated (and its
//! host's validator trust, when the check taught it something: written once per host for the
//! checks written together, as the last of them on that host left it).
//!
//! The checks waiting in one group commit ([`super::group_commit`]) are written together: one
//! multi-row `INSERT` of their observations and one `UPDATE … FROM (VALUES …)` of their URLs'
//! summaries ([`super::summary_writes`]) per chunk ([`super::batch`]), instead of two statements
//! per check. Why: every
//! statement is a round trip to the connection's thread (a channel send and a wake-up each way),
//! and those round trips, not SQLite's own work, were most of the writer's cost. A URL checked
//! twice in one group starts a new chunk, so that its two checks are applied in order (an
//! `UPDATE … FROM` applies one source row per target row).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use super::batch::{
    Texts, distinct_chunks, placeholder_rows, power_of_two_chunks, text_for, texts,
};
use super::observations::NewObservation;
use super::summary::SummaryUpdate;
use super::writer::WriteTx;
use super::{Store, hash_to_db};

/// One check to write: its observation and how it changes the URL's summary.
#[derive(Debug, Clone)]
pub(super) struct CheckWrite {
    pub observation: NewObservation,
    pub update: SummaryUpdate,
}

impl Store {
    /// Appends an observation and updates the URL's summary, in one transaction (shared with
    /// the other writes waiting at that moment; the checks among them are written by the same
    /// statements). Answers once it committed.
    pub async fn record_check(
        &self,
        obs: &NewObservation,
        update: &SummaryUpdate,
    ) -> sqlx::Result<()> {
        let check = CheckWrite {
            observation: obs.clone(),
            update: update.clone(),
        };
        self.queue_check(Arc::new(check)).await
    }
}

/// Writes `checks` in `tx`, in their order.
pub(super) async fn write_checks(
    mut tx: WriteTx,
    checks: &[Arc<CheckWrite>],
) -> sqlx::Result<WriteTx> {
    for chunk in chunks(checks) {
        tx = insert_observations(tx, chunk).await?;
        let summaries: Vec<_> = chunk.iter().map(|c| (&c.observation, &c.update)).collect();
        tx = super::summary_writes::update_summaries(tx, &summaries).await?;
    }
    write_trusts(tx, checks).await
}

/// Each host's validator trust as the last of `checks` that taught it something left it (the
/// state after the group's checks; the trust a check carries is its host's whole state then).
/// One statement per chunk of hosts, not one per check: most checks teach their host something.
async fn write_trusts(mut tx: WriteTx, checks: &[Arc<CheckWrite>]) -> sqlx::Result<WriteTx> {
    let mut latest: Vec<(i64, &str)> = Vec::new();
    let mut at: HashMap<i64, usize> = HashMap::new();
    for check in checks {
        if let Some((host_id, trust_json)) = &check.update.host_trust {
            match at.get(host_id) {
                Some(&i) => latest[i].1 = trust_json,
                None => {
                    at.insert(*host_id, latest.len());
                    latest.push((*host_id, trust_json));
                }
            }
        }
    }
    let mut chunks = Vec::new();
    power_of_two_chunks(&latest, &mut chunks);
    for chunk in chunks {
        let mut query = sqlx::query(text_for(&UPDATE_TRUSTS, &tx, chunk.len()));
        for (host_id, trust_json) in chunk {
            query = query.bind(*host_id).bind(*trust_json);
        }
        query.execute(&mut *tx).await?;
    }
    Ok(tx)
}

static UPDATE_TRUSTS: LazyLock<Texts> = LazyLock::new(|| {
    texts(|n| {
        format!(
            "WITH v(id, trust_json) AS (VALUES {})
             UPDATE hosts SET trust_json = v.trust_json FROM v WHERE hosts.id = v.id",
            placeholder_rows(n, 2)
        )
    })
});

/// `checks` cut, in order, into runs of distinct URLs, each cut into power-of-two chunks.
fn chunks(checks: &[Arc<CheckWrite>]) -> Vec<&[Arc<CheckWrite>]> {
    distinct_chunks(checks, |check| check.observation.url_id)
}

static INSERT_OBSERVATIONS: LazyLock<Texts> = LazyLock::new(|| {
    texts(|n| {
        format!(
            "INSERT INTO observations (url_id, checked_ms, method, status, etag, last_modified_ms,
                 fingerprint, bytes, duration_ms, error, changed, change_evidence, final_url,
                 redirects, content_fingerprint, content_changed)
             VALUES {}",
            placeholder_rows(n, 16)
        )
    })
});

async fn insert_observations(mut tx: WriteTx, chunk: &[Arc<CheckWrite>]) -> sqlx::Result<WriteTx> {
    let mut query = sqlx::query(text_for(&INSERT_OBSERVATIONS, &tx, chunk.len()));
    for check in chunk {
        let obs = &check.observation;
        query = query
            .bind(obs.url_id)
            .bind(obs.checked_ms)
            .bind(obs.method)
            .bind(obs.status.map(i64::from))
            .bind(&obs.etag)
            .bind(obs.last_modified_ms)
            .bind(obs.fingerprint.map(hash_to_db))
            .bind(obs.bytes as i64)
            .bind(obs.duration_ms)
            .bind(&obs.error)
            .bind(obs.changed.map(i64::from))
            .bind(obs.change_evidence)
            .bind(&obs.final_url)
            .bind(&obs.redirects_json)
            .bind(obs.content_fingerprint.map(hash_to_db))
            .bind(obs.content_changed.map(i64::from));
    }
    query.execute(&mut *tx).await?;
    Ok(tx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::summary::PlanUpdate;
    use crate::store::test_support::{due, feed_and_page, hold_writer, observed, two_urls};
    use crate::store::urls::{UrlPages, UrlScope};

    #[tokio::test]
    async fn a_group_of_checks_is_written_in_order_and_a_failing_one_takes_no_other_with_it() {
        let (stores, _dir) = crate::store::test_support::stores(
            "a_group_of_checks_is_written_in_order_and_a_failing_one_takes_no_other_with_it",
        )
        .await;
        for store in stores {
            let (a, b) = two_urls(&store).await;
            // Queued while the group task is held: one group. URL a is checked twice, and a
            // plan for it is queued between b's checks.
            let plan = [PlanUpdate {
                url_id: a,
                planned_per_day: 7.0,
                next_due_ms: 700,
                watched: None,
                rate: None,
                waits_for_feed_id: None,
                written_ms: None,
                taken_ms: None,
            }];
            let (o1, u1) = (observed(a, 10, true), due(100, "a1"));
            let (o2, u2) = (observed(b, 20, false), due(200, "b1"));
            let (o3, u3) = (observed(a, 30, false), due(300, "a2"));
            let (o4, u4) = (observed(b, 40, true), due(400, "b2"));
            let held = hold_writer(&store).await;
            // `join!` polls each in turn first, which queues it; the release comes last.
            let (r1, r2, r3, p, r4, ()) = tokio::join!(
                store.record_check(&o1, &u1),
                store.record_check(&o2, &u2),
                store.record_check(&o3, &u3),
                store.save_plan(plan.to_vec()),
                store.record_check(&o4, &u4),
                held.release(),
            );
            for result in [r1, r2, r3, p, r4] {
                result.unwrap();
            }
            assert_eq!(store.group_commits(), (1, 5));
            assert_eq!(store.observation_count().await.unwrap(), 4);
            let a_row = store.url_row("http://a.test/a").await.unwrap().unwrap();
            // Both checks counted, the later one's values kept, and the plan (queued after them)
            // over their due time.
            assert_eq!(
                (a_row.checks, a_row.changes, a_row.last_checked_ms),
                (2, 1, Some(30))
            );
            assert_eq!(a_row.etag.as_deref(), Some("a2"));
            assert_eq!(a_row.last_changed_ms, Some(10));
            assert_eq!(
                (a_row.next_due_ms, a_row.planned_per_day),
                (Some(700), Some(7.0))
            );
            let b_row = store.url_row("http://a.test/b").await.unwrap().unwrap();
            assert_eq!(
                (b_row.checks, b_row.changes, b_row.last_checked_ms),
                (2, 1, Some(40))
            );
            assert_eq!(
                (b_row.etag.as_deref(), b_row.next_due_ms),
                (Some("b2"), Some(400))
            );

            // A check of a URL that does not exist (the foreign key refuses it) fails alone.
            let (bad, bad_update) = (observed(999, 50, false), due(500, "x"));
            let (o5, u5) = (observed(a, 60, false), due(600, "a3"));
            let (r5, r6) = tokio::join!(
                store.record_check(&bad, &bad_update),
                store.record_check(&o5, &u5)
            );
            assert!(r5.is_err());
            r6.unwrap();
            assert_eq!(store.observation_count().await.unwrap(), 5);
            let a_row = store.url_row("http://a.test/a").await.unwrap().unwrap();
            assert_eq!((a_row.checks, a_row.next_due_ms), (3, Some(600)));
            store.close().await;
        }
    }

    /// A check of the scheduler's writes the page's wait for its feed with its plan; a check
    /// that is not the scheduler's (a sitemap's read), and one that commits after a later
    /// check, leave it.
    #[tokio::test]
    async fn a_check_writes_the_wait_with_its_plan() {
        let (stores, _dir) =
            crate::store::test_support::stores("a_check_writes_the_wait_with_its_plan").await;
        for store in stores {
            let (feed, page) = feed_and_page(&store).await;
            let waits = |wait: Option<Option<i64>>| SummaryUpdate {
                waits_for_feed_id: wait,
                ..due(100, "p")
            };
            let wait_of = async || {
                let row = store.url_row("http://a.test/b").await.unwrap().unwrap();
                row.waits_for_feed_id
            };
            let steps = [
                (
                    10,
                    Some(Some(feed)),
                    Some(feed),
                    "a check that starts a wait",
                ),
                (20, None, Some(feed), "not the scheduler's check"),
                (30, Some(Some(feed)), Some(feed), "a check that keeps it"),
                (25, Some(None), Some(feed), "a late check"),
                (40, Some(None), None, "a check that ends it"),
                (50, None, None, "not the scheduler's check"),
            ];
            for (at, wait, stored, what) in steps {
                let update = waits(wait);
                (store
                    .record_check(&observed(page, at, false), &update)
                    .await)
                    .unwrap();
                assert_eq!(wait_of().await, stored, "{what} at {at}");
            }
            store.close().await;
        }
    }

    #[tokio::test]
    async fn other_workers_read_a_check_by_when_it_was_written_not_when_it_started() {
        let (stores, _dir) = crate::store::test_support::stores("read_checks_by_written").await;
        for store in stores {
            let (a, b) = two_urls(&store).await;
            // a's request started at 1,000 and took 8 s; b's started and was written at 8,500.
            let slow = SummaryUpdate {
                written_ms: Some(9_000),
                ..due(100, "a1")
            };
            let quick = SummaryUpdate {
                written_ms: Some(8_500),
                ..due(100, "b1")
            };
            store
                .record_check(&observed(a, 1_000, true), &slow)
                .await
                .unwrap();
            store
                .record_check(&observed(b, 8_500, true), &quick)
                .await
                .unwrap();
            let read = |after: i64| {
                let store = &store;
                async move {
                    let mut pages = UrlPages::new(UrlScope::WrittenAfter(after), 10);
                    let mut urls = Vec::new();
                    while let Some(rows) = pages.next(store).await.unwrap() {
                        urls.extend(rows.into_iter().map(|r| r.url));
                    }
                    urls
                }
            };
            // A reader whose last read was at 5,000 (less its overlap) finds both.
            assert_eq!(read(5_000).await, ["http://a.test/a", "http://a.test/b"]);
            assert_eq!(read(8_700).await, ["http://a.test/a"]);
            assert!(read(9_000).await.is_empty());
            store.close().await;
        }
    }

    #[tokio::test]
    async fn a_group_leaves_each_host_the_trust_its_last_check_taught() {
        let (stores, _dir) = crate::store::test_support::stores("group_trust").await;
        for store in stores {
            let (a, b) = two_urls(&store).await;
            let a_host = store
                .url_row("http://a.test/a")
                .await
                .unwrap()
                .unwrap()
                .host_id;
            let other_host = store.host_id("http://b.test:80").await.unwrap();
            let taught = |host: i64, trust: &str| SummaryUpdate {
                host_trust: Some((host, trust.to_string())),
                ..due(100, "e")
            };
            // One group (queued while the group task is held): a.test's trust taught three
            // times, the other host's once, and a check that taught nothing last.
            let checks = [
                (observed(a, 10, false), taught(a_host, "first")),
                (observed(b, 20, false), taught(other_host, "other")),
                (observed(a, 30, false), taught(a_host, "second")),
                (observed(b, 40, false), taught(a_host, "last")),
                (observed(a, 50, false), due(100, "e")),
            ];
            let [c1, c2, c3, c4, c5] = &checks;
            let held = hold_writer(&store).await;
            let (r1, r2, r3, r4, r5, ()) = tokio::join!(
                store.record_check(&c1.0, &c1.1),
                store.record_check(&c2.0, &c2.1),
                store.record_check(&c3.0, &c3.1),
                store.record_check(&c4.0, &c4.1),
                store.record_check(&c5.0, &c5.1),
                held.release(),
            );
            for result in [r1, r2, r3, r4, r5] {
                result.unwrap();
            }
            assert_eq!(store.group_commits(), (1, 5));
            let mut trusts = store.host_trust().await.unwrap();
            trusts.sort();
            let mut expected = vec![
                (a_host, "last".to_string()),
                (other_host, "other".to_string()),
            ];
            expected.sort();
            assert_eq!(trusts, expected);
            store.close().await;
        }
    }

    fn check(url_id: i64) -> Arc<CheckWrite> {
        Arc::new(CheckWrite {
            observation: NewObservation {
                url_id,
                ..Default::default()
            },
            update: SummaryUpdate::default(),
        })
    }

    #[test]
    fn chunks_keep_order_split_repeated_urls_and_have_power_of_two_sizes() {
        let ids = [1, 2, 3, 4, 5, 2, 6, 7];
        let checks: Vec<_> = ids.iter().map(|&id| check(id)).collect();
        let cut: Vec<Vec<i64>> = chunks(&checks)
            .iter()
            .map(|c| c.iter().map(|w| w.observation.url_id).collect())
            .collect();
        assert_eq!(cut, vec![vec![1, 2, 3, 4], vec![5], vec![2, 6], vec![7]]);

        let many: Vec<_> = (0..200).map(check).collect();
        let sizes: Vec<usize> = chunks(&many).iter().map(|c| c.len()).collect();
        assert_eq!(sizes, vec![64, 64, 64, 8]);
        assert!(chunks(&[]).is_empty());
    }
}
