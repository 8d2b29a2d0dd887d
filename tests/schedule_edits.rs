//! Edits to a schedule file between two runs take effect at the next run, as the server sees
//! it: a renamed site keeps fetching its URLs (they were the old name's, which no run plans);
//! a sitemap added to a site is read at once, not at the next `rediscover` time, and a run
//! after it reads nothing again for it; a new `exclude` stops the requests to URLs already
//! known, and `explain` says which rule did (taken out again, they are fetched again). (A URL
//! stored as a page that is named a sitemap later: `pages_named_sitemaps.rs`.)

#[path = "support/edits_site.rs"]
mod edits_site;
#[path = "support/freshet_bin.rs"]
mod freshet_bin;
#[path = "support/postgres.rs"]
mod postgres;
#[path = "support/recording_server.rs"]
mod recording_server;

use std::path::Path;

use edits_site::{HOST, requests_for, serve, site};
use freshet_bin::{run_once, write_schedule};
use recording_server::{RecordingServer, Reply};

async fn sqlite(db: &Path) -> sqlx::SqlitePool {
    sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap()
}

/// When site `s` last completed a discovery pass.
async fn discovered_ms(db: &Path) -> Option<i64> {
    let store = freshet::store::Store::open_existing(db).await.unwrap();
    let site = store.site_id("s").await.unwrap().expect("site s");
    let discovered = store.site_discovered_ms(site).await.unwrap();
    store.close().await;
    discovered
}

