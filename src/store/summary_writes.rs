//! The update of the URLs' summaries that a group of checks makes ([`super::check_writes`]): one
//! `UPDATE … FROM (VALUES …)` per chunk, and which check's values win when a check commits after
//! a newer one of the same URL (an old lease holder's request that went out first): the newer
//! check keeps the status, estimate and plan, and the later copy keeps the copy's columns.

use std::sync::LazyLock;

use super::backend::BindReal;
use super::batch::{Texts, placeholder_rows, text_for, texts};
use super::hash_to_db;
use super::observations::NewObservation;
use super::summary::{SummaryUpdate, WAIT_ON_A_FEED};
use super::writer::WriteTx;

static UPDATE_SUMMARIES: LazyLock<Texts> = LazyLock::new(|| {
    let latest = [
        ("last_checked_ms", "v.checked_ms"),
        ("last_status", "v.status"),
        ("last_error", "v.error"),
        ("min_interval_ms", "v.min_interval_ms"),
        (
            "rate_per_day",
            "COALESCE(v.rate_per_day, urls.rate_per_day)",
        ),
        ("rate_low", "COALESCE(v.rate_low, urls.rate_low)"),
        ("rate_high", "COALESCE(v.rate_high, urls.rate_high)"),
        ("rate_shape", "COALESCE(v.rate_shape, urls.rate_shape)"),
        ("rate_scale", "COALESCE(v.rate_scale, urls.rate_scale)"),
        ("stats", "COALESCE(v.stats, urls.stats)"),
        ("failures", "COALESCE(v.failures, urls.failures)"),
    ]
    .map(|(column, new)| unless_later(column, new));
    let wait =
        format!("CASE WHEN v.sets_wait THEN {WAIT_ON_A_FEED} ELSE urls.waits_for_feed_id END");
    let plan = [
        (
            "planned_per_day",
            "COALESCE(v.planned_per_day, urls.planned_per_day)",
        ),
        ("next_due_ms", "v.next_due_ms"),
        ("waits_for_feed_id", wait.as_str()),
    ]
    .map(|(column, new)| unless_later(column, &unless_planned_later(column, new)));
    let copy = [
        ("copy_ms", "v.checked_ms"),
        (
            "last_changed_ms",
            "CASE WHEN v.changed = 1 THEN v.checked_ms ELSE urls.last_changed_ms END",
        ),
        ("etag", "COALESCE(v.etag, urls.etag)"),
        (
            "last_modified",
            "COALESCE(v.last_modified, urls.last_modified)",
        ),
        ("fingerprint", "COALESCE(v.fingerprint, urls.fingerprint)"),
        (
            "content_fingerprint",
            "COALESCE(v.content_fingerprint, urls.content_fingerprint)",
        ),
    ]
    .map(|(column, new)| unless_later_copy(column, new));
    // A copy taken after the known change clears it, whichever check is later.
    let known_change = "known_change_ms = CASE WHEN v.got_copy AND urls.known_change_ms <= \
                        v.checked_ms THEN NULL ELSE urls.known_change_ms END";
    // The row is written again (for the other workers to take up) when anything in it moved
    // but its counts: a later check, or a late check's copy. Never back: a worker that read
    // the rows written after an instant must not miss this one for a check's older stamp.
    let written = format!(
        "written_ms = CASE WHEN (urls.last_checked_ms > v.checked_ms AND NOT ({NEWER_COPY})) \
         OR v.written_ms IS NULL OR urls.written_ms > v.written_ms \
         THEN urls.written_ms ELSE v.written_ms END"
    );
    let set = latest
        .iter()
        .chain(&plan)
        .chain(&copy)
        .map(String::as_str)
        .chain([known_change, written.as_str()])
        .collect::<Vec<_>>()
        .join(",\n                 ");
    texts(|n| {
        format!(
            "WITH v(id, changed, checked_ms, status, error, got_copy, etag, last_modified,
                    fingerprint, content_changed, content_fingerprint, min_interval_ms,
                    rate_per_day, rate_low, rate_high, rate_shape, rate_scale, planned_per_day,
                    next_due_ms, stats, failures, written_ms, sets_wait, waits_for_feed_id,
                    checked_as)
                    AS (VALUES {})
             UPDATE urls SET checks = urls.checks + 1, changes = urls.changes + v.changed,
                 content_changes = urls.content_changes + v.content_changed,
                 {set}
             FROM v WHERE urls.id = v.id AND (v.checked_as IS NULL OR urls.kind = v.checked_as)",
            placeholder_rows(n, 25)
        )
    })
});

