//! The kind of a URL is the one its schedule names it with, from the next start on, as the
//! server sees it: a feed named first by a robots.txt (stored as a sitemap) or as a seed (a
//! page) is read as a feed once the schedule's `feeds` name it, and a feed taken out of them is
//! no longer read. (A seed named a sitemap later: `schedule_edits.rs`.)

#[path = "support/feed_site.rs"]
mod feed_site;
#[path = "support/postgres.rs"]
mod postgres;
#[path = "support/recording_server.rs"]
mod recording_server;
#[path = "support/virtual_runs.rs"]
mod virtual_runs;

use std::path::{Path, PathBuf};

use feed_site::{FEED_HOST, HOST, HOUR_MS, ORIGIN_MS};
use freshet::clock::SharedClock;
use freshet::store::Store;
use recording_server::RecordingServer;

/// The same feed, named first by the robots.txt (stored as a sitemap) or as a seed (a page),
/// and added to the schedule's `feeds` later. The first kind stored stayed: the feed went on
/// being read as a sitemap once a day, or checked as a page, and no page ever waited for it. A
/// start makes the row of a URL the schedule names as a feed a feed, read as one from then on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_the_schedule_names_after_robots_txt_did_is_read_as_a_feed() {
    feed_named_later(FEED_HOST, "sitemap").await;
}

/// [`a_feed_the_schedule_names_after_robots_txt_did_is_read_as_a_feed`], the feed a seed
/// first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_the_schedule_names_after_it_was_a_seed_is_read_as_a_feed() {
    feed_named_later(HOST, "page").await;
}

/// The site of [`feed_site`] (twenty pages changing about daily, a feed on `feed_host`), its
/// schedule (100 requests a day) and database in a temporary folder (`db`: else a SQLite file).
struct Site {
    clock: SharedClock,
    server: std::sync::Arc<RecordingServer>,
    schedule: PathBuf,
    db: PathBuf,
    feed_host: &'static str,
    _dir: tempfile::TempDir,
}

impl Site {
    async fn new(feed_host: &'static str, db: Option<String>) -> Self {
        let (clock, server) = feed_site::clock_and_server().await;
        feed_site::serve_with_feed_on(&server, feed_site::daily_pages(), feed_host);
        let dir = tempfile::tempdir().unwrap();
        let schedule = feed_site::write_schedule_with_feed_on(dir.path(), &server, 100, feed_host);
        let db = db.map_or_else(|| dir.path().join("freshet.db"), PathBuf::from);
        Site {
            clock,
            server,
            schedule,
            db,
            feed_host,
            _dir: dir,
        }
    }

    fn feed(&self) -> String {
        self.server.url(self.feed_host, "/feed.xml").to_string()
    }

    /// Runs the refresher on the schedule as it is now until the clock reaches `end_ms`.
    async fn run_until(&self, end_ms: i64) {
        let until = virtual_runs::clock_reaches(self.clock.clone(), end_ms);
        self.run_while(until).await;
    }

    /// Runs the refresher on the schedule as it is now until `until` ends.
    async fn run_while(&self, until: impl std::future::Future<Output = ()> + Send + 'static) {
        let hosts = [HOST, self.feed_host];
        let (db, schedule) = (self.db.clone(), self.schedule.clone());
        virtual_runs::run_schedule_on_until(&self.server, &self.clock, db, schedule, &hosts, until)
            .await;
    }

    fn feed_reads(&self, from_ms: i64, to_ms: i64) -> usize {
        feed_site::feed_reads_on(&self.server, self.feed_host, from_ms, to_ms)
    }

    async fn pages_waiting(&self) -> usize {
        feed_site::pages_waiting(&self.db, &self.server, feed_site::daily_pages()).await
    }

    /// Runs the refresher until `end_ms`, the feed's row made a `kind`'s at `changed_ms` (as
    /// another worker's start on a newer schedule does, beside the running refresher);
    /// answers when those statements had committed.
    async fn run_with_feed_made(&self, changed_ms: i64, end_ms: i64, kind: &'static str) -> i64 {
        let made_ms = std::sync::Arc::new(std::sync::atomic::AtomicI64::new(i64::MAX));
        let until = {
            let (clock, db, feed) = (self.clock.clone(), self.db.clone(), self.feed());
            let made_ms = made_ms.clone();
            async move {
                virtual_runs::clock_reaches(clock.clone(), changed_ms).await;
                make_kind(&db, &feed, kind).await;
                made_ms.store(clock.now_ms(), std::sync::atomic::Ordering::SeqCst);
                virtual_runs::clock_reaches(clock, end_ms).await;
            }
        };
        self.run_while(until).await;
        made_ms.load(std::sync::atomic::Ordering::SeqCst)
    }

