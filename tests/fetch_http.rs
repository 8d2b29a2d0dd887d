//! The fetcher against a real server on 127.0.0.1:0: conditional requests, HEAD, redirects,
//! failures and charsets, asserted from both the outcome and the server's log.

#[path = "support/fetch_setup.rs"]
mod fetch_setup;
#[path = "support/recording_server.rs"]
mod recording_server;

use std::time::Duration;

use fetch_setup::{get, setup};
use freshet::fetch::{FetchConfig, FetchError, FetchRequest, Fetcher, Method, Validators};
use freshet::politeness::origin_of;
use recording_server::Reply;
use url::Url;

#[tokio::test]
async fn a_plain_get_reads_headers_body_and_fingerprint() {
    let (server, fetcher, pool, clock) = setup(FetchConfig::default()).await;
    server.route(
        "a.test",
        "/page",
        Reply::html("<p>hello</p>")
            .header("etag", "\"v1\"")
            .header("last-modified", "Sun, 06 Nov 1994 08:49:37 GMT")
            .header("cache-control", "public, max-age=300"),
    );
    let outcome = get(&fetcher, &pool, &clock, server.url("a.test", "/page")).await;
    assert_eq!(outcome.error, None);
    assert_eq!(outcome.status, Some(200));
    assert_eq!(outcome.etag.as_deref(), Some("\"v1\""));
    assert_eq!(outcome.last_modified_ms, Some(784_111_777_000));
    assert_eq!(
        outcome.cache_control_max_age,
        Some(Duration::from_secs(300))
    );
    assert_eq!(outcome.text.as_deref(), Some("<p>hello</p>"));
    assert_eq!(outcome.bytes, 12);
    assert_eq!(
        outcome.fingerprint,
        Some(xxhash_rust::xxh3::xxh3_64(b"<p>hello</p>"))
    );
    assert_eq!(outcome.hops.len(), 1);
    assert!(outcome.is_success() && !outcome.not_modified() && !outcome.redirected());
    let seen = server.requests_to("a.test");
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].method, "GET");
    assert!(
        seen[0]
            .header("user-agent")
            .is_some_and(|ua| ua.starts_with("freshet/"))
    );
    assert_eq!(seen[0].header("if-none-match"), None);
}

#[tokio::test]
async fn conditional_get_sends_validators_and_a_304_is_not_modified() {
    let (server, fetcher, pool, clock) = setup(FetchConfig::default()).await;
    server.handle("a.test", "/page", |request| {
        let fresh = request.header("if-none-match") == Some("\"v1\"");
        if fresh {
            Reply::status(304).to_response()
        } else {
            Reply::html("changed")
                .header("etag", "\"v2\"")
                .to_response()
        }
    });
    let validators = Validators {
        etag: Some("\"v1\"".into()),
        last_modified: Some("Sun, 06 Nov 1994 08:49:37 GMT".into()),
    };
    let request = FetchRequest {
        url: server.url("a.test", "/page"),
        method: Method::Get,
        validators: validators.clone(),
    };
    let outcome = fetcher.fetch(&request, &pool, clock.as_ref()).await;
    assert!(outcome.not_modified(), "{outcome:?}");
    assert!(outcome.is_success());
    assert_eq!(outcome.body, None);
    // The 304 repeated no validators: the ones sent remain valid.
    assert_eq!(outcome.etag, validators.etag);
    assert_eq!(outcome.last_modified, validators.last_modified);
    assert_eq!(outcome.last_modified_ms, Some(784_111_777_000));
    let seen = server.requests_to("a.test");
    assert_eq!(seen[0].header("if-none-match"), Some("\"v1\""));
    assert_eq!(
        seen[0].header("if-modified-since"),
        Some("Sun, 06 Nov 1994 08:49:37 GMT")
    );

    let stale = FetchRequest {
        validators: Validators {
            etag: Some("\"v0\"".into()),
            last_modified: None,
        },
        ..request
    };
    let outcome = fetcher.fetch(&stale, &pool, clock.as_ref()).await;
    assert_eq!(outcome.status, Some(200));
    assert_eq!(outcome.etag.as_deref(), Some("\"v2\""));
    assert_eq!(outcome.text.as_deref(), Some("changed"));
    assert_eq!(
        server.requests_to("a.test")[1].header("if-modified-since"),
        None
    );
}

