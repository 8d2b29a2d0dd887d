//! The frontier's tests: its slots, its hosts' queues against a sorted set, its buckets and
//! its hosts' gates, with the URLs' sites and hosts held beside it as the scheduler holds them.

use super::*;
use crate::clock::MS_PER_DAY;

#[test]
fn a_slot_takes_16_bytes() {
    // One per known URL (40 bytes with `usize` keys, an `Option` due time and the URL's host
    // and site).
    assert_eq!(std::mem::size_of::<Slot>(), 16);
}

const MIN: i64 = 60_000;

#[test]
fn hosts_hand_out_their_earliest_due_url_as_a_sorted_set_would_whatever_moved() {
    // Random moves, removals and pops over three hosts, against a BTreeSet of (due, key) per
    // host: each pop is its host's earliest (ties by key), nothing due is left behind, and
    // the count of due URLs agrees.
    use std::collections::BTreeSet;
    let (mut f, site) = frontier(1e12, false);
    let hosts: Vec<HostKey> = (0..3).map(|_| f.add_host(0)).collect();
    let urls: Vec<UrlKey> = (0..60).map(|i| f.add_url(site, hosts[i % 3])).collect();
    let mut reference: Vec<BTreeSet<(i64, UrlKey)>> = vec![BTreeSet::new(); 3];
    let mut due: Vec<Option<i64>> = vec![None; urls.len()];
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for now in 0..20_000_i64 {
        let url = urls[next(60) as usize];
        let host = url % 3;
        match next(10) {
            // Moves within a few instants, so that URLs come back to times they left.
            0..=5 => {
                let at = now + next(4) as i64;
                if let Some(old) = due[url] {
                    reference[host].remove(&(old, url));
                }
                reference[host].insert((at, url));
                due[url] = Some(at);
                f.set_due(url, Some(at), 0);
            }
            6 => {
                if let Some(old) = due[url].take() {
                    reference[host].remove(&(old, url));
                }
                f.set_due(url, None, 0);
            }
            _ => match f.pop(now) {
                Some(popped) => {
                    let h = popped.host;
                    let head = *reference[h].first().expect("the host had a URL");
                    assert_eq!((head.1, h), (popped.url, hosts[h]));
                    assert!(head.0 <= now, "not due yet");
                    reference[h].remove(&head);
                    due[popped.url] = None;
                    f.release(h);
                }
                None => {
                    for r in &reference {
                        assert!(r.first().is_none_or(|&(d, _)| d > now), "left behind");
                    }
                }
            },
        }
        let due_now: usize = reference
            .iter()
            .map(|r| r.iter().filter(|&&(d, _)| d <= now).count())
            .sum();
        assert_eq!(f.due_by(now), due_now);
        assert_eq!(
            urls.iter().map(|&u| f.due_of(u)).collect::<Vec<_>>(),
            due,
            "slots"
        );
    }
}

/// A frontier with its URLs' sites and hosts, as the scheduler holds them.
struct Homed {
    frontier: Frontier,
    homes: Vec<(SiteKey, HostKey)>,
}

impl std::ops::Deref for Homed {
    type Target = Frontier;
    fn deref(&self) -> &Frontier {
        &self.frontier
    }
}

impl std::ops::DerefMut for Homed {
    fn deref_mut(&mut self) -> &mut Frontier {
        &mut self.frontier
    }
}

impl Homed {
    fn add_url(&mut self, site: SiteKey, host: HostKey) -> UrlKey {
        self.homes.push((site, host));
        self.frontier.add_url()
    }

    fn set_due(&mut self, url: UrlKey, due_ms: Option<i64>, lead_ms: i64) {
        let (site, host) = self.homes[url];
        self.frontier.set_due(url, (host, site), due_ms, lead_ms);
    }

    fn due_by(&self, at_ms: i64) -> usize {
        self.frontier.due_by(at_ms, |url| self.homes[url].1)
    }
}

