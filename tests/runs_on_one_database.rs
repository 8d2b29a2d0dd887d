//! The budget across restarts, counted by the server: a site's budget is what every run
//! together may spend, not what each may spend from a full bucket. Three `freshet run --once`
//! passes in a row spend one pass's budget between them (each pass may hold a day's budget at
//! once), and a daemon killed with SIGKILL and started again and again spends what its budget
//! refills, not a full bucket at every start.

#[path = "support/freshet_bin.rs"]
mod freshet_bin;
#[path = "support/recording_server.rs"]
mod recording_server;

use std::time::Duration;

use freshet_bin::{Freshet, run_once, write_schedule};
use recording_server::{RecordingServer, Reply};

const HOST: &str = "127.0.0.1";

/// A site of 200 pages on `server` with `requests_per_day`, robots.txt answering 404.
fn serve_site(server: &RecordingServer, requests_per_day: u32) -> String {
    let base = format!("http://{HOST}:{}", server.addr.port());
    server.route(HOST, "/robots.txt", Reply::status(404));
    let list: String = (0..200).map(|i| format!("{base}/p{i}\n")).collect();
    server.route(HOST, "/sitemap.txt", Reply::text(list));
    for i in 0..200 {
        server.route(
            HOST,
            &format!("/p{i}"),
            Reply::html(format!("<p>page {i}</p>")),
        );
    }
    format!(
        "[[site]]\nname = \"budget\"\nsitemaps = [\"{base}/sitemap.txt\"]\n\
         host_rate = \"50/s\"\nrequests_per_day = {requests_per_day}\n\
         allow_networks = [\"127.0.0.0/8\"]\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_pass_after_another_spends_one_budget() {
    let server = RecordingServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let schedule = write_schedule(dir.path(), &serve_site(&server, 40));
    let db = dir.path().join("f.db");
    let mut after_each = Vec::new();
    for _ in 0..3 {
        run_once(&schedule, &db).await;
        after_each.push(server.requests().len());
    }
    // The first pass spends its day's budget of 40 (robots.txt and the sitemap included), and
    // a little more: a sitemap's read is charged once it is made. The passes after it, seconds
    // later, have only seconds of refill (40 a day): at most a request each.
    let first = after_each[0];
    assert!(
        (35..=43).contains(&first),
        "the first pass made {first} requests"
    );
    let total = after_each[2];
    assert!(
        total <= first + 2,
        "three passes made {after_each:?} requests in all (the budget is 40 a day)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_killed_and_started_again_spends_what_its_budget_refills() {
    let server = RecordingServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    // 96 a day: its bucket holds a quarter hour's, one request.
    let schedule = write_schedule(dir.path(), &serve_site(&server, 96));
    let db = dir.path().join("f.db");
    let mut lives = Vec::new();
    for _ in 0..5 {
        let run = Freshet::run(&schedule, &db, &[]);
        // Long enough to start, read the site and send what its bucket allows.
        let seen = server.requests().len();
        for _ in 0..40 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if server.requests().len() > seen + 2 {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        run.kill_now();
        let _ = run.finish(Duration::from_secs(10)).await;
        lives.push(server.requests().len());
    }
    // The first life reads robots.txt and the sitemap and sends its one request's worth; each
    // later life starts from the credit the last left (refilled by seconds at 96 a day). A
    // full bucket at every start sent a page each time.
    let total = server.requests().len();
    assert!(
        total <= 4,
        "five lives made {lives:?} requests in all (the bucket holds one request)"
    );
}
