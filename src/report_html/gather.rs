//! What the HTML report shows, read from the store into plain data (no rendering here): series
//! over time, per-page figures, the stalest URLs with why, and the duplicate classes.
//!
//! Each copy's staleness is judged by [`UrlStatusRow::staleness`] and explained by
//! [`UrlStatusRow::staleness_evidence`], the same code `report age` and `explain` use.

use std::collections::BTreeMap;

use crate::clock::MS_PER_DAY;
use crate::politeness::key_of;
use crate::store::Store;
use crate::store::report_data::BucketCount;
use crate::store::reports::DuplicateRow;
#[cfg(doc)]
use crate::store::reports::UrlStatusRow;

/// How many of the stalest URLs the table lists.
pub const STALEST: usize = 15;

/// Everything the page shows.
#[derive(Debug, Clone, Default)]
pub struct ReportData {
    /// "Now" for the report: the end of the last virtual run (a demo) or the wall clock.
    pub now_ms: i64,
    /// Sites, by name.
    pub sites: Vec<String>,
    /// Page URLs known.
    pub pages: usize,
    /// Checks recorded (observations).
    pub checks: i64,
    /// Clock time of the first staleness sample (x = 0 of the staleness plots).
    pub samples_origin_ms: Option<i64>,
    /// Per site, the staleness over time, estimated and (a demo) true.
    pub staleness: Vec<SiteStaleness>,
    /// Each page copy's expected age now, days.
    pub copy_ages_days: Vec<f64>,
    /// Per page: (learnt change rate, planned visit rate), per day, both positive.
    pub rates: Vec<(f64, f64)>,
    /// Start of the request buckets, clock ms, and their width.
    pub buckets: Option<Buckets>,
    /// Checks per hour per host over time, with the host's limit.
    pub host_checks: Vec<RateSeries>,
    /// Checks per day per site over time, with the site's budget.
    pub site_checks: Vec<RateSeries>,
    /// Problems by kind, with counts.
    pub errors: Vec<(String, i64)>,
    /// The stalest page copies, stalest first.
    pub stalest: Vec<StaleUrl>,
    /// Duplicate classes and redirect cycles.
    pub duplicates: Vec<DuplicateRow>,
}

/// One site's staleness samples; x in days since [`ReportData::samples_origin_ms`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SiteStaleness {
    /// The site.
    pub site: String,
    /// freshet's estimate: (x, weighted mean expected age in days, weighted mean P(stale)).
    pub estimated: Vec<(f64, f64, f64)>,
    /// The truth recorded by `freshet demo`: (x, mean age in days, share stale).
    pub truth: Vec<(f64, f64, f64)>,
}

/// Time buckets of the request counts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Buckets {
    /// Start, clock ms.
    pub from_ms: i64,
    /// Width, ms.
    pub width_ms: i64,
    /// The last request's time (the last bucket ends there).
    pub to_ms: i64,
}

/// A rate over time against its limit; x in days since the buckets' start.
#[derive(Debug, Clone, PartialEq)]
pub struct RateSeries {
    /// The host or site.
    pub name: String,
    /// (x at the bucket's middle, rate): every bucket, empty ones at 0.
    pub points: Vec<(f64, f64)>,
    /// The limit or budget in the same unit, if known.
    pub limit: Option<f64>,
}

/// One stale copy and why.
#[derive(Debug, Clone, PartialEq)]
pub struct StaleUrl {
    /// The URL.
    pub url: String,
    /// Its site.
    pub site: String,
    /// Expected age now, days.
    pub expected_age_days: f64,
    /// Probability it is stale.
    pub p_stale: f64,
    /// Why, in words.
    pub why: String,
}

/// A duration given in days, in the unit that fits it (s, min, h, d).
pub fn duration_text(days: f64) -> String {
    let seconds = days * 86_400.0;
    if !seconds.is_finite() {
        "-".to_string()
    } else if seconds < 60.0 {
        format!("{seconds:.0} s")
    } else if seconds < 3600.0 {
        format!("{:.0} min", seconds / 60.0)
    } else if seconds < 86_400.0 {
        format!("{:.1} h", seconds / 3600.0)
    } else {
        format!("{days:.1} d")
    }
}

