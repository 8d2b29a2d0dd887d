//! Edits to a schedule file between two runs take effect at the next run, as the server sees
//! it: a renamed site keeps fetching its URLs (they were the old name's, which no run plans);
//! a sitemap added to a site is read at once, not at the next `rediscover` time, and a run
//! after it reads nothing again for it; a new `exclude` stops the requests to URLs already
//! known, and `explain` says which rule did (taken out again, they are fetched again); a URL
//! checked as a page that the schedule then names as a sitemap is read as one.

#[path = "support/freshet_bin.rs"]
mod freshet_bin;
#[path = "support/postgres.rs"]
mod postgres;
#[path = "support/recording_server.rs"]
mod recording_server;

use std::path::Path;

use freshet_bin::{run_once, write_schedule};
use recording_server::{RecordingServer, Reply};

const HOST: &str = "127.0.0.1";

/// A site named `name` reading `sitemaps`, rediscovered daily, with a budget no test spends and
/// `extra` schedule lines.
fn site(name: &str, sitemaps: &[String], extra: &str) -> String {
    let sitemaps: Vec<String> = sitemaps.iter().map(|s| format!("\"{s}\"")).collect();
    format!(
        "[[site]]\nname = \"{name}\"\nsitemaps = [{}]\nrediscover = \"0 0 3 * * *\"\n\
         requests_per_day = 100000\n\
         host_rate = \"50/s\"\nallow_networks = [\"127.0.0.0/8\"]\n{extra}",
        sitemaps.join(", ")
    )
}

/// Serves robots.txt (disallowing `/private/`), `/a`, `/b`, `/c` and three sitemaps:
/// `/one.txt` lists `/a` and `/b` (with an ETag, answering 304 to it), `/two.txt` lists `/c`,
/// `/private/three.txt` lists `/a`.
fn serve(server: &RecordingServer, base: &str) {
    let robots = Reply::text("User-agent: *\nDisallow: /private/\n");
    server.route(HOST, "/robots.txt", robots);
    let one = format!("{base}/a\n{base}/b\n");
    server.handle(HOST, "/one.txt", move |request| {
        let reply = if request.header("if-none-match") == Some("\"one\"") {
            Reply::status(304)
        } else {
            Reply::text(one.clone())
        };
        reply.header("etag", "\"one\"").to_response()
    });
    server.route(HOST, "/two.txt", Reply::text(format!("{base}/c\n")));
    let three = Reply::text(format!("{base}/a\n"));
    server.route(HOST, "/private/three.txt", three);
    for page in ["a", "b", "c"] {
        let reply = Reply::html(format!("<p>{page}</p>"));
        server.route(HOST, &format!("/{page}"), reply);
    }
}

/// How many requests the server saw for `path`.
fn requests_for(server: &RecordingServer, path: &str) -> usize {
    server.requests().iter().filter(|r| r.path == path).count()
}

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

/// A URL checked as a page (a seed) that the schedule then names as a sitemap is read as one
/// from the next run on: its pages come, and it is no longer checked as a page as well.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seed_named_a_sitemap_later_is_read_as_a_sitemap() {
    let dir = tempfile::tempdir().unwrap();
    a_seed_named_a_sitemap_later(dir.path(), &dir.path().join("f.db")).await;
}

/// The same on PostgreSQL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seed_named_a_sitemap_later_is_read_as_a_sitemap_on_postgres() {
    let Some(db) = postgres::postgres_database("a_seed_named_a_sitemap_later").await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    a_seed_named_a_sitemap_later(dir.path(), Path::new(&db)).await;
}

