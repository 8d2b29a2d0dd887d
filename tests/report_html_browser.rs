//! `freshet report html` opened in a real headless Chromium: the page made from a real
//! `freshet demo` database loads without a console message, every plot has drawn series in the
//! DOM the browser built (the staleness plots both the estimate and the demo's truth), the
//! tables are there, and screenshots are saved (desktop and phone width). An empty database gives
//! a page that says there is no data yet, also without a console message.
//!
//! Without a Chromium on the machine the test checks the page's file only (the demo's truth
//! samples, every plot present) and prints SKIPPED for the browser part, unless
//! `FRESHET_REQUIRE_BROWSER=1` (set by `.ci/run`), when it fails. Screenshots go to
//! `FRESHET_SCREENSHOT_DIR` when set, else to the test's temporary folder (printed).

#[path = "support/chromium.rs"]
mod chromium;

use std::path::{Path, PathBuf};
use std::process::Command;

use freshet::report_html::plots::PALETTE;
use freshet::store::Store;
use freshet::store::errors::ErrorRecord;

/// The plots the page draws, by figure id.
const PLOTS: [&str; 7] = [
    "plot-staleness-age",
    "plot-staleness-share",
    "plot-copy-ages",
    "plot-rates",
    "plot-host-requests",
    "plot-budget",
    "plot-errors",
];

fn freshet(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_freshet"))
        .args(args)
        .output()
        .expect("run freshet");
    assert!(
        out.status.success(),
        "freshet {args:?} failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The browser, or None after printing SKIPPED (a failure when a browser is required).
fn browser() -> Option<PathBuf> {
    let found = chromium::find();
    if found.is_none() {
        let required = std::env::var("FRESHET_REQUIRE_BROWSER").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "FRESHET_REQUIRE_BROWSER=1 but no chromium, chromium-browser or google-chrome on \
             PATH (or FRESHET_CHROMIUM)"
        );
        eprintln!(
            "SKIPPED: no headless browser found (chromium, chromium-browser, google-chrome); \
             install one (apt-get install chromium) or set FRESHET_REQUIRE_BROWSER=1 to fail"
        );
    }
    found
}

/// The element `<tag … id="id" …>…</tag>` in `dom` (no nesting of the same tag inside).
fn element<'a>(dom: &'a str, tag: &str, id: &str) -> Option<&'a str> {
    let start = dom.find(&format!("<{tag} id=\"{id}\""))?;
    let end = dom[start..].find(&format!("</{tag}>"))?;
    Some(&dom[start..start + end])
}

