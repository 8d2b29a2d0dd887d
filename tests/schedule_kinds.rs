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

use std::sync::Arc;

use freshet::clock::{SharedClock, VirtualClock};
use freshet::store::Store;
use recording_server::RecordingServer;

/// The same feed, named first by the robots.txt (stored as a sitemap) or as a seed (a page),
/// and added to the schedule's `feeds` later. The first kind stored stayed: the feed went on
/// being read as a sitemap once a day, or checked as a page, and no page ever waited for it. A
/// start makes the row of a URL the schedule names as a feed a feed, read as one from then on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_the_schedule_names_after_robots_txt_did_is_read_as_a_feed() {
    feed_named_later(feed_site::FEED_HOST, "sitemap").await;
}

/// [`a_feed_the_schedule_names_after_robots_txt_did_is_read_as_a_feed`], the feed a seed
/// first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_the_schedule_names_after_it_was_a_seed_is_read_as_a_feed() {
    feed_named_later(feed_site::HOST, "page").await;
}

/// Runs a site for 10 virtual hours with its feed (on `feed_host`) not in its schedule's
/// `feeds` (on another host, its robots.txt names it in a `Sitemap:` line; on the pages' host,
/// the schedule names it a seed), checks the row is a `first_kind`, then 20 hours with it.
async fn feed_named_later(feed_host: &str, first_kind: &str) {
    use feed_site::{Changes, HOST, HOUR_MS, ORIGIN_MS, Pages};
    let pages = Pages {
        count: 20,
        changes: Changes::Random { per_day: 1.0 },
        cut: None,
        unlisted: None,
        ttl_minutes: None,
    };
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 3_600.0));
    let server = Arc::new(RecordingServer::start_with_clock(clock.clone()).await);
    feed_site::serve_with_feed_on(&server, pages, feed_host);
    let dir = tempfile::tempdir().unwrap();
    let schedule = feed_site::write_schedule_with_feed_on(dir.path(), &server, 100, feed_host);
    let with_feed = std::fs::read_to_string(&schedule).unwrap();
    let without_feed: String = (with_feed.lines())
        .filter_map(|line| match line.strip_prefix("feeds =") {
            None => Some(format!("{line}\n")),
            Some(_) if feed_host != HOST => None,
            Some(feeds) => Some(format!("seeds ={feeds}\n")),
        })
        .collect();
    assert_ne!(with_feed, without_feed, "the schedule names the feed");
    std::fs::write(&schedule, without_feed).unwrap();
    let db = dir.path().join("freshet.db");
    let hosts = [HOST, feed_host];
    let feed = server.url(feed_host, "/feed.xml").to_string();
    let kind_of_feed = || async {
        let store = Store::open(&db).await.unwrap();
        let row = store.url_row(&feed).await.unwrap().expect("the feed's row");
        store.close().await;
        row.kind
    };

    let added_ms = ORIGIN_MS + 10 * HOUR_MS;
    let until = virtual_runs::clock_reaches(clock.clone(), added_ms);
    let again = schedule.clone();
    virtual_runs::run_schedule_on_until(&server, &clock, db.clone(), again, &hosts, until).await;
    assert_eq!(kind_of_feed().await, first_kind);

    std::fs::write(&schedule, with_feed).unwrap();
    let started_ms = clock.now_ms();
    let end_ms = started_ms + 20 * HOUR_MS;
    let until = virtual_runs::clock_reaches(clock.clone(), end_ms);
    virtual_runs::run_schedule_on_until(&server, &clock, db.clone(), schedule, &hosts, until).await;
    let reads = feed_site::feed_reads_on(&server, feed_host, started_ms, end_ms);
    let store = Store::open(&db).await.unwrap();
    let mut waiting = 0;
    for i in 0..pages.count {
        let url = server.url(HOST, &format!("/p{i}"));
        let row = store.url_row(url.as_str()).await.unwrap().expect("a page");
        waiting += usize::from(row.waits_for_feed_id.is_some());
    }
    store.close().await;
    let what = format!(
        "first a {first_kind}, 20 hours after the schedule named the feed: {reads} reads of \
         it; {waiting} of {} pages waiting for it",
        pages.count
    );
    eprintln!("{what}");
    assert_eq!(kind_of_feed().await, "feed", "{what}");
    assert!(reads >= 5, "{what}");
    assert!(waiting >= pages.count / 2, "{what}");
}

