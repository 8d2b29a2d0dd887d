//! `freshet demo`: a living synthetic web on loopback, refreshed by the real refresher on a
//! virtual clock, then judged against the truth: the true mean age of freshet's copies next to
//! what a uniform schedule with the same requests would have had in the same world, what the
//! age-optimal plan on the true rates would have had, and how well freshet knew its copies.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use crate::demo::calibration::UrlBelief;
use crate::demo::copies::copies;
use crate::demo::noise::{LearntRates, learnt_noise_rates};
use crate::demo::schedule::SITE_NAME;
use crate::demo::server::RequestRecord;
use crate::demo::session::{SessionOptions, is_postgres_for, run_session};
use crate::demo::truth::true_freshness_at;
use crate::demo::world::World;

pub use super::demo_args::Args;
use crate::store::postgres_hold::{self, PostgresHold};
use crate::store::report_data::TrueFreshnessSample;
use crate::store::reports::FreshnessSample;
use crate::store::run_lock::{self, Busy, RunLock};
use crate::store::{Location, Store};

/// Runs `freshet demo`; returns the exit code (1 when a robots.txt Disallow was not obeyed).
pub async fn run(args: Args) -> anyhow::Result<u8> {
    args.check()?;
    // Before anything is cleared: an earlier demo's database is not lost to a refused demo.
    is_postgres_for(args.workers, &args.db)?;
    // Held to the end of the report, which reads and writes the database after the run.
    let DemoDatabase {
        run_lock,
        _postgres_hold,
    } = take_demo_database(&args.db).await?;
    let options = SessionOptions {
        seed: args.seed,
        scale: args.scale,
        duration: Duration::from_secs_f64(args.duration),
        speed: args.speed,
        visits_per_page_per_day: args.budget,
        db_path: Some(args.db),
        progress: true,
        change_signal: args.change_signal,
        workers: args.workers,
        run_lock,
    };
    let result = run_session(&options, crate::refresher::run).await?;
    let mut outcome = result.outcome;
    let view = freshet_view(
        &result.world,
        &result.db_path,
        outcome.from_ms,
        outcome.to_ms,
    )
    .await?;
    outcome.compare_learned(&result.world, &view.learned);
    outcome.calibrate(&result.world, &result.log, &view.beliefs);
    outcome.noise_pages.set_learnt(&view.noise);
    let truth = record_true_freshness(&result.world, &result.log, &result.db_path).await?;
    let in_window: Vec<&TrueFreshnessSample> = truth
        .iter()
        .filter(|t| (outcome.from_ms..=outcome.to_ms).contains(&t.at_ms))
        .collect();
    let complete = complete_instants(&view.samples, &in_window);
    let estimated = mean_sampled(&view.samples, &complete, |s| s.mean_expected_age_days);
    outcome.freshet.estimated_mean_age_days = estimated;
    if let Some(c) = outcome.calibration.as_mut() {
        c.sampled_mean_p_stale = mean_sampled(&view.samples, &complete, |s| s.mean_p_stale);
        c.sampled_expected_mean_age_days = estimated;
        c.sampled_instants = Some(in_window.len());
        c.sampled_instants_complete = Some(complete.len());
        let judged: Vec<&TrueFreshnessSample> = in_window
            .iter()
            .copied()
            .filter(|t| complete.contains(&t.at_ms))
            .collect();
        let mean = |figure: fn(&TrueFreshnessSample) -> f64| {
            let n = judged.len();
            (n > 0).then(|| judged.iter().map(|t| figure(t)).sum::<f64>() / n as f64)
        };
        c.sampled_true_stale_share = mean(|t| t.share_stale);
        c.sampled_true_mean_age_days = mean(|t| t.mean_age_days);
    }
    if args.json {
        let mut report = serde_json::to_value(&outcome)?;
        report["run"] = serde_json::json!({
            "requests": result.summary.requests,
            "checks": result.summary.checks,
            "changes": result.summary.changes,
            "errors": result.summary.errors,
        });
        report["change_signal"] = serde_json::json!(args.change_signal.as_str());
        report["run"]["workers"] = serde_json::json!(args.workers);
        report["db"] = serde_json::json!(shown(&result.db_path));
        report["schedule"] = serde_json::json!(result.schedule_path);
        crate::outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        crate::out!("{}", outcome.to_table());
        crate::outln!(
            "  database {}, schedule {}",
            shown(&result.db_path),
            result.schedule_path.display()
        );
    }
    Ok(u8::from(outcome.politeness.disallowed_requests > 0))
}

