//! The cross-host rule from the server's side: a feed or a sitemap speaks for its own host;
//! entries on another host are taken only when that host's robots.txt cross-submits the
//! document, and a refusal is recorded (issue 10: feed entries used to be added unchecked).

#[path = "support/feed_site.rs"]
mod feed_site;
#[path = "support/recording_server.rs"]
mod recording_server;
#[path = "support/virtual_runs.rs"]
mod virtual_runs;

use std::sync::Arc;

use freshet::clock::{SharedClock, VirtualClock};
use freshet::refresher::{self, PolicyChoice, RunOptions};
use freshet::store::Store;
use recording_server::{RecordingServer, Reply};

/// 2021-01-01T00:00:00Z.
const ORIGIN_MS: i64 = 1_609_459_200_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn feed_and_sitemap_entries_on_other_hosts_need_a_cross_submission() {
    let server = RecordingServer::start().await;
    let url = |host: &str, path: &str| server.url(host, path).to_string();
    let feed = url("a.test", "/feed.xml");
    server.route(
        "a.test",
        "/robots.txt",
        Reply::text("User-agent: *\nAllow: /\n"),
    );
    // b.test is a stranger: a.test's feed and sitemap do not speak for it. (A host vouching
    // for the feed with a robots.txt `Sitemap:` line makes it speak for that host:
    // `a_feed_cross_submitted_from_its_own_host_is_read_as_a_feed`.)
    server.route(
        "b.test",
        "/robots.txt",
        Reply::text("User-agent: *\nAllow: /\n"),
    );
    server.route(
        "a.test",
        "/feed.xml",
        Reply::status(200)
            .header("content-type", "application/rss+xml")
            .body(format!(
                r#"<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
<item><link>{own}</link></item><item><link>{stranger}</link></item>
</channel></rss>"#,
                own = url("a.test", "/x"),
                stranger = url("b.test", "/y"),
            )),
    );
    server.route(
        "a.test",
        "/sitemap.xml",
        Reply::status(200)
            .header("content-type", "application/xml")
            .body(format!(
                r#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>{}</loc></url></urlset>"#,
                url("b.test", "/w")
            )),
    );
    for (host, path) in [("a.test", "/x"), ("b.test", "/y"), ("b.test", "/w")] {
        server.route(host, path, Reply::html(format!("<p>{host}{path}</p>")));
    }
    let dir = tempfile::tempdir().unwrap();
    let sitemap = url("a.test", "/sitemap.xml");
    let db = run_news_once(&server, dir.path(), &feed, &sitemap, &["a.test", "b.test"]).await;

    let paths = |host: &str| -> Vec<String> {
        server
            .requests_to(host)
            .iter()
            .map(|r| r.path.clone())
            .collect()
    };
    assert!(paths("a.test").contains(&"/feed.xml".to_string()));
    assert!(
        paths("a.test").contains(&"/x".to_string()),
        "{:?}",
        paths("a.test")
    );
    let stranger = paths("b.test");
    eprintln!(
        "cross-host: {} requests to the stranger host",
        stranger.len()
    );
    assert!(stranger.is_empty(), "{stranger:?}");

    let store = Store::open(&db).await.unwrap();
    assert!(store.url_row(&url("b.test", "/y")).await.unwrap().is_none());
    let errors = store.recent_errors(100).await.unwrap();
    store.close().await;
    for refused in ["/y", "/w"] {
        let refused = url("b.test", refused);
        assert!(
            errors
                .iter()
                .any(|(_, _, _, message)| message.contains(&refused)
                    && message.contains("cross-submitted")),
            "{refused} refusal not recorded: {errors:#?}"
        );
    }
}

