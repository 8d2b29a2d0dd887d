//! What a run starts from for a feed an earlier run read ([`Restored`]): when it planned the
//! feed's next read, and what its reads showed of whether the feed stamps its entries.

use super::*;
use crate::estimate::Stats;

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
                        newest_ms: None,
                        requested_ms: None,
                        kept_by_date: true,
                        ttl_ms: None,
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
            newest_ms: None,
            requested_ms: None,
            kept_by_date: true,
            ttl_ms: None,
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
        newest_ms: None,
        requested_ms: None,
        kept_by_date: true,
        ttl_ms: None,
    };
    sched.handle_feed_read(later, feed, &[(pages[0], later - HOUR / 2)], listing);
    assert!(!sched.stamps_feed_entries(feed));
    assert_eq!(sched.acted_known_change(pages[0]), Some(later - HOUR / 2));
}

/// A run started at `start` (ten days in) on a feed and `n` pages an earlier run knew: each
/// page's copy an hour old and a change a day by its ten days of checks, waiting for the feed
/// when last planned ([`Scheduler::restore_coverage`]), and the feed read an hour before the
/// start, its reads having shown `shown`. Re-planned at the start. The host takes a request
/// every ten minutes.
pub(super) fn restarted_with_coverage(
    n: usize,
    shown: FeedShown,
) -> (Scheduler, UrlKey, Vec<UrlKey>) {
    let mut sched = Scheduler::new(SchedulerConfig::default());
    let site = sched.add_site(1.0, 50.0, 0);
    // 144 requests a day: the feed may take a quarter of them.
    let host = sched.add_host(10 * 60_000, 0);
    let feed_url = NewUrl {
        kind: UrlKind::Feed,
        ..page(site, host, 1.0)
    };
    let feed = sched.add_url(0, feed_url);
    let pages: Vec<UrlKey> = (0..n)
        .map(|_| sched.add_url(0, page(site, host, 1.0)))
        .collect();
    let start = 10 * DAY;
    for &page in &pages {
        let restored = Restored {
            last_check_ms: Some(start - HOUR),
            stats: Stats {
                events: 10.0,
                exposure_days: 10.0,
                changed_intervals: Vec::new(),
            },
            checks: 10,
            due_ms: Some(start + DAY),
            ..Restored::default()
        };
        sched.restore(page, restored);
    }
    let restored = Restored {
        last_check_ms: Some(start - HOUR),
        checks: 50,
        planned_per_day: Some(24.0),
        feed_shown: shown,
        ..Restored::default()
    };
    sched.restore(feed, restored);
    for &page in &pages {
        assert!(sched.restore_coverage(page, feed), "restored");
        assert!(!sched.restore_coverage(page, feed), "once");
    }
    sched.replan(start, true);
    (sched, feed, pages)
}

/// A wait taken up from the store knows no change its feed listed of the page: reads here
/// that do not list it cannot tell whether it left the feed, and it goes on waiting (the
/// checks judge it, [`Scheduler::handle_feed_read`]).
#[test]
fn a_restored_wait_is_kept_by_reads_that_do_not_list_its_page() {
    let (mut sched, feed, pages) = restarted_with_coverage(5, TWENTY_LATEST);
    let start = 10 * DAY;
    // (Older entries, and newer ones, than the read an earlier run made an hour before.)
    let listed: Vec<(UrlKey, i64)> = [(0, -3 * HOUR), (1, -2 * HOUR), (3, HOUR / 6), (4, HOUR / 3)]
        .map(|(i, at)| (pages[i], start + at))
        .to_vec();
    sched.handle_feed(start + HOUR, feed, &listed);
    sched.handle_feed(start + 2 * HOUR, feed, &listed);
    assert!(sched.summary(pages[2]).covered);
    assert_eq!(sched.covering_feed(pages[2]), sched.covering_feed(pages[0]));
}

