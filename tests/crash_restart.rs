//! The crash test: the built binary runs `freshet run` against two recording loopback servers (a
//! host with `Crawl-delay: 1` and a host answering every page with `429 Retry-After: 2`), is
//! killed with SIGKILL at random moments (seeded), restarted at once, again and again. Then the
//! servers' logs and the database are compared:
//! - `PRAGMA integrity_check` is `ok` after every kill;
//! - every check committed before a kill is still there at the end, and no URL has more
//!   committed checks with a response than the server answered;
//! - the Crawl-delay host never saw two requests less than its Crawl-delay apart, across
//!   restarts included (the one exception: robots.txt asked again because the process died
//!   before its answer was committed, which is held to the schedule's own rate);
//! - the Retry-After host was never contacted before a Retry-After it had sent expired.
//!
//! `FRESHET_CRASH_RESTARTS` sets the number of kills (default 10; the figure is 100):
//! `FRESHET_CRASH_RESTARTS=100 cargo test --test crash_restart -- --nocapture`.

#[path = "support/freshet_bin.rs"]
mod freshet_bin;
#[path = "support/recording_server.rs"]
mod recording_server;

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::time::{Duration, Instant};

use freshet_bin::{Freshet, write_schedule};
use rand::{Rng, SeedableRng};
use recording_server::{Recorded, RecordingServer, Reply};
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection};

const HOST: &str = "127.0.0.1";
const CRAWL_DELAY: Duration = Duration::from_secs(1);
/// The schedule's own rate for both hosts (4/s), the limit before robots.txt is read.
const SCHEDULE_GAP: Duration = Duration::from_millis(250);
const RETRY_AFTER: Duration = Duration::from_secs(2);
const SEED: u64 = 0x000f_5e57;