/// A feed on a host of its own speaks for the pages' host when that host's robots.txt
/// cross-submits it (a `Sitemap:` line), and its pages wait for it as for a feed on their own
/// host. Discovery read it there as a sitemap: that check took the feed's place, the scheduler
/// never saw a read of it and planned it weekly as a feed worth nothing, and no page waited
/// for it (over 20 virtual hours, one request for the feed and no page waiting). It is now
/// read as a feed only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_cross_submitted_from_its_own_host_is_read_as_a_feed() {
    use feed_site::{Changes, FEED_HOST, HOST, HOUR_MS, ORIGIN_MS, Pages};
    let pages = Pages {
        count: 20,
        changes: Changes::Random { per_day: 1.0 },
        cut: None,
        unlisted: None,
        ttl_minutes: None,
    };
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 3_600.0));
    let server = Arc::new(RecordingServer::start_with_clock(clock.clone()).await);
    feed_site::serve_with_feed_on(&server, pages, FEED_HOST);
    let dir = tempfile::tempdir().unwrap();
    let schedule = feed_site::write_schedule_with_feed_on(dir.path(), &server, 100, FEED_HOST);
    let db = dir.path().join("freshet.db");
    let end_ms = ORIGIN_MS + 20 * HOUR_MS;
    let until = virtual_runs::clock_reaches(clock.clone(), end_ms);
    let hosts = [HOST, FEED_HOST];
    virtual_runs::run_schedule_on_until(&server, &clock, db.clone(), schedule, &hosts, until).await;
    let reads = feed_site::feed_reads_on(&server, FEED_HOST, ORIGIN_MS, end_ms);
    let (visits, lag_hours) = feed_site::page_visits(&server, pages, ORIGIN_MS, end_ms);
    let waiting = feed_site::pages_waiting(&db, &server, pages).await;
    let what = format!(
        "20 hours: {reads} reads of the feed; {waiting} of {} pages waiting for it; {visits} \
         page requests, changes fetched {lag_hours:.2} h after they came on average",
        pages.count
    );
    eprintln!("{what}");
    // Seen: 10 reads, 19 pages waiting, changes fetched 1.32 h after they came. Read as a
    // sitemap: 1 read, none waiting, 2.56 h.
    assert!(reads >= 5, "{what}");
    assert!(waiting >= pages.count / 2, "{what}");
}

/// A site's feed that its robots.txt names in a `Sitemap:` line and disallows: the feed's
/// check refuses it (a refusal, as any URL's), and discovery, which reached it as a sitemap,
/// leaves it to that check. Before, discovery also recorded the disallow as a sitemap's error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disallowed_feed_that_robots_txt_names_is_refused_once_as_a_feed() {
    let server = RecordingServer::start().await;
    let url = |path: &str| server.url("a.test", path).to_string();
    let feed = url("/feed.xml");
    let robots = format!("User-agent: *\nDisallow: /feed.xml\nSitemap: {feed}\n");
    server.route("a.test", "/robots.txt", Reply::text(robots));
    let page = url("/p");
    server.route("a.test", "/sitemap.xml", Reply::sitemap([&page]));
    server.route("a.test", "/p", Reply::html("<p>p</p>"));
    let dir = tempfile::tempdir().unwrap();
    let db = run_news_once(
        &server,
        dir.path(),
        &feed,
        &url("/sitemap.xml"),
        &["a.test"],
    )
    .await;

    let paths: Vec<String> = (server.requests_to("a.test").iter())
        .map(|r| r.path.clone())
        .collect();
    assert!(!paths.contains(&"/feed.xml".to_string()), "{paths:?}");
    assert!(paths.contains(&"/p".to_string()), "{paths:?}");
    let store = Store::open(&db).await.unwrap();
    let errors = store.recent_errors(100).await.unwrap();
    let refusals = store.refusals_of(&feed).await.unwrap();
    assert_eq!(
        store.url_row(&feed).await.unwrap().expect("its row").kind,
        "feed"
    );
    store.close().await;
    let of_feed: Vec<_> = (errors.iter())
        .filter(|(_, _, at, _)| at.as_deref() == Some(feed.as_str()))
        .collect();
    assert!(of_feed.is_empty(), "{of_feed:#?}");
    let reasons: Vec<&str> = refusals.iter().map(|r| r.reason.as_str()).collect();
    assert_eq!(reasons, ["robots"], "{refusals:#?}");
}

/// Runs one pass (`--once`) of a site "news" with `feed` and `sitemap`, `hosts` resolved to
/// `server`, on a SQLite file in `dir`, which it returns.
async fn run_news_once(
    server: &RecordingServer,
    dir: &std::path::Path,
    feed: &str,
    sitemap: &str,
    hosts: &[&str],
) -> std::path::PathBuf {
    let db = dir.join("f.db");
    let schedule = dir.join("site.toml");
    std::fs::write(
        &schedule,
        format!(
            "[[site]]\nname = \"news\"\nfeeds = [\"{feed}\"]\nsitemaps = [\"{sitemap}\"]\nallow_networks = [\"127.0.0.0/8\"]\n"
        ),
    )
    .unwrap();
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 200.0));
    let options = RunOptions {
        schedules: vec![schedule],
        db_path: db.clone(),
        once: true,
        clock,
        resolve: server.resolve(hosts),
        policy: PolicyChoice::Learned,
        worker: Default::default(),
        run_lock: None,
    };
    refresher::run(options, std::future::pending())
        .await
        .expect("one pass");
    db
}