/// The feed's row keeps the change its last read listed of each page that waited for it:
/// put back before the first read here, it tells that page 2 has left the feed.
#[test]
fn a_restored_wait_ends_where_the_stored_listing_dates_its_page() {
    let (mut sched, feed, pages) = restarted_with_coverage(5, TWENTY_LATEST);
    let start = 10 * DAY;
    let minutes = |m: i64| start + m * 60_000;
    let stored: Vec<(UrlKey, Option<i64>)> = [-180, -120, -90, -80, -70]
        .iter()
        .enumerate()
        .map(|(i, &m)| (pages[i], Some(minutes(m))))
        .collect();
    sched.restore_feed_listing(feed, stored, vec![pages[4]]);
    assert_eq!(sched.listed_change(feed, pages[2]), Some(minutes(-90)));
    assert_eq!(sched.feed_left(feed), [pages[4]], "as the store kept it");
    let listed = [(0, -180), (1, -120), (3, 10), (4, 20)].map(|(i, m)| (pages[i], minutes(m)));
    sched.handle_feed(start + HOUR, feed, &listed);
    assert!(!sched.summary(pages[2]).covered, "left the feed");
    assert!(sched.summary(pages[0]).covered);
    // Kept with the feed's row, for the workers that hold the page's host and not the
    // feed's, until a read lists it again (page 4, listed again, is no longer said to have
    // left it).
    assert_eq!(sched.feed_left(feed), [pages[2]]);
    let again = [(1, -120), (2, 30), (3, 10), (4, 20)].map(|(i, m)| (pages[i], minutes(m)));
    sched.handle_feed(start + 2 * HOUR, feed, &again);
    assert!(sched.feed_left(feed).is_empty());
}

/// What forty reads of a feed of the twenty latest changes showed.
pub(super) const TWENTY_LATEST: FeedShown = FeedShown {
    most_entries: 20,
    reads_below_most: 0,
    count_below: 0,
    lists_every_change: false,
    entries_listed: 800.0,
    entries_kept: 800.0,
    ttl_ms: None,
};

/// Pages that waited for their feed's announcements wait for them again from the start of a
/// run, before its first read (they went back to their plan until two checks each had proven
/// the feed again), and the feed is priced by what its reads had shown: taken for one that
/// holds two entries, the feed was futile and no page waited.
#[test]
fn pages_that_waited_for_their_feed_wait_from_the_start() {
    let (sched, feed, pages) = restarted_with_coverage(40, TWENTY_LATEST);
    for &page in &pages {
        assert_eq!(sched.covering_feed(page), Some(feed));
    }
    assert_eq!(sched.feed_reads(feed).2, TWENTY_LATEST);
    let (sched, _, pages) = restarted_with_coverage(40, FeedShown::default());
    assert_eq!(sched.covering_feed(pages[0]), None, "a feed of two entries");
}

/// The first read after the start: one that reaches back to the read before keeps the pages
/// waiting, and the change it lists from before it is counted by the page's next check over
/// its whole span (counted from the read on, the check put it in the minutes after the read);
/// one as full as the feed has been whose oldest entry is newer than the read before may
/// have dropped changes of the time between, and its pages go back to their plan.
#[test]
fn the_first_read_after_the_start_is_judged_against_the_read_before() {
    let start = 10 * DAY;
    let read = start + HOUR;
    let entries = |pages: &[UrlKey], oldest: i64| -> Vec<(UrlKey, i64)> {
        let mut listed = vec![(pages[0], read - HOUR / 2)];
        listed.extend((0..19).map(|i| (pages[1 + i], oldest)));
        listed
    };
    let listing = |oldest: i64| FeedListing {
        entries: 20,
        oldest_ms: Some(oldest),
        newest_ms: None,
        requested_ms: None,
        kept_by_date: true,
        ttl_ms: None,
    };
    let (mut sched, feed, pages) = restarted_with_coverage(40, TWENTY_LATEST);
    let oldest = start - DAY;
    sched.handle_feed_read(read, feed, &entries(&pages, oldest), listing(oldest));
    assert_eq!(sched.covering_feed(pages[1]), Some(feed), "reached back");
    assert_eq!(sched.acted_known_change(pages[0]), Some(read - HOUR / 2));
    let before = sched.urls[pages[0]].evidence().stats.clone();
    // (The feed may come first: its cadence before the start is due.)
    let mut check = read + HOUR;
    loop {
        match sched.poll_request(check) {
            Some(req) if req.url == pages[0] => break,
            Some(req) => {
                assert_eq!(req.url, feed, "the page known stale before any other");
                sched.handle_fetched(check, feed, Fetched::at(check, Seen::Unchanged));
            }
            None => check = sched.poll_timeout().expect("queued").max(check + 1),
        }
    }
    sched.handle_fetched(check, pages[0], Fetched::at(check, Seen::Changed));
    let after = &sched.urls[pages[0]].evidence().stats;
    let span_days = (check - (start - HOUR)) as f64 / DAY as f64;
    assert_eq!(after.changed_intervals.len(), 1, "{after:?}");
    assert!(
        (after.changed_intervals[0].0 - span_days).abs() < 1e-9,
        "counted over {} days, not {span_days}",
        after.changed_intervals[0].0
    );
    assert_eq!(after.events, before.events);

    let (mut sched, feed, pages) = restarted_with_coverage(40, TWENTY_LATEST);
    let oldest = start - HOUR / 2;
    sched.handle_feed_read(read, feed, &entries(&pages, oldest), listing(oldest));
    assert_eq!(
        sched.covering_feed(pages[1]),
        None,
        "may have dropped changes"
    );
}