#[tokio::test]
async fn head_sends_head_and_reads_no_body() {
    let (server, fetcher, pool, clock) = setup(FetchConfig::default()).await;
    server.route(
        "a.test",
        "/page",
        Reply::html("body").header("last-modified", "Sun, 06 Nov 1994 08:49:37 GMT"),
    );
    let request = FetchRequest {
        url: server.url("a.test", "/page"),
        method: Method::Head,
        validators: Validators::default(),
    };
    let outcome = fetcher.fetch(&request, &pool, clock.as_ref()).await;
    assert_eq!(outcome.status, Some(200));
    assert_eq!(outcome.last_modified_ms, Some(784_111_777_000));
    assert_eq!((outcome.body, outcome.fingerprint), (None, None));
    assert_eq!(server.requests_to("a.test")[0].method, "HEAD");
}

#[tokio::test]
async fn a_redirect_chain_is_recorded_hop_by_hop() {
    let (server, fetcher, pool, clock) = setup(FetchConfig::default()).await;
    let final_url = server.url("b.test", "/landing");
    server.route("a.test", "/old/start", Reply::redirect(301, "next?x=1"));
    server.route("a.test", "/old/next", Reply::redirect(307, "/moved"));
    server.route("a.test", "/moved", Reply::redirect(302, final_url.as_str()));
    server.route("b.test", "/landing", Reply::text("arrived"));
    let start = server.url("a.test", "/old/start");
    let outcome = get(&fetcher, &pool, &clock, start.clone()).await;
    assert_eq!(outcome.error, None);
    let hops: Vec<(String, u16)> = outcome
        .hops
        .iter()
        .map(|hop| (hop.url.path().to_string(), hop.status))
        .collect();
    assert_eq!(
        hops,
        vec![
            ("/old/start".into(), 301),
            ("/old/next".into(), 307),
            ("/moved".into(), 302),
            ("/landing".into(), 200)
        ]
    );
    assert_eq!(
        outcome.hops[1].url.query(),
        Some("x=1"),
        "relative Location joined"
    );
    assert_eq!(outcome.requested_url, start);
    assert_eq!(outcome.final_url, final_url);
    assert_eq!(outcome.text.as_deref(), Some("arrived"));
    assert!(outcome.redirected());
    let paths: Vec<String> = server
        .requests()
        .iter()
        .map(|r| format!("{}{}", r.host, r.path))
        .collect();
    assert_eq!(
        paths,
        [
            "a.test/old/start",
            "a.test/old/next",
            "a.test/moved",
            "b.test/landing"
        ]
    );
}

#[tokio::test]
async fn a_redirect_loop_is_an_error_within_five_hops() {
    let (server, fetcher, pool, clock) = setup(FetchConfig::default()).await;
    server.route("a.test", "/ping", Reply::redirect(302, "/pong"));
    server.route("a.test", "/pong", Reply::redirect(302, "/ping"));
    let outcome = get(&fetcher, &pool, &clock, server.url("a.test", "/ping")).await;
    assert!(
        matches!(&outcome.error, Some(FetchError::RedirectLoop { target, .. }) if target.ends_with("/ping")),
        "{:?}",
        outcome.error
    );
    assert!(outcome.hops.len() <= 5);
    assert_eq!(server.requests().len(), 2);
    let message = outcome.error.map(|e| e.to_string()).unwrap_or_default();
    assert!(
        message.contains("/pong") && message.contains("loop"),
        "{message}"
    );
}

#[tokio::test]
async fn too_many_redirects_stop_after_the_limit() {
    let (server, fetcher, pool, clock) = setup(FetchConfig::default()).await;
    for n in 0..10 {
        server.route(
            "a.test",
            &format!("/r{n}"),
            Reply::redirect(308, &format!("/r{}", n + 1)),
        );
    }
    let outcome = get(&fetcher, &pool, &clock, server.url("a.test", "/r0")).await;
    assert_eq!(
        outcome.error.as_ref().map(FetchError::kind),
        Some("too_many_redirects")
    );
    assert!(matches!(
        outcome.error,
        Some(FetchError::TooManyRedirects { hops: 6, .. })
    ));
    assert_eq!(
        server.requests().len(),
        6,
        "5 redirects followed, then stop"
    );
    assert_eq!(outcome.status, Some(308));
}

#[tokio::test]
async fn a_redirect_without_location_is_a_bad_redirect() {
    let (server, fetcher, pool, clock) = setup(FetchConfig::default()).await;
    server.route("a.test", "/nowhere", Reply::status(301));
    let outcome = get(&fetcher, &pool, &clock, server.url("a.test", "/nowhere")).await;
    assert!(matches!(
        outcome.error,
        Some(FetchError::BadRedirect { status: 301, .. })
    ));
}

