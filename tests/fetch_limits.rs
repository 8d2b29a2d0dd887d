//! The fetcher's limits against a real server on 127.0.0.1:0: the decompressed body cap (a
//! 1 GiB gzip bomb), total and idle timeouts, and per-call caps for robots.txt and sitemaps.

#[path = "support/fetch_setup.rs"]
mod fetch_setup;
#[path = "support/recording_server.rs"]
mod recording_server;

use std::io::Write;
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use fetch_setup::{get, setup};
use freshet::fetch::{FetchConfig, FetchError, Stage};
use freshet::politeness::origin_of;
use recording_server::{Reply, drip_body};

fn gzip_bomb() -> Bytes {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..1024 {
        encoder.write_all(&zeros).expect("in-memory write");
    }
    Bytes::from(encoder.finish().expect("in-memory finish"))
}

/// Peak resident memory of this process in KiB (Linux only).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[tokio::test]
async fn a_gzip_bomb_stops_at_the_cap() {
    let cap = 1 << 20;
    let (server, fetcher, pool, clock) = setup(FetchConfig {
        max_body_bytes: cap,
        ..FetchConfig::default()
    })
    .await;
    let bomb = gzip_bomb();
    let server_body_len = bomb.len();
    assert!(
        server_body_len < 8 << 20,
        "compressed size {server_body_len}"
    );
    server.route(
        "a.test",
        "/bomb",
        Reply::status(200)
            .header("content-type", "text/html")
            .header("content-encoding", "gzip")
            .body(bomb),
    );
    let outcome = get(&fetcher, &pool, &clock, server.url("a.test", "/bomb")).await;
    assert_eq!(
        outcome.error,
        Some(FetchError::BodyTooLarge {
            url: server.url("a.test", "/bomb").to_string(),
            limit: cap
        })
    );
    assert_eq!((outcome.body, outcome.text), (None, None));
    assert!(
        outcome.bytes > cap && outcome.bytes < cap + (1 << 20),
        "read {}",
        outcome.bytes
    );
    let accept = server.requests()[0]
        .header("accept-encoding")
        .unwrap_or("")
        .to_string();
    assert!(accept.contains("gzip"), "{accept}");
    if let Some(peak) = peak_rss_kib() {
        eprintln!(
            "gzip bomb: {server_body_len} bytes compressed, {} decompressed bytes read before the cap, peak RSS {peak} KiB",
            outcome.bytes
        );
        assert!(
            peak < 512 * 1024,
            "peak RSS {peak} KiB: the bomb was inflated"
        );
    }
}

#[tokio::test]
async fn a_gzip_body_is_decompressed() {
    let (server, fetcher, pool, clock) = setup(FetchConfig::default()).await;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder
        .write_all(b"hello, inflated")
        .expect("in-memory write");
    let gzipped = encoder.finish().expect("in-memory finish");
    server.route(
        "a.test",
        "/gz",
        Reply::status(200)
            .header("content-type", "text/plain")
            .header("content-encoding", "gzip")
            .body(gzipped),
    );
    let outcome = get(&fetcher, &pool, &clock, server.url("a.test", "/gz")).await;
    assert_eq!(outcome.text.as_deref(), Some("hello, inflated"));
    assert_eq!(outcome.bytes, 15);
}

#[tokio::test]
async fn a_body_over_the_cap_is_refused() {
    let (server, fetcher, pool, clock) = setup(FetchConfig {
        max_body_bytes: 10,
        ..FetchConfig::default()
    })
    .await;
    server.route("a.test", "/exact", Reply::text("0123456789"));
    server.route("a.test", "/over", Reply::text("0123456789A"));
    let exact = get(&fetcher, &pool, &clock, server.url("a.test", "/exact")).await;
    assert_eq!(exact.error, None);
    assert_eq!(exact.bytes, 10);
    let over = get(&fetcher, &pool, &clock, server.url("a.test", "/over")).await;
    assert!(matches!(
        over.error,
        Some(FetchError::BodyTooLarge { limit: 10, .. })
    ));
}

