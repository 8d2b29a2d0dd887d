//! The ledger's tests across workers: a wait a feed's reader on another worker ended, a
//! feed's read saved again after its host changed hands, a feed another worker made of a
//! sitemap's row.

use super::tests::{
    FEED, HOUR, START, feed_and_waiting_pages, gate, listing_of_five, one_site_ledger, page_waits,
    read_without_page_4,
};
use super::*;
use crate::scheduler::{Fetched, Seen};

/// A page whose feed is on a host another worker holds: that worker's read tells the page has
/// left the feed and keeps it with the feed's row. The page's holder, which kept the wait
/// aside, forgets it when it takes the row up at a round (the rows it writes no longer name
/// the feed), and does not take it up when it gains the feed's host; a start that reads the
/// feed's row does not keep it aside at all. Before, no one judged it while the hosts were
/// held apart, and a worker that gained both took the page up as waiting.
#[test]
fn a_wait_kept_aside_ends_when_the_feeds_reader_finds_the_page_left_it() {
    let gate = |row: &UrlRow| {
        let host = if row.host_id == 2 { "b" } else { "a" };
        (format!("http://{host}.test"), 0, START)
    };
    let worker = |holds: &str| {
        let held = crate::politeness::HeldHosts::new(1_000);
        held.hold(holds, START + 1_000 * HOUR);
        one_site_ledger().with_held_hosts(Some(held))
    };
    let mut rows = feed_and_waiting_pages();
    rows[0].host_id = 2;
    rows[0].last_read_json = Some(listing_of_five());
    // The feed's reader holds its host, b, and not the pages', a: page 4 is no longer listed.
    let reader = worker("http://b.test");
    reader.sync(&rows, START, gate);
    assert!(reader.poll(START - 1).is_none());
    let (entries, listing) = read_without_page_4();
    let read = reader.feed_read(START + HOUR, FEED, &entries, listing);
    assert_eq!(
        read.moved,
        vec![FEED],
        "the pages' plans are not the reader's to save"
    );
    let reads = reader.feed_reads(FEED).expect("the feed's reads");
    assert_eq!(reads.left, vec![4]);
    let mut feed_row = rows[0].clone();
    feed_row.last_read_json = Some(serde_json::to_string(&reads).unwrap());
    (feed_row.last_checked_ms, feed_row.copy_ms) = (Some(START + HOUR), Some(START + HOUR));
    // The pages' holder keeps their waits aside until it takes the feed's row up.
    let holder = worker("http://a.test");
    holder.sync(&rows, START, gate);
    assert!(holder.poll(START - 1).is_none());
    assert_eq!(page_waits(&holder), vec![Some(FEED); 5], "kept aside");
    let ended = holder.take_over(std::slice::from_ref(&feed_row), START + HOUR, gate);
    assert_eq!(ended, [4], "its plan to save at once");
    let expected = [Some(FEED), Some(FEED), None, Some(FEED), Some(FEED)];
    assert_eq!(page_waits(&holder), expected, "page 4's wait forgotten");
    let again = holder.take_over(std::slice::from_ref(&feed_row), START + HOUR, gate);
    assert!(again.is_empty(), "once");
    // A worker holding neither host leaves page 4's plan to its holder.
    let neither = worker("http://c.test");
    neither.sync(&rows, START, gate);
    assert!(neither.poll(START - 1).is_none());
    let ended = neither.take_over(std::slice::from_ref(&feed_row), START + HOUR, gate);
    assert!(ended.is_empty(), "{ended:?}");
    holder.set_held("http://b.test", Some(START + 2 * HOUR));
    holder.poll(START + 2 * HOUR);
    let covered = |ledger: &Ledger| -> Vec<bool> {
        let inner = ledger.lock();
        (2..7)
            .map(|id| {
                inner
                    .sched
                    .is_covered(inner.urls.key_of(id).expect("a page"))
            })
            .collect()
    };
    assert_eq!(covered(&holder), [true, true, false, true, true]);
    // A start on the rows as the holder found them, the page's still naming the feed.
    let restarted = worker("http://a.test");
    rows[0] = feed_row;
    restarted.sync(&rows, START + 2 * HOUR, gate);
    assert_eq!(page_waits(&restarted), expected, "not kept aside");
    restarted.set_held("http://b.test", Some(START + 2 * HOUR));
    restarted.poll(START + 2 * HOUR);
    assert_eq!(covered(&restarted), [true, true, false, true, true]);
    // A round brings page 4's row naming the feed (another worker's, who kept the wait aside
    // and had not taken the feed's row up yet): it does not wait.
    let again = worker("http://a.test");
    again.sync(&rows, START + 2 * HOUR, gate);
    again.take_over(&rows[3..4], START + 3 * HOUR, gate);
    assert_eq!(page_waits(&again), expected, "a round");
}

