//! A server's floor on a URL's revisits, as the server sees it: a page's Cache-Control
//! max-age holds however the plan would like to visit it, also across the 304s that answer
//! it without the header (as many servers send them: RFC 9111 keeps the stored response's
//! headers), and a Retry-After holds its host back for its time, not the page for ever. A
//! sitemap's max-age holds as a page's does.

#[path = "support/recording_server.rs"]
mod recording_server;
#[path = "support/virtual_runs.rs"]
mod virtual_runs;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use freshet::clock::{SharedClock, VirtualClock};

use recording_server::{RecordingServer, Reply};
use virtual_runs::{clock_reaches, run_schedule_until};

/// 2021-01-01T00:00:00Z: the virtual clock's origin.
const ORIGIN_MS: i64 = 1_609_459_200_000;
const HOUR_MS: i64 = 3_600_000;
/// How often the pages change.
const PERIOD_MS: i64 = 3 * HOUR_MS;
/// The max-age of `/a`'s 200s.
const MAX_AGE_HOURS: i64 = 2;
/// The sitemap's request that fails (from 0).
const FAILED_READ: usize = 3;
/// How often `/b` changes.
const B_PERIOD_MS: i64 = 12 * HOUR_MS;

/// The version of a page at `at_ms`: it changes every [`PERIOD_MS`].
fn version(at_ms: i64) -> i64 {
    (at_ms - ORIGIN_MS).div_euclid(PERIOD_MS)
}

/// A page that changes every [`PERIOD_MS`], answered 304 to its current `ETag` (without
/// Cache-Control), its 200s carrying `cache_control` if any.
fn serve_page(server: &RecordingServer, host: &str, path: &str, cache_control: Option<&str>) {
    let cache_control = cache_control.map(str::to_string);
    server.handle(host, path, move |request| {
        let etag = format!("\"v{}\"", version(request.clock_ms));
        if request.header("if-none-match") == Some(etag.as_str()) {
            return Reply::status(304).header("etag", &etag).to_response();
        }
        let mut reply =
            Reply::html(format!("<html><body><p>{etag}</p></body></html>")).header("etag", &etag);
        if let Some(value) = &cache_control {
            reply = reply.header("cache-control", value);
        }
        reply.to_response()
    });
}

/// Hours between consecutive requests for `path` on `host` (from `from_ms` on).
fn gaps_hours(server: &RecordingServer, host: &str, path: &str, from_ms: i64) -> Vec<f64> {
    let at: Vec<i64> = (server.requests_to(host).into_iter())
        .filter(|r| r.path == path && r.clock_ms >= from_ms)
        .map(|r| r.clock_ms)
        .collect();
    (at.windows(2))
        .map(|pair| (pair[1] - pair[0]) as f64 / HOUR_MS as f64)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_max_age_holds_across_bare_304s_and_a_retry_after_only_for_its_time() {
    // An hour of virtual time is a real second.
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 3_600.0));
    let server = RecordingServer::start_with_clock(clock.clone()).await;
    let port = server.addr.port();
    for host in ["a.test", "b.test", "c.test"] {
        server.route(
            host,
            "/robots.txt",
            Reply::text("User-agent: *\nAllow: /\n"),
        );
    }
    let max_age = format!("max-age={}", MAX_AGE_HOURS * 3_600);
    serve_page(&server, "a.test", "/a", Some(&max_age));
    // The same page without a max-age: how often the plan would visit `/a`.
    // (On a host of its own: a host's 304s are audited by a full GET now and then, and
    // `/c`'s many would send one in the middle of `/a`'s max-age.)
    serve_page(&server, "c.test", "/c", None);
    // Copied once, then throttled once (an hour's Retry-After), then answered 304 until it
    // changes, every [`B_PERIOD_MS`].
    let requests = Arc::new(AtomicUsize::new(0));
    let b_etag_page = {
        let requests = requests.clone();
        move |request: &recording_server::Recorded| {
            if requests.fetch_add(1, Ordering::SeqCst) == 1 {
                return Reply::status(429)
                    .header("retry-after", "3600")
                    .to_response();
            }
            let b_version = (request.clock_ms - ORIGIN_MS).div_euclid(B_PERIOD_MS);
            let etag = format!("\"v{b_version}\"");
            if request.header("if-none-match") == Some(etag.as_str()) {
                return Reply::status(304).header("etag", &etag).to_response();
            }
            Reply::html(format!("<html><body><p>{etag}</p></body></html>"))
                .header("etag", &etag)
                .to_response()
        }
    };
    server.handle("b.test", "/b", b_etag_page);
    let dir = tempfile::tempdir().unwrap();
    let schedule = dir.path().join("floors.toml");
    std::fs::write(
        &schedule,
        format!(
            "[[site]]\nname = \"floors\"\nallow_networks = [\"127.0.0.0/8\"]\n\
             seeds = [\"http://a.test:{port}/a\", \"http://c.test:{port}/c\", \
             \"http://b.test:{port}/b\"]\nrequests_per_day = 300\nhost_rate = \"60/h\"\n"
        ),
    )
    .unwrap();
    let end_ms = ORIGIN_MS + 30 * HOUR_MS;
    let enough = clock_reaches(clock.clone(), end_ms);
    let hosts = ["a.test", "b.test", "c.test"];
    run_schedule_until(&server, &clock, dir.path(), schedule, &hosts, enough).await;

    let a = gaps_hours(&server, "a.test", "/a", ORIGIN_MS);
    let c = gaps_hours(&server, "c.test", "/c", ORIGIN_MS);
    // 304s: asked with the `ETag` the page had then.
    let not_modified = (server.requests_to("a.test").into_iter())
        .filter(|r| r.path == "/a")
        .filter(|r| r.header("if-none-match") == Some(&format!("\"v{}\"", version(r.clock_ms))))
        .count();
    let b_requests = server.requests_to("b.test");
    let throttled_ms = (b_requests.iter())
        .filter(|r| r.path == "/b")
        .nth(1)
        .map(|r| r.clock_ms)
        .expect("b was throttled");
    // From the 429 on, while it is asked with its `ETag` and has not changed: answered 304,
    // which ends no floor. (A host's 304s are audited by a full GET now and then, whose 200
    // would end a floor kept from the Retry-After: the window stops there.)
    let window: Vec<i64> = (b_requests.iter())
        .filter(|r| r.path == "/b" && r.clock_ms >= throttled_ms)
        .enumerate()
        .take_while(|(i, r)| {
            *i == 0 || (r.header("if-none-match").is_some() && r.clock_ms < ORIGIN_MS + B_PERIOD_MS)
        })
        .map(|(_, r)| r.clock_ms)
        .collect();
    let b: Vec<f64> = (window.windows(2))
        .map(|pair| (pair[1] - pair[0]) as f64 / HOUR_MS as f64)
        .collect();
    let min = |gaps: &[f64]| gaps.iter().copied().fold(f64::INFINITY, f64::min);
    let what = format!(
        "hours between visits: /a (max-age {MAX_AGE_HOURS} h, {not_modified} answered 304) \
         {a:.2?}; /c (none) {} visits, {:.2} h apart at least; /b from its 429 while answered 304 \
         {b:.2?}",
        c.len() + 1,
        min(&c),
    );
    eprintln!("{what}");
    // The plan would visit the page more often than its max-age allows.
    assert!(min(&c) < MAX_AGE_HOURS as f64 - 0.5, "{what}");
    // (The floor runs from when the request went out, the log's time is when it came in: a
    // tenth of an hour, 100 real milliseconds, for a loaded machine.)
    assert!(a.len() >= 5 && not_modified >= 2, "{what}");
    assert!(min(&a) >= MAX_AGE_HOURS as f64 - 0.1, "{what}");
    // The Retry-After held the host back for its hour (the first gap); the page goes on at its
    // plan after, answered 304 (kept as the page's floor, which a 304 keeps, it held the page
    // back until it changed).
    assert!(b.first().is_some_and(|&gap| gap >= 0.9), "{what}");
    // (Well below the hour a floor kept from it would give: the log's times are arrivals.)
    let quick = b.iter().skip(1).filter(|&&gap| gap < 0.75).count();
    assert!(quick >= 2, "{what}");
}

