//! The demo's noise-only pages (the `live` host: ads, counters, CSRF tokens and "updated N
//! minutes ago" lines change all the time, the article about once a month) against the real
//! refresher, once learning content changes (`change_signal = "content"`, the default) and once
//! learning byte changes, judged from the server's request log and the run's database.
//!
//! Learning the content, freshet must learn a rate near zero for them and spend a smaller share
//! of its requests on them than when it learns the bytes. No wall-clock assertion: on a slow
//! machine the virtual clock still runs and both runs are slowed alike.

use std::time::Duration;

use freshet::demo::noise::{NoisePages, learnt_noise_rates};
use freshet::demo::session::{SessionOptions, run_session};
use freshet::schedule::ChangeSignal;
use freshet::store::Store;

/// One demo session with `signal`; the noise pages' figures with their learnt rates.
async fn noise_pages(signal: ChangeSignal) -> NoisePages {
    let dir = tempfile::tempdir().unwrap();
    let options = SessionOptions {
        duration: Duration::from_secs(20),
        speed: 28_800.0,
        scale: 0.5,
        db_path: Some(dir.path().join("demo.db")),
        change_signal: signal,
        ..SessionOptions::default()
    };
    let result = run_session(&options, freshet::refresher::run)
        .await
        .expect("a demo session with the real refresher");
    let store = Store::open_existing(&result.db_path).await.unwrap();
    let learnt = learnt_noise_rates(&result.world, &store).await.unwrap();
    store.close().await;
    let mut noise = result.outcome.noise_pages.clone();
    noise.set_learnt(&learnt);
    assert_eq!(result.outcome.politeness.disallowed_requests, 0);
    noise
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn noise_only_pages_learn_a_content_rate_near_zero_and_take_less_of_the_budget() {
    let content = noise_pages(ChangeSignal::Content).await;
    let bytes = noise_pages(ChangeSignal::Bytes).await;
    eprintln!("content {content:?}\nbytes {bytes:?}");
    assert!(content.pages > 0 && content.requests > 0, "{content:?}");
    // Their articles change about once a month; their noise every 20 to 60 minutes.
    assert!(content.mean_true_rate < 0.2, "{content:?}");
    let learnt = content
        .mean_learnt_content_rate
        .expect("learnt from checks");
    assert!(
        learnt < 0.5,
        "content rate learnt {learnt}/day: {content:?}"
    );
    let scheduler = content.mean_learnt_rate.expect("the scheduler's rate");
    assert!(scheduler < 1.0, "{content:?}");
    // Learning the bytes, the same pages look busy...
    let busy = bytes.mean_learnt_rate.expect("the scheduler's rate");
    assert!(
        busy > 3.0 * scheduler,
        "bytes {bytes:?}\ncontent {content:?}"
    );
    // ...and take a larger share of the requests.
    assert!(
        content.share_of_requests < bytes.share_of_requests,
        "content {content:?}\nbytes {bytes:?}"
    );
}
