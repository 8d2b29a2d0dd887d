//! What feeds tell the scheduler: known changes, the spans their silence watches, overflow,
//! and what their reads are worth (sitemaps: `sitemap_signals`).

use super::*;

#[test]
fn a_feed_makes_its_pages_known_stale_and_sends_them_soon() {
    let mut sched = Scheduler::new(SchedulerConfig::default());
    let site = sched.add_site(1.0, 50.0, 0);
    let host = sched.add_host(0, 0);
    let feed = sched.add_url(
        0,
        NewUrl {
            kind: UrlKind::Feed,
            ..page(site, host, 1.0)
        },
    );
    let pages: Vec<_> = (0..20)
        .map(|_| sched.add_url(0, page(site, host, 1.0)))
        .collect();
    // Everything gets its first copy.
    let mut now = 0;
    let mut fetched = 0;
    while fetched < 21 {
        if let Some(req) = sched.poll_request(now) {
            sched.handle_fetched(now, req.url, Fetched::at(now, Seen::Copy));
            if req.url == feed {
                sched.handle_feed(now, feed, &[(pages[0], now - 1)]);
            }
            fetched += 1;
        } else {
            now = sched.poll_timeout().expect("queued").max(now + 1);
        }
    }
    assert!(sched.summary(pages[0]).covered);
    // The feed announces a change of page 0 a while later.
    let later = now + 6 * HOUR;
    sched.handle_feed(later, feed, &[(pages[0], later - HOUR)]);
    let due = sched.summary(pages[0]).due_ms.expect("queued");
    let interval = (MS_PER_DAY / sched.summary(pages[0]).planned_per_day) as i64;
    assert!(
        due <= later.max(now + interval),
        "due {due}, interval {interval}"
    );
}

/// What a feed's silence teaches: the span it watched a page after the copy, cut short by an
/// overflow that may have dropped the page's change, and gone once the feed misses a change.
#[test]
fn a_quiet_feed_watches_its_pages_until_it_overflows_or_misses() {
    const MIN: i64 = 60_000;
    let (mut sched, feed, pages) = feed_and_pages(2);
    let (a, b) = (pages[0], pages[1]);
    // First read at 10 min lists both pages; they are covered from then on.
    sched.handle_feed(10 * MIN, feed, &[(a, 5 * MIN), (b, 6 * MIN)]);
    check(&mut sched, 20 * MIN, a, Seen::Copy);
    check(&mut sched, 20 * MIN, b, Seen::Copy);
    assert_eq!(sched.watched(a), None, "nothing watched since the copy yet");
    // A read at 60 min lists neither: both watched from their copy to the read.
    sched.handle_feed(60 * MIN, feed, &[(a, 5 * MIN), (b, 6 * MIN)]);
    assert_eq!(sched.watched(a), Some((20 * MIN, 60 * MIN)));
    let copy = sched.copy_knowledge(a).expect("a copy");
    assert_eq!(copy.watched, Some((20 * MIN, 60 * MIN)));
    // A read that lists b's change: b is known stale, a still watched.
    sched.handle_feed(90 * MIN, feed, &[(b, 80 * MIN), (a, 5 * MIN)]);
    assert_eq!(sched.watched(a), Some((20 * MIN, 90 * MIN)));
    assert_eq!(
        sched.copy_knowledge(b).unwrap().known_change_ms,
        Some(80 * MIN)
    );
    // An overflowing read (as full as ever, all entries newer than the last read): changes
    // before its oldest entry may have been dropped, so a is watched only from there.
    sched.handle_feed(
        200 * MIN,
        feed,
        &[(b, 150 * MIN), (b, 140 * MIN), (b, 120 * MIN)],
    );
    assert_eq!(sched.watched(a), Some((120 * MIN, 200 * MIN)));
    // A check of a sees a change no read listed; the next read does not list it either. The
    // change may have come while the feed was blind (before 120): nothing is known either way.
    check(&mut sched, 210 * MIN, a, Seen::Changed);
    sched.handle_feed(
        230 * MIN,
        feed,
        &[(b, 225 * MIN), (b, 150 * MIN), (b, 140 * MIN)],
    );
    assert!(sched.summary(a).covered);
    // The next check sees another change no read lists, over a span the feed saw whole: the
    // feed misses a's changes and watches it no more.
    check(&mut sched, 240 * MIN, a, Seen::Changed);
    sched.handle_feed(
        260 * MIN,
        feed,
        &[(b, 250 * MIN), (b, 225 * MIN), (b, 150 * MIN)],
    );
    assert_eq!(sched.watched(a), None);
    assert!(!sched.summary(a).covered);
}