    async fn feed_kind_and_site(&self) -> (String, i64) {
        feed_site::kind_and_site(&self.db, &self.feed()).await
    }
}

/// Runs a site for 10 virtual hours with its feed (on `feed_host`) not in its schedule's
/// `feeds` (on another host, its robots.txt names it in a `Sitemap:` line; on the pages' host,
/// the schedule names it a seed), checks the row is a `first_kind`, then 20 hours with it.
async fn feed_named_later(feed_host: &'static str, first_kind: &str) {
    let site = Site::new(feed_host, None).await;
    let with_feed = std::fs::read_to_string(&site.schedule).unwrap();
    feed_site::edit_schedule(&site.schedule, |line| match line.strip_prefix("feeds =") {
        None => Some(line.to_string()),
        Some(_) if feed_host != HOST => None,
        Some(feeds) => Some(format!("seeds ={feeds}")),
    });
    site.run_until(ORIGIN_MS + 10 * HOUR_MS).await;
    assert_eq!(site.feed_kind_and_site().await.0, first_kind);
    if feed_host != HOST {
        // Stored with what named it (it was stored as the schedule's, and a start taking
        // it for a sitemap the schedule named once left it out of those due).
        let store = Store::open(&site.db).await.unwrap();
        let from = store.discovered_from(&site.feed()).await.unwrap();
        store.close().await;
        let robots = site.server.url(HOST, "/robots.txt").to_string();
        assert_eq!(
            from.as_deref(),
            Some(robots.trim_end_matches('/')),
            "{from:?}"
        );
    }

    std::fs::write(&site.schedule, with_feed).unwrap();
    let started_ms = site.clock.now_ms();
    let end_ms = started_ms + 20 * HOUR_MS;
    site.run_until(end_ms).await;
    let reads = site.feed_reads(started_ms, end_ms);
    let waiting = site.pages_waiting().await;
    let what = format!(
        "first a {first_kind}, 20 hours after the schedule named the feed: {reads} reads of \
         it; {waiting} of 20 pages waiting for it"
    );
    eprintln!("{what}");
    assert_eq!(site.feed_kind_and_site().await.0, "feed", "{what}");
    assert!(reads >= 5, "{what}");
    assert!(waiting >= 10, "{what}");
}

/// A feed taken out of the schedule's `feeds`: from the next start it is no longer read (it
/// went on being read as a feed at its planned rate, its pages waiting for it), and its pages
/// follow their own plans. Its row becomes a sitemap's, read only if a robots.txt or an index
/// names it, as it would be had the schedule never named it; and a start after that runs no
/// discovery pass for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_taken_out_of_the_schedule_is_no_longer_read() {
    feed_taken_out(None).await;
}

/// The same on PostgreSQL, where a worker sets the due times of the sitemaps on its hosts
/// (the row left due made every start run a pass).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_taken_out_of_the_schedule_is_no_longer_read_on_postgres() {
    let Some(db) = postgres::postgres_database("a_feed_taken_out").await else {
        return;
    };
    feed_taken_out(Some(db)).await;
}

async fn feed_taken_out(db: Option<String>) {
    let site = Site::new(HOST, db).await;
    site.run_until(ORIGIN_MS + 10 * HOUR_MS).await;
    let before = site.feed_reads(ORIGIN_MS, site.clock.now_ms());
    let waiting_before = site.pages_waiting().await;

    feed_site::edit_schedule(&site.schedule, |line| {
        (!line.starts_with("feeds =")).then(|| line.to_string())
    });
    let started_ms = site.clock.now_ms();
    let end_ms = started_ms + 20 * HOUR_MS;
    site.run_until(end_ms).await;
    let reads = site.feed_reads(started_ms, end_ms);
    let pages = feed_site::daily_pages();
    let (visits, lag_hours) = feed_site::page_visits(&site.server, pages, started_ms, end_ms);
    let waiting_after = site.pages_waiting().await;
    let discovered = || async {
        let store = Store::open(&site.db).await.unwrap();
        let id = store.site_id(HOST).await.unwrap().expect("the site");
        let discovered = store.site_discovered_ms(id).await.unwrap();
        store.close().await;
        discovered
    };
    let discovered_ms = discovered().await;
    let kind = site.feed_kind_and_site().await.0;
    // A start at 06:00, before the next `rediscover` time (midnight); hours, so that a pass
    // it ran would have ended (`discovered_ms` moves at its end) on a loaded machine too.
    site.run_until(site.clock.now_ms() + 3 * HOUR_MS).await;
    let what = format!(
        "10 hours with the feed: {before} reads, {waiting_before} pages waiting; 20 hours \
         without: {reads} reads, {waiting_after} waiting, {visits} page requests, changes \
         fetched {lag_hours:.2} h after they came"
    );
    eprintln!("{what}");
    assert!(before >= 3 && waiting_before > 0, "{what}");
    assert_eq!((reads, waiting_after), (0, 0), "{what}");
    assert_eq!(kind, "sitemap", "{what}");
    assert!(visits >= 20, "{what}");
    let again = discovered().await;
    assert_eq!(again, discovered_ms, "no pass at a start with nothing due");
}

