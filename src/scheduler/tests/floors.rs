//! The floor on a URL's interval: the server's (Cache-Control max-age) and a
//! feed's `ttl`, which no plan's lead cuts short.

use super::*;

const MIN: i64 = 60_000;

/// The listing of a document with `entries` and `ttl_ms` (`None`: a document without one).
fn document(entries: &[(UrlKey, i64)], ttl_ms: Option<i64>) -> FeedListing {
    FeedListing {
        ttl_ms: Some(ttl_ms),
        ..FeedListing::of(entries)
    }
}

/// Hands out what comes due from `*now` on, each reported unchanged, until `url` goes (it is
/// reported as `fetched` says at its time) or `until_ms` passes: when it went.
fn next_visit(
    sched: &mut Scheduler,
    url: UrlKey,
    now: &mut i64,
    until_ms: i64,
    fetched: impl Fn(i64) -> Fetched,
) -> Option<i64> {
    while *now < until_ms {
        while let Some(req) = sched.poll_request(*now) {
            if req.url == url {
                sched.handle_fetched(*now, url, fetched(*now));
                return Some(*now);
            }
            sched.handle_fetched(*now, req.url, Fetched::at(*now, Seen::Unchanged));
        }
        *now = sched
            .poll_timeout()
            .expect("URLs stay queued")
            .max(*now + MIN);
    }
    None
}

/// A document's `ttl` is the feed's floor from its read on: the feed, planned every three
/// hours, is planned and read no more often than every four (a `ttl` much longer, and the
/// pages on their own would do better than the feed: read monthly, none waits for it); a 304 (the
/// refresher's read with no document) keeps it, and a document without one ends it.
#[test]
fn a_feeds_ttl_is_its_floor_from_the_read_that_gives_it() {
    const TTL: i64 = 4 * HOUR;
    let (mut sched, feed, pages) = feed_and_pages_on(100.0, 30);
    let unchanged = |at| Fetched::at(at, Seen::Unchanged);
    let mut now = 0;
    let read_at = next_visit(&mut sched, feed, &mut now, DAY, |at| {
        Fetched::at(at, Seen::Copy)
    });
    let read_at = read_at.expect("read");
    let listed: Vec<(UrlKey, i64)> = pages.iter().map(|&p| (p, read_at - MIN)).collect();
    let with_ttl = |ttl_ms: Option<i64>| document(&listed, ttl_ms);
    let every_min = |sched: &Scheduler| sched.planned_interval_ms(feed) / MIN as f64;
    sched.handle_feed_read(read_at, feed, &listed, with_ttl(None));
    sched.replan(read_at, true);
    assert!(
        every_min(&sched) < (TTL / MIN) as f64,
        "without a floor: {}",
        every_min(&sched)
    );
    sched.handle_feed_read(read_at, feed, &listed, with_ttl(Some(TTL)));
    assert_eq!(sched.summary(feed).min_interval_ms, TTL);
    sched.replan(read_at, true);
    assert!(
        every_min(&sched) >= (TTL / MIN) as f64,
        "planned every {} min",
        every_min(&sched)
    );
    let sent = next_visit(&mut sched, feed, &mut now, read_at + 2 * TTL, unchanged);
    assert!(
        sent.is_some_and(|at| at >= read_at + TTL),
        "read {:?} min after the read, its ttl {} min",
        sent.map(|at| (at - read_at) / MIN),
        TTL / MIN
    );
    let again = sent.expect("sent");
    sched.handle_feed_read(again, feed, &[], FeedListing::default());
    assert_eq!(sched.summary(feed).min_interval_ms, TTL, "a 304 keeps it");
    sched.handle_feed_read(again, feed, &listed, with_ttl(None));
    assert_eq!(sched.summary(feed).min_interval_ms, 0);
    let sent = next_visit(&mut sched, feed, &mut now, again + TTL, unchanged);
    assert!(
        sent.is_some(),
        "not read within its old ttl once it is gone"
    );
}

/// A server's floor is set by the answer that gives one and ended by one that gives 0 (a new
/// response without it); an answer that says nothing of it (a 304 without it, no answer)
/// keeps it (`refresher::fetching::floor_said_ms` says which).
#[test]
fn a_servers_floor_stands_until_an_answer_sets_it_anew() {
    let (mut sched, _feed, pages) = feed_and_pages(1);
    let a = pages[0];
    let start = copies_of_all(&mut sched, &pages);
    let answered = |seen: Seen, floor: Option<i64>| {
        move |at| Fetched {
            min_interval_ms: floor,
            ..Fetched::at(at, seen)
        }
    };
    let mut now = start;
    let mut visit = |sched: &mut Scheduler, seen, floor| {
        let until = now + 30 * DAY;
        let sent = next_visit(sched, a, &mut now, until, answered(seen, floor));
        assert!(sent.is_some(), "visited");
        sched.summary(a).min_interval_ms
    };
    assert_eq!(visit(&mut sched, Seen::Unchanged, Some(2 * HOUR)), 2 * HOUR);
    let kept = visit(&mut sched, Seen::Unanswered, None);
    assert_eq!(kept, 2 * HOUR, "a check left unanswered keeps it");
    assert_eq!(
        visit(&mut sched, Seen::Unchanged, None),
        2 * HOUR,
        "a bare 304 too"
    );
    let ended = visit(&mut sched, Seen::Unchanged, Some(0));
    assert_eq!(ended, 0, "an answer without one ends it");
}