/// A database's name as shown (a PostgreSQL URL without its password).
fn shown(db: &Path) -> String {
    crate::store::redact(&db.display().to_string())
}

/// What a demo holds of its database from before it is cleared to the end of its report.
#[derive(Debug)]
struct DemoDatabase {
    /// A file's run lock, for the demo's run to hold (it takes no other).
    run_lock: Option<Arc<RunLock>>,
    /// A PostgreSQL database's demo hold ([`postgres_hold`]): a second demo on the database
    /// is refused while this one runs.
    _postgres_hold: Option<PostgresHold>,
}

/// The name of a demo's hold on a PostgreSQL database.
const DEMO_HOLD: &str = "demo";

/// Takes a demo database for the demo to hold from here to the end of its report (a file's run
/// lock, a PostgreSQL database's demo hold), then removes an earlier demo database there
/// ([`clear_demo_database`]). A database another demo or run is using is refused: before, a
/// second demo in the same folder deleted the database, WAL and all, of a demo still writing
/// it, and only then met the lock, and a second demo on one PostgreSQL database deleted the
/// rows of the first as it ran. (A `freshet run` on a PostgreSQL database takes no hold: its
/// sites are not demo sites, which the clearing refuses.)
async fn take_demo_database(path: &Path) -> anyhow::Result<DemoDatabase> {
    let lock =
        run_lock::lock_for_run(path).map_err(|error| match error.downcast_ref::<Busy>() {
            Some(busy) => anyhow::anyhow!(
                "{} is in use by another demo or run (it holds {}): wait for it to end, or pass \
             another --db",
                shown(path),
                busy.lock.display()
            ),
            None => error,
        })?;
    let postgres_hold = match Location::parse(path)? {
        Location::Postgres(url) => {
            Some(postgres_hold::hold(url, DEMO_HOLD).await?.ok_or_else(|| {
                anyhow::anyhow!(
                    "{} is in use by another demo (it holds the row {DEMO_HOLD:?} of table \
                     freshet_holds): wait for it to end, or pass another --db",
                    shown(path)
                )
            })?)
        }
        Location::SqliteFile(_) => None,
    };
    clear_demo_database(path).await?;
    Ok(DemoDatabase {
        run_lock: lock.map(Arc::new),
        _postgres_hold: postgres_hold,
    })
}

/// Removes an earlier demo database at `path` (the demo's world and ports are new each run, so
/// its URLs would be stale): the file the path leads to (through a symlink: the database, not
/// the link) with its WAL and shared memory, or every row of a PostgreSQL database. A database
/// holding any site that is not a demo site is refused. The caller holds the file's run lock.
async fn clear_demo_database(path: &Path) -> anyhow::Result<()> {
    let on_postgres = matches!(Location::parse(path)?, Location::Postgres(_));
    if !on_postgres && !path.exists() {
        return Ok(());
    }
    let store = Store::open(path).await?;
    let names = store.site_names().await?;
    if let Some(other) = names.iter().find(|name| !name.starts_with("demo-")) {
        store.close().await;
        anyhow::bail!(
            "{} holds the site {other:?}, which is not a demo site: pass another --db",
            shown(path)
        );
    }
    if on_postgres {
        let cleared = store.delete_all_rows().await;
        store.close().await;
        return cleared;
    }
    store.close().await;
    let database = run_lock::file_the_path_leads_to(path)?;
    for suffix in ["", "-wal", "-shm"] {
        let file = PathBuf::from(format!("{}{suffix}", database.display()));
        if file.exists() {
            std::fs::remove_file(&file).with_context(|| format!("removing {}", file.display()))?;
        }
    }
    Ok(())
}