/// Whether a read overflowed is judged on the whole document, not on the entries kept (those
/// on the site's pages): a read full of other hosts' entries, all newer than the last read,
/// overflowed although it kept one entry, and a read whose only entry older than the last read
/// is another host's did not.
#[test]
fn a_feed_overflows_by_its_whole_document_not_the_entries_kept() {
    const MIN: i64 = 60_000;
    let listing = |oldest: i64| FeedListing {
        entries: 3,
        oldest_ms: Some(oldest * MIN),
        newest_ms: None,
        requested_ms: None,
        kept_by_date: true,
        ttl_ms: None,
    };
    let (mut sched, feed, pages) = feed_and_pages(2);
    let (a, b) = (pages[0], pages[1]);
    // Each document holds three entries: a's, b's and another host's page's.
    let kept = [(a, 5 * MIN), (b, 6 * MIN)];
    sched.handle_feed_read(10 * MIN, feed, &kept, listing(4));
    check(&mut sched, 20 * MIN, a, Seen::Copy);
    check(&mut sched, 20 * MIN, b, Seen::Copy);
    sched.handle_feed_read(60 * MIN, feed, &kept, listing(4));
    assert_eq!(sched.watched(a), Some((20 * MIN, 60 * MIN)));
    // Three entries newer than the last read, two of them another host's: blind before 120.
    sched.handle_feed_read(200 * MIN, feed, &[(b, 120 * MIN)], listing(120));
    assert_eq!(sched.watched(a), Some((120 * MIN, 200 * MIN)));
    // Two of b's newer than the last read and another host's older: nothing was dropped.
    let kept = [(b, 250 * MIN), (b, 225 * MIN)];
    sched.handle_feed_read(260 * MIN, feed, &kept, listing(190));
    assert_eq!(sched.watched(a), Some((120 * MIN, 260 * MIN)));
}

/// A feed whose capacity was cut (ten entries, then three) is full again at three once
/// [`CAPACITY_READS`] documents in a row have listed three: a read of three entries all newer
/// than the read before then overflowed, and the feed's silence says nothing of the time
/// before its oldest entry. Judged by the largest document ever, it was never full again, and
/// the changes it dropped were counted as quiet.
#[test]
fn a_feed_whose_capacity_was_cut_is_seen_to_overflow_again() {
    const MIN: i64 = 60_000;
    let listing = |entries: usize, oldest: i64, newest: i64| FeedListing {
        entries,
        oldest_ms: Some(oldest * MIN),
        newest_ms: Some(newest * MIN),
        requested_ms: None,
        kept_by_date: true,
        ttl_ms: None,
    };
    let (mut sched, feed, pages) = feed_and_pages(2);
    let (a, b) = (pages[0], pages[1]);
    let kept = [(a, 5 * MIN), (b, 6 * MIN)];
    sched.handle_feed_read(10 * MIN, feed, &kept, listing(10, 1, 6));
    check(&mut sched, 20 * MIN, a, Seen::Copy);
    check(&mut sched, 20 * MIN, b, Seen::Copy);
    // Reads that each reach back past the read before: nothing dropped, ten entries and then
    // three (the cut). Each lists `a`'s change, newer than its oldest entry.
    let mut at = 30;
    for entries in [10, 3, 3, 3] {
        sched.handle_feed_read(
            at * MIN,
            feed,
            &[(a, 5 * MIN), (b, (at - 5) * MIN)],
            listing(entries, 1, at - 5),
        );
        at += 10;
    }
    // The last document read again and again (no validators): nothing in it is newer than the
    // read before, so it says nothing of a cut.
    let newest = at - 15;
    for _ in 0..2 * CAPACITY_READS {
        let listed = [(a, 5 * MIN), (b, newest * MIN)];
        sched.handle_feed_read(at * MIN, feed, &listed, listing(3, 1, newest));
        at += 10;
    }
    assert_eq!(
        sched.urls[feed].feed().shown.most_entries,
        10,
        "three reads below"
    );
    sched.handle_feed_read(
        at * MIN,
        feed,
        &[(a, 5 * MIN), (b, (at - 5) * MIN)],
        listing(3, 1, at - 5),
    );
    assert_eq!(sched.urls[feed].feed().shown.most_entries, 3, "the fourth");
    assert_eq!(sched.watched(a), Some((20 * MIN, at * MIN)));
    // Three entries, all newer than the read before: full, so some may have been dropped.
    let last = at;
    at += 60;
    sched.handle_feed_read(
        at * MIN,
        feed,
        &[(b, (at - 5) * MIN)],
        listing(3, at - 20, at - 5),
    );
    assert_eq!(
        sched.watched(a),
        Some(((at - 20) * MIN, at * MIN)),
        "blind before"
    );
    assert!((at - 20) > last);
    // A document as long as before the cut is the capacity again at once.
    at += 10;
    sched.handle_feed_read(
        at * MIN,
        feed,
        &[(a, 5 * MIN), (b, (at - 5) * MIN)],
        listing(10, 1, at - 5),
    );
    assert_eq!(sched.urls[feed].feed().shown.most_entries, 10);
}

