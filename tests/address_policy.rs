//! The address policy from the server's side: names resolving to loopback, private (10.x) or
//! link-local (169.254.169.254) addresses, literal IPs and IPv4-mapped forms get no request
//! unless the site's `allow_networks` names the range, on every request kind (robots.txt,
//! sitemaps, feeds, pages) and every redirect hop; each refusal is a recorded error naming the
//! URL and the address (issue 10).

#[path = "support/recording_server.rs"]
mod recording_server;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use freshet::clock::{SystemClock, VirtualClock};
use freshet::refresher::{self, PolicyChoice, RunOptions};
use freshet::store::Store;
use recording_server::{RecordingServer, Reply};

/// 2021-01-01T00:00:00Z.
const ORIGIN_MS: i64 = 1_609_459_200_000;

fn write(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("site.toml");
    std::fs::write(&path, text).unwrap();
    path
}

async fn run_once(schedule: PathBuf, db: &Path, resolve: Vec<(String, SocketAddr)>) {
    let options = RunOptions {
        schedules: vec![schedule],
        db_path: db.to_path_buf(),
        once: true,
        clock: Arc::new(VirtualClock::new(ORIGIN_MS, 200.0)),
        resolve,
        policy: PolicyChoice::Learned,
        worker: Default::default(),
        run_lock: None,
    };
    refresher::run(options, std::future::pending())
        .await
        .expect("one pass");
}

/// Every recorded error as "url | message".
async fn errors(db: &Path) -> Vec<String> {
    let store = Store::open(db).await.unwrap();
    let errors = store.recent_errors(1000).await.unwrap();
    store.close().await;
    errors
        .into_iter()
        .map(|(_, _, url, message)| format!("{} | {message}", url.unwrap_or_default()))
        .collect()
}

/// A small site on every name: robots.txt, a sitemap, a feed and a page.
fn serve(server: &RecordingServer, hosts: &[&str]) {
    for host in hosts {
        let base = format!("http://{host}:{}", server.addr.port());
        server.route(
            host,
            "/robots.txt",
            Reply::text("User-agent: *\nAllow: /\n"),
        );
        server.route(
            host,
            "/sitemap.xml",
            Reply::status(200)
                .header("content-type", "application/xml")
                .body(format!(
                    r#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>{base}/page</loc></url></urlset>"#
                )),
        );
        server.route(
            host,
            "/feed.xml",
            Reply::status(200)
                .header("content-type", "application/rss+xml")
                .body(format!(
                    r#"<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><item><link>{base}/page</link></item></channel></rss>"#
                )),
        );
        server.route(host, "/page", Reply::html("<p>inside</p>"));
    }
}

/// The schedule of the first two tests: sitemaps, a feed and a seed on names that resolve to
/// loopback, 10.x and 169.254.169.254, and on literal loopback addresses.
fn hostile_schedule(dir: &Path, port: u16, allow: &str) -> PathBuf {
    write(
        dir,
        &format!(
            r#"[[site]]
name = "inside"
sitemaps = ["http://lo.test:{port}/sitemap.xml", "http://ten.test:{port}/sitemap.xml",
            "http://meta.test:{port}/sitemap.xml", "http://127.0.0.1:{port}/sitemap.xml",
            "http://[::ffff:127.0.0.1]:{port}/sitemap.xml"]
feeds = ["http://lo.test:{port}/feed.xml"]
seeds = ["http://lo.test:{port}/page", "http://localhost:{port}/page"]
timeout = "3s"
{allow}
"#
        ),
    )
}

