//! URLs whose checks fail: out of their site's plan from the second failure in a row, tried
//! again on a back-off of their own, never ahead of it.

use super::*;

/// A scheduler with one site of `requests_per_day` on one host without a gap, and `pages`
/// pages changing `rate` times a day: (the scheduler, the host, the pages).
fn one_host_site(
    requests_per_day: f64,
    pages: usize,
    rate: f64,
) -> (Scheduler, HostKey, Vec<UrlKey>) {
    let mut sched = Scheduler::new(SchedulerConfig::default());
    let site = sched.add_site(1.0, requests_per_day, 0);
    let host = sched.add_host(0, 0);
    let urls = (0..pages)
        .map(|_| sched.add_url(0, page(site, host, rate)))
        .collect();
    (sched, host, urls)
}

/// Puts `url` back as a restart would: copied at 0, last tried at `tried_ms`, `failures` in a
/// row, its retry due at `due_ms`.
fn restore_failing(sched: &mut Scheduler, url: UrlKey, tried_ms: i64, failures: u8, due_ms: i64) {
    sched.restore(
        url,
        Restored {
            last_check_ms: Some(0),
            last_attempt_ms: Some(tried_ms),
            failures,
            due_ms: Some(due_ms),
            ..Restored::default()
        },
    );
}

/// Runs from `from_ms` to `to_ms`, `url` answering `seen` and the others changed: when `url`
/// was asked.
fn asked_between(
    sched: &mut Scheduler,
    url: UrlKey,
    from_ms: i64,
    to_ms: i64,
    seen: Seen,
) -> Vec<i64> {
    let mut asked_at = Vec::new();
    drive_between(sched, from_ms, to_ms, |now, asked, _| {
        if asked == url {
            asked_at.push(now);
            Fetched::at(now, seen)
        } else {
            Fetched::at(now, Seen::Changed)
        }
    });
    asked_at
}

/// Pages that fail at every check (gone, or broken) leave the plan after their second failure:
/// the budget goes to the pages that answer, and the failing ones are tried again after an
/// hour doubled at each failure, up to a day. Before, each kept its share of the plan and was
/// tried again at its planned interval: 386 of the 1,000 requests went to five dead pages.
#[test]
fn failing_pages_leave_the_plan_and_the_budget_goes_to_the_pages_that_answer() {
    let (mut sched, _, urls) = one_host_site(100.0, 10, 5.0);
    let failing = |url: UrlKey| urls[5..].contains(&url);
    let requests = drive_reporting(&mut sched, 10 * DAY, |now, url, _| {
        // The others change between every two checks.
        let seen = if failing(url) {
            Seen::Failed
        } else {
            Seen::Changed
        };
        Fetched::at(now, seen)
    });
    let dead: u64 = requests[5..].iter().sum();
    let answered: u64 = requests[..5].iter().sum();
    // What the reports are told of their plan (`explain` reads this as out of the plan).
    for &url in &urls[5..] {
        assert_eq!(sched.summary(url).planned_per_day, MIN_PLANNED_PER_DAY);
    }
    assert!(sched.summary(urls[0]).planned_per_day > 1.0);
    // An hour after the first failure, then 1 h, 2 h, 4 h, 8 h, 16 h and daily after the
    // second (the even share, 10 a day, spaces them 2.4 h at least): 15 each in ten days.
    assert!(
        requests[5..].iter().all(|&n| (10..=18).contains(&n)),
        "{requests:?}"
    );
    // The budget holds, and the pages that answer take nearly all of it.
    assert!(answered + dead <= 1_010, "{answered} + {dead}");
    assert!(answered >= 850, "{answered} answered, {dead} failed");
}

/// A failing URL's retry goes at its time even when its site's budget has credit to spare (the
/// pages that answer are held to twice a day by their server): fetching ahead never sends it
/// early.
#[test]
fn a_failing_page_is_not_fetched_ahead_of_its_retry() {
    let (mut sched, _, urls) = one_host_site(1_000.0, 4, 5.0);
    let requests = drive_reporting(&mut sched, 4 * DAY, |now, url, _| {
        if url == urls[3] {
            Fetched::at(now, Seen::Failed)
        } else {
            Fetched {
                min_interval_ms: Some(12 * HOUR),
                ..Fetched::at(now, Seen::Changed)
            }
        }
    });
    // At 0 and 1 h (one failure: an hour), then 1 h, 2 h, 4 h, 8 h, 16 h and daily after the
    // second (the even share, 250 a day, spaces nothing): 9 in four days. Fetched ahead of
    // its retries it went 11 times.
    assert_eq!(requests[urls[3]], 9, "{requests:?}");
}

