//! freshet on a real PostgreSQL server, as a user runs it: `freshet run --once --db
//! postgres://...` against a loopback site, and a demo's SQLite database moved with `freshet
//! migrate`, whose reports (`report age`, `hosts`, `duplicates`, `html`, `explain`) must give the
//! same numbers from both databases.
//!
//! Needs `FRESHET_TEST_POSTGRES`, a postgres:// URL of a server this test may create databases
//! on (`.ci/run` starts a throwaway cluster and sets it); without it the tests say SKIPPED and
//! pass, unless `FRESHET_REQUIRE_POSTGRES=1`.

#[path = "support/postgres.rs"]
mod postgres;
#[path = "support/recording_server.rs"]
mod recording_server;

use std::process::Output;

use postgres::postgres_database;
use recording_server::{RecordingServer, Reply};
use serde_json::Value;

const HOST: &str = "127.0.0.1";

async fn freshet(args: &[&str]) -> Output {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_freshet"))
        .args(args)
        .output()
        .await
        .expect("run the freshet binary");
    assert!(
        output.status.success(),
        "freshet {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Whether two JSON documents are equal, numbers to 1e-9 relative.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1e-300)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).expect("JSON on stdout")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_once_on_postgres_then_report() {
    let Some(db) = postgres_database("run_once").await else {
        return;
    };
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
    let schedule = schedule.display().to_string();
    for pass in 1..=2 {
        let run = freshet(&["run", "--once", "--schedules", &schedule, "--db", &db]).await;
        let pages = server
            .requests()
            .iter()
            .filter(|r| r.path == "/one" || r.path == "/two")
            .count();
        // The second pass finds nothing due: the state the first left is in the database.
        assert_eq!(
            pages,
            2,
            "pass {pass}: each page fetched once: {}",
            String::from_utf8_lossy(&run.stderr)
        );
    }
    assert!(!server.requests().iter().any(|r| r.path.starts_with("/no/")));

    let age = json(&freshet(&["report", "age", "--db", &db, "--format", "json"]).await);
    let rows = age.as_array().expect("an array of URLs");
    let one = rows
        .iter()
        .find(|r| r["url"] == format!("{base}/one"))
        .unwrap_or_else(|| panic!("/one in {age}"));
    assert_eq!(one["checks"], 1, "{one}");
    let hosts = json(&freshet(&["report", "hosts", "--db", &db, "--format", "json"]).await);
    assert!(hosts.to_string().contains(&base), "{hosts}");
    let explain = freshet(&["explain", &format!("{base}/one"), "--db", &db]).await;
    let explain = String::from_utf8_lossy(&explain.stdout);
    assert!(explain.contains("/one"), "{explain}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_demo_moved_to_postgres_reports_the_same_numbers() {
    let Some(postgres) = postgres_database("migrated_demo").await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let sqlite = dir.path().join("demo.db").display().to_string();
    freshet(&["demo", "--duration", "6", "--db", &sqlite]).await;
    let moved = freshet(&["migrate", "--from", &sqlite, "--to", &postgres]).await;
    let moved = String::from_utf8_lossy(&moved.stdout).to_string();
    assert!(moved.contains("copied"), "{moved}");

    for report in ["age", "hosts", "duplicates"] {
        let from_sqlite =
            json(&freshet(&["report", report, "--db", &sqlite, "--format", "json"]).await);
        let from_postgres =
            json(&freshet(&["report", report, "--db", &postgres, "--format", "json"]).await);
        assert!(
            from_sqlite.as_array().is_some_and(|rows| !rows.is_empty()) || report == "duplicates",
            "report {report} is empty: {from_sqlite}"
        );
        assert!(
            same(&from_sqlite, &from_postgres),
            "report {report} differs:\nSQLite:     {from_sqlite}\nPostgreSQL: {from_postgres}"
        );
    }
    let html = |db: String| async move {
        let out = freshet(&["report", "html", "--db", &db, "--out", "-"]).await;
        String::from_utf8(out.stdout).expect("UTF-8 HTML")
    };
    // The page names its database; the rest must be the same, line for line.
    let html_sqlite = html(sqlite.clone()).await.replace(&sqlite, "DB");
    let html_postgres = html(postgres.clone()).await.replace(&postgres, "DB");
    assert!(html_sqlite.len() > 1_000);
    let differs = html_sqlite
        .lines()
        .zip(html_postgres.lines())
        .find(|(a, b)| a != b);
    assert!(differs.is_none(), "report html differs: {differs:?}");
    assert_eq!(html_sqlite.lines().count(), html_postgres.lines().count());

    let age = json(&freshet(&["report", "age", "--db", &sqlite, "--format", "json"]).await);
    let url = age[0]["url"].as_str().expect("a URL").to_string();
    let explain_sqlite = freshet(&["explain", &url, "--db", &sqlite]).await.stdout;
    let explain_postgres = freshet(&["explain", &url, "--db", &postgres]).await.stdout;
    assert_eq!(
        String::from_utf8_lossy(&explain_sqlite),
        String::from_utf8_lossy(&explain_postgres)
    );
}

/// A PostgreSQL URL that reaches no PostgreSQL server says why, with what to check, at once (no
/// server needed): a refused port said "pool timed out while waiting for an open connection"
/// after 30 s, and a port speaking something else gave a bare protocol error (helper-88).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_url_that_reaches_no_server_says_why() {
    async fn error_of(url: String) -> String {
        let opened = freshet::store::Store::open(std::path::Path::new(&url)).await;
        format!("{:#}", opened.expect_err("no PostgreSQL server there"))
    }
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let refused = error_of(format!("postgres://u@127.0.0.1:{port}/db")).await;
    assert!(refused.contains("refused"), "{refused}");
    assert!(
        refused.contains("is a PostgreSQL server listening"),
        "{refused}"
    );
    assert!(!refused.contains("pool timed out"), "{refused}");

    // A server that answers with HTTP and hangs up.
    let http = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = http.local_addr().unwrap().port();
    let server = tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        while let Ok((mut socket, _)) = http.accept().await {
            let _ = socket
                .write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
                .await;
        }
    });
    let wrong = error_of(format!("postgres://u@127.0.0.1:{port}/db")).await;
    assert!(
        wrong.contains("is a PostgreSQL server listening"),
        "{wrong}"
    );
    server.abort();
}
