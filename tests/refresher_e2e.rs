//! The refresher end to end against a recording server on 127.0.0.1: discovery from robots.txt,
//! a sitemap index and a feed; politeness, robots and conditional requests checked from the
//! server's side; bad input recorded as errors while the rest goes on.

#[path = "support/recording_server.rs"]
mod recording_server;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::response::IntoResponse;
use freshet::clock::{SharedClock, VirtualClock};
use freshet::refresher::{self, PolicyChoice, RunOptions};
use freshet::store::Store;
use recording_server::{RecordingServer, Reply};

const HOST: &str = "news.test";
const DOWN: &str = "down.test";
/// 2021-01-01T00:00:00Z: the virtual clock's origin.
const ORIGIN_MS: i64 = 1_609_459_200_000;

fn schedule(server: &RecordingServer, dir: &Path) -> std::path::PathBuf {
    let text = format!(
        r#"
[[site]]
name = "news"
allow_networks = ["127.0.0.0/8"]
feeds = ["{feed}"]
seeds = ["{down}"]
requests_per_day = 2000
host_rate = "1/s"
rediscover = "0 0 */6 * * *"
exclude = ['/excluded/']
"#,
        feed = server.url(HOST, "/feed.xml"),
        down = server.url(DOWN, "/"),
    );
    let path = dir.join("news.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// The site: robots.txt with a Disallow, a Crawl-delay of 2 s and a Sitemap line; an index ->
/// urlset; a feed; pages with ETags answering 304; a 500, a redirect loop, a cross-host URL.
fn serve_site(server: &RecordingServer, b_version: Arc<AtomicUsize>) {
    let base = format!("http://{HOST}:{}", server.addr.port());
    server.route(
        HOST,
        "/robots.txt",
        Reply::text(format!(
            "User-agent: *\nDisallow: /private/\nCrawl-delay: 2\nSitemap: {base}/sitemap.xml\n"
        )),
    );
    server.route(
        HOST,
        "/sitemap.xml",
        Reply::status(200).header("content-type", "application/xml").body(format!(
            r#"<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>{base}/pages.xml</loc></sitemap></sitemapindex>"#
        )),
    );
    server.route(
        HOST,
        "/pages.xml",
        Reply::status(200)
            .header("content-type", "application/xml")
            .body(format!(
                r#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>{base}/a</loc><changefreq>daily</changefreq><priority>0.8</priority></url>
<url><loc>{base}/b</loc><lastmod>2020-12-01</lastmod></url>
<url><loc>{base}/private/secret</loc></url>
<url><loc>{base}/excluded/x</loc></url>
<url><loc>{base}/broken</loc></url>
<url><loc>{base}/loop</loc></url>
<url><loc>http://elsewhere.test/stolen</loc></url>
</urlset>"#
            )),
    );
    server.route(
        HOST,
        "/feed.xml",
        Reply::status(200)
            .header("content-type", "application/rss+xml")
            .body(format!(
                r#"<?xml version="1.0"?><rss version="2.0"><channel><title>News</title><ttl>60</ttl>
<item><title>A</title><link>{base}/a</link><pubDate>Thu, 31 Dec 2020 12:00:00 GMT</pubDate></item>
<item><title>C</title><link>{base}/c</link><pubDate>Thu, 31 Dec 2020 18:00:00 GMT</pubDate></item>
<item><title>A, dated ahead</title><link>{base}/a</link><pubDate>Tue, 01 Jan 2030 00:00:00 GMT</pubDate></item>
</channel></rss>"#
            )),
    );
    for path in ["/a", "/c"] {
        let body = format!("<html><body><h1>{path}</h1><p>Stable text.</p></body></html>");
        server.handle(HOST, path, move |request| {
            if request.header("if-none-match") == Some("\"v1\"") {
                return Reply::status(304).header("etag", "\"v1\"").to_response();
            }
            Reply::html(body.clone())
                .header("etag", "\"v1\"")
                .to_response()
        });
    }
    server.handle(HOST, "/b", move |request| {
        let version = b_version.load(Ordering::SeqCst);
        let etag = format!("\"b{version}\"");
        if request.header("if-none-match") == Some(etag.as_str()) {
            return Reply::status(304).header("etag", &etag).to_response();
        }
        Reply::html(format!(
            "<html><body><p>version {version}</p></body></html>"
        ))
        .header("etag", &etag)
        .to_response()
    });
    server.route(HOST, "/private/secret", Reply::html("secret"));
    server.route(HOST, "/broken", Reply::status(500));
    server.route(HOST, "/loop", Reply::redirect(302, "/loop"));
    server.handle(DOWN, "/robots.txt", |_| {
        (axum::http::StatusCode::SERVICE_UNAVAILABLE, "busy").into_response()
    });
}

fn options(
    schedule: std::path::PathBuf,
    db: std::path::PathBuf,
    clock: SharedClock,
    server: &RecordingServer,
    once: bool,
) -> RunOptions {
    RunOptions {
        schedules: vec![schedule],
        db_path: db,
        once,
        clock,
        resolve: server.resolve(&[HOST, DOWN, "elsewhere.test"]),
        policy: PolicyChoice::Learned,
        worker: Default::default(),
        run_lock: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_pass_discovers_fetches_politely_and_records_errors() {
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 200.0));
    let server = RecordingServer::start_with_clock(clock.clone()).await;
    serve_site(&server, Arc::new(AtomicUsize::new(1)));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("freshet.db");
    let summary = refresher::run(
        options(
            schedule(&server, dir.path()),
            db.clone(),
            clock.clone(),
            &server,
            true,
        ),
        std::future::pending(),
    )
    .await
    .expect("one pass");

    let requests = server.requests_to(HOST);
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    // Discovery from robots.txt Sitemap: line, the index, the child and the feed.
    for expected in [
        "/robots.txt",
        "/sitemap.xml",
        "/pages.xml",
        "/feed.xml",
        "/a",
        "/b",
        "/c",
    ] {
        assert!(
            paths.contains(&expected),
            "{expected} not requested: {paths:?}"
        );
    }
    // robots.txt Disallow is never fetched; include / exclude hold; robots.txt read once.
    assert!(!paths.contains(&"/private/secret"));
    assert!(!paths.contains(&"/excluded/x"));
    assert_eq!(paths.iter().filter(|p| **p == "/robots.txt").count(), 1);
    // The cross-host URL of the sitemap is refused, and a host whose robots.txt answers 503 is
    // disallowed entirely.
    assert!(server.requests_to("elsewhere.test").is_empty());
    let down: Vec<String> = server
        .requests_to(DOWN)
        .iter()
        .map(|r| r.path.clone())
        .collect();
    assert_eq!(down, vec!["/robots.txt".to_string()]);
    // Crawl-delay 2 s beats host_rate 1/s: no two requests to the host closer than 2 s of clock.
    for gap in server.clock_gaps_ms(HOST) {
        assert!(gap >= 1_999, "requests {gap} ms apart (limit 2000)");
    }
    assert!(summary.checks >= 5, "{summary:?}");

    let store = Store::open(&db).await.unwrap();
    let rows = store.url_status(Some("news")).await.unwrap();
    let row = |suffix: &str| {
        rows.iter()
            .find(|r| r.url.ends_with(suffix))
            .unwrap_or_else(|| panic!("{suffix} missing"))
    };
    assert_eq!(row("/a").checks, 1);
    assert_eq!(row("/a").last_status, Some(200));
    assert_eq!(row("/broken").last_status, Some(500));
    assert!(
        row("/loop")
            .last_error
            .as_deref()
            .unwrap_or("")
            .contains("redirect"),
        "{:?}",
        row("/loop").last_error
    );
    let errors = store.recent_errors(100).await.unwrap();
    let mentions = |needle: &str| {
        errors.iter().any(|(_, _, url, msg)| {
            url.as_deref().unwrap_or("").contains(needle) || msg.contains(needle)
        })
    };
    assert!(mentions("/broken"), "{errors:?}");
    // A date after the read is said once a read, and not taken for a change (below).
    assert!(
        mentions("entries dated in the future, their dates ignored: 1 (the first:"),
        "{errors:?}"
    );
    assert!(
        mentions("elsewhere.test"),
        "cross-host refusal not recorded: {errors:?}"
    );
    // What a feed read says is filed under the feed, not under the request.
    for (_, scope, _, message) in &errors {
        if message.contains("dated in the future") || message.contains("feed entry refused") {
            assert_eq!(scope, "feed", "{message}");
        }
    }
    // Feed entries are exact change events.
    let a = store
        .url_row(server.url(HOST, "/a").as_str())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(store.change_events_for(a.id).await.unwrap().len(), 1);
    // The feed's `ttl` (an hour) is its floor.
    let feed = store
        .url_row(server.url(HOST, "/feed.xml").as_str())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(feed.min_interval_ms, Some(3_600_000));
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continuous_run_revisits_conditionally_and_sees_changes() {
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 3_000.0));
    let server = RecordingServer::start_with_clock(clock.clone()).await;
    let b_version = Arc::new(AtomicUsize::new(1));
    serve_site(&server, b_version.clone());
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("freshet.db");
    let opts = options(
        schedule(&server, dir.path()),
        db.clone(),
        clock.clone(),
        &server,
        false,
    );
    // /b changes after it has been fetched, each version at least once, twice; the run
    // stops once the server has seen that and /a checked three times. Progress is read from the
    // server's log, not from real time, so a loaded machine only makes the test slower.
    let b_path_hits = |server: &RecordingServer| {
        server
            .requests_to(HOST)
            .iter()
            .filter(|r| r.path == "/b")
            .count()
    };
    let stop = async {
        let started = std::time::Instant::now();
        let mut fetched_at_version = 0;
        loop {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let hits = b_path_hits(&server);
            let version = b_version.load(Ordering::SeqCst);
            if version < 3 && hits > fetched_at_version {
                // This version was seen: change the page.
                fetched_at_version = hits;
                b_version.fetch_add(1, Ordering::SeqCst);
            }
            let a_hits = server
                .requests_to(HOST)
                .iter()
                .filter(|r| r.path == "/a")
                .count();
            let done = version >= 3 && hits > fetched_at_version && a_hits >= 3;
            if done || started.elapsed() > Duration::from_secs(120) {
                return;
            }
        }
    };
    let summary = refresher::run(opts, stop)
        .await
        .expect("run until shutdown");
    assert!(summary.checks > 6, "{summary:?}");

    let to_a: Vec<_> = server
        .requests_to(HOST)
        .into_iter()
        .filter(|r| r.path == "/a")
        .collect();
    assert!(to_a.len() >= 2, "/a checked {} times", to_a.len());
    assert_eq!(
        to_a[0].header("if-none-match"),
        None,
        "first request is unconditional"
    );
    // Later requests are conditional, except an occasional audit of the host's 304s: an
    // unconditional GET right after a conditional one.
    for (i, r) in to_a.iter().enumerate().skip(1) {
        let audit = to_a[i - 1].header("if-none-match").is_some();
        assert!(
            r.header("if-none-match") == Some("\"v1\"") || audit,
            "request {i} to /a is unconditional and no audit"
        );
    }
    for gap in server.clock_gaps_ms(HOST) {
        assert!(gap >= 1_999, "requests {gap} ms apart (limit 2000)");
    }

    let store = Store::open(&db).await.unwrap();
    let a = store
        .url_row(server.url(HOST, "/a").as_str())
        .await
        .unwrap()
        .unwrap();
    let history = store.observations_for(a.id, 100).await.unwrap();
    assert!(history[1..].iter().all(|o| o.changed == Some(0)
        && (o.status == Some(304) || o.change_evidence.as_deref() == Some("audit"))));
    let b = store
        .url_row(server.url(HOST, "/b").as_str())
        .await
        .unwrap()
        .unwrap();
    assert!(b.changes >= 1, "changes of /b not seen: {b:?}");
    assert!(b.rate_per_day.is_some() && b.next_due_ms.is_some());
    // What the host's validators taught (ETags that matched the content) is kept for the next run.
    let host = store
        .host(&format!("http://{HOST}:{}", server.addr.port()))
        .await
        .unwrap()
        .unwrap();
    let trust: serde_json::Value =
        serde_json::from_str(host.trust_json.as_deref().expect("trust saved")).unwrap();
    assert!(trust["etag_agree"].as_u64().unwrap() >= 1, "{trust}");
    // Everything committed survives the shutdown.
    assert!(store.observation_count().await.unwrap() as u64 >= summary.checks);
    assert!(clock.now_ms() > ORIGIN_MS);
    store.close().await;
}
