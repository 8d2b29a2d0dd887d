//! A sitemap read whose listing was cut short (a kill, a failed write) is read whole again: its
//! validators are stored only once every page it listed is. They were stored with the read
//! itself, so the next read was answered 304 Not Modified and re-listed only the pages the
//! first had reached: found by an adversarial run that killed `freshet run` while a
//! 40,000-URL sitemap was being stored (5,001 URLs, and still 5,001 after a restart).
//!
//! The cut is made deterministic with a trigger that refuses one page's insert: the first
//! thousand pages (one batch) are written, the rest fail, as after a kill in the middle. A feed
//! read is kept the same way: its validators are stored once its entries are.

#[path = "support/recording_server.rs"]
mod recording_server;

use std::sync::Arc;

use freshet::clock::{SharedClock, VirtualClock};
use freshet::refresher::{self, PolicyChoice, RunOptions};
use freshet::store::Store;
use recording_server::{RecordingServer, Reply};
use sqlx::Connection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};

const HOST: &str = "big.test";
const PAGES: usize = 1_500;
/// 2021-01-01T00:00:00Z.
const ORIGIN_MS: i64 = 1_609_459_200_000;

/// Serves `body` at `path` with the ETag `etag` (and `extra` headers on every answer),
/// answering 304 to a request that names it.
fn serve_with_etag(
    server: &RecordingServer,
    path: &str,
    content_type: &'static str,
    etag: &'static str,
    extra: &'static [(&'static str, &'static str)],
    body: String,
) {
    server.handle(HOST, path, move |request| {
        let mut reply = if request.header("if-none-match") == Some(etag) {
            Reply::status(304)
        } else {
            Reply::status(200)
                .header("content-type", content_type)
                .body(body.clone())
        };
        reply = reply.header("etag", etag);
        for (name, value) in extra {
            reply = reply.header(name, value);
        }
        reply.to_response()
    });
}

/// The `If-None-Match` of each request for `path`, in order (`None`: asked whole).
fn conditions_of(server: &RecordingServer, path: &str) -> Vec<Option<String>> {
    server
        .requests_to(HOST)
        .iter()
        .filter(|r| r.path == path)
        .map(|r| r.header("if-none-match").map(str::to_string))
        .collect()
}

fn serve_site(server: &RecordingServer) {
    let base = format!("http://{HOST}:{}", server.addr.port());
    server.route(
        HOST,
        "/robots.txt",
        Reply::text("User-agent: *\nAllow: /\n"),
    );
    let urls: String = (0..PAGES)
        .map(|i| format!("<url><loc>{base}/p/{i}</loc></url>\n"))
        .collect();
    let body = format!(
        r#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>"#
    );
    serve_with_etag(
        server,
        "/sitemap.xml",
        "application/xml",
        "\"s1\"",
        &[],
        body,
    );
}

async fn sql(db: &std::path::Path, statement: &'static str) {
    let mut conn = SqliteConnection::connect_with(&SqliteConnectOptions::new().filename(db))
        .await
        .unwrap();
    sqlx::query(statement).execute(&mut conn).await.unwrap();
    conn.close().await.unwrap();
}

async fn one_pass(server: &RecordingServer, dir: &std::path::Path, clock: &SharedClock) {
    let sources = format!("sitemaps = [\"{}\"]", server.url(HOST, "/sitemap.xml"));
    pass_over(server, dir, clock, &sources).await;
}

/// One `--once` pass over the site's `sources` (its `sitemaps` or `feeds` line).
async fn pass_over(
    server: &RecordingServer,
    dir: &std::path::Path,
    clock: &SharedClock,
    sources: &str,
) {
    let schedule = dir.join("big.toml");
    std::fs::write(
        &schedule,
        format!(
            "[[site]]\nname = \"big\"\n{sources}\nrequests_per_day = 10\n\
             host_rate = \"100/s\"\nallow_networks = [\"127.0.0.0/8\"]\n"
        ),
    )
    .unwrap();
    let options = RunOptions {
        schedules: vec![schedule],
        db_path: dir.join("freshet.db"),
        once: true,
        clock: Arc::clone(clock),
        resolve: server.resolve(&[HOST]),
        policy: PolicyChoice::Learned,
        worker: Default::default(),
        run_lock: None,
    };
    refresher::run(options, std::future::pending())
        .await
        .expect("one pass");
}

async fn pages_stored(db: &std::path::Path) -> usize {
    pages_stored_under(db, "/p/").await
}

