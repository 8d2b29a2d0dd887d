//! Which sitemaps a worker's discovery pass reads, and which it sets due at its end, as the
//! hosts it holds change, seen from the server's side and from the rows: several workers on
//! one PostgreSQL database.
//!
//! - A host gained while a pass runs: its sitemap that the pass passed by (another worker held
//!   the host then) is read by the pass the gain calls, the same day.
//! - A root the schedule took out: the child another worker's host listed is no longer read,
//!   and the pass sets its due time (on a host held all through it), so a later start runs no
//!   pass for it.
//!
//! Needs `FRESHET_TEST_POSTGRES` (see tests/postgres_store.rs); SKIPPED without it unless
//! `FRESHET_REQUIRE_POSTGRES=1`.

#[path = "support/postgres.rs"]
mod postgres;
#[path = "support/recording_server.rs"]
mod recording_server;
#[path = "support/virtual_runs.rs"]
mod virtual_runs;

use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use freshet::clock::{SharedClock, VirtualClock};
use freshet::refresher::{self, PolicyChoice, RunOptions, WorkerOptions};
use postgres::postgres_database;
use recording_server::{RecordingServer, Reply};
use tokio::sync::{mpsc, oneshot, watch};

/// 2021-01-01T00:00:00Z.
const ORIGIN_MS: i64 = 1_609_459_200_000;
const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 24 * HOUR_MS;
/// Far beyond any test's clock.
const FOREVER_MS: i64 = i64::MAX / 4;

/// The worker `w`'s options: rounds every 50 ms (real), so that a host let go is taken soon.
fn options(server: &RecordingServer, schedule: &Path, db: &str, start_ms: i64) -> RunOptions {
    let clock: SharedClock = Arc::new(VirtualClock::new(start_ms, 200.0));
    RunOptions {
        schedules: vec![schedule.to_path_buf()],
        db_path: PathBuf::from(db),
        once: true,
        clock,
        resolve: server.resolve(&["a.test", "b.test"]),
        policy: PolicyChoice::Learned,
        worker: WorkerOptions {
            name: Some("w".into()),
            round_every: Some(Duration::from_millis(50)),
            ..Default::default()
        },
        run_lock: None,
    }
}

/// One pass of `w` at `start_ms`, to its end.
async fn one_pass(
    server: &RecordingServer,
    schedule: &Path,
    db: &str,
    start_ms: i64,
) -> refresher::RunSummary {
    let options = options(server, schedule, db, start_ms);
    refresher::run(options, std::future::pending())
        .await
        .expect("one pass")
}

/// A site reading `sitemaps`, rediscovered daily at midnight.
fn write_schedule(dir: &Path, sitemaps: &[String]) -> PathBuf {
    let sitemaps: Vec<String> = sitemaps.iter().map(|s| format!("\"{s}\"")).collect();
    let schedule = dir.join("site.toml");
    std::fs::write(
        &schedule,
        format!(
            "[[site]]\nname = \"s\"\nsitemaps = [{}]\nrediscover = \"0 0 0 * * *\"\n\
             host_rate = \"10/s\"\nallow_networks = [\"127.0.0.0/8\"]\n",
            sitemaps.join(", ")
        ),
    )
    .unwrap();
    schedule
}

/// The politeness key of `host` on the server.
fn key(server: &RecordingServer, host: &str) -> String {
    freshet::politeness::host_key(&server.url(host, "/"))
}

/// Another worker, alive, holds `key` (its lease row written as its rounds would).
async fn other_holds(pool: &sqlx::PgPool, key: &str) {
    sqlx::query(
        "INSERT INTO leases (kind, key, worker, until_ms) VALUES ('host', $1, 'other', $2),
         ('worker', 'other', 'other', $2)
         ON CONFLICT (kind, key) DO UPDATE SET worker = excluded.worker,
         until_ms = excluded.until_ms",
    )
    .bind(key)
    .bind(FOREVER_MS)
    .execute(pool)
    .await
    .unwrap();
}

/// How many times the server was asked for `path` on `host`.
fn asked(server: &RecordingServer, host: &str, path: &str) -> usize {
    (server.requests_to(host).iter())
        .filter(|r| r.path == path)
        .count()
}

fn robots_allow_all(server: &RecordingServer) {
    for host in ["a.test", "b.test"] {
        server.route(
            host,
            "/robots.txt",
            Reply::text("User-agent: *\nAllow: /\n"),
        );
    }
}

