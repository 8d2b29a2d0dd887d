//! Two sites on one host, judged from the server's log: a site out of credit holds back only its
//! own URLs. The refresher (`freshet run`'s scheduler, fetcher and store) reads two schedules'
//! sites whose pages live on the same server: `rich` may make a request every 30 s, `poor` one an
//! hour. Every `poor` page waits for its site's credit from the start (never checked, so due
//! since it was found); a frontier that kept one queue per host would put those pages at the
//! head and hold the host for `rich` too, until `poor`'s next credit an hour later. The server
//! must instead see `rich`'s pages checked at its own pace, `poor` within its budget, and no two
//! requests closer than the host's limit.
//!
//! No wall-clock assertion: the run lasts four virtual hours however long that takes, and the
//! floor on `rich`'s requests is a fifth of its budget (a host held by `poor` gives it about
//! five).

#[path = "support/recording_server.rs"]
mod recording_server;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use freshet::clock::{SharedClock, VirtualClock};
use freshet::refresher::{self, PolicyChoice, RunOptions};
use recording_server::{RecordingServer, Reply};

const HOST: &str = "shared.test";
/// 2021-01-01T00:00:00Z: the virtual clock's origin.
const ORIGIN_MS: i64 = 1_609_459_200_000;
const PAGES: usize = 10;
const RICH_PER_DAY: f64 = 2_880.0;
const POOR_PER_DAY: f64 = 24.0;
/// The host's limit, both sites': one request every 5 s.
const HOST_GAP_MS: i64 = 5_000;
const RUN_MS: i64 = 4 * 3_600_000;

/// One `[[site]]` of the schedule: `name`'s sitemap and pages on the shared host.
fn site(server: &RecordingServer, name: &str, per_day: f64, host_rate: &str) -> String {
    format!(
        r#"
[[site]]
name = "{name}"
allow_networks = ["127.0.0.0/8"]
sitemaps = ["{sitemap}"]
include = ['^http://{HOST}:{port}/{name}']
requests_per_day = {per_day}
host_rate = "{host_rate}"
"#,
        sitemap = server.url(HOST, &format!("/{name}.xml")),
        port = server.addr.port(),
    )
}

/// A refresher run on `clock` of `schedule` into `dir`'s database, the host resolved to `server`.
fn options(
    server: &RecordingServer,
    clock: &SharedClock,
    schedule: PathBuf,
    dir: &Path,
) -> RunOptions {
    RunOptions {
        schedules: vec![schedule],
        db_path: dir.join("freshet.db"),
        once: false,
        clock: clock.clone(),
        resolve: server.resolve(&[HOST]),
        policy: PolicyChoice::Learned,
        worker: Default::default(),
        run_lock: None,
    }
}

fn schedule(server: &RecordingServer, dir: &Path) -> PathBuf {
    let path = dir.join("sites.toml");
    std::fs::write(
        &path,
        site(server, "rich", RICH_PER_DAY, "1/5s") + &site(server, "poor", POOR_PER_DAY, "1/5s"),
    )
    .unwrap();
    path
}

