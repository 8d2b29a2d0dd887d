//! Report queries: per-URL and per-host rows read from the views in the schema.

use crate::clock::ms_to_rfc3339;
use crate::estimate::{CopyKnowledge, Prior, Staleness};

use super::Store;

/// One URL as `freshet report age` needs it (from the `url_status` view).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct UrlStatusRow {
    /// Row id.
    pub url_id: i64,
    /// The URL.
    pub url: String,
    /// Its site.
    pub site: String,
    /// Its origin.
    pub host: String,
    /// `page`, `sitemap` or `feed`.
    pub kind: String,
    /// Last check.
    pub last_checked_ms: Option<i64>,
    /// Checks.
    pub checks: i64,
    /// Changes seen.
    pub changes: i64,
    /// Last status.
    pub last_status: Option<i64>,
    /// Last error.
    pub last_error: Option<String>,
    /// Next due.
    pub next_due_ms: Option<i64>,
    /// Estimated rate.
    pub rate_per_day: Option<f64>,
    /// Lower bound.
    pub rate_low: Option<f64>,
    /// Upper bound.
    pub rate_high: Option<f64>,
    /// Planned visits per day.
    pub planned_per_day: Option<f64>,
    /// Planner weight.
    pub weight: f64,
    /// When a change was last seen.
    pub last_changed_ms: Option<i64>,
    /// A change announced after our copy.
    pub known_change_ms: Option<i64>,
    /// 1 when robots.txt disallows it.
    pub disallowed: i64,
    /// Shape of the Gamma posterior on the rate.
    pub rate_shape: Option<f64>,
    /// Its rate parameter, in days.
    pub rate_scale: Option<f64>,
    /// Start of the span after the copy counted as watched (no change there; the time before it
    /// unseen; `scheduler::Scheduler::watched`).
    pub watched_from_ms: Option<i64>,
    /// End of that span.
    pub watched_until_ms: Option<i64>,
    /// Checks that saw the main content change (migration 0012; `changes` counts the bytes).
    #[sqlx(default)]
    pub content_changes: i64,
    /// When the copy was taken: the last check that left one (`None`: no copy; migration 0025).
    #[sqlx(default)]
    pub copy_ms: Option<i64>,
}

/// One page URL's belief about its copy: its last check, an announced change and the posterior
/// on its rate (from `urls`: `url_status` leaves the posterior's parameters out).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PageBeliefRow {
    /// The URL.
    pub url: String,
    /// When the copy was taken (`None`: no copy).
    pub copy_ms: Option<i64>,
    /// A change announced after our copy.
    pub known_change_ms: Option<i64>,
    /// Lower end of the rate's 90% credible interval, per day.
    pub rate_low: Option<f64>,
    /// Upper end.
    pub rate_high: Option<f64>,
    /// Gamma shape of the rate's posterior.
    pub rate_shape: Option<f64>,
    /// Gamma rate parameter (days) of the posterior.
    pub rate_scale: Option<f64>,
    /// Start of the span after the copy counted as watched (no change there; the time before it
    /// unseen; `scheduler::Scheduler::watched`).
    pub watched_from_ms: Option<i64>,
    /// End of that span.
    pub watched_until_ms: Option<i64>,
}

/// One host as `freshet report hosts` needs it (from the `host_status` view).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct HostStatusRow {
    /// The origin.
    pub host: String,
    /// URLs on it.
    pub urls: i64,
    /// Checks.
    pub checks: i64,
    /// Changes seen.
    pub changes: i64,
    /// Checks that saw the main content change (migration 0012).
    #[sqlx(default)]
    pub content_changes: i64,
    /// URLs whose last check failed.
    pub urls_in_error: i64,
    /// Last check of any URL.
    pub last_checked_ms: Option<i64>,
    /// Earliest next due.
    pub next_due_ms: Option<i64>,
    /// Crawl-delay.
    pub crawl_delay_ms: Option<i64>,
    /// robots.txt status.
    pub robots_status: Option<i64>,
    /// When robots.txt was fetched.
    pub robots_checked_ms: Option<i64>,
    /// Back-off end.
    pub backoff_until_ms: Option<i64>,
}

/// One site's freshness at one moment (a row of `freshness_samples`).
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct FreshnessSample {
    /// The site's row id.
    pub site_id: i64,
    /// When, clock ms.
    pub at_ms: i64,
    /// Pages with a copy.
    pub copies: i64,
    /// Of them, known stale.
    pub known_stale: i64,
    /// Sum of their weights.
    pub weight: f64,
    /// Weighted mean expected age, days.
    pub mean_expected_age_days: f64,
    /// Weighted mean probability of being stale.
    pub mean_p_stale: f64,
}

/// One row of the duplicates report: a class, or a redirect cycle (kind `redirect-cycle`, no
/// canonical, the chain as members).
#[derive(Debug, Clone, PartialEq)]
pub struct DuplicateRow {
    /// `content`, `redirect` (temporary), `near`, `permanent-redirect` or `redirect-cycle`.
    pub kind: &'static str,
    /// The canonical URL (none for a cycle).
    pub canonical: Option<String>,
    /// Members best first, or the cycle's URLs in order (the last equals the first).
    pub members: Vec<String>,
}

