//! The Mercator frontier in memory (pure): one queue of URLs per host ordered by due time (one
//! per site on a host that several sites share, so that a site out of credit holds back only its
//! own URLs), a heap of hosts keyed by the earliest instant each may be asked for its next URL,
//! and one token bucket per site that spreads the site's requests evenly at its budget.
//!
//! Nothing here sleeps or polls: [`Frontier::pop`] answers "which URL now, if any", and
//! [`Frontier::next_wake`] answers "not before when". The heap is lazy: a host is pushed again
//! whenever its key may have moved, and an entry whose key is no longer the host's is skipped.
//! Keys are lower bounds (a site's bucket can only fill later than promised, never sooner), so a
//! host popped early is simply pushed back with its real time.
//!
//! *Fetch-ahead*: when a site's bucket is full, credit would be thrown away, so the site's
//! earliest-due URL may go early (by at most [`MAX_EARLY_SHARE`] of its interval). This is what
//! makes a plan that spends the budget actually spend it, rather than losing every instant at
//! which nothing happened to be due.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::clock::MS_PER_DAY;

use super::chunked::Chunked;
use super::due_queue::DueQueue;

/// A URL's index in the scheduler.
pub type UrlKey = usize;
/// A host's index in the scheduler.
pub type HostKey = usize;
/// A site's index in the scheduler.
pub type SiteKey = usize;

/// The furthest ahead of its due time a URL may go when its site's bucket is full, as a share of
/// its planned interval.
pub const MAX_EARLY_SHARE: f64 = 0.5;
/// A site's bucket holds this long a stretch of its budget (requests come evenly, not in bursts).
pub const BUCKET_SPAN_MS: f64 = 15.0 * 60_000.0;

/// A site's token bucket: `per_day` requests a day, at most `capacity` saved up.
#[derive(Debug, Clone, PartialEq)]
pub struct Bucket {
    /// Requests per day.
    pub per_day: f64,
    /// Most credit held.
    pub capacity: f64,
    /// Credit at `at_ms` (negative after requests charged beyond it).
    credit: f64,
    /// When `credit` was last brought up to date.
    at_ms: i64,
    /// Requests charged less those given back since it was made (what a save compares).
    spent: f64,
}

impl Bucket {
    /// A full bucket for `per_day` requests a day holding `span_ms` of them (at least one).
    pub fn new(per_day: f64, span_ms: f64, now_ms: i64) -> Self {
        let capacity = Self::capacity_of(per_day, span_ms);
        Self {
            per_day: per_day.max(0.0),
            capacity,
            credit: capacity,
            at_ms: now_ms,
            spent: 0.0,
        }
    }

    /// Puts back the credit an earlier run left at `at_ms` (saved by [`Bucket::state`]),
    /// refilled at this bucket's rate since then and held to its capacity: a restart starts
    /// where the last run stopped, not with a full bucket.
    pub fn restore(&mut self, credit: f64, at_ms: i64, now_ms: i64) {
        if !credit.is_finite() {
            return;
        }
        self.credit = credit.min(self.capacity);
        self.at_ms = at_ms.min(now_ms);
        self.refill(now_ms);
    }

    /// The credit now and the instant it is taken at (what [`Bucket::restore`] takes back).
    pub fn state(&mut self, now_ms: i64) -> (f64, i64) {
        self.refill(now_ms);
        (self.credit, self.at_ms)
    }

    /// Requests charged less those given back since it was made.
    pub fn spent(&self) -> f64 {
        self.spent
    }

    fn refill(&mut self, now_ms: i64) {
        if now_ms > self.at_ms {
            let gained = self.per_day * (now_ms - self.at_ms) as f64 / MS_PER_DAY;
            self.credit = (self.credit + gained).min(self.capacity);
            self.at_ms = now_ms;
        }
    }

    /// Credit now.
    pub fn credit(&mut self, now_ms: i64) -> f64 {
        self.refill(now_ms);
        self.credit
    }

    /// Spends `n` requests (the credit may go negative: the next ones wait).
    pub fn charge(&mut self, now_ms: i64, n: f64) {
        self.refill(now_ms);
        self.credit -= n;
        self.spent += n;
    }

    /// Gives back `n` requests charged but not made (never beyond the bucket's capacity).
    pub fn refund(&mut self, now_ms: i64, n: f64) {
        self.refill(now_ms);
        self.credit = (self.credit + n).min(self.capacity);
        self.spent -= n;
    }

    /// When the credit reaches `level` (now if it has).
    pub fn time_of(&mut self, now_ms: i64, level: f64) -> i64 {
        self.refill(now_ms);
        let level = level.min(self.capacity);
        if self.credit >= level {
            return now_ms;
        }
        if self.per_day <= 0.0 {
            return i64::MAX;
        }
        let wait = (level - self.credit) / self.per_day * MS_PER_DAY;
        now_ms.saturating_add(wait.ceil().min(1e15) as i64)
    }

