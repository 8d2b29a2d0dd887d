//! A URL stored as a page that a schedule, a robots.txt or an index names as a sitemap, as the
//! server sees it: a seed the schedule names a sitemap later is read as one from the next run;
//! a page a urlset listed that robots.txt names a sitemap is read only as one; a page checked
//! before an index names it is read to learn what it is, and becomes a sitemap only if it reads
//! as one (the dedup engine forgetting it as a page), else stays a page and says why.

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
    // Its kind, and whether the dedup engine holds its text as a page's.
    let kind = || async {
        let store = freshet::store::Store::open_existing(db).await.unwrap();
        let row = store.url_row(&two).await.unwrap().expect("its row");
        let filed = store.load_dedup_state().await.unwrap().urls;
        store.close().await;
        (row.kind, filed.iter().any(|record| record.url == two))
    };
    assert_eq!(kind().await, ("page".into(), true));

    run_once(
        &write_schedule(dir, &site("s", &[one, two.clone()], "")),
        db,
    )
    .await;
    assert_eq!(kind().await, ("sitemap".into(), false));
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
    let filed = store.load_dedup_state().await.unwrap().urls;
    let filed: Vec<String> = filed.into_iter().map(|record| record.url).collect();
    let documents = store.documents().await.unwrap();
    let documents: Vec<String> = documents.into_iter().map(|doc| doc.url).collect();
    store.close().await;
    let what = format!("{rows:?}: {errors:?}: {:?}", server.requests());
    let sitemap = ("sitemap".to_string(), Some(index.clone()), 2);
    assert_eq!(rows[0], sitemap, "a sitemap, its read recorded: {what}");
    // Checked as a page first, its text was filed and kept as a page's: no more.
    let (s, b) = (format!("{base}/s.txt"), format!("{base}/b"));
    let what = format!("{what}: filed {filed:?}, documents {documents:?}");
    assert!(!filed.contains(&s) && !documents.contains(&s), "{what}");
    assert!(filed.contains(&b) && documents.contains(&b), "{what}");
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

/// The URLs whose text the dedup engine holds as a page's, in the database at `db`.
async fn filed(db: &Path) -> Vec<String> {
    let store = freshet::store::Store::open_existing(db).await.unwrap();
    let state = store.load_dedup_state().await.unwrap();
    store.close().await;
    state.urls.into_iter().map(|record| record.url).collect()
}

/// A page that redirects to one of the site's sitemaps (a text sitemap, which the engine would
/// take for a page) files no content for the sitemap: it is a redirect only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_redirecting_to_a_sitemap_files_no_page_for_it() {
    let server = RecordingServer::start().await;
    let base = format!("http://{HOST}:{}", server.addr.port());
    serve(&server, &base);
    let two = format!("{base}/two.txt");
    let moved = Reply::redirect(301, &two);
    server.route(HOST, "/old", moved);
    // (With a tracking parameter, which the engine drops: it files under the sitemap's URL.)
    let tracked = Reply::redirect(302, &format!("{two}?utm_source=x"));
    server.route(HOST, "/older", tracked);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    let seeds = format!("seeds = [\"{base}/old\", \"{base}/older\"]\n");
    let seeded = site("s", std::slice::from_ref(&two), &seeds);
    run_once(&write_schedule(dir.path(), &seeded), &db).await;
    let requests = format!("{:?}", server.requests());
    assert_eq!(requests_for(&server, "/old"), 1, "{requests}");
    assert_eq!(requests_for(&server, "/older"), 1, "{requests}");
    assert!(requests_for(&server, "/two.txt") >= 2, "{requests}");
    let filed = filed(&db).await;
    assert!(!filed.contains(&two), "{filed:?}: {requests}");
}

/// A URL whose row became a sitemap while the dedup engine held it as a page (a database of a
/// version before the engine forgot, a kill before its save) is forgotten at the next start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sitemap_the_engine_held_as_a_page_is_forgotten_at_the_next_start() {
    let server = RecordingServer::start().await;
    let base = format!("http://{HOST}:{}", server.addr.port());
    serve(&server, &base);
    let (one, two) = (format!("{base}/one.txt"), format!("{base}/two.txt"));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    let seeded = site(
        "s",
        std::slice::from_ref(&one),
        &format!("seeds = [\"{two}\"]\n"),
    );
    run_once(&write_schedule(dir.path(), &seeded), &db).await;
    assert!(filed(&db).await.contains(&two), "checked as a page");
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    sqlx::query("UPDATE urls SET kind = 'sitemap' WHERE url = $1")
        .bind(&two)
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;

    run_once(&write_schedule(dir.path(), &site("s", &[one], "")), &db).await;
    let filed = filed(&db).await;
    assert!(!filed.contains(&two), "{filed:?}");
}