/// A host down for a day (every check unanswered: 503s, timeouts) is its own trouble: its
/// pages keep their plan, none counts more than the one failure of its first check after the
/// host's last answer, and none is failing when the host comes back.
#[test]
fn a_host_down_for_a_day_keeps_its_pages_in_the_plan() {
    let (mut sched, _, urls) = one_host_site(100.0, 10, 5.0);
    let down = 2 * DAY..3 * DAY;
    let mut unanswered = 0;
    drive_reporting(&mut sched, down.end, |now, _, _| {
        if down.contains(&now) {
            unanswered += 1;
            Fetched::at(now, Seen::Unanswered)
        } else {
            Fetched::at(now, Seen::Changed)
        }
    });
    assert!(
        unanswered >= 20,
        "{unanswered} checks while the host was down"
    );
    for &url in &urls {
        assert!(sched.summary(url).failures <= 1, "{:?}", sched.summary(url));
        assert!(sched.summary(url).planned_per_day > 1.0);
    }
}

/// A page that is unanswered (a 503, a timeout) while its host answers the other pages is
/// broken itself: out of the plan from its second such check, as a 404 would be. A check that
/// says nothing (a redirect handed to another worker) leaves its count as it is.
#[test]
fn a_page_unanswered_while_its_host_answers_the_others_is_failing() {
    let (mut sched, _, urls) = one_host_site(100.0, 4, 5.0);
    let requests = drive_reporting(&mut sched, 2 * DAY, |now, url, _| {
        let seen = if url == urls[0] {
            Seen::Unanswered
        } else {
            Seen::Changed
        };
        Fetched::at(now, seen)
    });
    assert!(
        sched.summary(urls[0]).failures >= FAILING_AFTER,
        "{requests:?}"
    );
    assert_eq!(sched.summary(urls[0]).planned_per_day, MIN_PLANNED_PER_DAY);
    // Less than half the requests of a page that answers.
    assert!(2 * requests[urls[0]] < requests[urls[1]], "{requests:?}");

    // Two failures, then only checks that say nothing: still failing, still out of the plan.
    let (mut sched, _, urls) = one_host_site(100.0, 4, 5.0);
    let requests = drive_reporting(&mut sched, 2 * DAY, |now, url, nth| {
        let seen = match (url == urls[0], nth) {
            (true, 1 | 2) => Seen::Failed,
            (true, _) => Seen::Inconclusive,
            (false, _) => Seen::Changed,
        };
        Fetched::at(now, seen)
    });
    assert!(requests[urls[0]] > 3, "{requests:?}");
    assert_eq!(sched.summary(urls[0]).failures, FAILING_AFTER);
    assert_eq!(sched.summary(urls[0]).planned_per_day, MIN_PLANNED_PER_DAY);
}

