//! Refusals: every URL freshet chose not to add or not to fetch (robots.txt, the site's URL
//! filters, the address policy, the cross-host rule of sitemaps and feeds), one row per URL and
//! reason, so that `freshet explain URL` can say why it holds no copy. Schema in
//! `migrations/0009_views.sql`.

use super::Store;

/// Why a URL was refused (the `reason` column).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalReason {
    /// A robots.txt Disallow, or a robots.txt that could not be read (5xx, unreachable).
    Robots,
    /// The site's include/exclude patterns (or a scheme other than http and https).
    Filter,
    /// The address policy refused the address the host resolved to.
    Address,
    /// A sitemap or feed named a URL on another host, or outside the sitemap's directory.
    CrossHost,
}

impl RefusalReason {
    /// The value stored in `reason`.
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalReason::Robots => "robots",
            RefusalReason::Filter => "filter",
            RefusalReason::Address => "address",
            RefusalReason::CrossHost => "cross-host",
        }
    }
}

/// One refusal to record.
#[derive(Debug, Clone)]
pub struct Refusal {
    /// The URL refused.
    pub url: String,
    /// Why.
    pub reason: RefusalReason,
    /// What decided: the robots.txt rule, the pattern, the address and range, the rule of
    /// sitemaps.
    pub rule: String,
    /// The site whose discovery or check met it.
    pub site: Option<String>,
    /// Where the URL came from (a sitemap, a feed, `check` when refused at check time).
    pub source: Option<String>,
}

/// A stored refusal.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct RefusalRow {
    /// The URL refused.
    pub url: String,
    /// `robots`, `filter`, `address` or `cross-host`.
    pub reason: String,
    /// What decided.
    pub rule: String,
    /// The site.
    pub site: Option<String>,
    /// Where the URL came from.
    pub source: Option<String>,
    /// First refusal, clock ms.
    pub first_ms: i64,
    /// Latest refusal, clock ms.
    pub last_ms: i64,
    /// How many times it was refused.
    pub times: i64,
}

impl Store {
    /// Records refusals in one transaction; a URL refused again for the same reason keeps its
    /// first time and gets the latest rule, source and time.
    pub async fn record_refusals(&self, at_ms: i64, refusals: &[Refusal]) -> sqlx::Result<()> {
        if refusals.is_empty() {
            return Ok(());
        }
        self.write("record_refusals", |mut tx| async move {
            for r in refusals {
                sqlx::query(
                    "INSERT INTO refusals (url, reason, rule, site, source, first_ms, last_ms)
                     VALUES ($1, $2, $3, $4, $5, $6, $6)
                     ON CONFLICT (url, reason) DO UPDATE SET rule = excluded.rule,
                         site = excluded.site, source = COALESCE(excluded.source, refusals.source),
                         last_ms = excluded.last_ms, times = refusals.times + 1",
                )
                .bind(&r.url)
                .bind(r.reason.as_str())
                .bind(&r.rule)
                .bind(&r.site)
                .bind(&r.source)
                .bind(at_ms)
                .execute(&mut *tx)
                .await?;
            }
            Ok((tx, ()))
        })
        .await
    }

    /// The refusals of one URL, latest first.
    pub async fn refusals_of(&self, url: &str) -> sqlx::Result<Vec<RefusalRow>> {
        sqlx::query_as("SELECT * FROM refusals WHERE url = $1 ORDER BY last_ms DESC, reason")
            .bind(url)
            .fetch_all(self.reader())
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_refusal_is_kept_once_per_reason_with_its_latest_rule() {
        let (stores, _dir) = crate::store::test_support::stores(
            "a_refusal_is_kept_once_per_reason_with_its_latest_rule",
        )
        .await;
        for store in stores {
            let refusal = |rule: &str| Refusal {
                url: "http://a.test/private/x".into(),
                reason: RefusalReason::Robots,
                rule: rule.into(),
                site: Some("a".into()),
                source: Some("http://a.test/sitemap.xml".into()),
            };
            store
                .record_refusals(10, &[refusal("Disallow: /private")])
                .await
                .unwrap();
            store
                .record_refusals(20, &[refusal("Disallow: /priv")])
                .await
                .unwrap();
            let rows = store.refusals_of("http://a.test/private/x").await.unwrap();
            assert_eq!(rows.len(), 1);
            assert_eq!(
                (rows[0].first_ms, rows[0].last_ms, rows[0].times),
                (10, 20, 2)
            );
            assert_eq!(rows[0].rule, "Disallow: /priv");
            assert!(
                store
                    .refusals_of("http://a.test/")
                    .await
                    .unwrap()
                    .is_empty()
            );
        }
    }
}