    /// Changes the rate to `per_day`, holding `span_ms` of it at most; answers the credit beyond
    /// that, which is taken out.
    pub fn set_rate(&mut self, per_day: f64, span_ms: f64, now_ms: i64) -> f64 {
        self.refill(now_ms);
        self.per_day = per_day.max(0.0);
        self.capacity = Self::capacity_of(per_day, span_ms);
        let beyond = (self.credit - self.capacity).max(0.0);
        self.credit -= beyond;
        beyond
    }

    /// The most credit a bucket of `per_day` requests a day holding `span_ms` of them holds.
    pub fn capacity_of(per_day: f64, span_ms: f64) -> f64 {
        (per_day.max(0.0) * span_ms / MS_PER_DAY).max(1.0)
    }

    /// Room for more credit now (its capacity less its credit).
    pub fn room(&mut self, now_ms: i64) -> f64 {
        self.refill(now_ms);
        (self.capacity - self.credit).max(0.0)
    }

    /// Adds `n` requests of credit handed over from elsewhere (never beyond the capacity;
    /// nothing is counted as spent or given back).
    pub fn grant(&mut self, now_ms: i64, n: f64) {
        self.refill(now_ms);
        if n > 0.0 {
            self.credit = (self.credit + n).min(self.capacity);
        }
    }

    /// Takes out all its credit (a debt stays), answering how much.
    pub fn take_credit(&mut self, now_ms: i64) -> f64 {
        self.refill(now_ms);
        let taken = self.credit.max(0.0);
        self.credit -= taken;
        taken
    }

    /// When one request may go.
    pub fn ready_at(&mut self, now_ms: i64) -> i64 {
        self.time_of(now_ms, 1.0)
    }

    /// When the bucket is full (from then on, credit is being thrown away).
    pub fn full_at(&mut self, now_ms: i64) -> i64 {
        self.time_of(now_ms, self.capacity)
    }
}

/// One site's due URLs on one host, earliest first.
#[derive(Debug, Clone)]
struct Lane {
    site: SiteKey,
    queue: DueQueue,
}

/// One host's part of the frontier.
#[derive(Debug, Clone, Default)]
struct HostQueue {
    /// Due URLs, a queue per site with URLs on the host (nearly always one). One queue for all
    /// would let a head URL whose site has no credit hold back every other site's URLs on the
    /// host until that site's bucket refills.
    lanes: Vec<Lane>,
    /// The earliest instant the host may be contacted again (politeness, back-off, Retry-After).
    open_at_ms: i64,
    /// A request to this host is in flight: nothing more is handed out until it is reported.
    busy: bool,
    /// Another worker holds the host's lease (several workers on one database): nothing of it
    /// is handed out here until this worker holds it.
    elsewhere: bool,
    /// The key of the host's live heap entry, if any.
    heap_key: Option<i64>,
}

impl HostQueue {
    /// The queue of `site`'s URLs on this host (made when it has none).
    fn lane_mut(&mut self, site: SiteKey) -> &mut DueQueue {
        let at = match self.lanes.iter().position(|lane| lane.site == site) {
            Some(at) => at,
            None => {
                // Exactly the room needed: nearly every host has one lane.
                self.lanes.reserve_exact(1);
                self.lanes.push(Lane {
                    site,
                    queue: DueQueue::default(),
                });
                self.lanes.len() - 1
            }
        };
        &mut self.lanes[at].queue
    }
}

/// Per URL, what the frontier needs: 16 bytes (a frontier of ten million URLs holds ten million
/// of these), hence no `Option`. A URL's host and site are the scheduler's to hold: the calls
/// that need them are given them.
#[derive(Debug, Clone, Copy)]
struct Slot {
    /// The queued due time ([`NOT_QUEUED`]: not queued).
    due_ms: i64,
    /// How early it may go, ms.
    lead_ms: i64,
}

/// [`Slot::due_ms`] of a URL that is not queued.
const NOT_QUEUED: i64 = i64::MIN;

impl Slot {
    fn due(&self) -> Option<i64> {
        (self.due_ms != NOT_QUEUED).then_some(self.due_ms)
    }
}

/// What [`Frontier::pop`] hands out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Popped {
    /// The URL.
    pub url: UrlKey,
    /// Its host (now busy until [`Frontier::release`]).
    pub host: HostKey,
    /// Its site (charged one request).
    pub site: SiteKey,
}

/// Per-host queues, a heap of hosts and a bucket per site.
#[derive(Debug, Default)]
pub struct Frontier {
    hosts: Vec<HostQueue>,
    buckets: Vec<Bucket>,
    slots: Chunked<Slot>,
    heap: BinaryHeap<Reverse<(i64, i64, HostKey)>>,
    /// Whether URLs may go early when their site's bucket is full.
    pub fetch_ahead: bool,
}