fn frontier(per_day: f64, ahead: bool) -> (Homed, SiteKey) {
    let mut frontier = Frontier::new(ahead);
    let site = frontier.add_site(Bucket::new(per_day, BUCKET_SPAN_MS, 0));
    let homes = Vec::new();
    (Homed { frontier, homes }, site)
}

#[test]
fn each_url_is_charged_to_its_own_site_when_sites_share_hosts() {
    // Two sites on the same two hosts: a rich one and one of 96 requests a day (one every
    // 15 minutes, its bucket holds one). Each pop names the URL's own site and host, the
    // poor site's bucket paces only its own requests, and every URL goes in the end.
    let (mut f, rich) = frontier(1e9, false);
    let poor = f.add_site(Bucket::new(96.0, BUCKET_SPAN_MS, 0));
    let hosts = [f.add_host(0), f.add_host(0)];
    let mut site_of = Vec::new();
    for i in 0..40 {
        let site = if i % 2 == 0 { rich } else { poor };
        let url = f.add_url(site, hosts[(i / 2) % 2]);
        f.set_due(url, Some(0), 0);
        site_of.push(site);
    }
    let mut poor_sent = Vec::new();
    let mut rich_sent = 0;
    let mut now = 0;
    while let Some(wake) = f.next_wake() {
        now = now.max(wake);
        while let Some(p) = f.pop(now) {
            assert_eq!(p.site, site_of[p.url], "URL {}", p.url);
            assert_eq!(p.host, hosts[(p.url / 2) % 2]);
            if p.site == poor {
                poor_sent.push(now);
            } else {
                rich_sent += 1;
            }
            f.release(p.host);
        }
    }
    assert_eq!((rich_sent, poor_sent.len()), (20, 20));
    for (i, &at) in poor_sent.iter().enumerate() {
        // One in the bucket at the start, then one every 15 minutes.
        assert!(
            at >= i.saturating_sub(1) as i64 * 15 * MIN,
            "request {i} at {at}"
        );
    }
    assert_eq!(f.due_by(now), 0);
}

#[test]
fn a_site_out_of_credit_holds_back_only_its_own_urls_on_a_shared_host() {
    // One host, two sites. The poor site (96 a day: one request every 15 minutes) spends its
    // one credit, and its next URL is due first; the rich site's URLs, due after it, must go
    // at once, one at a time, not wait the 15 minutes behind it.
    let (mut f, rich) = frontier(1e9, false);
    let poor = f.add_site(Bucket::new(96.0, BUCKET_SPAN_MS, 0));
    let host = f.add_host(0);
    let poor_urls = [f.add_url(poor, host), f.add_url(poor, host)];
    let rich_urls = [f.add_url(rich, host), f.add_url(rich, host)];
    f.set_due(poor_urls[0], Some(0), 0);
    f.set_due(poor_urls[1], Some(1), 0);
    f.set_due(rich_urls[0], Some(2), 0);
    f.set_due(rich_urls[1], Some(3), 0);
    let now = 10;
    let first = f.pop(now).expect("the poor site has one credit");
    assert_eq!((first.url, first.site), (poor_urls[0], poor));
    f.release(host);
    for expected in rich_urls {
        let p = f.pop(now).expect("the rich site has credit");
        assert_eq!((p.url, p.site, p.host), (expected, rich, host));
        assert_eq!(f.pop(now), None, "the host is busy");
        f.release(host);
    }
    assert_eq!(f.pop(now), None, "the poor site has no credit");
    let refill = f.next_wake().expect("the poor site's URL waits");
    assert!(
        (15 * MIN - 10..=15 * MIN + 10).contains(&refill),
        "{refill}"
    );
    let last = f.pop(refill).expect("credit again");
    assert_eq!((last.url, last.site), (poor_urls[1], poor));
}

