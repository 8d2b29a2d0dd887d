//! Announced changes that never came, as the server sees them. Three sites, each with four
//! pages that never change beside four that change at every request: `s.test`'s sitemap
//! stamps its quiet pages' `lastmod`s with the time it is read, `f.test`'s feed re-dates its
//! entries for them at each read, and `n.test` tells the truth. Every sitemap gives the busy
//! pages their true `lastmod`, so that the hosts' `lastmod`s earn belief. Believed, the false
//! announcements sent the quiet pages after the reads and spent the site's budget on them.
//! After a couple of checks that find nothing new, the sitemap's `lastmod`s are not believed;
//! the feed is seen at its second read to date its entries at the read, and its entries are
//! taken for no changes. The quiet pages are asked about as often as the honest site's, and
//! the store does not show them as known stale.

#[path = "support/recording_server.rs"]
mod recording_server;
#[path = "support/virtual_runs.rs"]
mod virtual_runs;

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use freshet::clock::{Clock, SharedClock, VirtualClock};
use sqlx::{ConnectOptions, Connection};

use recording_server::{RecordingServer, Reply};
use virtual_runs::{clock_reaches, run_schedule_until, until};

/// 2021-01-01T00:00:00Z: the virtual clock's origin.
const ORIGIN_MS: i64 = 1_609_459_200_000;
const HOUR_MS: i64 = 3_600_000;
const QUIET: [&str; 4] = ["/q1", "/q2", "/q3", "/q4"];
const BUSY: [&str; 4] = ["/b1", "/b2", "/b3", "/b4"];
const HOSTS: [&str; 3] = ["s.test", "f.test", "n.test"];

fn rfc3339(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .expect("a date")
        .to_rfc3339()
}

/// `host`'s pages, robots.txt and sitemap (the quiet pages stamped with the read's time when
/// `stamped`, the busy ones with their last change: their last request), and its feed of the
/// quiet pages (re-dated at each read when `redated`).
fn serve(server: &RecordingServer, host: &str, stamped: bool, redated: bool) {
    let changed: Arc<Mutex<HashMap<&'static str, i64>>> = Arc::default();
    let changes = Arc::clone(&changed);
    let base = format!("http://{host}:{}", server.addr.port());
    server.route(
        host,
        "/robots.txt",
        Reply::text("User-agent: *\nAllow: /\n"),
    );
    let sitemap_base = base.clone();
    server.handle(host, "/sitemap.xml", move |request| {
        let quiet_lastmod = if stamped { request.clock_ms } else { ORIGIN_MS };
        let mut urls = String::new();
        for path in QUIET {
            urls += &format!(
                "<url><loc>{sitemap_base}{path}</loc><lastmod>{}</lastmod></url>",
                rfc3339(quiet_lastmod)
            );
        }
        for path in BUSY {
            let lastmod = changes.lock().unwrap().get(path).copied();
            urls += &format!(
                "<url><loc>{sitemap_base}{path}</loc><lastmod>{}</lastmod></url>",
                rfc3339(lastmod.unwrap_or(ORIGIN_MS))
            );
        }
        Reply::status(200)
            .header("content-type", "application/xml")
            .body(format!(
                r#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>"#
            ))
            .to_response()
    });
    let feed_base = base.clone();
    server.handle(host, "/feed.xml", move |request| {
        let dated = if redated { request.clock_ms } else { ORIGIN_MS };
        let date = chrono::DateTime::from_timestamp_millis(dated)
            .expect("a date")
            .to_rfc2822();
        let items: String = QUIET
            .iter()
            .map(|path| {
                format!(
                    "<item><title>{path}</title><link>{feed_base}{path}</link>\
                     <guid>{feed_base}{path}</guid><pubDate>{date}</pubDate></item>"
                )
            })
            .collect();
        Reply::status(200)
            .header("content-type", "application/rss+xml")
            .body(format!(
                r#"<?xml version="1.0"?><rss version="2.0"><channel><title>f</title><link>{feed_base}/</link><description>f</description>{items}</channel></rss>"#
            ))
            .to_response()
    });
    for path in QUIET {
        server.route(
            host,
            path,
            Reply::html(format!(
                "<html><body><p>{path} never changes</p></body></html>"
            )),
        );
    }
    for path in BUSY {
        let changed = Arc::clone(&changed);
        server.handle(host, path, move |request| {
            changed.lock().unwrap().insert(path, request.clock_ms);
            Reply::html(format!(
                "<html><body><p>{path}, version {}</p></body></html>",
                request.hit
            ))
            .to_response()
        });
    }
}

/// Requests to `host`'s paths among `paths` after `from_ms` (clock time).
fn requests(server: &RecordingServer, host: &str, paths: &[&str], from_ms: i64) -> usize {
    server
        .requests_to(host)
        .into_iter()
        .filter(|r| r.clock_ms >= from_ms && paths.contains(&r.path.as_str()))
        .count()
}

