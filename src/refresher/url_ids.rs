//! The store's row id of each URL the scheduler knows, both ways. The ids in key order take 8
//! bytes a URL; while they increase (a start reads the rows by id, and a new row's id is above
//! every other on SQLite) a binary search finds a key, and the first id out of order builds a
//! hash table of the 32-bit keys (a key's hash is its id's), 5 to 10 bytes a URL more. Rows can
//! come out of order when several sites' discoveries sync at once, or from other workers; a
//! key forgotten (a URL added again under another kind or site) builds it too.
//! A `HashMap<i64, UrlKey>` beside the list took 17 bytes a slot, 28 to 35 a URL once its
//! doubling is counted (`heaptrack` on `freshet bench --only run --pages 1000000`: 36 MB).

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;

use hashbrown::HashTable;

use crate::scheduler::UrlKey;

/// The id of a key forgotten ([`UrlIds::forget`]): no row's (row ids start at 1).
pub const FORGOTTEN: i64 = 0;

/// Row ids and scheduler keys of the URLs, one to one.
#[derive(Default)]
pub struct UrlIds {
    /// The row id of each key.
    ids: Vec<i64>,
    /// The keys, found by their ids, once an id came out of order or a key was forgotten
    /// (`None`: `ids` increases).
    keys: Option<HashTable<u32>>,
    hasher: RandomState,
}

impl UrlIds {
    /// The key of a row id, if it was added.
    pub fn key_of(&self, id: i64) -> Option<UrlKey> {
        match &self.keys {
            None => self.ids.binary_search(&id).ok(),
            Some(keys) => keys
                .find(self.hasher.hash_one(id), |&key| {
                    self.ids[key as usize] == id
                })
                .map(|&key| key as UrlKey),
        }
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
        if self.keys.is_none() && self.ids.last().is_some_and(|&last| id <= last) {
            self.build_table();
        }
        self.ids.push(id);
        let Self { ids, keys, hasher } = self;
        if let Some(keys) = keys {
            keys.insert_unique(hasher.hash_one(id), key, hash_of_key(hasher, ids));
        }
    }

    /// Forgets the key of the row id `id` (the scheduler adds the URL again under a new key:
    /// another kind or site, [`super::ledger::Ledger::rekey`]): the id finds no key, and the
    /// key's id is [`FORGOTTEN`]. Answers the key forgotten.
    pub fn forget(&mut self, id: i64) -> Option<UrlKey> {
        let key = self.key_of(id)?;
        if self.keys.is_none() {
            self.build_table();
        }
        let Self { ids, keys, hasher } = self;
        if let Some(keys) = keys
            && let Ok(entry) = keys.find_entry(hasher.hash_one(id), |&k| k as usize == key)
        {
            entry.remove();
        }
        ids[key] = FORGOTTEN;
        Some(key)
    }

    /// The hash table of every key so far, room made for as many as `ids` holds.
    fn build_table(&mut self) {
        let Self { ids, keys, hasher } = self;
        let mut table = HashTable::with_capacity(ids.capacity().max(ids.len() + 1));
        for (key, &id) in ids.iter().enumerate() {
            table.insert_unique(hasher.hash_one(id), key as u32, hash_of_key(hasher, ids));
        }
        *keys = Some(table);
    }

    /// Makes room for `additional` more URLs.
    pub fn reserve(&mut self, additional: usize) {
        self.ids.reserve_exact(additional);
        let Self { ids, keys, hasher } = self;
        if let Some(keys) = keys {
            keys.reserve(additional, hash_of_key(hasher, ids));
        }
    }

    /// How many URLs.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// The row ids of a range of keys.
    pub fn ids(&self, keys: std::ops::Range<usize>) -> &[i64] {
        &self.ids[keys.start.min(self.ids.len())..keys.end.min(self.ids.len())]
    }

    /// Whether ids came out of order, so that a hash table finds keys.
    #[cfg(test)]
    fn hashed(&self) -> bool {
        self.keys.is_some()
    }
}

/// A key's hash in the table: its id's.
fn hash_of_key<'a>(hasher: &'a RandomState, ids: &'a [i64]) -> impl Fn(&u32) -> u64 + 'a {
    move |&key| hasher.hash_one(ids[key as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(ids: &UrlIds, rows: &[i64]) {
        assert_eq!(ids.len(), rows.len());
        for (key, &id) in rows.iter().enumerate() {
            assert_eq!(ids.key_of(id), Some(key), "id {id}");
            assert_eq!(ids.id_of(key), id);
        }
        for absent in [0, -5, 100_004, 100_005] {
            assert_eq!(ids.key_of(absent), None);
        }
    }

    #[test]
    fn ids_and_keys_map_both_ways_in_any_order() {
        let mut ids = UrlIds::default();
        ids.reserve(100);
        // Ids in any order, spread wide, as rows of several workers come.
        let rows: Vec<i64> = (0..10_000).map(|i| (i * 7_919) % 100_003 + 1).collect();
        for (key, &id) in rows.iter().enumerate() {
            ids.push(id, key);
        }
        assert!(ids.hashed());
        check(&ids, &rows);
        assert_eq!(ids.ids(2..4), &rows[2..4]);
        assert_eq!(ids.ids(9_999..20_000), &rows[9_999..]);
    }

    #[test]
    fn ids_in_order_need_no_table_until_one_comes_out_of_order() {
        let mut ids = UrlIds::default();
        ids.reserve(6_000);
        // Increasing with gaps (rows of other kinds between), as a start reads them.
        let mut rows: Vec<i64> = (0..5_000).map(|i| 3 * i + 1 + i / 7).collect();
        for (key, &id) in rows.iter().enumerate() {
            ids.push(id, key);
        }
        assert!(!ids.hashed());
        check(&ids, &rows);
        // A row a second site's discovery wrote before the last one comes after it.
        for id in [2, 100_003, 8] {
            ids.push(id, rows.len());
            rows.push(id);
        }
        assert!(ids.hashed());
        check(&ids, &rows);
    }

    #[test]
    fn a_forgotten_id_finds_its_new_key() {
        for in_order in [true, false] {
            let mut ids = UrlIds::default();
            let mut rows: Vec<i64> = vec![3, 5, 9, 12];
            if !in_order {
                rows.swap(0, 1);
            }
            for (key, &id) in rows.iter().enumerate() {
                ids.push(id, key);
            }
            assert_eq!(ids.forget(9), Some(2));
            assert_eq!(ids.forget(9), None);
            assert_eq!(ids.key_of(9), None);
            assert_eq!(ids.id_of(2), FORGOTTEN);
            ids.push(9, 4);
            ids.reserve(1_000); // a table grown again hashes no forgotten key
            assert_eq!(ids.key_of(9), Some(4));
            for (key, &id) in rows.iter().enumerate().filter(|&(key, _)| key != 2) {
                assert_eq!(ids.key_of(id), Some(key), "{rows:?}");
            }
            assert_eq!(ids.key_of(FORGOTTEN), None);
        }
    }
}
