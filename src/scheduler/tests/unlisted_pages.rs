//! A page its feed no longer lists: a document of a feed kept by date that keeps two of the
//! site's entries older than the page's last listed change, and one as new, but not the
//! page's, ends the page's wait at the read; a page that fell off the end of a full feed, one
//! past a single entry dated wrong, and one missing from a stale document stay covered.

use super::url_state::Unannounced;
use super::*;

const MIN: i64 = 60_000;

/// [`feed_and_pages`] with five pages the feed lists (changed at 1, 2, 3, 5 and 6 min) at its
/// read at 10 min and again at 60 min, each copied at 20 min, and the feed proven for each and
/// worth its reads: every page waits for it.
fn five_waiting_pages() -> (Scheduler, UrlKey, [UrlKey; 5]) {
    let (mut sched, feed, pages) = feed_and_pages(5);
    let pages: [UrlKey; 5] = pages.try_into().expect("five");
    let listed: Vec<(UrlKey, i64)> = (pages.iter().copied())
        .zip([1, 2, 3, 5, 6].map(|at| at * MIN))
        .collect();
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

/// The feed's next document keeps the changes of 1 and 2 min but no longer lists the page
/// changed at 3 min: that page has left the feed (moved to a section it does not cover) and
/// no longer waits for it, from this read, with nothing of the read's span counted for it;
/// the others go on waiting.
#[test]
fn a_page_its_feed_no_longer_lists_stops_waiting_for_it() {
    let (mut sched, feed, [a, b, c, d, e]) = five_waiting_pages();
    let exposure_before = sched.urls[c].stats().exposure_days;
    let listed = [(a, MIN), (b, 2 * MIN), (d, 5 * MIN), (e, 6 * MIN)];
    sched.handle_feed(120 * MIN, feed, &listed);
    assert_eq!(sched.covering_feed(c), None, "c left the feed");
    assert!(!sched.summary(c).covered);
    for page in [a, b, d, e] {
        assert_eq!(sched.covering_feed(page), Some(feed));
    }
    assert_eq!(
        sched.urls[c].stats().exposure_days,
        exposure_before,
        "the read's span is left to c's checks"
    );
    assert_eq!(sched.watched(c), None);
    // Back to its plan: handed out before the pages that wait.
    let next = sched.poll_timeout().expect("c is queued");
    let req = sched.poll_request(next.max(120 * MIN)).expect("a request");
    assert_eq!(req.url, c);
}

/// What a document cannot tell. A page whose last listed change is older than the entries it
/// keeps fell off the end as the feed filled with newer changes (its next change brings it
/// back), and one entry older than a page's is not enough (a pinned post, a date that is
/// wrong). A stale document (a cache's copy from before the page's change was listed) lists
/// nothing as new as it. And a document not kept by date (an entry without a date, or
/// entries in another order) may list the page by an entry not among the timed ones.
#[test]
fn pages_missing_from_a_document_that_cannot_tell_keep_their_wait() {
    let (mut sched, feed, [a, b, c, d, e]) = five_waiting_pages();
    // Newer changes of d and e fill it; a, b and c fell off the end.
    sched.handle_feed(120 * MIN, feed, &[(d, 100 * MIN), (e, 110 * MIN)]);
    // One old entry (a's) kept: b and c are still older than the second oldest.
    sched.handle_feed(130 * MIN, feed, &[(a, MIN), (d, 100 * MIN), (e, 110 * MIN)]);
    for page in [a, b, c] {
        assert_eq!(sched.covering_feed(page), Some(feed), "fell off the end");
    }
    // Stale: d's and e's newer changes not listed, nothing as new as them.
    sched.handle_feed(140 * MIN, feed, &[(a, MIN), (b, 2 * MIN), (c, 3 * MIN)]);
    assert_eq!(sched.covering_feed(d), Some(feed), "a stale document");
    let listed = [(a, MIN), (b, 2 * MIN), (e, 110 * MIN)];
    let listing = FeedListing {
        kept_by_date: false,
        ttl_ms: None,
        ..FeedListing::of(&listed)
    };
    sched.handle_feed_read(150 * MIN, feed, &listed, listing);
    assert_eq!(sched.covering_feed(c), Some(feed), "not kept by date");
}

/// The change a page's last read listed is the one a document must keep older entries than:
/// a page listed anew at 50 min is missing from a document whose older entries are 10 and
/// 20 min old; and a feed that dated it back to 3 min at its next read (a cache of another
/// date) makes 3 min the one again.
#[test]
fn a_page_is_judged_by_the_change_its_last_read_listed() {
    let (mut sched, feed, [a, b, c, d, e]) = five_waiting_pages();
    let keeps = [(d, 10 * MIN), (e, 20 * MIN), (a, 60 * MIN)];
    sched.handle_feed(
        90 * MIN,
        feed,
        &[(b, 2 * MIN), (c, 50 * MIN), (a, 60 * MIN)],
    );
    sched.handle_feed(120 * MIN, feed, &[(c, 3 * MIN), (a, 60 * MIN)]);
    sched.handle_feed(150 * MIN, feed, &keeps);
    assert_eq!(
        sched.covering_feed(c),
        Some(feed),
        "dated back, then fell off"
    );
    let (mut sched, feed, [a, b, c, d, e]) = five_waiting_pages();
    sched.handle_feed(
        90 * MIN,
        feed,
        &[(b, 2 * MIN), (c, 50 * MIN), (a, 60 * MIN)],
    );
    let keeps = [(d, 10 * MIN), (e, 20 * MIN), (a, 60 * MIN)];
    sched.handle_feed(150 * MIN, feed, &keeps);
    assert!(!sched.summary(c).covered, "listed at 50, left the feed");
    assert_eq!(sched.covering_feed(b), Some(feed), "b fell off the end");
}

/// A change a check saw, left to the feed's next read and not counted by the check (a read
/// had counted its span), counts when that read shows the page has left the feed, as when a
/// read does not list a change it should have; one the check counted does not count again.
#[test]
fn a_change_left_to_a_feed_the_page_left_counts_once() {
    let changes = |sched: &Scheduler, page: UrlKey| -> f64 {
        let stats = sched.urls[page].stats();
        stats.changed_intervals.iter().map(|(_, n)| n).sum::<f64>() + stats.events
    };
    for counted in [false, true] {
        let (mut sched, feed, [a, b, c, d, e]) = five_waiting_pages();
        let before = changes(&sched, c);
        let coverage = sched.urls[c].evidence_mut().coverage.as_deref_mut();
        coverage.expect("covered").unannounced = Some(Unannounced {
            from_ms: 20 * MIN,
            to_ms: 90 * MIN,
            counted,
        });
        let listed = [(a, MIN), (b, 2 * MIN), (d, 5 * MIN), (e, 6 * MIN)];
        sched.handle_feed(120 * MIN, feed, &listed);
        assert!(!sched.summary(c).covered);
        let added = if counted { 0.0 } else { 1.0 };
        assert_eq!(changes(&sched, c), before + added, "counted: {counted}");
    }
}