/// freshet's own view of the run, from its database.
struct FreshetView {
    /// The freshness it sampled while running over the judged window (each sample judged what
    /// it knew then).
    samples: Vec<FreshnessSample>,
    /// Its learned rate per page URL.
    learned: Vec<(String, f64)>,
    /// What it believes about each page URL it checked and holds a posterior for, by URL.
    beliefs: Vec<UrlBelief>,
    /// What it learnt of the noise-only pages.
    noise: LearntRates,
}

/// The share of the copies the truth holds at an instant that freshet's sample must hold for the
/// instant to be judged.
const COMPLETE_SAMPLE_SHARE: f64 = 0.9;

/// The instants at which freshet's samples (all sites' parts added up) hold at least
/// [`COMPLETE_SAMPLE_SHARE`] of the copies the truth holds then. With several workers a sample
/// is the sum of their parts, and a worker that was late for an instant of the grid wrote none
/// for it: its copies, the stalest when it is late because it is starved, would be left out of
/// the estimate and not of the truth.
fn complete_instants(samples: &[FreshnessSample], truth: &[&TrueFreshnessSample]) -> BTreeSet<i64> {
    let mut copies: BTreeMap<i64, i64> = BTreeMap::new();
    for s in samples {
        *copies.entry(s.at_ms).or_default() += s.copies;
    }
    truth
        .iter()
        .filter(|t| {
            copies.get(&t.at_ms).is_some_and(|&held| {
                held > 0 && held as f64 >= COMPLETE_SAMPLE_SHARE * t.copies as f64
            })
        })
        .map(|t| t.at_ms)
        .collect()
}

/// The time average over `samples` (taken at a steady pace) at the instants `at` of the weighted
/// mean of `figure` over every site's copies at each instant.
fn mean_sampled(
    samples: &[FreshnessSample],
    at: &BTreeSet<i64>,
    figure: impl Fn(&FreshnessSample) -> f64,
) -> Option<f64> {
    let mut at_instant: BTreeMap<i64, (f64, f64)> = BTreeMap::new();
    for s in samples.iter().filter(|s| at.contains(&s.at_ms)) {
        let (sum, weight) = at_instant.entry(s.at_ms).or_default();
        *sum += s.weight * figure(s);
        *weight += s.weight;
    }
    let means: Vec<f64> = at_instant
        .values()
        .filter(|(_, weight)| *weight > 0.0)
        .map(|(age, weight)| age / weight)
        .collect();
    (!means.is_empty()).then(|| means.iter().sum::<f64>() / means.len() as f64)
}

/// Reads [`FreshetView`] from the database at `db`.
async fn freshet_view(
    world: &World,
    db: &Path,
    from_ms: i64,
    to_ms: i64,
) -> anyhow::Result<FreshetView> {
    let store = Store::open_existing(db).await?;
    let rows = store.url_status(None).await?;
    let samples = store.freshness_samples(from_ms, to_ms).await?;
    let belief_rows = store.page_beliefs().await?;
    let noise = learnt_noise_rates(world, &store).await?;
    store.close().await;
    let mut learned = Vec::new();
    for row in rows.iter().filter(|r| r.kind == "page") {
        if let (Some(rate), Some(_)) = (row.rate_per_day, world.page_for_url(&row.url)) {
            learned.push((row.url.clone(), rate));
        }
    }
    let beliefs = belief_rows
        .into_iter()
        .filter_map(|row| {
            Some(UrlBelief {
                copy_ms: row.copy_ms?,
                known_change_ms: row.known_change_ms,
                rate_low: row.rate_low?,
                rate_high: row.rate_high?,
                rate_shape: row.rate_shape?,
                rate_scale: row.rate_scale?,
                watched: row.watched_from_ms.zip(row.watched_until_ms),
                url: row.url,
            })
        })
        .collect();
    Ok(FreshetView {
        samples,
        learned,
        beliefs,
        noise,
    })
}