async fn a_seed_named_a_sitemap_later(dir: &Path, db: &Path) {
    let server = RecordingServer::start().await;
    let base = format!("http://{HOST}:{}", server.addr.port());
    serve(&server, &base);
    let one = format!("{base}/one.txt");
    let two = format!("{base}/two.txt");
    let seeded = site(
        "s",
        std::slice::from_ref(&one),
        &format!("seeds = [\"{two}\"]\n"),
    );
    run_once(&write_schedule(dir, &seeded), db).await;
    assert_eq!(
        (
            requests_for(&server, "/two.txt"),
            requests_for(&server, "/c")
        ),
        (1, 0),
        "checked as a page"
    );
    let kind = || async {
        let store = freshet::store::Store::open_existing(db).await.unwrap();
        let row = store.url_row(&two).await.unwrap().expect("its row");
        store.close().await;
        row.kind
    };
    assert_eq!(kind().await, "page");

    run_once(
        &write_schedule(dir, &site("s", &[one, two.clone()], "")),
        db,
    )
    .await;
    assert_eq!(kind().await, "sitemap");
    assert_eq!(
        (
            requests_for(&server, "/two.txt"),
            requests_for(&server, "/c")
        ),
        (2, 1),
        "read as a sitemap, its page checked: {:?}",
        server.requests()
    );
}

/// A page a sitemap listed that the host's robots.txt names as a sitemap (no schedule names
/// it) is a sitemap from then on, named by the robots.txt: read as one, and no longer checked
/// as a page as well. (Its row stayed a page's.) An HTML page a robots.txt names so stays a
/// page, its read as a sitemap not recorded as its check; a seed is not read as a sitemap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listed_page_that_robots_txt_names_a_sitemap_is_read_only_as_one() {
    let dir = tempfile::tempdir().unwrap();
    a_listed_page_named_a_sitemap(dir.path(), &dir.path().join("f.db")).await;
}

/// The same on PostgreSQL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listed_page_that_robots_txt_names_a_sitemap_is_read_only_as_one_on_postgres() {
    let test = "a_listed_page_named_a_sitemap";
    let Some(db) = postgres::postgres_database(test).await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    a_listed_page_named_a_sitemap(dir.path(), Path::new(&db)).await;
}

async fn a_listed_page_named_a_sitemap(dir: &Path, db: &Path) {
    let server = RecordingServer::start().await;
    let base = format!("http://{HOST}:{}", server.addr.port());
    serve(&server, &base);
    // /one.txt lists /s.txt and /b first (as pages); robots.txt names them as sitemaps after,
    // and a seed too. /s.txt reads as a sitemap; /b is an HTML page; the seed is the schedule's.
    let named = ["/s.txt", "/b", "/seed.txt"].map(|path| format!("Sitemap: {base}{path}\n"));
    let robots = format!("User-agent: *\nDisallow: /private/\n{}", named.concat());
    server.route(HOST, "/robots.txt", Reply::text(robots));
    let one = format!("{base}/a\n{base}/s.txt\n{base}/b\n");
    server.route(HOST, "/one.txt", Reply::text(one));
    server.route(HOST, "/s.txt", Reply::text(format!("{base}/c\n")));
    server.route(HOST, "/seed.txt", Reply::text(format!("{base}/a\n")));
    let seeds = format!("seeds = [\"{base}/seed.txt\"]\n");
    let sitemaps = [format!("{base}/one.txt")];
    run_once(&write_schedule(dir, &site("s", &sitemaps, &seeds)), db).await;
    let store = freshet::store::Store::open_existing(db).await.unwrap();
    let mut rows = Vec::new();
    let mut checks = Vec::new();
    for path in ["/s.txt", "/b", "/seed.txt"] {
        let row = store.url_row(&format!("{base}{path}")).await.unwrap();
        let row = row.expect("its row");
        checks.push(store.observations_for(row.id, 100).await.unwrap().len());
        rows.push((path, row.kind, row.discovered_from));
    }
    let errors = store.recent_errors(100).await.unwrap();
    store.close().await;
    let what = format!("{rows:?}: {errors:?}: {:?}", server.requests());
    let robots_url = format!("{base}/robots.txt");
    assert_eq!(
        rows[0],
        ("/s.txt", "sitemap".into(), Some(robots_url.clone())),
        "a sitemap, named by the robots.txt: {what}"
    );
    assert_eq!(rows[1].1, "page", "no sitemap: {what}");
    assert_eq!(
        (checks[1], requests_for(&server, "/b")),
        (1, 2),
        "checked as a page, and read once as a sitemap, not recorded: {what}"
    );
    assert_eq!(rows[2].1, "page", "a seed: {what}");
    assert_eq!(
        (checks[2], requests_for(&server, "/seed.txt")),
        (1, 1),
        "checked as a page only: {what}"
    );
    let seed = format!("{base}/seed.txt");
    let said = |(_, _, url, message): &(i64, String, Option<String>, String)| {
        url.as_deref() == Some(seed.as_str()) && message.contains("names it a seed")
    };
    assert!(errors.iter().any(said), "said why it is not read: {what}");
    assert_eq!(
        requests_for(&server, "/s.txt"),
        1,
        "read once, as a sitemap: {what}"
    );
    assert_eq!(requests_for(&server, "/c"), 1, "its page: {what}");
}

