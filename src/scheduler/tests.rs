use super::*;

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
    let mut requests = vec![0u64; sched.url_count()];
    let mut last_copy = vec![0i64; sched.url_count()];
    let mut now = 0;
    while now < days * DAY {
        while let Some(req) = sched.poll_request(now) {
            requests[req.url] += 1;
            let i = urls.iter().position(|&u| u == req.url).expect("known URL");
            let every = change_every_ms[i];
            let changed = now / every > last_copy[req.url] / every;
            let seen = if last_copy[req.url] == 0 && requests[req.url] == 1 {
                Seen::Copy
            } else if changed {
                Seen::Changed
            } else {
                Seen::Unchanged
            };
            last_copy[req.url] = now;
            sched.handle_fetched(now, req.url, Fetched::at(now, seen));
        }
        let wake = sched.poll_timeout().expect("URLs stay queued");
        now = wake.max(now + 1);
    }
    requests
}

#[test]
fn the_budget_holds_and_is_spent() {
    let mut sched = Scheduler::new(SchedulerConfig::default());
    let site = sched.add_site(1.0, 100.0, 0);
    let hosts: Vec<_> = (0..4).map(|_| sched.add_host(60_000, 0)).collect();
    let urls: Vec<_> = (0..40)
        .map(|i| sched.add_url(0, page(site, hosts[i % 4], 1.0)))
        .collect();
    let every: Vec<i64> = (0..40).map(|i| HOUR * (1 + i as i64)).collect();
    let requests = drive(&mut sched, &urls, &every, 10);
    let total: u64 = requests.iter().sum();
    // 100 a day for 10 days, plus the bucket's quarter hour.
    assert!((990..=1003).contains(&total), "{total} requests");
    // Fast pages get more visits than slow ones.
    assert!(requests[urls[0]] > requests[urls[39]]);
}

#[test]
fn a_closed_host_holds_nothing_back_and_gets_nothing() {
    let mut sched = Scheduler::new(SchedulerConfig::default());
    let site = sched.add_site(1.0, 1000.0, 0);
    let (open, closed) = (sched.add_host(60_000, 0), sched.add_host(60_000, 0));
    let a = sched.add_url(0, page(site, open, 1.0));
    let b = sched.add_url(0, page(site, closed, 1.0));
    sched.close_host(closed, 10 * HOUR);
    let mut seen = Vec::new();
    let mut now = 0;
    while now < 12 * HOUR {
        while let Some(req) = sched.poll_request(now) {
            seen.push((now, req.url));
            sched.handle_fetched(now, req.url, Fetched::at(now, Seen::Copy));
        }
        now = sched.poll_timeout().expect("queued").max(now + 1);
    }
    assert!(
        seen.iter().any(|&(t, u)| u == a && t < HOUR),
        "the open host went at once"
    );
    assert!(
        seen.iter().any(|&(_, u)| u == b),
        "the closed host went once open"
    );
    assert!(seen.iter().all(|&(t, u)| u != b || t >= 10 * HOUR));
}

#[test]
fn requests_to_a_host_are_never_closer_than_its_interval() {
    let mut sched = Scheduler::new(SchedulerConfig::default());
    let site = sched.add_site(1.0, 1e6, 0);
    let host = sched.add_host(30_000, 0);
    let urls: Vec<_> = (0..20)
        .map(|_| sched.add_url(0, page(site, host, 10.0)))
        .collect();
    let mut times = Vec::new();
    let mut now = 0;
    while now < HOUR {
        while let Some(req) = sched.poll_request(now) {
            times.push(now);
            sched.handle_fetched(now, req.url, Fetched::at(now, Seen::Copy));
        }
        now = sched.poll_timeout().expect("queued").max(now + 1);
    }
    assert!(times.len() > 100 && times.len() <= 121, "{}", times.len());
    assert!(times.windows(2).all(|w| w[1] - w[0] >= 30_000));
    assert_eq!(urls.len(), 20);
}

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

