//! `freshet inspect robots|sitemap|feed` run as the built binary on the fixtures in
//! tests/fixtures/parsers/ and against a loopback HTTP server; checks the JSON and exit codes,
//! and from the server's request log that a URL is fetched as `freshet run` fetches it (the
//! address policy, robots.txt before each hop).

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn fixture(name: &str) -> String {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "tests",
        "fixtures",
        "parsers",
        name,
    ]
    .iter()
    .collect();
    path.to_string_lossy().into_owned()
}

fn freshet(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_freshet"))
        .args(args)
        .output()
        .expect("run freshet")
}

fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "exit {:?}, stderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

#[test]
fn robots_file() {
    let robots = fixture("robots.txt");
    let args = |url: &'static str, agent: &'static str| {
        let out = freshet(&[
            "inspect", "robots", &robots, "--agent", agent, "--url", url, "--json",
        ]);
        json(&out)
    };
    let v = args("http://localhost/private/x", "freshet");
    assert_eq!(v["allowed"], false);
    assert_eq!(v["crawl_delay_s"], 2.5);
    assert_eq!(v["sitemaps"][1], "http://localhost/news/sitemap-news.xml");
    assert_eq!(
        args("http://localhost/private/open", "freshet")["allowed"],
        true
    );
    let greedy = args("http://localhost/", "greedybot/2.0");
    assert_eq!(greedy["allowed"], false);
    assert_eq!(greedy["crawl_delay_s"], Value::Null);
    let text = freshet(&["inspect", "robots", &robots, "--url", "/private/x"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("allowed:     no"));
    // A path or a bare word is resolved against the robots.txt's URL, and the checked URL said.
    assert!(
        text.contains("url:         http://localhost/private/x"),
        "{text}"
    );
    let word = json(&freshet(&[
        "inspect", "robots", &robots, "--url", "private", "--json",
    ]));
    assert_eq!(word["url"], "http://localhost/private");
    // The JSON carries what the text shows: status, agent, group, URL, the deciding rule.
    assert!(
        text.contains("200: rules parsed") && text.contains("(Global group)"),
        "{text}"
    );
    assert_eq!(v["status"], 200);
    assert_eq!(v["status_note"], "200: rules parsed");
    assert_eq!(v["agent"], "freshet");
    assert_eq!(v["group"], "global");
    assert_eq!(v["url"], "http://localhost/private/x");
    assert!(text.contains(&format!(
        "rule:        {}",
        v["disallowed_by"].as_str().unwrap()
    )));
    assert_eq!(greedy["group"], "specific");
    assert_eq!(args("http://localhost/", "otherbot")["group"], "global");
}

/// The case: a saved copy of a real sitemap, all on its own host, listed 0 URLs (each
/// "on another host than the sitemap") and nothing hinted at --base.
#[test]
fn a_saved_sitemap_lists_its_urls_and_base_applies_the_cross_host_rule() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sitemap.xml");
    let urls: String = (0..84)
        .map(|i| format!("<url><loc>https://blog.example.org/posts/{i}/</loc></url>"))
        .collect();
    std::fs::write(
        &path,
        format!("<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">{urls}</urlset>"),
    )
    .unwrap();
    let path = path.display().to_string();
    let count = |extra: &[&str]| {
        let mut args = vec!["inspect", "sitemap", path.as_str(), "--json"];
        args.extend_from_slice(extra);
        let v = json(&freshet(&args));
        (
            v["urls"].as_array().unwrap().len(),
            v["errors"].as_array().unwrap().len() + v["errors_dropped"].as_u64().unwrap() as usize,
        )
    };
    assert_eq!(count(&[]), (84, 0));
    assert_eq!(
        count(&["--base", "https://blog.example.org/sitemap.xml"]),
        (84, 0)
    );
    assert_eq!(
        count(&["--base", "https://other.example.org/sitemap.xml"]),
        (0, 84)
    );
    let help = freshet(&["inspect", "sitemap", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("--base") && help.contains("cross-host"),
        "{help}"
    );
}

#[test]
fn sitemap_file() {
    let v = json(&freshet(&[
        "inspect",
        "sitemap",
        &fixture("sitemap.xml"),
        "--json",
    ]));
    assert_eq!(v["kind"], "urlset");
    // A saved file has no host: it lists everything it holds, the other host's URL too.
    let all = v["urls"].as_array().unwrap();
    assert_eq!(all.len(), 4, "{v}");
    assert_eq!(all[3]["loc"], "http://elsewhere.example/page");
    // --base says where it lives: the cross-host rule applies as `run` applies it.
    let v = json(&freshet(&[
        "inspect",
        "sitemap",
        &fixture("sitemap.xml"),
        "--base",
        "http://localhost/sitemap.xml",
        "--json",
    ]));
    let urls = v["urls"].as_array().unwrap();
    assert_eq!(urls.len(), 3);
    assert_eq!(urls[0]["lastmod"], "2024-05-01T10:00:00+00:00");
    assert_eq!(urls[0]["changefreq"], "daily");
    assert_eq!(urls[0]["priority"], 1.0);
    assert_eq!(urls[1]["loc"], "http://localhost/about?lang=en&v=2");
    assert_eq!(urls[2]["lastmod"], Value::Null);
    let errors: Vec<&str> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert!(
        errors.iter().any(|e| e.contains("not a date")),
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.contains("elsewhere.example")),
        "{errors:?}"
    );

    let index = json(&freshet(&[
        "inspect",
        "sitemap",
        &fixture("sitemap-index.xml"),
        "--json",
    ]));
    assert_eq!(index["kind"], "index");
    assert_eq!(index["sitemaps"].as_array().unwrap().len(), 2);

    // With a base on another host, every URL is foreign unless cross-submitted.
    let other = json(&freshet(&[
        "inspect",
        "sitemap",
        &fixture("sitemap.xml"),
        "--base",
        "http://other.example/sitemap.xml",
        "--cross-submitted",
        "localhost",
        "--json",
    ]));
    assert_eq!(other["urls"].as_array().unwrap().len(), 3);
}

#[test]
fn malformed_inputs_give_errors_not_crashes() {
    let truncated = json(&freshet(&[
        "inspect",
        "sitemap",
        &fixture("truncated.xml"),
        "--json",
    ]));
    assert_eq!(truncated["urls"].as_array().unwrap().len(), 1);
    assert!(truncated["errors"].to_string().contains("malformed XML"));

    let bomb = json(&freshet(&[
        "inspect",
        "sitemap",
        &fixture("bomb.xml.gz"),
        "--json",
    ]));
    assert_eq!(bomb["urls"][0]["loc"], "http://localhost/before-the-bomb");
    assert!(
        bomb["errors"].to_string().contains("larger than"),
        "{}",
        bomb["errors"]
    );

    let junk = freshet(&["inspect", "sitemap", &fixture("junk.bin"), "--json"]);
    assert_eq!(junk.status.code(), Some(1));
    let junk_feed = freshet(&["inspect", "feed", &fixture("junk.bin")]);
    assert_eq!(junk_feed.status.code(), Some(1));
    let said = String::from_utf8_lossy(&junk_feed.stderr);
    assert!(said.contains("not a readable feed"), "{said}");
    // A file read without --base: the error names the file, not a placeholder URL.
    assert!(said.contains("junk.bin: not a readable feed"), "{said}");
    assert!(!said.contains("localhost"), "{said}");

    let missing = freshet(&["inspect", "robots", "/no/such/robots.txt", "--json"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot read /no/such/robots.txt"));
}

#[test]
fn feed_files() {
    let v = json(&freshet(&[
        "inspect",
        "feed",
        &fixture("feed.xml"),
        "--base",
        "http://localhost/rss",
        "--json",
    ]));
    assert_eq!(v["title"], "Example News");
    assert_eq!(v["ttl_minutes"], 60);
    assert_eq!(v["entries"][0]["link"], "http://localhost/news/1");
    assert_eq!(v["entries"][0]["published"], "2017-01-05T12:34:50+00:00");
    assert_eq!(v["entries"][0]["updated"], Value::Null);
    assert_eq!(v["entries"][1]["link"], "http://localhost/news/2");
    let atom = json(&freshet(&[
        "inspect",
        "feed",
        &fixture("atom.xml"),
        "--base",
        "https://blog.example/feed/atom",
        "--json",
    ]));
    assert_eq!(
        atom["entries"][0]["link"],
        "https://blog.example/feed/posts/1"
    );
    assert_eq!(atom["entries"][0]["updated"], "2024-02-01T00:00:00+00:00");
}

/// The loopback server's request log: every path it was asked for, in order.
type Log = std::sync::Arc<std::sync::Mutex<Vec<String>>>;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn urls_are_fetched_as_run_fetches_them() {
    use axum::Router;
    use axum::http::{StatusCode, Uri, header};
    use axum::response::IntoResponse;
    use axum::routing::get;

    let log: Log = Default::default();
    let logged = log.clone();
    let app = Router::new()
        .route(
            "/robots.txt",
            get(|| async {
                "User-agent: *\nDisallow: /no\nDisallow: /private/\nSitemap: http://x/s.xml\n"
            }),
        )
        .route(
            "/down/robots.txt",
            get(|| async { StatusCode::SERVICE_UNAVAILABLE }),
        )
        .route("/gone/robots.txt", get(|| async { StatusCode::NOT_FOUND }))
        .route(
            "/feed",
            get(|| async { std::fs::read(fixture("feed.xml")).unwrap() }),
        )
        .route(
            "/private/feed",
            get(|| async { std::fs::read(fixture("feed.xml")).unwrap() }),
        )
        .route(
            "/moved/feed",
            get(|| async {
                (StatusCode::FOUND, [(header::LOCATION, "/private/feed")]).into_response()
            }),
        )
        .layer(axum::middleware::from_fn(
            move |uri: Uri, request: axum::extract::Request, next: axum::middleware::Next| {
                logged.lock().unwrap().push(uri.path().to_string());
                next.run(request)
            },
        ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let run = move |args: Vec<String>| {
        tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            freshet(&args)
        })
    };
    let loopback = ["--allow-network".to_string(), "127.0.0.0/8".to_string()];
    let robots = |path: &str, url: &str, allow: bool| {
        let mut args: Vec<String> = vec![
            "inspect".into(),
            "robots".into(),
            format!("http://{addr}{path}"),
            "--url".into(),
            url.to_string(),
            "--json".into(),
        ];
        if allow {
            args.extend(loopback.clone());
        }
        args
    };
    let feed = |path: &str, allow: bool| {
        let mut args: Vec<String> = vec![
            "inspect".into(),
            "feed".into(),
            format!("http://{addr}{path}"),
            "--json".into(),
        ];
        if allow {
            args.extend(loopback.clone());
        }
        args
    };

    // Without --allow-network a loopback address is refused, robots.txt and feed alike, by
    // address or by a name resolving to it, and nothing reaches the server.
    let by_name = vec![
        "inspect".into(),
        "feed".into(),
        format!("http://localhost:{}/feed", addr.port()),
        "--json".into(),
    ];
    for args in [
        feed("/feed", false),
        robots("/robots.txt", "/", false),
        by_name,
    ] {
        let out = run(args).await.unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("not requested") && stderr.contains("127.0.0.1"),
            "{stderr}"
        );
    }
    assert_eq!(*log.lock().unwrap(), Vec::<String>::new());

    let ok = json(&run(robots("/robots.txt", "/no/1", true)).await.unwrap());
    assert_eq!(ok["allowed"], false);
    assert_eq!(ok["sitemaps"][0], "http://x/s.xml");
    let down = json(&run(robots("/down/robots.txt", "/yes", true)).await.unwrap());
    assert_eq!(down["allowed"], false, "5xx disallows all");
    let gone = json(
        &run(robots("/gone/robots.txt", "/no/1", true))
            .await
            .unwrap(),
    );
    assert_eq!(gone["allowed"], true, "4xx allows all");

    // What the server hears during one command.
    let heard = |before: usize| log.lock().unwrap()[before..].to_vec();
    let before = log.lock().unwrap().len();
    let v = json(&run(feed("/feed", true)).await.unwrap());
    assert_eq!(v["entries"][0]["link"], format!("http://{addr}/news/1"));
    assert_eq!(heard(before), ["/robots.txt", "/feed"], "robots.txt first");
    // A feed robots.txt disallows is not requested, nor the target of a redirect into it.
    for (path, expected) in [
        ("/private/feed", vec!["/robots.txt"]),
        (
            "/moved/feed",
            vec!["/robots.txt", "/moved/feed", "/robots.txt"],
        ),
    ] {
        let before = log.lock().unwrap().len();
        let out = run(feed(path, true)).await.unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{path}: {stderr}");
        assert!(
            stderr.contains("disallowed by robots.txt"),
            "{path}: {stderr}"
        );
        assert_eq!(heard(before), expected, "{path}");
    }
}
