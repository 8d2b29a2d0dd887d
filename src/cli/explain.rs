//! `freshet explain URL [--db PATH]`: everything freshet knows about one URL: its site and host,
//! its recent checks, its change-rate estimate and how stale the copy probably is now, its plan,
//! and what the dedup engine decided about it (class, canonical, and why).

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::clock::{Clock, MS_PER_DAY, SystemClock, ms_to_rfc3339};
use crate::dedup::urlnorm::{UrlRules, normalize_str};
use crate::dedup::{DedupConfig, DedupEngine};
use crate::report::human_days;
use crate::store::Store;
use crate::store::observations::ObservationRow;
use crate::store::refusals::RefusalRow;
use crate::store::reports::UrlStatusRow;
use crate::store::urls::UrlRow;

/// How many recent checks are listed.
const RECENT_CHECKS: i64 = 10;

/// Arguments of `freshet explain`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The URL.
    pub url: String,
    /// The database file.
    #[arg(long, default_value = "freshet.db")]
    pub db: PathBuf,
}

/// Runs `freshet explain`; returns 0, or 1 when freshet does not know the URL.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let store = Store::open_existing(&args.db).await?;
    let wall = SystemClock.now_ms();
    let now = store.report_now(wall).await?;
    let result = explain(&store, &args.url, now).await;
    store.close().await;
    match result? {
        Some(text) => {
            crate::out!("{text}");
            // Which "now" the ages above are judged at (helper-88: a demo's database is judged
            // at its own end, and nothing said so).
            let clock = if now == wall {
                "now"
            } else {
                "the end of the last run, on its virtual clock"
            };
            crate::out!("\njudged as of {} ({clock})", ms_to_rfc3339(now));
            Ok(0)
        }
        None => {
            eprintln!(
                "error: freshet does not know {} (not in {}): it was never discovered or fetched",
                args.url,
                args.db.display()
            );
            Ok(1)
        }
    }
}

/// The explanation of `url` as of `now_ms`, or `None` when neither the URL table nor the dedup
/// engine knows it.
pub async fn explain(store: &Store, url: &str, now_ms: i64) -> anyhow::Result<Option<String>> {
    let normalized = normalize_str(url, &UrlRules::default()).unwrap_or_else(|_| url.to_string());
    let mut row: Option<UrlRow> = None;
    for candidate in [url, normalized.as_str()] {
        if row.is_none() {
            row = store.url_row(candidate).await?;
        }
    }
    let engine = DedupEngine::from_state(DedupConfig::default(), store.load_dedup_state().await?);
    let engine_knows = engine.url_record(&normalized).is_some()
        || engine.permanent_redirects().is_source(&normalized);
    let mut refusals = store.refusals_of(url).await?;
    if normalized != url {
        refusals.extend(store.refusals_of(&normalized).await?);
    }
    if row.is_none() && !engine_knows {
        if refusals.is_empty() {
            return Ok(None);
        }
        let mut out = format!("{url}\n  not fetched: refused by freshet's rules\n");
        describe_refusals(&mut out, &refusals, None);
        return Ok(Some(out));
    }
    let mut out = String::new();
    if let Some(row) = row.as_ref().filter(|row| row.url != url) {
        // Said, not silently swapped: the URL asked for is not one freshet keeps.
        let _ = writeln!(
            out,
            "{url} is not known as written; freshet keeps it as {} (its normal form: \
             session and tracking parameters, the fragment and a default port dropped), which \
             is explained below\n",
            row.url
        );
    }
    match &row {
        Some(row) => {
            let status = store.url_status_of(&row.url).await?;
            let checks = store.observations_for(row.id, RECENT_CHECKS).await?;
            let from = store.discovered_from(&row.url).await?;
            let signal = store.site_change_signal(row.site_id).await?;
            describe_row(&mut out, row, status.as_ref(), from.as_deref(), now_ms);
            super::explain_wait::describe_wait(&mut out, store, row, status.as_ref(), now_ms)
                .await?;
            describe_changes(&mut out, row, signal.as_deref());
            let site = status.as_ref().map(|s| s.site.as_str());
            let checked = row.last_checked_ms.zip(site);
            describe_refusals(&mut out, &refusals, checked);
            describe_checks(&mut out, &checks);
        }
        None => {
            let _ = writeln!(
                out,
                "{normalized}\n  not a page of any site: known only to the dedup engine"
            );
        }
    }
    let _ = writeln!(out, "\nduplicates and canonical:");
    for line in engine.explain(&normalized).lines() {
        let _ = writeln!(out, "  {line}");
    }
    if let Some(class) = engine.content_class(&normalized) {
        let members: Vec<&str> = class.members.iter().map(|m| m.url.as_str()).collect();
        let _ = writeln!(
            out,
            "  content class {}: canonical {}, members {}",
            class.id,
            class.canonical.as_deref().unwrap_or("-"),
            members.join(" ")
        );
    }
    let _ = writeln!(
        out,
        "  planner weight {}",
        engine.planner_weight(&normalized)
    );
    Ok(Some(out))
}