#[test]
fn nothing_due_on_a_free_host_waits_unless_its_own_site_has_no_credit() {
    // Three sites of different budgets over four hosts they share, URLs moved, dropped and
    // handed out at random over a day. Whenever `pop` hands out nothing, every queued URL that
    // is due on a free host belongs to a site without credit; and a pop takes a due URL of a
    // site that had credit.
    let (mut f, rich) = frontier(1e6, false);
    let sites = [
        rich,
        f.add_site(Bucket::new(96.0, BUCKET_SPAN_MS, 0)),
        f.add_site(Bucket::new(400.0, BUCKET_SPAN_MS, 0)),
    ];
    let hosts: Vec<HostKey> = (0..4).map(|_| f.add_host(0)).collect();
    let urls: Vec<UrlKey> = (0..48)
        .map(|i| f.add_url(sites[i % 3], hosts[(i / 3) % 4]))
        .collect();
    let mut due: Vec<Option<i64>> = vec![None; urls.len()];
    let mut busy: Vec<Option<i64>> = vec![None; hosts.len()];
    let mut seed = 0x853c_49e6_748f_ea9b_u64;
    let mut next = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let mut now = 0;
    while now < 24 * 60 * MIN {
        now += next(3 * MIN as u64) as i64;
        for _ in 0..3 {
            let url = next(urls.len() as u64) as usize;
            let at = match next(5) {
                0 => None,
                _ => Some(now + next(20 * MIN as u64) as i64 - 10 * MIN),
            };
            if due[url].is_some() || at.is_some() {
                f.set_due(url, at, 0);
                due[url] = at;
            }
        }
        for (host, until) in busy.iter_mut().enumerate() {
            if until.is_some_and(|t| t <= now) {
                f.release(host);
                *until = None;
            }
        }
        while let Some(p) = f.pop(now) {
            let (site, host) = f.homes[p.url];
            assert_eq!((p.site, p.host), (site, host));
            assert!(
                due[p.url].is_some_and(|d| d <= now),
                "URL {} not due",
                p.url
            );
            assert!(busy[host].is_none(), "host {host} is busy");
            due[p.url] = None;
            busy[host] = Some(now + next(2 * MIN as u64) as i64);
        }
        for (url, at) in due.iter().enumerate() {
            let (site, host) = f.homes[url];
            if at.is_some_and(|d| d <= now) && busy[host].is_none() {
                let credit = f.budget_credit(site, now);
                assert!(
                    credit < 1.0,
                    "URL {url} of site {site} is due on free host {host} with credit {credit}"
                );
            }
        }
        assert!(f.next_wake().is_none_or(|at| at > now));
    }
}

#[test]
fn a_host_gets_one_request_at_a_time_and_waits_for_its_gate() {
    let (mut f, site) = frontier(1e6, false);
    let h = f.add_host(0);
    let a = f.add_url(site, h);
    let b = f.add_url(site, h);
    f.set_due(a, Some(0), 0);
    f.set_due(b, Some(0), 0);
    let first = f.pop(0).expect("a due URL");
    assert_eq!(f.pop(0), None, "the host is busy");
    f.close_until(h, 10 * MIN);
    f.release(h);
    assert_eq!(f.pop(5 * MIN), None, "the host is closed");
    assert_eq!(f.next_wake(), Some(10 * MIN));
    let second = f.pop(10 * MIN).expect("open again");
    assert_ne!(first.url, second.url);
}

#[test]
fn a_site_budget_paces_requests_whatever_is_due() {
    // 96 a day = one every 15 minutes; the bucket holds one.
    let (mut f, site) = frontier(96.0, false);
    let hosts: Vec<_> = (0..10).map(|_| f.add_host(0)).collect();
    for &h in &hosts {
        for _ in 0..10 {
            let u = f.add_url(site, h);
            f.set_due(u, Some(0), 0);
        }
    }
    let mut sent = 0;
    let mut now = 0;
    while now <= 24 * 60 * MIN {
        while let Some(p) = f.pop(now) {
            sent += 1;
            f.release(p.host);
        }
        now = f.next_wake().expect("URLs are left").max(now + 1);
    }
    // A day's budget plus the bucket's one.
    assert!((96..=98).contains(&sent), "sent {sent}");
}