/// What a feed holds for the site's pages is its capacity (its largest document) times the
/// share of its entries that are theirs: a feed whose documents hold 1,000 entries, ten of them
/// the site's pages, fills with their changes as soon as a feed of ten entries does, not a
/// hundred times later.
#[test]
fn a_feed_full_of_other_hosts_entries_holds_only_its_share_of_the_site_s_changes() {
    const MIN: i64 = 60_000;
    // The feed's polls a day after two reads, each document `entries` long and listing ten of
    // the site's twenty pages once (it has not shown it lists every change). Its host may be
    // asked twice a day, the feed a quarter of that: too rarely to keep up with twenty pages
    // at their estimated rates in a room of five (half of ten entries), often enough in a
    // room of 500.
    let polls = |entries: usize| {
        let (mut sched, feed, pages) = feed_and_pages(20);
        let host = sched.urls[feed].host();
        sched.set_host_interval(host, MS_PER_DAY as i64 / 2);
        // Each read lists changes made since the one before (the document's oldest entry,
        // another host's, is as old as the read before: no overflow, and the first read's
        // pages fell off the end of the second).
        for (read, half) in pages.chunks(10).enumerate() {
            let at = (10 + 10 * read as i64) * MIN;
            let kept: Vec<(UrlKey, i64)> = half.iter().map(|&p| (p, at - MIN)).collect();
            let listing = FeedListing {
                entries,
                oldest_ms: Some(at - 10 * MIN),
                newest_ms: None,
                requested_ms: None,
                kept_by_date: true,
                ttl_ms: None,
            };
            sched.handle_feed_read(at, feed, &kept, listing);
        }
        sched.replan(30 * MIN, true);
        let rates: Vec<f64> = pages
            .iter()
            .map(|&p| sched.summary(p).estimate.rate_per_day)
            .collect();
        (sched.summary(feed).planned_per_day, rates)
    };
    let overflowing = 1.0 / 30.0;
    let (few, rates) = polls(10);
    let needed = crate::plan::polls_to_keep_up(&rates, 5.0, false);
    assert!(needed > 2.0 * 0.5, "{needed} polls a day to keep up");
    assert!((few - overflowing).abs() < 1e-12, "ten entries: {few}");
    let (many, _) = polls(1_000);
    assert!(
        (many - overflowing).abs() < 1e-12,
        "ten of 1,000 entries, the same capacity: {many}"
    );
}