/// Each refusal: the reason, the rule that decided, where the URL came from, when and how often;
/// and, for a refusal of its checks (robots.txt, or its own site's filters), that it no longer
/// holds when `checked` (the URL's last check and its site) came after it: the rule was
/// removed, or robots.txt changed. (A sitemap's cross-host refusal, or another site's filter,
/// never stopped the URL's own checks.)
fn describe_refusals(out: &mut String, refusals: &[RefusalRow], checked: Option<(i64, &str)>) {
    for r in refusals {
        let stops_checks = r.reason == "robots" || r.reason == "filter";
        let lifted = match checked {
            Some((at, site))
                if stops_checks
                    && at > r.last_ms
                    && r.site.as_deref().is_none_or(|s| s == site) =>
            {
                format!("; no longer holds: checked since, at {}", ms_to_rfc3339(at))
            }
            _ => String::new(),
        };
        let what = match r.reason.as_str() {
            "robots" => "robots.txt",
            "filter" => "the site's URL filters",
            "address" => "the address policy",
            "cross-host" => "the cross-host rule",
            other => other,
        };
        let _ = writeln!(
            out,
            "  refused by {what}: {}{}{}; last {}{}{lifted}",
            r.rule,
            r.site
                .as_deref()
                .map_or(String::new(), |s| format!(" (site {s})")),
            r.source
                .as_deref()
                .map_or(String::new(), |s| format!(", found in {s}")),
            ms_to_rfc3339(r.last_ms),
            if r.times > 1 {
                format!(", {} times since {}", r.times, ms_to_rfc3339(r.first_ms))
            } else {
                String::new()
            }
        );
    }
}

/// A rate per day to three significant figures (`42.2`, `0.0413`, `2.15e-7`).
fn per_day(rate: f64) -> String {
    match rate.abs() {
        r if !r.is_finite() => "-".to_string(),
        0.0 => "0".to_string(),
        r if r >= 100.0 => format!("{rate:.0}"),
        r if r >= 1e-3 => {
            let decimals = (2 - r.log10().floor() as i32).max(0) as usize;
            format!("{rate:.decimals$}")
        }
        _ => format!("{rate:.2e}"),
    }
}

fn time(ms: Option<i64>) -> String {
    ms.map_or("-".to_string(), ms_to_rfc3339)
}

