//! A host's next request goes out as its last response ends, not once that check's commit and
//! filing have ended. The refresher's loop once handed out the next URL only as a whole check
//! finished, so a commit held up by a busy database (another process writing) stopped the host
//! until the database was free.
//!
//! Seen from the server: the first page's handler takes the database's write lock (as another
//! process writing would) before it answers, so that check cannot commit; the host's next page
//! must still be asked for while the lock is held. The clock runs a hundred times slower than
//! real time, so the one-second politeness reservation taken with the first page covers the
//! next request whatever the machine's load (a request outside it would wait on the lock too).

#[path = "support/recording_server.rs"]
mod recording_server;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use freshet::clock::{SharedClock, VirtualClock};
use freshet::refresher::{self, PolicyChoice, RunOptions};
use recording_server::{RecordingServer, Reply};
use sqlx::Connection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};

const HOST: &str = "one.test";
const PAGES: usize = 3;
/// 2021-01-01T00:00:00Z.
const ORIGIN_MS: i64 = 1_609_459_200_000;
/// How long the lock is held at most: only a failing test waits this long.
const HOLD_AT_MOST: Duration = Duration::from_secs(60);

/// Holds the database's write lock on its own thread while told to: `take` takes it (the
/// answer comes once it is held), `release` lets it go. Says whether it was let go by a
/// release (true) or only after [`HOLD_AT_MOST`] (false).
struct WriteLock {
    take: mpsc::Sender<()>,
    taken: Mutex<mpsc::Receiver<()>>,
    release: mpsc::Sender<()>,
    released_in_time: Mutex<mpsc::Receiver<bool>>,
}

impl WriteLock {
    fn on(db: &Path) -> Self {
        let (take, take_rx) = mpsc::channel::<()>();
        let (taken_tx, taken) = mpsc::channel::<()>();
        let (release, release_rx) = mpsc::channel::<()>();
        let (outcome_tx, released_in_time) = mpsc::channel::<bool>();
        let path = db.to_path_buf();
        std::thread::spawn(move || {
            if take_rx.recv().is_err() {
                return;
            }
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime for the lock");
            runtime.block_on(async move {
                let options = SqliteConnectOptions::new().filename(&path);
                let mut conn = SqliteConnection::connect_with(&options)
                    .await
                    .expect("the test opens the database");
                sqlx::query("BEGIN IMMEDIATE")
                    .execute(&mut conn)
                    .await
                    .expect("the test takes the write lock");
                let _ = taken_tx.send(());
                let in_time = match release_rx.recv_timeout(HOLD_AT_MOST) {
                    Ok(()) => true,
                    Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => false,
                };
                sqlx::query("ROLLBACK").execute(&mut conn).await.ok();
                conn.close().await.ok();
                let _ = outcome_tx.send(in_time);
            });
        });
        Self {
            take,
            taken: Mutex::new(taken),
            release,
            released_in_time: Mutex::new(released_in_time),
        }
    }
}

fn serve_site(server: &RecordingServer, lock: Arc<WriteLock>) {
    let base = format!("http://{HOST}:{}", server.addr.port());
    server.route(
        HOST,
        "/robots.txt",
        Reply::text("User-agent: *\nAllow: /\n"),
    );
    let locs = (0..PAGES).map(|i| format!("{base}/p{i}"));
    server.route(HOST, "/sitemap.xml", Reply::sitemap(locs));
    let pages_asked = Arc::new(AtomicUsize::new(0));
    for i in 0..PAGES {
        let (lock, pages_asked) = (Arc::clone(&lock), Arc::clone(&pages_asked));
        server.handle(HOST, &format!("/p{i}"), move |_| {
            match pages_asked.fetch_add(1, Ordering::SeqCst) {
                // The first page asked: its check will not commit while the lock is held.
                0 => {
                    lock.take.send(()).expect("the lock thread runs");
                    let taken = lock.taken.lock().unwrap().recv_timeout(HOLD_AT_MOST);
                    taken.expect("the write lock is taken");
                }
                // The next one came while it was held: let it go.
                1 => {
                    let _ = lock.release.send(());
                }
                _ => {}
            }
            Reply::html(format!("<html><body><p>Page {i}.</p></body></html>")).to_response()
        });
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_is_asked_again_while_its_last_check_waits_to_commit() {
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 0.01));
    let server = RecordingServer::start_with_clock(Arc::clone(&clock)).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("freshet.db");
    let lock = Arc::new(WriteLock::on(&db));
    serve_site(&server, Arc::clone(&lock));
    let schedule = dir.path().join("one.toml");
    std::fs::write(
        &schedule,
        format!(
            "[[site]]\nname = \"one\"\nsitemaps = [\"{}\"]\nrequests_per_day = 100000\n\
             host_rate = \"1000/s\"\nallow_networks = [\"127.0.0.0/8\"]\n",
            server.url(HOST, "/sitemap.xml")
        ),
    )
    .unwrap();
    let options = RunOptions {
        schedules: vec![schedule],
        db_path: db.clone(),
        once: true,
        clock,
        resolve: server.resolve(&[HOST]),
        policy: PolicyChoice::Learned,
        worker: Default::default(),
        run_lock: None,
    };
    let summary = refresher::run(options, std::future::pending())
        .await
        .expect("one pass");

    let released_in_time = lock
        .released_in_time
        .lock()
        .unwrap()
        .recv()
        .expect("the lock was taken and let go");
    let paths: Vec<String> = server
        .requests_to(HOST)
        .iter()
        .map(|r| r.path.clone())
        .collect();
    assert!(
        released_in_time,
        "no second page was asked for while the first page's check could not commit: {paths:?}"
    );
    // Nothing was lost to the wait: every page was checked and committed.
    assert_eq!(summary.checks, PAGES as u64, "{summary:?}");
    for i in 0..PAGES {
        assert!(
            paths.contains(&format!("/p{i}")),
            "/p{i} not asked: {paths:?}"
        );
    }
}