/// A failing URL put back from the store (a restart) is still failing: out of the plan through
/// every re-plan, asked no sooner than its stored retry, and its next failure backs off from
/// its stored count.
#[test]
fn a_restored_failing_page_stays_out_of_the_plan_until_its_retry() {
    let (mut sched, _, urls) = one_host_site(100.0, 4, 5.0);
    let retry_ms = 2 * DAY;
    sched.restore(
        urls[3],
        Restored {
            failures: 4,
            due_ms: Some(retry_ms),
            ..Restored::default()
        },
    );
    let mut first_retry = None;
    let requests = drive_reporting(&mut sched, retry_ms + 4 * HOUR, |now, url, _| {
        if url == urls[3] {
            first_retry.get_or_insert(now);
            Fetched::at(now, Seen::Failed)
        } else {
            Fetched::at(now, Seen::Changed)
        }
    });
    // At its time, or as soon after as its site's budget lets a request go.
    let first_retry = first_retry.expect("retried");
    assert!(
        (retry_ms..retry_ms + HOUR).contains(&first_retry),
        "{first_retry} {requests:?}"
    );
    assert_eq!(requests[urls[3]], 1, "{requests:?}");
    assert_eq!(sched.summary(urls[3]).planned_per_day, MIN_PLANNED_PER_DAY);
    assert_eq!(sched.summary(urls[3]).failures, 5);
    // Its fifth failure in a row: an hour doubled three times.
    assert_eq!(
        sched.summary(urls[3]).due_ms,
        Some(first_retry + 8 * HOUR),
        "{requests:?}"
    );
    // Another worker's check answered since: its row, taken up, clears the count and the
    // retry (the row's due time stands).
    let answered_at = first_retry + HOUR;
    sched.restore(
        urls[3],
        Restored {
            last_check_ms: Some(answered_at),
            due_ms: Some(answered_at + HOUR),
            ..Restored::default()
        },
    );
    assert_eq!(sched.summary(urls[3]).failures, 0);
    assert_eq!(sched.summary(urls[3]).due_ms, Some(answered_at + HOUR));
    assert!(sched.urls[urls[3]].retry().is_none());
}

/// On a large site (200 pages, 100 requests a day: an even share of one visit in two days), a
/// page its host leaves unanswered while answering the others (a 503 behind a cache whose
/// server is down) is retried on its back-off of hours until that reaches a day, then at the
/// even share; a page that is gone (404) at the even share from its second failure. The first
/// comes back within hours of its server, not days.
#[test]
fn a_page_unanswered_is_retried_within_hours_before_the_even_share() {
    let (mut sched, _, urls) = one_host_site(100.0, 200, 0.5);
    let (unanswered, gone) = (urls[0], urls[1]);
    let requests = drive_reporting(&mut sched, 8 * DAY, |now, url, _| {
        let seen = match url {
            _ if url == unanswered => Seen::Unanswered,
            _ if url == gone => Seen::Failed,
            _ => Seen::Changed,
        };
        Fetched::at(now, seen)
    });
    let (n_unanswered, n_gone) = (requests[unanswered], requests[gone]);
    assert!(sched.summary(unanswered).failures >= FAILING_AFTER);
    assert!(
        n_unanswered >= n_gone + 3,
        "unanswered {n_unanswered}, gone {n_gone}"
    );
    // The gone page at most once in two days after its second failure.
    assert!(n_gone <= 6, "gone {n_gone}");
}

/// A host another worker held meanwhile: what it answered before says nothing of its pages'
/// checks after it comes back (the other worker judged those), so an unanswered check then is
/// the host's trouble until it answers here again.
#[test]
fn a_host_taken_back_from_another_worker_has_answered_nothing_yet() {
    let (mut sched, host, urls) = one_host_site(100.0, 2, 5.0);
    check(&mut sched, 0, urls[0], Seen::Copy);
    check(&mut sched, HOUR, urls[1], Seen::Copy);
    sched.set_host_elsewhere(host, true);
    sched.set_host_elsewhere(host, false);
    // urls[0]'s last check was before the host's last answer (urls[1]'s).
    let now = 2 * DAY;
    check(&mut sched, now, urls[0], Seen::Unanswered);
    assert_eq!(sched.summary(urls[0]).failures, 0);
}

