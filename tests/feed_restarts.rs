//! A feed worth reading often stays so over a restart, as its server sees it. What a feed
//! covers and how full it runs live in the refresher's memory, so a run's plan takes a feed it
//! has not read yet for one worth nothing, read weekly: after a restart, a feed read every hour
//! or so went unread for a week, and the changes it would have announced waited for their
//! pages' plan. A restarted run now reads it when the run before planned to.

#[path = "support/recording_server.rs"]
mod recording_server;
#[path = "support/virtual_runs.rs"]
mod virtual_runs;

use std::sync::Arc;

use freshet::clock::{SharedClock, VirtualClock};

use recording_server::{RecordingServer, Reply};
use virtual_runs::{clock_reaches, run_schedule_until};

/// 2021-01-01T00:00:00Z: the virtual clock's origin.
const ORIGIN_MS: i64 = 1_609_459_200_000;
const HOUR_MS: i64 = 3_600_000;
const HOST: &str = "h.test";
/// Pages that change together every two hours, and a feed that lists each at its latest
/// change (as most feeds do), with an `ETag` (read more often than that, it mostly answers
/// 304; a first read after a restart answered 304 lists what the run before read, which
/// `scheduler::tests::restored_feeds` follows).
const PAGES: usize = 5;
const PERIOD_MS: i64 = 2 * HOUR_MS;

/// The pages' latest change at or before `at_ms`.
fn latest_change(at_ms: i64) -> i64 {
    ORIGIN_MS + (at_ms - ORIGIN_MS).div_euclid(PERIOD_MS) * PERIOD_MS
}

fn rfc2822(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .expect("a date")
        .to_rfc2822()
}

fn serve(server: &RecordingServer) {
    let base = format!("http://{HOST}:{}", server.addr.port());
    server.route(
        HOST,
        "/robots.txt",
        Reply::text("User-agent: *\nAllow: /\n"),
    );
    let sitemap: String = (0..PAGES)
        .map(|i| format!("<url><loc>{base}/p{i}</loc></url>"))
        .collect();
    server.route(
        HOST,
        "/sitemap.xml",
        Reply::status(200)
            .header("content-type", "application/xml")
            .body(format!(
                r#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{sitemap}</urlset>"#
            )),
    );
    let feed_base = base.clone();
    server.handle(HOST, "/feed.xml", move |request| {
        let etag = format!("\"{}\"", latest_change(request.clock_ms));
        if request.header("if-none-match") == Some(etag.as_str()) {
            return Reply::status(304).header("etag", &etag).to_response();
        }
        let items: String = (0..PAGES)
            .map(|i| {
                let changed = rfc2822(latest_change(request.clock_ms));
                format!(
                    "<item><title>p{i}</title><link>{feed_base}/p{i}</link>\
                     <guid>{feed_base}/p{i}</guid><pubDate>{changed}</pubDate></item>"
                )
            })
            .collect();
        Reply::status(200)
            .header("content-type", "application/rss+xml")
            .header("etag", &etag)
            .body(format!(
                r#"<?xml version="1.0"?><rss version="2.0"><channel><title>h</title><link>{feed_base}/</link><description>h</description>{items}</channel></rss>"#
            ))
            .to_response()
    });
    for i in 0..PAGES {
        server.handle(HOST, &format!("/p{i}"), move |request| {
            let version = latest_change(request.clock_ms);
            Reply::html(format!(
                "<html><body><p>page {i}, version {version}</p></body></html>"
            ))
            .to_response()
        });
    }
}

/// Reads of the feed between two instants (clock ms).
fn feed_reads(server: &RecordingServer, from_ms: i64, to_ms: i64) -> usize {
    (server.requests_to(HOST).into_iter())
        .filter(|r| r.path == "/feed.xml" && (from_ms..to_ms).contains(&r.clock_ms))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_worth_reading_often_is_read_as_often_after_a_restart() {
    // An hour of virtual time is a real second.
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 3_600.0));
    let server = Arc::new(RecordingServer::start_with_clock(clock.clone()).await);
    serve(&server);
    let dir = tempfile::tempdir().unwrap();
    let schedule = dir.path().join("feed_restarts.toml");
    let site = format!(
        "[[site]]\nname = \"{HOST}\"\nallow_networks = [\"127.0.0.0/8\"]\n\
         sitemaps = [\"{}\"]\nfeeds = [\"{}\"]\nrediscover = \"0 0 0 * * *\"\n\
         requests_per_day = 100\nhost_rate = \"60/h\"\n",
        server.url(HOST, "/sitemap.xml"),
        server.url(HOST, "/feed.xml"),
    );
    std::fs::write(&schedule, site).unwrap();
    let run_for = |hours: i64| clock_reaches(clock.clone(), clock.now_ms() + hours * HOUR_MS);
    let hosts = [HOST];
    run_schedule_until(
        &server,
        &clock,
        dir.path(),
        schedule.clone(),
        &hosts,
        run_for(24),
    )
    .await;
    let restarted_ms = clock.now_ms();
    run_schedule_until(&server, &clock, dir.path(), schedule, &hosts, run_for(12)).await;
    let before = feed_reads(&server, restarted_ms - 12 * HOUR_MS, restarted_ms);
    let after = feed_reads(&server, restarted_ms, restarted_ms + 12 * HOUR_MS);
    let not_modified = (server.requests_to(HOST).into_iter())
        .filter(|r| r.path == "/feed.xml" && r.header("if-none-match").is_some())
        .count();
    let what = format!(
        "feed reads in the 12 h before the restart: {before}, in the 12 h after: {after} \
         ({not_modified} conditional in all)"
    );
    eprintln!("{what}");
    assert!(before >= 4, "the feed earned its reads: {what}");
    // As often as before: not read a week later, nor again at once after each read.
    assert!(2 * after >= before && after <= 2 * before, "{what}");
}
