//! The scheduler's tests, by concept, and the small world they share: a page, a driver that
//! runs pages changing on a clock, a check handed out and reported.

use super::*;
use crate::clock::MS_PER_DAY;
use crate::estimate;

mod announcements;
mod budget;
mod estimates;
mod failing;
mod floors;
mod not_made;
mod partly_counted;
mod restored_feeds;
mod signals;
mod sitemap_signals;
mod stamped_feeds;
mod unlisted_pages;

const HOUR: i64 = 3_600_000;
const DAY: i64 = 24 * HOUR;

fn page(site: SiteKey, host: HostKey, true_rate: f64) -> NewUrl {
    NewUrl {
        site,
        host,
        kind: UrlKind::Page,
        weight: 1.0,
        changefreq_per_day: None,
        true_rate: Some(true_rate),
        section: 0,
    }
}

/// Runs a scheduler against pages that change every `change_every_ms` exactly, for `days`;
/// returns the requests made per URL.
fn drive(sched: &mut Scheduler, urls: &[UrlKey], change_every_ms: &[i64], days: i64) -> Vec<u64> {
    drive_until(sched, urls, change_every_ms, days * DAY)
}

/// [`drive`] until `end_ms`.
fn drive_until(
    sched: &mut Scheduler,
    urls: &[UrlKey],
    change_every_ms: &[i64],
    end_ms: i64,
) -> Vec<u64> {
    let mut last_copy = vec![0i64; sched.url_count()];
    drive_reporting(sched, end_ms, |now, url, nth| {
        let i = urls.iter().position(|&u| u == url).expect("known URL");
        let every = change_every_ms[i];
        let changed = now / every > last_copy[url] / every;
        let seen = if last_copy[url] == 0 && nth == 1 {
            Seen::Copy
        } else if changed {
            Seen::Changed
        } else {
            Seen::Unchanged
        };
        last_copy[url] = now;
        Fetched::at(now, seen)
    })
}

/// Runs a scheduler from time 0 to `end_ms`, reporting each request handed out at `now` as
/// `outcome(now, url, nth)` says (`nth`: the URL's requests so far, this one included);
/// returns the requests made per URL.
fn drive_reporting(
    sched: &mut Scheduler,
    end_ms: i64,
    outcome: impl FnMut(i64, UrlKey, u64) -> Fetched,
) -> Vec<u64> {
    drive_between(sched, 0, end_ms, outcome)
}

/// [`drive_reporting`] from `start_ms` (`nth` counts this call's requests only).
fn drive_between(
    sched: &mut Scheduler,
    start_ms: i64,
    end_ms: i64,
    mut outcome: impl FnMut(i64, UrlKey, u64) -> Fetched,
) -> Vec<u64> {
    let mut requests = vec![0u64; sched.url_count()];
    let mut now = start_ms;
    while now < end_ms {
        while let Some(req) = sched.poll_request(now) {
            requests[req.url] += 1;
            let fetched = outcome(now, req.url, requests[req.url]);
            sched.handle_fetched(now, req.url, fetched);
        }
        let wake = sched.poll_timeout().expect("URLs stay queued");
        now = wake.max(now + 1);
    }
    requests
}

/// Hands out what is due at `now` until every URL of `wanted` has been reported with its
/// outcome (anything else handed out is reported as a first copy).
fn check_each(sched: &mut Scheduler, now: i64, wanted: &[(UrlKey, Seen)]) {
    let mut left: Vec<(UrlKey, Seen)> = wanted.to_vec();
    for _ in 0..100 {
        if left.is_empty() {
            return;
        }
        let req = sched.poll_request(now).expect("a request is due");
        let what = match left.iter().position(|&(url, _)| url == req.url) {
            Some(i) => left.swap_remove(i).1,
            None => Seen::Copy,
        };
        sched.handle_fetched(now, req.url, Fetched::at(now, what));
    }
    panic!("never handed out: {left:?}");
}

/// Hands `url` out at `now` (reporting anything handed out before it as a copy) and reports it.
fn check(sched: &mut Scheduler, now: i64, url: UrlKey, seen: Seen) {
    check_each(sched, now, &[(url, seen)]);
}

/// [`feed_and_pages`] with one page, listed (changed at 5 min) by the feed's read at 10 min,
/// copied at 20 min and listed again, unchanged, by the read at 60 min: the scheduler, the feed
/// and the page.
fn one_page_read_around_its_copy() -> (Scheduler, UrlKey, UrlKey) {
    const MIN: i64 = 60_000;
    let (mut sched, feed, pages) = feed_and_pages(1);
    let a = pages[0];
    sched.handle_feed(10 * MIN, feed, &[(a, 5 * MIN)]);
    check(&mut sched, 20 * MIN, a, Seen::Copy);
    sched.handle_feed(60 * MIN, feed, &[(a, 5 * MIN)]);
    (sched, feed, a)
}

/// A scheduler with one site (1,000 requests a day) on one host without a gap, its feed, and
/// `pages` pages.
fn feed_and_pages(pages: usize) -> (Scheduler, UrlKey, Vec<UrlKey>) {
    feed_and_pages_on(1000.0, pages)
}

/// Hands out every request from time 0, each answered with a first copy, until each of `urls`
/// has one; gives the time then.
fn copies_of_all(sched: &mut Scheduler, urls: &[UrlKey]) -> i64 {
    let mut now = 0;
    while urls
        .iter()
        .any(|&u| sched.urls[u].last_check_ms().is_none())
    {
        while let Some(req) = sched.poll_request(now) {
            sched.handle_fetched(now, req.url, Fetched::at(now, Seen::Copy));
        }
        now = sched.poll_timeout().expect("URLs stay queued").max(now + 1);
    }
    now
}

/// [`feed_and_pages`] with `requests_per_day` for the site.
fn feed_and_pages_on(requests_per_day: f64, pages: usize) -> (Scheduler, UrlKey, Vec<UrlKey>) {
    let mut sched = Scheduler::new(SchedulerConfig::default());
    let site = sched.add_site(1.0, requests_per_day, 0);
    let host = sched.add_host(0, 0);
    let feed = sched.add_url(
        0,
        NewUrl {
            kind: UrlKind::Feed,
            ..page(site, host, 1.0)
        },
    );
    let pages = (0..pages)
        .map(|_| sched.add_url(0, page(site, host, 1.0)))
        .collect();
    (sched, feed, pages)
}
