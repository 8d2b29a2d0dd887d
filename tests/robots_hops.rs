//! robots.txt promises under hostile hosts, checked from the server's request log: a 10 MB
//! robots.txt, a redirect into a Disallowed path, a redirect to another host with rules and a
//! Crawl-delay of its own, and a robots.txt 5xx followed by an allow (issue 10).

#[path = "support/recording_server.rs"]
mod recording_server;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::response::IntoResponse;
use freshet::clock::{SharedClock, VirtualClock};
use freshet::refresher::{self, PolicyChoice, RunOptions, RunSummary};
use freshet::store::Store;
use recording_server::{Recorded, RecordingServer, Reply};

/// 2021-01-01T00:00:00Z.
const ORIGIN_MS: i64 = 1_609_459_200_000;
const DAY_MS: i64 = 86_400_000;

/// Writes a one-site schedule (loopback allowed) with `seeds` on `server` and extra `keys`.
fn schedule(dir: &Path, server: &RecordingServer, seeds: &[(&str, &str)], keys: &str) -> PathBuf {
    let seeds: Vec<String> = seeds
        .iter()
        .map(|(host, path)| format!("\"{}\"", server.url(host, path)))
        .collect();
    let text = format!(
        "[[site]]\nname = \"hostile\"\nseeds = [{}]\nallow_networks = [\"127.0.0.0/8\"]\n{keys}",
        seeds.join(", ")
    );
    let path = dir.join("hostile.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// One `run --once` pass on `clock` against `server`, the test hosts resolved to it.
async fn run_once(
    server: &RecordingServer,
    schedule: &Path,
    db: &Path,
    clock: SharedClock,
) -> RunSummary {
    let options = RunOptions {
        schedules: vec![schedule.to_path_buf()],
        db_path: db.to_path_buf(),
        once: true,
        clock,
        resolve: server.resolve(&["a.test", "b.test"]),
        policy: PolicyChoice::Learned,
        worker: Default::default(),
        run_lock: None,
    };
    refresher::run(options, std::future::pending())
        .await
        .expect("one pass")
}

fn paths(requests: &[Recorded]) -> Vec<String> {
    requests.iter().map(|r| r.path.clone()).collect()
}

/// Every recorded error as "url | message".
async fn errors(db: &Path) -> Vec<String> {
    let store = Store::open(db).await.unwrap();
    let errors = store.recent_errors(1000).await.unwrap();
    store.close().await;
    errors
        .into_iter()
        .map(|(_, _, url, message)| format!("{} | {message}", url.unwrap_or_default()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_robots_txt_past_500_kib_is_read_not_ignored() {
    let server = RecordingServer::start().await;
    let mut robots = b"User-agent: *\nDisallow: /private/\n".to_vec();
    let filler = b"# a robots.txt padded far past the 500 KiB RFC 9309 asks crawlers to read\n";
    while robots.len() < 10 * 1024 * 1024 {
        robots.extend_from_slice(filler);
    }
    server.route("a.test", "/robots.txt", Reply::text(robots));
    server.route("a.test", "/public", Reply::html("<p>public</p>"));
    server.route("a.test", "/private/a", Reply::html("<p>private</p>"));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    let schedule = schedule(
        dir.path(),
        &server,
        &[("a.test", "/public"), ("a.test", "/private/a")],
        "",
    );
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 200.0));
    run_once(&server, &schedule, &db, clock).await;

    let seen = paths(&server.requests_to("a.test"));
    assert!(seen.contains(&"/robots.txt".to_string()), "{seen:?}");
    assert!(seen.contains(&"/public".to_string()), "{seen:?}");
    let disallowed = seen.iter().filter(|p| p.starts_with("/private/")).count();
    eprintln!(
        "10 MB robots.txt: {disallowed} Disallowed requests of {}",
        seen.len()
    );
    assert_eq!(disallowed, 0, "{seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_into_a_disallowed_path_is_never_requested() {
    let server = RecordingServer::start().await;
    server.route(
        "a.test",
        "/robots.txt",
        Reply::text("User-agent: *\nDisallow: /private/\n"),
    );
    server.route("a.test", "/r", Reply::redirect(302, "/private/x"));
    server.route("a.test", "/moved", Reply::redirect(301, "/ok"));
    server.route("a.test", "/ok", Reply::html("<p>ok</p>"));
    server.route("a.test", "/private/x", Reply::html("<p>secret</p>"));
    // `%70` is `p`: servers serve this as `/private/y` (an adversary's redirect got through).
    server.route("a.test", "/enc", Reply::redirect(301, "/%70rivate/y"));
    server.route("a.test", "/%70rivate/y", Reply::html("<p>secret</p>"));
    // nginx serves an escaped slash as a slash: this is `/private/z` there.
    server.route("a.test", "/slash", Reply::redirect(301, "/private%2Fz"));
    server.route("a.test", "/private%2Fz", Reply::html("<p>secret</p>"));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    let schedule = schedule(
        dir.path(),
        &server,
        &[
            ("a.test", "/r"),
            ("a.test", "/moved"),
            ("a.test", "/enc"),
            ("a.test", "/slash"),
        ],
        "",
    );
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 200.0));
    run_once(&server, &schedule, &db, clock).await;

    let seen = paths(&server.requests_to("a.test"));
    // The redirect itself and an allowed hop are followed ...
    assert!(seen.contains(&"/r".to_string()), "{seen:?}");
    assert!(seen.contains(&"/ok".to_string()), "{seen:?}");
    assert!(seen.contains(&"/enc".to_string()), "{seen:?}");
    assert!(seen.contains(&"/slash".to_string()), "{seen:?}");
    // ... the Disallowed hops are not, written plainly, with an escaped letter or slash.
    let disallowed = seen
        .iter()
        .map(|p| p.to_ascii_lowercase())
        .filter(|p| {
            p.starts_with("/private/")
                || p.starts_with("/%70rivate")
                || p.starts_with("/private%2f")
        })
        .count();
    eprintln!(
        "redirect into /private/: {disallowed} Disallowed requests of {}",
        seen.len()
    );
    assert_eq!(disallowed, 0, "{seen:?}");
    let errors = errors(&db).await;
    assert!(
        errors.iter().any(|e| e.contains("/private/x")
            && e.contains("Disallow: /private/")
            && e.contains("robots.txt")),
        "no specific error for the hop: {errors:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cross_host_redirect_reads_the_targets_robots_txt_first() {
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 200.0));
    let server = RecordingServer::start_with_clock(clock.clone()).await;
    let b = |path: &str| server.url("b.test", path).to_string();
    server.route(
        "a.test",
        "/robots.txt",
        Reply::text("User-agent: *\nAllow: /\n"),
    );
    server.route("a.test", "/to-secret", Reply::redirect(302, &b("/secret")));
    server.route("a.test", "/to-one", Reply::redirect(302, &b("/one")));
    server.route("a.test", "/to-two", Reply::redirect(307, &b("/two")));
    server.route(
        "b.test",
        "/robots.txt",
        Reply::text("User-agent: *\nDisallow: /secret\nCrawl-delay: 3\n"),
    );
    for path in ["/one", "/two", "/secret"] {
        server.route("b.test", path, Reply::html(format!("<p>{path}</p>")));
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    let schedule = schedule(
        dir.path(),
        &server,
        &[
            ("a.test", "/to-secret"),
            ("a.test", "/to-one"),
            ("a.test", "/to-two"),
        ],
        "host_rate = \"10/s\"\n",
    );
    run_once(&server, &schedule, &db, clock).await;

    let to_b = server.requests_to("b.test");
    let seen = paths(&to_b);
    assert_eq!(
        seen.first().map(String::as_str),
        Some("/robots.txt"),
        "the target's robots.txt is read before any page of it: {seen:?}"
    );
    assert_eq!(
        seen.iter().filter(|p| *p == "/robots.txt").count(),
        1,
        "{seen:?}"
    );
    assert!(seen.contains(&"/one".to_string()) && seen.contains(&"/two".to_string()));
    let disallowed = seen.iter().filter(|p| p.starts_with("/secret")).count();
    eprintln!(
        "cross-host redirect: {disallowed} Disallowed requests of {}",
        seen.len()
    );
    assert_eq!(disallowed, 0, "{seen:?}");
    // The target's Crawl-delay (3 s) holds on the target host, robots.txt request included.
    for gap in server.clock_gaps_ms("b.test") {
        assert!(
            gap >= 2_999,
            "requests to b.test {gap} ms apart (Crawl-delay 3 s): {seen:?}"
        );
    }
    let errors = errors(&db).await;
    assert!(
        errors.iter().any(|e| e.contains("b.test")
            && e.contains("/secret")
            && e.contains("Disallow: /secret")),
        "{errors:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_robots_txt_5xx_is_not_a_lasting_disallow() {
    let server = RecordingServer::start().await;
    // First read: allow; second: 503 (disallow everything for now); then allow again.
    server.handle("a.test", "/robots.txt", |request| match request.hit {
        1 => (axum::http::StatusCode::SERVICE_UNAVAILABLE, "busy").into_response(),
        _ => Reply::text("User-agent: *\nAllow: /\n").to_response(),
    });
    for path in ["/p1", "/p2"] {
        server.route("a.test", path, Reply::html(format!("<p>{path}</p>")));
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    let schedule = schedule(
        dir.path(),
        &server,
        &[("a.test", "/p1"), ("a.test", "/p2")],
        "",
    );
    // Three passes, days apart (robots.txt is kept a day, a 5xx an hour): allow, 503, allow.
    for day in [0, 5, 10] {
        let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS + day * DAY_MS, 200.0));
        run_once(&server, &schedule, &db, clock).await;
        if day == 5 {
            // The 503 was applied to the pages (they were due and not fetched) ...
            let store = Store::open(&db).await.unwrap();
            let p1 = store
                .url_row(server.url("a.test", "/p1").as_str())
                .await
                .unwrap()
                .expect("p1 stored");
            store.close().await;
            assert_eq!(p1.disallowed, 1, "the 503 pass did not refuse /p1: {p1:?}");
        }
    }

    let log = server.requests_to("a.test");
    let robots_at: Vec<usize> = log
        .iter()
        .enumerate()
        .filter(|(_, r)| r.path == "/robots.txt")
        .map(|(i, _)| i)
        .collect();
    assert!(
        robots_at.len() >= 3,
        "robots.txt read {} times",
        robots_at.len()
    );
    // ... no page was requested while the 503 held ...
    let during_503 = log[robots_at[1]..robots_at[2]]
        .iter()
        .filter(|r| r.path.starts_with("/p"))
        .count();
    eprintln!("robots 5xx then 200: {during_503} requests while disallowed");
    assert_eq!(during_503, 0, "{:?}", paths(&log));
    // ... and once robots.txt allowed again, both pages were fetched again.
    let after: Vec<String> = paths(&log[robots_at[2]..]);
    for page in ["/p1", "/p2"] {
        assert!(
            after.contains(&page.to_string()),
            "{page} not fetched again: {after:?}"
        );
    }
    let store = Store::open(&db).await.unwrap();
    let p1 = store
        .url_row(server.url("a.test", "/p1").as_str())
        .await
        .unwrap()
        .unwrap();
    store.close().await;
    assert_eq!(
        p1.disallowed, 0,
        "the last verdict is the current rules': {p1:?}"
    );
    // The 503 is recorded (a 4xx is not: see below).
    let errors = errors(&db).await;
    assert!(
        errors
            .iter()
            .any(|e| e.contains("/robots.txt") && e.contains("503")),
        "{errors:?}"
    );
}

/// A host with no robots.txt (404, the commonest answer) is no error: its pages are fetched
/// and nothing is recorded against it (a 5xx is, above: it disallows for now).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_robots_txt_allows_everything_and_is_no_error() {
    let server = RecordingServer::start().await;
    server.route(
        "a.test",
        "/robots.txt",
        Reply::status(404).body("not found"),
    );
    server.route("a.test", "/p1", Reply::html("<p>one</p>"));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    let schedule = schedule(dir.path(), &server, &[("a.test", "/p1")], "");
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 200.0));
    let summary = run_once(&server, &schedule, &db, clock).await;
    let seen = paths(&server.requests_to("a.test"));
    assert!(seen.contains(&"/p1".to_string()), "{seen:?}");
    let errors = errors(&db).await;
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(summary.errors, 0, "{summary:?}");
}

