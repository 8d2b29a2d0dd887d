//! Runs one after another, or at once, on one SQLite database, counted by the server:
//! - a site's budget is what every run together may spend, not what each may spend from a
//!   full bucket: three `freshet run --once` passes in a row spend one pass's budget between
//!   them (each pass may hold a day's budget at once), and a daemon killed with SIGKILL and
//!   started again and again spends what its budget refills;
//! - a second `freshet run` on a file a run is using is refused, and sends nothing;
//! - on PostgreSQL (where workers share a site's credit through its pool) the passes spend
//!   one budget too, and a pass a day later has the day's refill to spend.

#[path = "support/freshet_bin.rs"]
mod freshet_bin;
#[path = "support/postgres.rs"]
mod postgres;
#[path = "support/recording_server.rs"]
mod recording_server;

use std::path::PathBuf;
use std::time::Duration;

use tempfile::TempDir;

use freshet_bin::{Freshet, run_once, write_schedule};
use recording_server::{RecordingServer, Reply};

const HOST: &str = "127.0.0.1";

/// A site of 200 pages on `server` with `requests_per_day`, its schedule in a new folder:
/// (the folder, the schedule, where the database goes).
fn site_on_disk(server: &RecordingServer, requests_per_day: u32) -> (TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let schedule = write_schedule(dir.path(), &serve_site(server, requests_per_day));
    let db = dir.path().join("f.db");
    (dir, schedule, db)
}

/// A site of 200 pages on `server` with `requests_per_day`, robots.txt answering 404.
fn serve_site(server: &RecordingServer, requests_per_day: u32) -> String {
    let base = format!("http://{HOST}:{}", server.addr.port());
    server.route(HOST, "/robots.txt", Reply::status(404));
    let list: String = (0..200).map(|i| format!("{base}/p{i}\n")).collect();
    server.route(HOST, "/sitemap.txt", Reply::text(list));
    for i in 0..200 {
        server.route(
            HOST,
            &format!("/p{i}"),
            Reply::html(format!("<p>page {i}</p>")),
        );
    }
    format!(
        "[[site]]\nname = \"budget\"\nsitemaps = [\"{base}/sitemap.txt\"]\n\
         host_rate = \"50/s\"\nrequests_per_day = {requests_per_day}\n\
         allow_networks = [\"127.0.0.0/8\"]\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_pass_after_another_spends_one_budget() {
    let server = RecordingServer::start().await;
    let (_dir, schedule, db) = site_on_disk(&server, 40);
    let mut after_each = Vec::new();
    for _ in 0..3 {
        run_once(&schedule, &db).await;
        after_each.push(server.requests().len());
    }
    assert_three_passes_spend_one_budget(&after_each);
}

/// The first pass spends its day's budget of 40 (robots.txt and the sitemap included), and a
/// little more: a sitemap's read is charged once it is made. The passes after it, seconds
/// later, have only seconds of refill (40 a day): at most a request each. `after_each`: the
/// server's count of requests after each pass.
fn assert_three_passes_spend_one_budget(after_each: &[usize]) {
    let first = after_each[0];
    assert!(
        (35..=43).contains(&first),
        "the first pass made {first} requests"
    );
    assert!(
        after_each[2] <= first + 2,
        "three passes made {after_each:?} requests in all (the budget is 40 a day)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passes_on_postgresql_spend_one_budget_and_a_day_later_the_days_refill() {
    let Some(url) = postgres::postgres_database("passes_on_postgresql").await else {
        return;
    };
    let server = RecordingServer::start().await;
    let (_dir, schedule, _) = site_on_disk(&server, 40);
    let db = PathBuf::from(&url);
    let mut after_each = Vec::new();
    for pass in 0..4 {
        if pass == 3 {
            // As if the last pass had ended a day ago: the pool refills for the day no worker
            // ran (before, a pool nothing refilled left every later pass with nothing).
            let pool = sqlx::PgPool::connect(&url).await.unwrap();
            sqlx::query("UPDATE sites SET budget_pool_at_ms = budget_pool_at_ms - 86400000")
                .execute(&pool)
                .await
                .unwrap();
            pool.close().await;
        }
        run_once(&schedule, &db).await;
        after_each.push(server.requests().len());
    }
    assert_three_passes_spend_one_budget(&after_each);
    let day_later = after_each[3] - after_each[2];
    assert!(
        (30..=43).contains(&day_later),
        "a pass a day later made {day_later} requests ({after_each:?})"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_killed_and_started_again_spends_what_its_budget_refills() {
    let server = RecordingServer::start().await;
    // 960 a day: its bucket holds a quarter hour's, ten requests.
    let (_dir, schedule, db) = site_on_disk(&server, 960);
    let pages = || {
        server
            .requests()
            .iter()
            .filter(|r| r.path.starts_with("/p"))
            .count()
    };
    let mut lives = Vec::new();
    for life in 0..5 {
        let run = Freshet::run(&schedule, &db, &[]);
        if life == 0 {
            // The first life reads the site and spends its bucket on pages.
            let sent = freshet_bin::wait_for(Duration::from_secs(60), || pages() >= 5).await;
            assert!(sent, "the first life sent {} pages", pages());
        }
        // Time enough to start and send what the bucket allows (less on a loaded machine,
        // which only makes the bound below easier to keep).
        tokio::time::sleep(Duration::from_millis(1500)).await;
        run.kill_now();
        let _ = run.finish(Duration::from_secs(10)).await;
        lives.push(pages());
    }
    // Robots.txt and the sitemap took two of the first life's ten; each later life starts
    // from the credit the last left, refilled by seconds at 960 a day. A full bucket at every
    // start sent up to ten pages a life.
    let total = pages();
    assert!(
        total <= 10,
        "five lives sent {lives:?} pages in all (the bucket holds ten requests)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_run_on_one_file_is_refused_and_sends_nothing() {
    let server = RecordingServer::start().await;
    let (_dir, schedule, db) = site_on_disk(&server, 1_000_000);
    let first = Freshet::run(&schedule, &db, &[]);
    let started =
        freshet_bin::wait_for(Duration::from_secs(60), || server.requests().len() >= 3).await;
    assert!(started, "the first run sent nothing");
    let second = tokio::process::Command::new(env!("CARGO_BIN_EXE_freshet"))
        .args(["run", "--once", "--schedules"])
        .arg(&schedule)
        .arg("--db")
        .arg(&db)
        .output()
        .await
        .expect("run the freshet binary");
    first.terminate();
    let _ = first.finish(Duration::from_secs(30)).await;
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "the second run ran: {stderr}");
    assert!(
        stderr.contains("another `freshet run` is using"),
        "{stderr}"
    );
    // No page was requested twice at once (two runs each handing it out: 0 to 20 ms apart).
    let mut last_seen: std::collections::HashMap<String, std::time::Instant> = Default::default();
    for request in server
        .requests()
        .iter()
        .filter(|r| r.path.starts_with("/p"))
    {
        if let Some(before) = last_seen.insert(request.path.clone(), request.at) {
            let gap = request.at.duration_since(before);
            assert!(
                gap > Duration::from_secs(1),
                "{} twice, {gap:?} apart",
                request.path
            );
        }
    }
}
