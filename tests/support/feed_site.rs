//! The site of `tests/feed_restarts.rs`: pages that change on a known schedule, a sitemap and a
//! feed that lists them at their latest changes (cut short, dropping some, with a `ttl`, as a
//! test asks), and what the server's log says of the copies' age.
//!
//! Use it from a test file beside the server's modules:
//! `#[path = "support/feed_site.rs"] mod feed_site;`.
#![allow(dead_code)]

use std::sync::Arc;

use freshet::clock::{SharedClock, VirtualClock};

use crate::recording_server::{RecordingServer, Reply};
use crate::virtual_runs::{clock_reaches, run_schedule_on_until};

/// 2021-01-01T00:00:00Z: the virtual clock's origin.
pub const ORIGIN_MS: i64 = 1_609_459_200_000;
pub const HOUR_MS: i64 = 3_600_000;
pub const HOST: &str = "h.test";
/// Where the feed is served when not on [`HOST`] ([`serve_with_feed_on`]).
pub const FEED_HOST: &str = "f.test";

/// Twenty pages that change about daily, at random, every one listed by the feed.
pub fn daily_pages() -> Pages {
    Pages {
        count: 20,
        changes: Changes::Random { per_day: 1.0 },
        cut: None,
        unlisted: None,
        ttl_minutes: None,
    }
}

/// A virtual clock at [`ORIGIN_MS`], an hour a real second, and a server on it.
pub async fn clock_and_server() -> (SharedClock, Arc<RecordingServer>) {
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 3_600.0));
    let server = Arc::new(RecordingServer::start_with_clock(clock.clone()).await);
    (clock, server)
}

/// How many of the pages' stored rows wait for a feed (`db`: a SQLite file or a postgres://
/// URL).
pub async fn pages_waiting(db: &std::path::Path, server: &RecordingServer, pages: Pages) -> usize {
    let store = freshet::store::Store::open(db).await.unwrap();
    let mut waiting = 0;
    for i in 0..pages.count {
        let url = server.url(HOST, &format!("/p{i}"));
        let row = store.url_row(url.as_str()).await.unwrap().expect("a page");
        waiting += usize::from(row.waits_for_feed_id.is_some());
    }
    store.close().await;
    waiting
}

/// The stored kind and site of `url`.
pub async fn kind_and_site(db: &std::path::Path, url: &str) -> (String, i64) {
    let store = freshet::store::Store::open(db).await.unwrap();
    let row = store.url_row(url).await.unwrap().expect("its row");
    store.close().await;
    (row.kind, row.site_id)
}

/// `schedule`'s lines, each through `edit` (`None`: left out).
pub fn edit_schedule(schedule: &std::path::Path, edit: impl Fn(&str) -> Option<String>) {
    let text: String = (std::fs::read_to_string(schedule).unwrap().lines())
        .filter_map(|line| edit(line).map(|line| format!("{line}\n")))
        .collect();
    std::fs::write(schedule, text).unwrap();
}

/// A site's pages and how they change ([`Changes`]). Its feed lists each page at its latest
/// change (as most feeds do), with an `ETag` (read more often than the pages change, it mostly
/// answers 304; a first read after a restart answered 304 lists what the run before read,
/// which `scheduler::tests::restored_feeds` follows).
#[derive(Clone, Copy)]
pub struct Pages {
    pub count: usize,
    pub changes: Changes,
    /// From this instant on the feed lists only its latest few entries (clock ms, how many):
    /// its capacity was cut. Until then, and without, it lists every page.
    pub cut: Option<(i64, usize)>,
    /// From this instant on the feed no longer lists the first few pages (clock ms, how
    /// many): they moved to a section it does not cover.
    pub unlisted: Option<(i64, usize)>,
    /// The feed's `<ttl>`, minutes.
    pub ttl_minutes: Option<u32>,
}