/// The bucket width for a span: the smallest round width giving at most 48 buckets.
pub fn bucket_width_ms(span_ms: i64) -> i64 {
    const MINUTE: i64 = 60_000;
    const WIDTHS: [i64; 10] = [1, 5, 15, 60, 180, 360, 720, 1440, 10_080, 43_200];
    WIDTHS
        .iter()
        .map(|m| m * MINUTE)
        .find(|w| span_ms / w < 48)
        .unwrap_or_else(|| (span_ms / 48).max(1))
}

/// Rates per `unit_ms` of bucketed counts: one series per key, every bucket present (the last
/// bucket only as wide as the data it covers).
pub fn rate_series<K: Ord + Clone>(
    counts: &[BucketCount<K>],
    buckets: Buckets,
    unit_ms: f64,
) -> BTreeMap<K, Vec<(f64, f64)>> {
    let n = ((buckets.to_ms - buckets.from_ms) / buckets.width_ms + 1).max(1);
    let mut by_key: BTreeMap<K, Vec<i64>> = BTreeMap::new();
    for c in counts {
        let row = by_key
            .entry(c.key.clone())
            .or_insert_with(|| vec![0; n as usize]);
        if let Some(slot) = usize::try_from(c.bucket).ok().and_then(|b| row.get_mut(b)) {
            *slot += c.checks;
        }
    }
    by_key
        .into_iter()
        .map(|(key, row)| {
            let points = row
                .iter()
                .enumerate()
                .map(|(b, &count)| {
                    let start = buckets.from_ms + b as i64 * buckets.width_ms;
                    let end = (start + buckets.width_ms).min(buckets.to_ms + 1);
                    let width = (end - start).max(1) as f64;
                    let middle = (start + end) as f64 / 2.0 - buckets.from_ms as f64;
                    (middle / MS_PER_DAY, count as f64 * unit_ms / width)
                })
                .collect();
            (key, points)
        })
        .collect()
}