/// A change a check saw that the feed has not listed yet is judged at the feed's next read,
/// and not kept: until then the page is not kept as waiting for the feed (a `run --once` pass
/// that ends before that read would put it back as waiting at each start, and a feed that
/// misses its changes would never be found out). The read that lists it keeps it again.
#[test]
fn a_page_whose_unlisted_change_waits_for_judgement_is_not_kept_as_waiting() {
    let start = 10 * DAY;
    let (mut sched, feed, pages) = restarted_with_coverage(40, TWENTY_LATEST);
    let read = start + HOUR;
    let listing = FeedListing {
        entries: 20,
        oldest_ms: Some(start - DAY),
        newest_ms: None,
        requested_ms: None,
        kept_by_date: true,
        ttl_ms: None,
    };
    let listed: Vec<(UrlKey, i64)> = (pages[1..21].iter()).map(|&p| (p, start - DAY)).collect();
    sched.handle_feed_read(read, feed, &listed, listing);
    assert_eq!(sched.waits_to_keep(pages[0]), Some(feed));
    let mut now = read;
    loop {
        match sched.poll_request(now) {
            Some(req) if req.url == pages[0] => break,
            Some(req) => sched.handle_fetched(now, req.url, Fetched::at(now, Seen::Unchanged)),
            None => now = sched.poll_timeout().expect("queued").max(now + 1),
        }
    }
    sched.handle_fetched(now, pages[0], Fetched::at(now, Seen::Changed));
    assert_eq!(
        sched.covering_feed(pages[0]),
        Some(feed),
        "judged at the next read"
    );
    assert_eq!(sched.waits_to_keep(pages[0]), None);
    let next = now + HOUR;
    let mut listed = listed;
    listed[19] = (pages[0], now - 1);
    let listing = FeedListing {
        oldest_ms: Some(start - DAY),
        ..listing
    };
    sched.handle_feed_read(next, feed, &listed, listing);
    assert_eq!(
        sched.waits_to_keep(pages[0]),
        Some(feed),
        "listed: proven again"
    );
}

/// A feed whose document does not parse announces nothing: the pages that waited for it
/// (restored at the start, they waited all the run) go back to their plan until it proves
/// itself again.
#[test]
fn pages_stop_waiting_for_a_feed_whose_document_does_not_parse() {
    let (mut sched, feed, pages) = restarted_with_coverage(40, TWENTY_LATEST);
    assert_eq!(sched.covering_feed(pages[0]), Some(feed));
    sched.feed_unreadable(10 * DAY + HOUR, feed);
    assert!(pages.iter().all(|&p| sched.covering_feed(p).is_none()));
}

/// The cadence an earlier run planned for a feed holds until a read here lists entries (a
/// 304 lists none): the same document read again in a 200 shows what it covers.
#[test]
fn a_read_listing_entries_ends_the_cadence_the_run_before_planned() {
    let (mut sched, feed, pages) = feed_and_pages(3);
    let restored = Restored {
        last_check_ms: Some(DAY),
        planned_per_day: Some(24.0),
        ..Restored::default()
    };
    sched.restore(feed, restored);
    let read = 2 * DAY;
    sched.handle_feed_read(read, feed, &[], FeedListing::default());
    assert_eq!(
        sched.urls[feed].feed().planned_before_start,
        Some(24.0),
        "a 304"
    );
    let listed: Vec<(UrlKey, i64)> = pages.iter().map(|&p| (p, DAY / 2)).collect();
    sched.handle_feed_read(read + HOUR, feed, &listed, FeedListing::of(&listed));
    assert_eq!(sched.urls[feed].feed().planned_before_start, None);
}