/// A failing page whose change is announced after its last check (a sitemap `lastmod`, a
/// feed's entry) may be back: an article that answered 404 until it was published, a page
/// restored. It is tried at once instead of at its retry (just restarted, no sooner than
/// halfway through the step), once in each step of its back-off: after that early retry
/// failed, neither the same `lastmod` read again nor a newer one brings it before its back-off
/// ends; after, a newer one does, and a copy puts it back in the plan. Before, its retry won
/// over every announcement.
#[test]
fn an_announced_change_brings_a_failing_page_back_once() {
    let (mut sched, _, urls) = one_host_site(100.0, 4, 5.0);
    let gone = urls[3];
    // Restored failing, its last check at 0 and its retry at 1 h.
    restore_failing(&mut sched, gone, 0, 3, HOUR);
    let serve = |sched: &mut Scheduler, from: i64, to: i64, seen: Seen| {
        asked_between(sched, gone, from, to, seen)
    };
    // After a restart, which does not know whether the step's early retry was spent: no
    // sooner than halfway through the step.
    sched.handle_known_change(HOUR / 4, gone, HOUR / 4 - 1);
    let asked_at = serve(&mut sched, 0, HOUR + 1, Seen::Failed);
    assert_eq!(asked_at.len(), 1, "{asked_at:?}");
    assert!((HOUR / 2..HOUR).contains(&asked_at[0]), "{asked_at:?}");
    assert_eq!(sched.summary(gone).failures, 4);
    let early = asked_at[0];

    // That early retry failed: the same `lastmod` read again, and a newer one, bring nothing
    // before its back-off ends (4 h after the fourth failure).
    sched.handle_known_change(early + HOUR, gone, HOUR / 4 - 1);
    sched.handle_known_change(early + 2 * HOUR, gone, early + 2 * HOUR - 1);
    let retried = serve(&mut sched, early + HOUR, early + 5 * HOUR, Seen::Failed);
    assert_eq!(retried.len(), 1, "{retried:?}");
    assert!(retried[0] >= early + 4 * HOUR, "{retried:?}");
    assert_eq!(sched.summary(gone).failures, 5);

    // That step waited out (its next retry 8 h away), a newer announcement brings it at once,
    // or when its site's budget lets the next request go (one in 14.4 minutes), and a copy
    // puts it back in the plan.
    let now = retried[0] + HOUR;
    sched.handle_known_change(now, gone, now - 1);
    let asked_at = serve(&mut sched, now, now + HOUR, Seen::Changed);
    assert_eq!(asked_at.len(), 1, "{asked_at:?}");
    assert!((now..now + 900_000).contains(&asked_at[0]), "{asked_at:?}");
}

/// A feed's entry brings back a page that has failed since it was found and was never copied
/// (the entry came before the article was served); a page whose request was only put off (a
/// fetch window, robots.txt out of reach: its last check gave a copy) keeps its time.
#[test]
fn a_feed_entry_brings_back_a_page_never_copied_not_one_put_off() {
    let (mut sched, feed, pages) = feed_and_pages(2);
    let (never_copied, put_off) = (pages[0], pages[1]);
    check_each(
        &mut sched,
        0,
        &[(never_copied, Seen::Failed), (put_off, Seen::Copy)],
    );
    let now = HOUR / 2; // its retry, an hour after its failure, not yet due
    let request = loop {
        let request = sched
            .poll_request(now)
            .expect("the page is due within its plan");
        if request.url == put_off {
            break request;
        }
        sched.handle_fetched(now, request.url, Fetched::at(now, Seen::Copy));
    };
    sched.defer(now, request.url, now + DAY);

    sched.handle_feed(now, feed, &[(never_copied, now - 1), (put_off, now - 1)]);
    let mut first_asked = None;
    let requests = drive_between(&mut sched, now, now + 2 * HOUR, |at, url, _| {
        if url == never_copied {
            first_asked.get_or_insert(at);
        }
        Fetched::at(at, Seen::Copy)
    });
    assert_eq!(first_asked, Some(now), "{requests:?}");
    assert_eq!(requests[put_off], 0, "{requests:?}");
    assert_eq!(sched.summary(never_copied).failures, 0);
}

/// What an announced change must be newer than survives a restart: a failing page restored
/// with its last attempt is not brought back by a `lastmod` between its copy and that attempt
/// (the sitemap read again after the restart), and is by one after it.
#[test]
fn a_restored_page_remembers_when_it_was_last_tried() {
    let (mut sched, _, urls) = one_host_site(100.0, 4, 5.0);
    let gone = urls[3];
    restore_failing(&mut sched, gone, 3 * HOUR, 4, 11 * HOUR);
    let serve = |sched: &mut Scheduler, from: i64, to: i64| {
        asked_between(sched, gone, from, to, Seen::Failed).len()
    };
    // A `lastmod` between the copy and the restored last attempt brings nothing.
    sched.handle_known_change(8 * HOUR, gone, 2 * HOUR);
    assert_eq!(serve(&mut sched, 8 * HOUR, 10 * HOUR), 0);
    // One after it does (past halfway through the step, 3 h to 11 h).
    sched.handle_known_change(10 * HOUR, gone, 9 * HOUR);
    assert_eq!(serve(&mut sched, 10 * HOUR, 10 * HOUR + HOUR / 2), 1);
}

