//! A feed that dates every entry with the time it is read
//! ([`crate::scheduler::READ_STAMP_SLACK_MS`]): its dates are no change times, and the
//! pages it lists keep the rates their checks show.

use super::announcements::checked_when_due;
use super::*;

/// Pages that never change (`quiet`) and pages that change every `period` (`busy`), the i-th
/// of them at `i * period / busy.len()` past each multiple of it, all on a feed's site and
/// host.
struct Pages {
    quiet: Vec<UrlKey>,
    busy: Vec<UrlKey>,
    period: i64,
}

impl Pages {
    fn add(sched: &mut Scheduler, feed: UrlKey, quiet: usize, busy: usize, period: i64) -> Pages {
        let (site, host) = (sched.urls[feed].site(), sched.urls[feed].host());
        let mut add = |n: usize, hint: f64| -> Vec<UrlKey> {
            (0..n)
                .map(|_| sched.add_url(0, page(site, host, hint)))
                .collect()
        };
        let quiet = add(quiet, 0.01);
        let busy = add(busy, (DAY / period) as f64);
        Pages {
            quiet,
            busy,
            period,
        }
    }

    /// The latest change of the i-th busy page at or before `at`.
    fn latest_change(&self, i: usize, at: i64) -> i64 {
        let offset = i as i64 * self.period / self.busy.len() as i64;
        (at - offset).div_euclid(self.period) * self.period + offset
    }

    /// How many busy pages' copies (taken at `copied_at`, by URL) are stale at `at`.
    fn busy_stale(&self, copied_at: &[Option<i64>], at: i64) -> u32 {
        let stale =
            |(i, &p): (usize, &UrlKey)| copied_at[p].is_none_or(|c| self.latest_change(i, at) > c);
        self.busy.iter().enumerate().filter(|&e| stale(e)).count() as u32
    }

    /// What a check of `url` at `now` sees, its last copy taken at `copied_at`.
    fn seen(&self, url: UrlKey, copied_at: Option<i64>, now: i64) -> Seen {
        match (copied_at, self.busy.iter().position(|&b| b == url)) {
            (None, _) => Seen::Copy,
            (Some(last), Some(i)) if self.latest_change(i, now) > last => Seen::Changed,
            (Some(_), _) => Seen::Unchanged,
        }
    }
}

/// What a day and a quarter of one site showed: 20 pages that never change and 20 that change
/// every 6 h (staggered, 18 min apart), all listed by one feed, 300 requests a day, one host
/// without a gap.
struct Outcome {
    /// Page requests in each hour.
    page_requests: Vec<u32>,
    /// The changing pages' mean estimated rate (a day) at the start of each hour.
    busy_rates: Vec<f64>,
    /// The share of the changing pages' copies that were stale, sampled every 10 min from
    /// hour 6 on.
    busy_stale_share: f64,
}

const PERIOD: i64 = 6 * HOUR;
const HOURS: usize = 30;

/// What the feed lists.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Listed {
    /// Nothing.
    Nothing,
    /// Every page: the changing ones at their latest change, the quiet ones at time 0 (before
    /// their copies).
    TrueDates,
    /// Every page, at the time of the read.
    DatedAtTheRead,
}

fn run_world(listed: Listed) -> Outcome {
    let (mut sched, feed, _) = feed_and_pages_on(300.0, 0);
    let pages = Pages::add(&mut sched, feed, 20, 20, PERIOD);
    let (quiet, busy) = (&pages.quiet, &pages.busy);
    let mut copied_at = vec![None::<i64>; sched.url_count()];
    let mut page_requests = vec![0; HOURS];
    let mut busy_rates = vec![0.0; HOURS];
    let (mut stale, mut samples) = (0, 0);
    let mut next_sample = 0;
    let mut now = 0;
    while now < HOURS as i64 * HOUR {
        while next_sample <= now {
            let h = (next_sample / HOUR) as usize;
            if next_sample % HOUR == 0 {
                busy_rates[h] = busy
                    .iter()
                    .map(|&p| sched.full_posterior(p).mean())
                    .sum::<f64>()
                    / busy.len() as f64;
            }
            if next_sample >= 6 * HOUR {
                samples += busy.len() as u32;
                stale += pages.busy_stale(&copied_at, next_sample);
            }
            next_sample += 10 * 60_000;
        }
        while let Some(req) = sched.poll_request(now) {
            let url = req.url;
            let seen = pages.seen(url, copied_at[url], now);
            copied_at[url] = Some(now);
            if url != feed {
                page_requests[(now / HOUR) as usize] += 1;
            }
            sched.handle_fetched(now, url, Fetched::at(now, seen));
            if url == feed {
                let entries: Vec<(UrlKey, i64)> = (quiet.iter().map(|&p| (p, 0)))
                    .chain(
                        busy.iter()
                            .enumerate()
                            .map(|(i, &p)| (p, pages.latest_change(i, now).max(0))),
                    )
                    .filter(|_| listed != Listed::Nothing)
                    .map(|(p, at)| {
                        (
                            p,
                            if listed == Listed::DatedAtTheRead {
                                now
                            } else {
                                at
                            },
                        )
                    })
                    .collect();
                sched.handle_feed(now, feed, &entries);
            }
        }
        now = sched.poll_timeout().expect("URLs stay queued").max(now + 1);
    }
    Outcome {
        page_requests,
        busy_rates,
        busy_stale_share: f64::from(stale) / f64::from(samples),
    }
}