/// A feed taken out of the schedule's `feeds`: from the next start it is no longer read (it
/// went on being read as a feed at its planned rate, its pages waiting for it), and its pages
/// follow their own plans. Its row becomes a sitemap's, read only if a robots.txt or an index
/// names it, as it would be had the schedule never named it; and a start after that runs no
/// discovery pass for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_taken_out_of_the_schedule_is_no_longer_read() {
    let dir = tempfile::tempdir().unwrap();
    feed_taken_out(dir.path(), dir.path().join("freshet.db")).await;
}

/// The same on PostgreSQL, where a worker sets the due times of the sitemaps on its hosts
/// (the row left due made every start run a pass).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_taken_out_of_the_schedule_is_no_longer_read_on_postgres() {
    let Some(db) = postgres::postgres_database("a_feed_taken_out").await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    feed_taken_out(dir.path(), db.into()).await;
}

async fn feed_taken_out(dir: &std::path::Path, db: std::path::PathBuf) {
    use feed_site::{Changes, HOST, HOUR_MS, ORIGIN_MS, Pages};
    let pages = Pages {
        count: 20,
        changes: Changes::Random { per_day: 1.0 },
        cut: None,
        unlisted: None,
        ttl_minutes: None,
    };
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 3_600.0));
    let server = Arc::new(RecordingServer::start_with_clock(clock.clone()).await);
    feed_site::serve(&server, pages);
    let schedule = feed_site::write_schedule(dir, &server, 100);
    let hosts = [HOST];
    let run_until = |end_ms: i64| {
        let until = virtual_runs::clock_reaches(clock.clone(), end_ms);
        let (server, clock, db, schedule) = (&server, &clock, db.clone(), schedule.clone());
        async move {
            virtual_runs::run_schedule_on_until(server, clock, db, schedule, &hosts, until).await
        }
    };
    run_until(ORIGIN_MS + 10 * HOUR_MS).await;
    let before = feed_site::feed_reads_on(&server, HOST, ORIGIN_MS, clock.now_ms());
    let store = || async { Store::open(&db).await.unwrap() };
    let waiting = || async {
        let store = store().await;
        let mut waiting = 0;
        for i in 0..pages.count {
            let url = server.url(HOST, &format!("/p{i}"));
            let row = store.url_row(url.as_str()).await.unwrap().expect("a page");
            waiting += usize::from(row.waits_for_feed_id.is_some());
        }
        store.close().await;
        waiting
    };
    let waiting_before = waiting().await;

    let without_feed: String = (std::fs::read_to_string(&schedule).unwrap().lines())
        .filter(|line| !line.starts_with("feeds ="))
        .map(|line| format!("{line}\n"))
        .collect();
    std::fs::write(&schedule, without_feed).unwrap();
    let started_ms = clock.now_ms();
    let end_ms = started_ms + 20 * HOUR_MS;
    run_until(end_ms).await;
    let reads = feed_site::feed_reads_on(&server, HOST, started_ms, end_ms);
    let (visits, lag_hours) = feed_site::page_visits(&server, pages, started_ms, end_ms);
    let waiting_after = waiting().await;
    let discovered = || async {
        let store = store().await;
        let site = store.site_id(HOST).await.unwrap().expect("the site");
        let discovered = store.site_discovered_ms(site).await.unwrap();
        store.close().await;
        discovered
    };
    let discovered_ms = discovered().await;
    let store = store().await;
    let feed = server.url(HOST, "/feed.xml").to_string();
    let kind = store.url_row(&feed).await.unwrap().expect("its row").kind;
    store.close().await;
    // A start at 06:00, before the next `rediscover` time (midnight).
    run_until(clock.now_ms() + HOUR_MS).await;
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
    assert_eq!(
        discovered().await,
        discovered_ms,
        "no pass at a start with nothing due"
    );
}

