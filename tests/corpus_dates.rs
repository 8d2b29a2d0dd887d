//! Dates against the shared corpus: crawler-commons' W3C and RSS rows (all must pass) and
//! feedparser's date-parser rows for the formats freshet reads (counted). Skips without corpus.
//!
//! Skipped feedparser parsers: `greek`, `hungarian`, `nate`, `onblog` (localized month and
//! am/pm names), `perforce` (`2006/09/15`), and `iso8601`'s compact and ordinal forms (`031231`,
//! `-0312`, `03335`, and `2003-012-31`): no sitemap or feed in the wild that freshet targets writes them, and
//! guessing at them would misread real dates.

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use freshet::discover::dates::{parse_any, parse_rfc822, parse_w3c};
use serde_json::Value;

fn corpus() -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/dates"
    ));
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("corpus not found at {}: skipping", dir.display());
        None
    }
}

fn rows(file: &str) -> Vec<Value> {
    let dir = corpus().unwrap();
    std::fs::read_to_string(dir.join(file))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Compares to the second (feedparser) or the millisecond (crawler-commons).
fn same(got: Option<DateTime<Utc>>, want: &Value, whole_seconds: bool) -> bool {
    match (got, want.as_str()) {
        (None, None) => true,
        (Some(g), Some(w)) => {
            let w: DateTime<Utc> = w.parse().unwrap();
            if whole_seconds {
                g.timestamp() == w.timestamp()
            } else {
                g.timestamp_millis() == w.timestamp_millis()
            }
        }
        _ => false,
    }
}

#[test]
fn crawler_commons_dates() {
    if corpus().is_none() {
        return;
    }
    let mut failures = Vec::new();
    let all = rows("w3c-dates.jsonl");
    for row in &all {
        let input = row["input"].as_str().unwrap();
        let got = match row["format"].as_str().unwrap() {
            "w3c" => parse_w3c(input),
            _ => parse_rfc822(input),
        };
        if !same(got, &row["expected_utc_iso"], false) {
            failures.push(format!(
                "{input:?} -> {got:?}, want {}",
                row["expected_utc_iso"]
            ));
        }
    }
    eprintln!(
        "crawler-commons dates: {}/{} pass",
        all.len() - failures.len(),
        all.len()
    );
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn feedparser_dates() {
    if corpus().is_none() {
        return;
    }
    let (mut n, mut ok, mut skipped) = (0, 0, 0);
    let mut failures = Vec::new();
    for row in rows("feed-dates.jsonl") {
        let input = row["input"].as_str().unwrap();
        let got = match row["parser"].as_str().unwrap() {
            "w3dtf" => parse_w3c(input),
            "rfc822" => parse_rfc822(input),
            "asctime" => parse_any(input),
            // `2003-012-31` (a three-digit month) is not ISO 8601 and is skipped with the rest.
            "iso8601" if input.is_empty() || input.starts_with("2003-12-31T") => parse_any(input),
            _ => {
                skipped += 1;
                continue;
            }
        };
        n += 1;
        if same(got, &row["expected_utc_iso"], true) {
            ok += 1;
        } else {
            failures.push(format!(
                "{input:?} -> {got:?}, want {}",
                row["expected_utc_iso"]
            ));
        }
    }
    eprintln!("feedparser dates: {ok}/{n} pass, {skipped} skipped; failing: {failures:#?}");
    assert!(failures.is_empty());
}
