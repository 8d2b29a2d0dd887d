//! The built binary: `freshet run --once` against a loopback site, then `freshet report` in every
//! format, as a user would run them.

#[path = "support/recording_server.rs"]
mod recording_server;

use std::process::Output;

use recording_server::{RecordingServer, Reply};

const HOST: &str = "127.0.0.1";

async fn freshet(args: Vec<String>) -> Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_freshet"))
        .args(&args)
        .output()
        .await
        .expect("run the freshet binary")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_once_then_report_age_and_hosts() {
    let server = RecordingServer::start().await;
    let base = format!("http://{HOST}:{}", server.addr.port());
    server.route(
        HOST,
        "/robots.txt",
        Reply::text("User-agent: *\nDisallow: /no/\n"),
    );
    server.route(
        HOST,
        "/sitemap.txt",
        Reply::text(format!("{base}/one\n{base}/two\n{base}/no/way\n")),
    );
    server.route(
        HOST,
        "/one",
        Reply::html("<p>one</p>").header("etag", "\"1\""),
    );
    server.route(HOST, "/two", Reply::html("<p>two</p>"));
    let dir = tempfile::tempdir().unwrap();
    let schedule = dir.path().join("site.toml");
    std::fs::write(
        &schedule,
        format!(
            "[[site]]\nname = \"local\"\nsitemaps = [\"{base}/sitemap.txt\"]\nhost_rate = \"20/s\"\nallow_networks = [\"127.0.0.0/8\"]\n"
        ),
    )
    .unwrap();
    let db = dir.path().join("f.db");
    let db_arg = db.display().to_string();

    let run = freshet(vec![
        "run".into(),
        "--once".into(),
        "--schedules".into(),
        schedule.display().to_string(),
        "--db".into(),
        db_arg.clone(),
    ])
    .await;
    assert!(
        run.status.success(),
        "run failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert!(paths.contains(&"/one".to_string()) && paths.contains(&"/two".to_string()));
    assert!(
        !paths.iter().any(|p| p.starts_with("/no/")),
        "disallowed path fetched: {paths:?}"
    );

    let age = freshet(vec![
        "report".into(),
        "age".into(),
        "--db".into(),
        db_arg.clone(),
        "--format".into(),
        "json".into(),
    ])
    .await;
    assert!(
        age.status.success(),
        "{}",
        String::from_utf8_lossy(&age.stderr)
    );
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&age.stdout).expect("JSON array");
    let one = rows
        .iter()
        .find(|r| r["url"] == format!("{base}/one"))
        .expect("/one reported");
    for key in [
        "url",
        "site",
        "host",
        "last_checked",
        "checks",
        "changes",
        "last_status",
        "next_due",
        "rate_per_day",
        "rate_low",
        "rate_high",
        "expected_age_days",
        "p_stale",
    ] {
        assert!(one.get(key).is_some(), "missing key {key}: {one}");
    }
    assert_eq!(one["site"], "local");
    assert_eq!(one["checks"], 1);
    assert_eq!(one["last_status"], 200);
    assert!(one["last_checked"].as_str().unwrap().ends_with('Z'));
    assert!(one["rate_per_day"].as_f64().unwrap() > 0.0);

    let hosts = freshet(vec![
        "report".into(),
        "hosts".into(),
        "--db".into(),
        db_arg.clone(),
        "--format".into(),
        "csv".into(),
    ])
    .await;
    let text = String::from_utf8_lossy(&hosts.stdout);
    assert!(text.starts_with("host,urls,checks,changes"), "{text}");
    assert!(text.contains(&base), "{text}");

    let table = freshet(vec![
        "report".into(),
        "age".into(),
        "--db".into(),
        db_arg,
        "--site".into(),
        "nope".into(),
    ])
    .await;
    // A site the database does not have is an error that lists those it has, not an empty
    // report (as if the site had no URLs).
    let said = String::from_utf8_lossy(&table.stderr);
    assert_eq!(table.status.code(), Some(2), "{said}");
    assert!(said.contains("--site nope: no such site"), "{said}");

    let missing = freshet(vec![
        "report".into(),
        "age".into(),
        "--db".into(),
        dir.path().join("absent.db").display().to_string(),
    ])
    .await;
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no database"));
}

/// A pass the budget cuts short says so: with the budget spent, `run --once` printed
/// "0 requests, 0 checks" and nothing on why (found by an adversarial run).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_the_budget_cuts_short_says_what_it_left() {
    let server = RecordingServer::start().await;
    let base = format!("http://{HOST}:{}", server.addr.port());
    server.route(
        HOST,
        "/robots.txt",
        Reply::text("User-agent: *\nAllow: /\n"),
    );
    let pages: String = (0..20).map(|i| format!("{base}/p{i}\n")).collect();
    server.route(HOST, "/sitemap.txt", Reply::text(pages));
    for i in 0..20 {
        server.route(HOST, &format!("/p{i}"), Reply::html(format!("<p>{i}</p>")));
    }
    let dir = tempfile::tempdir().unwrap();
    let schedule = dir.path().join("site.toml");
    std::fs::write(
        &schedule,
        format!(
            "[[site]]\nname = \"local\"\nsitemaps = [\"{base}/sitemap.txt\"]\n\
             requests_per_day = 2\nhost_rate = \"20/s\"\nallow_networks = [\"127.0.0.0/8\"]\n"
        ),
    )
    .unwrap();
    let db = dir.path().join("f.db").display().to_string();
    let run = freshet(vec![
        "run".into(),
        "--once".into(),
        "--schedules".into(),
        schedule.display().to_string(),
        "--db".into(),
        db,
    ])
    .await;
    let said = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{said}");
    let pages_asked = server
        .requests()
        .iter()
        .filter(|r| r.path.starts_with("/p"))
        .count();
    assert!(
        pages_asked < 20,
        "the budget binds: {pages_asked} pages asked"
    );
    assert!(
        said.contains(&format!(
            "{} URLs due were left for a later pass: the sites' budgets (requests_per_day)",
            20 - pages_asked
        )),
        "{said}"
    );
}
