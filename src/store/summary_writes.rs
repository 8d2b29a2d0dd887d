//! The update of the URLs' summaries that a group of checks makes ([`super::check_writes`]): one
//! `UPDATE … FROM (VALUES …)` per chunk, and which check's values win when a check commits after
//! a newer one of the same URL (an old lease holder's request that went out first): the newer
//! check keeps the status, estimate and plan, and the later copy keeps the copy's columns.

use std::sync::LazyLock;

use super::backend::BindReal;
use super::batch::{Texts, placeholder_rows, text_for, texts};
use super::hash_to_db;
use super::observations::NewObservation;
use super::summary::SummaryUpdate;
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
    let plan = [
        (
            "planned_per_day",
            "COALESCE(v.planned_per_day, urls.planned_per_day)",
        ),
        ("next_due_ms", "v.next_due_ms"),
        (
            "waits_for_feed_id",
            "CASE WHEN v.sets_wait THEN v.waits_for_feed_id ELSE urls.waits_for_feed_id END",
        ),
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
                    next_due_ms, stats, failures, written_ms, sets_wait, waits_for_feed_id)
                    AS (VALUES {})
             UPDATE urls SET checks = urls.checks + 1, changes = urls.changes + v.changed,
                 content_changes = urls.content_changes + v.content_changed,
                 {set}
             FROM v WHERE urls.id = v.id",
            placeholder_rows(n, 24)
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
            .bind(update.waits_for_feed_id.flatten());
    }
    query.execute(&mut *tx).await?;
    Ok(tx)
}