fn describe_row(
    out: &mut String,
    row: &UrlRow,
    status: Option<&UrlStatusRow>,
    from: Option<&str>,
    now_ms: i64,
) {
    let _ = writeln!(out, "{}", row.url);
    if let Some(s) = status {
        let _ = writeln!(out, "  site {}, host {}, kind {}", s.site, s.host, s.kind);
    }
    let _ = writeln!(
        out,
        "  discovered {} from {}",
        time(Some(row.discovered_ms)),
        from.unwrap_or("-")
    );
    if row.disallowed != 0 {
        let _ = writeln!(
            out,
            "  disallowed by robots.txt when last due: not fetched while its rules say so"
        );
    }
    let _ = writeln!(
        out,
        "  {} check(s), {} change(s) of the bytes seen, {} of the main content; last check {}, \
         last status {}",
        row.checks,
        row.changes,
        row.content_changes,
        time(row.last_checked_ms),
        row.last_status.map_or("-".to_string(), |s| s.to_string())
    );
    if let Some(error) = &row.last_error {
        let _ = writeln!(out, "  last error: {error}");
    }
    match (row.copy_ms, row.last_checked_ms) {
        (None, Some(_)) => {
            let _ = writeln!(
                out,
                "  no copy: no check has answered with the page, so its staleness is not judged"
            );
        }
        (Some(copy), Some(last)) if copy < last => {
            let _ = writeln!(
                out,
                "  copy taken {}: the checks since left none, and it has aged since",
                time(Some(copy))
            );
        }
        _ => {}
    }
    match row.rate_per_day {
        Some(rate) => {
            let (low, high) = (
                row.rate_low.unwrap_or(f64::NAN),
                row.rate_high.unwrap_or(f64::NAN),
            );
            let _ = writeln!(
                out,
                "  change rate {}/day (the posterior's mean; 90% interval {} .. {}/day)",
                per_day(rate),
                per_day(low),
                per_day(high)
            );
            if rate > high || rate < low {
                // A posterior spread over decades of rate with most of its mass low: the few
                // fast rates the evidence cannot rule out yet carry the mean past its 90%.
                let _ = writeln!(
                    out,
                    "  the mean lies outside the interval: the evidence cannot yet rule out much \
                     faster rates, and those few pull the mean up"
                );
            }
            if high >= 0.9 * crate::estimate::population::HIGHEST_RATE_PER_DAY {
                // helper-87's pages changing every 8 s read 9,200 a day, their intervals ending
                // just below their truth, and nothing said why.
                let _ = writeln!(
                    out,
                    "  at the top of the rates a site's population holds ({} a day, a change \
                     every 9 s): the page may change faster than this",
                    per_day(crate::estimate::population::HIGHEST_RATE_PER_DAY)
                );
            }
            if let (Some(copy), Some(s)) = (row.copy_ms, status) {
                let since = (now_ms - copy).max(0) as f64 / MS_PER_DAY;
                if let Some(staleness) = s.staleness(now_ms) {
                    let why = s
                        .staleness_evidence(&staleness)
                        .map_or(String::new(), |why| format!(" ({why})"));
                    let _ = writeln!(
                        out,
                        "  now, {} after the copy: expected age {}, p_stale {:.4}{why}",
                        human_days(since),
                        human_days(staleness.expected_age_days),
                        staleness.p_stale
                    );
                }
            }
        }
        None => {
            let _ = writeln!(out, "  change rate: not estimated yet");
        }
    }
    let _ = writeln!(
        out,
        "  planned {} visit(s)/day, weight {}, next due {}",
        row.planned_per_day.map_or("-".to_string(), per_day),
        row.weight,
        time(row.next_due_ms)
    );
    if row.failures >= i64::from(crate::scheduler::FAILING_AFTER) {
        // Its share of the budget went to the pages that answer.
        let _ = writeln!(
            out,
            "  out of its site's plan while its checks fail ({} in a row): tried again an hour \
             after the second failure in a row, then twice as long after each, up to a day (or \
             its site's even share of the budget, if rarer), or sooner when a feed or sitemap \
             announces a change after its last check (once in each step); a 5xx or no answer \
             counts only when its host answered other pages meanwhile",
            row.failures
        );
    }
}

