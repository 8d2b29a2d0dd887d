//! When a site's budget binds, its hosts take turns, as the server sees it: three hosts whose
//! new pages one discovery pass found (all due at its start), a budget of one request every
//! five minutes, and a host rate far above it. With each sitemap's pages due when it was read,
//! earliest due first served the first host's whole backlog before the second host's first
//! page (the tester's F5, second half). The same after a pass cut short by a stop: the next
//! run's pass joins it, so the pages it finds are due with the first run's.

#[path = "support/recording_server.rs"]
mod recording_server;
#[path = "support/virtual_runs.rs"]
mod virtual_runs;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use freshet::clock::{SharedClock, VirtualClock};

use recording_server::{RecordingServer, Reply, drip_body};
use virtual_runs::{run_schedule_until, until};

const HOSTS: [&str; 3] = ["a.test", "b.test", "c.test"];
const PAGES_PER_HOST: usize = 20;
/// Page requests judged: half of all, so that no host can have run out of pages.
const JUDGED: usize = 30;
/// 2021-01-01T00:00:00Z: the virtual clock's origin.
const ORIGIN_MS: i64 = 1_609_459_200_000;

/// The sitemap of the host at `base`: its first `pages` pages.
fn sitemap(base: &str, pages: usize) -> Reply {
    let urls: String = (0..pages)
        .map(|i| format!("<url><loc>{base}/p/{i}</loc></url>"))
        .collect();
    Reply::status(200)
        .header("content-type", "application/xml")
        .body(format!(
            r#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>"#
        ))
}

fn serve(server: &RecordingServer) {
    for host in HOSTS {
        let base = format!("http://{host}:{}", server.addr.port());
        server.route(
            host,
            "/robots.txt",
            Reply::text("User-agent: *\nAllow: /\n"),
        );
        server.route(host, "/sitemap.xml", sitemap(&base, PAGES_PER_HOST));
        for i in 0..PAGES_PER_HOST {
            server.route(
                host,
                &format!("/p/{i}"),
                Reply::html(format!(
                    "<html><body><p>page {i} of {host}</p></body></html>"
                )),
            );
        }
    }
}

/// The schedule of the one site whose sitemaps are the three hosts' (written in `dir`), with
/// `more` (TOML lines) added to it.
fn write_schedule(server: &RecordingServer, dir: &Path, more: &str) -> std::path::PathBuf {
    let sitemaps: Vec<String> = HOSTS
        .iter()
        .map(|h| format!("\"{}\"", server.url(h, "/sitemap.xml")))
        .collect();
    let schedule = dir.join("turns.toml");
    std::fs::write(
        &schedule,
        format!(
            r#"
[[site]]
name = "turns"
allow_networks = ["127.0.0.0/8"]
sitemaps = [{sitemaps}]
requests_per_day = 288
host_rate = "1/s"
{more}
"#,
            sitemaps = sitemaps.join(", ")
        ),
    )
    .unwrap();
    schedule
}

/// The hosts of the page requests the server has seen, in the clock's order.
fn page_requests(server: &RecordingServer) -> Vec<String> {
    let mut requests: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.path.starts_with("/p/"))
        .collect();
    requests.sort_by_key(|r| r.clock_ms);
    requests.into_iter().map(|r| r.host).collect()
}

/// Runs the refresher on `dir`'s database and the three hosts' site until `enough` ends.
async fn run_until(
    server: &Arc<RecordingServer>,
    clock: &SharedClock,
    dir: &Path,
    enough: impl Future<Output = ()> + Send + 'static,
) {
    let schedule = write_schedule(server, dir, "");
    run_schedule_until(server, clock, dir, schedule, &HOSTS, enough).await;
}

