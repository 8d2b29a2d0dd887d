//! One host's due URLs, earliest first (ties by key): a binary heap of 12-byte entries whose
//! entries go stale instead of being taken out.
//!
//! A URL's queued due time lives in the frontier's slot; an entry is live while its due time is
//! the slot's. Moving a URL pushes a new entry and leaves the old one stale; stale entries are
//! dropped when they reach the head, and all at once when they outnumber the live ones. A
//! `BTreeSet` of `(due, key)` pairs of 16 bytes took about 32 bytes a URL in its nodes
//! (`heaptrack` on `freshet bench --only run --pages 1000000`: 32 MB); this takes 12 while
//! nothing is stale, and after any push or removal at most twice that (plus a few dozen
//! entries).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::UrlKey;

/// A due time and a URL in 12 bytes, ordered as `(due, key)`: the due time's high half is
/// signed and its low half unsigned, so the fields in order compare as the `i64` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    due_high: i32,
    due_low: u32,
    url: u32,
}

impl Entry {
    fn new(due_ms: i64, url: UrlKey) -> Self {
        Self {
            due_high: (due_ms >> 32) as i32,
            due_low: due_ms as u32,
            url: u32::try_from(url).expect("fewer than 2^32 URLs"),
        }
    }

    fn due_ms(self) -> i64 {
        (i64::from(self.due_high) << 32) | i64::from(self.due_low)
    }

    fn url(self) -> UrlKey {
        self.url as UrlKey
    }
}

/// Stale entries beyond this many plus the live ones start a sweep.
const STALE_SLACK: usize = 64;
/// Room a full list grows by, beyond a quarter of its length.
const GROWTH_SLACK: usize = 8;

/// The room a list of `len` entries is given when it grows or gives room back: a quarter more
/// (a doubled list is half empty on average), and a few.
fn room_for(len: usize) -> usize {
    len + len / 4 + GROWTH_SLACK
}

/// See the module docs. `is_live(due, url)` tells whether `url` is queued at `due` now.
#[derive(Debug, Clone, Default)]
pub(super) struct DueQueue {
    heap: BinaryHeap<Reverse<Entry>>,
    /// URLs queued here (each has a live entry; an entry may be live twice when a URL came back
    /// to a due time it had left: the first handed out leaves the other stale).
    live: usize,
}

impl DueQueue {
    /// Queues `url` at `due_ms`; `moved`: it was queued here at another time (its old entry
    /// goes stale), else it was not queued.
    pub fn push(
        &mut self,
        due_ms: i64,
        url: UrlKey,
        moved: bool,
        is_live: impl Fn(i64, UrlKey) -> bool,
    ) {
        if !moved {
            self.live += 1;
        }
        if self.heap.len() == self.heap.capacity() {
            let len = self.heap.len();
            self.heap.reserve_exact(room_for(len) - len);
        }
        self.heap.push(Reverse(Entry::new(due_ms, url)));
        self.sweep_if_stale(is_live);
    }

    /// A URL queued here was taken out (its entry goes stale).
    pub fn forget(&mut self, is_live: impl Fn(i64, UrlKey) -> bool) {
        self.live = self.live.saturating_sub(1);
        self.sweep_if_stale(is_live);
    }

    /// Drops every stale entry (and a live one held twice) once they outnumber the live ones.
    fn sweep_if_stale(&mut self, is_live: impl Fn(i64, UrlKey) -> bool) {
        if self.heap.len() > 2 * self.live + STALE_SLACK {
            let mut entries = std::mem::take(&mut self.heap).into_vec();
            entries.retain(|Reverse(e)| is_live(e.due_ms(), e.url()));
            entries.sort_unstable();
            entries.dedup();
            entries.shrink_to(room_for(entries.len()));
            self.heap = BinaryHeap::from(entries);
        }
    }

    /// The earliest live entry, as `(due, url)`; stale entries before it are dropped.
    pub fn head(&mut self, is_live: impl Fn(i64, UrlKey) -> bool) -> Option<(i64, UrlKey)> {
        while let Some(&Reverse(top)) = self.heap.peek() {
            if is_live(top.due_ms(), top.url()) {
                return Some((top.due_ms(), top.url()));
            }
            self.heap.pop();
        }
        None
    }

