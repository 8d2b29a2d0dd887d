//! Announcements that are false alarms: a feed that re-dates its entries at every read (here
//! a few minutes before it, as a cache rebuilt on a timer would: dated at the read itself, they
//! are caught by their dates first, `stamped_feeds`), a sitemap that stamps every `lastmod`
//! with the time it is read. The checks they send find
//! nothing new; after a few the host's announcements of that kind are not believed, and the
//! pages they name go on their plan, not at every read.

use super::*;

const MINUTE: i64 = 60_000;

/// Pages that never change, announced at every read of their feed or sitemap, share a site
/// (100 requests a day, one host without a gap) with pages that change hourly and that no
/// announcement names. Returns the requests made to the quiet pages and to the busy ones
/// from day 3 to day 10, and the quiet pages' estimated rates at the end.
struct Outcome {
    quiet_requests: u64,
    busy_requests: u64,
    quiet_rates: Vec<f64>,
}

/// How the quiet pages are announced.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Announced {
    /// Nothing names them.
    Nothing,
    /// Their feed lists each with the time it was rebuilt, 10 min before each read (a feed
    /// that stamps its entries at the read is caught by its dates first, `stamped_feeds`).
    RedatingFeed,
    /// Their sitemap, read hourly, gives each the time of the read as its `lastmod`.
    StampingSitemap,
}

fn run_world(announced: Announced) -> Outcome {
    let (mut sched, feed, _) = feed_and_pages_on(100.0, 0);
    let (site, host) = (sched.urls[feed].site(), sched.urls[feed].host());
    let quiet: Vec<UrlKey> = (0..4)
        .map(|_| sched.add_url(0, page(site, host, 0.01)))
        .collect();
    let busy: Vec<UrlKey> = (0..4)
        .map(|_| sched.add_url(0, page(site, host, 24.0)))
        .collect();
    let mut last_copy = vec![None::<i64>; sched.url_count()];
    let (mut quiet_requests, mut busy_requests) = (0, 0);
    let mut next_sitemap = HOUR;
    let mut now = 0;
    while now < 10 * DAY {
        while let Some(req) = sched.poll_request(now) {
            let url = req.url;
            let seen = match last_copy[url] {
                None => Seen::Copy,
                Some(last) if busy.contains(&url) && now / HOUR > last / HOUR => Seen::Changed,
                Some(_) => Seen::Unchanged,
            };
            last_copy[url] = Some(now);
            if now >= 3 * DAY {
                quiet_requests += u64::from(quiet.contains(&url));
                busy_requests += u64::from(busy.contains(&url));
            }
            sched.handle_fetched(now, url, Fetched::at(now, seen));
            if url == feed {
                let entries: Vec<(UrlKey, i64)> = match announced {
                    Announced::RedatingFeed => {
                        quiet.iter().map(|&p| (p, now - 10 * MINUTE)).collect()
                    }
                    Announced::StampingSitemap | Announced::Nothing => Vec::new(),
                };
                sched.handle_feed(now, feed, &entries);
            }
        }
        if announced == Announced::StampingSitemap && now >= next_sitemap {
            for &p in &quiet {
                sched.handle_sitemap_listing(p, now, Some(now));
            }
            next_sitemap += HOUR;
        }
        let wake = sched.poll_timeout().expect("URLs stay queued");
        now = wake.max(now + 1);
        if announced == Announced::StampingSitemap {
            now = now.min(next_sitemap);
        }
    }
    let quiet_rates = quiet
        .iter()
        .map(|&p| sched.summary(p).estimate.rate_per_day)
        .collect();

    Outcome {
        quiet_requests,
        busy_requests,
        quiet_rates,
    }
}

/// Before, a feed re-dating its entries kept its quiet pages at 12.8 changes a day and took
/// half the site's requests (322 of 658); a sitemap stamping its `lastmod`s took 629 of 698.
#[test]
fn announcements_that_are_false_alarms_stop_sending_their_pages() {
    let unnamed = run_world(Announced::Nothing);
    let slowest = unnamed.quiet_rates.iter().copied().fold(0.0, f64::max);
    for announced in [Announced::RedatingFeed, Announced::StampingSitemap] {
        let lying = run_world(announced);
        let what = format!(
            "{announced:?}: quiet pages {} requests, busy {}, rates {:?}; unnamed: quiet {}, \
             busy {}, rates {:?}",
            lying.quiet_requests,
            lying.busy_requests,
            lying.quiet_rates,
            unnamed.quiet_requests,
            unnamed.busy_requests,
            unnamed.quiet_rates
        );
        eprintln!("{what}");
        assert!(
            lying.quiet_requests as f64 <= 1.25 * unnamed.quiet_requests as f64 + 4.0,
            "{what}"
        );
        assert!(
            lying.busy_requests as f64 >= 0.95 * unnamed.busy_requests as f64,
            "{what}"
        );
        assert!(
            lying.quiet_rates.iter().all(|&rate| rate < 2.0 * slowest),
            "{what}"
        );
    }
}