/// A page checked as one already that an index names as a sitemap later is read to learn
/// what it is, and its read is recorded only if it is one: a text sitemap becomes a sitemap
/// (its page comes), an HTML page stays a page with its own copy and plan, the read not
/// recorded over them (before, discovery's read was written on the page's row as a check),
/// and it is read so once a pass, however many name it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checked_page_an_index_names_a_sitemap_later_is_probed() {
    let dir = tempfile::tempdir().unwrap();
    a_checked_page_named_a_sitemap(dir.path(), &dir.path().join("f.db")).await;
}

/// The same on PostgreSQL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checked_page_an_index_names_a_sitemap_later_is_probed_on_postgres() {
    let test = "a_checked_page_named_a_sitemap";
    let Some(db) = postgres::postgres_database(test).await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    a_checked_page_named_a_sitemap(dir.path(), Path::new(&db)).await;
}

async fn a_checked_page_named_a_sitemap(dir: &Path, db: &Path) {
    let server = RecordingServer::start().await;
    let base = format!("http://{HOST}:{}", server.addr.port());
    serve(&server, &base);
    // /one.txt lists /s.txt (a text sitemap listing /c) and /b (an HTML page) as pages.
    let one = format!("{base}/a\n{base}/s.txt\n{base}/b\n");
    server.route(HOST, "/one.txt", Reply::text(one));
    server.route(HOST, "/s.txt", Reply::text(format!("{base}/c\n")));
    let children = ["/s.txt", "/b"].map(|path| format!("{base}{path}"));
    server.route(HOST, "/index.xml", Reply::sitemap_index(&children));
    // robots.txt names /b too: read as a sitemap once a pass all the same.
    let robots = format!("User-agent: *\nDisallow: /private/\nSitemap: {base}/b\n");
    server.route(HOST, "/robots.txt", Reply::text(robots));
    // Checked as pages first (/s.txt and /c are counted below).
    let one_url = format!("{base}/one.txt");
    let first = site("s", std::slice::from_ref(&one_url), "");
    run_once(&write_schedule(dir, &first), db).await;

    // The index added: a pass at once, which reads it and so finds its children named.
    let index = format!("{base}/index.xml");
    let sitemaps = [one_url, index.clone()];
    run_once(&write_schedule(dir, &site("s", &sitemaps, "")), db).await;
    let store = freshet::store::Store::open_existing(db).await.unwrap();
    let mut rows = Vec::new();
    for path in ["/s.txt", "/b"] {
        let row = store.url_row(&format!("{base}{path}")).await.unwrap();
        let row = row.expect("its row");
        let checks = store.observations_for(row.id, 100).await.unwrap().len();
        rows.push((row.kind, row.discovered_from, checks));
    }
    let errors = store.recent_errors(100).await.unwrap();
    store.close().await;
    let what = format!("{rows:?}: {errors:?}: {:?}", server.requests());
    let sitemap = ("sitemap".to_string(), Some(index.clone()), 2);
    assert_eq!(rows[0], sitemap, "a sitemap, its read recorded: {what}");
    assert_eq!(
        (requests_for(&server, "/s.txt"), requests_for(&server, "/c")),
        (2, 1),
        "read once, as a sitemap, and its page checked: {what}"
    );
    assert_eq!(rows[1].0, "page", "an HTML page: {what}");
    assert_eq!(
        rows[1].2 + 2,
        requests_for(&server, "/b"),
        "every check of it recorded, and the one read of each pass not: {what}"
    );
    let stays = |(_, _, url, message): &(i64, String, Option<String>, String)| {
        url.as_deref() == Some(&format!("{base}/b")) && message.contains("stays a page")
    };
    assert!(
        errors.iter().any(stays),
        "said why it is no sitemap: {what}"
    );
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