/// Counted as a change at the read with the time after it, each read of a feed that dates its
/// entries at the read added one change over no time: the changing pages' estimated rate rose
/// from 144 a day (the prior) to 1,584 after four reads and 5,560 after six, the plan gave up
/// on them as changing too fast to keep, and hours 8 to 11 made 0, 6, 6 and 6 page requests
/// against 10 to 15 with true dates. Left to the checks, the rates stay near the truth (4 a
/// day) and the site's requests flow as with true dates.
#[test]
fn a_feed_dating_its_entries_at_the_read_teaches_no_rates() {
    let nothing = run_world(Listed::Nothing);
    let true_dates = run_world(Listed::TrueDates);
    let at_the_read = run_world(Listed::DatedAtTheRead);
    for (name, outcome) in [
        ("true dates", &true_dates),
        ("dated at the read", &at_the_read),
    ] {
        let (rates, requests) = (&outcome.busy_rates, &outcome.page_requests);
        // The prior says 144 a day; a few checks that all found a change may raise it, but
        // not tenfold, and from hour 8 the evidence holds the rates near the truth.
        assert!(
            rates.iter().all(|&r| r < 400.0) && rates[8..].iter().all(|&r| r < 30.0),
            "{name}: the changing pages' rates by hour {rates:.1?}"
        );
        assert!(
            requests[4..].iter().all(|&n| n >= 3),
            "{name}: page requests by hour {requests:?}"
        );
        assert!(
            (2.0..8.0).contains(&rates[HOURS - 1]),
            "{name}: the changing pages' rates by hour {rates:.1?}"
        );
    }
    // Dated at the read, the feed costs the changing pages next to nothing against listing
    // nothing (0.218 of their copies stale against 0.223); with true dates, 0.065.
    let (at_read, none, truly) = (
        at_the_read.busy_stale_share,
        nothing.busy_stale_share,
        true_dates.busy_stale_share,
    );
    assert!(
        at_read <= 1.1 * none && truly < 0.5 * none,
        "stale shares: dated at the read {at_read:.3}, nothing listed {none:.3}, true dates {truly:.3}"
    );
}

/// What two feeds of one host showed over two days: an honest one listing 5 pages that change
/// every 2 h (each at its latest change), and one generated on request listing 10 pages that
/// never change, each at the time of the read, or nothing (300 requests a day, one host
/// without a gap).
struct TwoFeeds {
    /// Whether the host's feed entries were believed at the end.
    believed: bool,
    /// The changing pages' share of stale copies, sampled every 10 min from hour 6 on.
    busy_stale_share: f64,
    /// Whether the scheduler took the second feed to stamp its entries.
    stamps: bool,
}

fn run_two_feeds(second_lists: bool) -> TwoFeeds {
    let (mut sched, honest, _) = feed_and_pages_on(300.0, 0);
    let (site, host) = (sched.urls[honest].site(), sched.urls[honest].host());
    let stamping = sched.add_url(
        0,
        NewUrl {
            kind: UrlKind::Feed,
            ..page(site, host, 1.0)
        },
    );
    let pages = Pages::add(&mut sched, honest, 10, 5, 2 * HOUR);
    let (quiet, busy) = (&pages.quiet, &pages.busy);
    let mut copied_at = vec![None::<i64>; sched.url_count()];
    let (mut stale, mut samples, mut next_sample) = (0, 0, 6 * HOUR);
    let mut now = 0;
    while now < 2 * DAY {
        while next_sample <= now {
            samples += busy.len() as u32;
            stale += pages.busy_stale(&copied_at, next_sample);
            next_sample += 10 * 60_000;
        }
        while let Some(req) = sched.poll_request(now) {
            let url = req.url;
            let seen = pages.seen(url, copied_at[url], now);
            copied_at[url] = Some(now);
            sched.handle_fetched(now, url, Fetched::at(now, seen));
            if url == honest {
                let entries: Vec<(UrlKey, i64)> = (busy.iter().enumerate())
                    .map(|(i, &p)| (p, pages.latest_change(i, now).max(0)))
                    .collect();
                sched.handle_feed(now, honest, &entries);
            } else if url == stamping {
                let entries: Vec<(UrlKey, i64)> = (quiet.iter().map(|&p| (p, now)))
                    .filter(|_| second_lists)
                    .collect();
                sched.handle_feed(now, stamping, &entries);
            }
        }
        now = sched.poll_timeout().expect("URLs stay queued").max(now + 1);
    }
    TwoFeeds {
        believed: sched.believes_feed_entries(host),
        busy_stale_share: f64::from(stale) / f64::from(samples),
        stamps: sched.stamps_feed_entries(stamping),
    }
}