impl Frontier {
    /// An empty frontier.
    pub fn new(fetch_ahead: bool) -> Self {
        Self {
            fetch_ahead,
            ..Default::default()
        }
    }

    /// Adds a site with its bucket.
    pub fn add_site(&mut self, bucket: Bucket) -> SiteKey {
        self.buckets.push(bucket);
        self.buckets.len() - 1
    }

    /// The bucket of a site.
    pub fn bucket_mut(&mut self, site: SiteKey) -> &mut Bucket {
        &mut self.buckets[site]
    }

    /// Adds a host, open from `open_at_ms`.
    pub fn add_host(&mut self, open_at_ms: i64) -> HostKey {
        self.hosts.push(HostQueue {
            open_at_ms,
            ..Default::default()
        });
        self.hosts.len() - 1
    }

    /// Makes room for `additional` more URLs, exactly.
    pub fn reserve_urls(&mut self, additional: usize) {
        self.slots.reserve_exact(additional);
    }

    /// Adds a URL (not queued yet).
    pub fn add_url(&mut self) -> UrlKey {
        self.slots.push(Slot {
            due_ms: NOT_QUEUED,
            lead_ms: 0,
        });
        self.slots.len() - 1
    }

    /// Queues `url` of `host` and `site` at `due_ms` (replacing where it was), allowed `lead_ms`
    /// early when its site's bucket is full; `due_ms = None` takes it out. A URL's host and site
    /// never change.
    pub fn set_due(
        &mut self,
        url: UrlKey,
        (host, site): (HostKey, SiteKey),
        due_ms: Option<i64>,
        lead_ms: i64,
    ) {
        let slot = self.slots[url];
        // The one instant that cannot be told from "not queued" goes a millisecond later.
        let due_ms = due_ms.map(|due| due.max(NOT_QUEUED + 1));
        self.slots[url].due_ms = due_ms.unwrap_or(NOT_QUEUED);
        self.slots[url].lead_ms = lead_ms.max(0);
        let Self { hosts, slots, .. } = self;
        let queue = hosts[host].lane_mut(site);
        match (slot.due(), due_ms) {
            (Some(old), Some(due)) if old == due => {}
            (old, Some(due)) => queue.push(due, url, old.is_some(), |d, u| slots[u].due_ms == d),
            (Some(_), None) => queue.forget(|d, u| slots[u].due_ms == d),
            (None, None) => {}
        }
        self.touch(host);
    }

    /// Where `url` is queued.
    pub fn due_of(&self, url: UrlKey) -> Option<i64> {
        self.slots[url].due()
    }

    /// Sets the earliest instant `host` may be contacted (it never moves earlier).
    pub fn close_until(&mut self, host: HostKey, open_at_ms: i64) {
        let h = &mut self.hosts[host];
        h.open_at_ms = h.open_at_ms.max(open_at_ms);
        self.touch(host);
    }

    /// When `host` may be contacted.
    pub fn open_at(&self, host: HostKey) -> i64 {
        self.hosts[host].open_at_ms
    }

    /// Frees a host after its request was reported.
    pub fn release(&mut self, host: HostKey) {
        self.hosts[host].busy = false;
        self.touch(host);
    }

    /// Gives `host` to another worker (`true`) or takes it back (`false`).
    pub fn set_elsewhere(&mut self, host: HostKey, elsewhere: bool) {
        self.hosts[host].elsewhere = elsewhere;
        self.touch(host);
    }

    /// Whether another worker holds `host`.
    pub fn is_elsewhere(&self, host: HostKey) -> bool {
        self.hosts[host].elsewhere
    }

    /// Whether a request to `host` is in flight.
    pub fn is_busy(&self, host: HostKey) -> bool {
        self.hosts[host].busy
    }

    /// The host's earliest possible instant, and the due time of the head that gives it (for
    /// ties).
    fn key_of(&mut self, host: HostKey) -> Option<(i64, i64)> {
        let Self {
            hosts,
            slots,
            fetch_ahead,
            ..
        } = self;
        let h = &mut hosts[host];
        if h.busy || h.elsewhere {
            return None;
        }
        let mut key: Option<(i64, i64)> = None;
        for lane in &mut h.lanes {
            let Some((due_ms, url)) = lane.queue.head(|d, u| slots[u].due_ms == d) else {
                continue;
            };
            let mut ready = due_ms;
            if *fetch_ahead {
                // A lower bound: the head may go this early if its site's bucket is full by
                // then ([`Frontier::pop`] checks).
                ready = ready.saturating_sub(slots[url].lead_ms);
            }
            let lane_key = (ready.max(h.open_at_ms), due_ms);
            key = Some(key.map_or(lane_key, |k| k.min(lane_key)));
        }
        key
    }