/// What the store shows of `host`: its pages known stale (a change announced after the copy),
/// its learnt trust, and the errors recorded for its feed.
struct Stored {
    known_stale: i64,
    trust: serde_json::Value,
    feed_errors: Vec<String>,
}

async fn stored(db: &Path, host: &str) -> Stored {
    let mut conn = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(db)
        .read_only(true)
        .connect()
        .await
        .expect("the database");
    let stale: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM urls WHERE kind = 'page' AND url LIKE '%' || ? || '%'
         AND known_change_ms > copy_ms",
    )
    .bind(host)
    .fetch_one(&mut conn)
    .await
    .expect("the count");
    let trust: Option<String> =
        sqlx::query_scalar("SELECT trust_json FROM hosts WHERE origin LIKE '%' || ? || '%'")
            .bind(host)
            .fetch_one(&mut conn)
            .await
            .expect("the host");
    let feed_errors: Vec<String> = sqlx::query_scalar(
        "SELECT message FROM errors WHERE scope = 'feed' AND url LIKE '%' || ? || '%'",
    )
    .bind(host)
    .fetch_all(&mut conn)
    .await
    .expect("the errors");
    let _ = conn.close().await;
    Stored {
        known_stale: stale,
        trust: serde_json::from_str(&trust.unwrap_or_default()).unwrap_or_default(),
        feed_errors,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stamping_sitemap_and_a_redating_feed_do_not_take_the_budget() {
    // An hour of virtual time is a real second.
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 3_600.0));
    let server = Arc::new(RecordingServer::start_with_clock(clock.clone()).await);
    serve(&server, "s.test", true, false);
    serve(&server, "f.test", false, true);
    serve(&server, "n.test", false, false);
    let dir = tempfile::tempdir().unwrap();
    let schedule = dir.path().join("false_alarms.toml");
    let mut sites = String::new();
    for host in HOSTS {
        // The honest site has no feed: its quiet pages are on their plan.
        let feeds = match host {
            "n.test" => String::new(),
            _ => format!("feeds = [\"{}\"]\n", server.url(host, "/feed.xml")),
        };
        sites += &format!(
            "[[site]]\nname = \"{host}\"\nallow_networks = [\"127.0.0.0/8\"]\n\
             sitemaps = [\"{}\"]\n{feeds}rediscover = \"0 0 * * * *\"\n\
             requests_per_day = 96\nhost_rate = \"60/h\"\n\n",
            server.url(host, "/sitemap.xml"),
        );
    }
    std::fs::write(&schedule, sites).unwrap();

    let enough = clock_reaches(clock.clone(), ORIGIN_MS + 24 * HOUR_MS);
    run_schedule_until(&server, &clock, dir.path(), schedule, &HOSTS, enough).await;

    let db = dir.path().join("freshet.db");
    // Judged after the first six hours, when each host has had its first reads and checks.
    let from = ORIGIN_MS + 6 * HOUR_MS;
    let honest = requests(&server, "n.test", &QUIET, from);
    for host in HOSTS {
        let quiet = requests(&server, host, &QUIET, from);
        let busy = requests(&server, host, &BUSY, from);
        let reads = requests(&server, host, &["/sitemap.xml", "/feed.xml"], from);
        let what = format!(
            "{host}: {quiet} requests to the quiet pages (the honest site's: {honest}), {busy} \
             to the busy ones, {reads} sitemap and feed reads"
        );
        eprintln!("{what}");
        assert!(quiet <= honest + honest / 2 + 3, "{what}");
        assert!(busy > 0, "{what}");
        let Stored {
            known_stale,
            trust,
            feed_errors,
        } = stored(&db, host).await;
        assert_eq!(known_stale, 0, "{what}");
        // The re-dating feed is seen to date its entries at each read, and its entries are
        // taken for no changes: they send nothing and raise no false alarms, but for its first
        // read, which cannot tell. If that read comes after the quiet pages' first copies
        // (whichever the frontier hands out first), it announces them, and their checks find
        // nothing new: up to one false alarm each.
        let feed_false_alarms = &trust["announcements"]["feed"]["false_alarms"];
        let most = if host == "f.test" {
            QUIET.len() as u64
        } else {
            1
        };
        assert!(feed_false_alarms.as_u64() <= Some(most), "{what}: {trust}");
        let stamping = feed_errors.iter().any(|m| m.contains("dated at each read"));
        assert_eq!(stamping, host == "f.test", "{what}: {feed_errors:?}");
    }
}

