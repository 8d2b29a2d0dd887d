//! `freshet bench --json`, run as the built binary at small sizes: every part prints one object
//! keyed by part, and every figure the issue names is there as a finite number. Timings are never
//! asserted (they belong to the benchmark's output, not to a test).

#[path = "support/postgres.rs"]
mod postgres;

use std::process::Command;

fn bench_json(part: &str) -> serde_json::Value {
    bench_json_sized(part, "2000", "20")
}

fn bench_json_sized(part: &str, pages: &str, hosts: &str) -> serde_json::Value {
    bench_json_with(part, pages, hosts, &[])
}

fn bench_json_with(part: &str, pages: &str, hosts: &str, more: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_freshet"))
        .args([
            "bench", "--only", part, "--pages", pages, "--hosts", hosts, "--json",
        ])
        .args(more)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "bench --only {part} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

fn assert_figures(value: &serde_json::Value, part: &str, keys: &[&str]) {
    let object = value.as_object().expect("an object");
    assert_eq!(
        object.keys().collect::<Vec<_>>(),
        [part],
        "keyed by part: {value}"
    );
    for key in keys {
        let figure = &value[part][key];
        assert!(
            figure.as_f64().is_some_and(f64::is_finite),
            "{part}.{key} is not a finite number: {figure}"
        );
    }
}

#[test]
fn plan_part_reports_its_figures() {
    let value = bench_json("plan");
    assert_figures(
        &value,
        "plan",
        &["seconds", "incremental_update_ms", "urls", "hosts"],
    );
    assert_eq!(value["plan"]["urls"], 2000);
    assert_eq!(value["plan"]["hosts"], 20);
}

#[test]
fn the_old_planner_name_still_runs_the_plan_part() {
    assert_figures(&bench_json("planner"), "plan", &["seconds"]);
}

#[test]
fn sitemap_part_reports_its_figures() {
    let value = bench_json("sitemap");
    assert_figures(
        &value,
        "sitemap",
        &[
            "mb_per_second",
            "raw_scan_mb_per_second",
            "peak_rss_bytes",
            "bytes",
            "urls",
        ],
    );
    // Every generated URL was read by the full reader.
    assert_eq!(value["sitemap"]["urls_read"], 2000);
    assert_eq!(value["sitemap"]["errors"], 0);
}

#[test]
fn dedup_part_reports_its_figures() {
    let value = bench_json("dedup");
    assert_figures(
        &value,
        "dedup",
        &[
            "near_lookup_ms",
            "urls",
            "resemblance_index_bytes_per_page",
            "resemblance_lookup_ms",
        ],
    );
    assert_eq!(value["dedup"]["urls"], 2000);
    // A planted near copy (each byte of its sketch changed with probability 1/4) is missed only
    // if all 32 bands changed, about once in 200,000.
    assert_eq!(value["dedup"]["resemblance_pages"], 2000);
    let found = value["dedup"]["resemblance_near_copies_found_share"]
        .as_f64()
        .unwrap_or(0.0);
    assert!(found >= 0.99, "{found}");
}

#[test]
fn run_part_checks_through_the_real_refresher_and_counts_from_both_sides() {
    check_run_part(&bench_json_sized("run", "300", "10"));
}

/// The same on PostgreSQL (`--postgres`: a new database per pass on the test server, dropped
/// afterwards). Needs `FRESHET_TEST_POSTGRES`; SKIPPED without it unless
/// `FRESHET_REQUIRE_POSTGRES=1`.
#[test]
fn run_part_runs_on_postgres_too() {
    let Some(server) = postgres::postgres_server("run_part_runs_on_postgres_too") else {
        return;
    };
    let value = bench_json_with("run", "300", "10", &["--postgres", &server]);
    check_run_part(&value);
    assert!(value["run"]["db_bytes_per_url"].as_f64().unwrap_or(0.0) > 0.0);
}

fn check_run_part(value: &serde_json::Value) {
    let value = value.clone();
    assert_figures(
        &value,
        "run",
        &[
            "checks_per_second",
            "bytes_per_url",
            "urls",
            "known_urls",
            "checked_urls",
        ],
    );
    let run = &value["run"];
    let figure = |key: &str| run[key].as_f64().unwrap_or(f64::NAN);
    // Every page of the web was discovered from its sitemaps.
    assert_eq!(figure("known_urls"), 300.0, "{run}");
    // The second pass checked (nearly) every page, each check is in the database, and the
    // server saw the mix: mostly 304s, some changed pages.
    assert_eq!(
        figure("checks_committed"),
        figure("refresher_checks"),
        "{run}"
    );
    assert!(figure("checks_committed") >= 0.95 * 300.0, "{run}");
    assert!(
        figure("server_answered_304") > figure("server_answered_200"),
        "{run}"
    );
    assert!(figure("server_answered_200") > 0.0, "{run}");
    assert_eq!(figure("refresher_errors"), 0.0, "{run}");
    // The server's thread did work of its own, and it is a part of the process's CPU time
    // (its clock and the process's are read a moment apart: a tick of slack).
    let (all, server) = (
        figure("cpu_ms_per_check"),
        figure("server_cpu_ms_per_check"),
    );
    assert!(server > 0.0 && server <= all + 0.1, "{run}");
    let refresher = figure("refresher_cpu_ms_per_check");
    assert!((refresher + server - all).abs() < 1e-6, "{run}");
    // Where a check spent its time: every check was admitted, requested and committed, and its
    // steps are disjoint stretches of it (each timed to the microsecond below, as the check is:
    // they add up to at most its time, and the slack is for the means' rounding).
    let parts = ["admission", "request", "commit", "dedup"].map(|step| {
        let wait = figure(&format!("{step}_wait_ms"));
        assert!(wait >= 0.0, "{step}: {run}");
        wait
    });
    assert!(parts[..3].iter().all(|&wait| wait > 0.0), "{run}");
    let total = figure("check_wait_ms");
    assert!(parts.iter().sum::<f64>() <= total + 1e-6, "{run}");
}
