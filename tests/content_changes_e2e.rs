//! Change detection on what matters, end to end through `refresher::run` against the recording
//! server (virtual clock), each promise read from the server's log or the database:
//! - ad churn changes the bytes, not the main content: each check records both verdicts, and
//!   `report age --format json` / `explain` show both counts;
//! - a host whose ETag stays put across ad churn answers 304s that an audit confirms by the
//!   content (`change_signal = "content"`, the default): it keeps getting conditional requests;
//!   judged by the bytes (`change_signal = "bytes"`) the same audit catches it;
//! - an edit of the article is a content change.
//!
//! Runs stop when the server has seen the requests a test needs (not after a fixed real time),
//! so a loaded machine only makes them slower.

#[path = "support/recording_server.rs"]
mod recording_server;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use freshet::clock::{SharedClock, VirtualClock};
use freshet::refresher::{self, PolicyChoice, RunOptions};
use freshet::store::Store;
use recording_server::{Recorded, RecordingServer, Reply};

/// 2021-01-01T00:00:00Z.
const ORIGIN_MS: i64 = 1_609_459_200_000;
/// Upper bound on a run (real time): only reached if freshet stops making the requests.
const PATIENCE: Duration = Duration::from_secs(90);

/// An article whose ad block, reader counter and CSRF token change with `noise`, and whose
/// text changes with `edition`.
fn article(edition: usize, noise: usize) -> String {
    format!(
        "<html><head><title>Bridge</title></head><body>\
         <header><p>Updated {noise} minutes ago</p></header>\
         <aside class=\"ad\"><p>Offer {noise}: buy now</p></aside>\
         <article><h1>The bridge</h1><p>Edition {edition}. The council met on Tuesday and \
         agreed the budget for the river bridge, which opens next spring after two years of \
         work on its foundations.</p></article>\
         <form><input type=\"hidden\" name=\"csrf\" value=\"t{noise}\"></form>\
         <footer><p>{noise} readers online</p></footer></body></html>"
    )
}

/// Runs the refresher on one site (with `extra` schedule lines) whose only seed is `host`'s
/// `/page`, until `enough` holds for the requests the server saw for `/page`.
async fn run_until(
    server: &RecordingServer,
    host: &str,
    extra: &str,
    dir: &Path,
    enough: impl Fn(&[Recorded]) -> bool + Send + Sync,
) -> std::path::PathBuf {
    let seeds = format!("seeds = [\"{}\"]", server.url(host, "/page"));
    run_site_until(server, host, &seeds, extra, dir, enough)
        .await
        .0
}

