//! `freshet migrate`: copies every row of one database into another, empty one (SQLite into
//! PostgreSQL, say), table by table in the order their foreign keys need, in one transaction on
//! the target: a copy that fails or is killed leaves the target as empty as it found it. The
//! source is read in one transaction, so the copy is of one moment even while workers write.
//!
//! Rows are copied column by column as the target declares them (integer, real, text, blob), so
//! a NULL is bound with its column's type, which PostgreSQL requires.

use futures_util::TryStreamExt;
use sqlx::{AssertSqlSafe, Row};

use super::Store;
use super::backend::BindReal;
use super::backend::ColumnKind;

/// Every table of the schema, each after the tables its foreign keys name. A test checks that
/// the schema has no table missing here.
pub(super) const TABLES: &[&str] = &[
    "sites",
    "hosts",
    "urls",
    "observations",
    "change_events",
    "errors",
    "runs",
    "dedup_urls",
    "dedup_classes",
    "dedup_members",
    "dedup_redirects",
    "dedup_redirect_errors",
    "dedup_near_groups",
    "dedup_meta",
    "documents",
    "host_politeness",
    "freshness_samples",
    "refusals",
    "true_freshness_samples",
    "leases",
    "budget_parts",
    "page_sitemap_names",
];

/// The most values one INSERT binds (PostgreSQL allows 65,535 and SQLite 32,766).
const MAX_VALUES: usize = 30_000;