impl UrlStatusRow {
    /// How stale a URL's copy is at `now_ms`, from its row: a known change is known staleness;
    /// otherwise the Gamma posterior judges the time since the copy that nothing watched (the
    /// span counted as watched is cut out). The row stores one span, a feed's and a sitemap's
    /// joined with the sitemap's unseen share at its front ([`crate::scheduler::Scheduler::watched`]),
    /// so this errs a little older than the refresher's own samples, which judge the two apart.
    /// `None` without a copy or an estimate.
    pub fn staleness(&self, now_ms: i64) -> Option<Staleness> {
        let copy = CopyKnowledge {
            taken_ms: self.copy_ms?,
            watched: self.watched_from_ms.zip(self.watched_until_ms),
            quiet: None,
            known_change_ms: self.known_change_ms,
        };
        let belief = match (self.rate_shape, self.rate_scale, self.rate_per_day) {
            (Some(shape), Some(rate), _) if shape > 0.0 && rate > 0.0 => Prior { shape, rate },
            // A row from before the posterior was stored: its point estimate, held as certain.
            (_, _, Some(rate)) if rate > 0.0 => Prior {
                shape: 1e9,
                rate: 1e9 / rate,
            },
            _ => return None,
        };
        Some(copy.staleness(&belief, now_ms))
    }

    /// What, beyond the rate and the time since the last check, decided a copy's staleness: an
    /// announced newer version, or a feed or sitemap that kept quiet about the page for a while
    /// after the copy. The span may start after the copy: a feed's coverage that began later or
    /// overflowed, or a sitemap whose `lastmod`s have not earned belief, whose quiet time counts
    /// only for the share of changes they showed (the rest is unseen). `None` when only the
    /// posterior judged it. Shared with `freshet report html`.
    pub fn staleness_evidence(&self, staleness: &Staleness) -> Option<String> {
        let last = self.copy_ms?;
        match (
            staleness.known_stale,
            self.watched_from_ms,
            self.watched_until_ms,
        ) {
            (true, _, _) => Some("a newer version was announced: known stale".to_string()),
            (false, Some(from), Some(quiet)) if quiet > last && from > last => Some(format!(
                "its feed or sitemap kept quiet about it until {}, counted as watched from {} \
                 (the time before unseen)",
                ms_to_rfc3339(quiet),
                ms_to_rfc3339(from)
            )),
            (false, _, Some(quiet)) if quiet > last => Some(format!(
                "its feed or sitemap showed no change of it until {}",
                ms_to_rfc3339(quiet)
            )),
            _ => None,
        }
    }
}

impl Store {
    /// The classes worth reporting, then the redirect cycles.
    pub async fn duplicate_rows(&self) -> sqlx::Result<Vec<DuplicateRow>> {
        let mut rows: Vec<DuplicateRow> = self
            .duplicate_classes(false)
            .await?
            .into_iter()
            .map(|c| DuplicateRow {
                kind: c.kind,
                canonical: c.canonical,
                members: c.members,
            })
            .collect();
        // A permanent redirect's source is its target's, whatever it served before: the
        // target is the canonical, the sources its members.
        rows.extend(self.permanent_redirects_by_target().await?.into_iter().map(
            |(target, sources)| DuplicateRow {
                kind: "permanent-redirect",
                members: std::iter::once(target.clone()).chain(sources).collect(),
                canonical: Some(target),
            },
        ));
        rows.extend(
            self.redirect_cycles()
                .await?
                .into_iter()
                .map(|chain| DuplicateRow {
                    kind: "redirect-cycle",
                    canonical: None,
                    members: chain,
                }),
        );
        Ok(rows)
    }

