//! An index of simhashes that finds every stored fingerprint within Hamming distance k of a query
//! without scanning them all (Manku, Jain, Das Sarma, "Detecting near-duplicates for web crawling",
//! WWW 2007).
//!
//! The 64 bits are cut into k + 1 blocks. Two fingerprints that differ in at most k bits differ in
//! at most k blocks, so by the pigeonhole principle they agree exactly on at least one block. Table
//! t holds every fingerprint keyed by its block t (the paper's table of fingerprints permuted so
//! that block t leads); a query looks up its own block in each table and checks the Hamming
//! distance of the few candidates it finds there. With 2^d fingerprints and blocks of b bits, a
//! query checks about (k + 1) · 2^(d - b) candidates: for k = 3 (16-bit blocks) and a million
//! fingerprints, about 60 instead of a million.

use std::collections::HashMap;

use super::fingerprint::hamming;

/// The largest supported distance: every block keeps at least two bits.
pub const MAX_DISTANCE: u32 = 31;

/// A near-duplicate index of (simhash, id) pairs.
#[derive(Debug, Clone)]
pub struct NearIndex {
    /// The distance searched for.
    k: u32,
    /// (shift, mask) of each block.
    blocks: Vec<(u32, u64)>,
    /// One table per block: block value -> the (simhash, id) pairs that have it.
    tables: Vec<HashMap<u64, Vec<(u64, u64)>>>,
    /// Entries stored (each is in every table).
    len: usize,
}

impl NearIndex {
    /// An empty index for distance `k` (clamped to [`MAX_DISTANCE`]).
    pub fn new(k: u32) -> Self {
        let k = k.min(MAX_DISTANCE);
        let count = k + 1;
        let mut blocks = Vec::with_capacity(count as usize);
        let mut shift = 0;
        for i in 0..count {
            // Spread the 64 bits as evenly as possible: the first (64 % count) blocks get one more.
            let width = 64 / count + u32::from(i < 64 % count);
            let mask = if width == 64 {
                u64::MAX
            } else {
                (1u64 << width) - 1
            };
            blocks.push((shift, mask));
            shift += width;
        }
        NearIndex {
            k,
            tables: vec![HashMap::new(); blocks.len()],
            blocks,
            len: 0,
        }
    }

    /// The distance this index searches for.
    pub fn distance(&self) -> u32 {
        self.k
    }

    /// Number of stored entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn key(&self, table: usize, simhash: u64) -> u64 {
        let (shift, mask) = self.blocks[table];
        simhash >> shift & mask
    }

    /// Stores `id` under `simhash`. Storing the same pair twice stores it once.
    pub fn insert(&mut self, simhash: u64, id: u64) {
        if self.tables.first().is_some_and(|t| {
            t.get(&self.key(0, simhash))
                .is_some_and(|bucket| bucket.contains(&(simhash, id)))
        }) {
            return;
        }
        for table in 0..self.tables.len() {
            let key = self.key(table, simhash);
            self.tables[table]
                .entry(key)
                .or_default()
                .push((simhash, id));
        }
        self.len += 1;
    }

    /// Removes the pair; returns whether it was stored.
    pub fn remove(&mut self, simhash: u64, id: u64) -> bool {
        let mut found = false;
        for table in 0..self.tables.len() {
            let key = self.key(table, simhash);
            if let Some(bucket) = self.tables[table].get_mut(&key)
                && let Some(pos) = bucket.iter().position(|&e| e == (simhash, id))
            {
                bucket.swap_remove(pos);
                found = true;
                if bucket.is_empty() {
                    self.tables[table].remove(&key);
                }
            }
        }
        if found {
            self.len -= 1;
        }
        found
    }

    /// Every stored (id, distance) within distance k of `simhash`, each once, nearest first.
    pub fn query(&self, simhash: u64) -> Vec<(u64, u32)> {
        let mut out = Vec::new();
        self.for_each_match(simhash, |id, d| out.push((id, d)));
        out.sort_by_key(|&(id, d)| (d, id));
        out
    }

    /// Calls `f(id, distance)` for every stored entry within distance k of `simhash`, each once.
    pub fn for_each_match(&self, simhash: u64, mut f: impl FnMut(u64, u32)) {
        for table in 0..self.tables.len() {
            let Some(bucket) = self.tables[table].get(&self.key(table, simhash)) else {
                continue;
            };
            for &(candidate, id) in bucket {
                // A candidate that also agrees on an earlier block was reported by that table.
                let seen = (0..table).any(|t| self.key(t, candidate) == self.key(t, simhash));
                if seen {
                    continue;
                }
                let d = hamming(candidate, simhash);
                if d <= self.k {
                    f(id, d);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn splitmix(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    #[test]
    fn finds_exactly_what_a_scan_finds() {
        let mut seed = 7;
        let mut index = NearIndex::new(3);
        let mut stored = Vec::new();
        for id in 0..2000u64 {
            let base = if id % 3 == 0 && id > 0 {
                // A near copy of an earlier entry: flip up to 4 bits.
                let (prev, _) = stored[(splitmix(&mut seed) % id) as usize];
                let flips = splitmix(&mut seed) % 5;
                (0..flips).fold(prev, |fp, _| fp ^ 1 << (splitmix(&mut seed) % 64))
            } else {
                splitmix(&mut seed)
            };
            index.insert(base, id);
            stored.push((base, id));
        }
        for &(query, _) in stored.iter().step_by(7) {
            let mut expected: Vec<(u64, u32)> = stored
                .iter()
                .filter(|(fp, _)| hamming(*fp, query) <= 3)
                .map(|&(fp, id)| (id, hamming(fp, query)))
                .collect();
            expected.sort_by_key(|&(id, d)| (d, id));
            assert_eq!(index.query(query), expected);
        }
    }

    #[test]
    fn remove_and_duplicate_insert() {
        let mut index = NearIndex::new(2);
        index.insert(0xFF, 1);
        index.insert(0xFF, 1);
        assert_eq!(index.len(), 1);
        assert_eq!(index.query(0xFE), vec![(1, 1)]);
        assert!(index.remove(0xFF, 1));
        assert!(!index.remove(0xFF, 1));
        assert!(index.query(0xFF).is_empty());
        assert!(index.is_empty());
    }

    #[test]
    fn distance_zero_and_large_distances_work() {
        let mut zero = NearIndex::new(0);
        zero.insert(42, 1);
        assert_eq!(zero.query(42), vec![(1, 0)]);
        assert!(zero.query(43).is_empty());
        let mut wide = NearIndex::new(40);
        assert_eq!(wide.distance(), MAX_DISTANCE);
        wide.insert(0, 9);
        assert_eq!(wide.query((1u64 << 31) - 1), vec![(9, 31)]);
    }
}