/// A feed's read in flight when its host changed hands saves what it showed after the gaining
/// worker took the feed's row up: that worker's round takes the row saved again (the same
/// copy) up, until it reads the feed itself, and its first read goes on from that listing.
/// (Kept to newer copies, it never took it up.) A page that read found to have left the feed,
/// waiting here as its row said, goes back to its plan.
#[test]
fn a_feeds_read_saved_again_after_its_host_was_gained_is_taken_up() {
    let ledger = gained_holding_a();
    let rows = feed_and_waiting_pages();
    let mut saved = rows[0].clone();
    saved.last_read_json =
        Some(r#"{"stamped_reads":1,"listed":[2,3],"left":[4],"most_entries":20}"#.into());
    assert!(ledger.poll(START - 1).is_none());
    assert_eq!(page_waits(&ledger), vec![Some(FEED); 5], "as the rows say");
    let waiting_due = ledger.plans_of(&[4])[0].next_due_ms;
    let taken = ledger.newer_than_known(vec![saved.clone(), rows[1].clone()]);
    assert_eq!(taken.len(), 1, "the feed's row saved again, not a page's");
    let ended = ledger.take_over(&taken, START + HOUR, gate);
    assert_eq!(ended, [4], "its plan to save at once");
    assert_eq!(ledger.feed_reads(FEED).expect("the feed").stamped_reads, 1);
    let expected = [Some(FEED), Some(FEED), None, Some(FEED), Some(FEED)];
    assert_eq!(page_waits(&ledger), expected, "page 4 left the feed");
    // Page 4 is due by its own plan at once, not when its wait was to end.
    let plan = &ledger.plans_of(&[4])[0];
    let by_plan = START - HOUR + (86_400_000.0 / plan.planned_per_day) as i64;
    assert!(plan.next_due_ms <= by_plan + 1, "{plan:?}: {by_plan}");
    assert!(plan.next_due_ms < waiting_due, "{plan:?}: {waiting_due}");
    {
        let inner = ledger.lock();
        let feed = inner.urls.key_of(FEED).expect("the feed");
        assert_eq!(inner.stored_listings[&feed].listed, [(2, None), (3, None)]);
    }
    // Fetched here with its copy (its read not handled yet: helper-122), its own row is not
    // taken up; a failed fetch here writes no copy, and the row the previous holder saves
    // again is still taken up (helper-123).
    let at = START + 2 * HOUR;
    for (seen, taken) in [(Seen::Failed, 1), (Seen::Unchanged, 0)] {
        let ledger = gained_holding_a();
        assert_eq!(ledger.poll(at).map(|due| due.url_id), Some(FEED));
        ledger.fetched(at, FEED, Fetched::at(at, seen));
        let row = match seen {
            Seen::Failed => saved.clone(),
            _ => UrlRow {
                copy_ms: Some(at),
                last_checked_ms: Some(at),
                ..saved.clone()
            },
        };
        assert_eq!(ledger.newer_than_known(vec![row]).len(), taken, "{seen:?}");
    }
}

/// A ledger holding `a.test`, filled from [`feed_and_waiting_pages`].
fn gained_holding_a() -> Ledger {
    let held = crate::politeness::HeldHosts::new(1_000);
    held.hold("http://a.test", START + 1_000 * HOUR);
    let ledger = one_site_ledger().with_held_hosts(Some(held));
    ledger.sync(&feed_and_waiting_pages(), START, gate);
    ledger
}

/// A feed on a host held here whose row another worker made from a sitemap's (its old id is
/// below those read as new) is taken up from its written row; an unknown page is not.
#[test]
fn a_sitemap_made_a_feed_elsewhere_is_taken_up_from_its_row() {
    let mut rows = feed_and_waiting_pages();
    let feed = rows.remove(0);
    let ledger = one_site_ledger();
    ledger.sync(&rows, START, gate);
    let unknown_page = UrlRow::for_tests(9, "page");
    let taken = ledger.newer_than_known(vec![feed, unknown_page, rows[0].clone()]);
    assert_eq!(taken.iter().map(|r| r.id).collect::<Vec<_>>(), [FEED]);
    ledger.take_over(&taken, START, gate);
    assert!(
        ledger.feed_reads(FEED).is_some(),
        "a feed of the scheduler's now"
    );
}

/// URLs whose rows another worker's start gave another kind, handed out as their rows say from
/// then on, each under a new key: a page made a feed is read as a feed (refused only, it was
/// read by no one until this worker started again); a feed made a page is checked as one, the
/// pages it covered waiting for it no more; a row made a sitemap's leaves the scheduler.
#[test]
fn a_url_whose_row_changed_kind_is_handed_out_as_its_row_says() {
    let ledger = one_site_ledger();
    ledger.sync(&feed_and_waiting_pages(), START, gate);
    assert!(ledger.poll(START - 1).is_none());
    assert_eq!(page_waits(&ledger), vec![Some(FEED); 5]);
    let due_now = |id: i64, kind: &str| UrlRow {
        next_due_ms: Some(START),
        ..UrlRow::for_tests(id, kind)
    };
    // The feed is handed out as a feed; its row is a page's now.
    let due = ledger.poll(START).expect("the feed is due");
    assert_eq!((due.url_id, due.kind), (FEED, UrlKind::Feed));
    assert!(ledger.rekey(START, &due_now(FEED, "page"), gate));
    assert_eq!(page_waits(&ledger), vec![None; 5], "no feed covers them");
    // Page 2 (not handed out) is a feed's now; page 3 a sitemap's.
    assert!(ledger.rekey(START, &due_now(2, "feed"), gate));
    assert!(!ledger.rekey(START, &due_now(3, "sitemap"), gate));
    // The feed was handed out: its host is free again.
    let mut handed = Vec::new();
    for at in (START..START + 3 * 86_400_000).step_by(60_000) {
        if let Some(due) = ledger.poll(at) {
            if !handed.contains(&(due.url_id, due.kind)) {
                handed.push((due.url_id, due.kind));
            }
            ledger.fetched(at, due.url_id, Fetched::at(at, Seen::Unchanged));
        }
    }
    handed.sort_by_key(|&(id, kind)| (id, kind == UrlKind::Feed));
    assert_eq!(
        handed,
        [
            (FEED, UrlKind::Page),
            (2, UrlKind::Feed),
            (4, UrlKind::Page),
            (5, UrlKind::Page),
            (6, UrlKind::Page)
        ],
        "as its row says; none under an old key"
    );
}
