//! A long `freshet run` shows something on a terminal without FRESHET_LOG (issue 12): the live
//! status line (checks per minute, due now, hosts in back-off, budget today) on a pseudo-terminal
//! made by `script` (util-linux), and nothing of it when stderr is a pipe.

#[path = "support/recording_server.rs"]
mod recording_server;

use recording_server::{RecordingServer, Reply};

const HOST: &str = "127.0.0.1";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_draws_a_status_line_on_a_terminal_only() {
    let server = RecordingServer::start().await;
    let base = format!("http://{HOST}:{}", server.addr.port());
    server.route(
        HOST,
        "/robots.txt",
        Reply::text("User-agent: *\nAllow: /\n"),
    );
    server.route(HOST, "/sitemap.txt", Reply::text(format!("{base}/a\n")));
    server.route(HOST, "/a", Reply::html("<p>a</p>"));
    let dir = tempfile::tempdir().unwrap();
    let schedule = dir.path().join("site.toml");
    std::fs::write(
        &schedule,
        format!(
            "[[site]]\nname = \"local\"\nsitemaps = [\"{base}/sitemap.txt\"]\n\
             host_rate = \"20/s\"\nallow_networks = [\"127.0.0.0/8\"]\n"
        ),
    )
    .unwrap();
    let run = |db: &str| {
        format!(
            "timeout -s TERM 3 {} run --schedules {} --db {}",
            env!("CARGO_BIN_EXE_freshet"),
            schedule.display(),
            dir.path().join(db).display()
        )
    };
    // On a terminal: `script` gives the child a pseudo-terminal and copies what it draws.
    let typescript = dir.path().join("tty.log");
    let status = tokio::process::Command::new("script")
        .arg("-qfc")
        .arg(run("tty.db"))
        .arg(&typescript)
        .env_remove("FRESHET_LOG")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .expect("script (util-linux)");
    let drawn = std::fs::read_to_string(&typescript).unwrap_or_default();
    assert!(
        drawn.contains("checks/min") && drawn.contains("due now") && drawn.contains("budget today"),
        "no status line on a terminal ({status:?}): {drawn}"
    );
    // On a pipe: no status line, the log as before.
    let piped = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(run("pipe.db"))
        .env_remove("FRESHET_LOG")
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&piped.stderr);
    assert!(!stderr.contains("checks/min"), "{stderr}");
    assert!(
        stderr.contains("freshet: "),
        "the run's closing line: {stderr}"
    );
}
