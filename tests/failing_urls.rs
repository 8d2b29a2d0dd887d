//! URLs whose checks fail, as the server sees them and across a restart: a page that answers
//! 404 leaves its site's plan from its second failure and is tried again on a doubling
//! back-off, and a restarted refresher goes on counting its failures where the last left off
//! (the count is stored with the URL). A host whose every page answers 503 is in trouble
//! itself: its pages keep their plan and their counts stay at 0. A page that answers 503 while
//! its host answers the others is broken itself, and its failures count. A failing page whose
//! sitemap `lastmod` moves past its last check is asked again at the next read of the sitemap,
//! not at its retry.

#[path = "support/recording_server.rs"]
mod recording_server;
#[path = "support/virtual_runs.rs"]
mod virtual_runs;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use freshet::clock::{SharedClock, VirtualClock};

use recording_server::{RecordingServer, Reply};
use sqlx::{ConnectOptions, Connection};
use virtual_runs::{run_schedule_until, until};

const HOSTS: [&str; 2] = ["a.test", "b.test"];
/// Every host a run resolves to the test server: [`HOSTS`] and the lastmod test's.
const RESOLVED: [&str; 3] = ["a.test", "b.test", "c.test"];
/// 2021-01-01T00:00:00Z: the virtual clock's origin.
const ORIGIN_MS: i64 = 1_609_459_200_000;
const HOUR_MS: i64 = 3_600_000;
/// The plan every page out of its site's plan reads as (`scheduler::MIN_PLANNED_PER_DAY`).
const OUT_OF_PLAN: f64 = 1e-6;

/// a.test: `/ok`, `/gone` (404) and `/broken` (503). b.test: `/ok` and `/busy`, both 503 (the
/// host asking for time).
fn serve(server: &RecordingServer) {
    for host in HOSTS {
        let base = format!("http://{host}:{}", server.addr.port());
        server.route(
            host,
            "/robots.txt",
            Reply::text("User-agent: *\nAllow: /\n"),
        );
        let others: &[&str] = if host == "a.test" {
            &["gone", "broken"]
        } else {
            &["busy"]
        };
        let locs: String = ["ok"]
            .iter()
            .chain(others)
            .map(|path| format!("<url><loc>{base}/{path}</loc></url>"))
            .collect();
        server.route(
            host,
            "/sitemap.xml",
            Reply::status(200)
                .header("content-type", "application/xml")
                .body(format!(
                    r#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>"#
                )),
        );
        server.route(
            host,
            "/ok",
            Reply::html(format!("<html><body><p>{host} answers</p></body></html>")),
        );
    }
    server.route("a.test", "/gone", Reply::status(404));
    server.route("a.test", "/broken", Reply::status(503));
    server.route("b.test", "/ok", Reply::status(503));
    server.route("b.test", "/busy", Reply::status(503));
}

fn write_schedule(server: &RecordingServer, dir: &Path) -> PathBuf {
    let sitemaps: Vec<String> = HOSTS
        .iter()
        .map(|h| format!("\"{}\"", server.url(h, "/sitemap.xml")))
        .collect();
    let schedule = dir.join("failing.toml");
    std::fs::write(
        &schedule,
        format!(
            "[[site]]\nname = \"failing\"\nallow_networks = [\"127.0.0.0/8\"]\n\
             sitemaps = [{}]\nrequests_per_day = 200\nhost_rate = \"1/s\"\n",
            sitemaps.join(", ")
        ),
    )
    .unwrap();
    schedule
}

/// What the database holds of one URL: its failures in a row, its plan, next due time and
/// last check.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Stored {
    failures: i64,
    planned_per_day: f64,
    next_due_ms: i64,
    last_checked_ms: i64,
}

/// `failures, planned_per_day, next_due_ms, last_checked_ms` as stored.
type StoredRow = (i64, Option<f64>, Option<i64>, Option<i64>);

/// The row of the URL whose path is `path` (`None` before it exists).
async fn stored(db: &Path, path: &str) -> Option<Stored> {
    let mut conn = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(db)
        .read_only(true)
        .connect()
        .await
        .ok()?;
    let row: Option<StoredRow> = sqlx::query_as(
        "SELECT failures, planned_per_day, next_due_ms, last_checked_ms FROM urls
         WHERE url LIKE '%' || ?",
    )
    .bind(path)
    .fetch_optional(&mut conn)
    .await
    .ok()?;
    let _ = conn.close().await;
    let (failures, planned, due, checked) = row?;
    Some(Stored {
        failures,
        planned_per_day: planned?,
        next_due_ms: due?,
        last_checked_ms: checked?,
    })
}

