//! Calibration against a web server nobody here wrote: nginx serves pages that change every few
//! minutes (Poisson, each page at its own rate), freshet refreshes them under a budget that
//! cannot keep every copy current, and what freshet believes about its copies is compared with
//! the truth, the way the demo's calibration does (issue 9):
//! - every quarter-hour freshness sample (the refresher's `freshness_samples` rows) against the
//!   true share of stale copies and their true mean age at the same instant, from the change
//!   times this test wrote and the fetches in nginx's own access log;
//! - at the end, the share of pages whose true rate lies in freshet's 90% interval.
//!
//! The refresher runs in-process on a virtual clock 120 times faster than real time, so a page
//! that changes every few minutes of clock time changes every few seconds; the files' mtimes
//! (nginx's Last-Modified) are set to the clock time of each change, and nginx's log times are
//! mapped onto the clock. When nginx is not installed the test says so and checks nothing
//! (`.ci/run` installs it).

#[path = "support/nginx.rs"]
mod nginx;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use freshet::clock::{SharedClock, VirtualClock, sleep_until};
use freshet::refresher::{self, PolicyChoice, RunOptions};
use freshet::store::Store;
use nginx::Nginx;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const PAGES: usize = 100;
/// Clock seconds per real second.
const SPEED: f64 = 120.0;
/// Clock time the refresher runs.
const RUN_MS: i64 = 5 * 3_600_000;
/// Samples before this much clock time are the learning phase, not judged.
const WARMUP_MS: i64 = 2 * 3_600_000;
const MINUTE_MS: f64 = 60_000.0;

/// One page's true rate (changes per clock minute), drawn log-uniform between once in 2 and
/// once in 90 minutes.
fn rates(seed: u64) -> Vec<f64> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..PAGES)
        .map(|_| {
            let (lo, hi) = ((1.0f64 / 90.0).ln(), (1.0f64 / 2.0).ln());
            rng.random_range(lo..hi).exp()
        })
        .collect()
}

/// Page `page` at `version`: its own words, all new at each version, so that no two pages are
/// near-duplicates of each other (the duplicate engine would give all but one a duplicate's
/// small weight) and every version is a change of the main text.
fn body(page: usize, version: usize) -> String {
    let mut rng = StdRng::seed_from_u64(((page as u64) << 32) ^ version as u64);
    let words: Vec<String> = (0..120)
        .map(|_| {
            (0..rng.random_range(3..9))
                .map(|_| char::from(b'a' + rng.random_range(0..26u8)))
                .collect()
        })
        .collect();
    format!(
        "<html><head><title>Page {page}</title></head><body><article><h1>Page {page}</h1>\
         <p>Version {version}. {}.</p><p>{}.</p></article></body></html>\n",
        words[..60].join(" "),
        words[60..].join(" ")
    )
}

/// Writes page `page` at `version` with its mtime at clock time `at_ms` (rename: nginx never
/// serves half a file).
fn write_page(html: &std::path::Path, page: usize, version: usize, at_ms: i64) {
    let tmp = html.join(format!(".page{page}.tmp"));
    std::fs::write(&tmp, body(page, version)).unwrap();
    let mtime = UNIX_EPOCH + Duration::from_millis(at_ms.max(0) as u64);
    std::fs::File::options()
        .write(true)
        .open(&tmp)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    std::fs::rename(&tmp, html.join(format!("page{page}.html"))).unwrap();
}

