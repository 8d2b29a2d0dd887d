//! Errors: every problem met (schedule, robots, sitemap, feed, fetch), with where it was.

use super::Store;

/// One recorded problem.
#[derive(Debug, Clone, Default)]
pub struct ErrorRecord {
    /// Where in the pipeline: `schedule`, `robots`, `sitemap`, `feed`, `fetch`, `dedup`.
    pub scope: &'static str,
    /// The site concerned, if any.
    pub site: Option<String>,
    /// The URL concerned, if any.
    pub url: Option<String>,
    /// The file concerned (schedule files), if any.
    pub file: Option<String>,
    /// The line in that file, if known.
    pub line: Option<i64>,
    /// What was wrong.
    pub message: String,
}

impl Store {
    /// Appends an error row.
    pub async fn record_error(&self, at_ms: i64, error: &ErrorRecord) -> sqlx::Result<()> {
        self.write("record_error", |mut tx| async move {
            sqlx::query(
                "INSERT INTO errors (at_ms, scope, site, url, file, line, message)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
            )
            .bind(at_ms)
            .bind(error.scope)
            .bind(&error.site)
            .bind(&error.url)
            .bind(&error.file)
            .bind(error.line)
            .bind(&error.message)
            .execute(&mut *tx)
            .await?;
            Ok((tx, ()))
        })
        .await
    }

    /// The problem that kept a site's schedule file out of a run since the site was last loaded
    /// from it (the newest; its message names the file and line), if one did.
    pub async fn site_file_skipped(&self, site_id: i64) -> sqlx::Result<Option<String>> {
        sqlx::query_scalar(
            "SELECT e.message FROM errors e JOIN sites s ON e.file = s.source_file
             WHERE s.id = $1 AND e.scope = 'schedule' AND e.at_ms > s.updated_ms
             ORDER BY e.id DESC LIMIT 1",
        )
        .bind(site_id)
        .fetch_optional(self.reader())
        .await
    }

    /// The most recent errors, newest first.
    pub async fn recent_errors(
        &self,
        limit: i64,
    ) -> sqlx::Result<Vec<(i64, String, Option<String>, String)>> {
        sqlx::query_as("SELECT at_ms, scope, url, message FROM errors ORDER BY id DESC LIMIT $1")
            .bind(limit)
            .fetch_all(self.reader())
            .await
    }
}