/// Requests the server saw for `host` + `path`, in arrival order (their clock times).
fn hits(server: &RecordingServer, host: &str, path: &str) -> Vec<i64> {
    server
        .requests_to(host)
        .into_iter()
        .filter(|r| r.path == path)
        .map(|r| r.clock_ms)
        .collect()
}

/// Runs the refresher on `dir`'s database with the schedule [`write_schedule`] writes until
/// `enough` ends.
async fn run_until(
    server: &Arc<RecordingServer>,
    clock: &SharedClock,
    dir: &Path,
    enough: impl Future<Output = ()> + Send + 'static,
) {
    run_schedule_until(
        server,
        clock,
        dir,
        write_schedule(server, dir),
        &RESOLVED,
        enough,
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_404_page_stays_out_of_the_plan_across_a_restart_and_a_503_host_keeps_its_page_planned() {
    // An hour of virtual time is a real second.
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 3_600.0));
    let server = Arc::new(RecordingServer::start_with_clock(clock.clone()).await);
    serve(&server);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("freshet.db");

    // The first run: until /gone has failed three times and its third failure is stored,
    // and /busy and /broken have been asked three times.
    let (watched, at) = (Arc::clone(&server), db.clone());
    let enough = until(move || {
        let (watched, at) = (Arc::clone(&watched), at.clone());
        async move {
            hits(&watched, "b.test", "/busy").len() >= 3
                && hits(&watched, "a.test", "/broken").len() >= 3
                && stored(&at, "/gone").await.is_some_and(|s| s.failures >= 3)
        }
    });
    run_until(&server, &clock, dir.path(), enough).await;
    let gone = stored(&db, "/gone").await.expect("/gone is stored");
    let gone_hits = hits(&server, "a.test", "/gone");
    // Every request to /gone failed (one the stop cut short may not be stored).
    assert!(
        (3..=gone_hits.len() as i64).contains(&gone.failures),
        "{} requests: {gone:?}",
        gone_hits.len()
    );
    assert_eq!(gone.planned_per_day, OUT_OF_PLAN, "{gone:?}");
    // b.test answers nothing but 503s: its trouble, not its pages'.
    assert!(hits(&server, "b.test", "/busy").len() >= 3);
    for path in ["/busy", "/ok"] {
        let host_down = stored(&db, &format!("b.test:{}{path}", server.addr.port()))
            .await
            .expect("b.test's pages are stored");
        assert_eq!(host_down.failures, 0, "{path}: {host_down:?}");
        assert!(host_down.planned_per_day > 1.0, "{path}: {host_down:?}");
    }
    // a.test answers /ok, and /broken's 503s are its own failures.
    let broken = stored(&db, "/broken").await.expect("/broken is stored");
    assert!(broken.failures >= 1, "{broken:?}");

    // The second run, until its first check of /gone is stored: /gone is asked no sooner
    // than its stored retry, and its failures go on from the first run's (counted from 0
    // again, they would be 1, and it back in the plan).
    let before = gone_hits.len();
    let (watched, at) = (Arc::clone(&server), db.clone());
    let enough = until(move || {
        let (watched, at) = (Arc::clone(&watched), at.clone());
        async move {
            hits(&watched, "a.test", "/gone").len() > before
                && stored(&at, "/gone")
                    .await
                    .is_some_and(|s| s.next_due_ms != gone.next_due_ms)
        }
    });
    run_until(&server, &clock, dir.path(), enough).await;
    let gone_hits = hits(&server, "a.test", "/gone");
    assert!(gone_hits.len() > before, "/gone was not asked again");
    assert!(
        gone_hits[before] >= gone.next_due_ms,
        "/gone asked at {} before its retry at {}",
        gone_hits[before],
        gone.next_due_ms
    );
    let after = stored(&db, "/gone").await.expect("/gone is stored");
    assert_eq!(after.failures, gone.failures + 1, "{after:?}");
    assert_eq!(after.planned_per_day, OUT_OF_PLAN, "{after:?}");
    // Its retry waits an hour doubled at each failure after the second: 4 h after the
    // fourth, where a count started again would give an hour.
    assert_eq!(
        after.next_due_ms - after.last_checked_ms,
        HOUR_MS << (after.failures - 2),
        "{after:?}"
    );
}