/// With several workers a start adds every row before it gains a host: a wait is restored
/// for a feed on the page's own host (whoever gains the host reads the feed and checks the
/// page), not for one on another host held elsewhere (its holder reads it, and this worker
/// would never judge it).
#[test]
fn a_wait_is_restored_for_a_feed_on_the_pages_host_or_one_held_here() {
    let restore_on = |same_host: bool| {
        let mut sched = Scheduler::new(SchedulerConfig::default());
        let site = sched.add_site(1.0, 50.0, 0);
        let (a, b) = (sched.add_host(0, 0), sched.add_host(0, 0));
        sched.set_host_elsewhere(a, true);
        let feed_host = if same_host { b } else { a };
        let feed_url = NewUrl {
            kind: UrlKind::Feed,
            ..page(site, feed_host, 1.0)
        };
        let feed = sched.add_url(0, feed_url);
        let on_b = sched.add_url(0, page(site, b, 1.0));
        let on_a = sched.add_url(0, page(site, a, 1.0));
        let restored = Restored {
            last_check_ms: Some(DAY),
            ..Restored::default()
        };
        sched.restore(feed, restored);
        (
            sched.restore_coverage(on_b, feed),
            sched.restore_coverage(on_a, feed),
        )
    };
    // The feed on b (held here): both; on a (elsewhere): the page on a only.
    assert_eq!(restore_on(true), (true, true));
    assert_eq!(restore_on(false), (false, true));
}

/// A wait taken over from the store (another worker checked the page, or this one gains its
/// host): one known here only from the store goes when the row no longer names the feed (the
/// holder's read or check ended it), and comes back when it does; once the feed is read here,
/// its reads judge its pages, and a row's wait changes nothing, until another worker takes the
/// host: once it is back here, the rows that worker wrote stand.
#[test]
fn a_wait_taken_over_is_the_one_the_store_keeps() {
    let (mut sched, feed, pages) = restarted_with_coverage(4, TWENTY_LATEST);
    assert!(sched.take_up_wait(pages[0], None), "ended elsewhere");
    assert_eq!(sched.covering_feed(pages[0]), None);
    assert!(!sched.feed_covers(feed).contains(&pages[0]));
    assert!(!sched.take_up_wait(pages[1], Some(feed)), "kept elsewhere");
    assert_eq!(sched.covering_feed(pages[1]), Some(feed));
    assert!(sched.take_up_wait(pages[0], Some(feed)), "waits again");
    assert_eq!(sched.waits_to_keep(pages[0]), Some(feed));
    // A read here that reaches back to the read before: its pages go on waiting, on its word.
    let start = 10 * DAY;
    let listing = FeedListing {
        entries: 3,
        oldest_ms: Some(start - 2 * HOUR),
        newest_ms: Some(start - 2 * HOUR),
        requested_ms: None,
        kept_by_date: true,
        ttl_ms: None,
    };
    sched.handle_feed_read(start + HOUR, feed, &[], listing);
    assert_eq!(sched.covering_feed(pages[2]), Some(feed));
    assert!(!sched.take_up_wait(pages[2], None), "judged here");
    assert_eq!(sched.covering_feed(pages[2]), Some(feed));
    // Another worker takes the host, reads the feed and ends page 2's wait; this one gets the
    // host back: its own read says nothing of what the other's found, and the rows stand.
    let host = sched.urls[feed].host();
    sched.set_host_elsewhere(host, true);
    assert_eq!(sched.feed_read_here(feed), None, "given away");
    sched.host_gained(host);
    let their_read = Restored {
        last_check_ms: Some(start + 3 * HOUR),
        feed_shown: TWENTY_LATEST,
        ..Restored::default()
    };
    sched.restore(feed, their_read);
    assert!(sched.take_up_wait(pages[2], None), "ended there");
    assert_eq!(sched.covering_feed(pages[2]), None);
    assert!(
        sched.take_up_wait(pages[2], Some(feed)),
        "proven there again"
    );
    assert_eq!(sched.covering_feed(pages[2]), Some(feed));
    // Its first read here is judged against the other's last.
    assert_eq!(sched.feed_read_here(feed), None);
    sched.handle_feed_read(start + 4 * HOUR, feed, &[], listing);
    assert_eq!(sched.feed_read_here(feed), Some(start + 4 * HOUR));
    // A read in flight when the host goes lands in the holding before the next.
    sched.set_host_elsewhere(host, true);
    sched.handle_feed_read(start + 5 * HOUR, feed, &[], listing);
    assert_eq!(sched.feed_read_here(feed), None, "while elsewhere");
    sched.host_gained(host);
    assert_eq!(
        sched.feed_read_here(feed),
        None,
        "a read of the holding before"
    );
    // A wait that read began, not proven yet, is the row's: proven, as at a start.
    let their_later_read = Restored {
        last_check_ms: Some(start + 6 * HOUR),
        feed_shown: TWENTY_LATEST,
        ..Restored::default()
    };
    sched.restore(feed, their_later_read);
    let coverage = sched.urls[pages[3]].evidence_mut().coverage.as_mut();
    coverage.expect("covered").agreements = 0;
    assert_eq!(sched.covering_feed(pages[3]), None, "not proven");
    assert!(sched.take_up_wait(pages[3], Some(feed)));
    assert_eq!(sched.covering_feed(pages[3]), Some(feed), "proven there");
}