/// A host whose sitemap stamped its `lastmod`s and then tells the truth is believed again: the
/// checks its plan sends bear out the changes it announces, and once they outweigh its false
/// alarms a newer `lastmod` makes the page known stale again.
#[test]
fn a_host_that_mends_its_sitemap_is_believed_again() {
    let mut sched = Scheduler::new(SchedulerConfig::default());
    let site = sched.add_site(1.0, 100.0, 0);
    let host = sched.add_host(0, 0);
    let pages: Vec<UrlKey> = (0..4)
        .map(|_| sched.add_url(0, page(site, host, 0.1)))
        .collect();
    let mut now = 0;
    for &p in &pages {
        if sched.urls[p].last_check_ms().is_none() {
            now = checked_when_due(&mut sched, now, p, Seen::Copy);
        }
    }
    // Two stamped lastmods, each followed by a check that finds nothing new.
    for &p in &pages[..2] {
        now += HOUR;
        sched.handle_sitemap_listing(p, now, Some(now));
        assert_eq!(
            sched.urls[p].known_change_ms(),
            Some(now),
            "believed at first"
        );
        now = checked_when_due(&mut sched, now, p, Seen::Unchanged);
    }
    now += HOUR;
    sched.handle_sitemap_listing(pages[2], now, Some(now));
    assert_eq!(
        sched.urls[pages[2]].known_change_ms(),
        None,
        "two false alarms"
    );
    // Mended: each page changes once a day, and its sitemap says when. The checks its plan
    // sends find the changes.
    let mut changed = vec![None::<i64>; sched.url_count()];
    let mut copied = vec![now; sched.url_count()];
    let mut believed_again = None;
    let start = now;
    while now < start + 30 * DAY && believed_again.is_none() {
        now += HOUR;
        for (i, &p) in pages.iter().enumerate() {
            if (now / HOUR) % 24 == 5 + i as i64 {
                changed[p] = Some(now);
                sched.handle_sitemap_listing(p, now, Some(now));
                if sched.urls[p].known_change_ms() == Some(now) {
                    believed_again = Some(now);
                }
            }
        }
        while let Some(req) = sched.poll_request(now) {
            let seen = match changed[req.url] {
                Some(at) if at > copied[req.url] => Seen::Changed,
                _ => Seen::Unchanged,
            };
            copied[req.url] = now;
            sched.handle_fetched(now, req.url, Fetched::at(now, seen));
        }
    }
    let after = believed_again.expect("believed again within 30 days") - start;
    assert!(after >= 2 * DAY, "believed again after {} h", after / HOUR);
}

/// Runs the scheduler from `now` until it hands `url` out, reporting it as `seen` and anything
/// before it as a first copy or unchanged; returns the time it went.
pub(super) fn checked_when_due(
    sched: &mut Scheduler,
    mut now: i64,
    url: UrlKey,
    seen: Seen,
) -> i64 {
    loop {
        while let Some(req) = sched.poll_request(now) {
            let what = match sched.urls[req.url].last_check_ms() {
                _ if req.url == url => seen,
                None => Seen::Copy,
                Some(_) => Seen::Unchanged,
            };
            sched.handle_fetched(now, req.url, Fetched::at(now, what));
            if req.url == url {
                return now;
            }
        }
        now = sched.poll_timeout().expect("URLs stay queued").max(now + 1);
    }
}

/// A host's first feed entries are acted on two at a time until two have been judged (its
/// first read made every page it listed due at once). Once proven, a feed that turns to
/// re-dating its entries marks every page it lists known stale at a read; once two of them
/// have been checked and found unchanged, the others' marks are not acted on: they go on
/// their plan (from the next plan, which schedules every URL again), and the freshness
/// estimate does not count them as known stale. A check that could not compare
/// ([`Seen::Copy`]) judges nothing.
#[test]
fn marks_made_before_a_host_lost_belief_are_not_acted_on() {
    let (mut sched, feed, pages) = feed_and_pages(4);
    let mut now = 0;
    for &p in &pages {
        now = checked_when_due(&mut sched, now, p, Seen::Copy);
    }
    let host = sched.urls[pages[0]].host();
    // On probation: two of four entries are acted on, and bear out.
    now += HOUR;
    // (Dated 10 min before the read: entries dated at the read are taken for stamps,
    // `stamped_feeds`.)
    let honest: Vec<(UrlKey, i64)> = pages.iter().map(|&p| (p, now - 10 * MINUTE)).collect();
    sched.handle_feed(now, feed, &honest);
    let acted: Vec<UrlKey> = (pages.iter().copied())
        .filter(|&p| sched.acted_known_change(p).is_some())
        .collect();
    assert_eq!(acted.len(), 2, "{acted:?}");
    assert!(!sched.records_feed_entries(host));
    for &p in &acted {
        now = checked_when_due(&mut sched, now, p, Seen::Changed);
    }
    assert!(sched.records_feed_entries(host));
    // The others' entries were judged by their plan's checks meanwhile, or are now.
    for &p in &pages {
        if !acted.contains(&p) {
            now = checked_when_due(&mut sched, now, p, Seen::Changed);
        }
    }
    // Proven; now it re-dates its entries.
    now += HOUR;
    let redated_at = now - 10 * MINUTE;
    let redated: Vec<(UrlKey, i64)> = pages.iter().map(|&p| (p, redated_at)).collect();
    sched.handle_feed(now, feed, &redated);
    for &p in &pages {
        assert_eq!(sched.acted_known_change(p), Some(redated_at));
    }
    // The first page's check cannot compare: nothing is judged.
    let first = checked_when_due(&mut sched, now, pages[0], Seen::Copy);
    assert!(sched.believes_feed_entries(host));
    let mut at = first;
    for &p in &pages[1..3] {
        at = checked_when_due(&mut sched, at, p, Seen::Unchanged);
    }
    assert!(!sched.believes_feed_entries(host));
    let last = pages[3];
    assert_eq!(sched.urls[last].known_change_ms(), Some(redated_at));
    assert_eq!(sched.acted_known_change(last), None);
    assert!(
        sched
            .copy_knowledge(last)
            .unwrap()
            .known_change_ms
            .is_none()
    );
}
