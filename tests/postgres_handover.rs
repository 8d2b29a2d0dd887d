//! Several workers on one PostgreSQL database: a redirect to a host another worker holds, and a
//! sitemap a robots.txt names on such a host, are handed to that host's holder, which fetches
//! them; checked from the server's side.
//!
//! A worker `w` runs one pass while the database says another worker holds `b.test`: `w` sends
//! nothing to `b.test` (not even its robots.txt), records `a.test/old`'s 301 as the redirect it
//! is (no error), and stores `b.test/new` and `b.test/sitemap.xml` for their holder. Then the
//! other worker holds `a.test` instead and `w` runs again: it holds `b.test` now and fetches
//! both, and the sitemap (cross-submitted by `a.test`'s robots.txt) adds its `a.test` page for
//! the other worker. A redirect whose target moves at every check hands over its first target
//! only.
//!
//! Needs `FRESHET_TEST_POSTGRES` (see tests/postgres_store.rs); SKIPPED without it unless
//! `FRESHET_REQUIRE_POSTGRES=1`.

#[path = "support/postgres.rs"]
mod postgres;
#[path = "support/recording_server.rs"]
mod recording_server;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use freshet::clock::{SharedClock, VirtualClock};
use freshet::refresher::{self, PolicyChoice, RunOptions, WorkerOptions};
use postgres::postgres_database;
use recording_server::{Recorded, RecordingServer, Reply};

/// 2021-01-01T00:00:00Z.
const ORIGIN_MS: i64 = 1_609_459_200_000;
const DAY_MS: i64 = 86_400_000;

