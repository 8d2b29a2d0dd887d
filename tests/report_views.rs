//! The SQL views hold what their names say (issue 12): `age_now` judges each copy as of the
//! run's clock (a demo database is judged at its virtual end, not at the wall clock a year
//! later) with the same figures `freshet report age` computes in Rust, and `staleness_by_site`
//! tells pages from duplicates and redirects and carries a staleness measure.
//!
//! The views are read with the `sqlite3` shell, as a user would: they use `pow`, `ln` and `exp`,
//! built into the shell since SQLite 3.35 but not into the SQLite that freshet bundles (freshet
//! computes the same figures in Rust). `.ci/run` installs the shell when it is missing.

use freshet::store::Store;
use freshet::store::discovered::Discovered;
use freshet::store::reports::FreshnessSample;
use freshet::store::sites::SiteRecord;
use serde_json::Value;

const DAY: i64 = 86_400_000;
/// The virtual run's end: 2026-01-05, far from the wall clock.
const END: i64 = 1_767_571_200_000;

/// The rows `sql` gives in the `sqlite3` shell, as JSON objects.
fn shell(db: &std::path::Path, sql: &str) -> Vec<Value> {
    // The test's own connections are closed before the shell runs; the busy timeout covers a
    // checkpoint still finishing on a loaded machine.
    let output = std::process::Command::new("sqlite3")
        .arg("-json")
        .arg("-cmd")
        .arg(".timeout 10000")
        .arg(db)
        .arg(sql)
        .output()
        .expect("the sqlite3 shell (apt-get install sqlite3; .ci/run installs it)");
    assert!(
        output.status.success(),
        "sqlite3 {sql}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    if text.trim().is_empty() {
        return Vec::new();
    }
    serde_json::from_str(&text).unwrap()
}

fn num(row: &Value, key: &str) -> f64 {
    row[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} in {row}"))
}

/// Every check written above left a copy.
async fn copies_taken_at_their_checks(pool: &sqlx::SqlitePool) {
    sqlx::query("UPDATE urls SET copy_ms = last_checked_ms")
        .execute(pool)
        .await
        .unwrap();
}

async fn pool(path: &std::path::Path) -> sqlx::SqlitePool {
    sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap()
}

/// A store with one site `s` and pages `/0`..`/n` on one host, and a virtual run that ended
/// at [`END`].
async fn store_with_pages(dir: &std::path::Path, n: usize) -> (Store, sqlx::SqlitePool, i64) {
    let path = dir.join("v.db");
    let store = Store::open(&path).await.unwrap();
    let record = SiteRecord {
        name: "s",
        weight: 1.0,
        requests_per_day: 100.0,
        source_file: None,
    };
    let site_id = store.upsert_site(&record, END - 10 * DAY).await.unwrap();
    let host_id = store.host_id("http://a.test").await.unwrap();
    let found: Vec<Discovered> = (0..n)
        .map(|i| Discovered {
            url: format!("http://a.test/{i}"),
            site_id,
            host_id,
            kind: "page",
            discovered_from: None,
            lastmod_ms: None,
            lastmod_believed: true,
            changefreq: None,
            priority: None,
        })
        .collect();
    store
        .upsert_discovered(&found, END - 10 * DAY)
        .await
        .unwrap();
    let run = store
        .start_run(END - 3 * DAY, "learned", 14_400.0)
        .await
        .unwrap();
    store.update_run(run, Some(END), [0; 4]).await.unwrap();
    (store, pool(&path).await, site_id)
}

/// A page's state: (last check before END, shape, rate, watched span, known change, point rate).
type Case = (
    i64,
    Option<f64>,
    Option<f64>,
    Option<(i64, i64)>,
    Option<i64>,
    Option<f64>,
);

#[tokio::test]
async fn age_now_judges_copies_at_the_runs_clock_as_report_age_does() {
    let dir = tempfile::tempdir().unwrap();
    let (store, pool, _) = store_with_pages(dir.path(), 5).await;
    // (last check before END, shape, rate, watched span, known change, point rate)
    let cases: [Case; 5] = [
        (3 * 60_000, Some(2.0), Some(4.0), None, None, Some(0.5)), // checked 3 min ago
        (DAY + DAY / 2, Some(1.0), Some(2.0), None, None, Some(0.5)), // a = 1 exactly
        (
            2 * DAY,
            Some(3.5),
            Some(1.5),
            Some((END - DAY - DAY / 2, END - DAY / 2)),
            None,
            Some(2.0),
        ),
        (
            DAY,
            Some(2.0),
            Some(4.0),
            None,
            Some(END - DAY / 4),
            Some(0.5),
        ), // known stale
        (DAY / 2, None, None, None, None, Some(3.0)), // point estimate only
    ];
    for (i, (ago, shape, rate, watched, known, point)) in cases.iter().enumerate() {
        sqlx::query(
            "UPDATE urls SET last_checked_ms = ?, checks = 1, rate_shape = ?, rate_scale = ?,
                 watched_from_ms = ?, watched_until_ms = ?, known_change_ms = ?, rate_per_day = ?
             WHERE url = ?",
        )
        .bind(END - ago)
        .bind(shape)
        .bind(rate)
        .bind(watched.map(|w| w.0))
        .bind(watched.map(|w| w.1))
        .bind(known)
        .bind(point)
        .bind(format!("http://a.test/{i}"))
        .execute(&pool)
        .await
        .unwrap();
    }
    copies_taken_at_their_checks(&pool).await;
    assert_eq!(store.report_now(0).await.unwrap(), END);
    let rows = store.url_status(None).await.unwrap();
    store.close().await;
    let db = dir.path().join("v.db");
    let views = shell(&db, "SELECT * FROM age_now ORDER BY url");
    assert_eq!(views.len(), rows.len());
    for row in &rows {
        let view = views.iter().find(|v| v["url"] == row.url.as_str()).unwrap();
        let rust = row.staleness(END).expect("a judged copy");
        assert_eq!(
            view["now_ms"], END,
            "{}: the view's now is the run's end",
            row.url
        );
        let since = num(view, "days_since_check");
        let expected_since = (END - row.last_checked_ms.unwrap()) as f64 / DAY as f64;
        assert!(
            (since - expected_since).abs() < 1e-9,
            "{}: {since}",
            row.url
        );
        assert!(
            since < 3.0,
            "{}: days since check read from the wall clock",
            row.url
        );
        let p = num(view, "p_stale");
        let age = num(view, "expected_age_days");
        assert!(
            (p - rust.p_stale).abs() < 1e-9,
            "{}: p {p} vs {}",
            row.url,
            rust.p_stale
        );
        assert!(
            (age - rust.expected_age_days).abs() < 1e-9 + 1e-6 * rust.expected_age_days,
            "{}: expected age {age} vs {}",
            row.url,
            rust.expected_age_days
        );
        assert!(
            age > 0.0,
            "{}: a copy with unseen time has some expected age",
            row.url
        );
        assert_eq!(view["known_stale"] == 1, rust.known_stale, "{}", row.url);
    }
    // The copy checked three minutes ago: its expected age is under three minutes, and not 0.
    let fresh = num(&views[0], "expected_age_days");
    assert!(fresh > 0.0 && fresh < 3.0 / 1440.0, "{fresh}");
    pool.close().await;
}