/// What the store holds of `host`'s feed: errors saying its entries are dated at each read,
/// whether it is kept as stamping, its reads in a row that looked stamped, and what its last
/// read left as stored.
async fn stamping_as_stored(db: &Path, host: &str) -> (usize, bool, u64, Option<String>) {
    let Ok(mut conn) = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(db)
        .read_only(true)
        .connect()
        .await
    else {
        return (0, false, 0, None); // not made yet
    };
    let errors: Vec<String> = sqlx::query_scalar(
        "SELECT message FROM errors WHERE scope = 'feed' AND url LIKE '%' || ? || '%'",
    )
    .bind(host)
    .fetch_all(&mut conn)
    .await
    .unwrap_or_default();
    let feed: Option<(Option<i64>, Option<String>)> = sqlx::query_as(
        "SELECT stamps_entries_since_ms, last_read_json FROM urls
         WHERE kind = 'feed' AND url LIKE '%' || ? || '%'",
    )
    .bind(host)
    .fetch_optional(&mut conn)
    .await
    .ok()
    .flatten();
    let _ = conn.close().await;
    let said = errors
        .iter()
        .filter(|m| m.contains("dated at each read"))
        .count();
    let (since, json) = feed.unwrap_or_default();
    let reads: serde_json::Value =
        serde_json::from_str(json.as_deref().unwrap_or_default()).unwrap_or_default();
    let stamped_reads = reads["stamped_reads"].as_u64().unwrap_or(0);
    (said, since.is_some(), stamped_reads, json)
}

/// The test's virtual clock, moved on by hand between runs (a restart a week later).
#[derive(Debug)]
struct JumpingClock {
    running: VirtualClock,
    jumped_ms: AtomicI64,
}

impl Clock for JumpingClock {
    fn now_ms(&self) -> i64 {
        self.running.now_ms() + self.jumped_ms.load(Ordering::SeqCst)
    }

    fn speed(&self) -> f64 {
        self.running.speed()
    }
}

/// A feed that re-dates its entries at each read, read once in each of several runs a week
/// apart (as a `run --once` pass from cron reads it): what its reads showed is kept with the
/// feed's row, so each read goes on from the one before instead of starting again, the third
/// judges it, and the run after knows it at its first read. Before, every read was a first
/// read, taken at its word, and the feed was never judged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_read_once_a_run_is_judged_over_restarts() {
    let jumping = Arc::new(JumpingClock {
        running: VirtualClock::new(ORIGIN_MS, 3_600.0),
        jumped_ms: AtomicI64::new(0),
    });
    let clock: SharedClock = jumping.clone();
    let server = Arc::new(RecordingServer::start_with_clock(clock.clone()).await);
    serve(&server, "f.test", false, true);
    let dir = tempfile::tempdir().unwrap();
    let schedule = dir.path().join("restarts.toml");
    let site = format!(
        "[[site]]\nname = \"f.test\"\nallow_networks = [\"127.0.0.0/8\"]\n\
         sitemaps = [\"{}\"]\nfeeds = [\"{}\"]\nrediscover = \"0 0 * * * *\"\n\
         requests_per_day = 96\nhost_rate = \"60/h\"\n",
        server.url("f.test", "/sitemap.xml"),
        server.url("f.test", "/feed.xml"),
    );
    std::fs::write(&schedule, site).unwrap();
    let db = dir.path().join("freshet.db");
    let mut runs = Vec::new();
    for _ in 0..4 {
        // A run until its first read of the feed is stored (or half a day passes: the
        // asserts say so), then a week without one.
        let started_ms = clock.now_ms();
        let stored_before = stamping_as_stored(&db, "f.test").await.3;
        let (now, watched) = (clock.clone(), db.clone());
        let read_stored = until(move || {
            let (now, db, before) = (now.now_ms(), watched.clone(), stored_before.clone());
            async move {
                now >= started_ms + 12 * HOUR_MS
                    || stamping_as_stored(&db, "f.test").await.3 != before
            }
        });
        let hosts = ["f.test"];
        run_schedule_until(
            &server,
            &clock,
            dir.path(),
            schedule.clone(),
            &hosts,
            read_stored,
        )
        .await;
        let reads = requests(&server, "f.test", &["/feed.xml"], started_ms);
        let (said, kept, stamped_reads, _) = stamping_as_stored(&db, "f.test").await;
        runs.push((reads, said, kept, stamped_reads));
        jumping
            .jumped_ms
            .fetch_add(7 * 24 * HOUR_MS + HOUR_MS, Ordering::SeqCst);
    }
    let what = format!("by run (feed reads, errors said, kept, stamped reads): {runs:?}");
    eprintln!("{what}");
    // Each run reads the feed once; the second read is the first that can tell (it re-lists
    // the pages the first listed, at the read's time); the third judges it, and the fourth
    // is known to stamp at once (the scheduler's `stamped_feeds` tests show that such a read
    // announces nothing).
    assert_eq!(
        runs,
        [
            (1, 0, false, 0),
            (1, 0, false, 1),
            (1, 1, true, 2),
            (1, 1, true, 3)
        ],
        "{what}"
    );
}