/// `column = new`, unless the URL's summary already holds a later check: a request another
/// worker sent after this one's (it took the host over while this one's was in flight) and
/// committed first. Such a late check is appended and counted, but it does not put an older
/// status, estimate or plan over a newer one.
fn unless_later(column: &str, new: &str) -> String {
    format!(
        "{column} = CASE WHEN urls.last_checked_ms > v.checked_ms THEN urls.{column} ELSE {new} END"
    )
}

/// A column of the plan (its rate, due time and wait): `new` unless the row's plan was saved
/// from a plan taken later than the check's (`urls.plan_saved_ms` past the check's
/// `written_ms`, which is read after its plan was taken): a feed read's save of the plans it
/// moved, committed while the check's commit was queued or retried, holds the newer plan (a wait the read ended, put back by the check, stayed until
/// the next save of every plan). Only saves of plans move that stamp: compared with the row's
/// `written_ms`, which checks, reads and adoptions move too, an old holder's late check or an
/// adoption made a newer check keep an older plan (helper-119).
fn unless_planned_later(column: &str, new: &str) -> String {
    format!("CASE WHEN urls.plan_saved_ms > v.written_ms THEN urls.{column} ELSE {new} END")
}

/// A column of the copy (its time, when it last changed, its validators and fingerprints):
/// `new` when the check got a copy and the summary holds none later. A late check's copy is
/// kept when the newer check got none (it failed): the copy freshet holds is the late one, and
/// its validators go with it.
fn unless_later_copy(column: &str, new: &str) -> String {
    format!("{column} = CASE WHEN {NEWER_COPY} THEN {new} ELSE urls.{column} END")
}

/// The check got a copy, and the summary holds none later.
const NEWER_COPY: &str = "v.got_copy AND (urls.copy_ms IS NULL OR urls.copy_ms <= v.checked_ms)";

/// Updates the summaries of a chunk of checks, each its observation and its update, in one
/// statement.
pub(super) async fn update_summaries(
    mut tx: WriteTx,
    chunk: &[(&NewObservation, &SummaryUpdate)],
) -> sqlx::Result<WriteTx> {
    let mut query = sqlx::query(text_for(&UPDATE_SUMMARIES, &tx, chunk.len()));
    for &(obs, update) in chunk {
        let estimate = update.rate.as_ref();
        query = query
            .bind(obs.url_id)
            .bind(i64::from(obs.changed == Some(true)))
            .bind(obs.checked_ms)
            .bind(obs.status.map(i64::from))
            .bind(&obs.error)
            .bind(update.got_copy)
            .bind(&update.etag)
            .bind(&update.last_modified)
            .bind(update.fingerprint.map(hash_to_db))
            .bind(i64::from(obs.content_changed == Some(true)))
            .bind(update.content_fingerprint.map(hash_to_db))
            .bind(update.min_interval_ms)
            .bind_real(estimate.map(|e| e.rate_per_day))
            .bind_real(estimate.map(|e| e.low))
            .bind_real(estimate.map(|e| e.high.min(1e12)))
            .bind_real(estimate.map(|e| e.shape))
            .bind_real(estimate.map(|e| e.rate))
            .bind_real(update.planned_per_day)
            .bind(update.next_due_ms)
            .bind(&update.stats)
            .bind(update.failures.map(i64::from))
            .bind(update.written_ms)
            .bind(update.waits_for_feed_id.is_some())
            .bind(update.waits_for_feed_id.flatten())
            .bind(update.checked_as);
    }
    query.execute(&mut *tx).await?;
    Ok(tx)
}

#[cfg(test)]
mod tests {
    use crate::store::summary::{PlanUpdate, SummaryUpdate};
    use crate::store::test_support::{due, feed_and_page, observed, two_urls};
    use crate::store::urls::{UrlPages, UrlScope};