/// The rows copied per table, in [`TABLES`] order.
pub type CopyCounts = Vec<(&'static str, u64)>;

impl Store {
    /// Deletes every row of every table, in one transaction (the demo replaces its earlier
    /// run this way on PostgreSQL, where there is no file to remove).
    pub async fn delete_all_rows(&self) -> anyhow::Result<()> {
        let mut tx = self.writer.pool.begin().await?;
        for &table in TABLES.iter().rev() {
            sqlx::query(AssertSqlSafe(format!("DELETE FROM {table}")))
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Copies every row of `self` into `target`, which must hold no sites, URLs or
    /// observations yet. Answers the rows copied per table.
    pub async fn copy_into(&self, target: &Store) -> anyhow::Result<CopyCounts> {
        for table in ["sites", "urls", "observations"] {
            let rows: i64 =
                sqlx::query_scalar(AssertSqlSafe(format!("SELECT COUNT(*) FROM {table}")))
                    .fetch_one(target.reader())
                    .await?;
            anyhow::ensure!(
                rows == 0,
                "the target database already holds {rows} rows in {table}: freshet migrate \
                 copies into an empty database only"
            );
        }
        // Every table read from one snapshot of the source: workers still writing to it (a
        // PostgreSQL source; a SQLite one is locked by the caller) cannot make a copy whose
        // observations name URLs it lacks.
        let mut source = self.reader().begin().await?;
        if let Some(statement) = self.writer.backend.snapshot_read() {
            sqlx::query(statement).execute(&mut *source).await?;
        }
        let mut tx = target.writer.pool.begin().await?;
        let mut counts = Vec::with_capacity(TABLES.len());
        for &table in TABLES {
            let columns = target
                .writer
                .backend
                .columns(target.reader(), table)
                .await?;
            anyhow::ensure!(!columns.is_empty(), "the target has no table {table}");
            let names = columns
                .iter()
                .map(|(name, _)| name.as_str())
                .collect::<Vec<_>>()
                .join(", ");
            let select = format!("SELECT {names} FROM {table} ORDER BY 1");
            let per_insert = (MAX_VALUES / columns.len()).max(1);
            let mut rows = sqlx::query(AssertSqlSafe(select)).fetch(&mut *source);
            let mut batch = Vec::with_capacity(per_insert);
            let mut copied = 0u64;
            while let Some(row) = rows.try_next().await? {
                batch.push(row);
                if batch.len() == per_insert {
                    insert(&mut tx, table, &names, &columns, &batch).await?;
                    copied += batch.len() as u64;
                    batch.clear();
                }
            }
            if !batch.is_empty() {
                insert(&mut tx, table, &names, &columns, &batch).await?;
                copied += batch.len() as u64;
            }
            if let Some(statement) = target.writer.backend.after_copy(table) {
                sqlx::query(AssertSqlSafe(statement))
                    .execute(&mut *tx)
                    .await?;
            }
            counts.push((table, copied));
        }
        tx.commit().await?;
        source.rollback().await?;
        Ok(counts)
    }
}

/// Inserts `rows` into `table` in one statement, each value bound as its target column's kind.
async fn insert(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    table: &str,
    names: &str,
    columns: &[(String, ColumnKind)],
    rows: &[sqlx::any::AnyRow],
) -> anyhow::Result<()> {
    let width = columns.len();
    let values = (0..rows.len())
        .map(|r| {
            let row = (1..=width)
                .map(|c| format!("${}", r * width + c))
                .collect::<Vec<_>>()
                .join(", ");
            format!("({row})")
        })
        .collect::<Vec<_>>()
        .join(", ");
    let text = format!("INSERT INTO {table} ({names}) VALUES {values}");
    let mut query = sqlx::query(AssertSqlSafe(text));
    for row in rows {
        for (i, (name, kind)) in columns.iter().enumerate() {
            let read = |error: sqlx::Error| {
                anyhow::anyhow!("reading {table}.{name} of the source: {error}")
            };
            query = match kind {
                ColumnKind::Integer => query.bind(row.try_get::<Option<i64>, _>(i).map_err(read)?),
                ColumnKind::Real => {
                    query.bind_real(row.try_get::<Option<f64>, _>(i).map_err(read)?)
                }
                ColumnKind::Text => query.bind(row.try_get::<Option<String>, _>(i).map_err(read)?),
                ColumnKind::Blob => query.bind(row.try_get::<Option<Vec<u8>>, _>(i).map_err(read)?),
            };
        }
    }
    query
        .execute(&mut **tx)
        .await
        .map_err(|error| anyhow::anyhow!("writing {} rows into {table}: {error}", rows.len()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::TABLES;
    use crate::store::Store;
    use crate::store::discovered::Discovered;
    use crate::store::observations::NewObservation;
    use crate::store::sites::SiteRecord;
    use crate::store::summary::SummaryUpdate;
    use crate::store::test_support::{temp_postgres_store, temp_store};

    /// A site with two URLs, one checked with a rate, a change event and an error.
    async fn fill(store: &Store) {
        let site = SiteRecord {
            name: "s",
            weight: 2.0,
            requests_per_day: 100.0,
            source_file: Some("s.toml"),
        };
        let site_id = store.upsert_site(&site, 0).await.unwrap();
        let host_id = store.host_id("http://a.test:80").await.unwrap();
        let found = ["http://a.test/x", "http://a.test/y"].map(|url| Discovered {
            lastmod_ms: Some(500),
            lastmod_believed: true,
            priority: Some(0.5),
            ..crate::store::test_support::page(url, site_id, host_id)
        });
        let ids = store.upsert_discovered(&found, 1_000).await.unwrap();
        let obs = NewObservation {
            url_id: ids[0],
            checked_ms: 2_000,
            method: "GET",
            status: Some(200),
            fingerprint: Some(u64::MAX),
            changed: Some(true),
            ..Default::default()
        };
        let update = SummaryUpdate {
            got_copy: true,
            etag: Some("\"v1\"".into()),
            fingerprint: Some(u64::MAX),
            next_due_ms: 90_000,
            rate: Some(crate::estimate::RateEstimate::from_gamma(2.0, 2.0)),
            ..Default::default()
        };
        store.record_check(&obs, &update).await.unwrap();
        store
            .add_change_events(ids[1], &[10, 20], "feed")
            .await
            .unwrap();
    }

    /// What the reports read of a store, as text.
    async fn seen(store: &Store) -> String {
        format!(
            "{:?}\n{:?}\n{:?}",
            store.url_status(None).await.unwrap(),
            store.page_beliefs().await.unwrap(),
            store.change_events_for(2).await.unwrap()
        )
    }

    #[tokio::test]
    async fn a_copy_into_postgres_and_back_reads_the_same() {
        let Some(postgres) = temp_postgres_store("a_copy_into_postgres_and_back").await else {
            return;
        };
        let (source, _dir) = temp_store().await;
        fill(&source).await;
        let counts = source.copy_into(&postgres).await.unwrap();
        assert!(counts.contains(&("urls", 2)), "{counts:?}");
        assert_eq!(seen(&source).await, seen(&postgres).await);
        // New rows get ids after the copied ones.
        let host = postgres.host_id("http://b.test:80").await.unwrap();
        assert_eq!(host, 2);
        // A database that holds rows already is not written over.
        let error = source.copy_into(&postgres).await.unwrap_err();
        assert!(format!("{error}").contains("empty"), "{error}");
        let (back, _back_dir) = temp_store().await;
        postgres.copy_into(&back).await.unwrap();
        assert_eq!(seen(&postgres).await, seen(&back).await);
    }

    #[tokio::test]
    async fn every_table_of_the_schema_is_copied() {
        let (store, _dir) = temp_store().await;
        let tables: Vec<String> = sqlx::query_scalar(
            "SELECT name FROM sqlite_master WHERE type = 'table'
             AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_sqlx_%' ORDER BY name",
        )
        .fetch_all(store.reader())
        .await
        .unwrap();
        let mut listed: Vec<&str> = TABLES.to_vec();
        listed.sort_unstable();
        assert_eq!(tables, listed);
    }
}