/// When the pages change.
#[derive(Clone, Copy)]
pub enum Changes {
    /// Each every `period_ms`, page `i` at `i × stagger_ms` past each period's start.
    Periodic { period_ms: i64, stagger_ms: i64 },
    /// At random, `per_day` times a day on average (in each minute with the same chance,
    /// drawn by a hash of the page and the minute: the same in every run), the world freshet's
    /// estimator assumes.
    Random { per_day: f64 },
}

pub const MINUTE_MS: i64 = 60_000;

impl Pages {
    /// Whether page `i` changes in the minute starting at `minute_ms` ([`Changes::Random`]).
    pub fn changes_in(i: usize, minute_ms: i64, per_day: f64) -> bool {
        // splitmix64 of the page and the minute.
        let mut x = ((i as u64) << 40) ^ (minute_ms / MINUTE_MS) as u64;
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^= x >> 31;
        (x as f64) < per_day / 1_440.0 * u64::MAX as f64
    }

    /// Page `i`'s latest change at or before `at_ms`.
    pub fn latest_change(self, i: usize, at_ms: i64) -> i64 {
        match self.changes {
            Changes::Periodic {
                period_ms,
                stagger_ms,
            } => {
                let phase = ORIGIN_MS + i as i64 * stagger_ms;
                phase + (at_ms - phase).div_euclid(period_ms) * period_ms
            }
            Changes::Random { per_day } => {
                let mut minute = at_ms.div_euclid(MINUTE_MS) * MINUTE_MS;
                while minute > ORIGIN_MS - 24 * HOUR_MS && !Self::changes_in(i, minute, per_day) {
                    minute -= MINUTE_MS;
                }
                minute
            }
        }
    }

    /// Page `i`'s first change after `at_ms`.
    pub fn next_change(self, i: usize, at_ms: i64) -> i64 {
        match self.changes {
            Changes::Periodic { period_ms, .. } => self.latest_change(i, at_ms) + period_ms,
            Changes::Random { per_day } => {
                let mut minute = at_ms.div_euclid(MINUTE_MS) * MINUTE_MS + MINUTE_MS;
                while !Self::changes_in(i, minute, per_day) {
                    minute += MINUTE_MS;
                }
                minute
            }
        }
    }

    /// The pages the feed lists at `at_ms`: the latest changed first, as many as it holds.
    pub fn listed(self, at_ms: i64) -> Vec<usize> {
        let gone = match self.unlisted {
            Some((from_ms, gone)) if at_ms >= from_ms => gone,
            _ => 0,
        };
        let mut pages: Vec<(i64, usize)> = (gone..self.count)
            .map(|i| (self.latest_change(i, at_ms), i))
            .collect();
        pages.sort_by_key(|&(at, i)| (std::cmp::Reverse(at), i));
        let holds = match self.cut {
            Some((from_ms, holds)) if at_ms >= from_ms => holds,
            _ => self.count,
        };
        pages.truncate(holds);
        pages.into_iter().map(|(_, i)| i).collect()
    }

    /// The latest change of any page: the feed's version.
    pub fn feed_version(self, at_ms: i64) -> i64 {
        (0..self.count)
            .map(|i| self.latest_change(i, at_ms))
            .max()
            .unwrap_or(ORIGIN_MS)
    }
}

pub fn rfc2822(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .expect("a date")
        .to_rfc2822()
}

pub fn serve(server: &RecordingServer, pages: Pages) {
    serve_with_feed_on(server, pages, HOST);
}