    /// Takes out the head [`DueQueue::head`] returned (the caller marks its URL not queued).
    pub fn pop_head(&mut self) {
        self.heap.pop();
        self.live = self.live.saturating_sub(1);
        let len = self.heap.len();
        if len < self.heap.capacity() / 4 {
            // A queue that emptied gives back its room, a quarter kept for what comes next.
            self.heap.shrink_to(room_for(len));
        }
    }

    /// Entries held, stale ones included.
    #[cfg(test)]
    pub fn entries(&self) -> usize {
        self.heap.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_order_as_due_time_then_key_across_the_sign_and_the_halves() {
        let dues = [
            i64::MIN + 1,
            -5_000_000_000,
            -1,
            0,
            1,
            4_294_967_295,
            4_294_967_296,
            1 << 40,
        ];
        let mut entries: Vec<Entry> = Vec::new();
        for &due in dues.iter().rev() {
            for url in [7, 3] {
                entries.push(Entry::new(due, url));
            }
        }
        for e in &entries {
            assert_eq!(Entry::new(e.due_ms(), e.url()), *e);
        }
        entries.sort();
        let got: Vec<(i64, UrlKey)> = entries.iter().map(|e| (e.due_ms(), e.url())).collect();
        let mut want: Vec<(i64, UrlKey)> = dues.iter().flat_map(|&d| [(d, 3), (d, 7)]).collect();
        want.sort();
        assert_eq!(got, want);
        assert_eq!(std::mem::size_of::<Entry>(), 12);
    }

    #[test]
    fn a_moved_url_leaves_a_stale_entry_that_never_comes_out_and_sweeps_keep_it_small() {
        // The slots: each URL's queued due time.
        let mut due: Vec<Option<i64>> = vec![None; 10];
        let mut q = DueQueue::default();
        for (url, due) in due.iter_mut().enumerate() {
            *due = Some(100 + url as i64);
            q.push(100 + url as i64, url, false, |_, _| true);
        }
        // URL 0 moves behind the others, then back to where it was.
        due[0] = Some(500);
        q.push(500, 0, true, |d, u| due[u] == Some(d));
        due[0] = Some(100);
        q.push(100, 0, true, |d, u| due[u] == Some(d));
        // Many moves: the stale entries are swept.
        for round in 0..1_000 {
            due[5] = Some(1_000 + round);
            q.push(1_000 + round, 5, true, |d, u| due[u] == Some(d));
        }
        assert!(q.entries() <= 2 * 10 + STALE_SLACK + 1, "{}", q.entries());
        let mut out = Vec::new();
        while let Some((d, url)) = q.head(|d, u| due[u] == Some(d)) {
            q.pop_head();
            due[url] = None;
            out.push((d, url));
        }
        let want: Vec<(i64, UrlKey)> = [(100, 0)]
            .into_iter()
            .chain((1..10).filter(|&u| u != 5).map(|u| (100 + u as i64, u)))
            .chain([(1_999, 5)])
            .collect();
        assert_eq!(out, want, "each URL once, at its last due time");
        assert_eq!(q.live, 0);
    }

    #[test]
    fn a_queue_holds_at_most_a_quarter_more_room_than_its_entries() {
        // A host's queue of a restart's URLs, each queued once: a doubling list would hold up
        // to twice the room (a host of 5,000 URLs: 8,192 entries).
        let mut q = DueQueue::default();
        for url in 0..5_000 {
            q.push(url as i64, url, false, |_, _| true);
            let (len, room) = (q.heap.len(), q.heap.capacity());
            assert!(room <= len + len / 4 + GROWTH_SLACK + 1, "{room} for {len}");
        }
        // Handed out down to a few: the room goes back (a quarter of what was there at most).
        while q.heap.len() > 100 {
            q.head(|_, _| true);
            q.pop_head();
        }
        assert!(
            q.heap.capacity() <= 4 * 100 + GROWTH_SLACK,
            "{}",
            q.heap.capacity()
        );
    }
}