#[test]
fn estimates_follow_the_evidence_and_plans_follow_estimates() {
    let mut sched = Scheduler::new(SchedulerConfig::default());
    let site = sched.add_site(1.0, 200.0, 0);
    let host = sched.add_host(0, 0);
    let urls: Vec<_> = (0..10)
        .map(|_| sched.add_url(0, page(site, host, 1.0)))
        .collect();
    // Half the pages change hourly, half never.
    let every: Vec<i64> = (0..10)
        .map(|i| if i < 5 { HOUR } else { 10_000 * DAY })
        .collect();
    drive(&mut sched, &urls, &every, 20);
    let fast = sched.summary(urls[0]);
    let slow = sched.summary(urls[9]);
    assert!(fast.estimate.rate_per_day > 5.0, "{:?}", fast.estimate);
    assert!(slow.estimate.rate_per_day < 0.5, "{:?}", slow.estimate);
    assert!(fast.planned_per_day > slow.planned_per_day);
}

#[test]
fn every_policy_spends_the_same_budget() {
    for policy in [
        PolicyKind::Learned,
        PolicyKind::Oracle,
        PolicyKind::Uniform,
        PolicyKind::Proportional,
        PolicyKind::Changefreq,
        PolicyKind::Nutch,
    ] {
        let mut sched = Scheduler::new(SchedulerConfig {
            policy,
            ..Default::default()
        });
        let site = sched.add_site(1.0, 60.0, 0);
        let host = sched.add_host(0, 0);
        let urls: Vec<_> = (0..30)
            .map(|i| sched.add_url(0, page(site, host, 0.1 * (1 + i) as f64)))
            .collect();
        let every: Vec<i64> = (0..30).map(|i| DAY / (1 + i as i64)).collect();
        let total: u64 = drive(&mut sched, &urls, &every, 5).iter().sum();
        assert!((297..=302).contains(&total), "{policy:?}: {total}");
    }
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
    // A check of a sees a change no read listed; the next read does not list it either: the
    // feed misses a's changes and watches it no more.
    check(&mut sched, 210 * MIN, a, Seen::Changed);
    sched.handle_feed(
        230 * MIN,
        feed,
        &[(b, 225 * MIN), (b, 150 * MIN), (b, 140 * MIN)],
    );
    assert_eq!(sched.watched(a), None);
    assert!(!sched.summary(a).covered);
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
    let before = sched.urls[a].stats.clone();
    assert_eq!(before.changed_intervals.len(), 1, "{before:?}");
    // The next read lists two changes of a, at 40 and 90: both before the check of 100 that
    // saw them. Silence counts from 100 to the read at 160; neither change counts again.
    sched.handle_feed(160 * MIN, feed, &[(a, 90 * MIN), (a, 40 * MIN)]);
    let after = &sched.urls[a].stats;
    assert_eq!(after.events, before.events, "{after:?}");
    assert!(
        (after.exposure_days - before.exposure_days - 60.0 / 1440.0).abs() < 1e-9,
        "{after:?}"
    );
}

