//! When a site's budget binds, its hosts take turns, as the server sees it: three hosts whose
//! new pages one discovery pass found (all due at its start), a budget of one request every
//! five minutes, and a host rate far above it. With each sitemap's pages due when it was read,
//! earliest due first served the first host's whole backlog before the second host's first
//! page (the tester's F5, second half).

#[path = "support/recording_server.rs"]
mod recording_server;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use freshet::clock::{SharedClock, VirtualClock};
use freshet::refresher::{self, PolicyChoice, RunOptions};
use recording_server::{RecordingServer, Reply};

const HOSTS: [&str; 3] = ["a.test", "b.test", "c.test"];
const PAGES_PER_HOST: usize = 20;
/// Page requests judged: half of all, so that no host can have run out of pages.
const JUDGED: usize = 30;
/// 2021-01-01T00:00:00Z: the virtual clock's origin.
const ORIGIN_MS: i64 = 1_609_459_200_000;

fn serve(server: &RecordingServer) {
    for host in HOSTS {
        let base = format!("http://{host}:{}", server.addr.port());
        server.route(
            host,
            "/robots.txt",
            Reply::text("User-agent: *\nAllow: /\n"),
        );
        let urls: String = (0..PAGES_PER_HOST)
            .map(|i| format!("<url><loc>{base}/p/{i}</loc></url>"))
            .collect();
        server.route(
            host,
            "/sitemap.xml",
            Reply::status(200)
                .header("content-type", "application/xml")
                .body(format!(
                    r#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>"#
                )),
        );
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hosts_take_turns_on_a_binding_budget_as_the_server_sees_it() {
    // 600 virtual seconds a real one: a request every five virtual minutes is half a real second.
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 600.0));
    let server = Arc::new(RecordingServer::start_with_clock(clock.clone()).await);
    serve(&server);
    let dir = tempfile::tempdir().unwrap();
    let sitemaps: Vec<String> = HOSTS
        .iter()
        .map(|h| format!("\"{}\"", server.url(h, "/sitemap.xml")))
        .collect();
    let schedule = dir.path().join("turns.toml");
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
"#,
            sitemaps = sitemaps.join(", ")
        ),
    )
    .unwrap();
    let page_requests = |server: &RecordingServer| -> Vec<String> {
        let mut requests: Vec<_> = server
            .requests()
            .into_iter()
            .filter(|r| r.path.starts_with("/p/"))
            .collect();
        requests.sort_by_key(|r| r.clock_ms);
        requests.into_iter().map(|r| r.host).collect()
    };
    let watched = Arc::clone(&server);
    let enough = async move {
        let started = Instant::now();
        while page_requests(&watched).len() < JUDGED && started.elapsed() < Duration::from_secs(300)
        {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    let options = RunOptions {
        schedules: vec![schedule],
        db_path: dir.path().join("freshet.db"),
        once: false,
        clock,
        resolve: server.resolve(&HOSTS),
        policy: PolicyChoice::Learned,
        worker: Default::default(),
    };
    refresher::run(options, enough).await.expect("the run");

    let order = page_requests(&server);
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