/// Which of the two change counts the site's estimator learns from.
fn describe_changes(out: &mut String, row: &UrlRow, signal: Option<&str>) {
    let (signal, counted) = match signal {
        Some("bytes") => ("bytes", row.changes),
        Some("content") => ("content", row.content_changes),
        _ => {
            let _ = writeln!(
                out,
                "  its site's change_signal is not recorded (not loaded since migration 0012)"
            );
            return;
        }
    };
    let _ = writeln!(
        out,
        "  its site learns from changes of the {} (change_signal = \"{signal}\"): {counted} counted",
        if signal == "bytes" {
            "bytes"
        } else {
            "main content"
        },
    );
}

fn describe_checks(out: &mut String, checks: &[ObservationRow]) {
    let _ = writeln!(out, "\nrecent checks (oldest first):");
    if checks.is_empty() {
        let _ = writeln!(out, "  none");
    }
    for c in checks {
        let verdict = |v: Option<i64>| match v {
            Some(1) => "changed",
            Some(0) => "unchanged",
            _ => "unknown",
        };
        let changed = format!(
            "bytes {}, content {}",
            verdict(c.changed),
            verdict(c.content_changed)
        );
        let _ = writeln!(
            out,
            "  {}  {}  {}  {}  evidence {}  {} bytes{}",
            ms_to_rfc3339(c.checked_ms),
            c.method,
            c.status.map_or("-".to_string(), |s| s.to_string()),
            changed,
            c.change_evidence.as_deref().unwrap_or("-"),
            c.bytes,
            c.error
                .as_ref()
                .map_or(String::new(), |e| format!("  error: {e}"))
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::politeness::SavedHost;
    use crate::store::test_support::{page, site_and_host, temp_store};

    const URL: &str = "http://a.test/p";

    /// A store knowing [`URL`], due at 1,000 ms.
    async fn store_with_a_page() -> (Store, tempfile::TempDir, i64) {
        let (store, dir) = temp_store().await;
        let (site_id, host_id) = site_and_host(&store).await;
        let page = page(URL, site_id, host_id);
        store.upsert_discovered(&[page], 1_000).await.unwrap();
        (store, dir, site_id)
    }

    #[test]
    fn rates_are_shown_to_three_figures_whatever_their_size() {
        let shown: Vec<String> = [56.8015, 1234.4, 1.0, 0.041_33, 0.001, 2.154e-7, 0.0]
            .into_iter()
            .map(per_day)
            .collect();
        assert_eq!(
            shown,
            ["56.8", "1234", "1.00", "0.0413", "0.00100", "2.15e-7", "0"]
        );
    }

    #[test]
    fn a_mean_outside_its_interval_is_said_to_be_so() {
        let row = |rate: f64| UrlRow {
            rate_per_day: Some(rate),
            rate_low: Some(0.0),
            rate_high: Some(42.2),
            ..UrlRow::for_tests(1, "page")
        };
        let mut out = String::new();
        describe_row(&mut out, &row(56.8), None, None, 0);
        assert!(
            out.contains("change rate 56.8/day (the posterior's mean; 90% interval 0 .. 42.2/day)"),
            "{out}"
        );
        assert!(out.contains("the mean lies outside the interval"), "{out}");
        let mut out = String::new();
        describe_row(&mut out, &row(12.0), None, None, 0);
        assert!(!out.contains("outside"), "{out}");
        assert!(!out.contains("at the top of the rates"), "{out}");
        let ceiling = UrlRow {
            rate_per_day: Some(9_200.0),
            rate_low: Some(8_400.0),
            rate_high: Some(9_956.0),
            ..UrlRow::for_tests(1, "page")
        };
        let mut out = String::new();
        describe_row(&mut out, &ceiling, None, None, 0);
        assert!(out.contains("at the top of the rates"), "{out}");
    }

    #[test]
    fn a_page_out_of_the_plan_because_it_fails_says_so() {
        let row = |error: Option<&str>, failures: i64| UrlRow {
            last_error: error.map(str::to_string),
            failures,
            ..UrlRow::for_tests(1, "page")
        };
        let said = |row: &UrlRow| {
            let mut out = String::new();
            describe_row(&mut out, row, None, None, 0);
            out
        };
        // As the scheduler counts a failing URL's failures (`scheduler::FAILING_AFTER`).
        let out = said(&row(Some("HTTP 404 from http://a.test/p"), 3));
        assert!(
            out.contains("out of its site's plan while its checks fail (3 in a row)"),
            "{out}"
        );
        // Still planned (one failure), or answering again.
        assert!(!said(&row(Some("HTTP 404 from http://a.test/p"), 1)).contains("out of"));
        assert!(!said(&row(None, 0)).contains("out of"));
    }

    #[tokio::test]
    async fn a_due_page_says_whether_its_host_is_closed_or_its_turn_will_come() {
        let (store, _dir, _) = store_with_a_page().await;
        let text = explain(&store, URL, 5_000).await.unwrap().unwrap();
        assert!(
            text.contains("  due: a running refresher fetches it"),
            "{text}"
        );

        let url = url::Url::parse(URL).unwrap();
        let key = crate::politeness::key_of(&crate::politeness::origin_of(&url));
        let closed = SavedHost {
            key,
            min_interval_ms: 1_000,
            last_start_ms: Some(4_000),
            last_end_ms: Some(4_100),
            backoff_level: 2,
            backoff_until_ms: 60_000,
            retry_after_until_ms: None,
        };
        store.save_politeness(&closed, 4_100).await.unwrap();
        let text = explain(&store, URL, 5_000).await.unwrap().unwrap();
        assert!(
            text.contains(&format!(
                "closed (back-off after errors, or the server's Retry-After) until {}",
                ms_to_rfc3339(60_000)
            )),
            "{text}"
        );
        assert!(!text.contains("  due:"), "{text}");
        // Once it has opened, the page is due again.
        let text = explain(&store, URL, 61_000).await.unwrap().unwrap();
        assert!(text.contains("  due:"), "{text}");
        store.close().await;
    }

    #[tokio::test]
    async fn a_page_whose_schedule_file_was_skipped_says_so_until_it_loads_again() {
        let (store, _dir, _) = store_with_a_page().await;
        let site = crate::store::sites::SiteRecord {
            name: "s",
            weight: 1.0,
            requests_per_day: 100.0,
            source_file: Some("sites.toml"),
        };
        store.upsert_site(&site, 1_000).await.unwrap();
        let problem = crate::store::errors::ErrorRecord {
            scope: "schedule",
            file: Some("sites.toml".into()),
            line: Some(3),
            message: "sites.toml:3: host_rate: `fast` is not a rate".into(),
            ..Default::default()
        };
        store.record_error(2_000, &problem).await.unwrap();
        let text = explain(&store, URL, 5_000).await.unwrap().unwrap();
        assert!(
            text.contains(
                "not fetched: its site's schedule file was skipped at the last run \
                 for its problems (sites.toml:3: host_rate: `fast` is not a rate;"
            ),
            "{text}"
        );
        assert!(!text.contains("  due:"), "{text}");
        // Loaded again from the mended file: the problem is history.
        store.upsert_site(&site, 3_000).await.unwrap();
        let text = explain(&store, URL, 5_000).await.unwrap().unwrap();
        assert!(!text.contains("skipped"), "{text}");
        store.close().await;
    }

    #[tokio::test]
    async fn a_page_of_a_site_out_of_the_schedules_says_it_is_not_planned() {
        let (store, _dir, _) = store_with_a_page().await;
        store.mark_unscheduled_sites(&[], 2_000).await.unwrap();
        let text = explain(&store, URL, 5_000).await.unwrap().unwrap();
        assert!(
            text.contains(&format!(
                "not planned: site `s` is in none of the schedules loaded since {}",
                ms_to_rfc3339(2_000)
            )),
            "{text}"
        );
        store.close().await;
    }
}
