//! Politeness seen from the server: spacing per host under concurrent fetch tasks (real and
//! virtual clock), hosts independent of each other, Retry-After and back-off honoured, redirect
//! hops and robots fetches under the same interval, Crawl-delay applied on reconfiguration.
//!
//! Only lower bounds of spacing are asserted (never upper bounds of speed), except where a test
//! shows that two hosts do not wait on each other: there the bound is half an interval of 10 s.

#[path = "support/recording_server.rs"]
mod recording_server;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use freshet::clock::{self, SharedClock, SystemClock, VirtualClock};
use freshet::fetch::{FetchConfig, FetchError, FetchOutcome, FetchRequest, Fetcher};
use freshet::politeness::{BackoffPolicy, HostConfig, HostPool, origin_of};
use recording_server::{RecordingServer, Reply};

/// A virtual clock starting at 2026-01-01T00:00:00Z.
fn virtual_clock(speed: f64) -> SharedClock {
    Arc::new(VirtualClock::new(1_767_225_600_000, speed))
}

/// Server and fetcher on `clock`, the pool with a quick, jitter-free back-off.
async fn setup(
    clock: SharedClock,
    backoff_base: Duration,
) -> (RecordingServer, Arc<Fetcher>, Arc<HostPool>) {
    let server = RecordingServer::start_with_clock(Arc::clone(&clock)).await;
    let fetcher = Fetcher::new(FetchConfig {
        resolve: server.resolve(&["a.test", "b.test"]),
        allow_networks: recording_server::loopback_networks(),
        ..FetchConfig::default()
    })
    .expect("client builds");
    let pool = HostPool::new(clock).with_backoff(BackoffPolicy {
        base: backoff_base,
        jitter: 0.0,
        ..BackoffPolicy::default()
    });
    (server, Arc::new(fetcher), Arc::new(pool))
}

fn one_at_a_time(interval: Duration) -> HostConfig {
    HostConfig {
        min_interval: interval,
        concurrency: 1,
    }
}

/// Fetches every path on `host` from its own task, all at once.
async fn fetch_concurrently(
    server: &RecordingServer,
    fetcher: &Arc<Fetcher>,
    pool: &Arc<HostPool>,
    host: &str,
    paths: &[String],
) -> Vec<FetchOutcome> {
    let tasks: Vec<_> = paths
        .iter()
        .map(|path| {
            let (fetcher, pool) = (Arc::clone(fetcher), Arc::clone(pool));
            let request = FetchRequest::get(server.url(host, path));
            tokio::spawn(async move {
                let clock = Arc::clone(pool.clock());
                fetcher.fetch(&request, &pool, clock.as_ref()).await
            })
        })
        .collect();
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.expect("fetch task does not panic"));
    }
    outcomes
}

fn paths(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("/p{i}")).collect()
}