/// A feed whose pages change far faster than the budget visits them can never be worth its
/// polls, however many such pages it comes to list: once it covers enough of them to judge, it
/// is read monthly, not weekly. A feed covering fewer goes on learning weekly.
#[test]
fn a_feed_of_pages_too_fast_to_keep_up_with_is_read_monthly_once_it_covers_enough() {
    // `n` pages, each listed (once, at a change since the read before) by five reads an hour
    // apart: about a change an hour each. The site may make 2 requests a day per page.
    let polls = |n: usize| {
        let mut sched = Scheduler::new(SchedulerConfig::default());
        let site = sched.add_site(1.0, 2.0 * n as f64, 0);
        let host = sched.add_host(0, 0);
        let feed = sched.add_url(
            0,
            NewUrl {
                kind: UrlKind::Feed,
                ..page(site, host, 1.0)
            },
        );
        let pages: Vec<UrlKey> = (0..n)
            .map(|_| sched.add_url(0, page(site, host, 24.0)))
            .collect();
        for read in 1..=5 {
            let at = read * HOUR;
            let listed: Vec<(UrlKey, i64)> = pages.iter().map(|&p| (p, at - HOUR / 2)).collect();
            sched.handle_feed(at, feed, &listed);
        }
        sched.replan(5 * HOUR + 1, true);
        let rates: Vec<f64> = pages
            .iter()
            .map(|&p| sched.summary(p).estimate.rate_per_day)
            .collect();
        // Not the feed that overflows at its most polls (96 a day): that one is read monthly
        // anyway.
        let keep_up = crate::plan::polls_to_keep_up(&rates, 0.5 * n as f64, false);
        assert!(
            keep_up < 96.0,
            "{n} pages: {keep_up} polls a day to keep up"
        );
        assert!(!sched.urls[feed].feed().worth);
        sched.summary(feed).planned_per_day
    };
    let (monthly, weekly) = (1.0 / 30.0, 1.0 / 7.0);
    let judged = polls(20);
    assert!((judged - monthly).abs() < 1e-12, "20 pages: {judged}");
    let learning = polls(4);
    assert!((learning - weekly).abs() < 1e-12, "4 pages: {learning}");
}

/// A feed and two pages a and b, and what each of its reads lists before any change of them:
/// `proven`, b at two times, which shows the feed lists every change.
fn feed_listing_two_pages(proven: bool) -> (Scheduler, UrlKey, [UrlKey; 2], Vec<(UrlKey, i64)>) {
    const MIN: i64 = 60_000;
    let (sched, feed, pages) = feed_and_pages(2);
    let (a, b) = (pages[0], pages[1]);
    let listed = if proven {
        vec![(a, 5 * MIN), (b, 4 * MIN), (b, 6 * MIN)]
    } else {
        vec![(a, 5 * MIN), (b, 6 * MIN)]
    };
    (sched, feed, [a, b], listed)
}

/// A feed that lists each page once, at its latest change, shows one change of a page per read
/// however many came: its latest change counts with the time after it only (until one of the
/// feed's documents lists a page twice, which shows it lists every change: then the whole span
/// counts).
#[test]
fn a_feed_listing_each_page_once_counts_its_latest_change_with_the_time_after_it() {
    const MIN: i64 = 60_000;
    let days = |min: i64| min as f64 / 1440.0;
    for proven in [false, true] {
        let (mut sched, feed, [a, b], listed) = feed_listing_two_pages(proven);
        sched.handle_feed(10 * MIN, feed, &listed);
        check(&mut sched, 20 * MIN, a, Seen::Copy);
        check(&mut sched, 20 * MIN, b, Seen::Copy);
        sched.handle_feed(60 * MIN, feed, &listed);
        let before = sched.urls[a].stats().clone();
        sched.handle_feed(120 * MIN, feed, &[(a, 100 * MIN), (b, 6 * MIN)]);
        let after = sched.urls[a].stats();
        assert_eq!(after.events - before.events, 1.0, "{after:?}");
        let counted = if proven { days(60) } else { days(20) };
        let exposure = after.exposure_days - before.exposure_days;
        assert!(
            (exposure - counted).abs() < 1e-9,
            "proven {proven}: {exposure}"
        );
        assert_eq!(
            sched.copy_knowledge(a).unwrap().known_change_ms,
            Some(100 * MIN)
        );
    }
}

/// A change a check saw that the next read does not list, but a later change of the page
/// instead: a feed that may list only each page's latest change has not missed it; one that
/// has shown it lists every change has.
#[test]
fn a_later_listed_change_answers_for_a_check_only_where_a_feed_lists_latest_changes() {
    const MIN: i64 = 60_000;
    for proven in [false, true] {
        let (mut sched, feed, [a, b], listed) = feed_listing_two_pages(proven);
        sched.handle_feed(10 * MIN, feed, &listed);
        check(&mut sched, 20 * MIN, a, Seen::Copy);
        sched.handle_feed(30 * MIN, feed, &listed);
        check(&mut sched, 40 * MIN, a, Seen::Changed);
        sched.handle_feed(60 * MIN, feed, &[(a, 50 * MIN), (b, 6 * MIN)]);
        assert_eq!(sched.summary(a).covered, !proven, "proven {proven}");
    }
}