#[test]
fn a_full_bucket_lets_the_earliest_url_go_ahead() {
    let (mut f, site) = frontier(96.0, true);
    let h = f.add_host(0);
    let u = f.add_url(site, h);
    f.set_due(u, Some(60 * MIN), 40 * MIN);
    assert_eq!(f.pop(0), None, "more than its lead early");
    assert_eq!(f.next_wake(), Some(20 * MIN));
    assert_eq!(f.pop(20 * MIN).map(|p| p.url), Some(u));
}

#[test]
fn the_longest_waiting_host_goes_first() {
    let (mut f, site) = frontier(1e6, false);
    let (h1, h2) = (f.add_host(0), f.add_host(0));
    let late = f.add_url(site, h2);
    let early = f.add_url(site, h1);
    f.set_due(late, Some(5 * MIN), 0);
    f.set_due(early, Some(MIN), 0);
    assert_eq!(f.pop(10 * MIN).map(|p| p.url), Some(early));
    assert_eq!(f.pop(10 * MIN).map(|p| p.url), Some(late));
}

#[test]
fn a_host_held_elsewhere_hands_out_nothing_and_counts_nothing_due() {
    let (mut f, site) = frontier(1e6, false);
    let (here, there) = (f.add_host(0), f.add_host(0));
    let mine = f.add_url(site, here);
    let theirs = f.add_url(site, there);
    f.set_due(mine, Some(0), 0);
    f.set_due(theirs, Some(0), 0);
    f.set_elsewhere(there, true);
    assert_eq!(f.due_by(MIN), 1);
    assert_eq!(f.pop(0).map(|p| p.url), Some(mine));
    assert_eq!(f.pop(0), None);
}

#[test]
fn a_restored_bucket_goes_on_from_what_the_last_run_spent() {
    // 96 a day, a quarter hour held: one request. The last run spent it and one more.
    let mut last = Bucket::new(96.0, BUCKET_SPAN_MS, 0);
    last.charge(0, 2.0);
    let (credit, at) = last.state(0);
    assert_eq!(credit, -1.0);
    // Restarted a minute later, the bucket is not full: it has refilled a minute's worth.
    let mut next = Bucket::new(96.0, BUCKET_SPAN_MS, MIN);
    next.restore(credit, at, MIN);
    assert!((next.credit(MIN) - (-1.0 + 96.0 / 1440.0)).abs() < 1e-9);
    // A pass holding a day's budget at once gets what a day since refilled, no more.
    let mut pass = Bucket::new(96.0, MS_PER_DAY, 2 * MIN);
    pass.restore(credit, at, 2 * MIN);
    assert!((pass.credit(2 * MIN) - (-1.0 + 2.0 * 96.0 / 1440.0)).abs() < 1e-9);
    let mut day_later = Bucket::new(96.0, MS_PER_DAY, 2 * MS_PER_DAY as i64);
    day_later.restore(credit, at, 2 * MS_PER_DAY as i64);
    assert_eq!(day_later.credit(2 * MS_PER_DAY as i64), 96.0);
    // A credit saved under a larger budget is held to this one's capacity.
    let mut smaller = Bucket::new(96.0, BUCKET_SPAN_MS, 0);
    smaller.restore(50.0, 0, 0);
    assert_eq!(smaller.credit(0), 1.0);
    // Spend and give-backs are counted for the saves.
    let mut counted = Bucket::new(96.0, BUCKET_SPAN_MS, 0);
    counted.charge(0, 3.0);
    counted.refund(0, 1.0);
    assert_eq!(counted.spent(), 2.0);
}

#[test]
fn with_credit_on_hand_the_most_overdue_head_goes_first() {
    // 288 a day: the bucket holds three. Host a's head (due at 5 ms) is keyed first; a
    // request made outside the frontier (robots.txt) is charged at 100 ms, and then host b's
    // head, due at 1 ms, is queued. Keyed at the bucket's last update, b went after a.
    let (mut f, site) = frontier(288.0, false);
    let (a, b) = (f.add_host(0), f.add_host(0));
    let on_a = f.add_url(site, a);
    f.set_due(on_a, Some(5), 0);
    f.frontier.charge(site, 100, 1.0);
    let on_b = f.add_url(site, b);
    f.set_due(on_b, Some(1), 0);
    let first = f.pop(200).expect("credit for two");
    let second = f.pop(200).expect("credit for two");
    assert_eq!((first.url, second.url), (on_b, on_a));
}