/// A host gained during a pass. `w` starts a day after its first pass, when every sitemap is
/// due, while another worker holds `b.test`: its pass passes `b.test/sitemap.xml` by and reads
/// `a.test/slow.xml`, whose answer waits until the other worker has let `b.test` go and `w`
/// holds it. The gain calls another pass, which reads `b.test/sitemap.xml`. (A pass that set
/// the due time of every sitemap on the hosts held at its end set this one's to the next day,
/// unread: the pass the gain called found nothing due.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sitemap_passed_by_on_a_host_gained_during_the_pass_is_read_by_the_next() {
    let Some(db) = postgres_database("gained_during_a_pass").await else {
        return;
    };
    let server = RecordingServer::start().await;
    robots_allow_all(&server);
    let url = |host: &str, path: &str| server.url(host, path).to_string();
    let b_sitemap = url("b.test", "/sitemap.xml");
    server.route(
        "b.test",
        "/sitemap.xml",
        Reply::sitemap([url("b.test", "/p")]),
    );
    server.route("b.test", "/p", Reply::html("<p>p on b.test</p>"));
    server.route("a.test", "/q", Reply::html("<p>q on a.test</p>"));
    // Once armed, a.test/slow.xml says it was asked and answers when the gate opens.
    let armed = Arc::new(AtomicBool::new(false));
    let (asked_tx, mut asked_rx) = mpsc::unbounded_channel::<()>();
    let (gate_tx, gate_rx) = watch::channel(false);
    let slow = Reply::sitemap([url("a.test", "/q")]);
    let armed_here = Arc::clone(&armed);
    server.handle("a.test", "/slow.xml", move |_| {
        if !armed_here.load(Ordering::SeqCst) {
            return slow.to_response();
        }
        let _ = asked_tx.send(());
        let mut gate = gate_rx.clone();
        let body = slow.body.clone();
        let stream = futures_util::stream::once(async move {
            let _ = gate.wait_for(|open| *open).await;
            Ok::<_, Infallible>(body)
        });
        axum::response::Response::builder()
            .header("content-type", "application/xml")
            .body(axum::body::Body::from_stream(stream))
            .unwrap()
    });
    let dir = tempfile::tempdir().unwrap();
    let sitemaps = [b_sitemap.clone(), url("a.test", "/slow.xml")];
    let schedule = write_schedule(dir.path(), &sitemaps);

    one_pass(&server, &schedule, &db, ORIGIN_MS).await;
    assert_eq!(asked(&server, "b.test", "/sitemap.xml"), 1);

    let pool = sqlx::PgPool::connect(&db).await.expect("connect");
    let b_key = key(&server, "b.test");
    other_holds(&pool, &b_key).await;
    armed.store(true, Ordering::SeqCst);
    let mut options = options(&server, &schedule, &db, ORIGIN_MS + DAY_MS + HOUR_MS);
    options.once = false;
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let run = tokio::spawn(async move {
        refresher::run(options, async move {
            let _ = stop_rx.await;
        })
        .await
    });

    tokio::time::timeout(Duration::from_secs(120), asked_rx.recv())
        .await
        .expect("the pass reads a.test/slow.xml");
    assert_eq!(
        asked(&server, "b.test", "/sitemap.xml"),
        1,
        "b.test is the other worker's as the pass begins"
    );
    // The other worker lets b.test go; `w` takes it. At a renewal after the gain, the round
    // that gained it has ended: `w` holds it in memory, not only in the database.
    sqlx::query("UPDATE leases SET worker = NULL, until_ms = 0 WHERE kind = 'host' AND key = $1")
        .bind(&b_key)
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query("DELETE FROM leases WHERE kind = 'worker' AND key = 'other'")
        .execute(&pool)
        .await
        .unwrap();
    let mut renewals: Vec<i64> = Vec::new();
    let started = std::time::Instant::now();
    while renewals.len() < 2 && started.elapsed() < Duration::from_secs(120) {
        let until: Option<i64> = sqlx::query_scalar(
            "SELECT until_ms FROM leases WHERE kind = 'host' AND key = $1 AND worker LIKE 'w/%'",
        )
        .bind(&b_key)
        .fetch_optional(&pool)
        .await
        .unwrap();
        if let Some(until) = until.filter(|u| renewals.last() != Some(u)) {
            renewals.push(until);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(renewals.len() >= 2, "w never held b.test: {renewals:?}");
    let _ = gate_tx.send(true);

    virtual_runs::until(|| {
        let read = asked(&server, "b.test", "/sitemap.xml") >= 2;
        async move { read }
    })
    .await;
    let _ = stop_tx.send(());
    run.await.unwrap().expect("the run");
    let reads = asked(&server, "b.test", "/sitemap.xml");
    let read_ms: Option<i64> =
        sqlx::query_scalar("SELECT last_checked_ms FROM urls WHERE url = $1")
            .bind(&b_sitemap)
            .fetch_one(&pool)
            .await
            .unwrap();
    let slow_read_ms: Option<i64> = sqlx::query_scalar("SELECT copy_ms FROM urls WHERE url = $1")
        .bind(url("a.test", "/slow.xml"))
        .fetch_one(&pool)
        .await
        .unwrap();
    let what = format!(
        "{reads} reads, the last at {read_ms:?}; a.test/slow.xml's copy from {slow_read_ms:?}"
    );
    // Its body came after the gate opened, once b.test was held (else the pass ended before
    // the gain, and the next read b.test's sitemap whatever the pass before set).
    assert!(
        slow_read_ms.is_some_and(|ms| ms >= ORIGIN_MS + DAY_MS),
        "{what}"
    );
    assert_eq!(reads, 2, "read again by the pass the gain called: {what}");
    assert!(
        read_ms.is_some_and(|ms| ms < ORIGIN_MS + 2 * DAY_MS),
        "read the same day, not at the next discovery: {what}"
    );
    pool.close().await;
}

/// A root the schedule took out. `a.test/index.xml` lists `b.test/child.xml` (cross-submitted
/// by `b.test`'s robots.txt); then the schedule names only `b.test/one.xml`, that robots.txt
/// names no sitemap, and another worker holds `a.test`. `w`, holding `b.test`,
/// no longer reads the child (it took it for one handed over from `a.test`'s holder and read
/// it at every pass), and its pass sets the child's due time with the other sitemaps on
/// `b.test`: a start an hour later runs no pass (the child, left due, made every start run
/// one; so did a child never read, which robots.txt disallowed at first).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_of_a_root_taken_out_is_not_read_and_calls_no_pass() {
    let Some(db) = postgres_database("child_of_a_root_taken_out").await else {
        return;
    };
    let server = RecordingServer::start().await;
    robots_allow_all(&server);
    let url = |host: &str, path: &str| server.url(host, path).to_string();
    let child = url("b.test", "/child.xml");
    let index = url("a.test", "/index.xml");
    // (A child never read: robots.txt disallows it at first.)
    let never = url("b.test", "/never.xml");
    let cross = format!("User-agent: *\nAllow: /\nDisallow: /never.xml\nSitemap: {index}\n");
    server.route("b.test", "/robots.txt", Reply::text(cross));
    let listed = Reply::sitemap_index([&child, &never]);
    server.route("a.test", "/index.xml", listed);
    server.route(
        "b.test",
        "/child.xml",
        Reply::sitemap([url("b.test", "/p")]),
    );
    server.route("b.test", "/one.xml", Reply::sitemap([url("b.test", "/q")]));
    server.route(
        "b.test",
        "/never.xml",
        Reply::sitemap([url("b.test", "/q")]),
    );
    for page in ["/p", "/q"] {
        server.route("b.test", page, Reply::html(format!("<p>{page}</p>")));
    }
    let dir = tempfile::tempdir().unwrap();
    let one = url("b.test", "/one.xml");
    let both = [index, one.clone()];
    one_pass(&server, &write_schedule(dir.path(), &both), &db, ORIGIN_MS).await;
    assert_eq!(asked(&server, "b.test", "/child.xml"), 1);

    let pool = sqlx::PgPool::connect(&db).await.expect("connect");
    let never_read: Option<i64> =
        sqlx::query_scalar("SELECT COALESCE(last_checked_ms, -1) FROM urls WHERE url = $1")
            .bind(&never)
            .fetch_optional(&pool)
            .await
            .unwrap();
    assert_eq!(never_read, Some(-1), "stored, never read");
    other_holds(&pool, &key(&server, "a.test")).await;
    robots_allow_all(&server);
    let schedule = write_schedule(dir.path(), std::slice::from_ref(&one));
    let later_ms = ORIGIN_MS + DAY_MS + HOUR_MS;
    let summary = one_pass(&server, &schedule, &db, later_ms).await;
    assert!(!summary.held_no_host, "w held b.test");
    let row = |url: String| {
        let pool = pool.clone();
        async move {
            let due: (Option<i64>, Option<i64>) = sqlx::query_as(
                "SELECT next_due_ms, (SELECT discovered_ms FROM sites WHERE name = 's')
                 FROM urls WHERE url = $1",
            )
            .bind(url)
            .fetch_one(&pool)
            .await
            .unwrap();
            due
        }
    };
    let (child_due, discovered) = row(child.clone()).await;
    let what = format!(
        "one.xml read {} times, child.xml {} times, due at {child_due:?}",
        asked(&server, "b.test", "/one.xml"),
        asked(&server, "b.test", "/child.xml")
    );
    assert_eq!(asked(&server, "b.test", "/one.xml"), 2, "{what}");
    assert_eq!(asked(&server, "b.test", "/child.xml"), 1, "{what}");
    assert_eq!(asked(&server, "b.test", "/never.xml"), 0, "{what}");
    assert!(
        child_due.is_some_and(|due| due >= ORIGIN_MS + 2 * DAY_MS),
        "due at the next discovery: {what}"
    );
    assert!(
        server.requests_to("a.test").len() <= 2,
        "a.test is the other worker's"
    );

    let summary = one_pass(&server, &schedule, &db, later_ms + HOUR_MS).await;
    assert!(!summary.held_no_host, "w held b.test");
    assert_eq!(
        row(child).await.1,
        discovered,
        "no pass at a start with nothing due"
    );
    pool.close().await;
}