/// 1 GiB of zeros, gzip-compressed (about 1 MiB), written in 1 MiB pieces.
#[tokio::test]
async fn a_server_error_is_recorded_with_its_status() {
    let (server, fetcher, pool, clock) = setup(FetchConfig::default()).await;
    server.route("a.test", "/broken", Reply::status(500).body("oops"));
    let url = server.url("a.test", "/broken");
    let outcome = get(&fetcher, &pool, &clock, url.clone()).await;
    assert_eq!(outcome.status, Some(500));
    assert_eq!(
        outcome.error,
        Some(FetchError::Http {
            url: url.to_string(),
            status: 500
        })
    );
    assert_eq!(outcome.body, None);
    let message = outcome.error.map(|e| e.to_string()).unwrap_or_default();
    assert!(
        message.contains(url.as_str()) && message.contains("500"),
        "{message}"
    );
    assert_eq!(
        pool.status(&origin_of(&url)).map(|s| s.backoff_level),
        Some(1)
    );
}

#[tokio::test]
async fn a_refused_connection_is_a_connect_error() {
    let (_server, _, pool, clock) = setup(FetchConfig::default()).await;
    // Bind a port, then free it: nothing listens there now.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("address");
    drop(listener);
    let fetcher = Fetcher::new(FetchConfig {
        resolve: vec![("gone.test".into(), addr)],
        allow_networks: recording_server::loopback_networks(),
        ..FetchConfig::default()
    })
    .expect("client builds");
    let url = Url::parse(&format!("http://gone.test:{}/", addr.port())).expect("url");
    let outcome = get(&fetcher, &pool, &clock, url.clone()).await;
    assert!(
        matches!(&outcome.error, Some(FetchError::Connect { url: u, .. }) if u == url.as_str()),
        "{:?}",
        outcome.error
    );
    assert_eq!((outcome.status, outcome.hops.len()), (None, 0));
}

#[tokio::test]
async fn a_non_http_url_is_invalid_and_never_sent() {
    let (server, fetcher, pool, clock) = setup(FetchConfig::default()).await;
    let url = Url::parse("ftp://a.test/file").expect("url");
    let outcome = get(&fetcher, &pool, &clock, url).await;
    assert_eq!(
        outcome.error.as_ref().map(FetchError::kind),
        Some("invalid_url")
    );
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn charsets_from_header_and_meta_decode_correctly() {
    let (server, fetcher, pool, clock) = setup(FetchConfig::default()).await;
    server.route(
        "a.test",
        "/latin1",
        Reply::status(200)
            .header("content-type", "text/plain; charset=ISO-8859-1")
            .body(&b"caf\xe9 cr\xe8me"[..]),
    );
    server.route(
        "a.test",
        "/meta",
        Reply::status(200)
            .header("content-type", "text/html")
            .body(&b"<html><head><meta charset=windows-1252></head><p>\x93quoted\x94 \x80</p>"[..]),
    );
    let latin1 = get(&fetcher, &pool, &clock, server.url("a.test", "/latin1")).await;
    assert_eq!(latin1.text.as_deref(), Some("café crème"));
    assert_eq!(latin1.charset, Some("windows-1252"));
    assert_eq!(
        latin1.body.as_deref(),
        Some(&b"caf\xe9 cr\xe8me"[..]),
        "raw body kept"
    );
    assert_eq!(
        latin1.fingerprint,
        Some(xxhash_rust::xxh3::xxh3_64("café crème".as_bytes()))
    );
    let meta = get(&fetcher, &pool, &clock, server.url("a.test", "/meta")).await;
    let text = meta.text.unwrap_or_default();
    assert!(text.ends_with("<p>\u{201c}quoted\u{201d} €</p>"), "{text}");
}

#[tokio::test]
async fn a_binary_body_is_fingerprinted_raw_and_not_decoded() {
    let (server, fetcher, pool, clock) = setup(FetchConfig::default()).await;
    let png: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0";
    server.route(
        "a.test",
        "/img",
        Reply::status(200)
            .header("content-type", "image/png")
            .body(png),
    );
    let outcome = get(&fetcher, &pool, &clock, server.url("a.test", "/img")).await;
    assert_eq!(outcome.text, None);
    assert_eq!(outcome.fingerprint, Some(xxhash_rust::xxh3::xxh3_64(png)));
}
