//! Observations (append-only checks) and exact change events.

use super::Store;

/// One check to append.
#[derive(Debug, Clone, Default)]
pub struct NewObservation {
    /// The URL checked.
    pub url_id: i64,
    /// When the request started.
    pub checked_ms: i64,
    /// `GET` or `HEAD`.
    pub method: &'static str,
    /// HTTP status of the last hop, None when no response arrived.
    pub status: Option<u16>,
    /// ETag of the response.
    pub etag: Option<String>,
    /// Last-Modified of the response, parsed.
    pub last_modified_ms: Option<i64>,
    /// Content fingerprint.
    pub fingerprint: Option<u64>,
    /// Body bytes received (decompressed).
    pub bytes: u64,
    /// How long the request took (clock ms).
    pub duration_ms: i64,
    /// What went wrong, if anything.
    pub error: Option<String>,
    /// Whether a change was seen: Some(true/false), None when it cannot be told.
    pub changed: Option<bool>,
    /// What told us: `304`, `etag`, `last-modified`, `fingerprint`, `first`.
    pub change_evidence: Option<&'static str>,
    /// Content fingerprint of the body read: of its extracted main text (of the bytes for a
    /// body without text).
    pub content_fingerprint: Option<u64>,
    /// Whether the main content changed: Some(true/false), None when it cannot be told.
    pub content_changed: Option<bool>,
    /// Where the redirects ended, if anywhere else.
    pub final_url: Option<String>,
    /// Each redirect hop as JSON `[[url, status], ...]`.
    pub redirects_json: Option<String>,
}

/// A stored check, as the estimator reads it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ObservationRow {
    /// When the request started.
    pub checked_ms: i64,
    /// `GET` or `HEAD`.
    pub method: String,
    /// HTTP status.
    pub status: Option<i64>,
    /// ETag.
    pub etag: Option<String>,
    /// Last-Modified, parsed.
    pub last_modified_ms: Option<i64>,
    /// Content fingerprint (as stored).
    pub fingerprint: Option<i64>,
    /// Body bytes.
    pub bytes: i64,
    /// Duration.
    pub duration_ms: i64,
    /// Error text.
    pub error: Option<String>,
    /// 1 changed, 0 unchanged, None unknown.
    pub changed: Option<i64>,
    /// What told us.
    pub change_evidence: Option<String>,
    /// Content fingerprint (as stored); None before migration 0012.
    #[sqlx(default)]
    pub content_fingerprint: Option<i64>,
    /// 1 the main content changed, 0 not, None unknown (and before migration 0012).
    #[sqlx(default)]
    pub content_changed: Option<i64>,
    /// Final URL after redirects.
    pub final_url: Option<String>,
    /// Redirect hops JSON.
    pub redirects: Option<String>,
}

impl Store {
    /// A URL's checks, oldest first, the newest `limit` of them.
    pub async fn observations_for(
        &self,
        url_id: i64,
        limit: i64,
    ) -> sqlx::Result<Vec<ObservationRow>> {
        let mut rows: Vec<ObservationRow> = sqlx::query_as(
            "SELECT checked_ms, method, status, etag, last_modified_ms, fingerprint, bytes,
                    duration_ms, error, changed, change_evidence, final_url, redirects,
                    content_fingerprint, content_changed
             FROM observations WHERE url_id = $1 ORDER BY checked_ms DESC, id DESC LIMIT $2",
        )
        .bind(url_id)
        .bind(limit)
        .fetch_all(self.reader())
        .await?;
        rows.reverse();
        Ok(rows)
    }

    /// Records exact change times (feed entries, trusted lastmod); duplicates are ignored. A
    /// change after the URL's copy makes its copy known stale (`known_change_ms`, the first
    /// such change). Returns how many were new.
    pub async fn add_change_events(
        &self,
        url_id: i64,
        changed_ms: &[i64],
        source: &str,
    ) -> sqlx::Result<u64> {
        self.write("add_change_events", |mut tx| async move {
            let mut added = 0;
            for &at in changed_ms {
                added += sqlx::query(
                    "INSERT INTO change_events (url_id, changed_ms, source) VALUES ($1, $2, $3)
                     ON CONFLICT (url_id, changed_ms) DO NOTHING",
                )
                .bind(url_id)
                .bind(at)
                .bind(source)
                .execute(&mut *tx)
                .await?
                .rows_affected();
                // A change after the copy makes it known stale from the first such change on.
                sqlx::query(
                    "UPDATE urls SET known_change_ms = CASE
                         WHEN known_change_ms < $1 THEN known_change_ms ELSE $1 END
                     WHERE id = $2 AND copy_ms < $1",
                )
                .bind(at)
                .bind(url_id)
                .execute(&mut *tx)
                .await?;
            }
            Ok((tx, added))
        })
        .await
    }

    /// A URL's exact change times, oldest first.
    pub async fn change_events_for(&self, url_id: i64) -> sqlx::Result<Vec<i64>> {
        sqlx::query_scalar(
            "SELECT changed_ms FROM change_events WHERE url_id = $1 ORDER BY changed_ms",
        )
        .bind(url_id)
        .fetch_all(self.reader())
        .await
    }

    /// Total observations recorded.
    pub async fn observation_count(&self) -> sqlx::Result<i64> {
        sqlx::query_scalar("SELECT COUNT(*) FROM observations")
            .fetch_one(self.reader())
            .await
    }
}
