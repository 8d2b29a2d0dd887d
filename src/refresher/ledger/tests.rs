//! The ledger's tests: the freshness samples judged at the instants of the grid.

use std::sync::Arc;

use super::*;
use crate::clock::ManualClock;
use crate::scheduler::{FeedListing, Fetched, Seen};
use crate::store::summary::PlanUpdate;

const QUARTER: i64 = 15 * 60_000;
pub(super) const START: i64 = 20_000 * 86_400_000;

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

pub(super) const HOUR: i64 = 3_600_000;
pub(super) const FEED: i64 = 1;

/// The rows of a feed (row 1) and pages 2 to 6, as a run before left them: a feed of twenty
/// entries read an hour before the start, covering five pages that each changed about once a
/// day over ten days of checks and waited for it.
pub(super) fn feed_and_waiting_pages() -> Vec<UrlRow> {
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
    std::iter::once(feed).chain(pages).collect()
}

/// A read that sends a feed's waiting pages back to their plan (a change a check saw that it
/// does not list, an overflow) names them for the store to save their plans at once, no longer
/// waiting (saved only with every plan, a kill before that put them back to waiting at the next
/// start); a read that moves no wait names only the feed. Each check hands the store the page's
/// wait with its plan.
#[test]
fn a_read_that_ends_its_pages_waits_hands_out_their_plans_at_once() {
    let ledger = Ledger::new(SchedulerConfig::default());
    ledger.add_site(1, 1.0, 200.0, START);
    let rows = feed_and_waiting_pages();
    ledger.sync(&rows, START, |_| ("http://a.test".to_string(), 0, START));
    let waits = |plans: &[PlanUpdate]| -> Vec<Option<i64>> {
        (2..7)
            .map(|id| {
                let plan = plans.iter().find(|plan| plan.url_id == id);
                plan.expect("the page's plan").waits_for_feed_id
            })
            .collect()
    };
    // (The first poll plans, before anything is due.)
    assert!(ledger.poll(START - 1).is_none());
    assert_eq!(waits(&ledger.plans(0..10)), vec![Some(FEED); 5], "restored");
    let listing = |oldest_ms: i64| FeedListing {
        entries: 20,
        oldest_ms: Some(oldest_ms),
        newest_ms: None,
        requested_ms: None,
        kept_by_date: true,
        ttl_ms: None,
    };
    let waiting_checks = std::cell::Cell::new(0);
    // Hands out what is due until the feed's turn, checking the pages (`changed`: whether the
    // first of them has changed); the feed's time.
    let feed_turn = |mut now: i64, changed: &mut Option<i64>| -> i64 {
        loop {
            now = ledger.timeout().expect("URLs stay queued").max(now + 1);
            assert!(now < START + 30 * 86_400_000, "the feed's turn came");
            let Some(due) = ledger.poll(now) else {
                continue;
            };
            if due.url_id == FEED {
                ledger.fetched(now, FEED, Fetched::at(now, Seen::Copy));
                return now;
            }
            let seen = match changed {
                None => {
                    *changed = Some(due.url_id);
                    Seen::Changed
                }
                Some(_) => Seen::Unchanged,
            };
            let after = ledger.fetched(now, due.url_id, Fetched::at(now, seen));
            // The store keeps the wait with the check: none for the page whose change awaits
            // the feed's judgement (or whose wait a read ended), the feed for the others.
            let kept = (*changed != Some(due.url_id)).then_some(FEED);
            let after = after.expect("a page of the ledger");
            assert_eq!(after.waits_for_feed_id, kept, "page {}", due.url_id);
            waiting_checks.set(waiting_checks.get() + usize::from(kept.is_some()));
        }
    };
    // Reads that reach back past the read before (nothing dropped) move only the feed's own
    // plan, until one comes after a check saw a change the feed had not listed: that read
    // does not list it either, and the page waits no more.
    let (mut last_read, mut changed) = (START - HOUR, None);
    let read = loop {
        let read_at = feed_turn(last_read, &mut changed);
        let read = ledger.feed_read(read_at, FEED, &[], listing(last_read - HOUR));
        last_read = read_at;
        if changed.is_some() {
            break read;
        }
        assert_eq!(read.moved, vec![FEED], "nothing moved but the feed's plan");
    };
    let changed = changed.expect("a page was checked");
    assert_eq!(read.moved, vec![FEED, changed]);
    assert_eq!(ledger.plans_of(&read.moved)[1].waits_for_feed_id, None);
    // A read full and reaching back only halfway to the read before: changes may have been
    // dropped, and the other pages go back to their plan.
    let read_at = feed_turn(last_read, &mut Some(changed));
    let halfway = last_read + (read_at - last_read) / 2;
    assert!(halfway > last_read);
    assert!(waiting_checks.get() > 0, "a waiting page was checked");
    let read = ledger.feed_read(read_at, FEED, &[], listing(halfway));
    let others: Vec<i64> = (2..7).filter(|&id| id != changed).collect();
    assert_eq!(read.moved[1..], others);
    let plans = ledger.plans_of(&read.moved);
    assert!(
        plans[1..]
            .iter()
            .all(|plan| plan.waits_for_feed_id.is_none())
    );
}

