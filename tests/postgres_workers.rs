//! Three `freshet run` workers on one PostgreSQL database against six loopback hosts, one of
//! them killed with SIGKILL midway, checked from the servers' side: no host ever sees two
//! requests closer than its limit (so never two in flight: each answer takes a fraction of the
//! limit), the killed worker's hosts are taken over, and every page request a server answered
//! is one observation in the database (none recorded twice; at most the killed worker's
//! requests in flight are lost).
//!
//! Needs `FRESHET_TEST_POSTGRES` (see tests/postgres_store.rs); SKIPPED without it unless
//! `FRESHET_REQUIRE_POSTGRES=1`.

#[path = "support/freshet_bin.rs"]
mod freshet_bin;
#[path = "support/postgres.rs"]
mod postgres;
#[path = "support/recording_server.rs"]
mod recording_server;

use std::path::Path;
use std::time::{Duration, Instant};

use freshet_bin::{Freshet, wait_for, write_schedule};
use postgres::postgres_database;
use recording_server::{Recorded, RecordingServer, Reply};

const HOSTS: usize = 6;
const PAGES: usize = 8;
/// Each host's limit: one request every 200 ms.
const INTERVAL: Duration = Duration::from_millis(200);
/// Leases of 4 s: the least for a request timeout of 1 s (twice the timeout and a second).
const LEASE_SECONDS: &str = "4";

/// A host: robots.txt, a sitemap of its pages, pages whose text changes at every request.
async fn host() -> RecordingServer {
    let server = RecordingServer::start().await;
    let base = format!("http://127.0.0.1:{}", server.addr.port());
    server.route(
        "127.0.0.1",
        "/robots.txt",
        Reply::text("User-agent: *\nAllow: /\n"),
    );
    let pages: Vec<String> = (0..PAGES).map(|i| format!("{base}/page/{i}")).collect();
    server.route("127.0.0.1", "/sitemap.txt", Reply::text(pages.join("\n")));
    for i in 0..PAGES {
        server.handle(
            "127.0.0.1",
            &format!("/page/{i}"),
            move |request: &Recorded| {
                Reply::html(format!("<p>page {i}, version {}</p>", request.hit)).to_response()
            },
        );
    }
    server
}