    /// A check whose plan was taken before a feed read's save of the page's plan (the check's
    /// commit queued or retried meanwhile) leaves the saved plan and wait; a check written
    /// after the save writes its own. The row's `written_ms` never moves back.
    #[tokio::test]
    async fn a_check_planned_before_a_save_leaves_the_plan_it_saved() {
        let (stores, _dir) = crate::store::test_support::stores("planned_before_a_read").await;
        for store in stores {
            let (feed, page) = feed_and_page(&store).await;
            let check = |written_ms: i64, due_ms: i64| SummaryUpdate {
                waits_for_feed_id: Some(Some(feed)),
                written_ms: Some(written_ms),
                ..due(due_ms, "p")
            };
            let plan_of = async || {
                let row = store.url_row("http://a.test/b").await.unwrap().unwrap();
                (row.next_due_ms, row.waits_for_feed_id, row.checks)
            };
            let record = async |at: i64, update: SummaryUpdate| {
                let observation = observed(page, at, false);
                store.record_check(&observation, &update).await.unwrap();
            };
            record(10, check(1_000, 100)).await;
            let read = PlanUpdate {
                url_id: page,
                planned_per_day: 3.0,
                next_due_ms: 500,
                watched: None,
                rate: None,
                waits_for_feed_id: None,
                written_ms: Some(2_000),
                taken_ms: Some(2_000),
            };
            store.save_plan(vec![read.clone()]).await.unwrap();
            record(20, check(1_500, 200)).await;
            assert_eq!(
                plan_of().await,
                (Some(500), None, 2),
                "the read's plan stands"
            );
            let written_after = async |at: i64| {
                let mut pages = UrlPages::new(UrlScope::WrittenAfter(at), 10);
                let rows = pages.next(&store).await.unwrap().unwrap_or_default();
                rows.iter().any(|row| row.id == page)
            };
            assert!(written_after(1_900).await, "not written back to 1,500");
            record(30, check(3_000, 300)).await;
            assert_eq!(
                plan_of().await,
                (Some(300), Some(feed), 3),
                "a later check's"
            );
            // The save of every plan stamps nothing: a check planned before it and committed
            // after writes its plan, as it did.
            let every = PlanUpdate {
                next_due_ms: 600,
                written_ms: None,
                taken_ms: None,
                ..read
            };
            store.save_plan(vec![every]).await.unwrap();
            record(40, check(3_500, 400)).await;
            assert_eq!(
                plan_of().await,
                (Some(400), Some(feed), 4),
                "the check's plan"
            );
            store.close().await;
        }
    }

    /// The host's old holder's late check, committed first, is no save of the plan: the new
    /// holder's check, planned before the late one was written and retried after it, writes
    /// its plan. (Compared with the row's `written_ms`, which the late check moved on, it
    /// kept the old holder's plan.)
    #[tokio::test]
    async fn a_late_check_committed_first_leaves_the_newer_checks_plan() {
        let (stores, _dir) = crate::store::test_support::stores("late_check_first").await;
        for store in stores {
            let (a, _) = two_urls(&store).await;
            let late = SummaryUpdate {
                written_ms: Some(3_000),
                ..due(5_000, "old")
            };
            let newer = SummaryUpdate {
                written_ms: Some(2_500),
                ..due(9_000, "new")
            };
            (store.record_check(&observed(a, 1_000, true), &late).await).unwrap();
            (store.record_check(&observed(a, 2_000, false), &newer).await).unwrap();
            let row = store.url_row("http://a.test/a").await.unwrap().unwrap();
            assert_eq!(
                (row.last_checked_ms, row.next_due_ms),
                (Some(2_000), Some(9_000))
            );
            store.close().await;
        }
    }

    #[tokio::test]
    async fn a_late_check_is_counted_but_leaves_the_newer_summary() {
        let (stores, _dir) = crate::store::test_support::stores("late_check").await;
        for store in stores {
            let (a, _) = two_urls(&store).await;
            // The new holder's request went out at 2,000 and committed first; the old holder's,
            // sent at 1,000 before its lease ran out, commits after it.
            let newer = SummaryUpdate {
                written_ms: Some(2_500),
                ..due(9_000, "new")
            };
            let late = SummaryUpdate {
                written_ms: Some(3_000),
                ..due(5_000, "old")
            };
            let mut late_obs = observed(a, 1_000, true);
            late_obs.status = Some(500);
            store
                .record_check(&observed(a, 2_000, false), &newer)
                .await
                .unwrap();
            store.record_check(&late_obs, &late).await.unwrap();
            assert_eq!(store.observation_count().await.unwrap(), 2);
            let row = store.url_row("http://a.test/a").await.unwrap().unwrap();
            assert_eq!((row.checks, row.changes), (2, 1));
            assert_eq!(
                (row.last_checked_ms, row.last_status, row.etag.as_deref()),
                (Some(2_000), Some(200), Some("new"))
            );
            assert_eq!((row.next_due_ms, row.last_changed_ms), (Some(9_000), None));
            // Not handed to the other workers again: nothing in the row moved but its counts.
            let mut pages = UrlPages::new(UrlScope::WrittenAfter(2_600), 10);
            assert!(
                pages
                    .next(&store)
                    .await
                    .unwrap()
                    .is_none_or(|r| r.is_empty())
            );
            store.close().await;
        }
    }