/// [`serve`], with the feed on `feed_host` (cross-submitted by [`HOST`]'s robots.txt, so that
/// it speaks for the pages there).
pub fn serve_with_feed_on(server: &RecordingServer, pages: Pages, feed_host: &str) {
    let base = format!("http://{HOST}:{}", server.addr.port());
    let allow = "User-agent: *\nAllow: /\n";
    let mut robots = allow.to_string();
    if feed_host != HOST {
        server.route(feed_host, "/robots.txt", Reply::text(allow));
        robots.push_str(&format!(
            "Sitemap: {}\n",
            server.url(feed_host, "/feed.xml")
        ));
    }
    server.route(HOST, "/robots.txt", Reply::text(robots));
    let locs = (0..pages.count).map(|i| format!("{base}/p{i}"));
    server.route(HOST, "/sitemap.xml", Reply::sitemap(locs));
    let feed_base = base.clone();
    server.handle(feed_host, "/feed.xml", move |request| {
        // (A document cut short is another document.)
        let holds = pages.listed(request.clock_ms).len();
        let etag = format!("\"{}-{holds}\"", pages.feed_version(request.clock_ms));
        if request.header("if-none-match") == Some(etag.as_str()) {
            return Reply::status(304).header("etag", &etag).to_response();
        }
        let items: String = (pages.listed(request.clock_ms).into_iter())
            .map(|i| {
                let changed = rfc2822(pages.latest_change(i, request.clock_ms));
                format!(
                    "<item><title>p{i}</title><link>{feed_base}/p{i}</link>\
                     <guid>{feed_base}/p{i}</guid><pubDate>{changed}</pubDate></item>"
                )
            })
            .collect();
        let ttl = (pages.ttl_minutes).map_or(String::new(), |ttl| format!("<ttl>{ttl}</ttl>"));
        Reply::status(200)
            .header("content-type", "application/rss+xml")
            .header("etag", &etag)
            .body(format!(
                r#"<?xml version="1.0"?><rss version="2.0"><channel><title>h</title><link>{feed_base}/</link><description>h</description>{ttl}{items}</channel></rss>"#
            ))
            .to_response()
    });
    for i in 0..pages.count {
        server.handle(HOST, &format!("/p{i}"), move |request| {
            let version = pages.latest_change(i, request.clock_ms);
            Reply::html(format!(
                "<html><body><p>page {i}, version {version}</p></body></html>"
            ))
            .to_response()
        });
    }
}

/// Reads of the feed between two instants (clock ms).
pub fn feed_reads(server: &RecordingServer, from_ms: i64, to_ms: i64) -> usize {
    feed_reads_on(server, HOST, from_ms, to_ms)
}

/// [`feed_reads`] of the feed on `feed_host`.
pub fn feed_reads_on(server: &RecordingServer, feed_host: &str, from_ms: i64, to_ms: i64) -> usize {
    (server.requests_to(feed_host).into_iter())
        .filter(|r| r.path == "/feed.xml" && (from_ms..to_ms).contains(&r.clock_ms))
        .count()
}

/// Page requests between two instants (clock ms), and the mean time from a page's change
/// in that window to the first request for it after (hours): how long the copies stayed
/// stale, as the server sees it.
pub fn page_visits(
    server: &RecordingServer,
    pages: Pages,
    from_ms: i64,
    to_ms: i64,
) -> (usize, f64) {
    let requests = server.requests_to(HOST);
    let visits = |i: usize| -> Vec<i64> {
        (requests.iter())
            .filter(|r| r.path == format!("/p{i}"))
            .map(|r| r.clock_ms)
            .collect()
    };
    let (mut count, mut lag_ms, mut changes) = (0, 0i64, 0i64);
    for i in 0..pages.count {
        let at = visits(i);
        count += at
            .iter()
            .filter(|&&t| (from_ms..to_ms).contains(&t))
            .count();
        let mut change = pages.next_change(i, from_ms);
        while change < to_ms {
            if let Some(&seen) = at.iter().find(|&&t| t >= change) {
                lag_ms += seen - change;
                changes += 1;
            }
            change = pages.next_change(i, change);
        }
    }
    (
        count,
        lag_ms as f64 / changes.max(1) as f64 / HOUR_MS as f64,
    )
}

/// The copies' mean age between two instants (hours), as the server's log and the world's
/// changes tell it: at each instant a copy is as old as the time since the first change after
/// the request that fetched it (0 while none came), averaged over the pages and the time.
pub fn mean_age_hours(server: &RecordingServer, pages: Pages, from_ms: i64, to_ms: i64) -> f64 {
    mean_age_hours_of(server, pages, 0..pages.count, from_ms, to_ms)
}

