//! The built `freshet` binary as a child process, for tests that signal or kill it: start
//! `freshet run` on a schedule, send SIGTERM or SIGKILL, wait for it with a bound.
//!
//! Use it from a test file with `#[path = "support/freshet_bin.rs"] mod freshet_bin;`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use tokio::process::{Child, Command};

/// A `freshet run` child process.
pub struct Freshet {
    /// The process.
    pub child: Child,
    /// When it was started.
    pub started: Instant,
}

/// Writes a schedule file `site.toml` in `dir` with `body` and returns its path.
pub fn write_schedule(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("site.toml");
    std::fs::write(&path, body).expect("write the schedule");
    path
}

/// Runs `freshet run --once --schedules <schedule> --db <db>` to its end and asserts that it
/// succeeded (its stderr shown when not).
pub async fn run_once(schedule: &Path, db: &Path) {
    let run = Command::new(env!("CARGO_BIN_EXE_freshet"))
        .args(["run", "--once", "--schedules"])
        .arg(schedule)
        .arg("--db")
        .arg(db)
        .output()
        .await
        .expect("run the freshet binary");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

/// The wall clock in Unix ms, as a `freshet run` child reads it.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("a clock after 1970")
        .as_millis() as i64
}

impl Freshet {
    /// Starts `freshet run --schedules <schedule> --db <db>` plus `extra` arguments; stderr is
    /// kept for [`Freshet::finish`], stdout dropped.
    pub fn run(schedule: &Path, db: &Path, extra: &[&str]) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_freshet"));
        command
            .arg("run")
            .arg("--schedules")
            .arg(schedule)
            .arg("--db")
            .arg(db)
            .args(extra)
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let child = command.spawn().expect("start the freshet binary");
        Self {
            child,
            started: Instant::now(),
        }
    }

    /// Sends SIGTERM (what `kill` and service managers send) and returns when it was sent.
    pub fn terminate(&self) -> Instant {
        self.signal("-TERM");
        Instant::now()
    }

    /// Sends SIGKILL: no handler, no cleanup, the harshest crash a process can have.
    pub fn kill_now(&self) {
        self.signal("-KILL");
    }

    fn signal(&self, which: &str) {
        let pid = self.child.id().expect("the child is running");
        let status = std::process::Command::new("kill")
            .arg(which)
            .arg(pid.to_string())
            .status()
            .expect("run kill");
        assert!(status.success(), "kill {which} {pid} failed");
    }

    /// Waits at most `bound` for the process to exit; returns its status and stderr, or `None`
    /// (after killing it) when it was still running.
    pub async fn finish(mut self, bound: Duration) -> Option<(ExitStatus, String)> {
        let mut stderr = self.child.stderr.take().expect("stderr piped");
        let reader = tokio::spawn(async move {
            let mut text = String::new();
            let _ = tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut text).await;
            text
        });
        match tokio::time::timeout(bound, self.child.wait()).await {
            Ok(status) => {
                let status = status.expect("wait for freshet");
                let text = reader.await.unwrap_or_default();
                Some((status, text))
            }
            Err(_) => {
                let _ = self.child.kill().await;
                None
            }
        }
    }
}

/// Waits (polling every 20 ms, at most `bound`) until `ready()` holds; false on time-out.
pub async fn wait_for(bound: Duration, mut ready: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + bound;
    while Instant::now() < until {
        if ready() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    ready()
}