/// A sitemap's max-age holds across its 304s without the header, as a page's does: read at
/// each discovery (every ten minutes here), it is asked no sooner than its max-age allows.
/// Before, a bare 304 ended its floor, and it was read at the next discovery.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sitemaps_max_age_holds_across_bare_304s() {
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 3_600.0));
    let server = RecordingServer::start_with_clock(clock.clone()).await;
    let port = server.addr.port();
    server.route(
        "s.test",
        "/robots.txt",
        Reply::text("User-agent: *\nAllow: /\n"),
    );
    let page = format!("http://s.test:{port}/p");
    // Its fourth request fails (a 503 without Retry-After).
    let requests = AtomicUsize::new(0);
    server.handle("s.test", "/sitemap.xml", move |request| {
        if requests.fetch_add(1, Ordering::SeqCst) == FAILED_READ {
            return Reply::status(503).to_response();
        }
        let etag = "\"one\"";
        if request.header("if-none-match") == Some(etag) {
            return Reply::status(304).header("etag", etag).to_response();
        }
        (Reply::sitemap([&page]).header("etag", etag))
            .header(
                "cache-control",
                &format!("max-age={}", MAX_AGE_HOURS * 3_600),
            )
            .to_response()
    });
    serve_page(&server, "s.test", "/p", None);
    let dir = tempfile::tempdir().unwrap();
    let schedule = dir.path().join("sitemap_floor.toml");
    std::fs::write(
        &schedule,
        format!(
            "[[site]]\nname = \"sitemap_floor\"\nallow_networks = [\"127.0.0.0/8\"]\n\
             sitemaps = [\"http://s.test:{port}/sitemap.xml\"]\n\
             rediscover = \"0 */10 * * * *\"\nrequests_per_day = 100000\nhost_rate = \"600/h\"\n"
        ),
    )
    .unwrap();
    let enough = clock_reaches(clock.clone(), ORIGIN_MS + 12 * HOUR_MS);
    run_schedule_until(&server, &clock, dir.path(), schedule, &["s.test"], enough).await;
    let mut reads = gaps_hours(&server, "s.test", "/sitemap.xml", ORIGIN_MS);
    // After the failed read: asked again at a discovery soon after (the host's back-off
    // allowing), not a whole floor later.
    let after_failure = reads.remove(FAILED_READ);
    let not_modified = (server.requests_to("s.test").into_iter())
        .filter(|r| r.path == "/sitemap.xml" && r.header("if-none-match").is_some())
        .count();
    let what = format!(
        "hours between the sitemap's reads (max-age {MAX_AGE_HOURS} h, {not_modified} asked \
         conditionally): {reads:.2?}; after the failed read, {after_failure:.2} h"
    );
    eprintln!("{what}");
    // Seen: 2.00 to 2.17 h apart, and 0.17 h after the failed read. With a bare 304 taken to
    // end the floor: 0.16 to 0.17 h after each 304 (each discovery); with the floor counted
    // from the failed read: 2.00 h after it.
    assert!(reads.len() >= 3 && not_modified >= 2, "{what}");
    let least = reads.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(least >= MAX_AGE_HOURS as f64 - 0.1, "{what}");
    assert!(after_failure < 1.0, "{what}");
}