    fn touch(&mut self, host: HostKey) {
        match self.key_of(host) {
            Some((key, due)) => {
                if self.hosts[host].heap_key != Some(key) {
                    self.hosts[host].heap_key = Some(key);
                    self.heap.push(Reverse((key, due, host)));
                }
            }
            None => self.hosts[host].heap_key = None,
        }
    }

    /// The URL to request now, if any: the head of the host that has waited longest among those
    /// that are open, not busy, have a due head and whose site has credit (on a host several
    /// sites share, the most overdue of the heads whose site has credit). The host is then busy
    /// and the site charged one request.
    pub fn pop(&mut self, now_ms: i64) -> Option<Popped> {
        while let Some(&Reverse((key, _, host))) = self.heap.peek() {
            if key > now_ms {
                return None;
            }
            self.heap.pop();
            if self.hosts[host].heap_key != Some(key) {
                continue; // stale entry
            }
            self.hosts[host].heap_key = None;
            // Each lane's head, when it may really go, and the earliest of those instants.
            let mut go: Option<((i64, UrlKey), usize)> = None;
            let mut wait: Option<(i64, i64)> = None;
            let Self {
                hosts,
                slots,
                buckets,
                fetch_ahead,
                ..
            } = self;
            let h = &mut hosts[host];
            if h.busy || h.elsewhere {
                // Its release or return touches it again.
                continue;
            }
            for (at, lane) in h.lanes.iter_mut().enumerate() {
                let Some((due_ms, url)) = lane.queue.head(|d, u| slots[u].due_ms == d) else {
                    continue;
                };
                let bucket = &mut buckets[lane.site];
                // Really ready: due (or early on a full bucket), host open, credit for one.
                let mut ready = due_ms;
                if *fetch_ahead {
                    let early = due_ms.saturating_sub(slots[url].lead_ms);
                    ready = ready.min(bucket.full_at(now_ms).max(early));
                }
                let ready = ready.max(h.open_at_ms).max(bucket.ready_at(now_ms));
                if ready <= now_ms {
                    // The most overdue; ties by key, as one queue for all would order them.
                    if go.is_none_or(|(first, _)| (due_ms, url) < first) {
                        go = Some(((due_ms, url), at));
                    }
                } else if wait.is_none_or(|w| (ready, due_ms) < w) {
                    wait = Some((ready, due_ms));
                }
            }
            let Some(((_, url), at)) = go else {
                if let Some((ready, due_ms)) = wait {
                    h.heap_key = Some(ready);
                    self.heap.push(Reverse((ready, due_ms, host)));
                }
                continue;
            };
            // The lane's head is still `url`: nothing moved since it was read.
            let lane = &mut h.lanes[at];
            let site = lane.site;
            buckets[site].charge(now_ms, 1.0);
            lane.queue.pop_head();
            slots[url].due_ms = NOT_QUEUED;
            h.busy = true;
            return Some(Popped { url, host, site });
        }
        None
    }

    /// When [`Frontier::pop`] may next have something (`None`: nothing is queued anywhere).
    pub fn next_wake(&mut self) -> Option<i64> {
        while let Some(&Reverse((key, _, host))) = self.heap.peek() {
            if self.hosts[host].heap_key == Some(key) {
                return Some(key);
            }
            self.heap.pop();
        }
        None
    }

    /// Charges `n` requests made outside the frontier (robots.txt, sitemaps, redirect hops,
    /// retries) to a site.
    pub fn charge(&mut self, site: SiteKey, now_ms: i64, n: f64) {
        if n > 0.0 {
            self.buckets[site].charge(now_ms, n);
        }
    }

    /// Gives a site back `n` requests charged but not made. Heap keys stay lower bounds: with more
    /// credit a host may go sooner than its key, never later than without the refund.
    pub fn refund(&mut self, site: SiteKey, now_ms: i64, n: f64) {
        if n > 0.0 {
            self.buckets[site].refund(now_ms, n);
        }
    }

    /// Queued URLs due by `at_ms` (for a one-pass run: is anything left to do?, and the
    /// gauges): a pass over every URL's slot. `host_of` gives a URL's host.
    pub fn due_by(&self, at_ms: i64, host_of: impl Fn(UrlKey) -> HostKey) -> usize {
        self.slots
            .iter()
            .enumerate()
            // Another worker's hosts are its to fetch (a one-pass run does not wait on them).
            .filter(|(url, s)| {
                s.due().is_some_and(|due| due <= at_ms) && !self.hosts[host_of(*url)].elsewhere
            })
            .count()
    }

    /// Number of hosts.
    pub fn host_count(&self) -> usize {
        self.hosts.len()
    }
}

#[cfg(test)]
mod tests;
