//! The built binary against loopback servers: `run --once` does not wait out a host under
//! `Retry-After: 3600` (and a restart does not contact it either), and SIGTERM ends `run` with
//! exit 0 promptly in every state: the first discovery pass, a task waiting on a host's
//! Crawl-delay beside a host in back-off, a host closed for an hour by `Retry-After`, and a check
//! in flight. Bounds are generous (a loaded
//! machine must not fail them); the measured times are printed (`--nocapture`).

#[path = "support/freshet_bin.rs"]
mod freshet_bin;
#[path = "support/recording_server.rs"]
mod recording_server;

use std::time::{Duration, Instant};

use bytes::Bytes;
use freshet_bin::{Freshet, wait_for, write_schedule};
use recording_server::{RecordingServer, Reply, drip_body};

const HOST: &str = "127.0.0.1";
/// How long a shutdown may take before the test fails (the promise is 2 s; this is for a
/// loaded machine).
const EXIT_BOUND: Duration = Duration::from_secs(10);

fn base(server: &RecordingServer) -> String {
    format!("http://{HOST}:{}", server.addr.port())
}

fn site(name: &str, server: &RecordingServer, rate: &str) -> String {
    format!(
        "[[site]]\nname = \"{name}\"\nsitemaps = [\"{}/sitemap.txt\"]\nhost_rate = \"{rate}\"\nallow_networks = [\"127.0.0.0/8\"]\n",
        base(server)
    )
}

/// A reply whose body trickles one byte a second for a minute.
fn slow_reply() -> axum::response::Response {
    let mut response = axum::response::Response::new(drip_body(
        Bytes::from_static(b"\n"),
        Duration::from_secs(1),
        Some(60),
    ));
    response.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("text/plain"),
    );
    response
}

/// Sends SIGTERM once `ready` holds, and checks the run ends with exit 0 within the bound;
/// gives its stderr.
async fn terminate_when(state: &str, run: Freshet, ready: impl FnMut() -> bool) -> String {
    assert!(
        wait_for(Duration::from_secs(30), ready).await,
        "freshet never reached the state: {state}"
    );
    let sent = run.terminate();
    let (status, stderr) = run
        .finish(EXIT_BOUND)
        .await
        .unwrap_or_else(|| panic!("{state}: still running {EXIT_BOUND:?} after SIGTERM"));
    let took = sent.elapsed();
    eprintln!("SIGTERM {state}: exit {:?} after {took:?}", status.code());
    assert_eq!(status.code(), Some(0), "{state}: {stderr}");
    stderr
}

