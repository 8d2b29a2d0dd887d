//! The ledger's tests: the freshness samples judged at the instants of the grid.

use std::sync::Arc;

use super::*;
use crate::clock::ManualClock;
use crate::scheduler::{FeedListing, Fetched, Seen};

const QUARTER: i64 = 15 * 60_000;
const START: i64 = 20_000 * 86_400_000;

/// A ledger with one page (row 7) whose copy was taken at `START` and that is due again
/// `due_ms`, sampling on `clock`.
fn one_page_copied_at_start(clock: &Arc<ManualClock>, due_ms: i64) -> Ledger {
    let ledger = Ledger::new(SchedulerConfig::default());
    ledger.add_site(1, 1.0, 100.0, START);
    let row = UrlRow {
        checks: 1,
        last_checked_ms: Some(START),
        last_status: Some(200),
        copy_ms: Some(START),
        next_due_ms: Some(due_ms),
        ..UrlRow::for_tests(7, "page")
    };
    ledger.sync(&[row], START, |_| ("http://a.test".to_string(), 0, START));
    ledger.start_sampling(clock.clone(), QUARTER);
    ledger
}

#[test]
fn an_instant_is_judged_with_the_copies_held_then_not_with_a_check_that_landed_after_it() {
    let clock = Arc::new(ManualClock::new(START));
    let ledger = one_page_copied_at_start(&clock, START + QUARTER + 1);
    let instant = ledger.next_sample_ms().unwrap();
    assert_eq!(instant, START + QUARTER);
    let held_then = ledger.freshness(instant);
    assert!(held_then[0].mean_expected_age_days > 0.0);
    // The refresher's loop is late: a check lands ten minutes after the instant, before
    // anything took the instant's sample.
    let late = instant + 10 * 60_000;
    clock.set(late);
    let due = ledger.poll(late).expect("the page is due");
    assert_eq!(due.url_id, 7);
    ledger.fetched(late, 7, Fetched::at(late, Seen::Unchanged));
    let samples = ledger.take_samples();
    assert_eq!(samples.len(), 1);
    assert_eq!(samples[0].at_ms, instant);
    assert_eq!(samples[0], held_then[0]);
    assert!(
        ledger.take_samples().is_empty(),
        "an instant is judged once"
    );
    // The next instant is judged with the new copy, five minutes old then.
    clock.set(instant + QUARTER);
    let next = ledger.take_samples();
    assert_eq!(next.len(), 1);
    assert_eq!(next[0].at_ms, instant + QUARTER);
    assert!(next[0].mean_expected_age_days < samples[0].mean_expected_age_days);
}

#[test]
fn nothing_is_judged_before_sampling_starts() {
    let clock = Arc::new(ManualClock::new(START));
    let ledger = Ledger::new(SchedulerConfig::default());
    assert_eq!(ledger.next_sample_ms(), None);
    clock.set(START + 10 * QUARTER);
    assert!(ledger.take_samples().is_empty());
}

/// After a plan that fits the priors again, the plans handed to the store carry the estimates
/// of the pages checked before it, once: the reports read what the scheduler believes now.
#[test]
fn plans_carry_the_estimates_a_refit_moved_until_they_are_saved() {
    let checked = START + 86_400_000;
    let ledger = Ledger::new(SchedulerConfig::default());
    ledger.add_site(1, 1.0, 100_000.0, START);
    // Three pages (the fewest a site's Gamma is pooled from), copied days apart.
    let rows: Vec<UrlRow> = [7, 9, 10]
        .map(|id| UrlRow {
            checks: 1,
            last_checked_ms: Some(START - id * 86_400_000),
            last_status: Some(200),
            copy_ms: Some(START - id * 86_400_000),
            next_due_ms: Some(checked),
            host_id: id,
            ..UrlRow::for_tests(id, "page")
        })
        .into();
    let host = |row: &UrlRow| (format!("http://{}.test", row.host_id), 0, START);
    ledger.sync(&rows, START, host);
    for i in 0..3 {
        let due = ledger
            .poll(checked)
            .unwrap_or_else(|| panic!("page {i} is due"));
        ledger.fetched(checked, due.url_id, Fetched::at(checked, Seen::Unchanged));
    }
    // The first plan's priors are what the stored estimates were written under.
    assert!(!ledger.estimates_outdated());
    assert!(ledger.plans(0..10).iter().all(|plan| plan.rate.is_none()));
    // A URL found: the priors are fitted again with the plan that takes it in, on the
    // pages' days unchanged.
    let found = UrlRow {
        next_due_ms: Some(START),
        ..UrlRow::for_tests(8, "page")
    };
    ledger.sync(&[found], checked, host);
    let _ = ledger.poll(checked + crate::scheduler::DIRTY_REPLAN_GAP_MS);
    assert!(ledger.estimates_outdated());
    let outdated = ledger.outdated_estimates();
    let plans = ledger.plans(0..10);
    for id in [7, 9, 10] {
        let page = plans.iter().find(|plan| plan.url_id == id).unwrap();
        assert_eq!(page.rate.map(|rate| rate.after_check_ms), Some(checked));
    }
    let never_checked = plans.iter().find(|plan| plan.url_id == 8);
    assert!(never_checked.is_none_or(|plan| plan.rate.is_none()));
    ledger.estimates_saved(&outdated);
    assert!(!ledger.estimates_outdated());
    assert!(ledger.plans(0..10).iter().all(|plan| plan.rate.is_none()));
}

