//! The cross-host rule from the server's side: a feed or a sitemap speaks for its own host;
//! entries on another host are taken only when that host's robots.txt cross-submits the
//! document, and a refusal is recorded (issue 10: feed entries used to be added unchecked).

#[path = "support/recording_server.rs"]
mod recording_server;

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
    // for the feed with a robots.txt `Sitemap:` line has it read as a sitemap too, whose rule
    // the sitemap tests cover.)
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
    let db = dir.path().join("f.db");
    let schedule = dir.path().join("site.toml");
    std::fs::write(
        &schedule,
        format!(
            "[[site]]\nname = \"news\"\nfeeds = [\"{feed}\"]\nsitemaps = [\"{}\"]\nallow_networks = [\"127.0.0.0/8\"]\n",
            url("a.test", "/sitemap.xml"),
        ),
    )
    .unwrap();
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 200.0));
    let options = RunOptions {
        schedules: vec![schedule],
        db_path: db.clone(),
        once: true,
        clock,
        resolve: server.resolve(&["a.test", "b.test"]),
        policy: PolicyChoice::Learned,
        worker: Default::default(),
        run_lock: None,
    };
    refresher::run(options, std::future::pending())
        .await
        .expect("one pass");

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
