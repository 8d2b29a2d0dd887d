//! The refresher run inside a test's process against the recording server, on the test's
//! clock: wait until what the test watches holds, and run until a future ends.
//!
//! Use it from a test file beside the server's module:
//! `#[path = "support/recording_server.rs"] mod recording_server;` and
//! `#[path = "support/virtual_runs.rs"] mod virtual_runs;`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use freshet::clock::SharedClock;
use freshet::refresher::{self, PolicyChoice, RunOptions};

use crate::recording_server::RecordingServer;

/// Waits until `done` says so, or five real minutes pass (the test's assertions then say
/// what did not happen).
pub async fn until<F: Future<Output = bool>>(mut done: impl FnMut() -> F) {
    let started = Instant::now();
    while !done().await && started.elapsed() < Duration::from_secs(300) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until `clock` reads `end_ms` or later (a run's end), or five real minutes pass.
pub async fn clock_reaches(clock: SharedClock, end_ms: i64) {
    until(move || {
        let now = clock.now_ms();
        async move { now >= end_ms }
    })
    .await
}

/// Runs the refresher (the learned policy, one worker) on `dir`'s `freshet.db` and
/// `schedule`, `hosts` resolved to the server, until `enough` ends.
pub async fn run_schedule_until(
    server: &RecordingServer,
    clock: &SharedClock,
    dir: &Path,
    schedule: PathBuf,
    hosts: &[&str],
    enough: impl Future<Output = ()> + Send + 'static,
) {
    let db = dir.join("freshet.db");
    run_schedule_on_until(server, clock, db, schedule, hosts, enough).await;
}

/// [`run_schedule_until`] on the database `db` (a SQLite file or a postgres:// URL).
pub async fn run_schedule_on_until(
    server: &RecordingServer,
    clock: &SharedClock,
    db: PathBuf,
    schedule: PathBuf,
    hosts: &[&str],
    enough: impl Future<Output = ()> + Send + 'static,
) {
    let options = RunOptions {
        schedules: vec![schedule],
        db_path: db,
        once: false,
        clock: clock.clone(),
        resolve: server.resolve(hosts),
        policy: PolicyChoice::Learned,
        worker: Default::default(),
        run_lock: None,
    };
    refresher::run(options, enough).await.expect("the run");
}