fn hostile_resolve(server: &RecordingServer) -> Vec<(String, SocketAddr)> {
    let port = server.addr.port();
    vec![
        ("lo.test".into(), server.addr),
        ("ten.test".into(), SocketAddr::from(([10, 0, 0, 7], port))),
        (
            "meta.test".into(),
            SocketAddr::from(([169, 254, 169, 254], port)),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_ranges_get_no_request_and_each_refusal_is_recorded() {
    let server = RecordingServer::start().await;
    serve(&server, &["lo.test", "127.0.0.1", "localhost"]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    let schedule = hostile_schedule(dir.path(), server.addr.port(), "");
    run_once(schedule, &db, hostile_resolve(&server)).await;

    let reached = server.requests();
    eprintln!(
        "refused ranges: {} requests reached the server",
        reached.len()
    );
    assert!(
        reached.is_empty(),
        "requests reached a refused address: {:?}",
        reached
            .iter()
            .map(|r| format!("{}{}", r.host, r.path))
            .collect::<Vec<_>>()
    );
    let errors = errors(&db).await;
    for (url_part, address) in [
        ("lo.test", "127.0.0.1"),
        ("ten.test", "10.0.0.7"),
        ("meta.test", "169.254.169.254"),
        ("http://127.0.0.1:", "127.0.0.1"),
        ("[::ffff:127.0.0.1]", "::ffff:127.0.0.1"),
        ("localhost", "127.0.0.1"),
    ] {
        assert!(
            errors.iter().any(|e| e.contains(url_part)
                && e.contains(&format!("address {address} "))
                && e.contains("not in allow_networks")),
            "no refusal of {url_part} ({address}) recorded: {errors:#?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_networks_opens_the_named_ranges_only() {
    let server = RecordingServer::start().await;
    serve(&server, &["lo.test", "127.0.0.1", "localhost"]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    let schedule = hostile_schedule(
        dir.path(),
        server.addr.port(),
        r#"allow_networks = ["127.0.0.0/8"]"#,
    );
    run_once(schedule, &db, hostile_resolve(&server)).await;

    // Loopback is allowed now: the same schedule reaches the server by name and literal IP ...
    let to_lo: Vec<String> = server
        .requests_to("lo.test")
        .iter()
        .map(|r| r.path.clone())
        .collect();
    for path in ["/robots.txt", "/sitemap.xml", "/feed.xml", "/page"] {
        assert!(
            to_lo.contains(&path.to_string()),
            "{path} not requested: {to_lo:?}"
        );
    }
    assert!(!server.requests_to("127.0.0.1").is_empty());
    // ... while 10.x and 169.254.169.254 stay refused, before any connection is tried.
    let errors = errors(&db).await;
    for address in ["10.0.0.7", "169.254.169.254"] {
        assert!(
            errors
                .iter()
                .any(|e| e.contains(&format!("address {address} "))
                    && e.contains("not in allow_networks")),
            "{address}: {errors:#?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_redirect_hop_reaches_a_refused_address() {
    // The site's own server is 127.0.0.1 (allowed alone); another "machine" on 127.0.0.2
    // stands in for everything the site's pages redirect to.
    let site = RecordingServer::start().await;
    let inside = RecordingServer::start_on("127.0.0.2", Arc::new(SystemClock)).await;
    let port2 = inside.addr.port();
    site.route(
        "www.test",
        "/robots.txt",
        Reply::text("User-agent: *\nAllow: /\n"),
    );
    let targets = [
        ("/to-name", format!("http://lo2.test:{port2}/x")),
        ("/to-literal", format!("http://127.0.0.2:{port2}/x")),
        ("/to-mapped", format!("http://[::ffff:127.0.0.2]:{port2}/x")),
        ("/to-ten", format!("http://ten.test:{port2}/x")),
        (
            "/to-meta",
            format!("http://meta.test:{port2}/latest/meta-data/"),
        ),
    ];
    for (path, target) in &targets {
        site.route("www.test", path, Reply::redirect(302, target));
    }
    site.route("www.test", "/fine", Reply::html("<p>fine</p>"));
    for host in ["lo2.test", "127.0.0.2", "ten.test", "meta.test"] {
        inside.route(
            host,
            "/robots.txt",
            Reply::text("User-agent: *\nAllow: /\n"),
        );
        inside.route(host, "/x", Reply::html("<p>inside</p>"));
    }
    let seeds: Vec<String> = targets
        .iter()
        .map(|(path, _)| format!("\"{}\"", site.url("www.test", path)))
        .chain([format!("\"{}\"", site.url("www.test", "/fine"))])
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    let schedule = write(
        dir.path(),
        &format!(
            "[[site]]\nname = \"www\"\nseeds = [{}]\nallow_networks = [\"127.0.0.1/32\"]\ntimeout = \"3s\"\n",
            seeds.join(", ")
        ),
    );
    let resolve = vec![
        ("www.test".to_string(), site.addr),
        ("lo2.test".to_string(), inside.addr),
        (
            "ten.test".to_string(),
            SocketAddr::from(([10, 0, 0, 7], port2)),
        ),
        (
            "meta.test".to_string(),
            SocketAddr::from(([169, 254, 169, 254], port2)),
        ),
    ];
    run_once(schedule, &db, resolve).await;

    // The redirects themselves were requested (the allowed server) ...
    let asked: Vec<String> = site
        .requests_to("www.test")
        .iter()
        .map(|r| r.path.clone())
        .collect();
    for (path, _) in &targets {
        assert!(
            asked.contains(&path.to_string()),
            "{path} not requested: {asked:?}"
        );
    }
    assert!(asked.contains(&"/fine".to_string()));
    // ... and no hop reached the refused machine.
    let reached = inside.requests();
    eprintln!(
        "redirect hops to refused addresses: {} requests reached 127.0.0.2",
        reached.len()
    );
    assert!(
        reached.is_empty(),
        "{:?}",
        reached
            .iter()
            .map(|r| format!("{}{}", r.host, r.path))
            .collect::<Vec<_>>()
    );
    let errors = errors(&db).await;
    for address in [
        "127.0.0.2",
        "::ffff:127.0.0.2",
        "10.0.0.7",
        "169.254.169.254",
    ] {
        assert!(
            errors
                .iter()
                .any(|e| e.contains(&format!("address {address} "))),
            "{address}: {errors:#?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_robots_txt_sitemap_line_into_a_refused_range_gets_no_request() {
    // The site's own server is 127.0.0.1 (allowed alone); its robots.txt lists sitemaps on
    // 127.0.0.2, by name and as literal addresses, which the policy refuses.
    let site = RecordingServer::start().await;
    let inside = RecordingServer::start_on("127.0.0.2", Arc::new(SystemClock)).await;
    let port2 = inside.addr.port();
    site.route(
        "www.test",
        "/robots.txt",
        Reply::text(format!(
            "User-agent: *\nAllow: /\nSitemap: http://lo2.test:{port2}/sitemap.xml\n\
             Sitemap: http://127.0.0.2:{port2}/sitemap.xml\n\
             Sitemap: http://[::ffff:127.0.0.2]:{port2}/sitemap.xml\n"
        )),
    );
    site.route("www.test", "/page", Reply::html("<p>fine</p>"));
    for host in ["lo2.test", "127.0.0.2", "[::ffff:127.0.0.2]"] {
        inside.route(
            host,
            "/robots.txt",
            Reply::text("User-agent: *\nAllow: /\n"),
        );
        inside.route(
            host,
            "/sitemap.xml",
            Reply::status(200)
                .header("content-type", "application/xml")
                .body(format!(
                    r#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://{host}:{port2}/x</loc></url></urlset>"#
                )),
        );
        inside.route(host, "/x", Reply::html("<p>inside</p>"));
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    let schedule = write(
        dir.path(),
        &format!(
            "[[site]]\nname = \"www\"\nseeds = [\"{}\"]\nallow_networks = [\"127.0.0.1/32\"]\ntimeout = \"3s\"\n",
            site.url("www.test", "/page")
        ),
    );
    let resolve = vec![
        ("www.test".to_string(), site.addr),
        ("lo2.test".to_string(), inside.addr),
    ];
    run_once(schedule, &db, resolve).await;

    // The site itself was read: its robots.txt (so the Sitemap: lines were seen) and its page.
    let asked: Vec<String> = site
        .requests_to("www.test")
        .iter()
        .map(|r| r.path.clone())
        .collect();
    for path in ["/robots.txt", "/page"] {
        assert!(
            asked.contains(&path.to_string()),
            "{path} not requested: {asked:?}"
        );
    }
    let reached = inside.requests();
    eprintln!(
        "robots.txt Sitemap: lines into a refused range: {} requests reached 127.0.0.2",
        reached.len()
    );
    assert!(
        reached.is_empty(),
        "{:?}",
        reached
            .iter()
            .map(|r| format!("{}{}", r.host, r.path))
            .collect::<Vec<_>>()
    );
    // Each host's first request, its robots.txt, is the one refused (naming the address), and
    // its sitemap is recorded as not read.
    let errors = errors(&db).await;
    for (url_part, address) in [
        ("lo2.test", "127.0.0.2"),
        ("http://127.0.0.2:", "127.0.0.2"),
        ("[::ffff:7f00:2]", "::ffff:127.0.0.2"),
    ] {
        assert!(
            errors.iter().any(|e| e.contains(url_part)
                && e.contains("/robots.txt |")
                && e.contains(&format!("address {address} "))
                && e.contains("not in allow_networks")),
            "no refusal of {url_part}'s robots.txt ({address}) recorded: {errors:#?}"
        );
        assert!(
            errors.iter().any(|e| e.contains(url_part)
                && e.contains("/sitemap.xml |")
                && e.contains("refused address")),
            "the sitemap on {url_part} is not recorded as not read: {errors:#?}"
        );
    }
}

/// Whether this machine has an IPv6 loopback to bind (a container may have none).
fn ipv6_loopback() -> bool {
    std::net::TcpListener::bind("[::1]:0").is_ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ipv6_loopback_is_refused_unless_allow_networks_names_it() {
    if !ipv6_loopback() {
        eprintln!("SKIPPED: this machine cannot bind [::1] (no IPv6 loopback)");
        return;
    }
    let server = RecordingServer::start_on("::1", Arc::new(SystemClock)).await;
    let port = server.addr.port();
    for host in ["six.test", "[::1]"] {
        server.route(
            host,
            "/robots.txt",
            Reply::text("User-agent: *\nAllow: /\n"),
        );
        server.route(host, "/page", Reply::html("<p>inside</p>"));
    }
    let resolve = vec![("six.test".to_string(), server.addr)];
    let schedule = |dir: &Path, allow: &str| {
        write(
            dir,
            &format!(
                "[[site]]\nname = \"six\"\nseeds = [\"http://six.test:{port}/page\", \"http://[::1]:{port}/page\"]\ntimeout = \"3s\"\n{allow}\n"
            ),
        )
    };

    // By default: no request, and each refusal names the URL and ::1.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    run_once(schedule(dir.path(), ""), &db, resolve.clone()).await;
    let reached = server.requests();
    eprintln!("::1 refused: {} requests reached the server", reached.len());
    assert!(
        reached.is_empty(),
        "{:?}",
        reached
            .iter()
            .map(|r| format!("{}{}", r.host, r.path))
            .collect::<Vec<_>>()
    );
    let errors = errors(&db).await;
    for url_part in ["six.test", "[::1]"] {
        assert!(
            errors.iter().any(|e| e.contains(url_part)
                && e.contains("address ::1 ")
                && e.contains("not in allow_networks")),
            "no refusal of {url_part} (::1) recorded: {errors:#?}"
        );
    }

    // allow_networks = ["::1/128"] opens it: both the name and the literal reach the server.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    run_once(
        schedule(dir.path(), r#"allow_networks = ["::1/128"]"#),
        &db,
        resolve,
    )
    .await;
    for host in ["six.test", "[::1]"] {
        let paths: Vec<String> = server
            .requests_to(host)
            .iter()
            .map(|r| r.path.clone())
            .collect();
        assert!(
            paths.contains(&"/page".to_string()),
            "{host}: /page not requested once ::1/128 is allowed: {paths:?}"
        );
    }
}