/// A site whose robots.txt could not be read at its first pass reads its sitemap once robots.txt
/// is tried again (an hour on), not at its next `rediscover` time: after one refused connection
/// at the first start, helper-87's site sent nothing for the 3.5 hours to its next rediscovery.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_whose_robots_txt_failed_reads_its_sitemap_when_robots_txt_is_tried_again() {
    // 20 virtual minutes a real second: the run below has four virtual hours (12 real
    // seconds) of room after the retry, however loaded the machine.
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 1_200.0));
    let server = RecordingServer::start_with_clock(clock.clone()).await;
    server.handle("a.test", "/robots.txt", |request| match request.hit {
        0 => (axum::http::StatusCode::SERVICE_UNAVAILABLE, "busy").into_response(),
        _ => Reply::text("User-agent: *\nAllow: /\n").to_response(),
    });
    let page = server.url("a.test", "/p1");
    server.route("a.test", "/sitemap.txt", Reply::text(format!("{page}\n")));
    server.route("a.test", "/p1", Reply::html("<p>one</p>"));
    let dir = tempfile::tempdir().unwrap();
    let sitemap = server.url("a.test", "/sitemap.txt");
    // The default `rediscover`, every six hours (at 00:00, 06:00, ... UTC: the run starts at
    // midnight, so the next is six hours on).
    let schedule = schedule(
        dir.path(),
        &server,
        &[],
        &format!("sitemaps = [\"{sitemap}\"]\n"),
    );
    let options = RunOptions {
        schedules: vec![schedule],
        db_path: dir.path().join("f.db"),
        once: false,
        clock: clock.clone(),
        resolve: server.resolve(&["a.test"]),
        policy: PolicyChoice::Learned,
        worker: Default::default(),
        run_lock: None,
    };
    let stop_clock = clock.clone();
    let stop = async move {
        while stop_clock.now_ms() < ORIGIN_MS + 5 * 3_600_000 {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    };
    refresher::run(options, stop)
        .await
        .expect("run until shutdown");
    let log = server.requests_to("a.test");
    let at = |path: &str| log.iter().find(|r| r.path == path).map(|r| r.clock_ms);
    let (Some(sitemap_ms), Some(page_ms)) = (at("/sitemap.txt"), at("/p1")) else {
        panic!("in five hours: {:?}", paths(&log));
    };
    assert!(sitemap_ms >= ORIGIN_MS + 3_600_000, "read before the retry");
    assert!(page_ms > sitemap_ms);
}