#[test]
fn a_request_taken_back_costs_its_host_no_turn() {
    // Two hosts with a page each, due at once: a goes first (by host number). Its request is
    // taken back unmade (robots.txt, a fetch window) and queued again: a still goes before b,
    // as it would have had it not been handed out.
    let (mut f, site) = frontier(1e9, false);
    let (a, b) = (f.add_host(0), f.add_host(0));
    let (on_a, on_b) = (f.add_url(site, a), f.add_url(site, b));
    f.set_due(on_a, Some(0), 0);
    f.set_due(on_b, Some(0), 0);
    assert_eq!(f.pop(10).map(|p| p.url), Some(on_a));
    f.take_back(a);
    f.set_due(on_a, Some(0), 0);
    assert_eq!(f.pop(20).map(|p| p.url), Some(on_a), "a keeps its turn");
    assert_eq!(f.pop(20).map(|p| p.url), Some(on_b));
    // It keeps the turn it had, not a fresh one: b was last served at 20, a is served at 30,
    // then handed a request at 40 that is taken back. Put back to "never served", a would
    // win the next tie on host number; with its turn of 30, b goes first.
    f.release(a);
    f.release(b);
    let next_a = f.add_url(site, a);
    f.set_due(next_a, Some(25), 0);
    assert_eq!(f.pop(30).map(|p| p.url), Some(next_a));
    f.release(a);
    let (again_a, again_b) = (f.add_url(site, a), f.add_url(site, b));
    f.set_due(again_a, Some(35), 0);
    assert_eq!(f.pop(40).map(|p| p.url), Some(again_a));
    f.take_back(a);
    f.set_due(again_a, Some(35), 0);
    f.set_due(again_b, Some(35), 0);
    assert_eq!(f.pop(50).map(|p| p.url), Some(again_b));
}

#[test]
fn a_host_whose_head_moves_sooner_takes_its_new_turn() {
    // 96 a day: the bucket holds one, spent at once on host c. Hosts a (head due 5 ms) and b
    // (head due 3 ms) then wait on the bucket: both keyed at its ready instant, b first.
    // A page due at 1 ms is queued on a: a's key is the same instant, its turn sooner, and it
    // goes first (a heap entry keeping a's old turn sent b).
    let (mut f, site) = frontier(96.0, false);
    let (a, b, c) = (f.add_host(0), f.add_host(0), f.add_host(0));
    let on_c = f.add_url(site, c);
    f.set_due(on_c, Some(0), 0);
    assert_eq!(f.pop(0).map(|p| p.url), Some(on_c));
    let (on_a, on_b) = (f.add_url(site, a), f.add_url(site, b));
    f.set_due(on_a, Some(5), 0);
    f.set_due(on_b, Some(3), 0);
    let ready = f.next_wake().expect("waiting on the bucket");
    assert!(
        ready >= 15 * MIN - 1,
        "keyed at the bucket's instant: {ready}"
    );
    let sooner = f.add_url(site, a);
    f.set_due(sooner, Some(1), 0);
    assert_eq!(f.pop(ready).map(|p| p.url), Some(sooner));
}