fn restarts() -> usize {
    std::env::var("FRESHET_CRASH_RESTARTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10)
}

/// Committed checks (observation id, URL) and the integrity verdict, read after a kill.
async fn read_db(db: &Path) -> (String, BTreeSet<(i64, String)>) {
    let mut conn = SqliteConnectOptions::new()
        .filename(db)
        .connect()
        .await
        .expect("open the database after the kill");
    let (integrity,): (String,) = sqlx::query_as("PRAGMA integrity_check")
        .fetch_one(&mut conn)
        .await
        .expect("integrity check");
    let rows: Vec<(i64, String)> = sqlx::query_as(
        "SELECT o.id, u.url FROM observations o JOIN urls u ON u.id = o.url_id
         WHERE o.status IS NOT NULL",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap_or_default();
    conn.close().await.expect("close");
    (integrity, rows.into_iter().collect())
}

fn sites(crawl: &RecordingServer, busy: &RecordingServer) -> String {
    let mut text = String::new();
    for (name, server) in [("crawl", crawl), ("busy", busy)] {
        text.push_str(&format!(
            "[[site]]\nname = \"{name}\"\nsitemaps = [\"http://{HOST}:{}/sitemap.txt\"]\n\
             host_rate = \"4/s\"\nrequests_per_day = 1000000\nallow_networks = [\"127.0.0.0/8\"]\n",
            server.addr.port()
        ));
    }
    text
}

/// Serves the two hosts: 30 changing pages behind a Crawl-delay, and 5 pages answering 429
/// (`Retry-After: 2`) every other time.
fn serve(crawl: &RecordingServer, busy: &RecordingServer) {
    crawl.route(
        HOST,
        "/robots.txt",
        Reply::text(format!(
            "User-agent: *\nCrawl-delay: {}\n",
            CRAWL_DELAY.as_secs()
        )),
    );
    let base = format!("http://{HOST}:{}", crawl.addr.port());
    let list: String = (0..30).map(|i| format!("{base}/p{i}\n")).collect();
    crawl.route(HOST, "/sitemap.txt", Reply::text(list));
    for i in 0..30 {
        crawl.handle(HOST, &format!("/p{i}"), move |request| {
            Reply::html(format!("<p>page {i}, version {}</p>", request.hit / 2)).to_response()
        });
    }
    busy.route(HOST, "/robots.txt", Reply::status(404));
    let base = format!("http://{HOST}:{}", busy.addr.port());
    let list: String = (0..5).map(|i| format!("{base}/busy{i}\n")).collect();
    busy.route(HOST, "/sitemap.txt", Reply::text(list));
    // Every other answer is a 429, so the host keeps recovering and being closed again.
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for i in 0..5 {
        let seen = std::sync::Arc::clone(&seen);
        busy.handle(HOST, &format!("/busy{i}"), move |_| {
            if seen
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
                .is_multiple_of(2)
            {
                Reply::status(429)
                    .header("retry-after", &RETRY_AFTER.as_secs().to_string())
                    .to_response()
            } else {
                Reply::html(format!("<p>busy {i}</p>")).to_response()
            }
        });
    }
}

/// Gaps between consecutive requests below the limit: (earlier path, later path, gap).
fn short_gaps(log: &[Recorded]) -> (Vec<(String, String, Duration)>, Duration) {
    let mut short = Vec::new();
    let mut least = Duration::MAX;
    for pair in log.windows(2) {
        let gap = pair[1].at.duration_since(pair[0].at);
        // robots.txt twice: the first answer died with the process before it was committed,
        // so only the schedule's rate was known.
        let robots_again = pair[0].path == "/robots.txt" && pair[1].path == "/robots.txt";
        let limit = if robots_again {
            SCHEDULE_GAP
        } else {
            CRAWL_DELAY
        };
        if !robots_again {
            least = least.min(gap);
        }
        if gap < limit {
            short.push((pair[0].path.clone(), pair[1].path.clone(), gap));
        }
    }
    (short, least)
}

/// Requests that came before a Retry-After sent earlier had expired: (429 at, next, early by).
/// The pages' answers alternate 429, 200, 429, ... in arrival order.
fn early_after_retry(log: &[Recorded]) -> (Vec<(usize, usize, Duration)>, usize) {
    let mut early = Vec::new();
    let mut throttles = 0;
    let mut pages: usize = 0;
    for (i, answered) in log.iter().enumerate() {
        if !answered.path.starts_with("/busy") {
            continue; // robots.txt and the sitemap answer 404 / 200
        }
        pages += 1;
        if pages.is_multiple_of(2) {
            continue; // a 200
        }
        throttles += 1;
        if let Some((j, next)) = log.iter().enumerate().nth(i + 1) {
            let gap = next.at.duration_since(answered.at);
            if gap < RETRY_AFTER {
                early.push((i, j, RETRY_AFTER - gap));
            }
        }
    }
    (early, throttles)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_at_random_moments_keeps_data_and_politeness() {
    let crawl = RecordingServer::start().await;
    let busy = RecordingServer::start().await;
    serve(&crawl, &busy);
    let dir = tempfile::tempdir().unwrap();
    let schedule = write_schedule(dir.path(), &sites(&crawl, &busy));
    let db = dir.path().join("crash.db");
    let mut rng = rand::rngs::StdRng::seed_from_u64(SEED);
    let started = Instant::now();

    let restarts = restarts();
    let mut committed_before: BTreeSet<(i64, String)> = BTreeSet::new();
    let mut kills: Vec<Instant> = Vec::new();
    for round in 0..restarts {
        let run = Freshet::run(&schedule, &db, &[]);
        let lifetime = Duration::from_millis(rng.random_range(100..2_000));
        tokio::time::sleep(lifetime).await;
        run.kill_now();
        kills.push(Instant::now());
        let (status, _) = run
            .finish(Duration::from_secs(30))
            .await
            .expect("a killed process ends");
        assert_eq!(status.code(), None, "round {round}: killed, not exited");
        if !db.exists() {
            continue; // killed before the database was created
        }
        let (integrity, committed) = read_db(&db).await;
        assert_eq!(integrity, "ok", "round {round}");
        let lost: Vec<_> = committed_before.difference(&committed).collect();
        assert!(
            lost.is_empty(),
            "round {round}: committed checks lost: {lost:?}"
        );
        committed_before = committed;
    }

    let (integrity, committed) = read_db(&db).await;
    assert_eq!(integrity, "ok");
    assert!(committed_before.is_subset(&committed));
    // No more committed answers per URL than the server gave.
    let mut answered: HashMap<String, usize> = HashMap::new();
    for server in [&crawl, &busy] {
        for r in server.requests() {
            let url = format!("http://{HOST}:{}{}", server.addr.port(), r.path);
            *answered.entry(url).or_default() += 1;
        }
    }
    let mut per_url: HashMap<&str, usize> = HashMap::new();
    for (_, url) in &committed {
        *per_url.entry(url.as_str()).or_default() += 1;
    }
    for (url, n) in &per_url {
        let served = answered.get(*url).copied().unwrap_or(0);
        assert!(*n <= served, "{url}: {n} committed checks, {served} served");
    }

    let crawl_log = crawl.requests();
    let (short, least) = short_gaps(&crawl_log);
    // Gaps with a kill and a restart between their two requests: the ones a restart could break.
    let across: Vec<Duration> = crawl_log
        .windows(2)
        .filter(|pair| kills.iter().any(|k| pair[0].at < *k && *k < pair[1].at))
        .map(|pair| pair[1].at.duration_since(pair[0].at))
        .collect();
    let busy_log = busy.requests();
    let (early, throttles) = early_after_retry(&busy_log);
    eprintln!(
        "crash test: {restarts} SIGKILL restarts in {:?}; integrity ok; {} committed checks, none lost; \
         Crawl-delay host: {} requests, {} gaps below {CRAWL_DELAY:?} (least gap {least:?}; \
         {} gaps across a restart, least {:?}); \
         Retry-After host: {} requests, {throttles} answered 429, {} contacted before expiry",
        started.elapsed(),
        committed.len(),
        crawl_log.len(),
        short.len(),
        across.len(),
        across.iter().min(),
        busy_log.len(),
        early.len(),
    );
    assert!(
        crawl_log.len() > 3,
        "the Crawl-delay host was barely visited"
    );
    assert!(
        short.is_empty(),
        "gaps below the limit on the Crawl-delay host: {short:?}"
    );
    assert!(throttles >= 1, "the Retry-After host was never reached");
    assert!(
        early.is_empty(),
        "the Retry-After host was contacted before expiry: {early:?}"
    );
}