/// Drawn data marks in an SVG as the browser serialised it: point markers, lines through three
/// points or more (axes, ticks and legend samples have two), and bars in a palette colour.
fn data_marks(svg: &str) -> (usize, usize, usize) {
    let circles = svg.matches("<circle").count();
    let lines = svg
        .split("<polyline")
        .skip(1)
        .filter(|el| {
            let points = el.split("points=\"").nth(1).unwrap_or("");
            let points = &points[..points.find('"').unwrap_or(0)];
            points.split_whitespace().count() >= 3
        })
        .count();
    let colours: Vec<String> = PALETTE
        .iter()
        .map(|c| format!("fill=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2))
        .collect();
    let bars = svg
        .split("<rect")
        .skip(1)
        .filter(|el| {
            let tag = &el[..el.find('>').unwrap_or(el.len())];
            colours.iter().any(|c| tag.contains(c.as_str()))
        })
        .count();
    (circles, lines, bars)
}

fn screenshot_dir(temp: &Path) -> PathBuf {
    std::env::var_os("FRESHET_SCREENSHOT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| temp.to_path_buf())
}

/// Takes a full-page screenshot at `width` and checks a PNG came out.
fn screenshot(browser: &Path, page: &Path, width: u32, height: u32, out: &Path, scratch: &Path) {
    let _ = std::fs::remove_file(out);
    let run = chromium::run(
        browser,
        page,
        &[
            format!("--window-size={width},{height}"),
            format!("--screenshot={}", out.display()),
        ],
        scratch,
    );
    let png = std::fs::read(out).unwrap_or_else(|e| {
        panic!(
            "no screenshot at {}: {e}; browser log:\n{}",
            out.display(),
            run.log
        )
    });
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000);
    println!("screenshot: {} ({} bytes)", out.display(), png.len());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_report_of_a_demo_renders_in_a_real_browser_with_every_plot_drawn() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();

    // A short real demo: a day of virtual time, freshness sampled every 15 clock minutes, and
    // the truth recorded at the same instants.
    let db = dir.join("demo.db");
    let db_arg = db.to_str().unwrap();
    let report: serde_json::Value = serde_json::from_str(&freshet(&[
        "demo",
        "--duration",
        "6",
        "--json",
        "--db",
        db_arg,
    ]))
    .expect("demo --json prints one JSON object");
    let store = Store::open(&db).await.unwrap();
    let estimated: Vec<i64> = store
        .freshness_samples(i64::MIN, i64::MAX)
        .await
        .unwrap()
        .iter()
        .map(|s| s.at_ms)
        .collect();
    let truth = store.true_freshness_samples().await.unwrap();
    assert!(estimated.len() >= 20, "{} samples", estimated.len());
    assert_eq!(truth.iter().map(|s| s.at_ms).collect::<Vec<_>>(), estimated);
    // The calibration over the window is the time average of those samples in the window.
    let (from, to) = (report["from_ms"].as_i64(), report["to_ms"].as_i64());
    let (from, to) = (from.expect("from_ms"), to.expect("to_ms"));
    let calibration = &report["calibration"];
    let in_window: Vec<_> = truth
        .iter()
        .filter(|s| (from..=to).contains(&s.at_ms))
        .collect();
    // And freshet's side is the time average of its own samples (one site: each instant has
    // one row).
    let own = store.freshness_samples(from, to).await.unwrap();
    let true_shares: Vec<f64> = in_window.iter().map(|s| s.share_stale).collect();
    let own_p: Vec<f64> = own.iter().map(|s| s.mean_p_stale).collect();
    assert_time_average(calibration, "sampled_true_stale_share", &true_shares, 1e-9);
    assert_time_average(calibration, "sampled_mean_p_stale", &own_p, 1e-9);
    // The truth judges the copies freshet judged: every page URL it holds (a mirror's, redirect
    // sources and home pages too), each its own copy; and the window's mean age of them is the
    // estimate's like-for-like truth.
    let page_urls = store
        .url_status(None)
        .await
        .unwrap()
        .iter()
        .filter(|row| row.kind == "page")
        .count() as i64;
    assert!(
        truth
            .iter()
            .all(|s| s.copies <= page_urls && s.stale <= s.copies)
    );
    let true_ages: Vec<f64> = in_window.iter().map(|s| s.mean_age_days).collect();
    let own_ages: Vec<f64> = own.iter().map(|s| s.mean_expected_age_days).collect();
    assert_time_average(calibration, "sampled_true_mean_age_days", &true_ages, 1e-12);
    assert_time_average(
        calibration,
        "sampled_expected_mean_age_days",
        &own_ages,
        1e-12,
    );
    assert!(truth.iter().any(|s| s.copies > 0 && s.mean_age_days > 0.0));
    // The demo's world serves no errors; one recorded problem lets the errors plot draw it.
    let problem = ErrorRecord {
        scope: "fetch",
        url: Some("http://news.freshet.test/missing".into()),
        message: "added by the test: the demo's world serves no errors".into(),
        ..ErrorRecord::default()
    };
    store.record_error(0, &problem).await.unwrap();
    store.close().await;

    let page = dir.join("report.html");
    freshet(&[
        "report",
        "html",
        "--db",
        db_arg,
        "--out",
        page.to_str().unwrap(),
    ]);
    let html = std::fs::read_to_string(&page).unwrap();
    // Self-contained: nothing for the browser to fetch.
    for needle in ["<script", "<link", " src=", "@import", "url(", "<img"] {
        assert!(!html.contains(needle), "the page refers out: {needle}");
    }
    // The same page on standard output, byte for byte (the page is deterministic).
    let stdout = freshet(&["report", "html", "--db", db_arg, "--out", "-"]);
    if let Some(at) = stdout.bytes().zip(html.bytes()).position(|(a, b)| a != b) {
        let around = |text: &str| {
            let bytes = &text.as_bytes()[at.saturating_sub(80)..(at + 80).min(text.len())];
            String::from_utf8_lossy(bytes).into_owned()
        };
        panic!(
            "stdout and file differ at byte {at}: {:?} vs {:?}",
            around(&stdout),
            around(&html)
        );
    }
    assert_eq!(stdout.len(), html.len());

    for id in PLOTS {
        assert!(html.contains(&format!("<figure id=\"{id}\"")), "no {id}");
    }

    let Some(browser) = browser() else {
        return;
    };
    // The browser notices console errors: a page that logs one is caught.
    let bad = dir.join("bad.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><title>x</title><script>console.error('canary-error')</script>",
    )
    .unwrap();
    let run = chromium::run(&browser, &bad, &["--dump-dom".to_string()], dir);
    assert!(
        run.console.iter().any(|l| l.contains("canary-error")),
        "console messages are not seen; log:\n{}",
        run.log
    );

    let run = chromium::run(&browser, &page, &["--dump-dom".to_string()], dir);
    assert!(run.console.is_empty(), "console: {:#?}", run.console);
    let dom = run.stdout;
    assert!(
        dom.contains("<h1>freshet report</h1>"),
        "no DOM dumped; log:\n{}",
        run.log
    );
    assert!(!dom.contains("id=\"no-data\""));
    for id in PLOTS {
        let figure = element(&dom, "figure", id)
            .unwrap_or_else(|| panic!("no figure {id} in the DOM (an empty plot?)"));
        assert!(figure.contains("<svg"), "{id} has no SVG");
        let (circles, lines, bars) = data_marks(figure);
        assert!(
            circles + lines + bars > 0,
            "{id} has no drawn series: {circles} points, {lines} lines, {bars} bars"
        );
        if id.starts_with("plot-staleness") {
            // freshet's estimate and the demo's truth, each a line through many samples.
            assert!(lines >= 2, "{id}: {lines} lines");
            assert!(figure.contains("demo-web estimated") && figure.contains("demo-web true"));
        }
    }
    let stalest = element(&dom, "table", "table-stalest").expect("the stalest table");
    assert!(stalest.matches("<tr>").count() >= 2, "{stalest}");
    assert!(stalest.contains("change rate"));
    let duplicates = element(&dom, "table", "table-duplicates").expect("the duplicates table");
    assert!(duplicates.contains("<td>content</td>"), "{duplicates}");

    let shots = screenshot_dir(dir);
    std::fs::create_dir_all(&shots).unwrap();
    screenshot(
        &browser,
        &page,
        1200,
        5600,
        &shots.join("report-desktop.png"),
        dir,
    );
    screenshot(
        &browser,
        &page,
        390,
        9000,
        &shots.join("report-phone.png"),
        dir,
    );

    // An empty database: a valid page that says so, and no console message either.
    let empty = dir.join("empty.db");
    Store::open(&empty).await.unwrap().close().await;
    let empty_page = dir.join("empty.html");
    freshet(&[
        "report",
        "html",
        "--db",
        empty.to_str().unwrap(),
        "--out",
        empty_page.to_str().unwrap(),
    ]);
    let run = chromium::run(&browser, &empty_page, &["--dump-dom".to_string()], dir);
    assert!(run.console.is_empty(), "console: {:#?}", run.console);
    assert!(run.stdout.contains("id=\"no-data\""), "{}", run.stdout);
    assert!(!run.stdout.contains("<figure"));
}

/// The demo report's `calibration[key]` is the mean of `values` (a time average over the
/// window's samples), within `tolerance`.
fn assert_time_average(calibration: &serde_json::Value, key: &str, values: &[f64], tolerance: f64) {
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let reported = calibration[key].as_f64();
    assert!(
        !values.is_empty() && reported.is_some_and(|r| (r - mean).abs() < tolerance),
        "{key}: {calibration} against {mean} over {} samples",
        values.len()
    );
}