/// robots.txt allowing everything; per site a sitemap of [`PAGES`] pages, each stable with an
/// ETag (so revisits are cheap 304s).
fn serve(server: &RecordingServer) {
    server.route(
        HOST,
        "/robots.txt",
        Reply::text("User-agent: *\nAllow: /\n"),
    );
    for name in ["rich", "poor"] {
        let urls: String = (0..PAGES)
            .map(|i| {
                format!(
                    "<url><loc>{}</loc></url>",
                    server.url(HOST, &format!("/{name}/{i}"))
                )
            })
            .collect();
        server.route(
            HOST,
            &format!("/{name}.xml"),
            Reply::status(200)
                .header("content-type", "application/xml")
                .body(format!(
                    r#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>"#
                )),
        );
        for i in 0..PAGES {
            let body = format!("<html><body><h1>{name} {i}</h1><p>Stable.</p></body></html>");
            server.handle(HOST, &format!("/{name}/{i}"), move |request| {
                if request.header("if-none-match") == Some("\"v1\"") {
                    return Reply::status(304).header("etag", "\"v1\"").to_response();
                }
                Reply::html(body.clone())
                    .header("etag", "\"v1\"")
                    .to_response()
            });
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_out_of_credit_does_not_hold_a_shared_host_for_the_other() {
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 1_200.0));
    let server = RecordingServer::start_with_clock(clock.clone()).await;
    serve(&server);
    let dir = tempfile::tempdir().unwrap();
    let options = options(&server, &clock, schedule(&server, dir.path()), dir.path());
    let stop_clock = clock.clone();
    let stop = async move {
        while stop_clock.now_ms() < ORIGIN_MS + RUN_MS {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    refresher::run(options, stop)
        .await
        .expect("run until shutdown");

    let log = server.requests_to(HOST);
    let elapsed_days =
        (log.last().map_or(ORIGIN_MS, |r| r.clock_ms) - ORIGIN_MS) as f64 / 86_400_000.0;
    let count = |prefix: &str| log.iter().filter(|r| r.path.starts_with(prefix)).count();
    let (rich, poor) = (count("/rich"), count("/poor"));
    let rich_budget = RICH_PER_DAY * RUN_MS as f64 / 86_400_000.0;
    eprintln!("over {elapsed_days:.3} virtual days: rich {rich} requests, poor {poor}");
    assert!(
        rich as f64 >= 0.2 * rich_budget,
        "rich made {rich} requests in four virtual hours against a budget of {rich_budget:.0}: \
         held back by poor's pages ({poor} requests)"
    );
    // Poor's budget over the run, its bucket's one credit, and robots.txt if it paid for it.
    let poor_ceiling = POOR_PER_DAY * elapsed_days + 2.0;
    assert!(
        poor as f64 <= poor_ceiling,
        "poor made {poor} requests against at most {poor_ceiling:.1}"
    );
    assert!(poor >= 1, "poor never read its sitemap");
    for gap in server.clock_gaps_ms(HOST) {
        assert!(
            gap >= HOST_GAP_MS - 1,
            "requests {gap} ms apart (limit {HOST_GAP_MS})"
        );
    }
}

/// Across a restart, a host two sites share keeps the stricter site's rate from the first
/// request (helper-87: after a restart with no discovery due, the host went at the laxer
/// site's 1 s until a URL of the stricter site came due, so its server saw requests 1 s apart
/// under a 3 s limit). `lax` has many cheap pages due often; `strict` few, due rarely: after a
/// pause, the second run starts with a burst of `lax`'s pages only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_keeps_the_stricter_sites_rate_on_a_shared_host() {
    const STRICT_GAP_MS: i64 = 3_000;
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 600.0));
    let server = RecordingServer::start_with_clock(clock.clone()).await;
    serve(&server);
    let dir = tempfile::tempdir().unwrap();
    // `serve` names its two sites' paths rich and poor.
    let schedule = dir.path().join("sites.toml");
    std::fs::write(
        &schedule,
        site(&server, "rich", 2_880.0, "1/s") + &site(&server, "poor", 24.0, "1/3s"),
    )
    .unwrap();
    let life = |until_ms: i64| {
        let options = options(&server, &clock, schedule.clone(), dir.path());
        let stop_clock = clock.clone();
        let stop = async move {
            while stop_clock.now_ms() < until_ms {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        refresher::run(options, stop)
    };
    life(ORIGIN_MS + 20 * 60_000).await.expect("first run");
    // Half an hour later (rich's pages come due every few minutes; poor's in hours).
    let restart_ms = ORIGIN_MS + 50 * 60_000;
    while clock.now_ms() < restart_ms {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    life(restart_ms + 20 * 60_000).await.expect("second run");

    let log = server.requests_to(HOST);
    let second: Vec<i64> = log
        .iter()
        .map(|r| r.clock_ms)
        .filter(|&at| at >= restart_ms)
        .collect();
    let rich = log
        .iter()
        .filter(|r| r.clock_ms >= restart_ms && r.path.starts_with("/rich"))
        .count();
    assert!(rich >= 3, "the second run checked {rich} of rich's pages");
    for pair in second.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(
            gap >= STRICT_GAP_MS - 1,
            "requests {gap} ms apart after the restart (limit {STRICT_GAP_MS}): {second:?}"
        );
    }
}