/// A feed generated on request, listing every page it holds at the time of the read, is seen
/// to stamp its entries at its second read, and its entries announce nothing after. Announced,
/// they sent its pages at every read, their checks found them unchanged, and the host's feed
/// entries were no longer believed, an honest feed's beside it included: its changing pages
/// were then 0.163 of the time stale, against 0.103 now and 0.094 with the second feed empty.
#[test]
fn a_feed_stamping_its_entries_costs_an_honest_feed_beside_it_nothing() {
    let stamping = run_two_feeds(true);
    let empty = run_two_feeds(false);
    assert!(stamping.stamps && !empty.stamps);
    assert!(stamping.believed && empty.believed);
    let (with, without) = (stamping.busy_stale_share, empty.busy_stale_share);
    assert!(
        with <= 1.25 * without,
        "the changing pages' stale share: {with:.3} beside a stamping feed, {without:.3} beside an empty one"
    );
}

/// One entry dated in the minute before the read, beside one dated an hour before: the first
/// teaches nothing of when its page changed, so its span is left to the page's next check,
/// which counts a change somewhere in the time after the first read (the first read counted
/// the time before), whatever reads came between, a failed check's too; the second counts as
/// a change at its time, with the time after it.
#[test]
fn an_entry_dated_at_the_read_leaves_its_span_to_the_check() {
    let (mut sched, feed, pages) = feed_and_pages(2);
    let (dated, stamped) = (pages[0], pages[1]);
    let now = copies_of_all(&mut sched, &[feed, dated, stamped]);
    let first_read = now;
    sched.handle_feed(first_read, feed, &[(dated, 0), (stamped, 0)]);
    let before = sched.urls[stamped].stats().clone();
    let read = now + 2 * HOUR;
    // (The feed has held more entries than these two, so the read did not overflow.)
    let both = [(dated, read - HOUR), (stamped, read - 10_000)];
    let listing = FeedListing {
        entries: 10,
        oldest_ms: Some(0),
        newest_ms: None,
        requested_ms: None,
        kept_by_date: true,
        ttl_ms: None,
    };
    sched.handle_feed_read(read, feed, &both, listing);
    assert!(!sched.stamps_feed_entries(feed));
    assert_eq!(sched.urls[dated].stats().events, 1.0);
    assert_eq!(*sched.urls[stamped].stats(), before);
    // The entry still makes the page known stale, and its check follows.
    assert_eq!(sched.acted_known_change(stamped), Some(read - 10_000));
    // A read before the check counts nothing of the page (the change lies before it), nor
    // does one after a check that got no copy.
    let next_read = read + HOUR / 2;
    sched.handle_feed_read(next_read, feed, &both, listing);
    assert_eq!(*sched.urls[stamped].stats(), before);
    let failed = checked_when_due(&mut sched, next_read, stamped, Seen::Failed);
    sched.handle_feed_read(failed + 1, feed, &both, listing);
    assert_eq!(*sched.urls[stamped].stats(), before);
    let check = checked_when_due(&mut sched, failed + 1, stamped, Seen::Changed);
    let changed = &sched.urls[stamped].stats().changed_intervals;
    assert_eq!(changed.len(), 1, "{changed:?}");
    // The first read counted the time up to it.
    let span_days = (check - first_read) as f64 / DAY as f64;
    assert!(
        (changed[0].0 - span_days).abs() < 1e-9,
        "{changed:?} {span_days}"
    );
}

/// A feed of the last minute's changes (each read lists new pages changed just before it, and
/// the older entries at their own times) re-dates nothing: it is never taken to stamp, however
/// many of its entries fall in the minute before a read.
#[test]
fn a_feed_of_the_last_minutes_changes_is_not_taken_to_stamp() {
    let (mut sched, feed, pages) = feed_and_pages(10);
    let now = copies_of_all(&mut sched, &pages);
    let listing = FeedListing {
        entries: 10,
        oldest_ms: Some(0),
        newest_ms: None,
        requested_ms: None,
        kept_by_date: true,
        ttl_ms: None,
    };
    let mut entries: Vec<(UrlKey, i64)> = Vec::new();
    for read in 0..5 {
        let at = now + (read + 1) * HOUR;
        // Two pages changed in the minute before this read, on top of the earlier ones.
        for &page in &pages[2 * read as usize..2 * read as usize + 2] {
            entries.push((page, at - 20_000));
        }
        let ignored = sched.handle_feed_read(at, feed, &entries, listing);
        assert!(!ignored, "read {read} taken for stamped");
        assert!(!sched.stamps_feed_entries(feed), "read {read}");
    }
}
