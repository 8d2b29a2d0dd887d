//! The floor on a URL's interval: the server's (Cache-Control max-age, Retry-After) and a
//! feed's `ttl`, which no plan's lead cuts short.

use super::*;

const MIN: i64 = 60_000;

/// The listing of a document with `entries` and `ttl_ms`.
fn document(entries: &[(UrlKey, i64)], ttl_ms: Option<i64>) -> FeedListing {
    FeedListing {
        ttl_ms,
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

/// A document's `ttl` is the feed's floor from its read on: the feed, planned every few
/// minutes on a site with credit to spare, waits it out; a 304 (a check with no document)
/// keeps it, and a document without one ends it.
#[test]
fn a_feeds_ttl_is_its_floor_from_the_read_that_gives_it() {
    let (mut sched, feed, pages) = feed_and_pages(30);
    let unchanged = |at| Fetched::at(at, Seen::Unchanged);
    let mut now = 0;
    let read_at = next_visit(&mut sched, feed, &mut now, DAY, |at| {
        Fetched::at(at, Seen::Copy)
    });
    let read_at = read_at.expect("read");
    let listed: Vec<(UrlKey, i64)> = pages.iter().map(|&p| (p, read_at - MIN)).collect();
    let read = |entries: &[(UrlKey, i64)], ttl_ms| document(entries, ttl_ms);
    sched.handle_feed_read(read_at, feed, &listed, read(&listed, Some(3 * HOUR)));
    assert_eq!(sched.summary(feed).min_interval_ms, 3 * HOUR);
    sched.replan(read_at, true);
    // (Without the floor it would go sooner.)
    let planned_ms = sched.planned_interval_ms(feed);
    assert!(
        planned_ms < HOUR as f64,
        "planned every {} min",
        planned_ms / MIN as f64
    );
    let sent = next_visit(&mut sched, feed, &mut now, read_at + 6 * HOUR, unchanged);
    assert!(
        sent.is_some_and(|at| at >= read_at + 3 * HOUR),
        "read {:?} min after the read, its ttl 180 min",
        sent.map(|at| (at - read_at) / MIN)
    );
    // That check was a 304: no document, the ttl stands.
    assert_eq!(sched.summary(feed).min_interval_ms, 3 * HOUR);
    let again = sent.expect("sent");
    sched.handle_feed_read(again, feed, &listed, read(&listed, None));
    assert_eq!(sched.summary(feed).min_interval_ms, 0);
    let sent = next_visit(&mut sched, feed, &mut now, again + 3 * HOUR, unchanged);
    assert!(sent.is_some(), "not read within 3 h once its ttl is gone");
}

/// A server's floor is set by an answer's headers and cleared by an answer without them; a
/// check left unanswered says nothing of it.
#[test]
fn an_answer_without_max_age_clears_the_servers_floor() {
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
    let cleared = visit(&mut sched, Seen::Unchanged, None);
    assert_eq!(cleared, 0, "an answer without one clears it");
}