/// A worker started on a schedule naming a feed, whose row another worker's start (on a newer
/// schedule without it) made a sitemap's while it runs: it stops reading the feed at its next
/// turn, and the pages that waited for it follow their plans (it went on reading it, and wrote
/// the pages' waits on a row no longer a feed's). Another worker's start is played here by the
/// statements `Store::declare_kinds` makes, written beside the running refresher.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_whose_feed_became_a_sitemap_elsewhere_stops_reading_it() {
    let site = Site::new(HOST, None).await;
    let (changed_ms, end_ms) = (ORIGIN_MS + 10 * HOUR_MS, ORIGIN_MS + 30 * HOUR_MS);
    let made_ms = site.run_with_feed_made(changed_ms, end_ms, "sitemap").await;
    let before = site.feed_reads(ORIGIN_MS, changed_ms);
    // (Counted from when the statements had committed, however long they took; a read handed
    // out before may still go.)
    let after = site.feed_reads(made_ms + HOUR_MS, end_ms);
    let waiting = site.pages_waiting().await;
    let what = format!(
        "{before} reads of the feed before its row changed, {after} after; {waiting} pages \
         waiting at the end"
    );
    eprintln!("{what}");
    assert!(before >= 3, "{what}");
    assert_eq!((after, waiting), (0, 0), "{what}");
}

/// A worker started on a schedule naming a feed as a seed, whose row another worker's start
/// (on a newer schedule naming it a feed) made a feed's while it runs: it reads it as a feed
/// from its next turn, and pages wait for it. (It refused it only: read by no one until this
/// worker started again.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_whose_seed_became_a_feed_elsewhere_reads_it_as_a_feed() {
    let site = Site::new(HOST, None).await;
    feed_site::edit_schedule(&site.schedule, |line| match line.strip_prefix("feeds =") {
        None => Some(line.to_string()),
        Some(feeds) => Some(format!("seeds ={feeds}")),
    });
    let (changed_ms, end_ms) = (ORIGIN_MS + 10 * HOUR_MS, ORIGIN_MS + 30 * HOUR_MS);
    let made_ms = site.run_with_feed_made(changed_ms, end_ms, "feed").await;
    let after = site.feed_reads(made_ms + HOUR_MS, end_ms);
    let waiting = site.pages_waiting().await;
    let what = format!("{after} reads of the feed after its row changed; {waiting} pages waiting");
    eprintln!("{what}");
    assert!(after >= 3, "{what}");
    assert!(waiting > 0, "{what}");
}

/// Makes the row of `url` in the SQLite file `db` a `kind`'s, as a start naming it so does
/// (its copy and validators forgotten; no page waits for it unless it is a feed).
async fn make_kind(db: &Path, url: &str, kind: &str) {
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    let id: i64 = sqlx::query_scalar(
        "UPDATE urls SET kind = $1, copy_ms = NULL, etag = NULL, last_modified = NULL
         WHERE url = $2 RETURNING id",
    )
    .bind(kind)
    .bind(url)
    .fetch_one(&pool)
    .await
    .unwrap();
    if kind != "feed" {
        sqlx::query("UPDATE urls SET waits_for_feed_id = NULL WHERE waits_for_feed_id = $1")
            .bind(id)
            .execute(&pool)
            .await
            .unwrap();
    }
    pool.close().await;
}

/// A URL a schedule names as a feed and as a seed (or a sitemap) is a feed from the first
/// run on: the feeds are stored before the rest (the first kind stored stays until the next
/// start, and the seed's page was stored first).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_also_named_a_seed_is_a_feed_from_the_first_run() {
    let site = Site::new(HOST, None).await;
    let feed = site.feed();
    let mut text = std::fs::read_to_string(&site.schedule).unwrap();
    text.push_str(&format!("seeds = [\"{feed}\"]\n"));
    std::fs::write(&site.schedule, text).unwrap();
    let end_ms = ORIGIN_MS + 10 * HOUR_MS;
    site.run_until(end_ms).await;
    let reads = site.feed_reads(ORIGIN_MS, end_ms);
    assert_eq!(site.feed_kind_and_site().await.0, "feed", "{reads} reads");
    assert!(reads >= 3, "{reads} reads");
}