/// Asserts that each host had 7 to 13 of the first [`JUDGED`] of `order`.
fn assert_turns(order: &[String]) {
    assert!(order.len() >= JUDGED, "only {} page requests", order.len());
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for host in &order[..JUDGED] {
        *counts.entry(host.as_str()).or_default() += 1;
    }
    // In turns each host has 10 of the first 30; earliest due first gave one host 20.
    for host in HOSTS {
        let n = counts.get(host).copied().unwrap_or(0);
        assert!(
            (7..=13).contains(&n),
            "{host} had {n} of the first {JUDGED} page requests: {:?}",
            &order[..JUDGED]
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hosts_take_turns_on_a_binding_budget_as_the_server_sees_it() {
    // 600 virtual seconds a real one: a request every five virtual minutes is half a real second.
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 600.0));
    let server = Arc::new(RecordingServer::start_with_clock(clock.clone()).await);
    serve(&server);
    let dir = tempfile::tempdir().unwrap();
    let watched = Arc::clone(&server);
    let enough = until(move || std::future::ready(page_requests(&watched).len() >= JUDGED));
    run_until(&server, &clock, dir.path(), enough).await;
    assert_turns(&page_requests(&server));
}

/// A stop in the middle of the first pass (the first two hosts' pages written, the last
/// host's sitemap still dripping in), then a run whose pass reads it whole: the last host's
/// pages are due at the first pass's start with the others, not at the second's after them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_cut_short_is_joined_by_the_next_run_and_its_hosts_keep_turns() {
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 600.0));
    let server = Arc::new(RecordingServer::start_with_clock(clock.clone()).await);
    serve(&server);
    let last = HOSTS[2];
    server.handle(last, "/sitemap.xml", |_| {
        let start = Bytes::from_static(
            br#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">"#,
        );
        axum::response::Response::builder()
            .header("content-type", "application/xml")
            .body(drip_body(start, Duration::from_secs(1), None))
            .unwrap()
    });
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("freshet.db");
    // Rediscovered daily: the pass stays joinable for a day (four real minutes here), not the
    // default six hours' 36 real seconds, which a loaded machine could outlast between the runs.
    let schedule = write_schedule(&server, dir.path(), "rediscover = \"0 0 0 * * *\"");
    // Stopped once the last sitemap is coming in and the other two hosts' pages are written.
    let watched = Arc::clone(&server);
    let enough = until(move || {
        let (watched, db) = (Arc::clone(&watched), db.clone());
        async move {
            let dripping = watched
                .requests_to(last)
                .iter()
                .any(|r| r.path == "/sitemap.xml");
            dripping && pages_written(&db).await >= 2 * PAGES_PER_HOST
        }
    });
    run_schedule_until(
        &server,
        &clock,
        dir.path(),
        schedule.clone(),
        &HOSTS,
        enough,
    )
    .await;
    let before = page_requests(&server).len();
    let base = format!("http://{last}:{}", server.addr.port());
    server.route(last, "/sitemap.xml", sitemap(&base, PAGES_PER_HOST));
    // Judged from the last host's first page: the others' pages, known from the first run, go
    // while this run's pass reads the sitemaps again, however long a loaded machine makes that.
    let from_last = move |server: &RecordingServer| {
        let order = page_requests(server);
        match order[before..].iter().position(|h| h == last) {
            Some(at) => order[before + at..].to_vec(),
            None => Vec::new(),
        }
    };
    let watched = Arc::clone(&server);
    let enough = until(move || std::future::ready(from_last(&watched).len() >= JUDGED));
    run_schedule_until(
        &server,
        &clock,
        dir.path(),
        schedule.clone(),
        &HOSTS,
        enough,
    )
    .await;
    let judged = from_last(&server);
    assert!(
        judged.len() >= JUDGED,
        "{last} had {} page requests after its first in the second run: {:?}",
        judged.len(),
        &page_requests(&server)[before..]
    );
    assert_turns(&judged);
}

/// The pages the database at `db` knows (0 before it exists).
async fn pages_written(db: &Path) -> usize {
    use sqlx::{ConnectOptions, Connection};
    let Ok(mut conn) = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(db)
        .read_only(true)
        .connect()
        .await
    else {
        return 0;
    };
    let count: Result<i64, _> = sqlx::query_scalar("SELECT count(*) FROM urls WHERE kind = 'page'")
        .fetch_one(&mut conn)
        .await;
    let _ = conn.close().await;
    count.map_or(0, |n| n as usize)
}

/// A feed the schedule names is registered when the first pass starts, due with the pages the
/// pass finds: on a binding budget it is read in its host's turn, not after the 20 pages of
/// its host and the 40 of the others (it was registered when the pass ended).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_feed_is_read_in_its_hosts_turn_on_a_binding_budget() {
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 600.0));
    let server = Arc::new(RecordingServer::start_with_clock(clock.clone()).await);
    serve(&server);
    let feed = server.url(HOSTS[0], "/feed.xml");
    server.route(
        HOSTS[0],
        "/feed.xml",
        Reply::status(200)
            .header("content-type", "application/rss+xml")
            .body(r#"<?xml version="1.0"?><rss version="2.0"><channel><title>t</title></channel></rss>"#),
    );
    let dir = tempfile::tempdir().unwrap();
    let schedule = write_schedule(&server, dir.path(), &format!("feeds = [\"{feed}\"]"));
    let read = |server: &RecordingServer| {
        server
            .requests_to(HOSTS[0])
            .iter()
            .any(|r| r.path == "/feed.xml")
    };
    let watched = Arc::clone(&server);
    let enough = until(move || {
        let done = read(&watched) || page_requests(&watched).len() >= 3 * PAGES_PER_HOST;
        std::future::ready(done)
    });
    run_schedule_until(&server, &clock, dir.path(), schedule, &HOSTS, enough).await;
    let mut order: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.path.starts_with("/p/") || r.path == "/feed.xml")
        .collect();
    order.sort_by_key(|r| r.clock_ms);
    let at = order.iter().position(|r| r.path == "/feed.xml");
    let paths: Vec<String> = order
        .iter()
        .map(|r| format!("{}{}", r.host, r.path))
        .collect();
    // In turns: among the first few requests to its host (3 hosts: the first ten in all).
    assert!(
        at.is_some_and(|at| at < 10),
        "the feed was read at {at:?} of {paths:?}"
    );
}
