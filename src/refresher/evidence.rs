//! Glue from stored rows to the estimator's input, and change detection for one check. Pure:
//! the estimator itself is [`crate::estimate`]; this only says what the rows mean.

use crate::estimate::{Check, Evidence, Stats, ValidatorCheck, changefreq_per_day, days_from_ms};
use crate::fetch::{FetchError, FetchOutcome};
use crate::store::observations::ObservationRow;

/// What we knew of the copy before a check.
#[derive(Debug, Clone, Default)]
pub struct PreviousCopy {
    /// Whether we hold a copy at all (a 2xx or 304 was seen before).
    pub exists: bool,
    /// Its ETag.
    pub etag: Option<String>,
    /// Its raw Last-Modified.
    pub last_modified: Option<String>,
    /// Its fingerprint (of the decoded body: every byte counts).
    pub fingerprint: Option<u64>,
    /// Its content fingerprint (of the main text; None for a copy taken before they were kept).
    pub content_fingerprint: Option<u64>,
}

/// What one response says about the copy.
#[derive(Debug, Clone, Default)]
pub struct Response {
    /// HTTP status.
    pub status: Option<u16>,
    /// ETag.
    pub etag: Option<String>,
    /// Raw Last-Modified.
    pub last_modified: Option<String>,
    /// Fingerprint of the decoded body, when a body was read.
    pub fingerprint: Option<u64>,
    /// Content fingerprint of the main text, when a body was read.
    pub content_fingerprint: Option<u64>,
}

/// Whether a check saw a change, and what told us; plus what the check teaches about the
/// host's validators (only full GETs with a previous fingerprint teach anything).
pub fn detect_change(
    previous: &PreviousCopy,
    response: &Response,
    trust_etag: bool,
) -> (Option<bool>, Option<&'static str>, Option<ValidatorCheck>) {
    let Some(status) = response.status else {
        return (None, None, None);
    };
    if status == 304 {
        // The content did not change: a Last-Modified that moved anyway is a lie worth learning
        // (some servers stamp every response with "now").
        let lesson = ValidatorCheck {
            content_changed: false,
            last_modified_changed: both(&previous.last_modified, &response.last_modified),
            etag_changed: None,
            not_modified: true,
            audit: None,
        };
        return (Some(false), Some("304"), Some(lesson));
    }
    if !(200..300).contains(&status) {
        return (None, None, None);
    }
    if !previous.exists {
        return (None, Some("first"), None);
    }
    if let (Some(before), Some(now)) = (previous.fingerprint, response.fingerprint) {
        let content_changed = before != now;
        let lesson = ValidatorCheck {
            content_changed,
            last_modified_changed: both(&previous.last_modified, &response.last_modified),
            etag_changed: both(&previous.etag, &response.etag),
            ..Default::default()
        };
        return (Some(content_changed), Some("fingerprint"), Some(lesson));
    }
    // No body to compare (HEAD): fall back on validators.
    if trust_etag && let Some(changed) = both(&previous.etag, &response.etag) {
        return (Some(changed), Some("etag"), None);
    }
    if let Some(changed) = both(&previous.last_modified, &response.last_modified) {
        return (Some(changed), Some("last-modified"), None);
    }
    (None, None, None)
}

/// Whether the main content changed, given the byte-level verdict of [`detect_change`] and what
/// told it: a 304 is unchanged; bodies compared by fingerprint are compared by content
/// fingerprint (unchanged bytes are unchanged content; unknown when the copy has no content
/// fingerprint yet); a HEAD check judged by validators has nothing better than them.
pub fn detect_content_change(
    previous: &PreviousCopy,
    response: &Response,
    changed: Option<bool>,
    evidence: Option<&str>,
) -> Option<bool> {
    match evidence? {
        "304" => Some(false),
        "fingerprint" if changed == Some(false) => Some(false),
        "fingerprint" => match (previous.content_fingerprint, response.content_fingerprint) {
            (Some(before), Some(now)) => Some(before != now),
            _ => None,
        },
        "etag" | "last-modified" => changed,
        _ => None,
    }
}

