//! A sitemap that answers 304 Not Modified still says what it said: a page it lists with a
//! `lastmod` older than the copy did not change up to that read, as far as the sitemap shows
//! changes. The second pass's read must extend the span the sitemap kept quiet about the copy
//! (`url_status.watched_until_ms`); it once said nothing, so a host whose sitemap rarely changes
//! (its pages rarely do) had its copies judged as if nothing watched them.

#[path = "support/freshet_bin.rs"]
mod freshet_bin;
#[path = "support/recording_server.rs"]
mod recording_server;

use std::path::{Path, PathBuf};

use freshet_bin::{now_ms, run_once, write_schedule};

use recording_server::{RecordingServer, Reply};

const HOST: &str = "127.0.0.1";

/// A loopback server that allows everything, and its base URL.
async fn start_server() -> (RecordingServer, String) {
    let server = RecordingServer::start().await;
    let base = format!("http://{HOST}:{}", server.addr.port());
    server.route(
        HOST,
        "/robots.txt",
        Reply::text("User-agent: *\nAllow: /\n"),
    );
    (server, base)
}

/// A page that never changes, answered 304 to its ETag; an hour's max-age, so however late a
/// later pass starts, the page is not due in it.
fn serve_unchanging_page(server: &RecordingServer, path: &str) {
    server.handle(HOST, path, |request| {
        if request.header("if-none-match") == Some("\"p1\"") {
            return Reply::status(304).header("etag", "\"p1\"").to_response();
        }
        Reply::html("<html><body><p>A page that does not change.</p></body></html>")
            .header("etag", "\"p1\"")
            .header("cache-control", "max-age=3600")
            .to_response()
    });
}

/// Runs `passes` passes of `freshet run --once` over the server's sitemap in `dir`, each at the
/// next rediscovery (on a two-second boundary); returns the database.
async fn run_passes(dir: &Path, base: &str, passes: usize) -> PathBuf {
    let schedule = write_schedule(
        dir,
        &format!(
            "[[site]]\nname = \"local\"\nsitemaps = [\"{base}/sitemap.xml\"]\n\
             rediscover = \"*/2 * * * * *\"\nrequests_per_day = 100\n\
             host_rate = \"20/s\"\nallow_networks = [\"127.0.0.0/8\"]\n"
        ),
    );
    let db = dir.join("f.db");
    for pass in 0..passes {
        if pass > 0 {
            let next = now_ms() - now_ms() % 2_000 + 2_000;
            while now_ms() <= next {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
        run_once(&schedule, &db).await;
    }
    db
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unchanged_sitemap_keeps_watching_the_copies_it_lists() {
    let (server, base) = start_server().await;
    let urlset = format!(
        r#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>{base}/a</loc><lastmod>2020-01-01T00:00:00Z</lastmod></url></urlset>"#
    );
    server.handle(HOST, "/sitemap.xml", move |request| {
        if request.header("if-none-match") == Some("\"s1\"") {
            return Reply::status(304).header("etag", "\"s1\"").to_response();
        }
        Reply::text(urlset.clone())
            .header("content-type", "application/xml")
            .header("etag", "\"s1\"")
            .to_response()
    });
    serve_unchanging_page(&server, "/a");
    let dir = tempfile::tempdir().unwrap();
    let db = run_passes(dir.path(), &base, 2).await;

    let requests = server.requests();
    let sitemap_reads: Vec<_> = requests
        .iter()
        .filter(|r| r.path == "/sitemap.xml")
        .collect();
    assert_eq!(sitemap_reads.len(), 2, "one read a pass");
    assert_eq!(
        sitemap_reads[1].header("if-none-match"),
        Some("\"s1\""),
        "the second read is conditional (answered 304)"
    );
    let page_checks = requests.iter().filter(|r| r.path == "/a").count();
    assert_eq!(
        page_checks, 1,
        "the page is checked in the first pass only (else its copy is newer than the read)"
    );

    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    let (checked, watched_from, watched_until): (i64, Option<i64>, Option<i64>) = sqlx::query_as(
        "SELECT last_checked_ms, watched_from_ms, watched_until_ms FROM url_status
             WHERE url = $1",
    )
    .bind(format!("{base}/a"))
    .fetch_one(&pool)
    .await
    .unwrap();
    pool.close().await;
    let (from, until) = watched_from
        .zip(watched_until)
        .expect("the unchanged sitemap watched the copy after it was taken");
    // The span ends at the second read, after the copy; before the host's lastmods are
    // judged, half of it counts (the rest is unseen, at its front).
    assert!(checked < from && from < until, "{checked} {from} {until}");
    assert!(
        until >= sitemap_reads[1].clock_ms - 1_000,
        "the span runs to the 304 read: {until} vs {}",
        sitemap_reads[1].clock_ms
    );
}

/// A page the sitemap dropped is no longer its own: after a read that lists only `/a`, the
/// sitemap's 304 watches `/a` and says nothing of `/b` (whose listing is older than the read
/// that dropped it). Its 304s once listed again every page it had ever named first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unchanged_sitemap_does_not_watch_a_page_it_dropped() {
    let (server, base) = start_server().await;
    let urlset = |paths: &[&str]| {
        let urls: String = paths
            .iter()
            .map(|p| {
                format!("<url><loc>{base}{p}</loc><lastmod>2020-01-01T00:00:00Z</lastmod></url>")
            })
            .collect();
        format!(
            r#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>"#
        )
    };
    let (both, only_a) = (urlset(&["/a", "/b"]), urlset(&["/a"]));
    // The first read lists /a and /b (etag s1), the second only /a (etag s2), then 304s.
    server.handle(HOST, "/sitemap.xml", move |request| {
        let (body, etag) = match request.header("if-none-match") {
            Some("\"s2\"") => return Reply::status(304).header("etag", "\"s2\"").to_response(),
            Some("\"s1\"") => (only_a.clone(), "\"s2\""),
            _ => (both.clone(), "\"s1\""),
        };
        Reply::text(body)
            .header("content-type", "application/xml")
            .header("etag", etag)
            .to_response()
    });
    for path in ["/a", "/b"] {
        serve_unchanging_page(&server, path);
    }
    let dir = tempfile::tempdir().unwrap();
    let db = run_passes(dir.path(), &base, 3).await;

    let requests = server.requests();
    let sitemap_reads: Vec<_> = requests
        .iter()
        .filter(|r| r.path == "/sitemap.xml")
        .collect();
    assert_eq!(sitemap_reads.len(), 3, "one read a pass");
    assert_eq!(sitemap_reads[2].header("if-none-match"), Some("\"s2\""));
    for path in ["/a", "/b"] {
        let checks = requests.iter().filter(|r| r.path == path).count();
        assert_eq!(checks, 1, "{path} is checked in the first pass only");
    }

    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    let mut watched_until = Vec::new();
    for path in ["/a", "/b"] {
        let until: Option<i64> =
            sqlx::query_scalar("SELECT watched_until_ms FROM url_status WHERE url = $1")
                .bind(format!("{base}{path}"))
                .fetch_one(&pool)
                .await
                .unwrap();
        watched_until.push(until);
    }
    pool.close().await;
    let last_read = sitemap_reads[2].clock_ms;
    assert!(
        watched_until[0].is_some_and(|until| until >= last_read - 1_000),
        "the 304 watches /a up to its read: {:?} vs {last_read}",
        watched_until[0]
    );
    assert!(
        watched_until[1].is_none_or(|until| until < sitemap_reads[1].clock_ms),
        "nothing watches /b since the read that dropped it: {:?}",
        watched_until[1]
    );
}
