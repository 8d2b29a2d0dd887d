//! Sitemaps against the shared corpus (crawler-commons and StormCrawler test files and their
//! asserted results). Skips when the corpus is absent.
//!
//! How rows are read:
//! - `kind: invalid` passes when freshet reports at least one error for the document;
//! - URLs on another host than the sitemap are refused by freshet (the protocol's rule, which
//!   crawler-commons does not apply); such rows are parsed a second time with those hosts
//!   cross-submitted, checked against that result, and counted as "host-refused" in the summary;
//! - `options.strict = false` turns freshet's directory rule off, like crawler-commons' lenient mode;
//! - extension contents (image, video, news, ...) are not read by freshet and not checked.

use std::path::PathBuf;

use chrono::{DateTime, TimeZone, Utc};
use freshet::discover::sitemap::{SitemapContext, SitemapError, SitemapKind, parse};
use serde_json::Value;
use url::Url;

fn corpus() -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/sitemaps"
    ));
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("corpus not found at {}: skipping", dir.display());
        None
    }
}

fn kind_name(kind: SitemapKind) -> &'static str {
    match kind {
        SitemapKind::Urlset => "urlset",
        SitemapKind::Index => "index",
        SitemapKind::Text => "text",
        SitemapKind::Rss => "rss",
        SitemapKind::Atom => "atom",
        SitemapKind::Unknown => "unknown",
    }
}

#[test]
fn sitemap_rows() {
    let Some(dir) = corpus() else { return };
    let now: DateTime<Utc> = Utc.with_ymd_and_hms(2026, 11, 21, 0, 0, 0).unwrap();
    let (mut total, mut passed, mut host_refused) = (0, 0, 0);
    let mut failures = Vec::new();
    for line in std::fs::read_to_string(dir.join("expected.jsonl"))
        .unwrap()
        .lines()
    {
        let row: Value = serde_json::from_str(line).unwrap();
        let file = row["file"].as_str().unwrap();
        let bytes = std::fs::read(dir.join(file)).unwrap();
        let url = row["sitemap_url"]
            .as_str()
            .unwrap_or("http://www.example.com/sitemap.xml");
        let mut ctx = SitemapContext::new(Url::parse(url).unwrap(), now);
        if row["options"]["strict"] == false {
            ctx.restrict_to_directory = false;
        }
        let first = parse(&bytes[..], &ctx);
        total += 1;
        let mut problems = Vec::new();

        // URLs on other hosts are refused; parse again as if those hosts' robots.txt had
        // cross-submitted the sitemap, so that the samples can be checked.
        let foreign: Vec<String> = first
            .errors
            .iter()
            .filter_map(|e| match e {
                SitemapError::ForeignHost { loc } => Some(loc.clone()),
                _ => None,
            })
            .collect();
        let doc = if foreign.is_empty() {
            first
        } else {
            host_refused += 1;
            ctx.cross_submitted_hosts = foreign
                .iter()
                .map(|u| Url::parse(u).unwrap().host_str().unwrap().to_string())
                .collect();
            parse(&bytes[..], &ctx)
        };
        let accepted: Vec<&str> = if doc.kind == SitemapKind::Index {
            doc.sitemaps.iter().map(|s| s.loc.as_str()).collect()
        } else {
            doc.urls.iter().map(|u| u.loc.as_str()).collect()
        };
        let want_kind = row["kind"].as_str().unwrap();
        if want_kind == "invalid" {
            if doc.errors.is_empty() {
                problems.push("no error reported for an invalid document".to_string());
            }
        } else if kind_name(doc.kind) != want_kind {
            problems.push(format!("kind {:?}", doc.kind));
        }
        if let Some(n) = row["url_count"].as_u64()
            && accepted.len() as u64 != n
        {
            problems.push(format!("{} URLs, want {n}", accepted.len()));
        }
        if let Some(sample) = row["urls_sample"].as_array() {
            let mut last = None;
            for u in sample.iter().filter_map(Value::as_str) {
                match accepted.iter().position(|a| *a == u) {
                    Some(i) => {
                        if last.is_some_and(|l| i < l) {
                            problems.push(format!("{u} out of order"));
                        }
                        last = Some(i);
                    }
                    None => problems.push(format!("{u} missing")),
                }
            }
        }
        if let Some(sample) = row["lastmod_sample"].as_object() {
            for (u, want) in sample {
                let got = doc
                    .urls
                    .iter()
                    .find(|x| &x.loc == u)
                    .map(|x| x.lastmod)
                    .or_else(|| doc.sitemaps.iter().find(|x| &x.loc == u).map(|x| x.lastmod));
                let want = want.as_str().map(|w| w.parse::<DateTime<Utc>>().unwrap());
                if got != Some(want) {
                    problems.push(format!("lastmod of {u}: {got:?}, want {want:?}"));
                }
            }
        }
        if let Some(sample) = row["changefreq_sample"].as_object() {
            for (u, want) in sample {
                let got = doc
                    .urls
                    .iter()
                    .find(|x| &x.loc == u)
                    .and_then(|x| x.changefreq);
                if got.map(|c| c.as_str()) != want.as_str() {
                    problems.push(format!("changefreq of {u}: {got:?}"));
                }
            }
        }
        if let Some(sample) = row["priority_sample"].as_object() {
            for (u, want) in sample {
                let got = doc
                    .urls
                    .iter()
                    .find(|x| &x.loc == u)
                    .and_then(|x| x.priority);
                if got
                    .map(|p| p as f64)
                    .map(|p| (p - want.as_f64().unwrap()).abs() < 1e-6)
                    != Some(true)
                {
                    problems.push(format!("priority of {u}: {got:?}"));
                }
            }
        }
        if let Some(want) = row["sitemap_lastmod"].as_str() {
            let want: DateTime<Utc> = want.parse().unwrap();
            if doc.lastmod != Some(want) {
                problems.push(format!("document lastmod {:?}", doc.lastmod));
            }
        }
        if problems.is_empty() {
            passed += 1;
        } else {
            failures.push(format!(
                "{file}: {problems:?} (errors: {:?})",
                &doc.errors[..doc.errors.len().min(3)]
            ));
        }
    }
    eprintln!(
        "sitemaps: {passed}/{total} rows pass ({host_refused} needed cross-submission of another host)"
    );
    assert!(failures.is_empty(), "{failures:#?}");
}