/// Waits until every page's planned next visit has come (the budget is large: seconds).
async fn wait_until_pages_due(db: &Path) {
    let pool = sqlite(db).await;
    let (due,): (Option<i64>,) =
        sqlx::query_as("SELECT MAX(next_due_ms) FROM urls WHERE kind = 'page'")
            .fetch_one(&pool)
            .await
            .unwrap();
    pool.close().await;
    let due = due.expect("planned pages");
    while freshet_bin::now_ms() <= due {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renamed_site_fetches_its_urls_with_their_history() {
    let server = RecordingServer::start().await;
    let base = format!("http://{HOST}:{}", server.addr.port());
    serve(&server, &base);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    let sitemaps = [format!("{base}/one.txt")];
    run_once(
        &write_schedule(dir.path(), &site("old", &sitemaps, "")),
        &db,
    )
    .await;
    assert_eq!(requests_for(&server, "/a"), 1);

    wait_until_pages_due(&db).await;
    run_once(
        &write_schedule(dir.path(), &site("new", &sitemaps, "")),
        &db,
    )
    .await;
    assert_eq!(
        requests_for(&server, "/a"),
        2,
        "the renamed site did not fetch its page again: {:?}",
        server.requests()
    );
    // Its sitemap is unchanged (a 304 lists nothing): asked whole, so it lists the pages.
    let asked: Vec<Option<String>> = (server.requests().iter())
        .filter(|r| r.path == "/one.txt")
        .map(|r| r.header("if-none-match").map(str::to_string))
        .collect();
    assert_eq!(asked, [None, None], "the renamed site's sitemap read");
    let pool = sqlite(&db).await;
    let owners: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT u.url, s.name, (SELECT COUNT(*) FROM observations o WHERE o.url_id = u.id)
         FROM urls u JOIN sites s ON s.id = u.site_id WHERE u.kind = 'page' ORDER BY u.url",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(owners.len(), 2, "{owners:?}");
    for (url, owner, checks) in &owners {
        assert_eq!(owner, "new", "{url} stayed with the old name");
        assert_eq!(
            *checks, 2,
            "{url}: the history of both names is one history"
        );
    }
    let (unscheduled,): (Option<i64>,) =
        sqlx::query_as("SELECT unscheduled_ms FROM sites WHERE name = 'old'")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert!(unscheduled.is_some(), "the old name is marked unscheduled");
    pool.close().await;

    // The rename undone: the old name takes them back at once, not at its next rediscover
    // time (its sources were seen, under the name now out of the schedules).
    wait_until_pages_due(&db).await;
    run_once(
        &write_schedule(dir.path(), &site("old", &sitemaps, "")),
        &db,
    )
    .await;
    assert_eq!(requests_for(&server, "/a"), 3, "{:?}", server.requests());
    let pool = sqlite(&db).await;
    let owners: Vec<(String,)> =
        sqlx::query_as("SELECT DISTINCT s.name FROM urls u JOIN sites s ON s.id = u.site_id")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(
        owners,
        [("old".to_string(),)],
        "every URL back with the old name"
    );
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renamed_sites_feed_is_read_at_once_and_its_pages_come_along() {
    let server = RecordingServer::start().await;
    let base = format!("http://{HOST}:{}", server.addr.port());
    serve(&server, &base);
    // A feed whose one entry is a page no sitemap lists.
    server.route(
        HOST,
        "/feed.xml",
        Reply::text(format!(
            "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>t</title>\
             <item><link>{base}/c</link><guid>c</guid>\
             <pubDate>Mon, 02 Nov 2026 10:00:00 GMT</pubDate></item></channel></rss>"
        ))
        .header("content-type", "application/rss+xml")
        .header("etag", "\"feed\""),
    );
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    let feeds = format!("feeds = [\"{base}/feed.xml\"]\n");
    let sitemaps = [format!("{base}/one.txt")];
    run_once(
        &write_schedule(dir.path(), &site("old", &sitemaps, &feeds)),
        &db,
    )
    .await;
    assert_eq!(requests_for(&server, "/feed.xml"), 1);
    assert_eq!(requests_for(&server, "/c"), 1);

    run_once(
        &write_schedule(dir.path(), &site("new", &sitemaps, &feeds)),
        &db,
    )
    .await;
    let feed_reads: Vec<Option<String>> = (server.requests().iter())
        .filter(|r| r.path == "/feed.xml")
        .map(|r| r.header("if-none-match").map(str::to_string))
        .collect();
    assert_eq!(
        feed_reads,
        [None, None],
        "the feed is read again at the rename, whole: {:?}",
        server.requests()
    );
    let pool = sqlite(&db).await;
    let (owner,): (String,) = sqlx::query_as(
        "SELECT s.name FROM urls u JOIN sites s ON s.id = u.site_id WHERE u.url LIKE '%/c'",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(owner, "new", "the page only the feed names came along");
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_added_sitemap_is_read_at_the_next_run_and_only_once() {
    let dir = tempfile::tempdir().unwrap();
    an_added_sitemap_is_read_once(dir.path(), &dir.path().join("f.db")).await;
}

/// The same on PostgreSQL, where a worker leases its hosts and reads the sitemaps on the hosts it
/// holds: the server sees the same requests.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_added_sitemap_is_read_at_the_next_run_and_only_once_on_postgres() {
    let test = "an_added_sitemap_is_read_once_on_postgres";
    let Some(db) = postgres::postgres_database(test).await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    an_added_sitemap_is_read_once(dir.path(), Path::new(&db)).await;
}

async fn an_added_sitemap_is_read_once(dir: &Path, db: &Path) {
    let server = RecordingServer::start().await;
    let base = format!("http://{HOST}:{}", server.addr.port());
    serve(&server, &base);
    let one = format!("{base}/one.txt");
    let two = format!("{base}/two.txt");
    run_once(
        &write_schedule(dir, &site("s", std::slice::from_ref(&one), "")),
        db,
    )
    .await;
    assert_eq!(requests_for(&server, "/one.txt"), 1);
    assert_eq!(requests_for(&server, "/c"), 0);

    // The site was discovered a moment ago and is not due again before 03:00.
    // The third is disallowed by robots.txt: never read, but seen.
    let three = format!("{base}/private/three.txt");
    let both = site("s", &[one, two, three], "");
    run_once(&write_schedule(dir, &both), db).await;
    assert_eq!(
        (
            requests_for(&server, "/two.txt"),
            requests_for(&server, "/c")
        ),
        (1, 1),
        "the added sitemap and its page wait for the next rediscover time: {:?}",
        server.requests()
    );
    let sitemap_reads = requests_for(&server, "/one.txt") + requests_for(&server, "/two.txt");

    // Nothing new in the schedule: no pass, no sitemap read.
    let robots_reads = requests_for(&server, "/robots.txt");
    // On PostgreSQL a worker's first lease round gains its hosts, and a pass runs for the sites
    // on them (another worker may have left their sitemaps unread); it reads only what is due,
    // so the server sees nothing of it.
    let sqlite = !db.to_string_lossy().starts_with("postgres://");
    let discovered = if sqlite {
        discovered_ms(db).await
    } else {
        None
    };
    run_once(&write_schedule(dir, &both), db).await;
    if sqlite {
        assert_eq!(
            discovered_ms(db).await,
            discovered,
            "a run with nothing new made a discovery pass"
        );
    }
    assert_eq!(
        requests_for(&server, "/one.txt") + requests_for(&server, "/two.txt"),
        sitemap_reads,
        "a run with nothing new read the sitemaps again: {:?}",
        server.requests()
    );
    assert_eq!(requests_for(&server, "/robots.txt"), robots_reads);
    assert_eq!(requests_for(&server, "/private/three.txt"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_exclude_stops_requests_to_known_urls_and_explain_names_it() {
    let server = RecordingServer::start().await;
    let base = format!("http://{HOST}:{}", server.addr.port());
    serve(&server, &base);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    let sitemaps = [format!("{base}/one.txt")];
    run_once(&write_schedule(dir.path(), &site("s", &sitemaps, "")), &db).await;
    assert_eq!(requests_for(&server, "/b"), 1);

    wait_until_pages_due(&db).await;
    let excluding = site("s", &sitemaps, "exclude = [\"/b$\"]\n");
    let schedule = write_schedule(dir.path(), &excluding);
    run_once(&schedule, &db).await;
    assert_eq!(requests_for(&server, "/a"), 2, "{:?}", server.requests());
    assert_eq!(
        requests_for(&server, "/b"),
        1,
        "an excluded URL was fetched: {:?}",
        server.requests()
    );

    let text = explain(&base, &db);
    assert!(!text.contains("no longer holds"), "{text}");
    assert!(
        text.contains("/b$"),
        "explain does not name the rule:\n{text}"
    );
    assert!(
        text.contains("next due -"),
        "explain shows a visit that will not come:\n{text}"
    );

    // A restart under the rule hands it out no more: it was refused once.
    wait_until_pages_due(&db).await;
    run_once(&schedule, &db).await;
    assert_eq!(requests_for(&server, "/a"), 3, "{:?}", server.requests());
    let pool = sqlite(&db).await;
    let (times,): (i64,) = sqlx::query_as("SELECT times FROM refusals WHERE url LIKE '%/b'")
        .fetch_one(&pool)
        .await
        .unwrap();
    pool.close().await;
    assert_eq!(
        times, 1,
        "the excluded URL was handed out and refused again"
    );

    // The rule taken out again: the URL is planned and fetched as before.
    wait_until_pages_due(&db).await;
    run_once(&write_schedule(dir.path(), &site("s", &sitemaps, "")), &db).await;
    assert_eq!(requests_for(&server, "/b"), 2, "{:?}", server.requests());
    let text = explain(&base, &db);
    assert!(
        text.contains("/b$") && text.contains("no longer holds: checked since"),
        "explain lists the lifted refusal as if it held:\n{text}"
    );
}

/// What `freshet explain {base}/b` prints.
fn explain(base: &str, db: &Path) -> String {
    let explain = std::process::Command::new(env!("CARGO_BIN_EXE_freshet"))
        .args(["explain", &format!("{base}/b"), "--db"])
        .arg(db)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&explain.stdout).into_owned();
    assert!(explain.status.success(), "{text}");
    text
}
