//! The real refresher (`freshet run`'s scheduler, fetcher and store) against the demo's loopback
//! web, judged from the other side: the server's request log and the world's truth. Every
//! request counts (robots.txt, sitemaps, feeds, redirect hops, retries); none may exceed the
//! schedule's budget over the judged window, and the budget is spent. No wall-clock assertion:
//! on a slow machine the virtual clock still runs, and the budget is a ceiling the refresher
//! reaches only when it keeps up, so only a loose floor is asserted.

use std::time::Duration;

use freshet::demo::session::{SessionOptions, run_session};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_budget_holds_as_the_server_counts_it() {
    let dir = tempfile::tempdir().unwrap();
    let options = SessionOptions {
        duration: Duration::from_secs(8),
        speed: 14_400.0,
        db_path: Some(dir.path().join("demo.db")),
        ..SessionOptions::default()
    };
    let result = run_session(&options, freshet::refresher::run)
        .await
        .expect("a demo session with the real refresher");
    let outcome = &result.outcome;
    let budget = outcome.budget_requests;
    let made = outcome.freshet.requests as f64;
    // The ceiling: the site's bucket holds a quarter hour of budget, about 3 requests here.
    assert!(
        made <= budget * 1.02 + 3.0,
        "{made} requests against a budget of {budget:.0}"
    );
    assert!(
        made >= budget * 0.5,
        "{made} requests against a budget of {budget:.0}"
    );
    assert_eq!(outcome.politeness.disallowed_requests, 0);
    assert!(
        outcome.politeness.hosts.iter().all(|h| h.violations == 0),
        "{:?}",
        outcome.politeness.hosts
    );
    // Nothing the refresher made was lost: every page check it counted is in its database.
    let store = freshet::store::Store::open_existing(&result.db_path)
        .await
        .unwrap();
    let observations = store.observation_count().await.unwrap();
    store.close().await;
    assert!(
        observations as u64 >= result.summary.checks,
        "{observations} < {:?}",
        result.summary
    );
}
