//! What a run starts from for a feed an earlier run read ([`Restored`]): when it planned the
//! feed's next read, and what its reads showed of whether the feed stamps its entries.

use super::*;

/// The feed reads of a run started at `start` on a feed last read an hour before, planned
/// then at `planned_per_day` (`None`: nothing stored), over `hours`; each read answered `seen`
/// (`Changed`: a read listing its five pages, dated before their copies; `Unchanged`: a 304;
/// else a fetch that read nothing).
fn feed_reads_after_start(planned_per_day: Option<f64>, seen: Seen, hours: i64) -> Vec<i64> {
    let (mut sched, feed, pages) = feed_and_pages(5);
    let start = 10 * DAY;
    for &url in pages.iter().chain([&feed]) {
        let restored = Restored {
            last_check_ms: Some(start - HOUR),
            planned_per_day: if url == feed { planned_per_day } else { None },
            ..Restored::default()
        };
        sched.restore(url, restored);
    }
    let listed: Vec<(UrlKey, i64)> = pages.iter().map(|&p| (p, start - 2 * DAY)).collect();
    let mut reads = Vec::new();
    let mut now = start;
    while now < start + hours * HOUR {
        while let Some(req) = sched.poll_request(now) {
            if req.url != feed {
                sched.handle_fetched(now, req.url, Fetched::at(now, Seen::Unchanged));
                continue;
            }
            reads.push(now);
            sched.handle_fetched(now, feed, Fetched::at(now, seen));
            match seen {
                Seen::Changed => {
                    let listing = FeedListing {
                        entries: 5,
                        oldest_ms: Some(start - 2 * DAY),
                        requested_ms: None,
                    };
                    sched.handle_feed_read(now, feed, &listed, listing);
                }
                Seen::Unchanged => {
                    sched.handle_feed_read(now, feed, &[], FeedListing::default());
                }
                _ => {}
            }
        }
        now = sched.poll_timeout().expect("URLs stay queued").max(now + 1);
    }
    reads
}

/// A restart keeps a feed on the cadence the run before planned for it (its stored planned
/// reads a day): what it covers lives in memory, so before its first read here the plan took
/// it for a feed worth nothing, and it went unread for a week (`MIN_FEED_POLLS`). Its first
/// read does not send it again at once, and a feed whose reads fail is not read faster than
/// that cadence.
#[test]
fn a_restarted_feed_keeps_the_cadence_the_run_before_planned() {
    let start = 10 * DAY;
    let hourly = feed_reads_after_start(Some(24.0), Seen::Changed, 3);
    assert!(
        hourly.first().is_some_and(|&at| at <= start + HOUR),
        "{hourly:?}"
    );
    let gaps: Vec<i64> = hourly.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.iter().all(|&gap| gap >= HOUR / 2), "{hourly:?}");
    assert_eq!(
        feed_reads_after_start(None, Seen::Changed, 48),
        [] as [i64; 0],
        "a week"
    );
    let failing = feed_reads_after_start(Some(24.0), Seen::Unanswered, 12);
    assert!(!failing.is_empty() && failing.len() <= 13, "{failing:?}");
    // A 304 lists what the run before read: the cadence holds past the regular re-plans (a
    // feed that covers nothing here yet was priced weekly from the first of them on).
    let not_modified = feed_reads_after_start(Some(24.0), Seen::Unchanged, 12);
    assert!(not_modified.len() >= 9, "{not_modified:?}");
    // Never more rarely than a feed that covers nothing (a failing feed's plan was stored at
    // next to nothing, and it came back a year later).
    let stored_failing = feed_reads_after_start(Some(1e-6), Seen::Changed, 8 * 24);
    let weekly = start - HOUR + 7 * DAY;
    assert!(
        stored_failing
            .first()
            .is_some_and(|&at| at <= weekly + HOUR),
        "{stored_failing:?}"
    );
}

/// A feed an earlier run took to stamp its entries ([`Restored::feed_stamped_reads`]) is known to at
/// its first read after the start: its entries at the read make no page known stale (before the
/// judgement was kept, that read announced every page it listed, and each check that followed
/// was a false alarm against the host). A new entry dated before the read undoes it.
#[test]
fn a_feed_an_earlier_run_took_for_stamping_is_known_at_its_first_read() {
    let first_read_after_start = |restored: bool| {
        let (mut sched, feed, pages) = feed_and_pages(3);
        let stamps_entries = Restored {
            feed_stamped_reads: if restored { STAMPING_READS } else { 0 },
            ..Restored::default()
        };
        sched.restore(feed, stamps_entries);
        let now = copies_of_all(&mut sched, &pages);
        let read = now + HOUR;
        let listing = FeedListing {
            entries: 10,
            oldest_ms: Some(0),
            requested_ms: None,
        };
        let at_the_read: Vec<(UrlKey, i64)> = pages.iter().map(|&p| (p, read - 10_000)).collect();
        let ignored = sched.handle_feed_read(read, feed, &at_the_read, listing);
        let announced = (pages.iter())
            .filter(|&&p| sched.acted_known_change(p).is_some())
            .count();
        (sched, feed, pages, read, ignored, announced)
    };
    let (_, _, _, _, ignored, announced) = first_read_after_start(false);
    assert!(!ignored);
    // (Probation acts on the host's first two announcements only.)
    assert_eq!(announced, 2, "a first read cannot tell on its own");
    let (mut sched, feed, pages, read, ignored, announced) = first_read_after_start(true);
    assert!(ignored && sched.stamps_feed_entries(feed));
    assert_eq!(announced, 0);
    let later = read + HOUR;
    let listing = FeedListing {
        entries: 10,
        oldest_ms: Some(0),
        requested_ms: None,
    };
    sched.handle_feed_read(later, feed, &[(pages[0], later - HOUR / 2)], listing);
    assert!(!sched.stamps_feed_entries(feed));
    assert_eq!(sched.acted_known_change(pages[0]), Some(later - HOUR / 2));
}