/// A host whose sitemap lists three pages, each answering `429 Retry-After: 3600`.
async fn closed_for_an_hour() -> RecordingServer {
    let server = RecordingServer::start().await;
    let b = base(&server);
    server.route(HOST, "/robots.txt", Reply::status(404));
    server.route(
        HOST,
        "/sitemap.txt",
        Reply::text(format!("{b}/a\n{b}/b\n{b}/c\n")),
    );
    for path in ["/a", "/b", "/c"] {
        server.route(HOST, path, Reply::status(429).header("retry-after", "3600"));
    }
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn once_skips_a_host_under_retry_after_and_a_restart_does_not_contact_it() {
    let server = closed_for_an_hour().await;
    let dir = tempfile::tempdir().unwrap();
    let schedule = write_schedule(dir.path(), &site("busy", &server, "20/s"));
    let db = dir.path().join("f.db");

    for pass in 1..=2 {
        let before = server.requests().len();
        let started = Instant::now();
        let run = Freshet::run(&schedule, &db, &["--once"]);
        let (status, stderr) = run
            .finish(Duration::from_secs(60))
            .await
            .expect("--once ended");
        eprintln!(
            "--once pass {pass} under Retry-After: 3600 took {:?}",
            started.elapsed()
        );
        assert!(status.success(), "{stderr}");
        assert!(
            stderr.contains(&format!("skipped {HOST}:{}", server.addr.port())),
            "the skipped host is named: {stderr}"
        );
        let requests = server.requests();
        let pages: Vec<_> = requests[before..]
            .iter()
            .filter(|r| ["/a", "/b", "/c"].contains(&r.path.as_str()))
            .collect();
        if pass == 1 {
            // One page got the 429; the whole host closed, so the other two were not asked.
            assert_eq!(pages.len(), 1, "{requests:?}");
            let first_429 = requests.iter().position(|r| r.path == pages[0].path);
            assert_eq!(first_429, Some(requests.len() - 1), "nothing after the 429");
        } else {
            // The Retry-After was persisted: the restart leaves the host alone entirely.
            assert!(requests.len() == before, "contacted again: {requests:?}");
        }
    }
}

/// The issue's own case: the daemon (not `--once`) with every page of a host answering
/// `429 Retry-After: 3600`. SIGTERM once the first 429 is in: exit 0 at once, and the host heard
/// nothing after its 429.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_while_a_host_is_closed_for_an_hour_exits_cleanly() {
    let server = closed_for_an_hour().await;
    let dir = tempfile::tempdir().unwrap();
    let schedule = write_schedule(dir.path(), &site("closed", &server, "20/s"));
    let run = Freshet::run(&schedule, &dir.path().join("f.db"), &[]);
    let is_page = |path: &str| ["/a", "/b", "/c"].contains(&path);
    let pages_asked = || {
        server
            .requests()
            .iter()
            .filter(|r| is_page(&r.path))
            .count()
    };
    assert!(
        wait_for(Duration::from_secs(30), || pages_asked() > 0).await,
        "no page was asked"
    );
    // At 20/s the next two pages would follow within 0.1 s if the 429 had not closed the host:
    // the state is reached when a second has passed without them.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(pages_asked(), 1, "{:?}", server.requests());
    terminate_when("while its one host is closed for an hour", run, || true).await;
    let requests = server.requests();
    let pages = requests.iter().filter(|r| is_page(&r.path)).count();
    assert_eq!(
        pages, 1,
        "the host was contacted after its 429: {requests:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_during_the_first_discovery_pass_exits_cleanly() {
    let server = RecordingServer::start().await;
    server.route(HOST, "/robots.txt", Reply::status(404));
    server.handle(HOST, "/sitemap.txt", |_| slow_reply());
    let dir = tempfile::tempdir().unwrap();
    let schedule = write_schedule(dir.path(), &site("slow", &server, "20/s"));
    let run = Freshet::run(&schedule, &dir.path().join("f.db"), &[]);
    terminate_when("during the first discovery pass", run, || {
        server.requests().iter().any(|r| r.path == "/sitemap.txt")
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_while_waiting_on_a_crawl_delay_and_a_host_in_back_off_exits_cleanly() {
    // One host makes the sitemap request wait 30 s after robots.txt (a task sleeping on a
    // host); the other closed itself for 30 s with a 429.
    let waiting = RecordingServer::start().await;
    waiting.route(
        HOST,
        "/robots.txt",
        Reply::text("User-agent: *\nCrawl-delay: 30\n"),
    );
    waiting.route(HOST, "/sitemap.txt", Reply::text(""));
    let busy = RecordingServer::start().await;
    let b = base(&busy);
    busy.route(HOST, "/robots.txt", Reply::status(404));
    busy.route(HOST, "/sitemap.txt", Reply::text(format!("{b}/a\n{b}/b\n")));
    busy.route(HOST, "/a", Reply::status(429).header("retry-after", "30"));
    busy.route(HOST, "/b", Reply::status(429).header("retry-after", "30"));
    let dir = tempfile::tempdir().unwrap();
    let schedule = write_schedule(
        dir.path(),
        &format!(
            "{}{}",
            site("waiting", &waiting, "20/s"),
            site("busy", &busy, "20/s")
        ),
    );
    let run = Freshet::run(&schedule, &dir.path().join("f.db"), &[]);
    terminate_when("during a Crawl-delay wait and a back-off", run, || {
        let waited = waiting.requests().iter().any(|r| r.path == "/robots.txt");
        let throttled = busy.requests().iter().any(|r| r.path.len() == 2);
        waited && throttled
    })
    .await;
    assert!(
        !waiting.requests().iter().any(|r| r.path == "/sitemap.txt"),
        "the Crawl-delay was not waited for"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_with_a_check_in_flight_exits_cleanly() {
    let server = RecordingServer::start().await;
    let b = base(&server);
    server.route(HOST, "/robots.txt", Reply::status(404));
    server.route(HOST, "/sitemap.txt", Reply::text(format!("{b}/slow\n")));
    server.handle(HOST, "/slow", |_| slow_reply());
    let dir = tempfile::tempdir().unwrap();
    let schedule = write_schedule(dir.path(), &site("inflight", &server, "20/s"));
    let run = Freshet::run(&schedule, &dir.path().join("f.db"), &[]);
    let stderr = terminate_when("with a check in flight", run, || {
        server.requests().iter().any(|r| r.path == "/slow")
    })
    .await;
    // The request cut short counts: the exit line says what the server saw (robots.txt, the
    // sitemap and /slow), not only the requests that were answered.
    let seen = server.requests().len();
    let said = format!("freshet: {seen} requests, ");
    assert!(stderr.contains(&said), "the server saw {seen}: {stderr}");
}

/// Whether the process has a handler for SIGTERM (bit 15 of `SigCgt` in `/proc/PID/status`).
#[cfg(target_os = "linux")]
fn catches_sigterm(pid: u32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (15 - 1)) != 0)
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_the_moment_the_handler_exists_exits_cleanly() {
    // The handler is installed before arguments are parsed or the database opened: a SIGTERM
    // the instant the kernel shows it (polled as fast as the test can) is a clean shutdown.
    let server = RecordingServer::start().await;
    server.route(HOST, "/robots.txt", Reply::status(404));
    server.handle(HOST, "/sitemap.txt", |_| slow_reply());
    let dir = tempfile::tempdir().unwrap();
    let schedule = write_schedule(dir.path(), &site("early", &server, "20/s"));
    let run = Freshet::run(&schedule, &dir.path().join("f.db"), &[]);
    let pid = run.child.id().expect("running");
    let until = Instant::now() + Duration::from_secs(30);
    while !catches_sigterm(pid) {
        assert!(
            Instant::now() < until,
            "freshet never installed a SIGTERM handler"
        );
        std::thread::yield_now();
    }
    let sent = run.terminate();
    let (status, stderr) = run
        .finish(EXIT_BOUND)
        .await
        .expect("still running after SIGTERM");
    eprintln!(
        "SIGTERM at the first instant: exit {:?} after {:?}",
        status.code(),
        sent.elapsed()
    );
    assert_eq!(status.code(), Some(0), "{stderr}");
}