async fn pages_stored_under(db: &std::path::Path, path: &str) -> usize {
    let store = Store::open(db).await.unwrap();
    let rows = store.url_status(Some("big")).await.unwrap();
    store.close().await;
    rows.iter().filter(|r| r.url.contains(path)).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_cut_short_is_read_whole_at_the_next_discovery() {
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 200.0));
    let server = RecordingServer::start_with_clock(Arc::clone(&clock)).await;
    serve_site(&server);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("freshet.db");
    Store::open(&db).await.unwrap().close().await;
    sql(
        &db,
        "CREATE TRIGGER cut_short BEFORE INSERT ON urls WHEN NEW.url LIKE '%/p/1200'
         BEGIN SELECT RAISE(ABORT, 'cut short here'); END",
    )
    .await;

    one_pass(&server, dir.path(), &clock).await;
    let first = pages_stored(&db).await;
    assert!(
        (1..PAGES).contains(&first),
        "the first listing is cut short: {first} pages"
    );

    sql(&db, "DROP TRIGGER cut_short").await;
    one_pass(&server, dir.path(), &clock).await;
    let reads = conditions_of(&server, "/sitemap.xml");
    assert_eq!(reads.len(), 2, "{reads:?}");
    assert_eq!(
        reads[1], None,
        "the second read asks for the whole sitemap, not whether it changed"
    );
    assert_eq!(pages_stored(&db).await, PAGES, "every page listed");
}

/// A feed of `entries` items with an ETag, answered 304 to it.
fn serve_feed(server: &RecordingServer, entries: usize) {
    let base = format!("http://{HOST}:{}", server.addr.port());
    let items: String = (0..entries)
        .map(|i| {
            format!(
                "<item><title>{i}</title><link>{base}/f/{i}</link>\
                 <pubDate>Thu, 31 Dec 2020 12:00:00 GMT</pubDate></item>"
            )
        })
        .collect();
    let body = format!(
        r#"<?xml version="1.0"?><rss version="2.0"><channel><title>F</title>{items}</channel></rss>"#
    );
    serve_with_etag(
        server,
        "/feed.xml",
        "application/rss+xml",
        "\"f1\"",
        &[],
        body,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_read_cut_short_is_read_whole_at_its_next_read() {
    const ENTRIES: usize = 20;
    let server =
        RecordingServer::start_with_clock(Arc::new(VirtualClock::new(ORIGIN_MS, 200.0))).await;
    server.route(
        HOST,
        "/robots.txt",
        Reply::text("User-agent: *\nAllow: /\n"),
    );
    serve_feed(&server, ENTRIES);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("freshet.db");
    Store::open(&db).await.unwrap().close().await;
    sql(
        &db,
        "CREATE TRIGGER cut_short BEFORE INSERT ON urls WHEN NEW.url LIKE '%/f/%'
         BEGIN SELECT RAISE(ABORT, 'cut short here'); END",
    )
    .await;
    let feeds = format!("feeds = [\"{}\"]", server.url(HOST, "/feed.xml"));
    let first: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 200.0));
    pass_over(&server, dir.path(), &first, &feeds).await;
    assert_eq!(
        pages_stored_under(&db, "/f/").await,
        0,
        "the entries were cut"
    );

    sql(&db, "DROP TRIGGER cut_short").await;
    // A month on: the feed is due again whatever its plan.
    let later: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS + 30 * 86_400_000, 200.0));
    pass_over(&server, dir.path(), &later, &feeds).await;
    let reads = conditions_of(&server, "/feed.xml");
    assert_eq!(reads.len(), 2, "{reads:?}");
    assert_eq!(reads[1], None, "the second read asks for the whole feed");
    assert_eq!(pages_stored_under(&db, "/f/").await, ENTRIES, "every entry");
}

/// A 304 keeps the sitemap's Cache-Control floor: only a 200's validators and floor wait for
/// its listing. A first build of the above withheld them on a 304 too, and the floor it wrote
/// as NULL let every later discovery read a sitemap its server asked to be left for an hour.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sitemap_answered_304_keeps_its_max_age() {
    let server =
        RecordingServer::start_with_clock(Arc::new(VirtualClock::new(ORIGIN_MS, 200.0))).await;
    let base = format!("http://{HOST}:{}", server.addr.port());
    server.route(
        HOST,
        "/robots.txt",
        Reply::text("User-agent: *\nAllow: /\n"),
    );
    let body = format!(
        r#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>{base}/p/0</loc></url></urlset>"#
    );
    serve_with_etag(
        &server,
        "/sitemap.xml",
        "application/xml",
        "\"s1\"",
        &[("cache-control", "max-age=3600")],
        body,
    );
    server.route(HOST, "/p/0", Reply::html("<p>0</p>"));
    let dir = tempfile::tempdir().unwrap();
    // Rediscovered every minute: only the server's hour keeps the sitemap from being read.
    let sitemaps = format!(
        "sitemaps = [\"{}\"]\nrediscover = \"0 * * * * *\"",
        server.url(HOST, "/sitemap.xml")
    );
    // Read whole; two hours on, past its hour: asked whether it changed (304); a minute after
    // that, inside the hour the 304 gave again: not asked.
    for offset_ms in [0, 2 * 3_600_000, 2 * 3_600_000 + 60_000] {
        let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS + offset_ms, 200.0));
        pass_over(&server, dir.path(), &clock, &sitemaps).await;
    }
    let reads = conditions_of(&server, "/sitemap.xml");
    assert_eq!(reads, vec![None, Some("\"s1\"".to_string())], "{reads:?}");
}
