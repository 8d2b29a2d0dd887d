//! Politeness against a web server nobody here wrote: nginx from the system's packages, started
//! as the test user on a loopback port with a temporary prefix, serving a generated static site
//! whose robots.txt has `Crawl-delay: 1` and `Disallow: /private/`. `freshet run --once` refreshes
//! it, then nginx's own access log (a `log_format` with `$msec` and `$request_time`) is read:
//! no two requests less than the Crawl-delay apart, and no disallowed path requested.
//!
//! Two more cases from nginx's side: redirects (one into the Disallowed path, one to an allowed
//! page) and a host whose pages answer `429 Retry-After: 3600`.
//!
//! When nginx is not installed the test says so and passes without checking (`.ci/run`
//! installs it: `apt-get install nginx-light`).

#[path = "support/freshet_bin.rs"]
mod freshet_bin;
#[path = "support/nginx.rs"]
mod nginx;

use std::path::Path;
use std::time::Duration;

use freshet_bin::{Freshet, write_schedule};
use nginx::Nginx;

const CRAWL_DELAY_MS: i64 = 1_000;
/// nginx stamps `$msec` and `$request_time` in whole milliseconds: one unit of that resolution
/// on each of the two requests of a gap.
const LOG_RESOLUTION_MS: i64 = 2;
const PAGES: usize = 5;