/// A root replaced by its own child: the schedule named `a.test/index.xml`, which lists
/// `a.test/part.xml`, an index of `b.test/child.xml` (cross-submitted by `b.test`'s robots.txt);
/// then it names `a.test/part.xml` instead, and another worker holds `a.test`. `w`, holding
/// `b.test`, still reads the child `part.xml`'s holder stored for it. (A row keeps what named
/// it first: `part.xml` was taken for one below the root taken out, and its child for one no
/// walk reaches.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_of_a_root_that_replaced_its_index_is_read_by_its_holder() {
    let Some(db) = postgres_database("root_replaced_by_its_child").await else {
        return;
    };
    let server = RecordingServer::start().await;
    robots_allow_all(&server);
    let url = |host: &str, path: &str| server.url(host, path).to_string();
    let (index, part) = (url("a.test", "/index.xml"), url("a.test", "/part.xml"));
    let cross = format!("User-agent: *\nAllow: /\nSitemap: {part}\n");
    server.route("b.test", "/robots.txt", Reply::text(cross));
    server.route("a.test", "/index.xml", Reply::sitemap_index([&part]));
    let child = Reply::sitemap_index([url("b.test", "/child.xml")]);
    server.route("a.test", "/part.xml", child);
    server.route(
        "b.test",
        "/child.xml",
        Reply::sitemap([url("b.test", "/p")]),
    );
    server.route("b.test", "/p", Reply::html("<p>p</p>"));
    // (A sitemap of the schedule's on b.test: its robots.txt is the site's to read.)
    let one = url("b.test", "/one.xml");
    server.route("b.test", "/one.xml", Reply::sitemap([url("b.test", "/q")]));
    server.route("b.test", "/q", Reply::html("<p>q</p>"));
    let dir = tempfile::tempdir().unwrap();
    let schedule = write_schedule(dir.path(), &[index, one.clone()]);
    one_pass(&server, &schedule, &db, ORIGIN_MS).await;
    let first = asked(&server, "b.test", "/child.xml");
    assert!(first >= 1, "{:?}", server.requests());

    let pool = sqlx::PgPool::connect(&db).await.expect("connect");
    other_holds(&pool, &key(&server, "a.test")).await;
    robots_allow_all(&server);
    let schedule = write_schedule(dir.path(), &[part, one]);
    let summary = one_pass(&server, &schedule, &db, ORIGIN_MS + DAY_MS + HOUR_MS).await;
    assert!(!summary.held_no_host, "w held b.test");
    assert_eq!(
        asked(&server, "b.test", "/child.xml"),
        first + 1,
        "read at the next discovery: {:?}",
        server.requests_to("b.test")
    );
    pool.close().await;
}

