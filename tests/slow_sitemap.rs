//! Discovery runs beside fetching, never in front of it: while one site's sitemap host drips its
//! sitemap for half a minute, another site's pages are fetched (seen from the server's log).

#[path = "support/recording_server.rs"]
mod recording_server;

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use freshet::clock::{SharedClock, SystemClock};
use freshet::refresher::{self, PolicyChoice, RunOptions};
use recording_server::{RecordingServer, Reply};

const SLOW: &str = "slow.test";
const FAST: &str = "fast.test";
/// How long the slow sitemap takes to send (real time): far longer than the fast site needs.
const DRIP_CHUNKS: usize = 150;
const DRIP_EVERY: Duration = Duration::from_millis(200);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_sitemap_host_does_not_delay_another_sites_pages() {
    let clock: SharedClock = Arc::new(SystemClock);
    let server = Arc::new(RecordingServer::start_with_clock(clock.clone()).await);
    let finished = Arc::new(AtomicBool::new(false));
    let slow_base = format!("http://{SLOW}:{}", server.addr.port());
    let done = finished.clone();
    server.handle(SLOW, "/sitemap.txt", move |_| {
        let (base, done) = (slow_base.clone(), done.clone());
        let stream = futures_util::stream::unfold(0usize, move |sent| {
            let (base, done) = (base.clone(), done.clone());
            async move {
                if sent == DRIP_CHUNKS {
                    done.store(true, Ordering::SeqCst);
                    return None;
                }
                tokio::time::sleep(DRIP_EVERY).await;
                let line = Bytes::from(format!("{base}/p{sent}\n"));
                Some((Ok::<_, Infallible>(line), sent + 1))
            }
        });
        Response::builder()
            .header("content-type", "text/plain")
            .body(Body::from_stream(stream))
            .unwrap()
    });
    let fast_base = format!("http://{FAST}:{}", server.addr.port());
    server.route(
        FAST,
        "/sitemap.txt",
        Reply::text(format!("{fast_base}/a\n{fast_base}/b\n{fast_base}/c\n")),
    );
    for path in ["/a", "/b", "/c"] {
        server.route(FAST, path, Reply::html(format!("<p>page {path}</p>")));
    }

    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for (name, host) in [("slow", SLOW), ("fast", FAST)] {
        text.push_str(&format!(
            "[[site]]\nname = \"{name}\"\nsitemaps = [\"{}\"]\nrequests_per_day = 100000\n\
             host_rate = \"10/s\"\nallow_networks = [\"127.0.0.0/8\"]\n",
            server.url(host, "/sitemap.txt")
        ));
    }
    std::fs::write(dir.path().join("sites.toml"), text).unwrap();

    // Stop once the fast site's pages were all requested, noting whether the slow sitemap had
    // finished by then (or after a minute, to fail rather than hang).
    let slow_done_first = Arc::new(AtomicBool::new(true));
    let shutdown = {
        let (server, finished, verdict) =
            (server.clone(), finished.clone(), slow_done_first.clone());
        async move {
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(60) {
                let paths: Vec<String> = server
                    .requests_to(FAST)
                    .into_iter()
                    .map(|r| r.path)
                    .collect();
                if ["/a", "/b", "/c"]
                    .iter()
                    .all(|p| paths.iter().any(|q| q == p))
                {
                    verdict.store(finished.load(Ordering::SeqCst), Ordering::SeqCst);
                    return;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    let options = RunOptions {
        schedules: vec![dir.path().to_path_buf()],
        db_path: dir.path().join("freshet.db"),
        once: false,
        clock,
        resolve: server.resolve(&[SLOW, FAST]),
        policy: PolicyChoice::Learned,
        worker: Default::default(),
        run_lock: None,
    };
    refresher::run(options, shutdown).await.expect("the run");

    let fast: Vec<String> = server
        .requests_to(FAST)
        .into_iter()
        .map(|r| r.path)
        .collect();
    for path in ["/a", "/b", "/c"] {
        assert!(
            fast.iter().any(|p| p == path),
            "{path} never fetched: {fast:?}"
        );
    }
    assert!(
        !slow_done_first.load(Ordering::SeqCst),
        "the fast site's pages waited for the slow sitemap"
    );
    assert!(
        server
            .requests_to(SLOW)
            .iter()
            .any(|r| r.path == "/sitemap.txt"),
        "the slow sitemap was asked for"
    );
}
