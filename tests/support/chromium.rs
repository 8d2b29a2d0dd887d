//! A headless Chromium from the system's packages, for tests that open a page in a real browser:
//! find the binary, run it on a `file://` URL to dump the DOM after load or take a screenshot,
//! and collect what the page wrote to the console. Each run gets a new empty profile and HOME in
//! a temporary folder, runs in its own process group, and the whole group is killed when the run
//! ends or times out, so no browser process outlives the test.
//!
//! Use it from a test file with `#[path = "support/chromium.rs"] mod chromium;`.
#![allow(dead_code)]

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long one browser run may take.
const TIMEOUT: Duration = Duration::from_secs(90);

/// The binary names Debian, Ubuntu and Google use, tried in order (`FRESHET_CHROMIUM` first).
const NAMES: [&str; 4] = [
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
];

/// The browser binary, if one is installed.
pub fn find() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("FRESHET_CHROMIUM").map(PathBuf::from) {
        return path.is_file().then_some(path);
    }
    let dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    NAMES.iter().find_map(|name| {
        dirs.iter()
            .map(|d| d.join(name))
            .find(|candidate| candidate.is_file())
    })
}

/// What one browser run produced.
#[derive(Debug)]
pub struct Run {
    /// Standard output (the DOM, with `--dump-dom`).
    pub stdout: String,
    /// Console messages the page produced (`CONSOLE` lines of the browser's log).
    pub console: Vec<String>,
    /// The whole log, for failure messages.
    pub log: String,
}

/// Kills the browser's whole process group when dropped (renderers and helpers included).
///
/// The leader is reaped only after the group is killed: until then its PID (the group's id) stays
/// taken, so the kill can never reach an unrelated group that reused the number.
struct Group(Child);

/// Whether process `pid` has exited (a zombie not yet reaped), without reaping it.
fn exited(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => true,
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        let pid = self.0.id();
        let _ = Command::new("kill")
            // `--` first: without it a negative number may be read as an option (and `-1` is every
            // process the user may signal).
            .args(["-KILL", "--", &format!("-{pid}")])
            .stderr(Stdio::null())
            .status();
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs `browser` headless on `page` with `extra` arguments (e.g. `--dump-dom`,
/// `--screenshot=…`), with a fresh profile under `scratch`.
pub fn run(browser: &Path, page: &Path, extra: &[String], scratch: &Path) -> Run {
    let profile = tempfile::tempdir_in(scratch).expect("a browser profile folder");
    let (out_path, err_path) = (
        profile.path().join("stdout.txt"),
        profile.path().join("stderr.txt"),
    );
    let url = format!(
        "file://{}",
        page.canonicalize().expect("the page exists").display()
    );
    let mut command = Command::new(browser);
    command
        // As root Chromium refuses to start without this; the page is our own local file.
        .arg("--no-sandbox")
        .args([
            "--headless",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!(
            "--user-data-dir={}",
            profile.path().join("profile").display()
        ))
        .args(extra)
        .arg(&url)
        .env("HOME", profile.path())
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).expect("stdout file"))
        .stderr(std::fs::File::create(&err_path).expect("stderr file"))
        .process_group(0);
    let group = Group(command.spawn().expect("start the browser"));
    let started = Instant::now();
    while !exited(group.0.id()) {
        if started.elapsed() > TIMEOUT {
            let log = std::fs::read_to_string(&err_path).unwrap_or_default();
            drop(group);
            panic!("the browser did not finish within {TIMEOUT:?}; its log:\n{log}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(group);
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let log = std::fs::read_to_string(&err_path).unwrap_or_default();
    let console = log
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .map(str::to_string)
        .collect();
    Run {
        stdout,
        console,
        log,
    }
}
