//! The dedup engine inside the running refresher, end to end: a site on 127.0.0.1 (recording
//! server, virtual clock) with a mirror host, a 301 chain, a 301 cycle, two 302/307 sources of one
//! target, a near-duplicate article pair and distinct pages sharing a template, run through
//! `freshet::refresher::run`; then the database is read back and the binary is asked
//! `freshet report duplicates --format json` and `freshet explain URL`.

#[path = "support/recording_server.rs"]
mod recording_server;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use freshet::clock::{SharedClock, VirtualClock};
use freshet::dedup::{DedupConfig, DedupEngine};
use freshet::plan::{self, Limits, Objective, PlanPage, Policy};
use freshet::refresher::{self, PolicyChoice, RunOptions};
use freshet::store::Store;
use recording_server::{RecordingServer, Reply};
use serde_json::Value;

const WWW: &str = "www.gazette.test";
const MIRROR: &str = "mirror.gazette.test";
/// 2021-01-01T00:00:00Z.
const ORIGIN_MS: i64 = 1_609_459_200_000;

fn fixture(path: &str) -> Vec<u8> {
    let full = format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

fn serve(server: &RecordingServer) {
    let www = |p: &str| server.url(WWW, p).to_string();
    let mirror = |p: &str| server.url(MIRROR, p).to_string();
    server.route(
        WWW,
        "/robots.txt",
        Reply::text("User-agent: *\nDisallow: /private/\n"),
    );
    server.route(
        MIRROR,
        "/robots.txt",
        Reply::text("User-agent: *\nAllow: /\n"),
    );
    let entry = |loc: String, priority: Option<f64>| match priority {
        Some(p) => format!("<url><loc>{loc}</loc><priority>{p}</priority></url>"),
        None => format!("<url><loc>{loc}</loc></url>"),
    };
    let urlset = |entries: Vec<String>| {
        Reply::status(200)
            .header("content-type", "application/xml")
            .body(format!(
                r#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{}</urlset>"#,
                entries.concat()
            ))
    };
    server.route(
        WWW,
        "/sitemap.xml",
        urlset(vec![
            entry(www("/pages/bakery"), Some(0.8)),
            entry(www("/pages/council"), Some(0.8)),
            entry(www("/old/a"), None),
            entry(www("/loop/x"), None),
            entry(www("/r/latest"), None),
            entry(www("/r/top?from=home"), None),
            entry(www("/articles/flood"), None),
            entry(www("/articles/flood-update"), None),
            // Not /links: it is found through the chain target's link, so it is read after the
            // 301 chain is known (its link to /old/a is rewritten) in any order of checks.
        ]),
    );
    server.route(
        MIRROR,
        "/sitemap.xml",
        urlset(vec![
            entry(mirror("/pages/bakery"), None),
            entry(mirror("/pages/council"), None),
        ]),
    );
    for host in [WWW, MIRROR] {
        server.route(
            host,
            "/pages/bakery",
            Reply::html(fixture("dedup/template-bakery.html")),
        );
        server.route(
            host,
            "/pages/council",
            Reply::html(fixture("dedup/template-council.html")),
        );
    }
    server.route(WWW, "/", Reply::html(fixture("dedup_site/home.html")));
    server.route(WWW, "/links", Reply::html(fixture("dedup_site/links.html")));
    server.route(WWW, "/old/a", Reply::redirect(301, "/old/b"));
    server.route(WWW, "/old/b", Reply::redirect(308, "/pages/chain-target"));
    server.route(
        WWW,
        "/pages/chain-target",
        Reply::html(fixture("dedup_site/chain-target.html")),
    );
    server.route(WWW, "/loop/x", Reply::redirect(301, "/loop/y"));
    server.route(WWW, "/loop/y", Reply::redirect(301, "/loop/x"));
    server.route(WWW, "/r/latest", Reply::redirect(302, "/pages/story"));
    server.route(WWW, "/r/top", Reply::redirect(307, "/pages/story"));
    server.route(
        WWW,
        "/pages/story",
        Reply::html(fixture("dedup_site/story.html")),
    );
    server.route(
        WWW,
        "/articles/flood",
        Reply::html(fixture("dedup/news-article-a.html")),
    );
    server.route(
        WWW,
        "/articles/flood-update",
        Reply::html(fixture("dedup/news-article-b.html")),
    );
}

fn schedule(server: &RecordingServer, dir: &Path) -> PathBuf {
    let text = format!(
        r#"
[[site]]
name = "gazette"
allow_networks = ["127.0.0.0/8"]
sitemaps = ["{www_map}", "{mirror_map}"]
seeds = ["{home}"]
include = ['/pages/', '/old/', '/loop/', '/r/', '/articles/', '/links$', '^http://www\.gazette\.test:\d+/$']
requests_per_day = 5000
host_rate = "10/s"
"#,
        www_map = server.url(WWW, "/sitemap.xml"),
        mirror_map = server.url(MIRROR, "/sitemap.xml"),
        home = server.url(WWW, "/"),
    );
    let path = dir.join("gazette.toml");
    std::fs::write(&path, text).unwrap();
    path
}

async fn run_once(server: &RecordingServer, dir: &Path, db: &Path, clock: SharedClock) {
    let options = RunOptions {
        schedules: vec![schedule(server, dir)],
        db_path: db.to_path_buf(),
        once: true,
        clock,
        resolve: server.resolve(&[WWW, MIRROR]),
        policy: PolicyChoice::Learned,
        worker: Default::default(),
        run_lock: None,
    };
    refresher::run(options, std::future::pending())
        .await
        .expect("one pass");
}

async fn freshet(args: &[&str]) -> std::process::Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_freshet"))
        .args(args)
        .output()
        .await
        .expect("run the freshet binary")
}

