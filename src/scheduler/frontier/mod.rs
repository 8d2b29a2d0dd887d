//! The Mercator frontier in memory (pure): one queue of URLs per host ordered by due time (one
//! per site on a host that several sites share, so that a site out of credit holds back only its
//! own URLs), a heap of hosts keyed by the earliest instant each may be asked for its next URL,
//! and one token bucket per site that spreads the site's requests evenly at its budget.
//!
//! Nothing here sleeps or polls: [`Frontier::pop`] answers "which URL now, if any", and
//! [`Frontier::next_wake`] answers "not before when". The heap is lazy: a host is pushed again
//! whenever its key may have moved, and an entry whose key is no longer the host's is skipped.
//! Keys are lower bounds: a host's key holds its sites' buckets' promises (when each holds a
//! request, when it is full), and a bucket can only fill later than promised (other hosts took
//! its credit), never sooner, but for credit given back, handed over or restored and a new
//! rate, which key again the hosts waiting on it if the promises moved sooner. A host popped
//! early is simply pushed back with its real time.
//!
//! *Hosts take turns*: among equal keys the host whose head is due earliest goes first, and
//! among equal due times the host whose last request went longest ago. Hosts waiting on their
//! site's bucket share its key (the instant it holds a request), so when the budget binds they
//! go earliest due first, as one queue for the site would order them; a bucket that holds a
//! request holds no host back, and hosts go by their own due times and gates. A discovery pass
//! makes all its new pages due at its start ([`crate::store::Store::upsert_found_in_pass`]), so
//! those are fetched host by host in turns, not one host's whole backlog before the next
//! host's first page (ties by host number did that: the first host's politeness gap opens
//! long before the bucket refills). Turns only break ties of due time: counting a host as due
//! no earlier than its last request turned every binding budget into turns between hosts
//! whatever their plans, and the demo's copies grew older (0.78-0.89 of the oracle's mean age
//! against 0.73-0.77).
//!
//! *Fetch-ahead*: when a site's bucket is full, credit would be thrown away, so the site's
//! earliest-due URL may go early (by at most [`MAX_EARLY_SHARE`] of its interval). This is what
//! makes a plan that spends the budget actually spend it, rather than losing every instant at
//! which nothing happened to be due.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::chunked::Chunked;
use super::due_queue::DueQueue;

mod bucket;
pub use bucket::{BUCKET_SPAN_MS, Bucket};

/// A URL's index in the scheduler.
pub type UrlKey = usize;
/// A host's index in the scheduler.
pub type HostKey = usize;
/// A site's index in the scheduler.
pub type SiteKey = usize;