/// Reads everything the page shows from `store`, as of `now_ms`.
pub async fn gather(store: &Store, now_ms: i64) -> anyhow::Result<ReportData> {
    let sites = store.sites().await?;
    let site_name: BTreeMap<i64, String> = sites.iter().map(|s| (s.id, s.name.clone())).collect();
    let mut data = ReportData {
        now_ms,
        sites: sites.iter().map(|s| s.name.clone()).collect(),
        ..ReportData::default()
    };

    // Staleness over time, estimated and true.
    let estimated = store.freshness_samples(i64::MIN, i64::MAX).await?;
    let truth = store.true_freshness_samples().await?;
    let origin = estimated
        .iter()
        .map(|s| s.at_ms)
        .chain(truth.iter().map(|s| s.at_ms))
        .min();
    data.samples_origin_ms = origin;
    let x = |at_ms: i64| (at_ms - origin.unwrap_or(at_ms)) as f64 / MS_PER_DAY;
    let mut staleness: BTreeMap<String, SiteStaleness> = BTreeMap::new();
    let unknown = |id: i64| format!("site #{id}");
    for s in &estimated {
        let name = site_name
            .get(&s.site_id)
            .cloned()
            .unwrap_or(unknown(s.site_id));
        let entry = staleness.entry(name.clone()).or_default();
        entry.site = name;
        entry
            .estimated
            .push((x(s.at_ms), s.mean_expected_age_days, s.mean_p_stale));
    }
    for s in &truth {
        let name = site_name
            .get(&s.site_id)
            .cloned()
            .unwrap_or(unknown(s.site_id));
        let entry = staleness.entry(name.clone()).or_default();
        entry.site = name;
        entry
            .truth
            .push((x(s.at_ms), s.mean_age_days, s.share_stale));
    }
    data.staleness = staleness.into_values().collect();

    // Per page: age now, rates, the stalest.
    let rows = store.url_status(None).await?;
    let mut judged = Vec::new();
    for row in rows.iter().filter(|r| r.kind == "page") {
        data.pages += 1;
        if let (Some(rate), Some(planned)) = (row.rate_per_day, row.planned_per_day)
            && rate > 0.0
            && planned > 0.0
        {
            data.rates.push((rate, planned));
        }
        let Some(staleness) = row.staleness(now_ms) else {
            continue;
        };
        data.copy_ages_days.push(staleness.expected_age_days);
        judged.push((row, staleness));
    }
    judged.sort_by(|a, b| {
        b.1.expected_age_days
            .total_cmp(&a.1.expected_age_days)
            .then(b.1.p_stale.total_cmp(&a.1.p_stale))
            .then(a.0.url.cmp(&b.0.url))
    });
    data.stalest = judged
        .iter()
        .take(STALEST)
        .map(|(row, staleness)| {
            let since = row
                .copy_ms
                .map_or(0.0, |copy| (now_ms - copy).max(0) as f64 / MS_PER_DAY);
            let mut why = format!(
                "copy taken {} ago; change rate {:.3}/day (90% {:.3} .. {:.3})",
                duration_text(since),
                row.rate_per_day.unwrap_or(f64::NAN),
                row.rate_low.unwrap_or(f64::NAN),
                row.rate_high.unwrap_or(f64::NAN),
            );
            if let Some(evidence) = row.staleness_evidence(staleness) {
                why = format!("{evidence}; {why}");
            }
            if let Some(error) = &row.last_error {
                why.push_str(&format!("; last error: {error}"));
            }
            StaleUrl {
                url: row.url.clone(),
                site: row.site.clone(),
                expected_age_days: staleness.expected_age_days,
                p_stale: staleness.p_stale,
                why,
            }
        })
        .collect();

    // Requests over time, per host against its limit and per site against its budget.
    if let Some((first, last)) = store.observation_span().await? {
        let buckets = Buckets {
            from_ms: first,
            width_ms: bucket_width_ms(last - first),
            to_ms: last,
        };
        data.buckets = Some(buckets);
        let limits: BTreeMap<String, i64> = store.host_intervals().await?.into_iter().collect();
        let per_host = store.checks_per_host(first, buckets.width_ms).await?;
        data.checks = per_host.iter().map(|c| c.checks).sum();
        data.host_checks = rate_series(&per_host, buckets, 3_600_000.0)
            .into_iter()
            .map(|(origin, points)| RateSeries {
                limit: limits
                    .get(&key_of(&origin))
                    .filter(|&&ms| ms > 0)
                    .map(|&ms| 3_600_000.0 / ms as f64),
                name: origin,
                points,
            })
            .collect();
        let budgets: BTreeMap<i64, f64> =
            sites.iter().map(|s| (s.id, s.requests_per_day)).collect();
        let per_site = store.checks_per_site(first, buckets.width_ms).await?;
        data.site_checks = rate_series(&per_site, buckets, MS_PER_DAY)
            .into_iter()
            .map(|(id, points)| RateSeries {
                name: site_name.get(&id).cloned().unwrap_or(unknown(id)),
                points,
                limit: budgets.get(&id).copied(),
            })
            .collect();
    }
    data.errors = store.errors_by_kind().await?;
    data.duplicates = store.duplicate_rows().await?;
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_widths_are_round_and_few() {
        assert_eq!(bucket_width_ms(0), 60_000);
        assert_eq!(bucket_width_ms(47 * 60_000), 60_000);
        assert_eq!(bucket_width_ms(48 * 60_000), 5 * 60_000);
        assert_eq!(bucket_width_ms(10 * 86_400_000), 360 * 60_000);
        for span in [1, 3_600_000, 86_400_000, 400 * 86_400_000] {
            assert!(span / bucket_width_ms(span) < 48, "{span}");
        }
    }

    #[test]
    fn rates_fill_empty_buckets_and_scale_the_last_one() {
        let hour = 3_600_000;
        let buckets = Buckets {
            from_ms: 1_000,
            width_ms: hour,
            to_ms: 1_000 + 2 * hour + hour / 2 - 1,
        };
        let counts = vec![
            BucketCount {
                key: "a".to_string(),
                bucket: 0,
                checks: 6,
            },
            BucketCount {
                key: "a".to_string(),
                bucket: 2,
                checks: 3,
            },
            // Out of range: ignored, not a panic.
            BucketCount {
                key: "a".to_string(),
                bucket: 9,
                checks: 1,
            },
        ];
        let series = rate_series(&counts, buckets, hour as f64);
        let a = &series["a"];
        assert_eq!(a.len(), 3);
        assert_eq!(a[0].1, 6.0);
        assert_eq!(a[1].1, 0.0);
        // The last bucket covers half an hour: 3 checks in it are 6 per hour.
        assert!((a[2].1 - 6.0).abs() < 1e-9, "{:?}", a[2]);
        assert!((a[0].0 - 0.5 / 24.0).abs() < 1e-12);
    }
}
