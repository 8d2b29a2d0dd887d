//! `freshet report age|hosts|duplicates`: how stale the copies are, per URL and per host, and
//! which URLs the dedup engine grouped, from SQLite.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::clock::{Clock, SystemClock, ms_to_rfc3339};
use crate::report::{Format, Report, float};
use crate::store::Store;
use crate::store::reports::{DuplicateRow, UrlStatusRow};

/// Options every report takes.
#[derive(Debug, Clone, clap::Args)]
pub struct ReportArgs {
    /// The database file.
    #[arg(long, default_value = "freshet.db")]
    pub db: PathBuf,
    /// Only this site.
    #[arg(long)]
    pub site: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Subcommands of `freshet report`.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Per URL: last check, checks, changes (of the bytes) and content changes (of the main
    /// text), status, next due, estimated rate and staleness.
    Age(ReportArgs),
    /// Per host: URLs, checks, changes, content changes, errors, politeness state.
    Hosts(ReportArgs),
    /// Duplicate classes (content, redirect, near) with canonical and members, and permanent
    /// redirect cycles as rows of kind `redirect-cycle`.
    Duplicates(DuplicatesArgs),
    /// One self-contained HTML page with plots: staleness over time, copy ages, rates, requests
    /// against limits and budgets, errors, the stalest URLs, duplicate classes.
    Html(crate::report_html::Args),
}

/// Options of `freshet report duplicates`.
#[derive(Debug, Clone, clap::Args)]
pub struct DuplicatesArgs {
    /// The database file.
    #[arg(long, default_value = "freshet.db")]
    pub db: PathBuf,
    /// Output format: JSON is `[{"kind", "canonical", "members": [..]}]`.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Runs `freshet report`; returns the exit code.
pub async fn run(command: Command) -> anyhow::Result<u8> {
    let (args, text) = match command {
        Command::Html(args) => return crate::report_html::run(args).await,
        Command::Duplicates(args) => {
            let store = Store::open_existing(&args.db).await?;
            let rows = store.duplicate_rows().await;
            store.close().await;
            crate::out!("{}", render_duplicates(&rows?, args.format));
            return Ok(0);
        }
        Command::Age(args) => {
            let store = Store::open_existing(&args.db).await?;
            known_site(&store, &args).await?;
            let rows = store.url_status(args.site.as_deref()).await?;
            let now = store.report_now(SystemClock.now_ms()).await?;
            store.close().await;
            let report = age_report(&rows, now);
            (args.clone(), report.render(args.format))
        }
        Command::Hosts(args) => {
            let store = Store::open_existing(&args.db).await?;
            known_site(&store, &args).await?;
            let report = hosts_report(&store, args.site.as_deref()).await?;
            store.close().await;
            (args.clone(), report.render(args.format))
        }
    };
    let _ = args;
    crate::out!("{text}");
    Ok(0)
}

/// An error when `--site` names no site of the database (a report of it would be empty, as
/// if the site had no URLs): the sites it has are listed.
async fn known_site(store: &Store, args: &ReportArgs) -> anyhow::Result<()> {
    let Some(site) = &args.site else {
        return Ok(());
    };
    let names = store.site_names().await?;
    if names.iter().any(|name| name == site) {
        return Ok(());
    }
    store.close().await;
    anyhow::bail!(
        "--site {site}: no such site in {} (its sites: {})",
        args.db.display(),
        if names.is_empty() {
            "none yet".to_string()
        } else {
            names.join(", ")
        }
    )
}

fn time(ms: Option<i64>) -> Value {
    ms.map(|m| Value::from(ms_to_rfc3339(m)))
        .unwrap_or(Value::Null)
}

/// The per-URL age report as of `now_ms`.
pub fn age_report(rows: &[UrlStatusRow], now_ms: i64) -> Report {
    let mut report = Report::new(&[
        "url",
        "site",
        "host",
        "kind",
        "last_checked",
        "copy_taken",
        "checks",
        "changes",
        "content_changes",
        "last_status",
        "next_due",
        "rate_per_day",
        "rate_low",
        "rate_high",
        "expected_age_days",
        "p_stale",
        "planned_per_day",
        "last_error",
    ]);
    for row in rows {
        let staleness = row.staleness(now_ms);
        report.push(vec![
            json!(row.url),
            json!(row.site),
            json!(row.host),
            json!(row.kind),
            time(row.last_checked_ms),
            time(row.copy_ms),
            json!(row.checks),
            json!(row.changes),
            json!(row.content_changes),
            row.last_status.map(Value::from).unwrap_or(Value::Null),
            time(row.next_due_ms),
            float(row.rate_per_day),
            float(row.rate_low),
            float(row.rate_high),
            float(staleness.map(|s| s.expected_age_days)),
            float(staleness.map(|s| s.p_stale)),
            float(row.planned_per_day),
            row.last_error
                .clone()
                .map(Value::from)
                .unwrap_or(Value::Null),
        ]);
    }
    report
}

/// The per-host report.
pub async fn hosts_report(store: &Store, site: Option<&str>) -> anyhow::Result<Report> {
    let rows = store.host_status(site).await?;
    let mut report = Report::new(&[
        "host",
        "urls",
        "checks",
        "changes",
        "content_changes",
        "urls_in_error",
        "last_checked",
        "next_due",
        "crawl_delay_s",
        "robots_status",
        "backoff_until",
    ]);
    for row in rows {
        report.push(vec![
            json!(row.host),
            json!(row.urls),
            json!(row.checks),
            json!(row.changes),
            json!(row.content_changes),
            json!(row.urls_in_error),
            time(row.last_checked_ms),
            time(row.next_due_ms),
            float(row.crawl_delay_ms.map(|ms| ms as f64 / 1000.0)),
            row.robots_status.map(Value::from).unwrap_or(Value::Null),
            time(row.backoff_until_ms),
        ]);
    }
    Ok(report)
}

/// The duplicates report: JSON keeps `members` an array; table and CSV join them with spaces.
pub fn render_duplicates(rows: &[DuplicateRow], format: Format) -> String {
    if format == Format::Json {
        let values: Vec<Value> = rows
            .iter()
            .map(|r| json!({"kind": r.kind, "canonical": r.canonical, "members": r.members}))
            .collect();
        let mut text = serde_json::to_string_pretty(&values).unwrap_or_default();
        text.push('\n');
        return text;
    }
    let mut report = Report::new(&["kind", "canonical", "size", "members"]);
    for r in rows {
        report.push(vec![
            json!(r.kind),
            r.canonical.clone().map(Value::from).unwrap_or(Value::Null),
            json!(r.members.len()),
            json!(r.members.join(" ")),
        ]);
    }
    report.render(format)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_render_in_every_format() {
        let rows = vec![
            DuplicateRow {
                kind: "content",
                canonical: Some("http://a/".into()),
                members: vec!["http://a/".into(), "http://b/".into()],
            },
            DuplicateRow {
                kind: "redirect-cycle",
                canonical: None,
                members: vec!["http://x/".into(), "http://y/".into(), "http://x/".into()],
            },
        ];
        let json: Vec<Value> =
            serde_json::from_str(&render_duplicates(&rows, Format::Json)).unwrap();
        assert_eq!(json[0]["members"][1], "http://b/");
        assert!(json[1]["canonical"].is_null());
        let csv = render_duplicates(&rows, Format::Csv);
        assert_eq!(
            csv.lines().nth(1),
            Some("content,http://a/,2,http://a/ http://b/")
        );
        assert!(render_duplicates(&rows, Format::Table).contains("redirect-cycle"));
    }
}
