//! A site of plain-text sitemaps for the tests of schedule edits (`schedule_edits.rs`,
//! `pages_named_sitemaps.rs`): the site's schedule entry and what its loopback server serves.

#![allow(dead_code)]

use super::recording_server::{RecordingServer, Reply};

pub const HOST: &str = "127.0.0.1";

/// A site named `name` reading `sitemaps`, rediscovered daily, with a budget no test spends and
/// `extra` schedule lines.
pub fn site(name: &str, sitemaps: &[String], extra: &str) -> String {
    let sitemaps: Vec<String> = sitemaps.iter().map(|s| format!("\"{s}\"")).collect();
    format!(
        "[[site]]\nname = \"{name}\"\nsitemaps = [{}]\nrediscover = \"0 0 3 * * *\"\n\
         requests_per_day = 100000\n\
         host_rate = \"50/s\"\nallow_networks = [\"127.0.0.0/8\"]\n{extra}",
        sitemaps.join(", ")
    )
}

/// Serves robots.txt (disallowing `/private/`), `/a`, `/b`, `/c` and three sitemaps:
/// `/one.txt` lists `/a` and `/b` (with an ETag, answering 304 to it), `/two.txt` lists `/c`,
/// `/private/three.txt` lists `/a`.
pub fn serve(server: &RecordingServer, base: &str) {
    let robots = Reply::text("User-agent: *\nDisallow: /private/\n");
    server.route(HOST, "/robots.txt", robots);
    let one = format!("{base}/a\n{base}/b\n");
    server.handle(HOST, "/one.txt", move |request| {
        let reply = if request.header("if-none-match") == Some("\"one\"") {
            Reply::status(304)
        } else {
            Reply::text(one.clone())
        };
        reply.header("etag", "\"one\"").to_response()
    });
    server.route(HOST, "/two.txt", Reply::text(format!("{base}/c\n")));
    let three = Reply::text(format!("{base}/a\n"));
    server.route(HOST, "/private/three.txt", three);
    for page in ["a", "b", "c"] {
        let reply = Reply::html(format!("<p>{page}</p>"));
        server.route(HOST, &format!("/{page}"), reply);
    }
}

/// How many requests the server saw for `path`.
pub fn requests_for(server: &RecordingServer, path: &str) -> usize {
    server.requests().iter().filter(|r| r.path == path).count()
}