/// A ledger of one site, which [`feed_and_waiting_pages`] are of.
pub(super) fn one_site_ledger() -> Ledger {
    let ledger = Ledger::new(SchedulerConfig::default());
    ledger.add_site(1, 1.0, 200.0, START);
    ledger
}

/// The one host's politeness key, interval and opening.
pub(super) fn gate(_: &UrlRow) -> (String, i64, i64) {
    ("http://a.test".to_string(), 0, START)
}

/// The feed each of pages 2 to 6 waits for, as their plans keep it.
pub(super) fn page_waits(ledger: &Ledger) -> Vec<Option<i64>> {
    let ids: Vec<i64> = (2..7).collect();
    (ledger.plans_of(&ids).iter())
        .map(|plan| plan.waits_for_feed_id)
        .collect()
}

/// Rows taken over from another worker (its checks, read at a round, or the rows of a host
/// this worker gains) bring each page's wait as that worker left it: a wait known here only
/// from a start goes when the row no longer names the feed, and one the row names comes back.
/// Taken over as they were at the start, the pages waited for announcements the feed had
/// been shown to miss.
#[test]
fn pages_taken_over_wait_as_their_rows_say() {
    let ledger = one_site_ledger();
    let mut rows = feed_and_waiting_pages();
    ledger.sync(&rows, START, gate);
    let waits = page_waits;
    assert!(ledger.poll(START - 1).is_none());
    assert_eq!(waits(&ledger), vec![Some(FEED); 5], "restored");
    // The other worker's check of page 2 saw a change its feed had not listed, and its read
    // then ended the waits of pages 3 and 4.
    for row in &mut rows[1..4] {
        row.waits_for_feed_id = None;
        row.last_checked_ms = Some(START + HOUR);
        row.copy_ms = Some(START + HOUR);
    }
    ledger.take_over(&rows, START + 2 * HOUR, gate);
    let expected = [None, None, None, Some(FEED), Some(FEED)];
    assert_eq!(waits(&ledger), expected);
    // Its later read proved the feed again for page 3.
    rows[2].waits_for_feed_id = Some(FEED);
    ledger.take_over(&rows[2..3], START + 3 * HOUR, gate);
    let expected = [None, Some(FEED), None, Some(FEED), Some(FEED)];
    assert_eq!(waits(&ledger), expected);
}

/// A page whose row waits for a feed not known yet waits for it once the feed's row comes,
/// unless a later row of the page no longer names it.
#[test]
fn a_wait_for_a_feed_not_known_yet_follows_the_pages_latest_row() {
    let ledger = one_site_ledger();
    let mut rows = feed_and_waiting_pages();
    let feed = rows.remove(0);
    ledger.sync(&rows, START, gate);
    rows[0].waits_for_feed_id = None;
    ledger.take_over(&rows[..1], START, gate);
    ledger.sync(&[feed], START, gate);
    assert!(ledger.poll(START - 1).is_none());
    let expected = [None, Some(FEED), Some(FEED), Some(FEED), Some(FEED)];
    assert_eq!(page_waits(&ledger), expected);
}

/// A read that lands after its host went to another worker (it was in flight at the
/// handover) names no plan to save: the feed's, saved, went over the new holder's.
#[test]
fn a_read_landing_after_its_host_went_names_no_plan_to_save() {
    let ledger = one_site_ledger();
    let rows = feed_and_waiting_pages();
    ledger.sync(&rows, START, gate);
    assert!(ledger.poll(START - 1).is_none());
    let listing = FeedListing {
        entries: 20,
        oldest_ms: Some(START - 2 * HOUR),
        ..FeedListing::default()
    };
    let read = ledger.feed_read(START + HOUR, FEED, &[], listing);
    assert_eq!(read.moved, vec![FEED], "held here");
    ledger.set_held("http://a.test", None);
    let read = ledger.feed_read(START + 2 * HOUR, FEED, &[], listing);
    assert!(read.moved.is_empty(), "{:?}", read.moved);
}

/// When pages 2 to 6 last changed, as the feed's stored last read listed them.
fn listed_changes() -> Vec<i64> {
    (2..7).map(|id| START - 20 * HOUR + id * HOUR).collect()
}

/// The feed's stored last read: pages 2 to 6, changed at `listed_changes()`.
pub(super) fn listing_of_five() -> String {
    let dates: Vec<String> = (listed_changes().iter()).map(|at| at.to_string()).collect();
    format!(
        r#"{{"stamped_reads":0,"listed":[2,3,4,5,6],"listed_ms":[{}],"most_entries":20}}"#,
        dates.join(",")
    )
}

