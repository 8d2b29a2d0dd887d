//! `freshet inspect page` run as a binary: a local file (text and `--json`), and URLs fetched
//! through freshet's fetcher from a loopback server whose request log shows robots.txt asked
//! first, a Disallowed page never requested, and nothing requested when the address policy
//! refuses loopback.

use std::process::Output;
use std::sync::{Arc, Mutex};

use freshet::dedup::fingerprint::{DEFAULT_SHINGLE_WORDS, content_fingerprint, simhash};

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/dedup/{name}", env!("CARGO_MANIFEST_DIR"))
}

async fn freshet(args: Vec<String>) -> Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_freshet"))
        .args(&args)
        .output()
        .await
        .expect("run the freshet binary")
}

fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn a_file_gives_title_main_text_canonical_links_and_fingerprints() {
    let file = fixture("news-article-b.html");
    let out = freshet(strings(&[
        "inspect",
        "page",
        &file,
        "--base",
        "https://gazette.example/news/flood.html",
        "--json",
    ]))
    .await;
    let v = json(&out);
    let text = v["main_text"].as_str().unwrap();
    assert!(text.contains("Residents along the lower reaches"), "{text}");
    for junk in ["insurance", "Most read", "We use cookies"] {
        assert!(!text.contains(junk), "{junk} in {text}");
    }
    assert!(v["title"].as_str().unwrap().starts_with("Families told"));
    assert_eq!(
        v["canonical"],
        "https://gazette.example/news/wenning-flood.html"
    );
    let links: Vec<&str> = v["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(links.contains(&"https://gazette.example/news/council-budget.html"));
    // The fingerprints are the engine's, as 16 hex digits.
    assert_eq!(
        v["fingerprint"],
        format!("{:016x}", content_fingerprint(text))
    );
    assert_eq!(
        v["simhash"],
        format!("{:016x}", simhash(text, DEFAULT_SHINGLE_WORDS))
    );

    let out = freshet(strings(&["inspect", "page", &file])).await;
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&format!(
        "fingerprint: {}",
        v["fingerprint"].as_str().unwrap()
    )));
    assert!(
        stdout.contains("main text (") && stdout.contains("links ("),
        "{stdout}"
    );

    let missing = freshet(strings(&["inspect", "page", "/nonexistent/page.html"])).await;
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/page.html"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_goes_through_the_fetcher_robots_and_address_policy() {
    use axum::Router;
    use axum::extract::Request;
    use axum::routing::get;

    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let article = std::fs::read_to_string(fixture("news-article-a.html")).unwrap();
    let recorder = log.clone();
    let app = Router::new()
        .route(
            "/robots.txt",
            get(|| async { "User-agent: *\nDisallow: /private/\n" }),
        )
        .route(
            "/news/flood.html",
            get(move || async move { axum::response::Html(article) }),
        )
        .route("/private/draft.html", get(|| async { "secret" }))
        .layer(axum::middleware::from_fn(
            move |req: Request, next: axum::middleware::Next| {
                recorder.lock().unwrap().push(req.uri().path().to_string());
                async move { next.run(req).await }
            },
        ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let requests = || log.lock().unwrap().clone();

    // The address policy refuses loopback by default: nothing is requested.
    let url = format!("http://{addr}/news/flood.html");
    let refused = freshet(strings(&["inspect", "page", &url, "--json"])).await;
    assert_eq!(refused.status.code(), Some(1));
    assert!(requests().is_empty(), "{:?}", requests());

    let allowed = json(
        &freshet(strings(&[
            "inspect",
            "page",
            &url,
            "--json",
            "--allow-network",
            "127.0.0.0/8",
        ]))
        .await,
    );
    assert!(
        allowed["main_text"]
            .as_str()
            .unwrap()
            .contains("Residents along the lower reaches"),
        "{allowed}"
    );
    assert_eq!(allowed["url"], url);
    assert_eq!(requests(), vec!["/robots.txt", "/news/flood.html"]);

    let private = format!("http://{addr}/private/draft.html");
    let disallowed = freshet(strings(&[
        "inspect",
        "page",
        &private,
        "--allow-network",
        "127.0.0.0/8",
    ]))
    .await;
    assert_eq!(disallowed.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&disallowed.stderr).contains("robots.txt"),
        "{}",
        String::from_utf8_lossy(&disallowed.stderr)
    );
    assert!(
        !requests().iter().any(|p| p.starts_with("/private/")),
        "{:?}",
        requests()
    );
}