/// A sitemap that stamps every `lastmod` with the time it is read (hourly here) announces a
/// change of a dead page at each read: it is brought back once in each step of its back-off,
/// not at each read, so it is asked at most twice as often as with no announcement.
#[test]
fn a_lastmod_stamped_at_every_read_sends_a_dead_page_at_most_twice_as_often() {
    let asked = |announce: bool| {
        let (mut sched, _, urls) = one_host_site(100.0, 4, 5.0);
        let gone = urls[3];
        restore_failing(&mut sched, gone, 0, 2, HOUR);
        let mut asked = 0;
        for hour in 0..48 {
            let now = hour * HOUR;
            if announce {
                sched.handle_known_change(now, gone, now - 1);
            }
            asked += asked_between(&mut sched, gone, now, now + HOUR, Seen::Failed).len();
        }
        asked
    };
    let (quiet, stamped) = (asked(false), asked(true));
    assert!(quiet >= 5, "{quiet} without announcements");
    assert!(stamped > quiet, "{stamped} with, {quiet} without");
    assert!(stamped <= 2 * quiet, "{stamped} with, {quiet} without");
}

/// A page whose check failed and whose next request was then put off (a fetch window) keeps
/// the time it was put off to, whatever is announced meanwhile: that time is not its
/// back-off's.
#[test]
fn a_request_put_off_after_a_failure_is_not_brought_forward() {
    let (mut sched, _, urls) = one_host_site(1_000.0, 2, 5.0);
    let page = urls[1];
    check(&mut sched, 0, page, Seen::Failed);
    let retry = sched.urls[page]
        .retry()
        .expect("a retry after the failure")
        .0;
    let request = loop {
        let request = sched.poll_request(retry).expect("the retry is due");
        if request.url == page {
            break request;
        }
        sched.handle_fetched(retry, request.url, Fetched::at(retry, Seen::Copy));
    };
    let put_off_to = retry + DAY;
    sched.defer(retry, request.url, put_off_to);
    sched.handle_known_change(retry + HOUR, page, retry + HOUR - 1);
    let requests = drive_between(&mut sched, retry + HOUR, put_off_to - HOUR, |at, _, _| {
        Fetched::at(at, Seen::Copy)
    });
    assert_eq!(requests[page], 0, "{requests:?}");
}

/// One check its host leaves unanswered (a 503 or a 429 in a minute's trouble) puts a page
/// planned every few minutes off until its next planned visit, not for an hour; one 404, or
/// one that said nothing of the page, puts it off for an hour.
#[test]
fn one_unanswered_check_keeps_the_pages_pace_and_one_404_waits_an_hour() {
    for (seen, at_least, below) in [
        (Seen::Unanswered, 0, HOUR / 2),
        (Seen::Failed, HOUR, 2 * HOUR),
        // A check that said nothing of it (its redirect's target host in trouble): nothing
        // else spaces those.
        (Seen::Inconclusive, HOUR, 2 * HOUR),
    ] {
        let (mut sched, _, urls) = one_host_site(2_000.0, 4, 50.0);
        let page = urls[0];
        // The host answers the others first: the unanswered check counts as the page's.
        check_each(
            &mut sched,
            0,
            &[
                (urls[1], Seen::Copy),
                (urls[2], Seen::Copy),
                (urls[3], Seen::Copy),
            ],
        );
        let mut failed_at = None;
        let mut next = None;
        drive_between(&mut sched, 1, 3 * HOUR, |now, url, _| {
            if url != page {
                return Fetched::at(now, Seen::Changed);
            }
            match failed_at {
                None => {
                    failed_at = Some(now);
                    Fetched::at(now, seen)
                }
                Some(_) => {
                    next.get_or_insert(now);
                    Fetched::at(now, Seen::Changed)
                }
            }
        });
        let (failed_at, next) = (failed_at.expect("asked"), next.expect("asked again"));
        assert_eq!(sched.summary(page).failures, 0, "{seen:?}: answered since");
        assert!(
            (at_least..below).contains(&(next - failed_at)),
            "{seen:?}: asked again {} min after",
            (next - failed_at) / 60_000
        );
    }
}
