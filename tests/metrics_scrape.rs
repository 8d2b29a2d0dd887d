//! `freshet run --metrics ADDR` serves Prometheus metrics during a run (issue 12): a scrape in
//! the middle of a run against the recording server parses as Prometheus text, carries every
//! named series, and its request counter agrees with what the server saw.

#[path = "support/freshet_bin.rs"]
mod freshet_bin;
#[path = "support/recording_server.rs"]
mod recording_server;

use std::collections::HashMap;
use std::time::Duration;

use freshet_bin::{Freshet, wait_for, write_schedule};
use prometheus_parse::{Scrape, Value};
use recording_server::{RecordingServer, Reply};
use tokio::io::{AsyncBufReadExt, BufReader};

const HOST: &str = "127.0.0.1";
const PAGES: usize = 6;
/// Requests the server may have answered that freshet has not counted yet at the scrape: one
/// host, one request at a time (robots.txt and sitemaps go through the same gate).
const IN_FLIGHT: f64 = 1.0;

/// Sums a series over its labels (counters and gauges).
fn total(scrape: &Scrape, name: &str) -> f64 {
    let samples: Vec<f64> = scrape
        .samples
        .iter()
        .filter(|s| s.metric == name)
        .map(|s| match &s.value {
            Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => *v,
            other => panic!("{name}: not a number: {other:?}"),
        })
        .collect();
    assert!(!samples.is_empty(), "no series {name}");
    samples.iter().sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_are_scraped_during_a_run_and_agree_with_the_server() {
    let server = RecordingServer::start().await;
    let base = format!("http://{HOST}:{}", server.addr.port());
    server.route(
        HOST,
        "/robots.txt",
        Reply::text("User-agent: *\nAllow: /\n"),
    );
    let list: String = (0..PAGES).map(|i| format!("{base}/p{i}\n")).collect();
    server.route(HOST, "/sitemap.txt", Reply::text(list));
    for i in 0..PAGES {
        server.route(
            HOST,
            &format!("/p{i}"),
            Reply::html(format!("<p>page {i}</p>")),
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let schedule = write_schedule(
        dir.path(),
        &format!(
            "[[site]]\nname = \"local\"\nsitemaps = [\"{base}/sitemap.txt\"]\n\
             host_rate = \"20/s\"\nallow_networks = [\"127.0.0.0/8\"]\n"
        ),
    );
    let db = dir.path().join("f.db");
    let mut freshet = Freshet::run(&schedule, &db, &["--metrics", "127.0.0.1:0"]);
    // The address freshet bound is on stderr; the rest of stderr is drained in the background.
    let stderr = freshet.child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let address = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(rest) = line.strip_prefix("freshet: metrics at ") {
                return rest.to_string();
            }
        }
        panic!("freshet ended without saying where its metrics are");
    })
    .await
    .expect("the metrics address on stderr");
    assert!(address.starts_with("http://127.0.0.1:"), "{address}");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });

    let pages_seen = || {
        let paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
        (0..PAGES).all(|i| paths.contains(&format!("/p{i}")))
    };
    assert!(
        wait_for(Duration::from_secs(30), pages_seen).await,
        "the run did not check every page"
    );

    let before = server.requests().len() as f64;
    let response = reqwest::get(&address).await.expect("scrape /metrics");
    assert!(response.status().is_success());
    let text = response.text().await.unwrap();
    let after = server.requests().len() as f64;
    assert!(
        freshet.child.try_wait().unwrap().is_none(),
        "the scrape must happen during the run"
    );
    let scrape = Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).expect("Prometheus text");

    let requests = total(&scrape, "freshet_requests_total");
    assert!(
        requests <= after && requests >= before - IN_FLIGHT,
        "freshet counted {requests} requests; the server saw {before}..{after}"
    );
    let by_outcome: HashMap<String, f64> = scrape
        .samples
        .iter()
        .filter(|s| s.metric == "freshet_requests_total")
        .map(|s| {
            let v = match s.value {
                Value::Counter(v) | Value::Untyped(v) => v,
                _ => 0.0,
            };
            (format!("{}/{}", &s.labels["site"], &s.labels["outcome"]), v)
        })
        .collect();
    assert!(
        by_outcome["local/2xx"] >= (PAGES + 2) as f64,
        "{by_outcome:?}"
    );
    let checks = total(&scrape, "freshet_checks_total");
    assert!(checks >= PAGES as f64, "{checks}");
    assert!(total(&scrape, "freshet_budget_used_requests") <= requests);
    assert!(total(&scrape, "freshet_budget_used_requests") >= PAGES as f64);
    assert!(total(&scrape, "freshet_budget_requests_per_day") > 0.0);
    assert_eq!(total(&scrape, "freshet_hosts_in_backoff"), 0.0);
    let due = total(&scrape, "freshet_urls_due");
    assert!((0.0..=(PAGES as f64)).contains(&due), "{due}");
    let age = total(&scrape, "freshet_estimated_mean_age_seconds");
    assert!((0.0..86_400.0).contains(&age), "copies seconds old: {age}");
    let stale = total(&scrape, "freshet_estimated_stale_ratio");
    assert!((0.0..=1.0).contains(&stale), "{stale}");
    let histogram = scrape
        .samples
        .iter()
        .find(|s| s.metric == "freshet_fetch_duration_seconds")
        .expect("the fetch latency histogram");
    match &histogram.value {
        Value::Histogram(buckets) => {
            let count = buckets.last().map_or(0.0, |b| b.count);
            assert_eq!(count, checks, "one latency per check");
        }
        other => panic!("not a histogram: {other:?}"),
    }

    freshet.terminate();
    let status = tokio::time::timeout(Duration::from_secs(10), freshet.child.wait())
        .await
        .expect("freshet exits after SIGTERM")
        .unwrap();
    assert!(status.success(), "{status:?}");
}