/// Checks recorded in the database per page URL, read with `report age`.
async fn checks_recorded(db: &str) -> std::collections::HashMap<String, i64> {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_freshet"))
        .args(["report", "age", "--db", db, "--format", "json"])
        .output()
        .await
        .expect("run freshet report");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    rows.as_array()
        .expect("rows")
        .iter()
        .filter_map(|row| {
            let url = row["url"].as_str()?;
            url.contains("/page/")
                .then(|| (url.to_string(), row["checks"].as_i64().unwrap_or(0)))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_share_the_hosts_and_survive_a_kill() {
    let Some(db) = postgres_database("three_workers").await else {
        return;
    };
    let mut servers = Vec::new();
    for _ in 0..HOSTS {
        servers.push(host().await);
    }
    let dir = tempfile::tempdir().unwrap();
    let schedule: String = servers
        .iter()
        .enumerate()
        .map(|(i, server)| {
            format!(
                "[[site]]\nname = \"site{i}\"\nsitemaps = [\"http://127.0.0.1:{}/sitemap.txt\"]\n\
                 host_rate = \"5/s\"\nrequests_per_day = 5000000\ntimeout = \"1s\"\nallow_networks = [\"127.0.0.0/8\"]\n\n",
                server.addr.port()
            )
        })
        .collect();
    let schedule = write_schedule(dir.path(), &schedule);
    let db_path = Path::new(&db);
    let start = |name: &str| {
        Freshet::run(
            &schedule,
            db_path,
            &[
                "--worker",
                name,
                "--lease-seconds",
                LEASE_SECONDS,
                "--no-status",
            ],
        )
    };
    let workers = [start("w0"), start("w1"), start("w2")];

    // Every host served pages: the workers split them and are fetching.
    let busy = |since: Instant, n: usize| {
        servers.iter().all(|s| {
            s.requests()
                .iter()
                .filter(|r| r.path.starts_with("/page/") && r.at > since)
                .count()
                >= n
        })
    };
    let began = Instant::now();
    assert!(
        wait_for(Duration::from_secs(60), || busy(began, 5)).await,
        "not every host was fetched"
    );
    // Each worker holds its share (two hosts) before one is killed.
    let pool = sqlx::PgPool::connect(&db)
        .await
        .expect("connect to the test database");
    let mut holders = 0;
    for _ in 0..600 {
        holders = sqlx::query_scalar::<_, i64>(
            "SELECT COUNT(DISTINCT worker) FROM leases WHERE kind = 'host' AND worker IS NOT NULL",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        if holders == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(holders, 3, "the three workers did not share the hosts");
    let [killed, w1, w2] = workers;
    killed.kill_now();
    let killed_at = Instant::now();
    let _ = killed.finish(Duration::from_secs(10)).await;
    // Leases expire and the two left take every host: each serves again well after the kill.
    let taken_over = killed_at + Duration::from_secs(6);
    assert!(
        wait_for(Duration::from_secs(60), || Instant::now() > taken_over
            && busy(taken_over, 5))
        .await,
        "a host of the killed worker was not taken over"
    );
    w1.terminate();
    w2.terminate();
    for worker in [w1, w2] {
        let (status, stderr) = worker
            .finish(Duration::from_secs(30))
            .await
            .expect("the worker exits after SIGTERM");
        assert!(status.success(), "a worker failed: {stderr}");
    }

    let mut served = std::collections::HashMap::new();
    for (i, server) in servers.iter().enumerate() {
        let log = server.requests();
        for r in log.iter().filter(|r| r.path.starts_with("/page/")) {
            let url = format!("http://127.0.0.1:{}{}", server.addr.port(), r.path);
            *served.entry(url).or_insert(0i64) += 1;
        }
        for pair in log.windows(2) {
            let gap = pair[1].at.duration_since(pair[0].at);
            assert!(
                gap >= INTERVAL - Duration::from_millis(1),
                "host {i}: {} then {} only {gap:?} apart",
                pair[0].path,
                pair[1].path
            );
        }
    }
    // The killed worker's leases were taken over, and the others gave theirs back at exit.
    let held: Vec<(String, i64)> = sqlx::query_as(
        "SELECT worker, COUNT(*) FROM leases WHERE kind = 'host' AND worker IS NOT NULL
         GROUP BY worker ORDER BY worker",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert!(
        held.is_empty(),
        "a clean shutdown gives every lease back: {held:?}"
    );
    // Per page: never more checks recorded than requests served (none recorded twice), and
    // fewer only by a request the killed worker had in flight (one per host at most).
    let recorded = checks_recorded(&db).await;
    let mut lost = 0;
    for (url, &hits) in &served {
        let checks = recorded.get(url).copied().unwrap_or(0);
        assert!(
            checks <= hits,
            "{url}: {checks} checks recorded for {hits} requests"
        );
        lost += hits - checks;
    }
    let requests: i64 = served.values().sum();
    assert!(
        lost <= HOSTS as i64,
        "{lost} of {requests} page requests were not recorded"
    );
    assert!(requests > 100, "{requests} page requests");
}

/// A `--once` worker that gains no host, because another worker holds the only one, says why
/// it sent nothing (helper-90 saw only "0 requests").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_once_worker_that_gains_no_host_says_why() {
    let Some(db) = postgres_database("no_host_once").await else {
        return;
    };
    let server = host().await;
    let dir = tempfile::tempdir().unwrap();
    let schedule = write_schedule(
        dir.path(),
        &format!(
            "[[site]]\nname = \"one\"\nsitemaps = [\"http://127.0.0.1:{}/sitemap.txt\"]\n\
             host_rate = \"5/s\"\nrequests_per_day = 5000000\ntimeout = \"1s\"\n\
             allow_networks = [\"127.0.0.0/8\"]\n",
            server.addr.port()
        ),
    );
    let db_path = Path::new(&db);
    let holder = Freshet::run(
        &schedule,
        db_path,
        &["--worker", "holder", "--lease-seconds", "60", "--no-status"],
    );
    let pages = || {
        server
            .requests()
            .iter()
            .filter(|r| r.path.starts_with("/page/"))
            .count()
    };
    assert!(
        wait_for(Duration::from_secs(60), || pages() >= 1).await,
        "the holder fetched nothing"
    );
    let late = tokio::process::Command::new(env!("CARGO_BIN_EXE_freshet"))
        .args([
            "run",
            "--once",
            "--no-status",
            "--worker",
            "late",
            "--schedules",
        ])
        .arg(&schedule)
        .arg("--db")
        .arg(&db)
        .output()
        .await
        .expect("run the freshet binary");
    let said = String::from_utf8_lossy(&late.stderr);
    assert!(late.status.success(), "{said}");
    assert!(said.contains("0 requests"), "{said}");
    assert!(said.contains("this worker held no host"), "{said}");
    holder.terminate();
    assert!(
        holder.finish(Duration::from_secs(60)).await.is_some(),
        "the holder did not stop"
    );
}
