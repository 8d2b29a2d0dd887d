//! Bodies and validators a site owner cannot trust, end to end through `refresher::run` against
//! the recording server (virtual clock), each promise read from the server's log or the database:
//! - an empty 200 after a page had content (nginx while a static site is rebuilt) is an error,
//!   not a new copy nor a change;
//! - a host whose ETag changes on unchanged content stops getting `If-None-Match`;
//! - a host that answers 304 to everything is audited by an unconditional GET, caught, and from
//!   then on gets no conditional requests;
//! - a body shorter than its Content-Length is an error, not a copy (fetcher level, raw socket).
//!
//! Runs stop when the server has seen the requests a test needs (not after a fixed real time),
//! so a loaded machine only makes them slower.

#[path = "support/recording_server.rs"]
mod recording_server;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use freshet::clock::{SharedClock, SystemClock, VirtualClock};
use freshet::fetch::{FetchConfig, FetchError, FetchRequest, Fetcher};
use freshet::politeness::{HostConfig, HostPool};
use freshet::refresher::{self, PolicyChoice, RunOptions};
use freshet::store::Store;
use recording_server::{Recorded, RecordingServer, Reply};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// 2021-01-01T00:00:00Z.
const ORIGIN_MS: i64 = 1_609_459_200_000;
/// Upper bound on a run (real time): only reached if freshet stops making the requests.
const PATIENCE: Duration = Duration::from_secs(90);