/// Read twice a day, a feed that lists a page changing twice a day once, at its latest change,
/// teaches the page's rate: counting each read's latest change as the span's only one held it at
/// 1.26 a day (`(1 - e^-1) / 0.5`).
#[test]
fn a_feed_of_latest_changes_teaches_the_true_rate() {
    use rand::{Rng, SeedableRng};
    const DAY: i64 = 86_400_000;
    let (mut sched, feed, pages) = feed_and_pages(1);
    let a = pages[0];
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let rate = 2.0;
    let mut changes = Vec::new();
    let mut t = 0.0;
    while t < 400.0 {
        t += -(1.0 - rng.random::<f64>()).ln() / rate;
        changes.push((t * DAY as f64) as i64);
    }
    for read in 1..=800 {
        let now = read * DAY / 2;
        let latest = changes.iter().copied().filter(|&c| c <= now).max();
        let entries: Vec<_> = latest.map(|at| (a, at)).into_iter().collect();
        sched.handle_feed(now, feed, &entries);
    }
    let stats = sched.urls[a].stats();
    let learnt = stats.events / stats.exposure_days;
    assert!(
        (learnt / rate - 1.0).abs() < 0.1,
        "{learnt} a day: {stats:?}"
    );
}

/// A feed that first lists a page after a check of it saw the change counts its silence only
/// from that check on (the check counted the time before), and a second listed change the check
/// already saw is not counted again.
#[test]
fn a_feed_that_first_lists_a_page_counts_only_what_its_checks_have_not() {
    const MIN: i64 = 60_000;
    let (mut sched, feed, pages) = feed_and_pages(1);
    let a = pages[0];
    check_each(&mut sched, 10 * MIN, &[(a, Seen::Copy)]);
    sched.handle_feed(50 * MIN, feed, &[]);
    check_each(&mut sched, 100 * MIN, &[(a, Seen::Changed)]);
    let before = sched.urls[a].stats().clone();
    assert_eq!(before.changed_intervals.len(), 1, "{before:?}");
    // The next read lists two changes of a, at 40 and 90: both before the check of 100 that
    // saw them. Silence counts from 100 to the read at 160; neither change counts again.
    sched.handle_feed(160 * MIN, feed, &[(a, 90 * MIN), (a, 40 * MIN)]);
    let after = sched.urls[a].stats();
    assert_eq!(after.events, before.events, "{after:?}");
    assert!(
        (after.exposure_days - before.exposure_days - 60.0 / 1440.0).abs() < 1e-9,
        "{after:?}"
    );
}

/// A read that overflowed still saw every change since its oldest entry: that span counts,
/// its changes too (the oldest entry included), and a check whose span a read counted is not
/// counted again, while a check between two reads counts and the next read starts after it.
/// (Leaving the reads that overflowed out left out the busiest spans: in the demo's `news`
/// host they held 124-146 changes a day against 94-110 in the others, and its fast pages were
/// believed slower than they are.)
#[test]
fn an_overflowing_read_counts_the_span_its_entries_cover() {
    const MIN: i64 = 60_000;
    let days = |min: i64| min as f64 / 1440.0;
    let (mut sched, feed, pages) = feed_and_pages(1);
    let a = pages[0];
    // A feed that lists every change (it lists a twice in each read).
    sched.handle_feed(10 * MIN, feed, &[(a, 4 * MIN), (a, 5 * MIN)]);
    check_each(&mut sched, 20 * MIN, &[(a, Seen::Copy)]);
    // As full as ever and all newer than the last read: it overflowed, blind before 50.
    sched.handle_feed(60 * MIN, feed, &[(a, 50 * MIN), (a, 55 * MIN)]);
    let stats = sched.urls[a].stats().clone();
    assert_eq!(stats.events, 2.0, "{stats:?}");
    assert!((stats.exposure_days - days(10)).abs() < 1e-9, "{stats:?}");
    // The check of 70 spans time the read counted: the feed is its evidence.
    check_each(&mut sched, 70 * MIN, &[(a, Seen::Changed)]);
    assert_eq!(sched.urls[a].stats(), &stats);
    // The check of 100 comes after every read: it counts, and the next read starts after it.
    check_each(&mut sched, 100 * MIN, &[(a, Seen::Unchanged)]);
    sched.handle_feed(130 * MIN, feed, &[(a, 55 * MIN), (a, 50 * MIN)]);
    let stats = sched.urls[a].stats();
    assert_eq!(stats.events, 2.0, "{stats:?}");
    assert!(stats.changed_intervals.is_empty(), "{stats:?}");
    assert!((stats.exposure_days - days(70)).abs() < 1e-9, "{stats:?}");
}