/// Changes pages at Poisson times until the clock passes `until_ms`; returns each page's change
/// times (clock ms, as written). Page versions before the start are in the past.
async fn change_pages(
    clock: SharedClock,
    html: std::path::PathBuf,
    rates: Vec<f64>,
    until_ms: i64,
) -> Vec<Vec<i64>> {
    let mut rng = StdRng::seed_from_u64(7);
    let start = clock.now_ms();
    let gap = |rng: &mut StdRng, rate: f64| {
        let u: f64 = rng.random_range(f64::EPSILON..1.0);
        (-u.ln() / rate * MINUTE_MS) as i64
    };
    let mut next: Vec<i64> = rates.iter().map(|&r| start + gap(&mut rng, r)).collect();
    let mut changes: Vec<Vec<i64>> = vec![Vec::new(); rates.len()];
    loop {
        let (page, &at) = next.iter().enumerate().min_by_key(|(_, t)| **t).unwrap();
        if at > until_ms {
            return changes;
        }
        sleep_until(clock.as_ref(), at).await;
        let written = clock.now_ms();
        changes[page].push(written);
        write_page(&html, page, changes[page].len(), written);
        next[page] = written + gap(&mut rng, rates[page]);
    }
}

/// The truth at `at_ms` over pages fetched before it: (copies, stale share, mean age in days).
fn truth_at(at_ms: i64, syncs: &[Vec<i64>], changes: &[Vec<i64>]) -> (usize, f64, f64) {
    let (mut copies, mut stale, mut age) = (0usize, 0usize, 0.0);
    for (page_syncs, page_changes) in syncs.iter().zip(changes) {
        let Some(&synced) = page_syncs.iter().rev().find(|&&t| t <= at_ms) else {
            continue;
        };
        copies += 1;
        if let Some(&first) = page_changes.iter().find(|&&c| c > synced && c <= at_ms) {
            stale += 1;
            age += (at_ms - first) as f64 / 86_400_000.0;
        }
    }
    let n = copies.max(1) as f64;
    (copies, stale as f64 / n, age / n)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn staleness_estimates_match_the_truth_of_pages_changing_every_few_minutes() {
    let Some(binary) = Nginx::binary_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = Nginx::start(&binary, &dir.path().join("nginx")).await;
    let html = Nginx::html(&server.prefix);
    let rates = rates(42);

    // The clock reads the wall clock now and runs SPEED times faster, so a real instant r maps
    // to origin + (r - origin) * SPEED.
    let origin_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let clock: SharedClock = Arc::new(VirtualClock::new(origin_ms, SPEED));
    let to_clock = |real_ms: i64| origin_ms + ((real_ms - origin_ms) as f64 * SPEED) as i64;

    let mut sitemap = String::new();
    let mut rng = StdRng::seed_from_u64(3);
    for (page, rate) in rates.iter().enumerate() {
        // The version before the start changed some time ago, as a live site's pages did.
        let u: f64 = rng.random_range(f64::EPSILON..1.0);
        write_page(
            &html,
            page,
            0,
            origin_ms - (-u.ln() / rate * MINUTE_MS) as i64,
        );
        sitemap.push_str(&format!("{}/page{page}.html\n", server.base()));
    }
    std::fs::write(html.join("sitemap.txt"), sitemap).unwrap();
    std::fs::write(html.join("robots.txt"), "User-agent: *\nAllow: /\n").unwrap();

    // About one visit per page every 10 clock minutes: too few to keep up with the fastest.
    let schedule = dir.path().join("site.toml");
    std::fs::write(
        &schedule,
        format!(
            "[[site]]\nname = \"nginx\"\nsitemaps = [\"{}/sitemap.txt\"]\n\
             host_rate = \"30/min\"\nrequests_per_day = {}\nallow_networks = [\"127.0.0.0/8\"]\n",
            server.base(),
            PAGES * 144
        ),
    )
    .unwrap();
    let db = dir.path().join("f.db");
    let end_ms = origin_ms + RUN_MS;
    let writer = tokio::spawn(change_pages(
        clock.clone(),
        html.clone(),
        rates.clone(),
        end_ms,
    ));
    let options = RunOptions {
        schedules: vec![schedule],
        db_path: db.clone(),
        once: false,
        clock: clock.clone(),
        resolve: Vec::new(),
        policy: PolicyChoice::Learned,
        worker: Default::default(),
        run_lock: None,
    };
    let stop_clock = clock.clone();
    refresher::run(options, async move {
        sleep_until(stop_clock.as_ref(), end_ms).await
    })
    .await
    .expect("the refresher ran");
    let changes = writer.await.unwrap();
    let log = server.access_log();
    server.stop().await;

    // A page's copy is synchronised by a GET answered 200 or 304, at its start.
    let mut syncs: Vec<Vec<i64>> = vec![Vec::new(); PAGES];
    for request in &log {
        let page = request
            .uri
            .strip_prefix("/page")
            .and_then(|rest| rest.strip_suffix(".html"))
            .and_then(|n| n.parse::<usize>().ok());
        if let Some(page) =
            page.filter(|_| request.method == "GET" && matches!(request.status, 200 | 304))
        {
            syncs[page].push(to_clock(request.start_ms));
        }
    }

    let store = Store::open_existing(&db).await.unwrap();
    let samples = store
        .freshness_samples(origin_ms + WARMUP_MS, end_ms)
        .await
        .unwrap();
    let beliefs = store.page_beliefs().await.unwrap();
    store.close().await;

    let (mut est_p, mut true_p, mut est_age, mut true_age) = (0.0, 0.0, 0.0, 0.0);
    for sample in &samples {
        let (copies, stale, age) = truth_at(sample.at_ms, &syncs, &changes);
        eprintln!(
            "sample at +{:.2} h: {} copies (truth {copies}), p_stale {:.3} vs true {stale:.3}, \
             age {:.2} vs true {:.2} min",
            (sample.at_ms - origin_ms) as f64 / 3_600_000.0,
            sample.copies,
            sample.mean_p_stale,
            sample.mean_expected_age_days * 1440.0,
            age * 1440.0
        );
        est_p += sample.mean_p_stale;
        true_p += stale;
        est_age += sample.mean_expected_age_days;
        true_age += age;
    }
    let mut covered = 0;
    let mut judged = 0;
    for belief in &beliefs {
        let page = belief
            .url
            .rsplit_once("/page")
            .and_then(|(_, rest)| rest.strip_suffix(".html"))
            .and_then(|n| n.parse::<usize>().ok());
        if let (Some(page), Some(low), Some(high)) = (page, belief.rate_low, belief.rate_high) {
            judged += 1;
            covered += usize::from((low..=high).contains(&(rates[page] * 1440.0)));
        }
    }
    let n = samples.len() as f64;
    let coverage = covered as f64 / judged.max(1) as f64;
    let fetches: usize = syncs.iter().map(Vec::len).sum();
    let changed: usize = changes.iter().map(Vec::len).sum();
    eprintln!(
        "nginx calibration: {} samples, {changed} changes, {fetches} page fetches; mean p_stale \
         {:.3} vs true stale share {:.3} (ratio {:.2}); mean expected age {:.2} vs true {:.2} \
         min (ratio {:.2}); 90% interval held the true rate for {covered} of {judged} pages \
         ({coverage:.2})",
        samples.len(),
        est_p / n,
        true_p / n,
        est_p / true_p,
        est_age / n * 1440.0,
        true_age / n * 1440.0,
        est_age / true_age,
    );
    assert!(samples.len() >= 8, "too few samples: {}", samples.len());
    assert!(judged >= PAGES * 9 / 10, "pages judged: {judged}");
    assert!(
        true_p / n > 0.1,
        "the budget kept everything fresh: no test"
    );
    let ratio = est_p / true_p;
    assert!(
        (0.75..=1.25).contains(&ratio),
        "mean p_stale / true stale share = {ratio:.2}"
    );
    let age_ratio = est_age / true_age;
    assert!(
        (0.7..=1.3).contains(&age_ratio),
        "mean expected age / true = {age_ratio:.2}"
    );
    assert!(
        (0.75..=0.98).contains(&coverage),
        "90% interval coverage {coverage:.2}"
    );
}
