//! Requests handed out and not made (robots.txt disallows the URL for now, a fetch window,
//! another worker's row taken up meanwhile): they cost their site nothing, and give back what
//! they were charged outside the plan. A feed refused (its row no longer a feed's) lets its
//! pages go.

use super::*;

#[test]
fn a_request_not_made_costs_its_site_nothing() {
    // 24 requests a day: one an hour, and the bucket holds one. Two hosts: one whose URL
    // robots.txt disallows (deferred each time it comes up), one with a page.
    let mut sched = Scheduler::new(SchedulerConfig::default());
    let site = sched.add_site(1.0, 24.0, 0);
    let (blocked_host, open_host) = (sched.add_host(0, 0), sched.add_host(0, 0));
    let blocked = sched.add_url(0, page(site, blocked_host, 1.0));
    sched.add_url(0, page(site, open_host, 1.0));
    let mut made = 0;
    let mut now = 0;
    while now < 2 * DAY {
        while let Some(req) = sched.poll_request(now) {
            if req.url == blocked {
                // Disallowed for the next 10 minutes (rules that expire often).
                sched.defer(now, blocked, now + 10 * 60_000);
            } else {
                made += 1;
                sched.handle_fetched(now, req.url, Fetched::at(now, Seen::Copy));
            }
        }
        now = sched.poll_timeout().expect("queued").max(now + 1);
    }
    assert_eq!(
        sched.site_requests(site),
        made,
        "only requests made are counted"
    );
    // The disallowed URL came up every 10 minutes; had each cost a request, the page would have
    // had almost none of what the two days allow.
    assert!(made >= 20, "{made} requests made for the open page");
}

/// A request handed out and not made gives back what it added to its site's requests outside
/// the plan, whatever changed meanwhile: a page sent early by a known change (its skipped
/// share of the interval; before, only a failing URL's was given back, so a page deferred at
/// each turn swelled its site's overheads), and a failing URL another worker's row showed
/// answering before the request was put off (before, its retry's charge stayed).
#[test]
fn a_request_not_made_gives_back_its_charge_outside_the_plan() {
    let mut sched = Scheduler::new(SchedulerConfig::default());
    let site = sched.add_site(1.0, 6.0, 0); // each page planned twice a day
    let host = sched.add_host(0, 0);
    let pages: Vec<_> = (0..3)
        .map(|_| sched.add_url(0, page(site, host, 1.0)))
        .collect();
    let now = DAY;
    for &page in &pages {
        sched.restore(
            page,
            Restored {
                last_check_ms: Some(now - HOUR),
                last_attempt_ms: Some(now - HOUR),
                due_ms: Some(now + DAY),
                ..Restored::default()
            },
        );
    }
    // pages[1] failing, its retry due now.
    sched.restore(
        pages[1],
        Restored {
            last_check_ms: Some(now - HOUR),
            last_attempt_ms: Some(now - HOUR),
            failures: 3,
            due_ms: Some(now),
            ..Restored::default()
        },
    );
    sched.handle_known_change(now, pages[0], now - 1);
    let extra = |sched: &Scheduler| sched.sites[site].extra_since_plan;
    let mut put_off = Vec::new();
    let mut at = now;
    while put_off.len() < 2 && at < now + DAY {
        while let Some(request) = sched.poll_request(at) {
            let url = request.url;
            if url == pages[2] || put_off.contains(&url) {
                sched.handle_fetched(at, url, Fetched::at(at, Seen::Copy));
                continue;
            }
            let charged = sched.advance_in_flight.get(&url).copied().unwrap_or(0.0);
            assert!(
                charged > 0.0,
                "{url}: a request outside the plan is counted"
            );
            if url == pages[1] {
                // Another worker's row: its check answered (0 failures).
                sched.restore(
                    url,
                    Restored {
                        last_check_ms: Some(at - 1),
                        due_ms: Some(at + HOUR),
                        ..Restored::default()
                    },
                );
            }
            let before = extra(&sched);
            sched.defer(at, url, at + DAY);
            assert!(
                (before - charged - extra(&sched)).abs() < 1e-9,
                "{url}: {} after, {before} before, {charged} charged",
                extra(&sched)
            );
            put_off.push(url);
        }
        at = sched.poll_timeout().expect("queued").max(at + 1);
    }
    assert_eq!(put_off.len(), 2, "both sent early: {put_off:?}");
}

/// A feed refused when it is handed out (another worker's start made its row a sitemap's):
/// the pages that waited for it follow their own plans at once, not eight planned intervals
/// after their last checks.
#[test]
fn the_pages_of_a_feed_refused_follow_their_plans_at_once() {
    let (mut sched, feed, pages) =
        super::restored_feeds::restarted_with_coverage(5, super::restored_feeds::TWENTY_LATEST);
    let start = 10 * DAY;
    assert!(pages.iter().all(|&page| sched.summary(page).covered));
    let waiting: Vec<i64> = (pages.iter())
        .map(|&page| sched.summary(page).due_ms.expect("queued"))
        .collect();
    let handed = sched
        .poll_request(start)
        .expect("the feed, due at the start");
    assert_eq!(handed.url, feed);
    sched.refuse(start, feed);
    assert!(sched.is_retired(feed));
    for (&page, waiting) in pages.iter().zip(waiting) {
        let summary = sched.summary(page);
        assert!(!summary.covered);
        let due = summary.due_ms.expect("queued");
        let by_plan = start - HOUR + (DAY as f64 / summary.planned_per_day) as i64;
        assert!(
            due < waiting && due <= by_plan + 1,
            "{due} {waiting} {by_plan}"
        );
    }
}