/// Budget share of the canonical pages when the planner sees `weight` per row.
fn canonical_share(rows: &[(f64, f64, bool)], use_weights: bool) -> f64 {
    let pages: Vec<PlanPage> = rows
        .iter()
        .map(|&(rate, weight, _)| PlanPage {
            rate_per_day: rate,
            weight: if use_weights { weight } else { 1.0 },
            host: 0,
            max_visits_per_day: f64::INFINITY,
        })
        .collect();
    let limits = Limits {
        budget_per_day: 50.0,
        host_limits_per_day: vec![f64::INFINITY],
    };
    let (rates, _) = plan::solve_full(Policy::AgeOptimal, &pages, &limits, Objective::Age);
    let canonical: f64 = rows
        .iter()
        .zip(&rates)
        .filter(|((_, _, c), _)| *c)
        .map(|(_, f)| f)
        .sum();
    canonical / rates.iter().sum::<f64>()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicates_redirects_and_near_duplicates_through_the_refresher() {
    let clock: SharedClock = Arc::new(VirtualClock::new(ORIGIN_MS, 500.0));
    let server = RecordingServer::start_with_clock(clock.clone()).await;
    serve(&server);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("freshet.db");
    run_once(&server, dir.path(), &db, clock.clone()).await;

    let www = |p: &str| server.url(WWW, p).to_string();
    let mirror = |p: &str| server.url(MIRROR, p).to_string();
    let store = Store::open(&db).await.unwrap();
    let classes = store.duplicate_classes(false).await.unwrap();
    let class_of = |url: &str, kind: &str| {
        classes
            .iter()
            .find(|c| c.kind == kind && c.members.iter().any(|m| m == url))
            .unwrap_or_else(|| panic!("no {kind} class holds {url}: {classes:#?}"))
    };

    // Mirror: one content class per page, the primary (sitemap priority 0.8) canonical.
    for page in ["/pages/bakery", "/pages/council"] {
        let class = class_of(&www(page), "content");
        assert_eq!(class.canonical.as_deref(), Some(www(page).as_str()));
        assert_eq!(class.members.len(), 2, "{class:?}");
        assert!(class.members.contains(&mirror(page)));
        let primary = store.url_row(&www(page)).await.unwrap().unwrap();
        let copy = store.url_row(&mirror(page)).await.unwrap().unwrap();
        assert_eq!(primary.weight, 1.0);
        assert!(
            (copy.weight - 0.1).abs() < 1e-9,
            "mirror weight {}",
            copy.weight
        );
    }
    // Distinct pages sharing the template are not grouped, in any kind of class.
    assert!(!classes.iter().any(|c| {
        c.members.contains(&www("/pages/bakery")) && c.members.contains(&www("/pages/council"))
    }));
    // Near-duplicates: the article with another date line and ad block, one near group.
    let near: Vec<_> = classes.iter().filter(|c| c.kind == "near").collect();
    assert_eq!(near.len(), 1, "{near:#?}");
    let mut members = near[0].members.clone();
    members.sort();
    assert_eq!(
        members,
        vec![www("/articles/flood"), www("/articles/flood-update")]
    );
    // Two temporary-redirect sources sharing one target: one redirect class.
    let redirect = class_of(&www("/r/latest"), "redirect");
    assert!(
        redirect.members.contains(&www("/r/top?from=home")),
        "{redirect:?}"
    );

    // The 301 chain is compressed, its source weighs little, and links to it were rewritten.
    let engine = DedupEngine::from_state(
        DedupConfig::default(),
        store.load_dedup_state().await.unwrap(),
    );
    let target = www("/pages/chain-target");
    let permanent = engine.permanent_redirects();
    assert_eq!(
        permanent.final_target(&www("/old/a")),
        Some(target.as_str())
    );
    assert_eq!(
        permanent.final_target(&www("/old/b")),
        Some(target.as_str())
    );
    let a = store.url_row(&www("/old/a")).await.unwrap().unwrap();
    assert!(
        (a.weight - 0.02).abs() < 1e-9,
        "301 source weight {}",
        a.weight
    );
    let rewritten = store.discovered_from(&target).await.unwrap();
    assert_eq!(
        rewritten.as_deref(),
        Some(www("/links").as_str()),
        "link target"
    );
    // The cycle is an error row, in the dedup tables and in `errors`; the run went on.
    let cycles = store.redirect_cycles().await.unwrap();
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    assert!(cycles[0].contains(&www("/loop/x")) && cycles[0].contains(&www("/loop/y")));
    let errors = store.recent_errors(100).await.unwrap();
    assert!(
        errors
            .iter()
            .any(|(_, scope, _, msg)| scope == "dedup" && msg.contains("cycle")),
        "{errors:?}"
    );
    // Link discovery: the seed's links on the site that pass patterns and robots become pages.
    let letters = store.discovered_from(&www("/pages/letters")).await.unwrap();
    assert_eq!(letters.as_deref(), Some(www("/").as_str()));
    assert!(
        store
            .url_row(&www("/private/drafts"))
            .await
            .unwrap()
            .is_none()
    );
    assert!(store.url_row(&www("/news/")).await.unwrap().is_none());
    // Documents: canonical pages only.
    let docs = store.documents().await.unwrap();
    let has = |u: &str| docs.iter().any(|d| d.url == u);
    assert!(has(&www("/pages/bakery")) && has(&www("/articles/flood")));
    assert!(!has(&mirror("/pages/bakery")) && !has(&mirror("/pages/council")));
    let bakery = docs.iter().find(|d| d.url == www("/pages/bakery")).unwrap();
    assert_eq!(bakery.body, fixture("dedup/template-bakery.html"));

    // The saving: with the dedup weights the planner gives canonical pages a larger share.
    let rows: Vec<(f64, f64, bool)> = store
        .url_status(Some("gazette"))
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.kind == "page" && r.checks > 0)
        .map(|r| (r.rate_per_day.unwrap_or(1.0), r.weight, r.weight >= 1.0))
        .collect();
    assert!(rows.iter().filter(|r| !r.2).count() >= 3, "{rows:?}");
    let (without, with) = (canonical_share(&rows, false), canonical_share(&rows, true));
    println!(
        "canonical budget share: {without:.3} with equal weights, {with:.3} with dedup weights"
    );
    assert!(with > without + 0.05, "{without} -> {with}");
    store.close().await;

    // A second pass loads the saved state (nothing re-learnt) and re-plans with the weights.
    run_once(&server, dir.path(), &db, clock.clone()).await;
    let store = Store::open(&db).await.unwrap();
    let primary = store.url_row(&www("/pages/bakery")).await.unwrap().unwrap();
    let copy = store
        .url_row(&mirror("/pages/bakery"))
        .await
        .unwrap()
        .unwrap();
    let (p, m) = (
        primary.planned_per_day.unwrap(),
        copy.planned_per_day.unwrap(),
    );
    assert!(m < p, "mirror planned {m}/day, primary {p}/day");
    assert_eq!(store.redirect_cycles().await.unwrap().len(), 1);
    assert_eq!(
        store.duplicate_classes(false).await.unwrap().len(),
        classes.len()
    );
    store.close().await;

    // The binary: report duplicates as JSON, and explain one URL.
    let db_arg = db.display().to_string();
    let out = freshet(&["report", "duplicates", "--db", &db_arg, "--format", "json"]).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{}", String::from_utf8_lossy(&out.stdout));
    let json: Vec<Value> = serde_json::from_slice(&out.stdout).expect("JSON array");
    let kinds: Vec<&str> = json.iter().filter_map(|c| c["kind"].as_str()).collect();
    for kind in ["content", "redirect", "near", "redirect-cycle"] {
        assert!(kinds.contains(&kind), "{kind} missing: {kinds:?}");
    }
    let bakery_class = json
        .iter()
        .find(|c| c["kind"] == "content" && c["canonical"] == www("/pages/bakery").as_str())
        .expect("the bakery class");
    assert!(
        bakery_class["members"]
            .as_array()
            .unwrap()
            .contains(&Value::from(mirror("/pages/bakery")))
    );

    let out = freshet(&["explain", &mirror("/pages/bakery"), "--db", &db_arg]).await;
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{text}");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for needle in [
        "gazette",
        "mirror.gazette.test",
        "GET",
        "200",
        "is not canonical",
        "p_stale",
    ] {
        assert!(text.contains(needle), "{needle:?} not in:\n{text}");
    }
    assert!(text.contains(&www("/pages/bakery")), "{text}");
    let out = freshet(&["explain", "http://nowhere.test/x", "--db", &db_arg]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not know"));
}
