//! The store's row id of each URL the scheduler knows, both ways, in 13 to 19 bytes a URL: the
//! ids in key order, and a hash table holding only the 32-bit keys (a key's hash is its id's).
//! A `HashMap<i64, UrlKey>` beside the list took 17 bytes a slot, 28 to 35 a URL once its
//! doubling is counted (`heaptrack` on `freshet bench --only run --pages 1000000`: 36 MB).

use std::hash::BuildHasher;

use hashbrown::HashTable;

use crate::scheduler::UrlKey;

/// Row ids and scheduler keys of the URLs, one to one.
#[derive(Default)]
pub struct UrlIds {
    /// The row id of each key.
    ids: Vec<i64>,
    /// The keys, found by their ids.
    keys: HashTable<u32>,
    hasher: std::collections::hash_map::RandomState,
}

impl UrlIds {
    /// The key of a row id, if it was added.
    pub fn key_of(&self, id: i64) -> Option<UrlKey> {
        let hash = self.hasher.hash_one(id);
        self.keys
            .find(hash, |&key| self.ids[key as usize] == id)
            .map(|&key| key as UrlKey)
    }

    /// The row id of a key.
    pub fn id_of(&self, key: UrlKey) -> i64 {
        self.ids[key]
    }

    /// Adds the row id of the next key, which must be `self.len()` (the scheduler numbers its
    /// URLs in the order they are added).
    pub fn push(&mut self, id: i64, key: UrlKey) {
        assert_eq!(key, self.ids.len(), "keys are added in order");
        let key = u32::try_from(key).expect("fewer than 2^32 URLs");
        self.ids.push(id);
        let Self { ids, keys, hasher } = self;
        keys.insert_unique(hasher.hash_one(id), key, |&k| {
            hasher.hash_one(ids[k as usize])
        });
    }

    /// Makes room for `additional` more URLs.
    pub fn reserve(&mut self, additional: usize) {
        self.ids.reserve_exact(additional);
        let Self { ids, keys, hasher } = self;
        keys.reserve(additional, |&k| hasher.hash_one(ids[k as usize]));
    }

    /// How many URLs.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// The row ids of a range of keys.
    pub fn ids(&self, keys: std::ops::Range<usize>) -> &[i64] {
        &self.ids[keys.start.min(self.ids.len())..keys.end.min(self.ids.len())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_keys_map_both_ways() {
        let mut ids = UrlIds::default();
        ids.reserve(100);
        // Ids in any order, spread wide, as rows of several workers come.
        let rows: Vec<i64> = (0..10_000).map(|i| (i * 7_919) % 100_003 + 1).collect();
        for (key, &id) in rows.iter().enumerate() {
            ids.push(id, key);
        }
        assert_eq!(ids.len(), rows.len());
        for (key, &id) in rows.iter().enumerate() {
            assert_eq!(ids.key_of(id), Some(key));
            assert_eq!(ids.id_of(key), id);
        }
        assert_eq!(ids.key_of(0), None);
        assert_eq!(ids.key_of(100_004), None);
        assert_eq!(ids.ids(2..4), &rows[2..4]);
        assert_eq!(ids.ids(9_999..20_000), &rows[9_999..]);
    }
}