/// A page named a sitemap from a host held elsewhere: `b.test/s.txt` (a text sitemap) was
/// listed as a page by `b.test/one.xml` and checked so; then `a.test`'s robots.txt names it a
/// sitemap (the schedule adds `a.test/index.xml`, so the pass reads that robots.txt) while
/// another worker holds `b.test`. `w`, holding `a.test`, leaves the page's naming for the
/// holder (a page's row keeps what listed it: nothing told the holder before, and the page was
/// never read as a sitemap); once `w` holds `b.test`, its pass reads the page, which reads as a
/// sitemap: one named by that robots.txt from then on, its page `b.test/c` checked, the naming
/// gone. (An index there naming it goes the same way.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_a_robots_txt_elsewhere_names_a_sitemap_is_read_by_its_holder() {
    let Some(db) = postgres_database("page_named_a_sitemap_elsewhere").await else {
        return;
    };
    let server = RecordingServer::start().await;
    robots_allow_all(&server);
    let url = |host: &str, path: &str| server.url(host, path).to_string();
    let (one, s, index) = (
        url("b.test", "/one.xml"),
        url("b.test", "/s.txt"),
        url("a.test", "/index.xml"),
    );
    server.route("b.test", "/one.xml", Reply::sitemap([&s]));
    server.route(
        "b.test",
        "/s.txt",
        Reply::text(format!("{}\n", url("b.test", "/c"))),
    );
    server.route("b.test", "/c", Reply::html("<p>c</p>"));
    server.route(
        "a.test",
        "/index.xml",
        Reply::sitemap([url("a.test", "/q")]),
    );
    server.route("a.test", "/q", Reply::html("<p>q</p>"));
    let robots = url("a.test", "/robots.txt");
    let names_s = format!("User-agent: *\nAllow: /\nSitemap: {s}\n");
    server.route("a.test", "/robots.txt", Reply::text(names_s));
    let dir = tempfile::tempdir().unwrap();
    one_pass(
        &server,
        &write_schedule(dir.path(), std::slice::from_ref(&one)),
        &db,
        ORIGIN_MS,
    )
    .await;
    let store = freshet::store::Store::open_existing(Path::new(&db))
        .await
        .unwrap();
    let row = store.url_row(&s).await.unwrap().expect("its row");
    assert_eq!(row.kind, "page");
    assert_eq!(asked(&server, "b.test", "/s.txt"), 1);

    let pool = sqlx::PgPool::connect(&db).await.expect("connect");
    other_holds(&pool, &key(&server, "b.test")).await;
    let schedule = write_schedule(dir.path(), &[one, index.clone()]);
    one_pass(&server, &schedule, &db, ORIGIN_MS + DAY_MS + HOUR_MS).await;
    assert_eq!(asked(&server, "a.test", "/index.xml"), 1);
    assert_eq!(asked(&server, "b.test", "/s.txt"), 1, "b.test is another's");
    let named = store.pages_named_sitemaps(row.site_id).await.unwrap();
    assert_eq!(named.len(), 1, "{named:?}");
    assert_eq!(
        (named[0].url.as_str(), named[0].named_by.as_str()),
        (s.as_str(), robots.as_str())
    );

    sqlx::query("DELETE FROM leases WHERE kind = 'host' AND key = $1")
        .bind(key(&server, "b.test"))
        .execute(&pool)
        .await
        .unwrap();
    other_holds(&pool, &key(&server, "a.test")).await;
    let summary = one_pass(&server, &schedule, &db, ORIGIN_MS + 2 * DAY_MS + HOUR_MS).await;
    assert!(!summary.held_no_host, "w held b.test");
    let requests = format!("{:?}", server.requests_to("b.test"));
    // (Read as a sitemap, and checked as the page it was if due before the pass came to it.)
    let read = asked(&server, "b.test", "/s.txt");
    assert!((2..=3).contains(&read), "{requests}");
    assert_eq!(
        asked(&server, "b.test", "/c"),
        1,
        "its page checked: {requests}"
    );
    let row = store.url_row(&s).await.unwrap().expect("its row");
    assert_eq!(
        (row.kind.as_str(), row.discovered_from.as_deref()),
        ("sitemap", Some(robots.as_str()))
    );
    assert!(
        store
            .pages_named_sitemaps(row.site_id)
            .await
            .unwrap()
            .is_empty()
    );
    store.close().await;
    pool.close().await;
}