/// Records, at every instant the refresher sampled its estimated freshness, the true freshness of
/// the same copies it judged (`true_freshness_samples`), for `freshet report html` to plot beside
/// the estimate and for the calibration over the window: every page URL it holds, each its own
/// copy of what it serves, weighed as freshet weighs it at the end ([`copies`]); the world knows
/// every change and the server's log every request. Returns them.
async fn record_true_freshness(
    world: &World,
    log: &[RequestRecord],
    db: &Path,
) -> anyhow::Result<Vec<TrueFreshnessSample>> {
    let store = Store::open_existing(db).await?;
    let result = async {
        let Some(site_id) = store.site_id(SITE_NAME).await? else {
            return Ok(Vec::new());
        };
        let urls: Vec<(String, f64)> = store
            .url_status(None)
            .await?
            .into_iter()
            .filter(|row| row.kind == "page")
            .map(|row| (row.url, row.weight))
            .collect();
        let copies = copies(world, log, &urls);
        let mut instants: Vec<i64> = store
            .freshness_samples(i64::MIN, i64::MAX)
            .await?
            .into_iter()
            .filter(|s| s.site_id == site_id)
            .map(|s| s.at_ms)
            .collect();
        instants.dedup();
        let samples: Vec<TrueFreshnessSample> = instants
            .into_iter()
            .map(|at_ms| {
                let each = copies
                    .iter()
                    .map(|c| (c.changes.as_slice(), c.syncs.as_slice(), c.weight));
                let truth = true_freshness_at(each, at_ms);
                TrueFreshnessSample {
                    site_id,
                    at_ms,
                    copies: truth.copies as i64,
                    stale: truth.stale as i64,
                    mean_age_days: truth.mean_age_days,
                    share_stale: truth.share_stale,
                }
            })
            .collect();
        store.add_true_freshness_samples(&samples).await?;
        anyhow::Ok(samples)
    }
    .await;
    store.close().await;
    result.context("recording the true freshness samples")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::ChangeSignal;

    fn sample(at_ms: i64, copies: i64, age: f64) -> FreshnessSample {
        FreshnessSample {
            site_id: 1,
            at_ms,
            copies,
            known_stale: 0,
            weight: copies as f64,
            mean_expected_age_days: age,
            mean_p_stale: 0.1,
        }
    }

    fn truth(at_ms: i64, copies: i64) -> TrueFreshnessSample {
        TrueFreshnessSample {
            site_id: 1,
            at_ms,
            copies,
            stale: 0,
            mean_age_days: 0.0,
            share_stale: 0.0,
        }
    }

    /// An earlier demo's database (`freshet-demo.db` in a folder of its own) and its bytes.
    async fn earlier_demo_database() -> (tempfile::TempDir, PathBuf, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("freshet-demo.db");
        Store::open(&db).await.unwrap().close().await;
        let before = std::fs::read(&db).unwrap();
        (dir, db, before)
    }

    #[tokio::test]
    async fn a_database_a_run_is_using_is_not_cleared() {
        let (_dir, db, before) = earlier_demo_database().await;
        let running = run_lock::lock_for_run(&db).unwrap();
        let refused = take_demo_database(&db).await.unwrap_err();
        let message = format!("{refused:#}");
        assert!(
            message.contains("in use by another demo or run"),
            "{message}"
        );
        assert_eq!(
            std::fs::read(&db).unwrap(),
            before,
            "the running database was touched"
        );
        drop(running);
        let held = take_demo_database(&db).await.unwrap();
        assert!(
            held.run_lock.is_some(),
            "the demo holds the lock for its run and report"
        );
        assert!(
            run_lock::lock_for_run(&db).is_err(),
            "a run started beside the demo is refused"
        );
        assert!(
            !db.exists(),
            "once the run ended, the earlier demo database is replaced"
        );
    }

    /// Two demos on one PostgreSQL database: the second is refused before it clears anything,
    /// and once the first has let go (its connection closed, as a killed demo's is) the next
    /// may take it.
    #[tokio::test]
    async fn a_postgresql_database_a_demo_is_using_is_not_cleared() {
        let Some(server) = crate::store::test_support::postgres_server("demo_hold") else {
            return;
        };
        let name = format!("freshet_unit_demo_hold_{}", std::process::id());
        let url = crate::store::create_postgres_database(&server, &name)
            .await
            .unwrap();
        let db = PathBuf::from(&url);
        let running = take_demo_database(&db).await.unwrap();
        // What the running demo writes.
        let store = Store::open(&db).await.unwrap();
        let site = crate::store::sites::SiteRecord {
            name: "demo-site",
            weight: 1.0,
            requests_per_day: 100.0,
            source_file: None,
        };
        store.upsert_site(&site, 0).await.unwrap();
        let refused = match take_demo_database(&db).await {
            Ok(_) => panic!("a second demo took a database a demo is using"),
            Err(error) => format!("{error:#}"),
        };
        assert!(refused.contains("in use by another demo"), "{refused}");
        assert_eq!(
            store.site_names().await.unwrap(),
            vec!["demo-site".to_string()],
            "the running demo's rows were cleared"
        );
        drop(running);
        let mut next = None;
        for _ in 0..50 {
            // The server sees the first demo's connection close a moment later.
            if let Ok(taken) = take_demo_database(&db).await {
                next = Some(taken);
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(next.is_some(), "the database of a demo that ended is free");
        assert!(
            store.site_names().await.unwrap().is_empty(),
            "the next demo starts from an empty database"
        );
        store.close().await;
    }

    #[tokio::test]
    async fn a_refused_demo_leaves_the_earlier_database_as_it_was() {
        let (_dir, db, before) = earlier_demo_database().await;
        let args = Args {
            duration: 1.0,
            speed: 14_400.0,
            db: db.clone(),
            seed: 1,
            budget: 2.0,
            scale: 1.0,
            json: false,
            change_signal: ChangeSignal::default(),
            workers: 3,
        };
        let refused = run(args).await.unwrap_err();
        assert!(format!("{refused:#}").contains("PostgreSQL"), "{refused:#}");
        assert_eq!(
            std::fs::read(&db).unwrap(),
            before,
            "the earlier database was cleared"
        );
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_symlinked_demo_database_is_replaced_where_it_lies() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.db");
        Store::open(&real).await.unwrap().close().await;
        let link = dir.path().join("freshet-demo.db");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let _held = take_demo_database(&link).await.unwrap();
        assert!(!real.exists(), "the database the link led to is replaced");
        assert!(std::fs::symlink_metadata(&link).is_ok(), "the link stays");
    }

    #[test]
    fn an_instant_missing_a_workers_part_is_not_judged() {
        // Instant 1: three parts of 10 copies; instant 2: one part missing; instant 3: none.
        let samples = vec![
            sample(1, 10, 0.1),
            sample(1, 10, 0.1),
            sample(1, 10, 0.4),
            sample(2, 10, 0.1),
            sample(2, 10, 0.1),
        ];
        let truths = [truth(1, 30), truth(2, 30), truth(3, 30)];
        let truths: Vec<&TrueFreshnessSample> = truths.iter().collect();
        let complete = complete_instants(&samples, &truths);
        assert_eq!(complete.into_iter().collect::<Vec<_>>(), vec![1]);
        let at_one = BTreeSet::from([1]);
        let age = mean_sampled(&samples, &at_one, |s| s.mean_expected_age_days).unwrap();
        assert!((age - 0.2).abs() < 1e-12, "{age}");
        assert_eq!(
            mean_sampled(&samples, &BTreeSet::new(), |s| s.mean_p_stale),
            None
        );
    }
}