/// [`run_until`] for a site whose pages come from `source` (a `seeds` or `sitemaps` line);
/// gives the run's summary too.
async fn run_site_until(
    server: &RecordingServer,
    host: &str,
    source: &str,
    extra: &str,
    dir: &Path,
    enough: impl Fn(&[Recorded]) -> bool + Send + Sync,
) -> (std::path::PathBuf, refresher::RunSummary) {
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 50_000.0));
    server.route(
        host,
        "/robots.txt",
        Reply::text("User-agent: *\nAllow: /\n"),
    );
    let schedule = format!(
        "[[site]]\nname = \"s\"\n{source}\nrequests_per_day = 100000\n\
         host_rate = \"100/s\"\nallow_networks = [\"127.0.0.0/8\"]\n{extra}"
    );
    let path = dir.join("s.toml");
    std::fs::write(&path, schedule).unwrap();
    let db = dir.join("freshet.db");
    let opts = RunOptions {
        schedules: vec![path],
        db_path: db.clone(),
        once: false,
        clock,
        resolve: server.resolve(&[host]),
        policy: PolicyChoice::Learned,
        worker: Default::default(),
        run_lock: None,
    };
    let stop = async {
        let started = std::time::Instant::now();
        loop {
            if enough(&page_requests(server, host)) || started.elapsed() > PATIENCE {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let summary = refresher::run(opts, stop).await.expect("run");
    (db, summary)
}

/// Serves `host`'s `/sitemap.xml` listing `page` alone; gives the schedule line that reads it.
fn serve_sitemap_of(server: &RecordingServer, host: &str, page: &url::Url) -> String {
    let sitemap = format!(
        "<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
         <url><loc>{page}</loc></url></urlset>"
    );
    let sitemap = Reply::status(200)
        .header("content-type", "application/xml")
        .body(sitemap);
    server.route(host, "/sitemap.xml", sitemap);
    format!("sitemaps = [\"{}\"]", server.url(host, "/sitemap.xml"))
}

fn page_requests(server: &RecordingServer, host: &str) -> Vec<Recorded> {
    server
        .requests_to(host)
        .into_iter()
        .filter(|r| r.path == "/page")
        .collect()
}

fn conditional(r: &Recorded) -> bool {
    r.header("if-none-match").is_some() || r.header("if-modified-since").is_some()
}

/// The index of the audit: the first unconditional request after a conditional one.
fn audit_index(seen: &[Recorded]) -> Option<usize> {
    let first_conditional = seen.iter().position(conditional)?;
    seen[first_conditional..]
        .iter()
        .position(|r| !conditional(r))
        .map(|i| i + first_conditional)
}

/// A host whose ETag names the article edition: ad churn on every response, 304 to a matching
/// `If-None-Match`.
fn serve_stable_etag(server: &RecordingServer, host: &str) {
    server.handle(host, "/page", |request| {
        if request.header("if-none-match") == Some("\"edition-1\"") {
            return Reply::status(304)
                .header("etag", "\"edition-1\"")
                .to_response();
        }
        Reply::html(article(1, request.hit))
            .header("etag", "\"edition-1\"")
            .to_response()
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_etag_that_stays_put_across_ad_churn_is_trusted_when_content_counts() {
    const HOST: &str = "steady.test";
    let server =
        RecordingServer::start_with_clock(Arc::new(VirtualClock::new(ORIGIN_MS, 50_000.0))).await;
    serve_stable_etag(&server, HOST);
    let dir = tempfile::tempdir().unwrap();
    let enough = |seen: &[Recorded]| audit_index(seen).is_some_and(|i| seen.len() >= i + 16);
    let db = run_until(&server, HOST, "", dir.path(), enough).await;
    let seen = page_requests(&server, HOST);
    let audit =
        audit_index(&seen).unwrap_or_else(|| panic!("never audited: {} requests", seen.len()));
    // The next audit comes twenty 304s later, not ten: a clean audit doubles the gap.
    assert!(
        seen[audit + 1..].iter().take(15).all(conditional),
        "the audit confirmed the 304 by the content: conditional requests go on ({} requests, \
         audit at {audit})",
        seen.len()
    );

    let store = Store::open(&db).await.unwrap();
    let url = server.url(HOST, "/page");
    let row = store.url_row(url.as_str()).await.unwrap().unwrap();
    assert_eq!(row.content_changes, 0, "ads are not content: {row:?}");
    let history = store.observations_for(row.id, 1000).await.unwrap();
    let audited: Vec<_> = history
        .iter()
        .filter(|o| o.change_evidence.as_deref() == Some("audit"))
        .collect();
    assert!(!audited.is_empty(), "{history:?}");
    assert!(
        audited
            .iter()
            .all(|o| o.changed == Some(1) && o.content_changed == Some(0)),
        "the audit saw new bytes and the same content: {audited:?}"
    );
    assert!(
        history
            .iter()
            .filter(|o| o.status == Some(304))
            .all(|o| o.changed == Some(0) && o.content_changed == Some(0)),
        "a 304 is unchanged for both"
    );
    let trust = store.host_trust().await.unwrap();
    store.close().await;
    let (_, trust) = trust
        .into_iter()
        .find(|(id, _)| *id == row.host_id)
        .expect("trust learnt");
    assert!(
        trust.contains("\"audits_caught\":0"),
        "no audit caught the host: {trust}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_host_is_caught_when_bytes_count() {
    const HOST: &str = "steady-bytes.test";
    let server =
        RecordingServer::start_with_clock(Arc::new(VirtualClock::new(ORIGIN_MS, 50_000.0))).await;
    serve_stable_etag(&server, HOST);
    let dir = tempfile::tempdir().unwrap();
    let enough = |seen: &[Recorded]| audit_index(seen).is_some_and(|i| seen.len() >= i + 4);
    let db = run_until(
        &server,
        HOST,
        "change_signal = \"bytes\"\n",
        dir.path(),
        enough,
    )
    .await;
    let seen = page_requests(&server, HOST);
    let audit =
        audit_index(&seen).unwrap_or_else(|| panic!("never audited: {} requests", seen.len()));
    assert!(
        seen[audit + 1..].iter().all(|r| !conditional(r)),
        "judged by its bytes, the 304 hid a change: no conditional requests after the audit"
    );
    let store = Store::open(&db).await.unwrap();
    let row = store
        .url_row(server.url(HOST, "/page").as_str())
        .await
        .unwrap()
        .unwrap();
    assert!(row.changes >= 1, "{row:?}");
    assert_eq!(row.content_changes, 0, "{row:?}");
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_of_the_article_is_a_content_change_and_the_reports_show_both() {
    const HOST: &str = "edited.test";
    let server =
        RecordingServer::start_with_clock(Arc::new(VirtualClock::new(ORIGIN_MS, 50_000.0))).await;
    // No validators: every check is a full GET. The article is edited once, at the fourth hit.
    server.handle(HOST, "/page", |request| {
        let edition = if request.hit < 3 { 1 } else { 2 };
        Reply::html(article(edition, request.hit)).to_response()
    });
    let dir = tempfile::tempdir().unwrap();
    let db = run_until(&server, HOST, "", dir.path(), |seen| seen.len() >= 6).await;

    let store = Store::open(&db).await.unwrap();
    let url = server.url(HOST, "/page");
    let row = store.url_row(url.as_str()).await.unwrap().unwrap();
    let history = store.observations_for(row.id, 1000).await.unwrap();
    store.close().await;
    let content: Vec<Option<i64>> = history.iter().map(|o| o.content_changed).collect();
    assert_eq!(content[0], None, "the first copy says nothing");
    assert_eq!(content[3], Some(1), "the edit: {content:?}");
    assert_eq!(
        content.iter().filter(|c| **c == Some(1)).count(),
        1,
        "one edit, one content change: {content:?}"
    );
    assert!(
        history[1..].iter().all(|o| o.changed == Some(1)),
        "the noise changed the bytes at every check"
    );
    assert_eq!(row.content_changes, 1);
    assert_eq!(row.changes, history.len() as i64 - 1);

    let bin = env!("CARGO_BIN_EXE_freshet");
    let out = Command::new(bin)
        .args(["report", "age", "--format", "json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let page = rows
        .iter()
        .find(|r| r["url"] == url.as_str())
        .expect("the page's row");
    assert_eq!(page["changes"], serde_json::json!(row.changes));
    assert_eq!(page["content_changes"], serde_json::json!(1));
    let table = Command::new(bin)
        .args(["report", "age", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(
        table
            .lines()
            .next()
            .unwrap()
            .contains("changes  content_changes"),
        "{table}"
    );

    let explained = Command::new(bin)
        .args(["explain", url.as_str(), "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&explained.stdout);
    assert!(
        text.contains(&format!(
            "{} change(s) of the bytes seen, 1 of the main content",
            row.changes
        )),
        "{text}"
    );
    assert!(
        text.contains("learns from changes of the main content (change_signal = \"content\")"),
        "{text}"
    );
    assert!(text.contains("bytes changed, content unchanged"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_served_whole_is_extracted_once_per_change() {
    const HOST: &str = "whole.test";
    let server =
        RecordingServer::start_with_clock(Arc::new(VirtualClock::new(ORIGIN_MS, 50_000.0))).await;
    // No validators and no noise: every check is a full GET of the same bytes, until the
    // article is edited at the fourth hit.
    server.handle(HOST, "/page", |request| {
        let edition = if request.hit < 3 { 1 } else { 2 };
        Reply::html(article(edition, 0)).to_response()
    });
    let page = server.url(HOST, "/page");
    let source = serve_sitemap_of(&server, HOST, &page);
    let dir = tempfile::tempdir().unwrap();
    let (db, summary) = run_site_until(&server, HOST, &source, "", dir.path(), |seen| {
        seen.len() >= 6
    })
    .await;

    let store = Store::open(&db).await.unwrap();
    let row = store.url_row(page.as_str()).await.unwrap().unwrap();
    let history = store.observations_for(row.id, 1000).await.unwrap();
    let documents = store.documents().await.unwrap();
    store.close().await;
    let content: Vec<Option<i64>> = history.iter().map(|o| o.content_changed).collect();
    assert!(history.len() >= 6, "{content:?}");
    assert_eq!(content[0], None, "the first copy says nothing");
    assert_eq!(
        content[3],
        Some(1),
        "the edit is a content change: {content:?}"
    );
    assert_eq!(
        content.iter().filter(|c| **c == Some(1)).count(),
        1,
        "one edit, one change: {content:?}"
    );
    // Every check after the first of each edition returned the copy's bytes.
    assert_eq!(
        summary.extractions, 2,
        "one extraction per edition, not per check ({} checks)",
        summary.checks
    );
    // The dedup engine still holds the page and its latest copy.
    let kept: Vec<_> = documents
        .iter()
        .filter(|d| d.url == page.as_str())
        .collect();
    assert_eq!(kept.len(), 1, "the page's copy is kept");
    assert_eq!(
        Some(kept[0].content_fp),
        history
            .last()
            .unwrap()
            .content_fingerprint
            .map(freshet::store::hash_from_db),
        "the copy kept is the second edition"
    );
    assert_eq!(
        kept[0].fetched_ms,
        history.last().unwrap().checked_ms,
        "the copy is dated by the last check that confirmed it (what export warc writes)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_bytes_served_as_another_type_are_extracted_again() {
    const HOST: &str = "retyped.test";
    let server =
        RecordingServer::start_with_clock(Arc::new(VirtualClock::new(ORIGIN_MS, 50_000.0))).await;
    // One body throughout, served as plain text twice, then (the server mended) as HTML.
    server.handle(HOST, "/page", |request| {
        let kind = if request.hit < 2 {
            "text/plain; charset=utf-8"
        } else {
            "text/html; charset=utf-8"
        };
        Reply::status(200)
            .header("content-type", kind)
            .body(article(1, 0))
            .to_response()
    });
    let page = server.url(HOST, "/page");
    let source = serve_sitemap_of(&server, HOST, &page);
    let dir = tempfile::tempdir().unwrap();
    let (db, summary) = run_site_until(&server, HOST, &source, "", dir.path(), |seen| {
        seen.len() >= 5
    })
    .await;
    let store = Store::open(&db).await.unwrap();
    let row = store.url_row(page.as_str()).await.unwrap().unwrap();
    let history = store.observations_for(row.id, 1000).await.unwrap();
    store.close().await;
    let prints: Vec<Option<i64>> = history.iter().map(|o| o.content_fingerprint).collect();
    assert!(prints.len() >= 5, "{prints:?}");
    assert_eq!(
        summary.extractions, 2,
        "once as text, once as HTML: {prints:?}"
    );
    assert_eq!(prints[0], prints[1], "{prints:?}");
    assert_ne!(
        prints[1], prints[2],
        "read as HTML, the main text is the article's, not the markup's: {prints:?}"
    );
    assert!(prints[2..].iter().all(|p| *p == prints[2]), "{prints:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_served_whole_is_not_extracted_again_by_the_next_run() {
    const HOST: &str = "restarted.test";
    let server =
        RecordingServer::start_with_clock(Arc::new(VirtualClock::new(ORIGIN_MS, 50_000.0))).await;
    server.handle(HOST, "/page", |_| Reply::html(article(1, 0)).to_response());
    let page = server.url(HOST, "/page");
    let source = serve_sitemap_of(&server, HOST, &page);
    let dir = tempfile::tempdir().unwrap();
    let (_, first) = run_site_until(&server, HOST, &source, "", dir.path(), |seen| {
        seen.len() >= 3
    })
    .await;
    assert_eq!(first.extractions, 1, "{} checks", first.checks);
    // A later run (a `--once` from cron, a restart) loads what the engine filed the page with.
    let before = page_requests(&server, HOST).len();
    let (db, second) = run_site_until(&server, HOST, &source, "", dir.path(), |seen| {
        seen.len() >= before + 3
    })
    .await;
    assert!(second.checks >= 1, "the page was checked again");
    assert_eq!(
        second.extractions, 0,
        "{} checks of the same bytes",
        second.checks
    );
    let store = Store::open(&db).await.unwrap();
    let documents = store.documents().await.unwrap();
    store.close().await;
    assert_eq!(documents.len(), 1, "the page's copy is kept");
}