/// Writes the site under `html`, its sitemap naming `base`.
fn write_site(html: &Path, base: &str) {
    std::fs::create_dir_all(html.join("private")).unwrap();
    std::fs::write(
        html.join("robots.txt"),
        "User-agent: *\nCrawl-delay: 1\nDisallow: /private/\n",
    )
    .unwrap();
    let mut sitemap = String::new();
    for i in 0..PAGES {
        std::fs::write(
            html.join(format!("page{i}.html")),
            format!("<html><body><p>page {i}</p></body></html>"),
        )
        .unwrap();
        sitemap.push_str(&format!("{base}/page{i}.html\n"));
    }
    std::fs::write(html.join("private/secret.html"), "<p>secret</p>").unwrap();
    sitemap.push_str(&format!("{base}/private/secret.html\n"));
    std::fs::write(html.join("sitemap.txt"), sitemap).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nginx_sees_the_crawl_delay_and_no_disallowed_path() {
    let Some(binary) = Nginx::binary_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = Nginx::start(&binary, &dir.path().join("nginx")).await;
    let port = server.port;
    write_site(&Nginx::html(&server.prefix), &server.base());

    let schedule = write_schedule(
        dir.path(),
        &format!(
            "[[site]]\nname = \"nginx\"\nsitemaps = [\"http://127.0.0.1:{port}/sitemap.txt\"]\n\
             host_rate = \"10/s\"\nrequests_per_day = 1000000\nallow_networks = [\"127.0.0.0/8\"]\n"
        ),
    );
    let run = Freshet::run(&schedule, &dir.path().join("f.db"), &["--once"]);
    let (status, stderr) = run
        .finish(Duration::from_secs(120))
        .await
        .expect("--once ended");
    let log: Vec<(i64, String)> = server
        .access_log()
        .into_iter()
        .map(|r| (r.start_ms, r.uri))
        .collect();
    server.stop().await;
    assert!(status.success(), "{stderr}");

    let pages = log
        .iter()
        .filter(|(_, uri)| uri.starts_with("/page"))
        .count();
    assert_eq!(pages, PAGES, "every allowed page was fetched: {log:?}");
    let disallowed: Vec<_> = log
        .iter()
        .filter(|(_, u)| u.starts_with("/private/"))
        .collect();
    let gaps: Vec<i64> = log.windows(2).map(|pair| pair[1].0 - pair[0].0).collect();
    let short: Vec<_> = gaps
        .iter()
        .filter(|gap| **gap < CRAWL_DELAY_MS - LOG_RESOLUTION_MS)
        .collect();
    eprintln!(
        "nginx access log: {} requests, {} disallowed, least gap {:?} ms, {} gaps below {CRAWL_DELAY_MS} ms",
        log.len(),
        disallowed.len(),
        gaps.iter().min(),
        short.len()
    );
    assert!(disallowed.is_empty(), "disallowed paths requested: {log:?}");
    assert!(
        short.is_empty(),
        "gaps below the Crawl-delay: {gaps:?} in {log:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nginx_sees_no_redirect_followed_into_a_disallowed_path() {
    let Some(binary) = Nginx::binary_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = Nginx::start_with(
        &binary,
        &dir.path().join("nginx"),
        "location = /moved.html { return 302 /private/secret.html; } \
         location = /renamed.html { return 301 /page0.html; }",
    )
    .await;
    let port = server.port;
    let html = Nginx::html(&server.prefix);
    write_site(&html, &server.base());
    let mut sitemap = std::fs::read_to_string(html.join("sitemap.txt")).unwrap();
    sitemap.push_str(&format!(
        "{0}/moved.html\n{0}/renamed.html\n",
        server.base()
    ));
    std::fs::write(html.join("sitemap.txt"), sitemap).unwrap();

    let schedule = write_schedule(
        dir.path(),
        &format!(
            "[[site]]\nname = \"nginx\"\nsitemaps = [\"http://127.0.0.1:{port}/sitemap.txt\"]\n\
             host_rate = \"10/s\"\nrequests_per_day = 1000000\nallow_networks = [\"127.0.0.0/8\"]\n"
        ),
    );
    let run = Freshet::run(&schedule, &dir.path().join("f.db"), &["--once"]);
    let (status, stderr) = run
        .finish(Duration::from_secs(120))
        .await
        .expect("--once ended");
    let log = server.access_log();
    server.stop().await;
    assert!(status.success(), "{stderr}");

    let statuses = |uri: &str| -> Vec<u16> {
        log.iter()
            .filter(|r| r.uri == uri)
            .map(|r| r.status)
            .collect()
    };
    let disallowed: Vec<_> = log
        .iter()
        .filter(|r| r.uri.starts_with("/private/"))
        .collect();
    let gaps: Vec<i64> = log
        .windows(2)
        .map(|pair| pair[1].start_ms - pair[0].start_ms)
        .collect();
    eprintln!(
        "nginx with redirects: {} requests, {} disallowed, least gap {:?} ms",
        log.len(),
        disallowed.len(),
        gaps.iter().min()
    );
    // The redirects themselves were asked (so their targets were judged) ...
    assert_eq!(statuses("/moved.html"), [302], "{log:?}");
    assert_eq!(statuses("/renamed.html"), [301], "{log:?}");
    assert!(statuses("/page0.html").contains(&200), "{log:?}");
    // ... the one into /private/ was not followed, and every hop kept the Crawl-delay.
    assert!(disallowed.is_empty(), "disallowed paths requested: {log:?}");
    assert!(
        gaps.iter()
            .all(|gap| *gap >= CRAWL_DELAY_MS - LOG_RESOLUTION_MS),
        "gaps below the Crawl-delay: {gaps:?} in {log:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nginx_answering_429_retry_after_is_left_alone_for_the_hour() {
    let Some(binary) = Nginx::binary_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = Nginx::start_with(
        &binary,
        &dir.path().join("nginx"),
        "location /busy/ { add_header Retry-After 3600 always; return 429; }",
    )
    .await;
    let port = server.port;
    let html = Nginx::html(&server.prefix);
    std::fs::write(html.join("robots.txt"), "User-agent: *\nAllow: /\n").unwrap();
    let base = server.base();
    std::fs::write(
        html.join("sitemap.txt"),
        format!("{base}/busy/a.html\n{base}/busy/b.html\n{base}/busy/c.html\n"),
    )
    .unwrap();
    let schedule = write_schedule(
        dir.path(),
        &format!(
            "[[site]]\nname = \"nginx\"\nsitemaps = [\"http://127.0.0.1:{port}/sitemap.txt\"]\n\
             host_rate = \"20/s\"\nrequests_per_day = 1000000\nallow_networks = [\"127.0.0.0/8\"]\n"
        ),
    );
    let db = dir.path().join("f.db");

    for pass in 1..=2 {
        let before = server.access_log().len();
        let run = Freshet::run(&schedule, &db, &["--once"]);
        let (status, stderr) = run
            .finish(Duration::from_secs(60))
            .await
            .expect("--once ended");
        assert!(status.success(), "{stderr}");
        assert!(
            stderr.contains(&format!("skipped 127.0.0.1:{port}")),
            "the skipped host is named: {stderr}"
        );
        let log = server.access_log();
        let busy: Vec<_> = log[before..]
            .iter()
            .filter(|r| r.uri.starts_with("/busy/"))
            .collect();
        eprintln!(
            "nginx 429 Retry-After: 3600, pass {pass}: {} requests, {} to /busy/",
            log.len() - before,
            busy.len()
        );
        if pass == 1 {
            // One page got the 429 and closed the whole host: nothing after it.
            assert_eq!(busy.len(), 1, "{log:?}");
            assert_eq!(busy[0].status, 429);
            assert_eq!(log.last(), Some(busy[0]), "nothing after the 429: {log:?}");
        } else {
            // The Retry-After was persisted: the restart leaves the host alone entirely.
            assert_eq!(log.len(), before, "contacted again: {log:?}");
        }
    }
    server.stop().await;
}