/// A feed that does not list a change a check saw loses the page; the change counts once (the
/// check counted it when no read had counted its span), an entry the feed listed before does
/// not take the page back, a new one does, and one change listed twice counts once.
#[test]
fn a_feed_that_misses_a_change_loses_the_page_until_it_lists_a_new_one() {
    const MIN: i64 = 60_000;
    let (mut sched, feed, a) = one_page_read_around_its_copy();
    // The read of 60 counted the time since the copy: this check counts only the rest.
    check(&mut sched, 70 * MIN, a, Seen::Unchanged);
    // No read since 70: this check counts, its change with it.
    check(&mut sched, 100 * MIN, a, Seen::Changed);
    let changed = |sched: &Scheduler| -> f64 {
        sched.urls[a]
            .stats()
            .changed_intervals
            .iter()
            .map(|(_, n)| n)
            .sum()
    };
    assert_eq!(changed(&sched), 1.0);
    // The next read does not list it, and the feed saw the whole span: it misses a's changes.
    sched.handle_feed(130 * MIN, feed, &[(a, 5 * MIN)]);
    assert!(!sched.summary(a).covered);
    assert_eq!(changed(&sched), 1.0, "the change counts once");
    // An entry it held before does not take the page back; a change listed for the first
    // time does (twice in the read: one change).
    sched.handle_feed(160 * MIN, feed, &[(a, 5 * MIN)]);
    assert!(!sched.summary(a).covered);
    let events = sched.urls[a].stats().events;
    sched.handle_feed(
        200 * MIN,
        feed,
        &[(a, 170 * MIN), (a, 190 * MIN), (a, 190 * MIN)],
    );
    assert!(sched.summary(a).covered);
    assert_eq!(
        sched.urls[a].stats().events,
        events + 1.0,
        "the first sighting (170) is not counted, 190 once"
    );
}

/// A feed blind at every read (it overflows each time) cannot tell whether it missed a change
/// a check saw; after three such changes it never listed, it no longer covers the page.
#[test]
fn a_feed_blind_at_every_read_loses_a_page_whose_changes_it_never_lists() {
    const MIN: i64 = 60_000;
    let (mut sched, feed, pages) = feed_and_pages(2);
    let (a, b) = (pages[0], pages[1]);
    sched.handle_feed(10 * MIN, feed, &[(a, 5 * MIN), (b, 6 * MIN)]);
    check(&mut sched, 20 * MIN, a, Seen::Copy);
    for round in 0..3 {
        let at = 100 * MIN * (round + 1);
        assert!(sched.summary(a).covered, "round {round}");
        check(&mut sched, at, a, Seen::Changed);
        // Two entries of b, both newer than the last read: it overflowed, blind before them.
        sched.handle_feed(
            at + 20 * MIN,
            feed,
            &[(b, at + 5 * MIN), (b, at + 10 * MIN)],
        );
    }
    assert!(!sched.summary(a).covered);
}

/// A page waits for its feed (and the store is told which, for `explain`) once the feed covers
/// it, has proven itself on it and is worth reading; not before, and a feed waits for none.
#[test]
fn a_page_waits_for_its_feed_once_the_feed_has_proven_itself() {
    let (mut sched, feed, pages) = feed_and_pages(1);
    let page = pages[0];
    check(&mut sched, 0, page, Seen::Copy);
    sched.handle_feed(1, feed, &[(page, 0)]);
    assert!(sched.summary(page).covered);
    sched.urls[feed].feed_mut().worth = true;
    assert_eq!(sched.covering_feed(page), None, "not proven yet");
    let coverage = sched.urls[page].evidence_mut().coverage.as_deref_mut();
    coverage.expect("covered").agreements = FEED_TRUST_CHECKS;
    assert_eq!(sched.covering_feed(page), Some(feed));
    assert_eq!(sched.covering_feed(feed), None);
    sched.urls[feed].feed_mut().worth = false;
    assert_eq!(sched.covering_feed(page), None, "a feed not worth reading");
}
