//! Hosts: one row per origin, with its cached robots.txt, back-off and learnt validator trust.

use super::Store;

/// A host's stored state.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct HostRow {
    /// Row id.
    pub id: i64,
    /// scheme://host:port.
    pub origin: String,
    /// When robots.txt was last fetched (or tried).
    pub robots_checked_ms: Option<i64>,
    /// Its HTTP status; None when the host was unreachable.
    pub robots_status: Option<i64>,
    /// Its body, capped.
    pub robots_txt: Option<Vec<u8>>,
    /// Why it could not be fetched, if so.
    pub robots_error: Option<String>,
    /// Crawl-delay from robots.txt.
    pub crawl_delay_ms: Option<i64>,
    /// Not to be contacted before this time (Retry-After, back-off).
    pub backoff_until_ms: Option<i64>,
    /// Learnt validator trust, as JSON.
    pub trust_json: Option<String>,
}

/// A robots.txt fetch result to cache.
#[derive(Debug, Clone)]
pub struct RobotsRecord<'a> {
    /// When it was fetched.
    pub checked_ms: i64,
    /// HTTP status, None when unreachable.
    pub status: Option<u16>,
    /// The body (already capped).
    pub body: Option<&'a [u8]>,
    /// Why it failed, if it did.
    pub error: Option<&'a str>,
    /// The Crawl-delay that applies to freshet.
    pub crawl_delay_ms: Option<i64>,
}

impl Store {
    /// The id of `origin`, inserting it if new.
    pub async fn host_id(&self, origin: &str) -> sqlx::Result<i64> {
        self.write("host_id", |mut tx| async move {
            let value = sqlx::query_scalar(
                "INSERT INTO hosts (origin) VALUES ($1)
                 ON CONFLICT(origin) DO UPDATE SET origin = excluded.origin RETURNING id",
            )
            .bind(origin)
            .fetch_one(&mut *tx)
            .await?;
            Ok((tx, value))
        })
        .await
    }

    /// A host's row by origin.
    pub async fn host(&self, origin: &str) -> sqlx::Result<Option<HostRow>> {
        sqlx::query_as("SELECT * FROM hosts WHERE origin = $1")
            .bind(origin)
            .fetch_optional(self.reader())
            .await
    }

    /// Caches a robots.txt fetch.
    pub async fn save_robots(&self, host_id: i64, robots: &RobotsRecord<'_>) -> sqlx::Result<()> {
        self.write("save_robots", |mut tx| async move {
            sqlx::query(
                "UPDATE hosts SET robots_checked_ms = $1, robots_status = $2, robots_txt = $3,
                     robots_error = $4, crawl_delay_ms = $5 WHERE id = $6",
            )
            .bind(robots.checked_ms)
            .bind(robots.status.map(i64::from))
            .bind(robots.body)
            .bind(robots.error)
            .bind(robots.crawl_delay_ms)
            .bind(host_id)
            .execute(&mut *tx)
            .await?;
            Ok((tx, ()))
        })
        .await
    }

    /// Every host's stored validator trust (host id, JSON).
    pub async fn host_trust(&self) -> sqlx::Result<Vec<(i64, String)>> {
        sqlx::query_as("SELECT id, trust_json FROM hosts WHERE trust_json IS NOT NULL")
            .fetch_all(self.reader())
            .await
    }

    /// Records that the host asked us to stay away until `until_ms`.
    pub async fn set_backoff(&self, host_id: i64, until_ms: Option<i64>) -> sqlx::Result<()> {
        self.write("set_backoff", |mut tx| async move {
            sqlx::query("UPDATE hosts SET backoff_until_ms = $1 WHERE id = $2")
                .bind(until_ms)
                .bind(host_id)
                .execute(&mut *tx)
                .await?;
            Ok((tx, ()))
        })
        .await
    }
}
