//! A check of a page whose span a feed's reads counted in part ([`FeedCounted`]): it counts
//! the rest of its span, or nothing when an overflowed read left part of it unseen.

use super::announcements::checked_when_due;
use super::*;

/// A feed covering page `p` (listed at first at a change before its copy), read twice an hour
/// apart after the copies: the second read counted the hour after the first as `p`'s silence,
/// past its copy. Gives the scheduler, the feed, `p`, another page `q` and the second read's
/// time.
fn covered_and_counted() -> (Scheduler, UrlKey, UrlKey, UrlKey, i64) {
    let (mut sched, feed, pages) = feed_and_pages(2);
    let (p, q) = (pages[0], pages[1]);
    let now = copies_of_all(&mut sched, &[feed, p, q]);
    let listing = FeedListing {
        entries: 2,
        oldest_ms: Some(0),
        newest_ms: None,
        requested_ms: None,
        kept_by_date: true,
        ttl_ms: None,
    };
    let listed = [(p, 1), (q, 2)];
    sched.handle_feed_read(now + HOUR, feed, &listed, listing);
    let second = now + 2 * HOUR;
    let before = sched.urls[p].stats().exposure_days;
    sched.handle_feed_read(second, feed, &listed, listing);
    let counted = sched.urls[p].stats().exposure_days - before;
    assert!(
        (counted - 1.0 / 24.0).abs() < 1e-9,
        "the second read counted {counted} d"
    );
    (sched, feed, p, q, second)
}

/// A check that finds the page unchanged adds the time after the read as silence: not the
/// whole span since the copy (the read counted its part), not nothing.
#[test]
fn an_unchanged_check_counts_the_silence_after_the_read() {
    let (mut sched, _, p, _, read) = covered_and_counted();
    let before = sched.urls[p].stats().clone();
    let check = checked_when_due(&mut sched, read + HOUR / 2, p, Seen::Unchanged);
    assert!(check > read);
    let after = sched.urls[p].stats();
    let rest = (check - read) as f64 / DAY as f64;
    assert!(
        (after.exposure_days - before.exposure_days - rest).abs() < 1e-9,
        "{before:?} then {after:?}, {rest} d after the read"
    );
    assert_eq!(after.events, before.events);
    assert_eq!(after.changed_intervals, before.changed_intervals);
}

/// After a read that overflowed (full, every entry newer than the read before: what it dropped
/// is unseen), a check counts nothing of its span, whatever it saw: counting only the rest as
/// silence, or the change after the reads, leaned one way or the other.
#[test]
fn a_check_after_an_overflowed_read_counts_nothing() {
    let (mut sched, feed, p, q, read) = covered_and_counted();
    let overflowed = read + HOUR;
    let newer = [(q, overflowed - 20 * 60_000), (q, overflowed - 10 * 60_000)];
    let listing = FeedListing {
        entries: 2,
        oldest_ms: Some(overflowed - 20 * 60_000),
        newest_ms: None,
        requested_ms: None,
        kept_by_date: true,
        ttl_ms: None,
    };
    sched.handle_feed_read(overflowed, feed, &newer, listing);
    assert_eq!(
        sched.urls[feed].feed().blind_until_ms,
        Some(overflowed - 20 * 60_000)
    );
    let before = sched.urls[p].stats().clone();
    // (A change is not counted either: `FeedCounted::counts_change`.)
    let check = checked_when_due(&mut sched, overflowed + HOUR / 2, p, Seen::Unchanged);
    assert!(check > overflowed);
    assert_eq!(*sched.urls[p].stats(), before);
}
