//! A page its feed no longer lists: a document that keeps an entry older than the page's last
//! listed change, but not the page's, ends the page's wait at the read; a page that fell off
//! the end of a full feed stays covered.

use super::*;

const MIN: i64 = 60_000;

/// [`feed_and_pages`] with three pages the feed lists (changed at 1, 5 and 6 min) at its read
/// at 10 min and again at 60 min, each copied at 20 min, and the feed proven for each and worth
/// its reads: every page waits for it.
fn three_waiting_pages() -> (Scheduler, UrlKey, [UrlKey; 3]) {
    let (mut sched, feed, pages) = feed_and_pages(3);
    let pages = [pages[0], pages[1], pages[2]];
    let listed = [(pages[0], MIN), (pages[1], 5 * MIN), (pages[2], 6 * MIN)];
    sched.handle_feed(10 * MIN, feed, &listed);
    check_each(&mut sched, 20 * MIN, &pages.map(|p| (p, Seen::Copy)));
    sched.handle_feed(60 * MIN, feed, &listed);
    sched.urls[feed].feed_mut().worth = true;
    for page in pages {
        let coverage = sched.urls[page].evidence_mut().coverage.as_deref_mut();
        coverage.expect("covered").agreements = FEED_TRUST_CHECKS;
        assert_eq!(sched.covering_feed(page), Some(feed));
    }
    (sched, feed, pages)
}

/// The feed's next document keeps the change of 1 min but no longer lists the page changed at
/// 5 min: that page has left the feed (moved to a section it does not cover) and no longer
/// waits for it, from this read, with nothing of the read's span counted for it; the others
/// go on waiting.
#[test]
fn a_page_its_feed_no_longer_lists_stops_waiting_for_it() {
    let (mut sched, feed, [a, b, c]) = three_waiting_pages();
    let exposure_before = sched.urls[b].stats().exposure_days;
    let listed = [(a, MIN), (c, 6 * MIN)];
    sched.handle_feed(120 * MIN, feed, &listed);
    assert_eq!(sched.covering_feed(b), None, "b left the feed");
    assert!(!sched.summary(b).covered);
    assert_eq!(sched.covering_feed(a), Some(feed));
    assert_eq!(sched.covering_feed(c), Some(feed));
    assert_eq!(
        sched.urls[b].stats().exposure_days,
        exposure_before,
        "the read's span is left to b's checks"
    );
    assert_eq!(sched.watched(b), None);
    // Back to its plan: handed out before the pages that wait.
    let next = sched.poll_timeout().expect("b is queued");
    let req = sched.poll_request(next.max(120 * MIN)).expect("a request");
    assert_eq!(req.url, b);
}

/// A page whose last listed change is older than every entry a document keeps fell off the
/// end as the feed filled with newer changes: its next change brings it back, and it goes on
/// waiting. A document with an entry it cannot date (or dated after the read) may list the
/// page by that one: it tells nothing.
#[test]
fn a_page_that_fell_off_the_end_or_an_undated_listing_keeps_the_wait() {
    let (mut sched, feed, [a, b, c]) = three_waiting_pages();
    // Newer changes of b and c fill it; a's of 1 min is older than both.
    sched.handle_feed(120 * MIN, feed, &[(b, 100 * MIN), (c, 110 * MIN)]);
    assert_eq!(sched.covering_feed(a), Some(feed), "fell off the end");
    let listing = FeedListing {
        untimed: 1,
        ..FeedListing::of(&[(a, MIN), (c, 110 * MIN)])
    };
    sched.handle_feed_read(150 * MIN, feed, &[(a, MIN), (c, 110 * MIN)], listing);
    assert_eq!(
        sched.covering_feed(b),
        Some(feed),
        "an undated entry may be b's"
    );
}

/// A change a check saw, left to the feed's next read, counts once when that read shows the
/// page has left the feed, as when a read does not list a change it should have.
#[test]
fn a_change_left_to_a_feed_the_page_left_counts_once() {
    let (mut sched, feed, [a, b, c]) = three_waiting_pages();
    check(&mut sched, 90 * MIN, b, Seen::Changed);
    let changes = |sched: &Scheduler| -> f64 {
        (sched.urls[b].stats().changed_intervals.iter())
            .map(|(_, n)| n)
            .sum::<f64>()
            + sched.urls[b].stats().events
    };
    assert_eq!(changes(&sched), 1.0, "the check counted it, no read had");
    sched.handle_feed(120 * MIN, feed, &[(a, MIN), (c, 6 * MIN)]);
    assert!(!sched.summary(b).covered);
    assert_eq!(changes(&sched), 1.0, "{:?}", sched.urls[b].stats());
}

/// A wait taken up from the store (an earlier run's, another worker's) knows no listed change
/// of the page: the first read here that does not list it cannot tell, and keeps it.
#[test]
fn a_restored_wait_is_not_ended_by_a_read_that_cannot_tell() {
    let (mut sched, feed, [a, b, c]) = three_waiting_pages();
    if let Some(coverage) = sched.urls[b].evidence_mut().coverage.as_deref_mut() {
        coverage.listed_ms = None;
    }
    sched.handle_feed(120 * MIN, feed, &[(a, MIN), (c, 6 * MIN)]);
    assert_eq!(sched.covering_feed(b), Some(feed));
}