/// [`mean_age_hours`] of the pages `which`.
pub fn mean_age_hours_of(
    server: &RecordingServer,
    pages: Pages,
    which: std::ops::Range<usize>,
    from_ms: i64,
    to_ms: i64,
) -> f64 {
    let requests = server.requests_to(HOST);
    let mut age_ms2 = 0.0;
    let count = which.len();
    for i in which {
        let mut visits: Vec<i64> = (requests.iter())
            .filter(|r| r.path == format!("/p{i}") && r.clock_ms < to_ms)
            .map(|r| r.clock_ms)
            .collect();
        visits.sort_unstable();
        visits.push(to_ms);
        // From each fetch (the last before `from_ms` first) to the next.
        let first = visits.partition_point(|&t| t <= from_ms).saturating_sub(1);
        for pair in visits[first..].windows(2) {
            let (fetched, next) = (pair[0], pair[1]);
            let stale_from = pages.next_change(i, fetched).max(from_ms);
            let until = next.min(to_ms);
            if stale_from < until {
                let change = pages.next_change(i, fetched);
                let (a, b) = ((stale_from - change) as f64, (until - change) as f64);
                age_ms2 += (b * b - a * a) / 2.0;
            }
        }
    }
    age_ms2 / (count as f64 * (to_ms - from_ms) as f64) / HOUR_MS as f64
}

/// Writes the site's schedule file in `dir`.
pub fn write_schedule(
    dir: &std::path::Path,
    server: &RecordingServer,
    requests_per_day: u32,
) -> std::path::PathBuf {
    write_schedule_with_feed_on(dir, server, requests_per_day, HOST)
}

/// [`write_schedule`], the feed on `feed_host` ([`serve_with_feed_on`]).
pub fn write_schedule_with_feed_on(
    dir: &std::path::Path,
    server: &RecordingServer,
    requests_per_day: u32,
    feed_host: &str,
) -> std::path::PathBuf {
    let schedule = dir.join("feed_restarts.toml");
    let site = format!(
        "[[site]]\nname = \"{HOST}\"\nallow_networks = [\"127.0.0.0/8\"]\n\
         sitemaps = [\"{}\"]\nfeeds = [\"{}\"]\nrediscover = \"0 0 0 * * *\"\n\
         requests_per_day = {requests_per_day}\nhost_rate = \"60/h\"\n",
        server.url(HOST, "/sitemap.xml"),
        server.url(feed_host, "/feed.xml"),
    );
    std::fs::write(&schedule, site).unwrap();
    schedule
}

/// Runs the site of `pages` with `requests_per_day` for `before_hours`, stops, and runs it
/// again on the same database (`postgres`: a postgres:// URL; else a SQLite file) for
/// `after_hours`: the server, and the restart's instant.
pub async fn run_and_restart(
    pages: Pages,
    requests_per_day: u32,
    before_hours: i64,
    after_hours: i64,
    postgres: Option<String>,
) -> (Arc<RecordingServer>, i64) {
    // An hour of virtual time is a real second.
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 3_600.0));
    let server = Arc::new(RecordingServer::start_with_clock(clock.clone()).await);
    serve(&server, pages);
    let dir = tempfile::tempdir().unwrap();
    let schedule = write_schedule(dir.path(), &server, requests_per_day);
    let run_for = |hours: i64| clock_reaches(clock.clone(), clock.now_ms() + hours * HOUR_MS);
    let hosts = [HOST];
    let db = postgres.map_or_else(|| dir.path().join("freshet.db"), std::path::PathBuf::from);
    let first = run_for(before_hours);
    let again = schedule.clone();
    run_schedule_on_until(&server, &clock, db.clone(), again, &hosts, first).await;
    let restarted_ms = clock.now_ms();
    let second = run_for(after_hours);
    run_schedule_on_until(&server, &clock, db, schedule, &hosts, second).await;
    (server, restarted_ms)
}
