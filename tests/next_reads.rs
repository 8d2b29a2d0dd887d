//! A sitemap's and a feed's `next_due` is their next planned read (issue 12): the sitemap's is
//! the site's next `rediscover` time, the feed's the scheduler's plan after the read, both after
//! the run; before, `report hosts` showed the pass's own time, in the past, for ever.

#[path = "support/freshet_bin.rs"]
mod freshet_bin;
#[path = "support/recording_server.rs"]
mod recording_server;

use freshet_bin::{now_ms, run_once, write_schedule};

use recording_server::{RecordingServer, Reply};

const HOST: &str = "127.0.0.1";
const TWO_SECONDS_MS: i64 = 2_000;

/// The latest next read of a sitemap in the database.
async fn db_max_due(db: &std::path::Path) -> i64 {
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    let (due,): (Option<i64>,) =
        sqlx::query_as("SELECT MAX(next_due_ms) FROM urls WHERE kind = 'sitemap'")
            .fetch_one(&pool)
            .await
            .unwrap();
    pool.close().await;
    due.expect("a sitemap row")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sitemaps_and_feeds_are_due_at_their_next_read() {
    let server = RecordingServer::start().await;
    let base = format!("http://{HOST}:{}", server.addr.port());
    server.route(
        HOST,
        "/robots.txt",
        Reply::text("User-agent: *\nAllow: /\n"),
    );
    // A day's max-age (nginx `expires 1d`): the second pass does not read the sitemap again.
    server.route(
        HOST,
        "/sitemap.txt",
        Reply::text(format!("{base}/a\n{base}/b\n")).header("cache-control", "max-age=86400"),
    );
    server.route(
        HOST,
        "/feed.xml",
        Reply::text(format!(
            "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>t</title>\
             <item><link>{base}/a</link><guid>a</guid>\
             <pubDate>Mon, 02 Nov 2026 10:00:00 GMT</pubDate></item></channel></rss>"
        ))
        .header("content-type", "application/rss+xml"),
    );
    server.route(HOST, "/a", Reply::html("<p>a</p>"));
    server.route(HOST, "/b", Reply::html("<p>b</p>"));
    let dir = tempfile::tempdir().unwrap();
    let schedule = write_schedule(
        dir.path(),
        &format!(
            "[[site]]\nname = \"local\"\nsitemaps = [\"{base}/sitemap.txt\"]\n\
             feeds = [\"{base}/feed.xml\"]\nrediscover = \"*/2 * * * * *\"\n\
             host_rate = \"20/s\"\nallow_networks = [\"127.0.0.0/8\"]\n"
        ),
    );
    let db = dir.path().join("f.db");
    run_once(&schedule, &db).await;
    // A second pass once the next rediscovery (every two seconds) has come: it skips the
    // sitemap (max-age), and its next read must still move on.
    let first = db_max_due(&db).await;
    while now_ms() <= first {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    run_once(&schedule, &db).await;
    let paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert!(paths.contains(&"/feed.xml".to_string()), "{paths:?}");

    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    let (ended,): (i64,) = sqlx::query_as("SELECT MAX(ended_ms) FROM runs")
        .fetch_one(&pool)
        .await
        .unwrap();
    let rows: Vec<(String, Option<i64>, Option<i64>)> = sqlx::query_as(
        "SELECT kind, last_checked_ms, next_due_ms FROM urls WHERE kind != 'page' ORDER BY kind",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    for (kind, checked, due) in &rows {
        let due = due.unwrap_or_else(|| panic!("{kind}: no next read"));
        assert!(checked.is_some(), "{kind} was read");
        assert!(
            due > ended,
            "{kind}: next read {due} is before the run's end {ended}"
        );
        if kind == "sitemap" {
            // The next rediscovery: on a two-second boundary, within two seconds.
            assert_eq!(due % TWO_SECONDS_MS, 0, "{due}");
            assert!(due - ended <= TWO_SECONDS_MS, "{due} vs {ended}");
        }
    }
    pool.close().await;
}
