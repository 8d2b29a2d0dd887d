//! A whole demo session with a stand-in refresher: a round-robin walker that discovers pages
//! from each host's gzip sitemap and fetches them one after another on the virtual clock. This
//! checks the session's plumbing (world, server, schedule, clock, shutdown, judgement) without the
//! real refresher. A second stand-in that trusts sitemap lastmod checks that the world's signals
//! carry information a refresher can use.

use std::io::Read;
use std::time::Duration;

use freshet::clock;
use freshet::demo::calibration::UrlBelief;
use freshet::demo::session::{SessionOptions, Shutdown, run_session};
use freshet::refresher::{RunOptions, RunSummary};

/// A client that reaches the virtual hosts on loopback and follows no redirects.
fn client(options: &RunOptions) -> reqwest::Client {
    let mut builder = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none());
    for (host, addr) in &options.resolve {
        builder = builder.resolve(host, *addr);
    }
    builder.build().expect("a client")
}

/// `http://host:port` of every virtual host, or of every one but the mirror.
fn bases(options: &RunOptions, with_mirror: bool) -> Vec<String> {
    options
        .resolve
        .iter()
        .filter(|(host, _)| with_mirror || !host.starts_with("mirror."))
        .map(|(host, addr)| format!("http://{host}:{}", addr.port()))
        .collect()
}

/// Discovers each host's pages from its gzip sitemap: (URL, lastmod) pairs, private page left out.
async fn sitemap(client: &reqwest::Client, base: &str) -> anyhow::Result<Vec<(String, i64)>> {
    let gz = client
        .get(format!("{base}/sitemap-pages.xml.gz"))
        .send()
        .await?;
    let gz = gz.bytes().await?;
    let mut xml = String::new();
    flate2::read::GzDecoder::new(&gz[..]).read_to_string(&mut xml)?;
    let mut pages = Vec::new();
    for part in xml.split("<loc>").skip(1) {
        let loc = part.split("</loc>").next().unwrap_or_default();
        let lastmod = part
            .split("<lastmod>")
            .nth(1)
            .and_then(|l| l.split("</lastmod>").next());
        let lastmod = lastmod.and_then(|l| chrono::DateTime::parse_from_rfc3339(l).ok());
        if !loc.contains("/private/") {
            pages.push((loc.to_string(), lastmod.map_or(0, |d| d.timestamp_millis())));
        }
    }
    Ok(pages)
}

/// Runs `walk` until it fails or `shutdown` fires.
async fn until(
    shutdown: Shutdown,
    walk: impl std::future::Future<Output = anyhow::Result<()>>,
) -> anyhow::Result<()> {
    tokio::select! {
        result = walk => result,
        _ = shutdown => Ok(()),
    }
}

/// Fetches every sitemap page round robin, 130 clock seconds apart, until `shutdown`.
async fn walker(options: RunOptions, shutdown: Shutdown) -> anyhow::Result<RunSummary> {
    let client = client(&options);
    let mut summary = RunSummary::default();
    let walk = async {
        let mut urls = Vec::new();
        for base in bases(&options, true) {
            urls.extend(sitemap(&client, &base).await?.into_iter().map(|(u, _)| u));
            summary.requests += 1;
        }
        for url in urls.iter().cycle() {
            clock::sleep(options.clock.as_ref(), Duration::from_secs(130)).await;
            let status = client.get(url).send().await?.status();
            summary.requests += 1;
            summary.checks += 1;
            anyhow::ensure!(status.is_success(), "{url}: {status}");
        }
        Ok(())
    };
    until(shutdown, walk).await?;
    Ok(summary)
}