/// c.test's sitemap, listing `/ok` and `/back` with their `lastmod`s (clock ms).
fn sitemap_of_c(server: &RecordingServer, back_lastmod_ms: i64) -> Reply {
    let base = format!("http://c.test:{}", server.addr.port());
    let lastmod = |ms: i64| {
        chrono::DateTime::from_timestamp_millis(ms)
            .expect("a date")
            .to_rfc3339()
    };
    Reply::status(200)
        .header("content-type", "application/xml")
        .body(format!(
            r#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>{base}/ok</loc><lastmod>{}</lastmod></url><url><loc>{base}/back</loc><lastmod>{}</lastmod></url></urlset>"#,
            lastmod(ORIGIN_MS),
            lastmod(back_lastmod_ms)
        ))
}

/// A page that was copied, then answered 404 until it was failing with a retry 8 hours away,
/// then is served again and its sitemap `lastmod` moves past its last check: the next read of
/// the sitemap (hourly here) brings it back at once, and its copy puts it back in the plan.
/// Before, its retry won, and it came back hours later.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_page_whose_sitemap_lastmod_moves_is_asked_at_the_next_read() {
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 3_600.0));
    let server = Arc::new(RecordingServer::start_with_clock(clock.clone()).await);
    let host = "c.test";
    server.route(
        host,
        "/robots.txt",
        Reply::text("User-agent: *\nAllow: /\n"),
    );
    server.route(host, "/sitemap.xml", sitemap_of_c(&server, ORIGIN_MS));
    server.route(
        host,
        "/ok",
        Reply::html("<html><body><p>ok</p></body></html>"),
    );
    // Served once (the copy), then gone.
    server.handle(host, "/back", |request| match request.hit {
        0 => Reply::html("<html><body><p>the first version</p></body></html>").to_response(),
        _ => Reply::status(404).to_response(),
    });
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("freshet.db");
    let schedule = dir.path().join("back.toml");
    std::fs::write(
        &schedule,
        format!(
            "[[site]]\nname = \"back\"\nallow_networks = [\"127.0.0.0/8\"]\n\
             sitemaps = [\"{}\"]\nrediscover = \"0 0 * * * *\"\n\
             requests_per_day = 2000\nhost_rate = \"6/h\"\n",
            server.url(host, "/sitemap.xml")
        ),
    )
    .unwrap();

    // Until /back has failed five times in a row (its retry 8 h after the last) and then the
    // server serves it again with a newer `lastmod`; until its next request is stored.
    let (watched, at, now) = (Arc::clone(&server), db.clone(), clock.clone());
    let failing = Arc::new(std::sync::Mutex::new(None::<(Stored, i64)>));
    let seen = Arc::clone(&failing);
    let enough = until(move || {
        let (watched, at, seen) = (Arc::clone(&watched), at.clone(), Arc::clone(&seen));
        let now = now.now_ms();
        async move {
            let row = stored(&at, "/back").await;
            let mut seen = seen.lock().unwrap();
            match *seen {
                None => {
                    if let Some(row) = row.filter(|r| r.failures >= 5) {
                        watched.handle("c.test", "/back", |_| {
                            Reply::html("<html><body><p>back again</p></body></html>").to_response()
                        });
                        watched.route("c.test", "/sitemap.xml", sitemap_of_c(&watched, now));
                        *seen = Some((row, now));
                    }
                    false
                }
                Some((_, moved_at)) => row.is_some_and(|r| r.last_checked_ms > moved_at),
            }
        }
    });
    run_schedule_until(&server, &clock, dir.path(), schedule, &RESOLVED, enough).await;
    let (failing, moved_at) = failing.lock().unwrap().expect("/back failed five times");
    assert!(
        failing.next_due_ms - failing.last_checked_ms >= 8 * HOUR_MS,
        "{failing:?}"
    );
    let asked: Vec<i64> = hits(&server, host, "/back")
        .into_iter()
        .filter(|&t| t > moved_at)
        .collect();
    assert!(
        !asked.is_empty(),
        "/back was not asked after its lastmod moved"
    );
    // After the next hourly read of the sitemap, as soon as the host's gap of ten minutes
    // lets it go (the host's budget does not bind: the cron sets the reads).
    let read = hits(&server, host, "/sitemap.xml")
        .into_iter()
        .find(|&t| t > moved_at)
        .expect("the sitemap was read again");
    assert!(read < asked[0], "asked at {}, read at {read}", asked[0]);
    assert!(
        asked[0] < moved_at + 4 * HOUR_MS && asked[0] < failing.next_due_ms,
        "asked at {}, the lastmod moved at {moved_at}, the retry was at {}",
        asked[0],
        failing.next_due_ms
    );
    let back = stored(&db, "/back").await.expect("/back is stored");
    assert_eq!(back.failures, 0, "{back:?}");
    assert!(back.planned_per_day > OUT_OF_PLAN, "{back:?}");
}