/// A worker started on a schedule naming a feed, whose row another worker's start (on a newer
/// schedule without it) made a sitemap's while it runs: it stops reading the feed at its next
/// turn, and the pages that waited for it follow their plans (it went on reading it, and wrote
/// the pages' waits on a row no longer a feed's). Another worker's start is played here by the
/// statement `Store::declare_kinds` makes, written beside the running refresher.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_whose_feed_became_a_sitemap_elsewhere_stops_reading_it() {
    use feed_site::{Changes, HOST, HOUR_MS, ORIGIN_MS, Pages};
    let pages = Pages {
        count: 20,
        changes: Changes::Random { per_day: 1.0 },
        cut: None,
        unlisted: None,
        ttl_minutes: None,
    };
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 3_600.0));
    let server = Arc::new(RecordingServer::start_with_clock(clock.clone()).await);
    feed_site::serve(&server, pages);
    let dir = tempfile::tempdir().unwrap();
    let schedule = feed_site::write_schedule(dir.path(), &server, 100);
    let db = dir.path().join("freshet.db");
    let feed = server.url(HOST, "/feed.xml").to_string();
    let (changed_ms, end_ms) = (ORIGIN_MS + 10 * HOUR_MS, ORIGIN_MS + 30 * HOUR_MS);
    let until = {
        let (clock, db, feed) = (clock.clone(), db.clone(), feed.clone());
        async move {
            virtual_runs::clock_reaches(clock.clone(), changed_ms).await;
            let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display()))
                .await
                .unwrap();
            let id: i64 = sqlx::query_scalar("SELECT id FROM urls WHERE url = $1")
                .bind(&feed)
                .fetch_one(&pool)
                .await
                .unwrap();
            sqlx::query(
                "UPDATE urls SET kind = 'sitemap', copy_ms = NULL, etag = NULL WHERE id = $1",
            )
            .bind(id)
            .execute(&pool)
            .await
            .unwrap();
            sqlx::query("UPDATE urls SET waits_for_feed_id = NULL WHERE waits_for_feed_id = $1")
                .bind(id)
                .execute(&pool)
                .await
                .unwrap();
            pool.close().await;
            virtual_runs::clock_reaches(clock, end_ms).await;
        }
    };
    let hosts = [HOST];
    virtual_runs::run_schedule_on_until(&server, &clock, db.clone(), schedule, &hosts, until).await;
    let before = feed_site::feed_reads_on(&server, HOST, ORIGIN_MS, changed_ms);
    // (A read handed out before the change may still go.)
    let after = feed_site::feed_reads_on(&server, HOST, changed_ms + HOUR_MS, end_ms);
    let store = Store::open(&db).await.unwrap();
    let mut waiting = 0;
    for i in 0..pages.count {
        let url = server.url(HOST, &format!("/p{i}"));
        let row = store.url_row(url.as_str()).await.unwrap().expect("a page");
        waiting += usize::from(row.waits_for_feed_id.is_some());
    }
    store.close().await;
    let what = format!(
        "{before} reads of the feed before its row changed, {after} after; {waiting} pages \
         waiting at the end"
    );
    eprintln!("{what}");
    assert!(before >= 3, "{what}");
    assert_eq!((after, waiting), (0, 0), "{what}");
}