#[tokio::test]
async fn a_session_serves_judges_and_stops() {
    let dir = tempfile::tempdir().unwrap();
    let options = SessionOptions {
        duration: Duration::from_millis(1500),
        speed: 86_400.0,
        db_path: Some(dir.path().join("demo.db")),
        ..SessionOptions::default()
    };
    let result = run_session(&options, walker).await.unwrap();

    let schedule = std::fs::read_to_string(&result.schedule_path).unwrap();
    assert!(result.schedule_path.starts_with(dir.path()));
    // One site over every host: the planner shares one budget across them.
    assert_eq!(schedule.matches("[[site]]").count(), 1);
    for host in &result.world.hosts {
        assert!(
            schedule.contains(&format!("{}:", host.name)),
            "{} missing",
            host.name
        );
    }

    let outcome = &result.outcome;
    // Judged after the warm-up: 80% of the 1.5 virtual days, with the requests made in it.
    assert!(outcome.days >= 1.19, "{} days", outcome.days);
    assert!(outcome.freshet.requests > 0 && outcome.freshet.requests < result.summary.requests);
    assert_eq!(outcome.uniform.requests, outcome.freshet.requests);
    // How many checks fit in the session's 1.5 real seconds depends on the machine's load, so
    // only that there were some is asserted (it was "> 100": a wall-clock assertion).
    assert!(result.summary.checks > 0, "{:?}", result.summary);
    // One per host but the mirror (news, blog, docs, shop, live).
    assert_eq!(outcome.sites.len(), 5);
    let syncs: u64 = outcome.sites.iter().map(|s| s.page_syncs).sum();
    // The server counts a request when it serves it; the walker counts it when the answer
    // arrives. Shutdown can fall between the two for the one request in flight.
    assert!(
        syncs == result.summary.checks || syncs == result.summary.checks + 1,
        "server saw {syncs} page syncs, the walker counted {}",
        result.summary.checks
    );
    for site in &outcome.sites {
        assert!(site.true_mean_age_days.is_finite() && site.true_mean_age_days >= 0.0);
        assert!(site.uniform_mean_age_days.is_finite() && site.uniform_mean_age_days >= 0.0);
    }
    assert!(outcome.freshet.true_mean_age_days > 0.0);
    assert_eq!(outcome.politeness.disallowed_requests, 0);
    assert!(outcome.politeness.hosts.iter().all(|h| h.violations == 0));

    // The report as `demo --json` prints it: the schedule's budget and the oracle always; the
    // calibration once freshet's beliefs are given (the stand-in keeps no database: made up
    // here, one per page URL it fetched, as of its last fetch).
    let json = serde_json::to_value(outcome).unwrap();
    let finite = |v: &serde_json::Value| v.as_f64().is_some_and(f64::is_finite);
    assert!(
        finite(&json["budget_requests"]),
        "{}",
        json["budget_requests"]
    );
    assert!(
        finite(&json["oracle"]["true_mean_age_days"]),
        "{}",
        json["oracle"]
    );
    assert!(json["oracle"]["requests"].as_u64().is_some());
    // The walker visits every page round robin: the noise-only pages get their share.
    let noise = &json["noise_pages"];
    assert!(noise["requests"].as_u64().is_some_and(|n| n > 0), "{noise}");
    assert!(finite(&noise["share_of_requests"]), "{noise}");
    assert!(json["calibration"].is_null());
    let mut last_fetch = std::collections::BTreeMap::new();
    for r in result.log.iter().filter(|r| r.method == "GET") {
        last_fetch.insert(format!("http://{}:80{}", r.host, r.path), r.at_ms);
    }
    let beliefs: Vec<UrlBelief> = last_fetch
        .into_iter()
        .map(|(url, at)| UrlBelief {
            url,
            copy_ms: at,
            known_change_ms: None,
            rate_low: 0.1,
            rate_high: 3.0,
            rate_shape: 1.0,
            rate_scale: 1.0,
            watched: None,
        })
        .collect();
    let mut outcome = outcome.clone();
    outcome.calibrate(&result.world, &result.log, &beliefs);
    let json = serde_json::to_value(&outcome).unwrap();
    let calibration = &json["calibration"];
    assert!(
        calibration["pages"].as_u64().is_some_and(|n| n > 0),
        "{calibration}"
    );
    for key in [
        "true_stale_share",
        "mean_p_stale",
        "interval_coverage_90",
        "exact_counts_coverage_90",
    ] {
        let share = calibration[key].as_f64().unwrap_or(f64::NAN);
        assert!((0.0..=1.0).contains(&share), "{key}: {calibration}");
    }
}

#[tokio::test]
async fn a_failing_refresher_fails_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let options = SessionOptions {
        duration: Duration::from_millis(50),
        db_path: Some(dir.path().join("x.db")),
        ..SessionOptions::default()
    };
    let err = run_session(&options, |_, _| async { anyhow::bail!("no refresher") })
        .await
        .unwrap_err();
    assert!(format!("{err:#}").contains("no refresher"));
}

