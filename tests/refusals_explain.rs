//! Every refusal is recorded and `freshet explain URL` shows it (issue 12): a URL that
//! robots.txt disallows, one the site's filters exclude, one a sitemap names on another host,
//! and a redirect hop to an address the policy refuses. Before, robots refusals were one INFO
//! line and `explain` said freshet "does not know" the URL.

#[path = "support/recording_server.rs"]
mod recording_server;

use std::process::Output;

use recording_server::{RecordingServer, Reply};

const HOST: &str = "127.0.0.1";

async fn freshet(args: &[&str]) -> Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_freshet"))
        .args(args)
        .env_remove("FRESHET_LOG")
        .output()
        .await
        .expect("run the freshet binary")
}

async fn explain(db: &str, url: &str) -> String {
    let out = freshet(&["explain", url, "--db", db]).await;
    assert!(
        out.status.success(),
        "explain {url}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `freshet run --once` over the site `local` found through `source` (its `sitemaps` or
/// `seeds` line), excluding `/drafts/`, in `dir`; gives the database's path.
async fn run_once_over(dir: &std::path::Path, source: &str) -> String {
    let schedule = dir.join("site.toml");
    std::fs::write(
        &schedule,
        format!(
            "[[site]]\nname = \"local\"\n{source}\n\
             exclude = ['/drafts/']\nhost_rate = \"20/s\"\nallow_networks = [\"127.0.0.0/8\"]\n"
        ),
    )
    .unwrap();
    let db = dir.join("f.db").display().to_string();
    let run = freshet(&[
        "run",
        "--once",
        "--schedules",
        &schedule.display().to_string(),
        "--db",
        &db,
    ])
    .await;
    assert!(
        run.status.success(),
        "run failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    db
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_are_recorded_and_explained() {
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
        Reply::text(format!(
            "{base}/one\n{base}/no/way\n{base}/drafts/x\n{base}/hop\nhttp://elsewhere.test/page\n"
        )),
    );
    server.route(HOST, "/one", Reply::html("<p>one</p>"));
    // A redirect to an address the policy refuses (link-local: never allowed here).
    server.route(
        HOST,
        "/hop",
        Reply::redirect(302, "http://169.254.169.254/latest"),
    );
    let dir = tempfile::tempdir().unwrap();
    let db = run_once_over(dir.path(), &format!("sitemaps = [\"{base}/sitemap.txt\"]")).await;
    // The server saw no request for what was refused.
    let paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert!(paths.contains(&"/one".to_string()), "{paths:?}");
    assert!(
        !paths
            .iter()
            .any(|p| p.starts_with("/no/") || p.starts_with("/drafts/")),
        "{paths:?}"
    );

    let text = explain(&db, &format!("{base}/no/way")).await;
    assert!(text.contains("refused by robots.txt"), "{text}");
    assert!(text.contains("Disallow: /no/"), "{text}");
    assert!(text.contains("sitemap.txt"), "where it was found: {text}");

    let text = explain(&db, &format!("{base}/drafts/x")).await;
    assert!(text.contains("refused by the site's URL filters"), "{text}");
    assert!(text.contains("exclude = '/drafts/'"), "{text}");

    let text = explain(&db, "http://elsewhere.test/page").await;
    assert!(text.contains("refused by the cross-host rule"), "{text}");

    let text = explain(&db, "http://169.254.169.254/latest").await;
    assert!(text.contains("refused by the address policy"), "{text}");
    assert!(text.contains("link-local"), "{text}");

    // Another spelling of a known URL is answered for that URL, and says so.
    let text = explain(&db, &format!("{base}/one?utm_source=x#top")).await;
    assert!(text.contains("is not known as written"), "{text}");
    assert!(
        text.contains(&format!("freshet keeps it as {base}/one ")),
        "{text}"
    );
    let text = explain(&db, &format!("{base}/one")).await;
    assert!(!text.contains("is not known as written"), "{text}");

    // A URL nobody named is still unknown, and says so.
    let unknown = freshet(&["explain", &format!("{base}/never"), "--db", &db]).await;
    assert_eq!(unknown.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("does not know"));
}

/// Links found on a page are refused as a sitemap's entries are, and said so: an adversarial
/// run found that a seed page's link to a disallowed path left no row in `refusals`, and
/// `explain` said freshet did not know the URL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_a_page_gives_are_refused_with_a_reason() {
    let server = RecordingServer::start().await;
    let base = format!("http://{HOST}:{}", server.addr.port());
    server.route(
        HOST,
        "/robots.txt",
        Reply::text("User-agent: *\nDisallow: /secret/\n"),
    );
    server.route(
        HOST,
        "/",
        Reply::html(format!(
            "<html><body><p>Home page with some words in it.</p>\
             <a href=\"{base}/secret/a.html\">secret</a> <a href=\"/drafts/b.html\">draft</a>\
             <a href=\"/open.html\">open</a></body></html>"
        )),
    );
    server.route(HOST, "/open.html", Reply::html("<p>open</p>"));
    let dir = tempfile::tempdir().unwrap();
    let db = run_once_over(dir.path(), &format!("seeds = [\"{base}/\"]")).await;
    let paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert!(paths.contains(&"/open.html".to_string()), "{paths:?}");
    assert!(
        !paths
            .iter()
            .any(|p| p.starts_with("/secret/") || p.starts_with("/drafts/")),
        "{paths:?}"
    );

    let text = explain(&db, &format!("{base}/secret/a.html")).await;
    assert!(text.contains("refused by robots.txt"), "{text}");
    assert!(text.contains("Disallow: /secret/"), "{text}");
    assert!(
        text.contains(&format!("{base}/")),
        "the page that linked it: {text}"
    );

    let text = explain(&db, &format!("{base}/drafts/b.html")).await;
    assert!(text.contains("refused by the site's URL filters"), "{text}");
    assert!(text.contains("exclude = '/drafts/'"), "{text}");
}

/// A host whose robots.txt cannot be read is off limits (RFC 9309), and `explain` says so for
/// its known pages instead of "due: a running refresher fetches it in its host's turn"
/// (helper-88). (A seed it keeps out is a refusal, `refusals_are_recorded_and_explained`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_of_a_host_whose_robots_txt_fails_waits_and_explain_says_why() {
    let server = RecordingServer::start().await;
    let base = format!("http://{HOST}:{}", server.addr.port());
    server.route(
        HOST,
        "/robots.txt",
        Reply::text("User-agent: *\nAllow: /\n"),
    );
    server.route(HOST, "/one", Reply::html("<p>one</p>"));
    let dir = tempfile::tempdir().unwrap();
    let db = run_once_over(dir.path(), &format!("seeds = [\"{base}/one\"]")).await;
    let text = explain(&db, &format!("{base}/one")).await;
    assert!(!text.contains("could not be read"), "{text}");

    // robots.txt now fails; its cached copy is made old, and the page is waited for until due.
    server.route(HOST, "/robots.txt", Reply::status(503));
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{db}"))
        .await
        .unwrap();
    sqlx::query("UPDATE hosts SET robots_checked_ms = 0")
        .execute(&pool)
        .await
        .unwrap();
    let due: i64 = sqlx::query_scalar("SELECT next_due_ms FROM urls WHERE url LIKE '%/one'")
        .fetch_one(&pool)
        .await
        .unwrap();
    pool.close().await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    // The plan's interval at 10,000 visits a day is under 9 s: waited for, not timed.
    assert!(due - now < 60_000, "due {} ms on", due - now);
    tokio::time::sleep(std::time::Duration::from_millis(
        (due - now).max(0) as u64 + 500,
    ))
    .await;
    let db_again = run_once_over(dir.path(), &format!("seeds = [\"{base}/one\"]")).await;
    assert_eq!(db_again, db);
    let pages = server
        .requests()
        .iter()
        .filter(|r| r.path == "/one")
        .count();
    assert_eq!(pages, 1, "fetched while robots.txt failed");
    let text = explain(&db, &format!("{base}/one")).await;
    assert!(
        text.contains("its host's robots.txt could not be read when last tried"),
        "{text}"
    );
    assert!(text.contains("HTTP 503"), "{text}");
    assert!(
        text.contains("judged as of") && text.contains("(now)"),
        "{text}"
    );
    assert!(!text.contains("due: a running refresher"), "{text}");
}
