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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_with_a_schedule_file_skipped_runs_the_rest_says_so_and_exits_1() {
    let server = RecordingServer::start().await;
    let base = format!("http://{HOST}:{}", server.addr.port());
    server.route(HOST, "/robots.txt", Reply::text("User-agent: *\n"));
    server.route(HOST, "/page", Reply::html("<p>page</p>"));
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.toml");
    std::fs::write(
        &good,
        format!(
            "[[site]]\nname = \"good\"\nseeds = [\"{base}/page\"]\n\
             allow_networks = [\"127.0.0.0/8\"]\n"
        ),
    )
    .unwrap();
    let bad = dir.path().join("bad.toml");
    let bad_site = "[[site]]\nname = \"bad\"\nseeds = [\"http://x.test/\"]\nhost_rate = \"fast\"\n";
    std::fs::write(&bad, bad_site).unwrap();
    let db = dir.path().join("f.db");
    let run = freshet(vec![
        "run".into(),
        "--once".into(),
        "--schedules".into(),
        dir.path().display().to_string(),
        "--db".into(),
        db.display().to_string(),
    ])
    .await;
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("1 schedule file skipped for 1 problem"),
        "{stderr}"
    );
    assert!(
        stderr.contains("1 check,"),
        "the good file's site ran: {stderr}"
    );
    assert_eq!(
        server
            .requests_to(HOST)
            .iter()
            .filter(|r| r.path == "/page")
            .count(),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_with_no_valid_site_makes_no_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    let missing = dir.path().join("no-such-schedules");
    let run = freshet(vec![
        "run".into(),
        "--once".into(),
        "--schedules".into(),
        missing.display().to_string(),
        "--db".into(),
        db.display().to_string(),
    ])
    .await;
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success(), "{stderr}");
    assert!(stderr.contains("no valid site in"), "{stderr}");
    assert!(stderr.contains("no-such-schedules"), "{stderr}");
    assert!(!db.exists(), "a database was made for nothing: {stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_never_answered_has_no_copy_and_one_that_failed_since_keeps_its_copys_age() {
    let server = RecordingServer::start().await;
    let base = format!("http://{HOST}:{}", server.addr.port());
    server.route(HOST, "/robots.txt", Reply::text("User-agent: *\n"));
    server.route(HOST, "/gone", Reply::status(404));
    // A page the first time, a server error after.
    // A page with an ETag the first time, a server error the second, then the page again
    // (304 to its ETag).
    server.handle(HOST, "/flaky", |request| {
        let reply = match request.hit {
            0 => Reply::status(200).body("<p>flaky</p>"),
            1 => Reply::status(500),
            _ if request.header("if-none-match") == Some("\"f1\"") => Reply::status(304),
            _ => Reply::status(200).body("<p>flaky</p>"),
        };
        reply.header("etag", "\"f1\"").to_response()
    });
    let dir = tempfile::tempdir().unwrap();
    let schedule = dir.path().join("site.toml");
    std::fs::write(
        &schedule,
        format!(
            "[[site]]\nname = \"local\"\nseeds = [\"{base}/gone\", \"{base}/flaky\"]\n\
             requests_per_day = 100000\nhost_rate = \"50/s\"\nallow_networks = [\"127.0.0.0/8\"]\n"
        ),
    )
    .unwrap();
    let db = dir.path().join("f.db");
    let args = |extra: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = extra.iter().map(|a| a.to_string()).collect();
        args.extend(["--db".to_string(), db.display().to_string()]);
        args
    };
    let schedule_arg = schedule.display().to_string();
    let run_once = || freshet(args(&["run", "--once", "--schedules", &schedule_arg]));
    assert!(run_once().await.status.success());
    // Until the flaky page's planned visit has come (the budget makes it seconds), then again.
    let flaky = server
        .requests_to(HOST)
        .iter()
        .filter(|r| r.path == "/flaky")
        .count();
    assert_eq!(flaky, 1);
    for _ in 0..600 {
        let age = freshet(args(&["report", "age", "--format", "json"])).await;
        let rows: Vec<serde_json::Value> = serde_json::from_slice(&age.stdout).unwrap();
        let due = rows
            .iter()
            .find(|r| r["url"] == format!("{base}/flaky"))
            .and_then(|r| r["next_due"].as_str().map(str::to_string))
            .expect("the flaky page is planned");
        // Shown to the second: the next one is surely past it.
        let due =
            chrono::DateTime::parse_from_rfc3339(&due).unwrap() + chrono::Duration::seconds(1);
        if chrono::Utc::now() > due {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let second = run_once().await;
    assert!(second.status.success());
    assert_eq!(
        server
            .requests_to(HOST)
            .iter()
            .filter(|r| r.path == "/flaky")
            .count(),
        2,
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );

    let age = freshet(args(&["report", "age", "--format", "json"])).await;
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&age.stdout).unwrap();
    let row = |path: &str| {
        rows.iter()
            .find(|r| r["url"] == format!("{base}{path}"))
            .unwrap_or_else(|| panic!("{path} reported: {rows:?}"))
            .clone()
    };
    let gone = row("/gone");
    assert!(gone["copy_taken"].is_null(), "{gone}");
    assert!(
        gone["expected_age_days"].is_null(),
        "no copy, no age: {gone}"
    );
    assert!(gone["p_stale"].is_null(), "{gone}");
    let flaky = row("/flaky");
    assert_eq!(flaky["last_status"], 500, "{flaky}");
    let (copy, last) = (flaky["copy_taken"].as_str(), flaky["last_checked"].as_str());
    assert!(copy.is_some() && copy <= last, "{flaky}");
    assert!(flaky["expected_age_days"].is_number(), "{flaky}");
    let explain = freshet(args(&["explain", &format!("{base}/flaky")])).await;
    let text = String::from_utf8_lossy(&explain.stdout);
    assert!(
        text.contains("copy taken") && text.contains("after the copy: expected age"),
        "the copy is the first check's: {text}"
    );

    let explain = freshet(args(&["explain", &format!("{base}/gone")])).await;
    let text = String::from_utf8_lossy(&explain.stdout);
    assert!(text.contains("no copy"), "{text}");
    assert!(!text.contains("expected age"), "{text}");

    // Once its host is open again (back-off after the 500), a new run plans the page from its
    // copy's time, due at once, and asks conditionally: the copy from the first check is still
    // there, with its ETag.
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    let (ready,): (Option<i64>,) =
        sqlx::query_as("SELECT MAX(backoff_until_ms) FROM host_politeness")
            .fetch_one(&pool)
            .await
            .unwrap();
    pool.close().await;
    let ready = ready.unwrap_or(0);
    while chrono::Utc::now().timestamp_millis() <= ready {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(run_once().await.status.success());
    let asked: Vec<Option<String>> = (server.requests_to(HOST).iter())
        .filter(|r| r.path == "/flaky")
        .map(|r| r.header("if-none-match").map(str::to_string))
        .collect();
    assert_eq!(
        asked,
        [None, Some("\"f1\"".into()), Some("\"f1\"".into())],
        "a 500 does not make freshet forget its copy's ETag"
    );
}