#[test]
fn hosts_with_a_backlog_take_turns_when_the_budget_binds() {
    // 96 a day: one request every 15 minutes, the bucket holding one. Three hosts with ten
    // new pages each, found by one discovery pass (all due at the same instant); each host's
    // gate opens a second after its request, long before the bucket refills. Ties by host
    // number drained the first host's ten before the second host's first.
    let (mut f, site) = frontier(96.0, true);
    let hosts: Vec<_> = (0..3).map(|_| f.add_host(0)).collect();
    for &h in &hosts {
        for _ in 0..10 {
            let u = f.add_url(site, h);
            f.set_due(u, Some(0), 0);
        }
    }
    let mut order = Vec::new();
    let mut now = 10;
    while order.len() < 30 {
        while let Some(p) = f.pop(now) {
            order.push(p.host);
            f.close_until(p.host, now + 1_000);
            f.release(p.host);
        }
        let Some(next) = f.next_wake() else { break };
        now = next.max(now + 1);
    }
    assert_eq!(order.len(), 30);
    for (turn, served) in order.chunks(3).enumerate() {
        let mut served = served.to_vec();
        served.sort_unstable();
        assert_eq!(served, hosts, "turn {turn} of {order:?}");
    }
    // Each request waited for the bucket (a day's budget, spread), none for a busy loop.
    assert!(now <= 31 * 15 * MIN, "ended at {now}");
}

#[test]
fn credit_handed_back_wakes_the_hosts_waiting_on_it() {
    // A bucket with no rate (a worker with no share yet) keys its hosts at the end of time;
    // credit granted or a rate set must wake them.
    let (mut f, site) = frontier(0.0, false);
    let h = f.add_host(0);
    let u = f.add_url(site, h);
    let v = f.add_url(site, h);
    f.set_due(u, Some(0), 0);
    f.set_due(v, Some(0), 0);
    let first = f.pop(0).expect("the new bucket holds one");
    f.release(first.host);
    assert_eq!(f.pop(MIN), None, "no credit");
    f.grant(site, MIN, 1.0);
    let wake = f.next_wake();
    assert!(
        wake.is_some_and(|at| at <= MIN),
        "woken by the grant: {wake:?}"
    );
    let second = f.pop(MIN).expect("the granted request");
    assert_ne!(first.url, second.url);
    // A refund wakes them too.
    let w = f.add_url(site, h);
    f.set_due(w, Some(0), 0);
    f.release(second.host);
    assert_eq!(f.pop(2 * MIN), None, "no credit");
    f.refund(site, 2 * MIN, 1.0);
    assert_eq!(f.pop(2 * MIN).map(|p| p.url), Some(w));
}

#[test]
fn credit_granted_wakes_a_hosts_second_site_too() {
    // A host shared by two sites: one's URL is due in six hours, the other's waits on a bucket
    // with no rate (a worker with no share yet). A grant to the second must wake the host,
    // though its key came from the first.
    let mut frontier = Frontier::new(false);
    let later = frontier.add_site(Bucket::new(1e6, BUCKET_SPAN_MS, 0));
    let starved = frontier.add_site(Bucket::new(0.0, BUCKET_SPAN_MS, 0));
    let mut f = Homed {
        frontier,
        homes: Vec::new(),
    };
    let h = f.add_host(0);
    let first = f.add_url(starved, h);
    let second = f.add_url(starved, h);
    f.set_due(first, Some(0), 0);
    f.set_due(second, Some(0), 0);
    let popped = f.pop(0).expect("the new bucket holds one");
    f.release(popped.host);
    let other = f.add_url(later, h);
    f.set_due(other, Some(6 * 60 * MIN), 0);
    assert_eq!(
        f.pop(MIN),
        None,
        "no credit, and the other site's URL not due"
    );
    f.grant(starved, MIN, 1.0);
    assert_eq!(f.pop(MIN).map(|p| p.url), Some(second));
}

#[test]
fn a_refund_that_fills_the_bucket_lets_the_head_go_ahead_sooner() {
    // 96 a day, the bucket holding one: in debt by one at 0, it is full at 30 minutes, and the
    // head (due at 60, allowed 40 early) may go then. A request given back at 10 minutes makes
    // it full at 15, so the head goes at 20, its earliest.
    let (mut f, site) = frontier(96.0, true);
    let h = f.add_host(0);
    f.frontier.charge(site, 0, 2.0);
    let u = f.add_url(site, h);
    f.set_due(u, Some(60 * MIN), 40 * MIN);
    assert_eq!(f.pop(10 * MIN), None, "not full yet");
    f.refund(site, 10 * MIN, 1.0);
    assert_eq!(f.pop(20 * MIN).map(|p| p.url), Some(u));
}