/// The verdict that counts for a site with `signal` and the validator lesson judged by it: a
/// host whose ETag, Last-Modified or 304 stays put while only noise changes told the truth about
/// the content. A lesson that cannot be judged by its signal (no content fingerprint yet) is
/// dropped rather than judged by the other one.
pub fn counted(
    signal: crate::schedule::ChangeSignal,
    changed: Option<bool>,
    content_changed: Option<bool>,
    lesson: Option<ValidatorCheck>,
) -> (Option<bool>, Option<ValidatorCheck>) {
    match signal {
        crate::schedule::ChangeSignal::Bytes => (changed, lesson),
        crate::schedule::ChangeSignal::Content => {
            let lesson = match (lesson, content_changed) {
                (Some(lesson), Some(content_changed)) => Some(ValidatorCheck {
                    content_changed,
                    ..lesson
                }),
                _ => None,
            };
            (content_changed, lesson)
        }
    }
}

/// Why a 2xx body must not replace our copy, if it must not: it is empty (or decodes to
/// nothing) while the copy we hold has content, or while the response's ETag claims the same
/// representation as our copy. This is what nginx serves while a static site is being rebuilt;
/// storing it would lose the page and count a change that did not happen. (A body shorter than
/// its Content-Length is caught by the fetcher.)
pub fn empty_body_error(previous: &PreviousCopy, outcome: &FetchOutcome) -> Option<FetchError> {
    if outcome.error.is_some() || !outcome.status.is_some_and(|s| (200..300).contains(&s)) {
        return None;
    }
    let empty = outcome.body.as_ref().is_some_and(|b| b.is_empty())
        || (outcome.body.is_some() && outcome.fingerprint == Some(empty_fingerprint()));
    if !empty || !previous.exists {
        return None;
    }
    let copy_has_content = previous
        .fingerprint
        .is_some_and(|fp| fp != empty_fingerprint());
    let same_etag = matches!((&previous.etag, &outcome.etag), (Some(a), Some(b)) if a == b);
    (copy_has_content || same_etag).then(|| FetchError::EmptyBody {
        url: outcome.final_url.to_string(),
        reason: if copy_has_content {
            "our copy has content".to_string()
        } else {
            format!(
                "its ETag {} is our copy's",
                outcome.etag.as_deref().unwrap_or("")
            )
        },
    })
}

/// The fingerprint of an empty body (xxh3-64 of no bytes; decoded text or raw alike).
pub fn empty_fingerprint() -> u64 {
    xxhash_rust::xxh3::xxh3_64(b"")
}

fn both(before: &Option<String>, now: &Option<String>) -> Option<bool> {
    match (before, now) {
        (Some(a), Some(b)) => Some(a != b),
        _ => None,
    }
}

/// The estimator's evidence for one URL: its checks (with Last-Modified when the host's is
/// trusted), its exact change events, and its changefreq hint.
///
/// Exact events (feed entries) are complete evidence over the span they cover, so checks inside
/// that span are not counted again: the checks before the first event still count.
pub fn evidence_for(
    observations: &[ObservationRow],
    change_events_ms: &[i64],
    changefreq: Option<&str>,
    trust_last_modified: bool,
    now_ms: i64,
) -> Evidence {
    let exact_from = (change_events_ms.len() >= 2).then(|| change_events_ms[0]);
    let checks = observations
        .iter()
        .filter(|o| exact_from.is_none_or(|from| o.checked_ms <= from))
        .map(|o| Check {
            at_days: days_from_ms(o.checked_ms),
            changed: o.changed.map(|c| c != 0),
            last_modified_days: o
                .last_modified_ms
                .filter(|_| trust_last_modified)
                .map(days_from_ms),
        })
        .collect();
    let mut exact = Stats::default();
    if let Some(from) = exact_from {
        let events = change_events_ms
            .iter()
            .filter(|&&t| t > from && t <= now_ms)
            .count();
        exact.add_exact(events as f64, days_from_ms(now_ms - from));
    }
    Evidence {
        checks,
        exact,
        changefreq_per_day: changefreq.and_then(changefreq_per_day),
        feed_ttl_days: None,
    }
}

