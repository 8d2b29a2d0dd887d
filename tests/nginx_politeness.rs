//! Politeness against a web server nobody here wrote: nginx from the system's packages, started
//! as the test user on a loopback port with a temporary prefix, serving a generated static site
//! whose robots.txt has `Crawl-delay: 1` and `Disallow: /private/`. `freshet run --once` refreshes
//! it, then nginx's own access log (a `log_format` with `$msec` and `$request_time`) is read:
//! no two requests less than the Crawl-delay apart, and no disallowed path requested.
//!
//! When nginx is not installed the test says so and passes without checking (`.ci/run`
//! installs it: `apt-get install nginx-light`).

#[path = "support/freshet_bin.rs"]
mod freshet_bin;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use freshet_bin::{Freshet, wait_for, write_schedule};

const CRAWL_DELAY_MS: i64 = 1_000;
/// nginx stamps `$msec` and `$request_time` in whole milliseconds: one unit of that resolution
/// on each of the two requests of a gap.
const LOG_RESOLUTION_MS: i64 = 2;
const PAGES: usize = 5;

/// The nginx binary, if installed.
fn nginx() -> Option<PathBuf> {
    ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

/// A loopback port free a moment ago.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("address").port()
}

/// Writes the site and nginx's configuration under `prefix`.
fn write_site(prefix: &Path, port: u16) {
    let html = prefix.join("html");
    std::fs::create_dir_all(html.join("private")).unwrap();
    std::fs::create_dir_all(prefix.join("tmp")).unwrap();
    std::fs::create_dir_all(prefix.join("conf")).unwrap();
    let base = format!("http://127.0.0.1:{port}");
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
    let p = prefix.display();
    let conf = format!(
        "daemon off;\nmaster_process off;\nworker_processes 1;\npid {p}/nginx.pid;\n\
         error_log {p}/error.log;\nevents {{ worker_connections 64; }}\n\
         http {{\n\
           log_format timed '$msec $request_time $request_method $uri $status';\n\
           access_log {p}/access.log timed;\n\
           client_body_temp_path {p}/tmp/body;\n proxy_temp_path {p}/tmp/proxy;\n\
           fastcgi_temp_path {p}/tmp/fastcgi;\n uwsgi_temp_path {p}/tmp/uwsgi;\n\
           scgi_temp_path {p}/tmp/scgi;\n\
           types {{ text/html html; text/plain txt; }}\n\
           server {{ listen 127.0.0.1:{port}; root {p}/html; }}\n\
         }}\n"
    );
    std::fs::write(prefix.join("conf/nginx.conf"), conf).unwrap();
}

/// One access-log line: when the request started (ms) and its path.
fn parse_log(text: &str) -> Vec<(i64, String)> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let end_s: f64 = fields.next()?.parse().ok()?;
            let took_s: f64 = fields.next()?.parse().ok()?;
            let _method = fields.next()?;
            let uri = fields.next()?.to_string();
            let start_ms = ((end_s - took_s) * 1000.0).round() as i64;
            Some((start_ms, uri))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nginx_sees_the_crawl_delay_and_no_disallowed_path() {
    let Some(nginx) = nginx() else {
        eprintln!("SKIPPED: nginx is not installed (apt-get install nginx-light); nothing checked");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("nginx");
    let port = free_port();
    write_site(&prefix, port);
    let mut server = tokio::process::Command::new(&nginx)
        .arg("-p")
        .arg(&prefix)
        .arg("-c")
        .arg(prefix.join("conf/nginx.conf"))
        .arg("-e")
        .arg(prefix.join("error.log"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start nginx");
    let up = wait_for(Duration::from_secs(10), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    })
    .await;
    assert!(
        up,
        "nginx did not start: {}",
        std::fs::read_to_string(prefix.join("error.log")).unwrap_or_default()
    );

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
    let _ = server.kill().await;
    assert!(status.success(), "{stderr}");

    let log = parse_log(&std::fs::read_to_string(prefix.join("access.log")).unwrap_or_default());
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