/// A read that sends a feed's waiting pages back to their plan hands out their plans at once,
/// no longer waiting, for the store (kept only with the next save of every plan, a kill before
/// it put them back to waiting at the next start); one that keeps them waiting says so too.
#[test]
fn a_read_that_ends_its_pages_waits_hands_out_their_plans_at_once() {
    const HOUR: i64 = 3_600_000;
    const FEED: i64 = 1;
    let ledger = Ledger::new(SchedulerConfig::default());
    ledger.add_site(1, 1.0, 200.0, START);
    // A feed of twenty entries read an hour before the start, covering five pages that each
    // changed about once a day over ten days of checks and waited for it.
    let shown = r#"{"stamped_reads":0,"listed":[],"most_entries":20,"entries_listed":800.0,"entries_kept":800.0}"#;
    let feed = UrlRow {
        checks: 50,
        last_checked_ms: Some(START - HOUR),
        last_status: Some(200),
        copy_ms: Some(START - HOUR),
        planned_per_day: Some(24.0),
        next_due_ms: Some(START),
        last_read_json: Some(shown.to_string()),
        ..UrlRow::for_tests(FEED, "feed")
    };
    let stats = r#"{"events":10.0,"exposure_days":10.0,"changed_intervals":[]}"#;
    let pages: Vec<UrlRow> = (2..7)
        .map(|id| UrlRow {
            checks: 10,
            last_checked_ms: Some(START - HOUR),
            last_status: Some(200),
            copy_ms: Some(START - HOUR),
            next_due_ms: Some(START + 86_400_000),
            stats: Some(stats.to_string()),
            waits_for_feed_id: Some(FEED),
            ..UrlRow::for_tests(id, "page")
        })
        .collect();
    let rows: Vec<UrlRow> = std::iter::once(feed).chain(pages).collect();
    ledger.sync(&rows, START, |_| ("http://a.test".to_string(), 0, START));
    let waits = |plans: &[PlanUpdate]| -> Vec<Option<i64>> {
        (2..7)
            .map(|id| {
                let plan = plans.iter().find(|plan| plan.url_id == id);
                plan.expect("the page's plan").waits_for_feed_id
            })
            .collect()
    };
    let due = ledger.poll(START).expect("the feed is due");
    assert_eq!(due.url_id, FEED);
    assert_eq!(waits(&ledger.plans(0..10)), vec![Some(FEED); 5], "restored");
    // Its first read reaches back to the read before: they go on waiting.
    ledger.fetched(START, FEED, Fetched::at(START, Seen::Copy));
    let listing = |oldest_ms: i64| FeedListing {
        entries: 20,
        oldest_ms: Some(oldest_ms),
        requested_ms: None,
    };
    let read = ledger.feed_read(START, FEED, &[], listing(START - 2 * HOUR));
    assert_eq!(read.plans[0].url_id, FEED, "the feed's own plan first");
    assert_eq!(waits(&read.plans), vec![Some(FEED); 5]);
    // The next is full and reaches back no further than half an hour: changes may have been
    // dropped, and the pages go back to their plan.
    let mut next = START;
    loop {
        next = ledger.timeout().expect("URLs stay queued").max(next + 1);
        if let Some(due) = ledger.poll(next) {
            if due.url_id == FEED {
                break;
            }
            ledger.fetched(next, due.url_id, Fetched::at(next, Seen::Unchanged));
        }
    }
    assert!(
        next - HOUR / 2 > START,
        "read {} min after",
        (next - START) / 60_000
    );
    ledger.fetched(next, FEED, Fetched::at(next, Seen::Copy));
    let read = ledger.feed_read(next, FEED, &[], listing(next - HOUR / 2));
    assert_eq!(waits(&read.plans), vec![None; 5], "back to their plan");
}