/// The folded evidence of a URL from its whole history (for a database written before the
/// store kept folded evidence; read once, at start).
pub async fn fold_history(
    store: &crate::store::Store,
    url_id: i64,
    now_ms: i64,
) -> anyhow::Result<Stats> {
    let mut history = store.observations_for(url_id, i64::MAX).await?;
    // Errors say nothing about change and would break the interval chain.
    history.retain(|o| {
        o.status
            .is_some_and(|s| (200..300).contains(&s) || s == 304)
    });
    let events = store.change_events_for(url_id).await?;
    Ok(evidence_for(&history, &events, None, false, now_ms).stats())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy() -> PreviousCopy {
        PreviousCopy {
            exists: true,
            etag: Some("\"a\"".into()),
            last_modified: Some("Mon, 01 Jan 2024 00:00:00 GMT".into()),
            fingerprint: Some(1),
            content_fingerprint: None,
        }
    }

    #[test]
    fn a_304_is_unchanged_and_a_new_fingerprint_is_a_change() {
        let not_modified = Response {
            status: Some(304),
            ..Default::default()
        };
        assert_eq!(detect_change(&copy(), &not_modified, true).0, Some(false));
        let changed = Response {
            status: Some(200),
            fingerprint: Some(2),
            ..Default::default()
        };
        let (seen, why, lesson) = detect_change(&copy(), &changed, true);
        assert_eq!((seen, why), (Some(true), Some("fingerprint")));
        assert_eq!(lesson.unwrap().etag_changed, None);
    }

    #[test]
    fn content_changes_are_judged_by_the_main_text_and_a_304_is_unchanged_for_both() {
        use crate::schedule::ChangeSignal;
        let copy = PreviousCopy {
            content_fingerprint: Some(10),
            ..copy()
        };
        // Ad churn: new bytes, same main text, the ETag stays put.
        let churn = Response {
            status: Some(200),
            etag: Some("\"a\"".into()),
            fingerprint: Some(2),
            content_fingerprint: Some(10),
            ..Default::default()
        };
        let (changed, why, lesson) = detect_change(&copy, &churn, true);
        assert_eq!((changed, why), (Some(true), Some("fingerprint")));
        let content = detect_content_change(&copy, &churn, changed, why);
        assert_eq!(content, Some(false));
        let (seen, judged) = counted(ChangeSignal::Content, changed, content, lesson);
        assert_eq!(seen, Some(false));
        let judged = judged.unwrap();
        assert!(!judged.content_changed && judged.etag_changed == Some(false));
        // The bytes signal keeps the byte verdict and lesson.
        let (seen, judged) = counted(ChangeSignal::Bytes, changed, content, lesson);
        assert_eq!((seen, judged.unwrap().content_changed), (Some(true), true));

        let edit = Response {
            content_fingerprint: Some(11),
            ..churn.clone()
        };
        let (changed, why, _) = detect_change(&copy, &edit, true);
        assert_eq!(
            detect_content_change(&copy, &edit, changed, why),
            Some(true)
        );
        let not_modified = Response {
            status: Some(304),
            ..Default::default()
        };
        let (changed, why, _) = detect_change(&copy, &not_modified, true);
        assert_eq!(
            detect_content_change(&copy, &not_modified, changed, why),
            Some(false)
        );
        // A copy taken before content fingerprints were kept: unknown, and no lesson.
        let old = PreviousCopy {
            content_fingerprint: None,
            ..copy.clone()
        };
        let (changed, why, lesson) = detect_change(&old, &churn, true);
        let content = detect_content_change(&old, &churn, changed, why);
        assert_eq!(content, None);
        assert_eq!(
            counted(ChangeSignal::Content, changed, content, lesson),
            (None, None)
        );
        // Same bytes: same content, whatever the fingerprints.
        let same = Response {
            fingerprint: Some(1),
            content_fingerprint: None,
            ..churn
        };
        let (changed, why, _) = detect_change(&old, &same, true);
        assert_eq!(
            detect_content_change(&old, &same, changed, why),
            Some(false)
        );
    }

    #[test]
    fn the_first_copy_and_errors_tell_nothing() {
        let ok = Response {
            status: Some(200),
            fingerprint: Some(2),
            ..Default::default()
        };
        assert_eq!(detect_change(&PreviousCopy::default(), &ok, true).0, None);
        let error = Response {
            status: Some(500),
            ..Default::default()
        };
        assert_eq!(detect_change(&copy(), &error, true).0, None);
    }

    #[test]
    fn head_checks_use_validators_and_drop_an_untrusted_etag() {
        let head = Response {
            status: Some(200),
            etag: Some("\"a\"".into()),
            last_modified: Some("Tue, 02 Jan 2024 00:00:00 GMT".into()),
            fingerprint: None,
            content_fingerprint: None,
        };
        assert_eq!(
            detect_change(&copy(), &head, true),
            (Some(false), Some("etag"), None)
        );
        assert_eq!(
            detect_change(&copy(), &head, false),
            (Some(true), Some("last-modified"), None)
        );
    }

    #[test]
    fn exact_events_replace_checks_in_the_span_they_cover() {
        let day = 86_400_000;
        let obs = |at: i64, changed: Option<i64>| ObservationRow {
            checked_ms: at,
            method: "GET".into(),
            status: Some(200),
            etag: None,
            last_modified_ms: None,
            fingerprint: None,
            bytes: 0,
            duration_ms: 0,
            error: None,
            changed,
            change_evidence: None,
            final_url: None,
            redirects: None,
            content_fingerprint: None,
            content_changed: None,
        };
        let observations = vec![obs(0, None), obs(day, Some(1)), obs(5 * day, Some(1))];
        let evidence = evidence_for(
            &observations,
            &[2 * day, 3 * day, 4 * day],
            Some("daily"),
            false,
            6 * day,
        );
        assert_eq!(evidence.checks.len(), 2);
        assert_eq!(evidence.exact.events, 2.0);
        assert!((evidence.exact.exposure_days - 4.0).abs() < 1e-9);
        assert_eq!(evidence.changefreq_per_day, Some(1.0));
    }

    fn body(status: u16, body: &'static [u8], etag: Option<&str>) -> FetchOutcome {
        let url = url::Url::parse("http://a.test/p").unwrap();
        let mut outcome = FetchOutcome::new(url, 0);
        outcome.status = Some(status);
        outcome.body = Some(bytes::Bytes::from_static(body));
        outcome.fingerprint = Some(xxhash_rust::xxh3::xxh3_64(body));
        outcome.etag = etag.map(str::to_string);
        outcome
    }

    #[test]
    fn an_empty_body_replaces_no_copy_with_content() {
        let empty = body(200, b"", Some("\"b\""));
        let error = empty_body_error(&copy(), &empty).expect("rejected");
        assert!(
            error.to_string().contains("our copy has content"),
            "{error}"
        );
        // A first copy may be empty, and so may a page whose copy was empty already.
        assert!(empty_body_error(&PreviousCopy::default(), &empty).is_none());
        let was_empty = PreviousCopy {
            fingerprint: Some(empty_fingerprint()),
            ..copy()
        };
        assert!(empty_body_error(&was_empty, &empty).is_none());
        // Unless the ETag says it is the representation we hold.
        let same_etag = body(200, b"", Some("\"a\""));
        let unknown = PreviousCopy {
            fingerprint: None,
            ..copy()
        };
        assert!(empty_body_error(&unknown, &same_etag).is_some());
        assert!(empty_body_error(&copy(), &body(200, b"x", None)).is_none());
        assert!(empty_body_error(&copy(), &body(404, b"", None)).is_none());
    }
}
