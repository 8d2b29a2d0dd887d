//! What sitemaps tell the scheduler: the spans a believed `lastmod` watches, joined with a
//! feed's, and what their reads are worth.

use super::*;

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

/// A feed's span and a sitemap's quiet span on an unjudged host are joined when they touch: the
/// time the sitemap alone kept quiet is half unseen, the feed's none of it.
#[test]
fn a_feed_span_and_an_unjudged_sitemap_span_are_joined() {
    const MIN: i64 = 60_000;
    let (mut sched, feed, a) = one_page_read_around_its_copy();
    // The sitemap kept quiet from the copy to 100 min: 60 to 100 alone, so 20 min are unseen.
    sched.handle_sitemap_listing(a, 100 * MIN, Some(5 * MIN));
    assert_eq!(sched.watched(a), Some((40 * MIN, 100 * MIN)));
    // Quiet to 180 min: 60 to 180 alone, 60 min unseen.
    sched.handle_sitemap_listing(a, 180 * MIN, Some(5 * MIN));
    assert_eq!(sched.watched(a), Some((80 * MIN, 180 * MIN)));
    // A feed read that lists nothing new at 240 min covers 20 to 240: nothing is unseen.
    sched.handle_feed(240 * MIN, feed, &[(a, 5 * MIN)]);
    assert_eq!(sched.watched(a), Some((20 * MIN, 240 * MIN)));
}

/// A feed whose span starts after the sitemap's last quiet read: the sitemap's silence still
/// counts for its share, and the time between the read and the feed's span is unseen.
#[test]
fn a_sitemap_span_before_a_later_feed_span_still_counts() {
    const MIN: i64 = 60_000;
    let (mut sched, feed, pages) = feed_and_pages(1);
    let a = pages[0];
    check(&mut sched, 20 * MIN, a, Seen::Copy);
    // Quiet in the sitemap from the copy to 40 min; the feed covers the page from its first
    // read at 60 min and reads again at 100 min.
    sched.handle_sitemap_listing(a, 40 * MIN, Some(5 * MIN));
    sched.handle_feed(60 * MIN, feed, &[(a, 5 * MIN)]);
    sched.handle_feed(100 * MIN, feed, &[(a, 5 * MIN)]);
    // Unseen: half of 20 to 40 and all of 40 to 60, 30 min in all.
    assert_eq!(sched.watched(a), Some((50 * MIN, 100 * MIN)));
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
    // A new copy after the quiet read: nothing of the old silence is left.
    check(&mut sched, 750 * MIN, p, Seen::Unchanged);
    assert_eq!(sched.watched(p), None);
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
        sched.replan(0, true);
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