    #[tokio::test]
    async fn a_late_check_keeps_its_copy_when_the_newer_check_got_none() {
        let (stores, _dir) = crate::store::test_support::stores("late_copy").await;
        for store in stores {
            let (a, _) = two_urls(&store).await;
            let first = observed(a, 100, false);
            store
                .record_check(&first, &due(1_000, "first"))
                .await
                .unwrap();
            // The new holder's request at 2,000 failed and committed first; the old holder's,
            // sent at 1,000, got a changed copy and commits after it.
            let mut failed = observed(a, 2_000, false);
            (failed.status, failed.error) = (None, Some("timed out".into()));
            let no_copy = SummaryUpdate {
                got_copy: false,
                etag: None,
                ..due(9_000, "")
            };
            store.record_check(&failed, &no_copy).await.unwrap();
            // A feed announced a change at 500: the copy of 100 is known stale.
            store.add_change_events(a, &[500], "feed").await.unwrap();
            let row = store.url_row("http://a.test/a").await.unwrap().unwrap();
            assert_eq!(row.known_change_ms, Some(500));
            let late = SummaryUpdate {
                written_ms: Some(3_000),
                ..due(5_000, "late")
            };
            store
                .record_check(&observed(a, 1_000, true), &late)
                .await
                .unwrap();
            let row = store.url_row("http://a.test/a").await.unwrap().unwrap();
            // The copy held is the late check's, with its validators and its change ...
            assert_eq!(
                (row.copy_ms, row.etag.as_deref(), row.last_changed_ms),
                (Some(1_000), Some("late"), Some(1_000))
            );
            assert_eq!(
                row.known_change_ms, None,
                "the late copy came after the change"
            );
            // ... the row is handed to the other workers again ...
            let mut pages = UrlPages::new(UrlScope::WrittenAfter(2_600), 10);
            let again = pages.next(&store).await.unwrap().unwrap_or_default();
            assert_eq!(again.len(), 1);
            // ... and the newer check still decides the status and the plan.
            assert_eq!(
                (row.last_checked_ms, row.last_status, row.next_due_ms),
                (Some(2_000), None, Some(9_000))
            );
            // A late copy older than the summary's own leaves it.
            store
                .record_check(&observed(a, 500, false), &due(5_000, "older"))
                .await
                .unwrap();
            let row = store.url_row("http://a.test/a").await.unwrap().unwrap();
            assert_eq!(
                (row.copy_ms, row.etag.as_deref()),
                (Some(1_000), Some("late"))
            );
            store.close().await;
        }
    }

    /// A page's check committed after its row became a sitemap (discovery found it is one while
    /// the check was in flight) is appended, but leaves the sitemap's summary: no page's copy,
    /// validators or plan on it. A check of the row as it is writes its summary.
    #[tokio::test]
    async fn a_check_of_a_kind_its_row_no_longer_has_leaves_the_summary() {
        let (stores, _dir) = crate::store::test_support::stores("check_of_old_kind").await;
        for store in stores {
            let (page, _) = two_urls(&store).await;
            let row = store.url_row("http://a.test/a").await.unwrap().unwrap();
            let declared = crate::store::kinds::Declared {
                site_id: row.site_id,
                url: row.url.clone(),
                kind: "sitemap",
                dropped: false,
            };
            let changed = store.declare_kinds(&[declared], 50).await.unwrap();
            assert_eq!(changed.len(), 1, "made a sitemap");
            let as_page = SummaryUpdate {
                checked_as: Some("page"),
                ..due(9_000, "page")
            };
            (store
                .record_check(&observed(page, 100, true), &as_page)
                .await)
                .unwrap();
            let summary = async || {
                let row = store.url_row("http://a.test/a").await.unwrap().unwrap();
                (row.kind, row.checks, row.etag, row.next_due_ms)
            };
            assert_eq!(summary().await, ("sitemap".into(), 0, None, Some(50)));
            assert_eq!(store.observation_count().await.unwrap(), 1, "appended");
            let as_sitemap = SummaryUpdate {
                checked_as: Some("sitemap"),
                ..due(7_000, "sitemap")
            };
            (store
                .record_check(&observed(page, 200, true), &as_sitemap)
                .await)
                .unwrap();
            let etag = Some("sitemap".to_string());
            assert_eq!(summary().await, ("sitemap".into(), 1, etag, Some(7_000)));
            store.close().await;
        }
    }
}