/// The furthest ahead of its due time a URL may go when its site's bucket is full, as a share of
/// its planned interval.
pub const MAX_EARLY_SHARE: f64 = 0.5;
/// One site's due URLs on one host, earliest first.
#[derive(Debug, Clone)]
struct Lane {
    site: SiteKey,
    queue: DueQueue,
    /// The host is in its site's list of [`Frontier::parked`] for this lane (its head waited on
    /// the bucket when it was listed; it stays listed till the bucket's next wake).
    parked: bool,
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
    /// When its last request was handed out and not taken back (turns among hosts of equal
    /// keys and due times).
    served_ms: i64,
    /// `served_ms` before the last request was handed out, put back when that request is
    /// taken back unmade ([`Frontier::take_back`]): a deferred request costs the host no turn.
    served_before_ms: i64,
    /// The key and turn of the host's live heap entry, if any.
    heap_key: Option<(i64, Turn)>,
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
                    parked: false,
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

/// The order among hosts of equal keys: their heads' due times, then when each host's last
/// request went (the least recently served first).
type Turn = (i64, i64);

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
    heap: BinaryHeap<Reverse<(i64, Turn, HostKey)>>,
    /// Per site, the hosts with a lane whose head waited on the site's bucket when keyed (each
    /// lane listed once), to be keyed again when its credit comes sooner than promised.
    parked: Vec<Vec<HostKey>>,
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
        self.parked.push(Vec::new());
        self.buckets.len() - 1
    }

    /// A site bucket's credit now (negative: a debt). What adds credit goes through
    /// [`Frontier::set_rate`], [`Frontier::grant`], [`Frontier::restore_bucket`] or
    /// [`Frontier::refund`], which wake the hosts waiting on it; nothing hands the bucket out,
    /// so nothing can add credit without them.
    pub fn budget_credit(&mut self, site: SiteKey, now_ms: i64) -> f64 {
        self.buckets[site].credit(now_ms)
    }

    /// The credit a site's bucket has room for now.
    pub fn budget_room(&mut self, site: SiteKey, now_ms: i64) -> f64 {
        self.buckets[site].room(now_ms)
    }

    /// A site bucket's credit now and the instant it is taken at ([`Bucket::state`]).
    pub fn budget_state(&mut self, site: SiteKey, now_ms: i64) -> (f64, i64) {
        self.buckets[site].state(now_ms)
    }

    /// Requests charged to a site's bucket less those given back ([`Bucket::spent`]).
    pub fn budget_spent(&self, site: SiteKey) -> f64 {
        self.buckets[site].spent()
    }

    /// Takes all of a site bucket's credit out (a debt stays; [`Bucket::take_credit`]). Less
    /// credit only moves the bucket's promises later: no host is woken.
    pub fn take_budget_credit(&mut self, site: SiteKey, now_ms: i64) -> f64 {
        self.buckets[site].take_credit(now_ms)
    }

    /// Sets a site's budget rate ([`Bucket::set_rate`]; answers the credit taken out).
    pub fn set_rate(&mut self, site: SiteKey, per_day: f64, span_ms: f64, now_ms: i64) -> f64 {
        let before = self.buckets[site].promised();
        let beyond = self.buckets[site].set_rate(per_day, span_ms, now_ms);
        self.wake_if_sooner(site, before);
        beyond
    }

    /// Adds credit handed over from elsewhere to a site's bucket ([`Bucket::grant`]).
    pub fn grant(&mut self, site: SiteKey, now_ms: i64, n: f64) {
        let before = self.buckets[site].promised();
        self.buckets[site].grant(now_ms, n);
        self.wake_if_sooner(site, before);
    }

    /// Puts back the credit an earlier run left a site ([`Bucket::restore`]).
    pub fn restore_bucket(&mut self, site: SiteKey, credit: f64, at_ms: i64, now_ms: i64) {
        let before = self.buckets[site].promised();
        self.buckets[site].restore(credit, at_ms, now_ms);
        self.wake_if_sooner(site, before);
    }

    /// Keys again the hosts waiting on `site`'s bucket if it now holds a request, or is full,
    /// sooner than it promised before (`before`: [`Bucket::promised`]).
    fn wake_if_sooner(&mut self, site: SiteKey, before: (i64, i64)) {
        let (ready, full) = self.buckets[site].promised();
        // Without fetch-ahead, no key holds when a bucket is full.
        if ready >= before.0 && (full >= before.1 || !self.fetch_ahead) {
            return;
        }
        for host in std::mem::take(&mut self.parked[site]) {
            for lane in &mut self.hosts[host].lanes {
                if lane.site == site {
                    lane.parked = false;
                }
            }
            self.touch(host);
        }
    }

    /// Adds a host, open from `open_at_ms`.
    pub fn add_host(&mut self, open_at_ms: i64) -> HostKey {
        self.hosts.push(HostQueue {
            open_at_ms,
            served_ms: i64::MIN,
            served_before_ms: i64::MIN,
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

    /// Frees a host whose request was taken back unmade: as [`Frontier::release`], and the
    /// host keeps its turn (its last request is the one before).
    pub fn take_back(&mut self, host: HostKey) {
        let h = &mut self.hosts[host];
        h.served_ms = h.served_before_ms;
        self.release(host);
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

    /// The host's earliest possible instant as its buckets last promised it, and its turn
    /// among equal keys ([`Turn`]: the due time of the head that gives it, then when the host
    /// was last served). Lanes whose head a bucket holds back are listed in their site's
    /// [`Frontier::parked`], to be keyed again should its credit come sooner.
    fn key_of(&mut self, host: HostKey) -> Option<(i64, Turn)> {
        let Self {
            hosts,
            slots,
            buckets,
            parked,
            fetch_ahead,
            ..
        } = self;
        let h = &mut hosts[host];
        if h.busy || h.elsewhere {
            return None;
        }
        let mut key: Option<(i64, Turn)> = None;
        for lane in &mut h.lanes {
            let Some((due_ms, url)) = lane.queue.head(|d, u| slots[u].due_ms == d) else {
                continue;
            };
            let bucket = &buckets[lane.site];
            // Without the bucket's promises: due, or as early as it may go, the host's gate,
            // and the bucket's last update (a key that instant or earlier is popped at once and
            // is not listed: listing every overdue host cost a pass over all of them at each
            // refund).
            let early = if *fetch_ahead {
                due_ms.saturating_sub(slots[url].lead_ms)
            } else {
                due_ms
            };
            let unbound = early.max(h.open_at_ms).max(bucket.at_ms);
            // With it: early only once it is full, and never before it holds a request.
            let ready = if *fetch_ahead {
                due_ms.min(bucket.full_instant().max(early))
            } else {
                due_ms
            };
            let lane_key = ready.max(h.open_at_ms).max(bucket.ready_instant());
            if lane_key > unbound && !lane.parked {
                lane.parked = true;
                parked[lane.site].push(host);
            }
            let lane_key = (lane_key, (due_ms, h.served_ms));
            key = Some(key.map_or(lane_key, |k| k.min(lane_key)));
        }
        key
    }

    fn touch(&mut self, host: HostKey) {
        match self.key_of(host) {
            Some((key, turn)) => {
                if self.hosts[host].heap_key != Some((key, turn)) {
                    self.hosts[host].heap_key = Some((key, turn));
                    self.heap.push(Reverse((key, turn, host)));
                }
            }
            None => self.hosts[host].heap_key = None,
        }
    }

    /// The URL to request now, if any: the head of the host of the earliest key (then the
    /// earliest due, then the least recently served) among those that are open, not busy, have
    /// a due head and whose site has credit (on a host several sites share, the most overdue of
    /// the heads whose site has credit; hosts waiting on one bucket take turns, see the
    /// module's notes). The host is then busy and the site charged one request.
    pub fn pop(&mut self, now_ms: i64) -> Option<Popped> {
        while let Some(&Reverse((key, turn, host))) = self.heap.peek() {
            if key > now_ms {
                return None;
            }
            self.heap.pop();
            if self.hosts[host].heap_key != Some((key, turn)) {
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
                if wait.is_some() {
                    // Keyed again with the buckets as they are now (another host took the
                    // credit its key was promised).
                    self.touch(host);
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
            h.served_before_ms = h.served_ms;
            h.served_ms = now_ms;
            return Some(Popped { url, host, site });
        }
        None
    }

    /// When [`Frontier::pop`] may next have something (`None`: nothing is queued anywhere).
    pub fn next_wake(&mut self) -> Option<i64> {
        while let Some(&Reverse((key, turn, host))) = self.heap.peek() {
            if self.hosts[host].heap_key == Some((key, turn)) {
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

    /// Gives a site back `n` requests charged but not made (the hosts waiting on a bucket are
    /// keyed again: they may go sooner).
    pub fn refund(&mut self, site: SiteKey, now_ms: i64, n: f64) {
        if n > 0.0 {
            let before = self.buckets[site].promised();
            self.buckets[site].refund(now_ms, n);
            self.wake_if_sooner(site, before);
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
