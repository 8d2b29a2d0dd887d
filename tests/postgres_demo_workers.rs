//! `freshet demo --workers 3` on one PostgreSQL database: three refreshers in one process share
//! the demo's loopback web by host leases and its one budget by their parts of it
//! (`budget_parts`), judged from the other side, the demo server's request log: all their
//! requests together stay within the schedule's one budget (not one each), no host sees two
//! requests closer than its limit, no robots.txt Disallow is fetched, and every check the
//! workers counted is in the database. Their estimate of their copies' age, added up from the
//! workers' parts (each judges the hosts it holds), is held against the world's truth.
//!
//! No wall-clock assertion: on a slow machine the virtual clock still runs and the budget is a
//! ceiling reached only when the workers keep up, so only a loose floor is asserted.
//!
//! Needs `FRESHET_TEST_POSTGRES` (see tests/postgres_store.rs); SKIPPED without it unless
//! `FRESHET_REQUIRE_POSTGRES=1`.

#[path = "support/postgres.rs"]
mod postgres;

use std::path::Path;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_spend_one_budget_as_the_server_counts_it() {
    let Some(db) = postgres::postgres_database("demo_workers").await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_freshet"))
        .current_dir(dir.path())
        .args(["demo", "--db", &db, "--workers", "3", "--duration", "12"])
        .args(["--json"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(report["run"]["workers"], 3);
    let budget = report["budget_requests"].as_f64().unwrap();
    let made = report["freshet"]["requests"].as_f64().unwrap();
    // The ceiling: each worker's bucket holds a quarter hour of its part, about 1 request here.
    assert!(
        made <= budget * 1.02 + 3.0,
        "{made} requests against one budget of {budget:.0}"
    );
    // The floor says only that the workers worked: beside two busy loops and a release build
    // (four loads on two cores) they made 0.42 of the budget, beside the loops alone more.
    assert!(
        made >= budget * 0.25,
        "{made} requests against one budget of {budget:.0}"
    );
    let politeness = &report["politeness"];
    assert_eq!(politeness["disallowed_requests"], 0, "{politeness}");
    let hosts = politeness["hosts"].as_array().unwrap();
    assert!(!hosts.is_empty());
    assert!(hosts.iter().all(|h| h["violations"] == 0), "{politeness}");
    // Every host's pages were checked in the judged window (each host's sitemap was read by
    // whichever worker held it).
    let sites = report["sites"].as_array().unwrap();
    assert!(sites.len() >= 5, "{}", report["sites"]);
    for site in sites {
        assert!(site["page_syncs"].as_f64().unwrap_or(0.0) > 0.0, "{site}");
    }
    // The estimate of the copies' mean age against their truth over the same samples (one
    // worker judging the whole site from its view of the others' pages estimated 2 to 2.6
    // times the truth in 30 s runs; the workers' parts 0.96 to 1.07). These 12 s judge the
    // first two days, while the hosts' hints are still being judged: 0.82 to 1.12 times the
    // truth in eight idle runs. Starved of the CPU, the virtual clock runs on while the
    // workers fall behind, and the estimate drifts both ways: 0.72 and 0.77 beside two busy
    // loops, 0.71 to 2.35 in six runs beside six, 0.42 once in CI beside a build. So only a
    // gross error fails here; a single refresher's calibration is held tighter against a
    // real server in tests/nginx_calibration.rs (mean age within 30% of the truth).
    let calibration = &report["calibration"];
    let estimated = calibration["sampled_expected_mean_age_days"]
        .as_f64()
        .unwrap();
    let truth = calibration["sampled_true_mean_age_days"].as_f64().unwrap();
    assert!(
        estimated > 0.0 && truth > 0.0 && (0.35..3.0).contains(&(estimated / truth)),
        "estimated mean age {estimated:.4} d against a true {truth:.4} d ({made} requests \
         against a budget of {budget:.0}): {calibration}"
    );
    // Nothing a worker counted was lost: every page check is in the database.
    let checks = report["run"]["checks"].as_u64().unwrap();
    let store = freshet::store::Store::open_existing(Path::new(&db))
        .await
        .unwrap();
    let observations = store.observation_count().await.unwrap();
    // The samples are the workers' parts added up, at the instants of a quarter-hour grid: at
    // its fullest, a sample holds about every page with a copy, not one worker's part.
    let samples = store.freshness_samples(i64::MIN, i64::MAX).await.unwrap();
    let pages_with_copies = store
        .url_status(None)
        .await
        .unwrap()
        .iter()
        .filter(|row| row.kind == "page" && row.last_checked_ms.is_some())
        .count();
    store.close().await;
    assert!(!samples.is_empty());
    assert!(
        samples.iter().all(|s| s.at_ms % (15 * 60_000) == 0),
        "samples off the grid"
    );
    let fullest = samples.iter().map(|s| s.copies).max().unwrap_or(0);
    assert!(
        fullest as f64 >= 0.8 * pages_with_copies as f64,
        "the fullest sample held {fullest} copies of {pages_with_copies} pages checked"
    );
    assert!(checks > 0, "{}", report["run"]);
    assert!(observations as u64 >= checks, "{observations} < {checks}");
}