/// A URL a schedule names as a feed and as a seed (or a sitemap) is a feed from the first
/// run on: the feeds are stored before the rest (the first kind stored stays until the next
/// start, and the seed's page was stored first).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_also_named_a_seed_is_a_feed_from_the_first_run() {
    use feed_site::{Changes, HOST, HOUR_MS, ORIGIN_MS, Pages};
    let pages = Pages {
        count: 20,
        changes: Changes::Random { per_day: 1.0 },
        cut: None,
        unlisted: None,
        ttl_minutes: None,
    };
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 3_600.0));
    let server = Arc::new(RecordingServer::start_with_clock(clock.clone()).await);
    feed_site::serve(&server, pages);
    let dir = tempfile::tempdir().unwrap();
    let schedule = feed_site::write_schedule(dir.path(), &server, 100);
    let feed = server.url(HOST, "/feed.xml").to_string();
    let mut text = std::fs::read_to_string(&schedule).unwrap();
    text.push_str(&format!("seeds = [\"{feed}\"]\n"));
    std::fs::write(&schedule, text).unwrap();
    let db = dir.path().join("freshet.db");
    let end_ms = ORIGIN_MS + 10 * HOUR_MS;
    let until = virtual_runs::clock_reaches(clock.clone(), end_ms);
    let hosts = [HOST];
    virtual_runs::run_schedule_on_until(&server, &clock, db.clone(), schedule, &hosts, until).await;
    let reads = feed_site::feed_reads_on(&server, HOST, ORIGIN_MS, end_ms);
    let store = Store::open(&db).await.unwrap();
    let kind = store.url_row(&feed).await.unwrap().expect("its row").kind;
    store.close().await;
    assert_eq!(kind, "feed", "{reads} reads");
    assert!(reads >= 3, "{reads} reads");
}

/// A site renamed whose feed, on a host of its own, its robots.txt also names in a `Sitemap:`
/// line, and whose new schedule no longer names the feed: the renamed site takes the old
/// name's feed as what its robots.txt names it, a sitemap, and reads it as one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renamed_sites_feed_its_robots_txt_names_becomes_its_sitemap() {
    use feed_site::{Changes, FEED_HOST, HOST, HOUR_MS, ORIGIN_MS, Pages};
    let pages = Pages {
        count: 20,
        changes: Changes::Random { per_day: 1.0 },
        cut: None,
        unlisted: None,
        ttl_minutes: None,
    };
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 3_600.0));
    let server = Arc::new(RecordingServer::start_with_clock(clock.clone()).await);
    feed_site::serve_with_feed_on(&server, pages, FEED_HOST);
    let dir = tempfile::tempdir().unwrap();
    let schedule = feed_site::write_schedule_with_feed_on(dir.path(), &server, 100, FEED_HOST);
    let db = dir.path().join("freshet.db");
    let hosts = [HOST, FEED_HOST];
    let until = virtual_runs::clock_reaches(clock.clone(), ORIGIN_MS + 5 * HOUR_MS);
    let again = schedule.clone();
    virtual_runs::run_schedule_on_until(&server, &clock, db.clone(), again, &hosts, until).await;

    let renamed: String = (std::fs::read_to_string(&schedule).unwrap().lines())
        .filter(|line| !line.starts_with("feeds ="))
        .map(|line| match line.strip_prefix("name =") {
            Some(_) => "name = \"renamed\"\n".to_string(),
            None => format!("{line}\n"),
        })
        .collect();
    std::fs::write(&schedule, renamed).unwrap();
    let started_ms = clock.now_ms();
    let until = virtual_runs::clock_reaches(clock.clone(), started_ms + HOUR_MS);
    virtual_runs::run_schedule_on_until(&server, &clock, db.clone(), schedule, &hosts, until).await;
    let reads = feed_site::feed_reads_on(&server, FEED_HOST, started_ms, clock.now_ms());
    let store = Store::open(&db).await.unwrap();
    let feed = server.url(FEED_HOST, "/feed.xml").to_string();
    let row = store.url_row(&feed).await.unwrap().expect("its row");
    let site = store
        .site_id("renamed")
        .await
        .unwrap()
        .expect("the renamed site");
    store.close().await;
    assert_eq!((row.kind.as_str(), row.site_id), ("sitemap", site));
    assert!(reads >= 1, "read at the renamed site's first pass");
}