    /// Records freshness samples (one transaction). A sample at an instant already recorded
    /// replaces it, or with `add_up` (several workers' parts of one site's sample, each over
    /// the hosts it holds) is added to it.
    pub async fn add_freshness_samples(
        &self,
        samples: &[FreshnessSample],
        add_up: bool,
    ) -> sqlx::Result<()> {
        let on_conflict = if add_up {
            // Several workers' parts of one sample: counts and weights add up, means are
            // weighted by the parts' weights (every part's weight is positive).
            "copies = f.copies + excluded.copies,
             known_stale = f.known_stale + excluded.known_stale,
             weight = f.weight + excluded.weight,
             mean_expected_age_days = (f.mean_expected_age_days * f.weight
                 + excluded.mean_expected_age_days * excluded.weight) / (f.weight + excluded.weight),
             mean_p_stale = (f.mean_p_stale * f.weight + excluded.mean_p_stale * excluded.weight)
                 / (f.weight + excluded.weight)"
        } else {
            "copies = excluded.copies, known_stale = excluded.known_stale,
             weight = excluded.weight, mean_expected_age_days = excluded.mean_expected_age_days,
             mean_p_stale = excluded.mean_p_stale"
        };
        let sql = format!(
            "INSERT INTO freshness_samples AS f (site_id, at_ms, copies,
                 known_stale, weight, mean_expected_age_days, mean_p_stale)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (site_id, at_ms) DO UPDATE SET {on_conflict}"
        );
        let sql = &sql;
        self.write("add_freshness_samples", |mut tx| async move {
            for s in samples {
                sqlx::query(sqlx::AssertSqlSafe(sql.clone()))
                    .bind(s.site_id)
                    .bind(s.at_ms)
                    .bind(s.copies)
                    .bind(s.known_stale)
                    .bind(s.weight)
                    .bind(s.mean_expected_age_days)
                    .bind(s.mean_p_stale)
                    .execute(&mut *tx)
                    .await?;
            }
            Ok((tx, ()))
        })
        .await
    }

    /// Every freshness sample in `[from_ms, to_ms]`, by time.
    pub async fn freshness_samples(
        &self,
        from_ms: i64,
        to_ms: i64,
    ) -> sqlx::Result<Vec<FreshnessSample>> {
        sqlx::query_as(
            "SELECT * FROM freshness_samples WHERE at_ms BETWEEN $1 AND $2 ORDER BY at_ms, site_id",
        )
        .bind(from_ms)
        .bind(to_ms)
        .fetch_all(self.reader())
        .await
    }

    /// URL rows, optionally for one site, pages first then sitemaps and feeds, by URL.
    pub async fn url_status(&self, site: Option<&str>) -> sqlx::Result<Vec<UrlStatusRow>> {
        sqlx::query_as(
            "SELECT * FROM url_status WHERE ($1 IS NULL OR site = $1)
             ORDER BY kind != 'page', site, url",
        )
        .bind(site)
        .fetch_all(self.reader())
        .await
    }

    /// Host rows, optionally only hosts with URLs of one site.
    pub async fn host_status(&self, site: Option<&str>) -> sqlx::Result<Vec<HostStatusRow>> {
        sqlx::query_as(
            "SELECT * FROM host_status WHERE ($1 IS NULL OR host IN
                 (SELECT host FROM url_status WHERE site = $1))
             ORDER BY host",
        )
        .bind(site)
        .fetch_all(self.reader())
        .await
    }

    /// Every page URL's belief about its copy, by URL.
    pub async fn page_beliefs(&self) -> sqlx::Result<Vec<PageBeliefRow>> {
        sqlx::query_as(
            "SELECT url, copy_ms, known_change_ms, rate_low, rate_high, rate_shape,
                    rate_scale, watched_from_ms, watched_until_ms
             FROM urls WHERE kind = 'page' ORDER BY url",
        )
        .fetch_all(self.reader())
        .await
    }

    /// One URL's status row.
    pub async fn url_status_of(&self, url: &str) -> sqlx::Result<Option<UrlStatusRow>> {
        sqlx::query_as("SELECT * FROM url_status WHERE url = $1")
            .bind(url)
            .fetch_optional(self.reader())
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::FreshnessSample;
    use crate::store::sites::SiteRecord;
    use crate::store::test_support::stores;

    fn part(site_id: i64, copies: i64, weight: f64, age: f64, p: f64) -> FreshnessSample {
        FreshnessSample {
            site_id,
            at_ms: 900_000,
            copies,
            known_stale: copies / 2,
            weight,
            mean_expected_age_days: age,
            mean_p_stale: p,
        }
    }

    #[tokio::test]
    async fn workers_parts_of_a_sample_add_up_and_one_workers_sample_is_replaced() {
        let (stores, _dir) = stores("freshness_parts_add_up").await;
        for store in stores {
            let site = SiteRecord {
                name: "s",
                weight: 1.0,
                requests_per_day: 100.0,
                source_file: None,
            };
            let id = store.upsert_site(&site, 0).await.unwrap();
            store
                .add_freshness_samples(&[part(id, 4, 3.0, 0.1, 0.2)], true)
                .await
                .unwrap();
            store
                .add_freshness_samples(&[part(id, 2, 1.0, 0.5, 0.6)], true)
                .await
                .unwrap();
            let samples = store.freshness_samples(0, i64::MAX).await.unwrap();
            let [sum] = samples.as_slice() else {
                panic!("one sample");
            };
            assert_eq!((sum.copies, sum.known_stale), (6, 3));
            assert!((sum.weight - 4.0).abs() < 1e-12);
            assert!((sum.mean_expected_age_days - 0.2).abs() < 1e-12, "{sum:?}");
            assert!((sum.mean_p_stale - 0.3).abs() < 1e-12, "{sum:?}");
            store
                .add_freshness_samples(&[part(id, 2, 1.0, 0.5, 0.6)], false)
                .await
                .unwrap();
            let samples = store.freshness_samples(0, i64::MAX).await.unwrap();
            let [one] = samples.as_slice() else {
                panic!("one sample");
            };
            assert_eq!((one.copies, one.mean_expected_age_days), (2, 0.5));
        }
    }
}