/// A site renamed whose feed, on a host of its own, its robots.txt also names in a `Sitemap:`
/// line, and whose new schedule no longer names the feed: the renamed site takes the old
/// name's feed as what its robots.txt names it, a sitemap, and reads it as one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renamed_sites_feed_its_robots_txt_names_becomes_its_sitemap() {
    let site = Site::new(FEED_HOST, None).await;
    site.run_until(ORIGIN_MS + 5 * HOUR_MS).await;
    feed_site::edit_schedule(&site.schedule, |line| {
        if line.starts_with("feeds =") {
            None
        } else if line.starts_with("name =") {
            Some("name = \"renamed\"".into())
        } else {
            Some(line.to_string())
        }
    });
    let started_ms = site.clock.now_ms();
    // (Hours, to leave the start, its pass and the read time on a loaded machine.)
    site.run_until(started_ms + 5 * HOUR_MS).await;
    let reads = site.feed_reads(started_ms, site.clock.now_ms());
    let store = Store::open(&site.db).await.unwrap();
    let renamed = store.site_id("renamed").await.unwrap();
    store.close().await;
    let renamed = renamed.expect("the renamed site");
    assert_eq!(site.feed_kind_and_site().await, ("sitemap".into(), renamed));
    assert!(reads >= 1, "read at the renamed site's first pass");
}

/// A feed taken out of the schedule's `feeds` and, at a later start, named among its `seeds`
/// is checked as a page from then on (its row stayed a sitemap's, and the seed, a URL already
/// stored, was never checked). (Moved in one edit: `crate::refresher::kinds`'s tests.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_taken_out_then_named_a_seed_is_checked_as_a_page() {
    let site = Site::new(HOST, None).await;
    site.run_until(ORIGIN_MS + 5 * HOUR_MS).await;
    let with_feed = std::fs::read_to_string(&site.schedule).unwrap();
    feed_site::edit_schedule(&site.schedule, |line| {
        (!line.starts_with("feeds =")).then(|| line.to_string())
    });
    site.run_until(ORIGIN_MS + 7 * HOUR_MS).await;
    assert_eq!(site.feed_kind_and_site().await.0, "sitemap");
    std::fs::write(&site.schedule, with_feed).unwrap();
    feed_site::edit_schedule(&site.schedule, |line| match line.strip_prefix("feeds =") {
        Some(feeds) => Some(format!("seeds ={feeds}")),
        None => Some(line.to_string()),
    });
    let started_ms = site.clock.now_ms();
    let end_ms = started_ms + 10 * HOUR_MS;
    site.run_until(end_ms).await;
    let checks = site.feed_reads(started_ms, end_ms);
    let waiting = site.pages_waiting().await;
    assert_eq!(site.feed_kind_and_site().await.0, "page", "{checks} checks");
    assert!(
        checks >= 1 && waiting == 0,
        "{checks} checks, {waiting} pages waiting"
    );
}

/// A robots.txt line's root that an earlier build stored as the schedule's (it is now stored
/// with the robots.txt's URL) is named by the robots.txt at the next pass that reaches it: it
/// is not taken for a sitemap the schedule took out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_robots_txt_root_stored_as_the_schedules_is_named_by_its_robots_txt_again() {
    let site = Site::new(FEED_HOST, None).await;
    feed_site::edit_schedule(&site.schedule, |line| {
        (!line.starts_with("feeds =")).then(|| line.to_string())
    });
    site.run_until(ORIGIN_MS + 2 * HOUR_MS).await;
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", site.db.display()))
        .await
        .unwrap();
    sqlx::query("UPDATE urls SET discovered_from = 'schedule' WHERE url = $1")
        .bind(site.feed())
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    // Rediscovered hourly, for a pass within the run.
    feed_site::edit_schedule(&site.schedule, |line| {
        match line.starts_with("rediscover =") {
            true => Some("rediscover = \"0 0 * * * *\"".into()),
            false => Some(line.to_string()),
        }
    });
    site.run_until(ORIGIN_MS + 5 * HOUR_MS).await;
    let store = Store::open(&site.db).await.unwrap();
    let from = store.discovered_from(&site.feed()).await.unwrap();
    store.close().await;
    let robots = site.server.url(HOST, "/robots.txt").to_string();
    assert_eq!(from.as_deref(), Some(robots.as_str()));
}