/// What a read showed of its feed is saved after its check: another worker may take up the
/// row of the read before that save, and takes up the row of the same read again once it is
/// saved (here, a worker that read the feed while it held its host, and now another holds
/// it). A row of a read older than one known here changes nothing, nor, while the host is
/// held here, a row of this worker's own read (its reads stand; the row may lag them).
#[test]
fn a_feeds_row_of_the_latest_read_is_taken_up_again() {
    let (mut sched, feed, pages) = feed_and_pages(1);
    copies_of_all(&mut sched, &[feed]);
    let own_read = sched.urls[feed].last_check_ms().expect("read here");
    let listed = [(pages[0], own_read)];
    sched.handle_feed_read(own_read, feed, &listed, FeedListing::of(&listed));
    let row_of = |read_ms: i64, shown: FeedShown| Restored {
        last_check_ms: Some(read_ms),
        feed_shown: shown,
        ..Restored::default()
    };
    let cut = FeedShown {
        most_entries: 3,
        ..TWENTY_LATEST
    };
    let capacity = |sched: &Scheduler| sched.feed_reads(feed).2.most_entries;
    sched.restore(feed, row_of(own_read, cut));
    assert_eq!(capacity(&sched), 1, "its own read, held here");
    sched.set_host_elsewhere(sched.urls[feed].host(), true);
    sched.restore(feed, row_of(DAY, TWENTY_LATEST));
    assert_eq!(capacity(&sched), 20, "a newer read");
    sched.restore(feed, row_of(DAY, cut));
    assert_eq!(capacity(&sched), 3, "the same read, saved");
    sched.restore(feed, row_of(DAY - HOUR, TWENTY_LATEST));
    assert_eq!(capacity(&sched), 3, "an older read");
}

/// The first read after a start lists something new when an entry is newer than the read
/// before the start: a document of entries all older (read again unchanged) counts nothing
/// towards a cut of its capacity.
#[test]
fn the_first_read_after_a_start_lists_news_against_the_read_before() {
    let (mut sched, feed, _) = restarted_with_coverage(2, TWENTY_LATEST);
    let start = 10 * DAY;
    let listing = |newest: i64| FeedListing {
        entries: 3,
        oldest_ms: Some(start - 3 * HOUR),
        newest_ms: Some(newest),
        requested_ms: None,
        kept_by_date: true,
        ttl_ms: None,
    };
    let below = |sched: &Scheduler| sched.feed_reads(feed).2.reads_below_most;
    sched.handle_feed_read(start + HOUR, feed, &[], listing(start - 2 * HOUR));
    assert_eq!(below(&sched), 0, "older than the read before the start");
    sched.handle_feed_read(start + 2 * HOUR, feed, &[], listing(start + 3 * HOUR / 2));
    assert_eq!(below(&sched), 1, "newer than the read before");
}
