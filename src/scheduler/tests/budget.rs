//! The scheduler's promises on requests: the budget spent and held, hosts' gaps and closures,
//! the baselines' budgets, and what an early visit costs.

use super::*;

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
        .max_by_key(|&&u| sched.urls[u].last_check_ms())
        .expect("pages");
    let last = sched.urls[p].last_check_ms().expect("copied");
    let interval = MS_PER_DAY / sched.planned_rate(p);
    let at = last + (interval / 4.0) as i64;
    assert_eq!(
        sched.unplanned_advance(p, at),
        0.0,
        "nothing known: on plan"
    );
    // A page known to change rarely: a change of it is news.
    for _ in 0..60 {
        sched.urls[p]
            .evidence_mut()
            .stats
            .add_check(1.0, Some(false), None);
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

/// Two workers sharing a site's hosts (each holds half, the other half is "elsewhere") spend
/// between them what one would: each spends the budget times its part (the planned visits of the
/// hosts it holds) over the sum of both parts, as the workers' rounds share them through the
/// database.
#[test]
fn workers_holding_part_of_the_hosts_share_one_budget() {
    let mut workers: Vec<Scheduler> = Vec::new();
    let mut urls = Vec::new();
    for worker in 0..2 {
        let mut sched = Scheduler::new(SchedulerConfig::default());
        let site = sched.add_site(1.0, 100.0, 0);
        let hosts: Vec<_> = (0..4).map(|_| sched.add_host(60_000, 0)).collect();
        // Worker 0 holds hosts 0 and 1, worker 1 hosts 2 and 3; the fast pages are all on the
        // first worker's hosts, so an even split would be wrong.
        urls = (0..40)
            .map(|i| {
                sched.add_url(
                    0,
                    page(site, hosts[i % 4], if i % 4 < 2 { 4.0 } else { 0.5 }),
                )
            })
            .collect();
        for (h, &host) in hosts.iter().enumerate() {
            sched.set_host_elsewhere(host, (h < 2) != (worker == 0));
        }
        workers.push(sched);
    }
    let mut requests = [0u64; 2];
    let mut now = 0;
    let mut next_share = 0;
    while now < 10 * DAY {
        if now >= next_share {
            let parts: Vec<f64> = workers.iter().map(|s| s.budget_parts()[0]).collect();
            let sum: f64 = parts.iter().sum();
            for (sched, part) in workers.iter_mut().zip(parts) {
                sched.share_budget(0, part / sum, now);
            }
        }
        for (w, sched) in workers.iter_mut().enumerate() {
            while let Some(req) = sched.poll_request(now) {
                requests[w] += 1;
                let fast = urls.iter().position(|&u| u == req.url).expect("known") % 4 < 2;
                let seen = if requests[w] < 21 {
                    Seen::Copy
                } else if fast || now % (2 * DAY) < HOUR {
                    Seen::Changed
                } else {
                    Seen::Unchanged
                };
                sched.handle_fetched(now, req.url, Fetched::at(now, seen));
            }
        }
        if now >= next_share {
            next_share = now + 10 * 60_000;
        }
        let wake = workers
            .iter_mut()
            .filter_map(|s| s.poll_timeout())
            .min()
            .expect("URLs stay queued");
        now = wake.min(next_share).max(now + 1);
    }
    let total = requests[0] + requests[1];
    // 100 a day for 10 days, plus each bucket's quarter hour.
    assert!((985..=1010).contains(&total), "{requests:?}");
    assert!(
        requests[0] > requests[1],
        "the fast pages' holder spends more: {requests:?}"
    );
}

#[test]
fn pages_never_checked_are_planned_alike_as_one_run_per_host() {
    // A site's pages take consecutive keys as its sitemaps name them; until their first check
    // a host's pages are alike, and the plan holds one entry for all of them, not one each.
    let mut sched = Scheduler::new(SchedulerConfig::default());
    let site = sched.add_site(1.0, 1_000.0, 0);
    let hosts = [sched.add_host(0, 0), sched.add_host(0, 0)];
    let mut urls = Vec::new();
    for host in hosts {
        for _ in 0..2_000 {
            urls.push(sched.add_url(0, page(site, host, 1.0)));
        }
    }
    // A page checked before (as a restart restores it) among them: an entry of its own, and
    // its host's other pages a run on either side of it.
    let checked = urls[500];
    let mut stats = Stats::default();
    stats.add_check(1.0, Some(true), None);
    sched.restore(
        checked,
        Restored {
            last_check_ms: Some(0),
            stats,
            ..Restored::default()
        },
    );
    sched.replan(DAY, true);
    let runs = sched.sites[site].plan_runs;
    assert_eq!(runs, 4, "plan entries for 4,000 pages");
    for host_urls in urls.chunks(2_000) {
        let never: Vec<f64> = host_urls
            .iter()
            .filter(|&&u| sched.urls[u].last_check_ms().is_none())
            .map(|&u| sched.planned_rate(u))
            .collect();
        assert!(never.len() > 1_900);
        assert!(never.iter().all(|&f| f == never[0]), "planned alike");
    }
}

#[test]
fn urls_found_between_plans_are_planned_at_an_even_share_until_the_next() {
    // A site planned with one URL finds a thousand more; the next plan is up to ten minutes
    // away, and what is saved and reported meanwhile must not add up to more than the budget
    // (each new URL's share was fixed when it was added: the k-th got `budget / k`).
    let mut sched = Scheduler::new(SchedulerConfig::default());
    let site = sched.add_site(1.0, 1000.0, 0);
    let host = sched.add_host(0, 0);
    let first = sched.add_url(0, page(site, host, 1.0));
    check(&mut sched, 0, first, Seen::Copy);
    let found: Vec<_> = (0..1000)
        .map(|_| sched.add_url(10_000, page(site, host, 1.0)))
        .collect();
    let share = 1000.0 / 1001.0;
    for &url in &found {
        let (planned, _) = sched.planned(url);
        assert!(
            (planned - share).abs() < 1e-9,
            "{planned} a day, not {share}"
        );
    }
    // Checked before the next plan, a found URL keeps its share (the multipliers were solved
    // for a site of one URL), and what the store is given says so. (The first URL's check
    // brings a plan forward to a minute after the first: as many checks as URLs planned.)
    let before_the_plan = EVIDENCE_REPLAN_GAP_MS / 2;
    let req = sched
        .poll_request(before_the_plan)
        .expect("a found URL is due");
    assert!(found.contains(&req.url));
    sched.handle_fetched(
        before_the_plan,
        req.url,
        Fetched::at(before_the_plan, Seen::Copy),
    );
    let summary = sched.summary(req.url);
    assert!(
        (summary.planned_per_day - share).abs() < 1e-9,
        "{summary:?}"
    );
    // The next plan gives them rates that fit the budget.
    let after = 10_000 + 2 * DIRTY_REPLAN_GAP_MS;
    let _ = sched.poll_request(after);
    let total: f64 = found.iter().map(|&url| sched.planned(url).0).sum();
    assert!(total <= 1000.0 * 1.001, "{total} a day planned");
}

/// A new database: the first plan is made before discovery has found the site's pages (20 that
/// never change, one that changes every 20 s), so every page starts at the site's even share.
/// The plan is made again as the checks come in, not ten minutes later: within nine minutes
/// the fast page gets more requests than the others (helper-82 saw as many each for ten
/// minutes, six in eight minutes).
#[test]
fn a_young_site_is_planned_again_as_its_checks_come_in() {
    let mut sched = Scheduler::new(SchedulerConfig::default());
    let site = sched.add_site(1.0, 20_000.0, 0);
    let host = sched.add_host(200, 0);
    let sitemap = sched.add_url(0, page(site, host, 0.0));
    assert!(
        sched.poll_request(0).is_some(),
        "the first plan, and its request"
    );
    sched.handle_fetched(0, sitemap, Fetched::at(0, Seen::Copy));
    let mut urls = vec![sitemap];
    urls.extend((0..21).map(|_| sched.add_url(1_000, page(site, host, 1.0))));
    let fast = urls[21];
    let mut every = vec![i64::MAX; 22];
    every[21] = 20_000;
    let requests = drive_until(&mut sched, &urls, &every, 9 * 60_000);
    let mut never: Vec<u64> = urls[1..21].iter().map(|&u| requests[u]).collect();
    never.sort_unstable();
    assert!(
        requests[fast] >= 2 * never[10],
        "fast page {} requests, the never-changing ones' median {} ({never:?})",
        requests[fast],
        never[10]
    );
    assert!(sched.planned_rate(fast) > 4.0 * sched.planned_rate(urls[1]));
}

/// A plan for checks alone (as many as URLs since the last) comes a minute after the last plan,
/// not sooner, and solves the plan under the priors as they were: they are fitted again only
/// at the regular times and for URLs added.
#[test]
fn a_plan_for_checks_alone_waits_a_minute_and_leaves_the_priors() {
    let mut sched = Scheduler::new(SchedulerConfig::default());
    let site = sched.add_site(1.0, 100_000.0, 0);
    let host = sched.add_host(0, 0);
    let urls: Vec<_> = (0..10)
        .map(|_| sched.add_url(0, page(site, host, 1.0)))
        .collect();
    let all = |seen: Seen| urls.iter().map(|&u| (u, seen)).collect::<Vec<_>>();
    check_each(&mut sched, 0, &all(Seen::Copy));
    check_each(&mut sched, 20_000, &all(Seen::Changed));
    check_each(&mut sched, 40_000, &all(Seen::Unchanged));
    assert_eq!(sched.last_replan_ms, Some(0), "no plan before a minute");
    assert_eq!(sched.due_replan_at(), EVIDENCE_REPLAN_GAP_MS);
    assert!(
        sched
            .poll_timeout()
            .is_some_and(|t| t <= EVIDENCE_REPLAN_GAP_MS)
    );
    let prior = sched.sites[site].prior;
    let _ = sched.poll_request(EVIDENCE_REPLAN_GAP_MS);
    assert_eq!(sched.last_replan_ms, Some(EVIDENCE_REPLAN_GAP_MS));
    assert_eq!(sched.checks_since_replan, 0);
    assert_eq!(
        sched.sites[site].prior, prior,
        "the priors stay as they were"
    );
    // (A plan with the priors fitted would have moved them: the pages have evidence now.)
    sched.replan(EVIDENCE_REPLAN_GAP_MS + 1, true);
    assert_ne!(sched.sites[site].prior, prior);
}

/// Another worker's check taken up (a restored row with a newer last check) counts towards
/// the next plan as this worker's own do; the same row taken up again does not.
#[test]
fn another_workers_check_taken_up_counts_once_towards_the_next_plan() {
    let mut sched = Scheduler::new(SchedulerConfig::default());
    let site = sched.add_site(1.0, 1000.0, 0);
    let host = sched.add_host(0, 0);
    let url = sched.add_url(0, page(site, host, 1.0));
    let _ = sched.poll_request(0);
    assert_eq!(sched.checks_since_replan, 0);
    let taken_up = |at: i64| Restored {
        last_check_ms: Some(at),
        ..Restored::default()
    };
    sched.restore(url, taken_up(5_000));
    assert_eq!(sched.checks_since_replan, 1);
    sched.restore(url, taken_up(5_000));
    assert_eq!(sched.checks_since_replan, 1, "the same check again");
    sched.restore(url, taken_up(4_000));
    assert_eq!(sched.checks_since_replan, 1, "an older check");
    assert_eq!(sched.due_replan_at(), EVIDENCE_REPLAN_GAP_MS);
}

/// Three workers sharing a site whose hosts move between them every 30 s (lease rounds as
/// workers come and go): the credit a worker gives up goes to the site's pool and comes
/// back out only to a worker with room, so together they spend one budget and one bucket, and
/// a worker that gains hosts late spends the credit another gave up, not only its share's rate.
#[test]
fn workers_trading_hosts_spend_one_budget_and_one_bucket_between_them() {
    const ROUND: i64 = 30_000;
    // 96,000 a day (1.1 a second, where six hosts take six): a quarter hour holds 1,000.
    let per_day = 96_000.0;
    let mut workers: Vec<Scheduler> = Vec::new();
    for _ in 0..3 {
        let mut sched = Scheduler::new(SchedulerConfig::default());
        let site = sched.add_site(1.0, per_day, 0);
        let hosts: Vec<_> = (0..6).map(|_| sched.add_host(1_000, 0)).collect();
        for i in 0..600 {
            sched.add_url(0, page(site, hosts[i % 6], 20.0));
        }
        // Each starts as a worker does: no share and no credit till the pool hands it some.
        sched.share_budget(site, 0.0, 0);
        sched.take_budget_credit(site, 0);
        workers.push(sched);
    }
    let mut pool: Option<(f64, i64)> = None;
    // Who holds each of the six hosts: all on worker 0 at first, then moved around.
    let holders_at = |round: i64| -> [usize; 6] {
        match round {
            0 => [0; 6],
            r if r % 2 == 1 => [0, 0, 1, 1, 2, 2],
            _ => [2, 2, 0, 0, 1, 1],
        }
    };
    let mut requests = [0u64; 3];
    let mut late_first_round = 0u64;
    let (mut now, mut round, mut next_round) = (0, 0, 0);
    let end = 6 * HOUR;
    while now < end {
        if now >= next_round {
            let holders = holders_at(round);
            for (w, sched) in workers.iter_mut().enumerate() {
                for (h, &holder) in holders.iter().enumerate() {
                    sched.set_host_elsewhere(h, holder != w);
                }
            }
            let parts: Vec<f64> = workers.iter().map(|s| s.budget_parts()[0]).collect();
            let sum: f64 = parts.iter().sum();
            for (sched, part) in workers.iter_mut().zip(parts) {
                // The first round's worker starts alone: the pool was never settled, so full.
                let idle = if round == 0 {
                    IdleRefill::Since {
                        others_until_ms: None,
                    }
                } else {
                    IdleRefill::None
                };
                if let Some(exchange) = sched.share_budget_with_pool(0, part / sum, now, idle) {
                    let (left, handed) = settle_pool(pool, exchange, now);
                    pool = Some((left, now));
                    sched.grant_budget(0, handed, now);
                }
            }
            round += 1;
            next_round = now + ROUND;
        }
        for (w, sched) in workers.iter_mut().enumerate() {
            while let Some(req) = sched.poll_request(now) {
                requests[w] += 1;
                if w == 2 && (ROUND..2 * ROUND).contains(&now) {
                    late_first_round += 1;
                }
                sched.handle_fetched(now, req.url, Fetched::at(now, Seen::Copy));
            }
        }
        let wake = workers
            .iter_mut()
            .filter_map(|s| s.poll_timeout())
            .min()
            .unwrap_or(next_round);
        now = wake.min(next_round).max(now + 1);
    }
    let total: u64 = requests.iter().sum();
    // Six hours of 96,000 a day is 24,000, and one bucket of 1,000 on top; with each worker's
    // bucket kept as full as it was when its share grew, the moves made more.
    assert!(total <= 24_000 + 1_000 + 3, "{requests:?}");
    assert!(total >= 23_500, "the budget is spent: {requests:?}");
    // Worker 2 gained two hosts at the second round: in the 30 s after, it spent credit worker 0
    // gave up (two hosts at one a second), not only its third of the rate (11 in 30 s).
    assert!(late_first_round >= 40, "{late_first_round}");
}

#[test]
fn nutch_starts_a_sites_urls_alike_whatever_order_they_were_found_in() {
    // 100 requests a day over 50 alike pages: an even share is 2 visits a day each, and a
    // page's Nutch interval starts there at its first check (half a day), not at a share of the
    // budget that depends on how many pages were found before it.
    let plans = |order: &[usize]| {
        let mut sched = Scheduler::new(SchedulerConfig {
            policy: PolicyKind::Nutch,
            ..Default::default()
        });
        let site = sched.add_site(1.0, 100.0, 0);
        let host = sched.add_host(0, 0);
        let mut keys = vec![0; order.len()];
        for &i in order {
            keys[i] = sched.add_url(0, page(site, host, 1.0));
        }
        sched.replan(0, true);
        let planned: Vec<f64> = keys
            .iter()
            .map(|&k| sched.urls[k].planned_per_day().expect("planned"))
            .collect();
        (planned, sched, keys)
    };
    let forward: Vec<usize> = (0..50).collect();
    let backward: Vec<usize> = (0..50).rev().collect();
    let (first, mut sched, keys) = plans(&forward);
    assert_eq!(
        first,
        plans(&backward).0,
        "the order pages were found in changed the plan"
    );
    for per_day in &first {
        assert!(
            (per_day - 2.0).abs() < 1e-6,
            "{per_day} visits a day, not 2"
        );
    }
    check_each(&mut sched, 0, &[(keys[0], Seen::Copy)]);
    let started = sched.urls[keys[0]].nutch_interval_days();
    assert_eq!(started, Some(0.5), "the interval starts at the even share");
}