/// Runs the refresher on one site whose only seed is `host`'s `/page`, until `enough` holds for
/// the requests the server saw for `/page`.
async fn run_until(
    server: &RecordingServer,
    clock: SharedClock,
    host: &str,
    dir: &Path,
    enough: impl Fn(&[Recorded]) -> bool + Send + Sync,
) -> Store {
    server.route(
        host,
        "/robots.txt",
        Reply::text("User-agent: *\nAllow: /\n"),
    );
    let schedule = format!(
        "[[site]]\nname = \"s\"\nseeds = [\"{}\"]\nrequests_per_day = 100000\nhost_rate = \"100/s\"\nallow_networks = [\"127.0.0.0/8\"]\n",
        server.url(host, "/page")
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
            let seen = page_requests(server, host);
            if enough(&seen) || started.elapsed() > PATIENCE {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    refresher::run(opts, stop).await.expect("run");
    Store::open(&db).await.unwrap()
}

fn page_requests(server: &RecordingServer, host: &str) -> Vec<Recorded> {
    server
        .requests_to(host)
        .into_iter()
        .filter(|r| r.path == "/page")
        .collect()
}

fn fast_clock() -> SharedClock {
    Arc::new(VirtualClock::new(ORIGIN_MS, 50_000.0))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_200_after_content_is_an_error_and_keeps_the_copy() {
    const HOST: &str = "rebuild.test";
    let clock = fast_clock();
    let server = RecordingServer::start_with_clock(clock.clone()).await;
    let content = "<html><body><h1>Timetable</h1><p>Trains leave hourly.</p></body></html>";
    server.handle(HOST, "/page", move |request| {
        if request.hit == 0 {
            Reply::html(content)
                .header("etag", "\"full\"")
                .to_response()
        } else {
            // The site is being rebuilt: an empty file, a new ETag.
            Reply::html("")
                .header("etag", &format!("\"empty{}\"", request.hit))
                .to_response()
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let store = run_until(&server, clock, HOST, dir.path(), |seen| seen.len() >= 3).await;
    assert!(page_requests(&server, HOST).len() >= 3);

    let row = store
        .url_row(server.url(HOST, "/page").as_str())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.changes, 0, "an empty body is not a change: {row:?}");
    assert_eq!(row.etag.as_deref(), Some("\"full\""), "validators kept");
    let history = store.observations_for(row.id, 100).await.unwrap();
    let failed: Vec<_> = history.iter().filter(|o| o.error.is_some()).collect();
    assert!(failed.len() >= 2, "{history:?}");
    assert!(failed.iter().all(|o| o.changed.is_none()));
    assert!(
        failed[0]
            .error
            .as_deref()
            .unwrap()
            .contains("empty body while our copy has content"),
        "{:?}",
        failed[0].error
    );
    let errors = store.recent_errors(50).await.unwrap();
    assert!(
        errors.iter().any(|(_, _, url, message)| url.as_deref()
            == Some(server.url(HOST, "/page").as_str())
            && message.contains("kept the previous copy")),
        "{errors:?}"
    );
    let documents = store.documents().await.unwrap();
    assert_eq!(documents.len(), 1, "{documents:?}");
    assert_eq!(
        documents[0].body,
        content.as_bytes(),
        "the good copy is kept"
    );
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_etag_that_changes_on_unchanged_content_stops_if_none_match() {
    const HOST: &str = "churn.test";
    let clock = fast_clock();
    let server = RecordingServer::start_with_clock(clock.clone()).await;
    server.handle(HOST, "/page", |request| {
        // Same content, a new ETag on every response (an ETag per backend server or request).
        Reply::html("<html><body><p>Never changes.</p></body></html>")
            .header("etag", &format!("\"r{}\"", request.hit))
            .to_response()
    });
    let dir = tempfile::tempdir().unwrap();
    let store = run_until(&server, clock, HOST, dir.path(), |seen| seen.len() >= 6).await;
    let seen = page_requests(&server, HOST);
    assert!(seen.len() >= 6, "{} requests", seen.len());
    let conditional: Vec<bool> = seen
        .iter()
        .map(|r| r.header("if-none-match").is_some())
        .collect();
    assert!(!conditional[0], "the first request is unconditional");
    assert!(conditional[1], "the ETag is tried: {conditional:?}");
    // Two responses with the content unchanged and a new ETag teach that it never matches.
    assert!(
        conditional[3..].iter().all(|c| !c),
        "If-None-Match still sent: {conditional:?}"
    );
    let row = store
        .url_row(server.url(HOST, "/page").as_str())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.changes, 0, "a new ETag alone is not a change");
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_whose_304s_hide_changes_is_audited_and_then_fetched_unconditionally() {
    const HOST: &str = "liar.test";
    let clock = fast_clock();
    let server = RecordingServer::start_with_clock(clock.clone()).await;
    server.handle(HOST, "/page", |request| {
        let conditional = request.header("if-none-match").is_some()
            || request.header("if-modified-since").is_some();
        if conditional {
            // Whatever the validator, "not modified".
            return Reply::status(304).header("etag", "\"same\"").to_response();
        }
        Reply::html(format!(
            "<html><body><p>Edition {}.</p></body></html>",
            request.hit
        ))
        .header("etag", "\"same\"")
        .header("last-modified", "Fri, 01 Jan 2021 00:00:00 GMT")
        .to_response()
    });
    let dir = tempfile::tempdir().unwrap();
    let enough = |seen: &[Recorded]| {
        let conditional = |r: &Recorded| r.header("if-none-match").is_some();
        // The audit is the first unconditional request after a conditional one.
        let audit = seen
            .iter()
            .skip(1)
            .position(|r| !conditional(r))
            .map(|i| i + 1);
        audit.is_some_and(|i| seen.len() >= i + 4)
    };
    let store = run_until(&server, clock, HOST, dir.path(), enough).await;
    let seen = page_requests(&server, HOST);
    let conditional: Vec<bool> = seen
        .iter()
        .map(|r| r.header("if-none-match").is_some() || r.header("if-modified-since").is_some())
        .collect();
    let audit = conditional
        .iter()
        .skip(1)
        .position(|c| !c)
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("never audited: {conditional:?}"));
    assert_eq!(
        audit, 11,
        "the tenth 304 (requests 1..=10 conditional) is audited at once: {conditional:?}"
    );
    assert!(
        conditional[audit..].iter().all(|c| !c),
        "after the lie was caught every request is unconditional: {conditional:?}"
    );
    let row = store
        .url_row(server.url(HOST, "/page").as_str())
        .await
        .unwrap()
        .unwrap();
    assert!(row.changes >= 1, "the hidden change is found: {row:?}");
    let history = store.observations_for(row.id, 100).await.unwrap();
    assert!(
        history
            .iter()
            .any(|o| o.change_evidence.as_deref() == Some("audit") && o.changed == Some(1)),
        "{history:?}"
    );
    let host = store
        .host(&format!("http://{HOST}:{}", server.addr.port()))
        .await
        .unwrap()
        .unwrap();
    let trust: serde_json::Value =
        serde_json::from_str(host.trust_json.as_deref().expect("trust saved")).unwrap();
    assert!(trust["audits_caught"].as_u64().unwrap() >= 1, "{trust}");
    store.close().await;
}

/// A raw HTTP/1.1 server on 127.0.0.1:0 that answers every connection with `response`, then
/// closes it.
async fn raw_server(response: &'static [u8]) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = socket.read(&mut buf).await;
                let _ = socket.write_all(response).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    addr
}

/// freshet's fetcher, allowed to reach loopback, and the system clock.
fn loopback_fetcher() -> (Fetcher, SharedClock) {
    let fetcher = Fetcher::new(FetchConfig {
        allow_networks: recording_server::loopback_networks(),
        ..FetchConfig::default()
    })
    .unwrap();
    (fetcher, Arc::new(SystemClock))
}

#[tokio::test]
async fn a_body_shorter_than_its_content_length_is_an_error_not_a_copy() {
    let addr = raw_server(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100\r\nConnection: close\r\n\r\n<html>only half</html>",
    )
    .await;
    let (fetcher, clock) = loopback_fetcher();
    let pool = HostPool::new(Arc::clone(&clock)).with_defaults(HostConfig {
        min_interval: Duration::ZERO,
        concurrency: 1,
    });
    let url = url::Url::parse(&format!("http://{addr}/page")).unwrap();
    let outcome = fetcher
        .fetch(&FetchRequest::get(url), &pool, clock.as_ref())
        .await;
    assert!(!outcome.is_success(), "{outcome:?}");
    assert!(outcome.body.is_none() && outcome.fingerprint.is_none());
    match outcome.error {
        Some(FetchError::Truncated { expected, got, .. }) => assert_eq!((expected, got), (100, 22)),
        ref other => panic!("{other:?}"),
    }
}

/// A robots.txt whose 200 body breaks off before its Content-Length is no answer (RFC 9309:
/// unreachable, disallow all for now), not an empty file that allows everything: as `run` reads
/// it ([`freshet::fetch::FetchOutcome::robots_status`]) and as `freshet inspect robots` shows it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_robots_txt_cut_short_disallows_everything_for_now() {
    let addr = raw_server(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\nConnection: close\r\n\r\nUser-agent: *\n",
    )
    .await;
    let (fetcher, clock) = loopback_fetcher();
    let pool = HostPool::new(Arc::clone(&clock));
    let url = url::Url::parse(&format!("http://{addr}/robots.txt")).unwrap();
    let limit = freshet::robots::MAX_ROBOTS_BYTES as u64 + 1;
    let outcome = fetcher
        .fetch_prefix(&url, limit, &pool, clock.as_ref())
        .await;
    assert_eq!(outcome.status, Some(200), "{outcome:?}");
    assert_eq!(outcome.robots_status(), 0, "{outcome:?}");
    let body = outcome.body.as_deref().unwrap_or_default();
    let rules = freshet::robots::rules_for_status(outcome.robots_status(), body, "freshet");
    assert!(!rules.is_allowed(&format!("http://{addr}/page")));

    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_freshet"))
        .args([
            "inspect",
            "robots",
            url.as_str(),
            "--url",
            "/page",
            "--json",
        ])
        .args(["--allow-network", "127.0.0.0/8"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["allowed"], false, "{v} {stderr}");
    assert_eq!(v["status"], 0, "{v}");
}
