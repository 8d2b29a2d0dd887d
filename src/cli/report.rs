//! `freshet report age|hosts`: how stale the copies are, per URL and per host, from SQLite.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::clock::{Clock, MS_PER_DAY, SystemClock, ms_to_rfc3339};
use crate::plan::{expected_age_days, p_stale};
use crate::report::{Format, Report, float};
use crate::store::Store;
use crate::store::reports::UrlStatusRow;

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
    /// Per URL: last check, checks, changes, status, next due, estimated rate and staleness.
    Age(ReportArgs),
    /// Per host: URLs, checks, changes, errors, politeness state.
    Hosts(ReportArgs),
}

/// Runs `freshet report`; returns the exit code.
pub async fn run(command: Command) -> anyhow::Result<u8> {
    let (args, text) = match command {
        Command::Age(args) => {
            let store = Store::open_existing(&args.db).await?;
            let rows = store.url_status(args.site.as_deref()).await?;
            store.close().await;
            let report = age_report(&rows, SystemClock.now_ms());
            (args.clone(), report.render(args.format))
        }
        Command::Hosts(args) => {
            let store = Store::open_existing(&args.db).await?;
            let report = hosts_report(&store, args.site.as_deref()).await?;
            store.close().await;
            (args.clone(), report.render(args.format))
        }
    };
    let _ = args;
    print!("{text}");
    Ok(0)
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
        "checks",
        "changes",
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
        let since_days = row
            .last_checked_ms
            .map(|t| (now_ms - t).max(0) as f64 / MS_PER_DAY);
        let staleness = match (row.rate_per_day, since_days) {
            (Some(rate), Some(since)) => {
                Some((expected_age_days(rate, since), p_stale(rate, since)))
            }
            _ => None,
        };
        report.push(vec![
            json!(row.url),
            json!(row.site),
            json!(row.host),
            json!(row.kind),
            time(row.last_checked_ms),
            json!(row.checks),
            json!(row.changes),
            row.last_status.map(Value::from).unwrap_or(Value::Null),
            time(row.next_due_ms),
            float(row.rate_per_day),
            float(row.rate_low),
            float(row.rate_high),
            float(staleness.map(|s| s.0)),
            float(staleness.map(|s| s.1)),
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
