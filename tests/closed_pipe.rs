//! A reader that goes away (`freshet ... | head`) ends freshet quietly: status 0 and nothing on
//! stderr, for the commands the issue names (report, bench, inspect). The pipe's read end is
//! closed before the child starts, so its very first write meets a closed pipe, every time.

use std::path::Path;
use std::process::{Command, Stdio};

/// Runs freshet with `args` and a stdout whose reader is already gone; gives (status, stderr).
fn run_with_closed_stdout(args: &[&str]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let output = Command::new(env!("CARGO_BIN_EXE_freshet"))
        .args(args)
        .stdout(writer)
        .stderr(Stdio::piped())
        .env_remove("FRESHET_LOG")
        .output()
        .expect("run freshet");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn assert_quiet(args: &[&str]) {
    let (status, stderr) = run_with_closed_stdout(args);
    assert_eq!(status, Some(0), "{args:?}: stderr {stderr}");
    assert!(stderr.is_empty(), "{args:?} wrote to stderr: {stderr}");
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/parsers")
        .join(name)
        .display()
        .to_string()
}

#[tokio::test]
async fn report_age_json_into_a_closed_pipe_is_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    freshet::store::Store::open(&db)
        .await
        .unwrap()
        .close()
        .await;
    let db = db.display().to_string();
    for format in ["json", "table", "csv"] {
        assert_quiet(&["report", "age", "--db", &db, "--format", format]);
    }
    assert_quiet(&["report", "hosts", "--db", &db, "--format", "json"]);
}

#[test]
fn bench_into_a_closed_pipe_is_quiet() {
    assert_quiet(&[
        "bench", "--pages", "2000", "--hosts", "10", "--only", "planner",
    ]);
}

#[test]
fn inspect_into_a_closed_pipe_is_quiet() {
    assert_quiet(&["inspect", "feed", &fixture("feed.xml")]);
    assert_quiet(&["inspect", "feed", &fixture("feed.xml"), "--json"]);
    assert_quiet(&["inspect", "sitemap", &fixture("sitemap.xml")]);
    assert_quiet(&["inspect", "robots", &fixture("robots.txt")]);
}