/// Two demos on two databases in one folder: each keeps a schedule of its own, naming its own
/// server. (Both once wrote `freshet-demo-schedules/demo.toml` there, and a refresher started
/// first went on against the web of the demo started second.)
#[tokio::test]
async fn two_demos_in_one_folder_keep_their_own_schedules() {
    let dir = tempfile::tempdir().unwrap();
    let session = |db: &str| SessionOptions {
        duration: Duration::from_millis(300),
        db_path: Some(dir.path().join(db)),
        ..SessionOptions::default()
    };
    let idle = |_: RunOptions, shutdown: Shutdown| async move {
        shutdown.await;
        Ok::<_, anyhow::Error>(RunSummary::default())
    };
    let first = run_session(&session("first.db"), idle).await.unwrap();
    let first_schedule = std::fs::read_to_string(&first.schedule_path).unwrap();
    let second = run_session(&session("second.db"), idle).await.unwrap();
    assert_ne!(first.schedule_path, second.schedule_path);
    assert!(
        first
            .schedule_path
            .starts_with(dir.path().join("first-schedules"))
    );
    assert!(
        second
            .schedule_path
            .starts_with(dir.path().join("second-schedules"))
    );
    // The demos' servers listen on ports of their own; each schedule still names its own.
    assert_eq!(
        std::fs::read_to_string(&first.schedule_path).unwrap(),
        first_schedule
    );
    assert_ne!(
        first_schedule,
        std::fs::read_to_string(&second.schedule_path).unwrap()
    );
    assert_eq!(
        freshet::demo::session::schedules_beside(std::path::Path::new("freshet-demo.db")),
        std::path::Path::new("./freshet-demo-schedules")
    );
}

/// `demo` refuses a duration or speed it cannot run, with the option named, before it touches
/// the database (a duration of 1e20 s panicked, leaving its lock file behind; a speed of 1e300
/// judged nothing).
#[test]
fn a_demo_refuses_durations_and_speeds_it_cannot_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("refused.db");
    for (args, named) in [
        (&["--duration", "1e20"][..], "--duration"),
        (&["--duration", "NaN"], "--duration"),
        (&["--speed", "1e300"], "--speed"),
        (&["--speed", "0"], "--speed"),
        (&["--duration", "86400"], "virtual days"),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_freshet"))
            .arg("demo")
            .args(args)
            .arg("--db")
            .arg(&db)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(named), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A client that trusts sitemap lastmod: every three virtual hours it re-reads each sitemap and
/// fetches the pages whose lastmod is newer than its copy; in between it walks the pages round
/// robin at the same pace as [`walker`]. It skips the mirror (its content is docs').
async fn lastmod_follower(options: RunOptions, shutdown: Shutdown) -> anyhow::Result<RunSummary> {
    use std::collections::HashMap;
    let client = client(&options);
    let clock = options.clock.clone();
    let bases = bases(&options, false);
    let mut summary = RunSummary::default();
    let walk = async {
        let mut copies: HashMap<String, i64> = HashMap::new();
        let mut urls = Vec::new();
        for base in &bases {
            urls.extend(sitemap(&client, base).await?.into_iter().map(|(u, _)| u));
            summary.requests += 1;
        }
        let mut round = urls.iter().cycle();
        let mut next_read = clock.now_ms();
        loop {
            let mut due = Vec::new();
            if clock.now_ms() >= next_read {
                next_read = clock.now_ms() + 3 * 3_600_000;
                for base in &bases {
                    clock::sleep(clock.as_ref(), Duration::from_secs(130)).await;
                    for (url, lastmod) in sitemap(&client, base).await? {
                        if copies.get(&url).is_some_and(|&copy| copy < lastmod) {
                            due.push(url);
                        }
                    }
                    summary.requests += 1;
                }
            }
            if due.is_empty() {
                due.extend(round.next().cloned());
            }
            for url in due {
                clock::sleep(clock.as_ref(), Duration::from_secs(130)).await;
                let at = clock.now_ms();
                client.get(&url).send().await?;
                summary.requests += 1;
                copies.insert(url, at);
            }
        }
    };
    until(shutdown, walk).await?;
    Ok(summary)
}

#[tokio::test]
async fn honest_lastmod_is_worth_following() {
    let dir = tempfile::tempdir().unwrap();
    let options = SessionOptions {
        duration: Duration::from_millis(3000),
        speed: 86_400.0,
        db_path: Some(dir.path().join("demo.db")),
        ..SessionOptions::default()
    };
    let result = run_session(&options, lastmod_follower).await.unwrap();
    println!("{}", result.outcome.to_table());
    // The honest hosts' lastmod tells a client exactly what changed: following it beats
    // spreading the same requests evenly. (The liar's stale lastmod does not; how badly its pages
    // fare depends on how many round-robin slots this machine leaves, so it is not asserted.)
    for name in ["news.freshet.test", "blog.freshet.test"] {
        let site = result
            .outcome
            .sites
            .iter()
            .find(|s| s.site == name)
            .unwrap();
        assert!(
            site.true_mean_age_days < site.uniform_mean_age_days,
            "{name}: {site:?}"
        );
    }
}