async fn one_pass(server: &RecordingServer, schedule: &Path, db: &str, start_ms: i64) {
    let clock: SharedClock = Arc::new(VirtualClock::new(start_ms, 200.0));
    let options = RunOptions {
        schedules: vec![schedule.to_path_buf()],
        db_path: PathBuf::from(db),
        once: true,
        clock,
        resolve: server.resolve(&["a.test", "b.test"]),
        policy: PolicyChoice::Learned,
        worker: WorkerOptions {
            name: Some("w".into()),
            ..Default::default()
        },
        run_lock: None,
    };
    refresher::run(options, std::future::pending())
        .await
        .expect("one pass");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_and_a_sitemap_on_a_host_held_elsewhere_go_to_its_holder() {
    let Some(db) = postgres_database("handover").await else {
        return;
    };
    let server = RecordingServer::start().await;
    let url = |host: &str, path: &str| server.url(host, path).to_string();
    server.route(
        "a.test",
        "/robots.txt",
        Reply::text(format!(
            "User-agent: *\nAllow: /\nSitemap: {}\n",
            url("b.test", "/sitemap.xml")
        )),
    );
    server.route(
        "b.test",
        "/robots.txt",
        Reply::text("User-agent: *\nAllow: /\n"),
    );
    server.route(
        "a.test",
        "/sitemap.txt",
        Reply::text(format!(
            "{}\n{}\n{}\n",
            url("a.test", "/x"),
            url("a.test", "/old"),
            url("a.test", "/rotating")
        )),
    );
    server.route(
        "a.test",
        "/x",
        Reply::html("<p>x, an article on a.test</p>"),
    );
    server.route(
        "a.test",
        "/old",
        Reply::redirect(301, &url("b.test", "/new")),
    );
    server.route("b.test", "/new", Reply::html("<p>new, moved to b.test</p>"));
    // A redirect whose target moves at every request (a trap): it hands over the first target
    // only, not one URL per check.
    let b_base = url("b.test", "/");
    server.handle("a.test", "/rotating", move |request: &Recorded| {
        Reply::redirect(302, &format!("{b_base}r{}", request.hit)).to_response()
    });
    server.route(
        "b.test",
        "/sitemap.xml",
        Reply::status(200)
            .header("content-type", "application/xml")
            .body(format!(
                r#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>{}</loc></url><url><loc>{}</loc></url></urlset>"#,
                url("b.test", "/listed"),
                url("a.test", "/cross")
            )),
    );
    server.route("b.test", "/listed", Reply::html("<p>listed on b.test</p>"));
    let dir = tempfile::tempdir().unwrap();
    let schedule = dir.path().join("site.toml");
    std::fs::write(
        &schedule,
        format!(
            "[[site]]\nname = \"s\"\nsitemaps = [\"{}\"]\nhost_rate = \"10/s\"\nallow_networks = [\"127.0.0.0/8\"]\n",
            url("a.test", "/sitemap.txt"),
        ),
    )
    .unwrap();

    // Another worker, alive, holds b.test: `w`'s share is one host, a.test.
    let store = freshet::store::Store::open(std::path::Path::new(&db))
        .await
        .expect("migrate");
    store.close().await;
    let pool = sqlx::PgPool::connect(&db).await.expect("connect");
    let b_key = freshet::politeness::host_key(&url::Url::parse(&url("b.test", "/")).unwrap());
    let forever = i64::MAX / 4;
    sqlx::query(
        "INSERT INTO leases (kind, key, worker, until_ms) VALUES ('host', $1, 'other', $2),
         ('worker', 'other', 'other', $2)",
    )
    .bind(&b_key)
    .bind(forever)
    .execute(&pool)
    .await
    .unwrap();

    one_pass(&server, &schedule, &db, ORIGIN_MS).await;
    // A day later, the same: the redirects are checked again.
    one_pass(&server, &schedule, &db, ORIGIN_MS + DAY_MS).await;

    let to_b = server.requests_to("b.test");
    assert!(
        to_b.is_empty(),
        "b.test is another worker's: {:?}",
        to_b.iter().map(|r| &r.path).collect::<Vec<_>>()
    );
    let a_paths: Vec<String> = server
        .requests_to("a.test")
        .iter()
        .map(|r| r.path.clone())
        .collect();
    for path in ["/x", "/old"] {
        assert!(a_paths.contains(&path.to_string()), "{path}: {a_paths:?}");
    }
    // A one-pass run does not wait on what another worker holds (it once went on re-fetching
    // its own pages until its patience ran out: /x 160 times in the two passes).
    let x_checks = a_paths.iter().filter(|p| *p == "/x").count();
    assert!(x_checks < 20, "/x fetched {x_checks} times in two passes");
    let rotations = a_paths.iter().filter(|p| *p == "/rotating").count();
    assert!(
        rotations >= 2,
        "the rotating redirect was checked {rotations} times: {a_paths:?}"
    );
    // The 301 is recorded as a redirect, no error; its target and the sitemap wait for b.test's
    // holder.
    let (status, final_url, error): (Option<i64>, Option<String>, Option<String>) = sqlx::query_as(
        "SELECT o.status, o.final_url, o.error FROM observations o JOIN urls u ON u.id = o.url_id
             WHERE u.url = $1 ORDER BY o.id LIMIT 1",
    )
    .bind(url("a.test", "/old"))
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(status, Some(301));
    assert_eq!(final_url.as_deref(), Some(url("b.test", "/new").as_str()));
    assert_eq!(error, None);
    let errors: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM errors WHERE url = $1")
        .bind(url("a.test", "/old"))
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(errors, 0, "a hand-over is no error");
    let handed: Vec<(String, String, Option<String>)> = sqlx::query_as(
        "SELECT url, kind, discovered_from FROM urls WHERE url LIKE $1 ORDER BY url",
    )
    .bind(format!("{}%", url("b.test", "/")))
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(
        handed,
        vec![
            (
                url("b.test", "/new"),
                "page".to_string(),
                Some(url("a.test", "/old"))
            ),
            (
                url("b.test", "/r0"),
                "page".to_string(),
                Some(url("a.test", "/rotating"))
            ),
            (
                url("b.test", "/sitemap.xml"),
                "sitemap".to_string(),
                Some(url("a.test", "/robots.txt"))
            ),
        ]
    );

    // The other worker now holds a.test and b.test is free: `w` takes b.test and fetches what
    // was handed to it; the sitemap a.test's robots.txt named speaks for a.test too.
    let a_key = freshet::politeness::host_key(&url::Url::parse(&url("a.test", "/")).unwrap());
    sqlx::query("UPDATE leases SET worker = NULL, until_ms = 0 WHERE kind = 'host' AND key = $1")
        .bind(&b_key)
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query(
        "UPDATE leases SET worker = 'other', until_ms = $2 WHERE kind = 'host' AND key = $1",
    )
    .bind(&a_key)
    .bind(forever)
    .execute(&pool)
    .await
    .unwrap();
    let to_a_before = server.requests_to("a.test").len();
    one_pass(&server, &schedule, &db, ORIGIN_MS + 30 * DAY_MS).await;
    assert_eq!(
        server.requests_to("a.test").len(),
        to_a_before,
        "a.test is the other worker's now"
    );
    let cross: Option<String> =
        sqlx::query_scalar("SELECT discovered_from FROM urls WHERE url = $1")
            .bind(url("a.test", "/cross"))
            .fetch_optional(&pool)
            .await
            .unwrap()
            .flatten();
    assert_eq!(
        cross.as_deref(),
        Some(url("b.test", "/sitemap.xml").as_str()),
        "the cross-submitted sitemap's a.test page"
    );
    let b_paths: Vec<String> = server
        .requests_to("b.test")
        .iter()
        .map(|r| r.path.clone())
        .collect();
    assert_eq!(
        b_paths.first().map(String::as_str),
        Some("/robots.txt"),
        "robots.txt first: {b_paths:?}"
    );
    for path in ["/sitemap.xml", "/new", "/listed"] {
        assert!(b_paths.contains(&path.to_string()), "{path}: {b_paths:?}");
    }
    pool.close().await;
}