/// A feed that overflows on every read watches nothing: the checks of its pages count, also
/// those after the time it was last blind.
#[test]
fn the_pages_of_an_overflowing_feed_learn_from_their_checks() {
    const MIN: i64 = 60_000;
    let (mut sched, feed, pages) = feed_and_pages(1);
    let a = pages[0];
    sched.handle_feed(10 * MIN, feed, &[(a, 5 * MIN)]);
    check_each(&mut sched, 20 * MIN, &[(a, Seen::Copy)]);
    // As full as ever and all newer than the last read: it overflowed, blind before 50.
    sched.handle_feed(60 * MIN, feed, &[(a, 50 * MIN), (a, 55 * MIN)]);
    check_each(&mut sched, 70 * MIN, &[(a, Seen::Changed)]);
    assert_eq!(sched.urls[a].stats.changed_intervals.len(), 1);
    // The copy of 70 is after the blind time, but the feed still overflows: the quiet check
    // counts.
    check_each(&mut sched, 100 * MIN, &[(a, Seen::Unchanged)]);
    let stats = &sched.urls[a].stats;
    assert!(
        (stats.exposure_days - 30.0 / 1440.0).abs() < 1e-9,
        "{stats:?}"
    );
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

/// A scheduler with one site (1,000 requests a day) on one host without a gap, its feed, and
/// `pages` pages.
fn feed_and_pages(pages: usize) -> (Scheduler, UrlKey, Vec<UrlKey>) {
    let mut sched = Scheduler::new(SchedulerConfig::default());
    let site = sched.add_site(1.0, 1000.0, 0);
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

/// What a sitemap's `lastmod` teaches: on a host whose `lastmod`s showed the changes checks saw,
/// a read listing a page with a `lastmod` no newer than the copy watches it up to the read; a
/// host whose `lastmod`s stay behind the changes (a stale sitemap) never earns that belief, and
/// its silence watches only the share of changes it showed (1 in 5 after three misses).
#[test]
fn a_believed_sitemap_lastmod_watches_the_copy_and_a_stale_one_is_not_believed() {
    const MIN: i64 = 60_000;
    for honest in [true, false] {
        let mut sched = Scheduler::new(SchedulerConfig::default());
        let site = sched.add_site(1.0, 1000.0, 0);
        let host = sched.add_host(0, 0);
        let pages: Vec<UrlKey> = (0..4)
            .map(|_| sched.add_url(0, page(site, host, 1.0)))
            .collect();
        for &p in &pages {
            check(&mut sched, 10 * MIN, p, Seen::Copy);
        }
        // Each of the first three pages is seen changed; the next sitemap read gives it a
        // lastmod after the earlier copy (honest) or before it (stale).
        for (i, &p) in pages[..3].iter().enumerate() {
            let at = (20 + 10 * i as i64) * MIN;
            check(&mut sched, at, p, Seen::Changed);
            let lastmod = if honest { at - 2 * MIN } else { 5 * MIN };
            sched.handle_sitemap_listing(p, at + MIN, Some(lastmod));
        }
        let last = pages[3];
        check(&mut sched, 100 * MIN, last, Seen::Unchanged);
        sched.handle_sitemap_listing(last, 130 * MIN, Some(50 * MIN));
        let expected = Some((if honest { 100 } else { 124 } * MIN, 130 * MIN));
        assert_eq!(sched.watched(last), expected, "honest: {honest}");
        // A lastmod newer than the copy says nothing of quiet (it is a known change).
        sched.handle_sitemap_listing(last, 160 * MIN, Some(140 * MIN));
        assert_eq!(sched.watched(last), expected);
    }
}

/// A feed's span and the part of a sitemap's quiet span an unjudged host is worth are joined
/// when they touch, so neither cuts the other short.
#[test]
fn a_feed_span_and_an_unjudged_sitemap_span_are_joined() {
    const MIN: i64 = 60_000;
    let (mut sched, feed, pages) = feed_and_pages(1);
    let a = pages[0];
    sched.handle_feed(10 * MIN, feed, &[(a, 5 * MIN)]);
    check(&mut sched, 20 * MIN, a, Seen::Copy);
    sched.handle_feed(60 * MIN, feed, &[(a, 5 * MIN)]);
    // The sitemap kept quiet from the copy to 100 min; half of that (from 60 min) is counted.
    sched.handle_sitemap_listing(a, 100 * MIN, Some(5 * MIN));
    assert_eq!(sched.watched(a), Some((20 * MIN, 100 * MIN)));
    // A sitemap span that does not reach the feed's: the later one alone.
    sched.handle_sitemap_listing(a, 180 * MIN, Some(5 * MIN));
    assert_eq!(sched.watched(a), Some((100 * MIN, 180 * MIN)));
}

/// A host not judged yet: its sitemap's silence watches half the span (the changes it would show
/// are as likely as not), and the copy's estimate lies between none watched and all watched.
#[test]
fn an_unjudged_sitemap_watches_half_the_quiet_span() {
    const MIN: i64 = 60_000;
    let mut sched = Scheduler::new(SchedulerConfig::default());
    let site = sched.add_site(1.0, 1000.0, 0);
    let host = sched.add_host(0, 0);
    let p = sched.add_url(0, page(site, host, 1.0));
    check(&mut sched, 100 * MIN, p, Seen::Copy);
    let unwatched = sched.copy_knowledge(p).unwrap();
    sched.handle_sitemap_listing(p, 700 * MIN, Some(50 * MIN));
    assert_eq!(sched.watched(p), Some((400 * MIN, 700 * MIN)));
    let half = sched.copy_knowledge(p).unwrap();
    let all = estimate::CopyKnowledge {
        watched: Some((100 * MIN, 700 * MIN)),
        ..half
    };
    let belief = sched.full_posterior(p);
    let age = |copy: estimate::CopyKnowledge| copy.staleness(&belief, 800 * MIN).expected_age_days;
    assert!(age(all) < age(half) && age(half) < age(unwatched));
}

/// Sitemap re-reads are priced like feed polls: worth more on a host whose `lastmod`s are
/// believed and whose pages change often and are not announced by a feed; never less than daily;
/// only the cron limits them while their cost is unknown or the budget does not bind.
#[test]
fn sitemap_reads_are_worth_their_requests_only_where_lastmod_is_believed() {
    let reads = |believed: bool, documents: usize, budget: f64| {
        let mut sched = Scheduler::new(SchedulerConfig::default());
        let site = sched.add_site(1.0, budget, 0);
        let host = sched.add_host(0, 0);
        for _ in 0..50 {
            sched.add_url(0, page(site, host, 24.0));
        }
        if believed {
            sched.hosts[host].lastmod.agreements = 10;
        }
        sched.set_sitemap_documents(site, documents);
        sched.replan(0);
        sched.sitemap_reads_per_day(site)
    };
    assert_eq!(
        reads(true, 0, 100.0),
        None,
        "cost unknown: the cron decides"
    );
    assert_eq!(reads(false, 2, 100.0), Some(MIN_SITEMAP_READS_PER_DAY));
    let believed = reads(true, 2, 100.0).expect("priced");
    assert!(believed > MIN_SITEMAP_READS_PER_DAY, "{believed}");
    let costly = reads(true, 20, 100.0).expect("priced");
    assert!(costly < believed, "ten times the cost, fewer reads");
    assert_eq!(
        reads(true, 2, 1e9),
        Some(MAX_SITEMAP_READS_PER_DAY),
        "a budget that hardly binds"
    );
}

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

#[test]
fn a_changefreq_says_what_the_pages_carrying_it_have_shown() {
    // Pages that say "daily" change every 8 hours; pages that say "monthly" every 10 days. Both
    // hints are off by a factor of 3, within what a host's hints may be and still be believed.
    let mut sched = Scheduler::new(SchedulerConfig::default());
    let site = sched.add_site(1.0, 200.0, 0);
    let hosts: Vec<_> = (0..4).map(|_| sched.add_host(0, 0)).collect();
    let with_hint = |host, hint: f64| NewUrl {
        changefreq_per_day: Some(hint),
        ..page(site, host, 1.0)
    };
    let (daily, monthly) = (1.0, 1.0 / 30.0);
    let mut urls = Vec::new();
    let mut every = Vec::new();
    for i in 0..60 {
        let (hint, period) = if i % 2 == 0 {
            (daily, 8 * HOUR)
        } else {
            (monthly, 10 * DAY)
        };
        urls.push(sched.add_url(0, with_hint(hosts[i % 4], hint)));
        every.push(period);
    }
    drive(&mut sched, &urls, &every, 30);
    // New pages, never fetched: what their hint's pages have shown, not what the hint says.
    let new_daily = sched.add_url(30 * DAY, with_hint(hosts[0], daily));
    let new_monthly = sched.add_url(30 * DAY, with_hint(hosts[1], monthly));
    let (fast, slow) = (
        sched.estimate(new_daily).rate_per_day,
        sched.estimate(new_monthly).rate_per_day,
    );
    // The group's own estimates: a daily page checked about three times a day saw a change at
    // nearly every check, which bounds its rate only from below, so they read somewhat above 3.
    let shown = |parity: usize| -> f64 {
        let rates: Vec<f64> = (parity..urls.len())
            .step_by(2)
            .map(|i| sched.estimate(urls[i]).rate_per_day)
            .collect();
        rates.iter().sum::<f64>() / rates.len() as f64
    };
    let (fast_shown, slow_shown) = (shown(0), shown(1));
    assert!(
        (2.0..=6.0).contains(&fast_shown) && (0.04..=0.25).contains(&slow_shown),
        "the groups: {fast_shown}/day, {slow_shown}/day"
    );
    assert!(
        (fast / fast_shown - 1.0).abs() < 0.5,
        "a new 'daily' page: {fast}/day; its group {fast_shown}/day"
    );
    assert!(
        (slow / slow_shown - 1.0).abs() < 0.5,
        "a new 'monthly' page: {slow}/day; its group {slow_shown}/day"
    );
}

#[test]
fn a_new_page_reads_as_its_own_hosts_pages_have_shown() {
    // One site over two hosts with no hints: one's pages change every 8 hours, the other's
    // every 10 days. Pooled into one population, a new page of either would read as the site's
    // mix; each host's offset from it makes a new page read as its own host's pages.
    let mut sched = Scheduler::new(SchedulerConfig::default());
    let site = sched.add_site(1.0, 200.0, 0);
    let (fast_host, slow_host) = (sched.add_host(0, 0), sched.add_host(0, 0));
    let mut urls = Vec::new();
    let mut every = Vec::new();
    for i in 0..60 {
        let (host, period) = if i % 2 == 0 {
            (fast_host, 8 * HOUR)
        } else {
            (slow_host, 10 * DAY)
        };
        urls.push(sched.add_url(0, page(site, host, 1.0)));
        every.push(period);
    }
    drive(&mut sched, &urls, &every, 30);
    let new_fast = sched.add_url(30 * DAY, page(site, fast_host, 1.0));
    let new_slow = sched.add_url(30 * DAY, page(site, slow_host, 1.0));
    // Medians: a new page's mean is mostly the tail its host shares with the site.
    let (fast, slow) = (
        sched.full_posterior(new_fast).quantile(0.5),
        sched.full_posterior(new_slow).quantile(0.5),
    );
    let shown = |parity: usize| -> f64 {
        let rates: Vec<f64> = (parity..urls.len())
            .step_by(2)
            .map(|i| sched.estimate(urls[i]).rate_per_day)
            .collect();
        rates.iter().sum::<f64>() / rates.len() as f64
    };
    let (fast_shown, slow_shown) = (shown(0), shown(1));
    assert!(
        slow < 0.1 * fast,
        "new pages: {fast}/day on the fast host, {slow}/day on the slow one"
    );
    assert!(
        (slow / slow_shown).ln().abs() < 3f64.ln() && (fast / fast_shown).ln().abs() < 3f64.ln(),
        "new pages {fast} and {slow}/day; their hosts' pages {fast_shown} and {slow_shown}/day"
    );
}

#[test]
fn a_large_sites_freshness_is_judged_on_a_sample_that_stands_for_all_its_copies() {
    // 2,000 copies of pages from a day a week to several a day, copied up to a day ago, of
    // three weights, some known stale: judging one in four under its posterior gives about the
    // mean of judging them all, and the counts and known-stale copies exactly.
    let mut sched = Scheduler::new(SchedulerConfig::default());
    let site = sched.add_site(1.0, 1000.0, 0);
    let host = sched.add_host(0, 0);
    let now = 20 * DAY;
    for i in 0..2_000i64 {
        // Duplicates and redirect sources weigh little.
        let weight = [1.0, 0.1, 0.02][(i % 3) as usize];
        let url = sched.add_url(
            0,
            NewUrl {
                weight,
                ..page(site, host, 1.0)
            },
        );
        let mut stats = Stats::default();
        for check in 0..10 {
            stats.add_check(1.0, Some((check * 7 + i) % (1 + i % 9) == 0), None);
        }
        sched.restore(
            url,
            Restored {
                last_check_ms: Some(now - (i * 7919) % DAY),
                stats,
                ..Restored::default()
            },
        );
        if i % 50 == 0 {
            sched.handle_known_change(now, url, now - HOUR);
        }
    }
    let all = sched.freshness_judging(now, usize::MAX)[0].1;
    // Each instant draws its own sample (a millisecond apart: the same copies' ages).
    let draws: Vec<Freshness> = (0..20)
        .map(|ms| sched.freshness_judging(now + ms, 500)[0].1)
        .collect();
    let sampled = draws[0];
    assert_eq!(
        (sampled.copies, sampled.known_stale, sampled.weight),
        (all.copies, all.known_stale, all.weight)
    );
    // (A known change before the copy is no news: 30 of the 40 are after theirs.)
    assert_eq!(all.known_stale, 30);
    let off = |a: f64, b: f64| (a / b - 1.0).abs();
    let mean = |f: fn(&Freshness) -> f64| draws.iter().map(f).sum::<f64>() / draws.len() as f64;
    // One draw of about 500 copies of three weights is within its sampling error; the draws'
    // mean is near the whole (an unbiased sample).
    for draw in &draws {
        assert!(
            off(draw.mean_expected_age_days, all.mean_expected_age_days) < 0.3
                && off(draw.mean_p_stale, all.mean_p_stale) < 0.3,
            "{draw:?} against {all:?}"
        );
    }
    let (age, p) = (mean(|f| f.mean_expected_age_days), mean(|f| f.mean_p_stale));
    assert!(
        off(age, all.mean_expected_age_days) < 0.04 && off(p, all.mean_p_stale) < 0.04,
        "mean of the draws {age} d, {p} against {all:?}"
    );
    assert_ne!(sampled, all, "a sample, not every copy");
}

#[test]
fn a_group_that_is_the_whole_site_or_repeats_a_narrower_one_is_not_fitted() {
    // Two hosts of one section each: the section across the site is the whole site and each
    // host is its one section; only the two host-and-section groups get a population, and
    // every page is in its own host's.
    let mut sched = Scheduler::new(SchedulerConfig::default());
    let site = sched.add_site(1.0, 200.0, 0);
    let hosts = [sched.add_host(0, 0), sched.add_host(0, 0)];
    let urls: Vec<_> = (0..40)
        .map(|i| sched.add_url(0, page(site, hosts[i % 2], 1.0)))
        .collect();
    let every: Vec<i64> = (0..40).map(|i| HOUR * (4 + 20 * (i as i64 % 2))).collect();
    drive(&mut sched, &urls, &every, 10);
    assert_eq!(sched.sites[site].groups.populations.len(), 2);
    let group = |url: UrlKey| sched.urls[url].group;
    assert_ne!(group(urls[0]), group(urls[1]));
    assert!(urls.iter().all(|&u| group(u) == group(urls[u % 2])));
}

#[test]
fn top_level_pages_that_never_change_read_as_each_other_not_as_the_articles() {
    // Two hosts of articles that change every 8 hours, each with three top-level pages (a home
    // page, an about page) that never change. Each host's top-level pages are too few for a
    // group; across the site they are one section, and a new one reads as they have shown.
    let mut sched = Scheduler::new(SchedulerConfig::default());
    let site = sched.add_site(1.0, 200.0, 0);
    let hosts = [sched.add_host(0, 0), sched.add_host(0, 0)];
    let (articles, top) = (
        section_of("http://a.test/news/1"),
        section_of("http://a.test/"),
    );
    let in_section = |host, section| NewUrl {
        section,
        ..page(site, host, 1.0)
    };
    let mut urls = Vec::new();
    let mut every = Vec::new();
    for host in hosts {
        for i in 0..33 {
            let (section, period) = if i < 30 {
                (articles, 8 * HOUR)
            } else {
                (top, 10_000 * DAY)
            };
            urls.push(sched.add_url(0, in_section(host, section)));
            every.push(period);
        }
    }
    drive(&mut sched, &urls, &every, 20);
    let new_article = sched.add_url(20 * DAY, in_section(hosts[0], articles));
    let new_top = sched.add_url(20 * DAY, in_section(hosts[0], top));
    let (article, home) = (
        sched.full_posterior(new_article).quantile(0.5),
        sched.full_posterior(new_top).quantile(0.5),
    );
    assert!(
        home < 0.1 * article,
        "new pages: an article {article}/day, a top-level page {home}/day"
    );
}

/// A known change that sends a page no feed covers ahead of its plan spends the part of its
/// interval it skips outside the plan: the next re-plan takes it out of the pages' budget.
#[test]
fn an_early_visit_for_a_known_change_is_an_overhead_of_the_plan() {
    let mut sched = Scheduler::new(SchedulerConfig::default());
    let site = sched.add_site(1.0, 10.0, 0);
    let host = sched.add_host(0, 0);
    let pages: Vec<_> = (0..10)
        .map(|_| sched.add_url(0, page(site, host, 0.05)))
        .collect();
    let mut now = 0;
    let mut copied = 0;
    while copied < pages.len() {
        if let Some(req) = sched.poll_request(now) {
            sched.handle_fetched(now, req.url, Fetched::at(now, Seen::Copy));
            copied += 1;
        } else {
            now = sched.poll_timeout().expect("queued").max(now + 1);
        }
    }
    // The page copied last: nothing else is due for most of its interval.
    let p = *pages
        .iter()
        .max_by_key(|&&u| sched.urls[u].last_check_ms)
        .expect("pages");
    let last = sched.urls[p].last_check_ms.expect("copied");
    let interval = MS_PER_DAY / sched.urls[p].planned_per_day;
    let at = last + (interval / 4.0) as i64;
    assert_eq!(
        sched.unplanned_advance(p, at),
        0.0,
        "nothing known: on plan"
    );
    // A page known to change rarely: a change of it is news.
    for _ in 0..60 {
        sched.urls[p].stats.add_check(1.0, Some(false), None);
    }
    sched.mark_known(at, p, at - 1);
    let advance = sched.unplanned_advance(p, at);
    assert!((advance - 0.75).abs() < 0.01, "advance {advance}");
    // Handed out well before its interval, it is charged to the site's overheads.
    let (extra, overhead) = (
        sched.sites[site].extra_since_plan,
        sched.sites[site].overhead_per_day,
    );
    let mut t = at;
    let req = loop {
        match sched.poll_request(t) {
            Some(req) if req.url == p => break req,
            Some(req) => sched.handle_fetched(t, req.url, Fetched::at(t, Seen::Unchanged)),
            None => t = sched.poll_timeout().expect("queued").max(t + 1),
        }
    };
    assert!(
        t < last + (0.7 * interval) as i64,
        "sent early: at {at} t {t} last {last} interval {interval}"
    );
    let s = &sched.sites[req.site];
    assert!(
        s.extra_since_plan >= extra + 0.25 || s.overhead_per_day > overhead,
        "extra {} overhead {}",
        s.extra_since_plan,
        s.overhead_per_day
    );
}

/// A page found first is planned at its site's whole budget until the first plan, so its pooled
/// prior is shrunk to a few of those very short intervals: a Gamma of shape far below 1 (the
/// case a loaded run of `tests/dedup_e2e.rs` met). Its certainty-equivalent rate must still
/// come out near its mean: averaged on a tabulated Gamma it came out 280,000 times smaller, and
/// the page got a fiftieth of the visits of its identical neighbours.
#[test]
fn a_thin_prior_still_plans_a_page_near_its_mean_rate() {
    let mut sched = Scheduler::new(SchedulerConfig::default());
    let site = sched.add_site(1.0, 5000.0, 0);
    let host = sched.add_host(0, 0);
    let url = sched.add_url(0, page(site, host, 1.0));
    assert_eq!(sched.urls[url].planned_per_day, 5000.0);
    // The pooled prior of the failing run (mean 30/day, 0.003 days of pseudo-exposure) and
    // 0.0003 days of the page's own exposure without a change.
    sched.sites[site].prior = Prior {
        shape: 0.1,
        rate: 0.003,
    };
    sched.urls[url].stats.exposure_days = 0.0003;
    let post = sched.full_posterior(url);
    assert!(post.conjugate().expect("a Gamma").shape < 0.05);
    let (mean, planned) = (post.mean(), sched.planning_rate(url));
    assert!(
        planned <= mean && planned > 0.9 * mean,
        "planned by {planned}/day, mean {mean}/day"
    );
}