#[tokio::test]
async fn staleness_by_site_counts_pages_apart_from_duplicates_and_redirects() {
    let dir = tempfile::tempdir().unwrap();
    let (store, pool, site_id) = store_with_pages(dir.path(), 4).await;
    for (i, shape) in [(0, 2.0), (1, 2.0), (2, 2.0), (3, 2.0)] {
        sqlx::query(
            "UPDATE urls SET last_checked_ms = ?, checks = 2, changes = 1, rate_shape = ?,
                 rate_scale = 4.0, rate_per_day = 0.5, weight = ? WHERE url = ?",
        )
        .bind(END - (i + 1) * DAY / 4)
        .bind(shape)
        .bind(if i == 1 { 0.1 } else { 1.0 })
        .bind(format!("http://a.test/{i}"))
        .execute(&pool)
        .await
        .unwrap();
    }
    copies_taken_at_their_checks(&pool).await;
    // /1 is a duplicate of /0 (a content class with /0 canonical); /3 redirects permanently.
    for sql in [
        "INSERT INTO dedup_classes (kind, key, canonical) VALUES ('content', 7, 'http://a.test/0')",
        "INSERT INTO dedup_members (kind, key, rank, url, score)
             VALUES ('content', 7, 0, 'http://a.test/0', 1.0),
                    ('content', 7, 1, 'http://a.test/1', 0.5)",
        "INSERT INTO dedup_redirects (source, target) VALUES ('http://a.test/3', 'http://a.test/2')",
    ] {
        sqlx::query(sql).execute(&pool).await.unwrap();
    }
    let sample = |at_ms, p| FreshnessSample {
        site_id,
        at_ms,
        copies: 4,
        known_stale: 0,
        weight: 3.1,
        mean_expected_age_days: p / 10.0,
        mean_p_stale: p,
    };
    store
        .add_freshness_samples(&[sample(END - DAY, 0.2), sample(END - DAY / 2, 0.3)], false)
        .await
        .unwrap();
    store.close().await;
    pool.close().await;
    let db = dir.path().join("v.db");
    let row = &shell(&db, "SELECT * FROM staleness_by_site WHERE site = 's'")[0];
    let counts: Vec<f64> = [
        "urls",
        "pages",
        "duplicates",
        "redirects",
        "checks",
        "changes",
        "copies",
    ]
    .iter()
    .map(|k| num(row, k))
    .collect();
    assert_eq!(counts, [4.0, 2.0, 1.0, 1.0, 8.0, 4.0, 4.0], "{row}");
    let weighted = &shell(
        &db,
        "SELECT SUM(weight * p_stale) / SUM(weight) AS p FROM age_now WHERE site = 's'",
    )[0];
    let mean_p = num(row, "mean_p_stale");
    assert!((mean_p - num(weighted, "p")).abs() < 1e-12 && mean_p > 0.0 && mean_p < 1.0);
    let mean_age = num(row, "mean_expected_age_days");
    assert!(mean_age > 0.0 && mean_age < 1.0, "{mean_age}");
    assert_eq!(row["sampled_ms"], END - DAY / 2, "the latest sample");
    assert_eq!(num(row, "sampled_mean_p_stale"), 0.3);
}

#[tokio::test]
async fn report_clock_is_the_wall_clock_after_a_real_run() {
    let dir = tempfile::tempdir().unwrap();
    let (store, pool, _) = store_with_pages(dir.path(), 1).await;
    let run = store.start_run(END, "learned", 1.0).await.unwrap();
    store.update_run(run, Some(END + 1), [0; 4]).await.unwrap();
    store.close().await;
    pool.close().await;
    let row = &shell(
        &dir.path().join("v.db"),
        "SELECT now_ms, clock FROM report_clock",
    )[0];
    let (now, clock) = (
        row["now_ms"].as_i64().unwrap(),
        row["clock"].as_str().unwrap(),
    );
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    assert_eq!(clock, "wall clock");
    assert!((now - wall).abs() < 60_000, "{now} vs {wall}");
}