fn route_pages(server: &RecordingServer, host: &str, n: usize) {
    for path in paths(n) {
        server.route(host, &path, Reply::html(format!("<p>{path}</p>")));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_host_sees_requests_spaced_by_its_interval_on_the_real_clock() {
    let clock: SharedClock = Arc::new(SystemClock);
    let (server, fetcher, pool) = setup(clock, Duration::from_millis(50)).await;
    route_pages(&server, "a.test", 6);
    let interval = Duration::from_millis(200);
    pool.configure(
        &origin_of(&server.url("a.test", "/")),
        one_at_a_time(interval),
    );
    let outcomes = fetch_concurrently(&server, &fetcher, &pool, "a.test", &paths(6)).await;
    assert!(outcomes.iter().all(|o| o.error.is_none()), "{outcomes:?}");
    assert_eq!(server.requests_to("a.test").len(), 6);
    for gap in server.clock_gaps_ms("a.test") {
        assert!(gap >= 200, "clock gap {gap} ms < 200 ms");
    }
    for gap in server.gaps("a.test") {
        // The wall clock reads whole milliseconds; the server's instants are finer.
        assert!(
            gap >= interval - Duration::from_millis(1),
            "real gap {gap:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_host_sees_requests_spaced_by_its_interval_on_a_fast_virtual_clock() {
    let clock = virtual_clock(3600.0);
    let (server, fetcher, pool) = setup(Arc::clone(&clock), Duration::from_secs(1)).await;
    route_pages(&server, "a.test", 8);
    pool.configure(
        &origin_of(&server.url("a.test", "/")),
        one_at_a_time(Duration::from_secs(60)),
    );
    let outcomes = fetch_concurrently(&server, &fetcher, &pool, "a.test", &paths(8)).await;
    assert!(outcomes.iter().all(|o| o.error.is_none()), "{outcomes:?}");
    let clock_gaps = server.clock_gaps_ms("a.test");
    assert_eq!(clock_gaps.len(), 7);
    for gap in clock_gaps {
        assert!(gap >= 60_000, "clock gap {gap} ms < 60 s");
    }
    for gap in server.gaps("a.test") {
        // 60 clock seconds at speed 3600 are 16.7 real milliseconds.
        assert!(gap >= Duration::from_millis(16), "real gap {gap:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hosts_do_not_wait_on_each_other() {
    let clock: SharedClock = Arc::new(SystemClock);
    let (server, fetcher, pool) = setup(Arc::clone(&clock), Duration::from_millis(50)).await;
    route_pages(&server, "a.test", 1);
    route_pages(&server, "b.test", 1);
    let slow = one_at_a_time(Duration::from_secs(10));
    let a = origin_of(&server.url("a.test", "/"));
    let b = origin_of(&server.url("b.test", "/"));
    pool.configure(&a, slow.clone());
    pool.configure(&b, slow);
    let one = paths(1);
    let (on_a, on_b) = tokio::join!(
        fetch_concurrently(&server, &fetcher, &pool, "a.test", &one),
        fetch_concurrently(&server, &fetcher, &pool, "b.test", &one),
    );
    assert!(on_a[0].error.is_none() && on_b[0].error.is_none());
    // Had b waited for a's interval (or a for b's), one would have waited ~10 s.
    assert!(on_a[0].waited_ms < 5_000 && on_b[0].waited_ms < 5_000);
    let first_a = server.requests_to("a.test")[0].clone();
    let first_b = server.requests_to("b.test")[0].clone();
    let apart = first_a.at.max(first_b.at) - first_a.at.min(first_b.at);
    assert!(apart < Duration::from_secs(5), "{apart:?}");
    // Both hosts are now closed for their interval: the limit was in force.
    let now = clock.now_ms();
    assert!(pool.next_allowed_ms(&a) >= now + 5_000);
    assert!(pool.next_allowed_ms(&b) >= now + 5_000);
}

#[tokio::test]
async fn retry_after_seconds_is_honoured_on_the_real_clock() {
    let clock: SharedClock = Arc::new(SystemClock);
    let (server, fetcher, pool) = setup(Arc::clone(&clock), Duration::from_millis(50)).await;
    server.handle("a.test", "/busy", |request| {
        if request.hit == 0 {
            Reply::status(429).header("retry-after", "1").to_response()
        } else {
            Reply::text("ok").to_response()
        }
    });
    let origin = origin_of(&server.url("a.test", "/"));
    pool.configure(&origin, one_at_a_time(Duration::from_millis(10)));
    let request = FetchRequest::get(server.url("a.test", "/busy"));
    let first = fetcher.fetch(&request, &pool, clock.as_ref()).await;
    assert_eq!(first.status, Some(429));
    assert_eq!(first.retry_after, Some(Duration::from_secs(1)));
    assert!(matches!(
        first.error,
        Some(FetchError::Http { status: 429, .. })
    ));
    let second = fetcher.fetch(&request, &pool, clock.as_ref()).await;
    assert_eq!(second.status, Some(200));
    let gaps = server.gaps("a.test");
    assert!(gaps[0] >= Duration::from_millis(999), "{gaps:?}");
    assert!(server.clock_gaps_ms("a.test")[0] >= 1_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_after_as_a_date_is_honoured_in_virtual_time() {
    let clock = virtual_clock(600.0);
    let (server, fetcher, pool) = setup(Arc::clone(&clock), Duration::from_secs(1)).await;
    let promised_ms = Arc::new(Mutex::new(0i64));
    let (server_clock, promised) = (Arc::clone(&clock), Arc::clone(&promised_ms));
    server.handle("a.test", "/busy", move |request| {
        if request.hit > 0 {
            return Reply::text("ok").to_response();
        }
        // Two virtual minutes from now, to the second, as an IMF-fixdate.
        let at = clock::ms_to_datetime(server_clock.now_ms() + 120_000);
        let date = at.format("%a, %d %b %Y %H:%M:%S GMT").to_string();
        *promised.lock().unwrap_or_else(|p| p.into_inner()) = at.timestamp() * 1000;
        Reply::status(503)
            .header("retry-after", &date)
            .to_response()
    });
    pool.configure(
        &origin_of(&server.url("a.test", "/")),
        one_at_a_time(Duration::from_secs(1)),
    );
    let request = FetchRequest::get(server.url("a.test", "/busy"));
    let first = fetcher.fetch(&request, &pool, clock.as_ref()).await;
    assert_eq!(first.status, Some(503));
    let asked = first.retry_after.expect("Retry-After parsed");
    assert!(
        // Relative to the moment it was read: at most the two minutes promised.
        asked <= Duration::from_secs(120),
        "{asked:?}"
    );
    let second = fetcher.fetch(&request, &pool, clock.as_ref()).await;
    assert_eq!(second.status, Some(200));
    let promised = *promised_ms.lock().unwrap_or_else(|p| p.into_inner());
    let requests = server.requests_to("a.test");
    assert!(
        requests[1].clock_ms >= promised,
        "contacted at {} before Retry-After {promised}",
        requests[1].clock_ms
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_back_off_exponentially_and_successes_recover() {
    let clock = virtual_clock(1000.0);
    let (server, fetcher, pool) = setup(Arc::clone(&clock), Duration::from_secs(10)).await;
    server.handle("a.test", "/flaky", |request| {
        if request.hit < 2 {
            Reply::status(500).to_response()
        } else {
            Reply::text("ok").to_response()
        }
    });
    let origin = origin_of(&server.url("a.test", "/"));
    pool.configure(&origin, one_at_a_time(Duration::from_secs(1)));
    let request = FetchRequest::get(server.url("a.test", "/flaky"));
    for _ in 0..3 {
        fetcher.fetch(&request, &pool, clock.as_ref()).await;
    }
    let gaps = server.clock_gaps_ms("a.test");
    assert!(gaps[0] >= 10_000, "first closure {gaps:?}");
    assert!(gaps[1] >= 20_000, "second closure doubles {gaps:?}");
    let status = pool.status(&origin).expect("host known");
    assert_eq!(status.backoff_level, 1, "one success recovers one level");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_and_redirect_hops_wait_for_the_same_host_interval() {
    let clock: SharedClock = Arc::new(SystemClock);
    let (server, fetcher, pool) = setup(Arc::clone(&clock), Duration::from_millis(50)).await;
    server.route(
        "a.test",
        "/robots.txt",
        Reply::text("User-agent: *\nAllow: /\n"),
    );
    server.route("a.test", "/old", Reply::redirect(301, "/new"));
    server.route("a.test", "/new", Reply::text("moved here"));
    let interval = Duration::from_millis(300);
    pool.configure(
        &origin_of(&server.url("a.test", "/")),
        one_at_a_time(interval),
    );
    let robots = fetcher
        .fetch_bytes(
            &server.url("a.test", "/robots.txt"),
            500 * 1024,
            &pool,
            clock.as_ref(),
        )
        .await;
    assert!(robots.error.is_none());
    let page = fetcher
        .fetch(
            &FetchRequest::get(server.url("a.test", "/old")),
            &pool,
            clock.as_ref(),
        )
        .await;
    assert_eq!(page.hops.len(), 2);
    assert_eq!(server.requests_to("a.test").len(), 3);
    for gap in server.clock_gaps_ms("a.test") {
        assert!(gap >= 300, "clock gap {gap}");
    }
    for gap in server.gaps("a.test") {
        assert!(
            gap >= interval - Duration::from_millis(1),
            "real gap {gap:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_delay_learnt_later_lengthens_the_interval() {
    let clock = virtual_clock(100.0);
    let (server, fetcher, pool) = setup(Arc::clone(&clock), Duration::from_secs(1)).await;
    route_pages(&server, "a.test", 4);
    let origin = origin_of(&server.url("a.test", "/"));
    let schedule_rate = one_at_a_time(Duration::from_secs(1));
    pool.configure(&origin, schedule_rate.clone());
    let first = fetch_concurrently(&server, &fetcher, &pool, "a.test", &paths(1)).await;
    assert!(first[0].error.is_none());
    // robots.txt said Crawl-delay: 5.
    pool.configure(
        &origin,
        schedule_rate.with_crawl_delay(Some(Duration::from_secs(5))),
    );
    fetch_concurrently(&server, &fetcher, &pool, "a.test", &paths(4)[1..]).await;
    let gaps = server.clock_gaps_ms("a.test");
    assert_eq!(gaps.len(), 3);
    for gap in gaps {
        assert!(gap >= 5_000, "clock gap {gap} ms < Crawl-delay 5 s");
    }
}