fn dripping(
    every: Duration,
    count: Option<usize>,
) -> impl Fn(&recording_server::Recorded) -> Response {
    move |_| {
        Response::builder()
            .header("content-type", "text/plain")
            .body(drip_body(Bytes::from_static(b"drip\n"), every, count))
            .unwrap_or_else(|_| Response::new(Body::empty()))
    }
}

#[tokio::test]
async fn a_slow_drip_hits_the_total_timeout() {
    let (server, fetcher, pool, clock) = setup(FetchConfig {
        read_timeout: Duration::from_secs(5),
        total_timeout: Duration::from_millis(400),
        ..FetchConfig::default()
    })
    .await;
    // A chunk every 50 ms forever: never idle, never done.
    server.handle("a.test", "/drip", dripping(Duration::from_millis(50), None));
    let url = server.url("a.test", "/drip");
    let outcome = get(&fetcher, &pool, &clock, url.clone()).await;
    assert_eq!(
        outcome.error,
        Some(FetchError::Timeout {
            url: url.to_string(),
            stage: Stage::Reading
        })
    );
    assert_eq!(outcome.status, Some(200));
    assert!(outcome.bytes > 0, "some drips arrived before the timeout");
    let status = pool.status(&origin_of(&url)).expect("host known");
    assert!(status.backoff_level >= 1, "a timeout backs the host off");
}

#[tokio::test]
async fn a_stalled_body_hits_the_idle_timeout() {
    let (server, fetcher, pool, clock) = setup(FetchConfig {
        read_timeout: Duration::from_millis(300),
        total_timeout: Duration::from_secs(30),
        ..FetchConfig::default()
    })
    .await;
    // One chunk, then an hour of silence.
    server.handle(
        "a.test",
        "/stall",
        dripping(Duration::from_secs(3600), Some(2)),
    );
    let outcome = get(&fetcher, &pool, &clock, server.url("a.test", "/stall")).await;
    assert!(
        matches!(
            outcome.error,
            Some(FetchError::Timeout {
                stage: Stage::Reading,
                ..
            })
        ),
        "{:?}",
        outcome.error
    );
    assert_eq!(outcome.bytes, 5);
}

#[tokio::test]
async fn fetch_bytes_applies_its_own_cap() {
    let (server, fetcher, pool, clock) = setup(FetchConfig::default()).await;
    server.route(
        "a.test",
        "/robots.txt",
        Reply::text("User-agent: *\nDisallow: /private\n"),
    );
    let url = server.url("a.test", "/robots.txt");
    let small = fetcher.fetch_bytes(&url, 8, &pool, clock.as_ref()).await;
    assert_eq!(
        small.error.as_ref().map(FetchError::kind),
        Some("body_too_large")
    );
    let whole = fetcher
        .fetch_bytes(&url, 500 * 1024, &pool, clock.as_ref())
        .await;
    assert_eq!(
        whole.text.as_deref(),
        Some("User-agent: *\nDisallow: /private\n")
    );
}

#[tokio::test]
async fn fetch_prefix_keeps_the_start_of_a_longer_body() {
    let (server, fetcher, pool, clock) = setup(FetchConfig::default()).await;
    let mut body = b"User-agent: *\nDisallow: /private\n".to_vec();
    body.resize(2 * 1024 * 1024, b'#');
    server.route("a.test", "/robots.txt", Reply::text(body.clone()));
    let url = server.url("a.test", "/robots.txt");
    let cut = fetcher
        .fetch_prefix(&url, 1000, &pool, clock.as_ref())
        .await;
    assert!(cut.error.is_none(), "{:?}", cut.error);
    assert!(cut.truncated);
    assert_eq!(cut.status, Some(200));
    assert_eq!(cut.body.as_deref(), Some(&body[..1000]));
    let small = server.url("a.test", "/small");
    server.route("a.test", "/small", Reply::text("short"));
    let whole = fetcher
        .fetch_prefix(&small, 1000, &pool, clock.as_ref())
        .await;
    assert!(!whole.truncated && whole.error.is_none());
    assert_eq!(whole.body.as_deref(), Some(&b"short"[..]));
}