/// A read of the feed, kept by date, that lists pages 2 to 6 at their changes but page 4's,
/// with older and newer entries: page 4 has left it.
pub(super) fn read_without_page_4() -> (Vec<(i64, i64)>, FeedListing) {
    let before = listed_changes();
    let entries = [2, 3, 5, 6]
        .map(|id| (id, before[id as usize - 2]))
        .to_vec();
    let listing = FeedListing {
        entries: 4,
        oldest_ms: Some(before[0]),
        newest_ms: Some(before[4]),
        requested_ms: None,
        kept_by_date: true,
        ttl_ms: None,
    };
    (entries, listing)
}

/// The feed's row keeps the change its last read listed of each waiting page: a run started
/// on it tells at its first read that a page has left the feed, and saves the page's plan
/// no longer waiting; a read of its own keeps the dates for the next run.
#[test]
fn a_page_that_left_its_feed_while_stopped_stops_waiting_at_the_first_read() {
    let ledger = one_site_ledger();
    let mut rows = feed_and_waiting_pages();
    rows[0].last_read_json = Some(listing_of_five());
    ledger.sync(&rows, START, gate);
    assert!(ledger.poll(START - 1).is_none());
    assert_eq!(page_waits(&ledger), vec![Some(FEED); 5], "restored");
    // Page 4 is no longer listed; pages 2 and 3 older than it are.
    let (entries, listing) = read_without_page_4();
    let read = ledger.feed_read(START + HOUR, FEED, &entries, listing);
    assert!(read.moved.contains(&4), "{:?}", read.moved);
    let expected = [Some(FEED), Some(FEED), None, Some(FEED), Some(FEED)];
    assert_eq!(page_waits(&ledger), expected);
    let kept = ledger.feed_reads(FEED).expect("the feed's reads");
    assert_eq!(kept.listed, vec![2, 3, 5, 6]);
    assert_eq!(kept.listed_ms[0], Some(listed_changes()[0]));
}

/// A page whose feed is on another host, held elsewhere when the rows were added (a start
/// adds every row before it gains its first host), waits for it once this worker gains the
/// feed's host, as its row says, whether the gain takes the host's rows over first (a round:
/// taken over while still elsewhere, then held) or not (the first, at a start); one whose
/// later row no longer names the feed does not. Meanwhile the rows this worker writes (a
/// check's, the save of every plan) go on naming the feed, so the wait is not lost either.
#[test]
fn a_wait_on_a_feed_of_a_host_held_elsewhere_is_taken_up_when_it_is_gained() {
    for (round, saved) in [(true, false), (false, false), (true, true)] {
        let held = crate::politeness::HeldHosts::new(1_000);
        held.hold("http://a.test", START + 1_000 * HOUR);
        let ledger = one_site_ledger().with_held_hosts(Some(held));
        let mut rows = feed_and_waiting_pages();
        rows[0].host_id = 2;
        let gate = |row: &UrlRow| {
            let host = if row.host_id == 2 { "b" } else { "a" };
            (format!("http://{host}.test"), 0, START)
        };
        ledger.sync(&rows, START, gate);
        assert!(ledger.poll(START - 1).is_none());
        assert_eq!(
            page_waits(&ledger),
            vec![Some(FEED); 5],
            "the feed's host elsewhere: kept aside, and the rows name it still"
        );
        // Page 3's row no longer names the feed (its holder's read ended the wait), and page 4
        // is checked here, its row written with the wait kept aside.
        rows[2].waits_for_feed_id = None;
        rows[2].copy_ms = Some(START + HOUR);
        rows[2].last_checked_ms = Some(START + HOUR);
        ledger.take_over(&rows[2..3], START + HOUR, gate);
        let after = ledger.fetched(START + HOUR, 4, Fetched::at(START + HOUR, Seen::Unchanged));
        assert_eq!(after.expect("page 4").waits_for_feed_id, Some(FEED));
        if saved {
            let plans = ledger.plans(0..10);
            let waits: Vec<Option<i64>> = (plans.iter())
                .filter(|plan| plan.url_id != FEED)
                .map(|plan| plan.waits_for_feed_id)
                .collect();
            assert_eq!(
                waits,
                [Some(FEED), None, Some(FEED), Some(FEED), Some(FEED)]
            );
        }
        if round {
            ledger.set_held("http://b.test", None);
            ledger.take_over(&rows[..1], START + 2 * HOUR, gate);
        }
        ledger.set_held("http://b.test", Some(START + 2 * HOUR));
        // (The next plan finds the feed worth reading again.)
        ledger.poll(START + 2 * HOUR);
        let inner = ledger.lock();
        let feed = inner.urls.key_of(FEED);
        let waits: Vec<Option<UrlKey>> = (2..7)
            .map(|id| {
                let page = inner.urls.key_of(id).expect("a page");
                inner.sched.covering_feed(page)
            })
            .collect();
        let want = [feed, None, feed, feed, feed];
        assert_eq!(waits, want, "round: {round}, saved: {saved}");
    }
}
