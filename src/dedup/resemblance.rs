//! Verified near-duplicates: the resemblance of two main texts (Broder, "On the resemblance and
//! containment of documents", 1997), estimated from a compact sketch, and an LSH index that finds
//! the candidates worth verifying without a scan.
//!
//! **Resemblance.** A text is cut into words (as for the simhash: alphanumeric runs, lower-cased)
//! and its shingles are the runs of [`SHINGLE_WORDS`] consecutive words. The resemblance of two
//! texts is the Jaccard index of their shingle sets, |A ∩ B| / |A ∪ B|.
//!
//! **Sketch** (one-permutation hashing, Li, Owen and Zhang, NIPS 2012, with the optimal
//! densification of Shrivastava, ICML 2017; b-bit minwise hashing, Li and König, WWW 2010): each
//! shingle is hashed once; the hash's top 7 bits pick one of [`SKETCH_LEN`] bins and each bin
//! keeps the least hash that fell in it. A bin no shingle fell in (a short text) borrows the
//! minimum of a non-empty bin chosen by a fixed sequence of hashes of the bin's index, the same
//! for every text. Each bin keeps 8 bits of its own hash of its minimum (not the minimum's low
//! bits: a text of one shingle would repeat one byte 128 times, and two such texts would look
//! identical once in 256), so a sketch is 128 bytes whatever the page's length. For one bin, P[min(A) = min(B)] = J as with 128 independent hash
//! functions; two different minima still agree on 8 bits with probability 1/256, so J is
//! estimated as (m - 1/256) / (1 - 1/256) where m is the share of equal bytes; the standard
//! error is at most about 0.045. Hashing each shingle once instead of 128 times made the
//! sketch 128 times cheaper: it was the refresher's hottest function (15% of a `bench --only
//! run` profile). Sketches of the earlier 128-function kind were dropped by migration 0013.
//!
//! **Threshold.** Two texts are near-duplicates when the estimated resemblance is at least
//! [`NEAR_DUPLICATE_RESEMBLANCE`] = 0.5. Copies of an article that differ in a date line, an
//! ad or navigation block and an edited sentence keep most of their 3-word shingles, while
//! distinct articles, on one topic or of one template, share few. Measured on the 104 articles
//! of tests/extraction, whole and cut to their first 90 words (tests/near_duplicates.rs): the
//! lowest resemblance of such a copy pair was 0.600 (104 of 104 grouped), the highest between
//! two distinct articles 0.035 (0 of 5,356 pairs grouped). 0.5 sits between the two, about two
//! standard errors of the estimate below the copies' floor.
//!
//! **Candidates** (LSH banding, Indyk and Motwani 1998; Broder et al.): the sketch is cut into
//! [`BANDS`] bands of [`ROWS`] bytes; texts that agree on a whole band are candidates. A pair of
//! resemblance J is a candidate with probability 1 - (1 - J^4)^32: 0.99 at J = 0.5, 0.9999 at
//! J = 0.7, and 0.05 at J = 0.2; unrelated texts (J = 0) collide in a band only by the 2^-32
//! chance of four equal bytes. Every candidate is then verified on the whole sketch.

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

/// Words per shingle of the resemblance.
pub const SHINGLE_WORDS: usize = 3;
/// Hash functions (and bytes) in a sketch.
pub const SKETCH_LEN: usize = 128;
/// Bytes per LSH band.
pub const ROWS: usize = 4;
/// LSH bands per sketch.
pub const BANDS: usize = SKETCH_LEN / ROWS;
/// The one threshold: texts whose estimated resemblance is at least this are near-duplicates.
pub const NEAR_DUPLICATE_RESEMBLANCE: f64 = 0.5;

/// A b-bit minhash sketch of a text (see the module docs). Empty for a text without words.
/// Shared, not copied, by its clones: the engine holds a content's sketch in the record of each
/// URL that serves it and in its index of distinct contents (a state loaded from the store
/// reads one copy per record; the index shares the copy of one of them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Sketch(pub Arc<[u8]>);

impl Sketch {
    /// The sketch of `text`.
    pub fn of(text: &str) -> Sketch {
        let mut lower = String::new();
        let words: Vec<u64> = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(|w| word_hash(w, &mut lower))
            .collect();
        if words.is_empty() {
            return Sketch::default();
        }
        let mut minima = [u64::MAX; SKETCH_LEN];
        let mut filled = [false; SKETCH_LEN];
        let mut add = |shingle: u64| {
            let h = mix(shingle);
            let bin = bin_of(h);
            if !filled[bin] || h < minima[bin] {
                minima[bin] = h;
                filled[bin] = true;
            }
        };
        if words.len() <= SHINGLE_WORDS {
            add(combine(&words));
        } else {
            words.windows(SHINGLE_WORDS).map(combine).for_each(add);
        }
        // Optimal densification: an empty bin takes the minimum of the first non-empty bin in
        // its own fixed sequence (at least one bin is filled, so the search ends).
        let mut sketch = [0u8; SKETCH_LEN];
        for (bin, byte) in sketch.iter_mut().enumerate() {
            let mut source = bin;
            let mut attempt = 0u64;
            while !filled[source] {
                attempt += 1;
                source = bin_of(mix(SEEDS[bin].wrapping_add(attempt)));
            }
            // Each bin keeps 8 bits of its own hash of the minimum it holds: two texts agree
            // on a bin when their minima there are one shingle (or by the 1/256 chance), and a
            // text that filled few bins does not repeat one byte across all of them.
            *byte = mix(minima[source] ^ SEEDS[bin]) as u8;
        }
        Sketch(Arc::from(&sketch[..]))
    }

    /// Whether the text had no words.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The estimated resemblance of the two texts, in [0, 1]; 0 when either is empty or the
    /// sketches are of different lengths (e.g. one from an older format).
    pub fn resemblance(&self, other: &Sketch) -> f64 {
        if self.0.len() != SKETCH_LEN || other.0.len() != SKETCH_LEN {
            return 0.0;
        }
        let equal = self
            .0
            .iter()
            .zip(other.0.iter())
            .filter(|(a, b)| a == b)
            .count();
        let m = equal as f64 / SKETCH_LEN as f64;
        let chance = 1.0 / 256.0;
        ((m - chance) / (1.0 - chance)).clamp(0.0, 1.0)
    }

    /// Whether the two texts are near-duplicates: resemblance at least
    /// [`NEAR_DUPLICATE_RESEMBLANCE`].
    pub fn is_near_duplicate(&self, other: &Sketch) -> bool {
        self.resemblance(other) >= NEAR_DUPLICATE_RESEMBLANCE
    }

    fn band(&self, b: usize) -> u32 {
        let bytes = &self.0[b * ROWS..(b + 1) * ROWS];
        u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
    }
}

/// The seeds of the bins' densification sequences: fixed, so sketches stay comparable across
/// runs.
const SEEDS: [u64; SKETCH_LEN] = {
    let mut seeds = [0u64; SKETCH_LEN];
    let mut state = 0x0005_EED0_FF5E_54E7_u64;
    let mut i = 0;
    while i < SKETCH_LEN {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        seeds[i] = mix(state);
        i += 1;
    }
    seeds
};

/// log2 of [`SKETCH_LEN`]: the bits of a hash that pick its bin.
const BIN_BITS: u32 = SKETCH_LEN.trailing_zeros();
const _: () = assert!(1 << BIN_BITS == SKETCH_LEN);

/// The bin of a shingle's hash: its top bits (the low bits are the ones a sketch keeps).
fn bin_of(hash: u64) -> usize {
    (hash >> (64 - BIN_BITS)) as usize
}

/// The hash of a word, lower-cased (ASCII words through `buffer`, without an allocation each).
fn word_hash(word: &str, buffer: &mut String) -> u64 {
    if word.is_ascii() {
        buffer.clear();
        buffer.push_str(word);
        buffer.make_ascii_lowercase();
        xxh3_64(buffer.as_bytes())
    } else {
        xxh3_64(word.to_lowercase().as_bytes())
    }
}

/// splitmix64's finaliser.
const fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn combine(words: &[u64]) -> u64 {
    mix(words
        .iter()
        .fold(0x243F_6A88_85A3_08D3u64, |acc, &w| acc.rotate_left(29) ^ w))
}

/// An LSH index of sketches by id: finds the ids that share a band with a query.
///
/// Nearly every band value belongs to one text (unrelated texts share four bytes by a 2^-32
/// chance), so each band keeps a value's only id in a plain map, and moves the ids to a list
/// only when a second text shares the value: a list per band and text (its own heap
/// allocation, at least four ids long) made this index about 3 KB per page checked, ten
/// times what the scheduler keeps per URL known.
///
/// The bands hold a 4-byte number per id, not the 8-byte id: with [`BANDS`] entries per text,
/// the ids' 64 bits were 900 bytes a page checked in `heaptrack` (`freshet bench --only run
/// --pages 20000`: 17.9 MB of the dedup engine's 55 MB for 20,500 pages); the numbers and the
/// table between them and the ids cost about 40 to 70 bytes a text (padding and spare room).
#[derive(Debug, Clone)]
pub struct LshIndex {
    /// One table per band.
    bands: Vec<Band>,
    /// Each number's id and how many band entries hold it (0: free, listed in `free`).
    numbered: Vec<(u64, u32)>,
    /// The number of each id held.
    number_of: HashMap<u64, u32>,
    /// Numbers free for reuse.
    free: Vec<u32>,
}

/// One band's table: band value -> numbers of ids.
#[derive(Debug, Clone, Default)]
struct Band {
    /// Values held by one id.
    single: HashMap<u32, u32>,
    /// Values held by several ids (each listed once).
    shared: HashMap<u32, Vec<u32>>,
}

impl Band {
    /// Adds `n` under `key`; whether it was not there yet.
    fn insert(&mut self, key: u32, n: u32) -> bool {
        if let Some(ns) = self.shared.get_mut(&key) {
            if ns.contains(&n) {
                return false;
            }
            ns.push(n);
            return true;
        }
        match self.single.get(&key) {
            None => {
                self.single.insert(key, n);
                true
            }
            Some(&other) if other != n => {
                self.single.remove(&key);
                self.shared.insert(key, vec![other, n]);
                true
            }
            Some(_) => false,
        }
    }

    /// Takes `n` out of `key`; whether it was there.
    fn remove(&mut self, key: u32, n: u32) -> bool {
        if self.single.get(&key) == Some(&n) {
            self.single.remove(&key);
            return true;
        }
        let Some(ns) = self.shared.get_mut(&key) else {
            return false;
        };
        let before = ns.len();
        ns.retain(|&x| x != n);
        let removed = ns.len() < before;
        match ns.as_slice() {
            [] => {
                self.shared.remove(&key);
            }
            &[last] => {
                self.shared.remove(&key);
                self.single.insert(key, last);
            }
            _ => {}
        }
        removed
    }

    fn numbers(&self, key: u32) -> &[u32] {
        match self.single.get(&key) {
            Some(n) => std::slice::from_ref(n),
            None => self.shared.get(&key).map_or(&[], Vec::as_slice),
        }
    }
}

impl Default for LshIndex {
    fn default() -> Self {
        Self::new()
    }
}

impl LshIndex {
    /// An empty index.
    pub fn new() -> Self {
        LshIndex {
            bands: vec![Band::default(); BANDS],
            numbered: Vec::new(),
            number_of: HashMap::new(),
            free: Vec::new(),
        }
    }

    /// Stores `id` under `sketch` (an empty sketch is not stored).
    pub fn insert(&mut self, sketch: &Sketch, id: u64) {
        if sketch.0.len() != SKETCH_LEN {
            return;
        }
        let n = match self.number_of.get(&id) {
            Some(&n) => n,
            None => {
                let n = match self.free.pop() {
                    Some(n) => {
                        self.numbered[n as usize] = (id, 0);
                        n
                    }
                    None => {
                        self.numbered.push((id, 0));
                        u32::try_from(self.numbered.len() - 1).expect("fewer than 2^32 texts")
                    }
                };
                self.number_of.insert(id, n);
                n
            }
        };
        for (b, band) in self.bands.iter_mut().enumerate() {
            if band.insert(sketch.band(b), n) {
                self.numbered[n as usize].1 += 1;
            }
        }
    }

    /// Removes `id` stored under `sketch`.
    pub fn remove(&mut self, sketch: &Sketch, id: u64) {
        if sketch.0.len() != SKETCH_LEN {
            return;
        }
        let Some(&n) = self.number_of.get(&id) else {
            return;
        };
        for (b, band) in self.bands.iter_mut().enumerate() {
            if band.remove(sketch.band(b), n) {
                self.numbered[n as usize].1 -= 1;
            }
        }
        if self.numbered[n as usize].1 == 0 {
            self.number_of.remove(&id);
            self.free.push(n);
        }
    }

    /// The ids sharing at least one band with `sketch`, each once, ascending.
    pub fn candidates(&self, sketch: &Sketch) -> Vec<u64> {
        if sketch.0.len() != SKETCH_LEN {
            return Vec::new();
        }
        let mut out: Vec<u64> = self
            .bands
            .iter()
            .enumerate()
            .flat_map(|(b, band)| band.numbers(sketch.band(b)))
            .map(|&n| self.numbered[n as usize].0)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(seed: u64, n: usize) -> String {
        (0..n)
            .map(|i| format!("w{}", mix(seed * 1000 + i as u64) % 5000))
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn resemblance_tracks_the_shingle_jaccard() {
        let text = words(1, 400);
        assert_eq!(Sketch::of(&text).resemblance(&Sketch::of(&text)), 1.0);
        // Replace every 10th word: each change touches 3 shingles, about half survive... in
        // a text of 400 shingles, 40 changed words break ~120: J ≈ 280 / 520 ≈ 0.54.
        let edited: String = text
            .split(' ')
            .enumerate()
            .map(|(i, w)| if i % 10 == 5 { "changed" } else { w })
            .collect::<Vec<_>>()
            .join(" ");
        let r = Sketch::of(&text).resemblance(&Sketch::of(&edited));
        assert!((0.4..0.7).contains(&r), "{r}");
        let other = words(2, 400);
        assert!(Sketch::of(&text).resemblance(&Sketch::of(&other)) < 0.1);
        assert_eq!(Sketch::of("").resemblance(&Sketch::of(&text)), 0.0);
        assert!(Sketch::of("").is_empty());
        assert_eq!(Sketch::of(&text).0.len(), SKETCH_LEN);
    }

    /// The exact Jaccard index of two texts' shingle sets.
    fn shingle_jaccard(a: &str, b: &str) -> f64 {
        let set = |t: &str| {
            let w: Vec<&str> = t.split(' ').collect();
            w.windows(SHINGLE_WORDS)
                .map(|s| s.join(" "))
                .collect::<std::collections::HashSet<_>>()
        };
        let (a, b) = (set(a), set(b));
        a.intersection(&b).count() as f64 / a.union(&b).count() as f64
    }

    #[test]
    fn the_estimate_is_unbiased_for_short_and_long_texts() {
        // Short texts fill few of the 128 bins (densification fills the rest), long ones all.
        for (n, pairs) in [(12, 400), (40, 300), (2_000, 30)] {
            let (mut truth, mut estimate) = (0.0, 0.0);
            for seed in 0..pairs {
                let text = words(10_000 + seed, n);
                let every = 2 + (seed as usize % 9);
                let edited: String = text
                    .split(' ')
                    .enumerate()
                    .map(|(i, w)| if i % every == 1 { "changed" } else { w })
                    .collect::<Vec<_>>()
                    .join(" ");
                truth += shingle_jaccard(&text, &edited);
                estimate += Sketch::of(&text).resemblance(&Sketch::of(&edited));
            }
            let (truth, estimate) = (truth / pairs as f64, estimate / pairs as f64);
            eprintln!("{n} words: mean estimate {estimate:.4}, mean Jaccard {truth:.4}");
            assert!(
                (estimate - truth).abs() < 0.03,
                "{n} words: mean estimate {estimate:.3}, mean Jaccard {truth:.3}"
            );
        }
        // A one-word text fills one bin and every other bin borrows it, yet two different short
        // texts agree only by chance on each byte, not on all of them at once.
        let one = Sketch::of("river");
        assert_eq!(one.0.len(), SKETCH_LEN);
        assert_eq!(one.resemblance(&Sketch::of("River!")), 1.0);
        let short: Vec<Sketch> = (0..300)
            .map(|i| Sketch::of(&format!("page {i} gone")))
            .collect();
        let mut highest = 0.0f64;
        for (i, a) in short.iter().enumerate() {
            for b in &short[i + 1..] {
                highest = highest.max(a.resemblance(b));
            }
        }
        assert!(
            highest < NEAR_DUPLICATE_RESEMBLANCE,
            "two different one-shingle texts look alike: {highest}"
        );
    }

    #[test]
    fn sketch_is_case_and_punctuation_insensitive() {
        assert_eq!(Sketch::of("The River, rose!"), Sketch::of("the river rose"));
    }

    #[test]
    fn lsh_finds_near_copies_and_not_strangers() {
        let mut index = LshIndex::new();
        let base = words(3, 200);
        index.insert(&Sketch::of(&base), 1);
        index.insert(&Sketch::of(&words(4, 200)), 2);
        let copy = format!("Updated 13 November 2025 {base} advertisement buy now");
        assert_eq!(index.candidates(&Sketch::of(&copy)), vec![1]);
        index.remove(&Sketch::of(&base), 1);
        assert!(index.candidates(&Sketch::of(&copy)).is_empty());
    }

    #[test]
    fn lsh_answers_as_a_scan_of_the_ids_held_whatever_came_and_went() {
        // Ids 0..24 on six texts (some texts shared, two of them near copies), inserted and
        // removed at random: the candidates of each text are the ids held whose text shares
        // a band with it, as a scan over them would find.
        let base = words(20, 120);
        let near = format!("{base} and a few words more");
        let texts: Vec<Sketch> = [base.clone(), near, words(21, 120), words(22, 5), base]
            .iter()
            .map(|t| Sketch::of(t))
            .chain([Sketch::of("")])
            .collect();
        let text_of = |id: u64| &texts[(id % 6) as usize];
        let mut index = LshIndex::new();
        let mut held = std::collections::BTreeSet::new();
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..2_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let id = seed % 24;
            if seed >> 40 & 1 == 0 {
                index.insert(text_of(id), id);
                if !text_of(id).is_empty() {
                    held.insert(id);
                }
            } else {
                index.remove(text_of(id), id);
                held.remove(&id);
            }
            let query = &texts[(seed >> 20) as usize % texts.len()];
            let expected: Vec<u64> = held
                .iter()
                .copied()
                .filter(|&other| {
                    !query.is_empty() && (0..BANDS).any(|b| text_of(other).band(b) == query.band(b))
                })
                .collect();
            assert_eq!(index.candidates(query), expected);
        }
        assert_eq!(index.number_of.len(), held.len());
    }

    #[test]
    fn lsh_keeps_every_id_of_a_shared_text_until_each_is_removed() {
        // Identical texts share every band: the ids move from a band's single slot to a shared
        // list and back as they come and go, and each is listed once.
        let mut index = LshIndex::default();
        let text = Sketch::of(&words(5, 150));
        let other = Sketch::of(&words(6, 150));
        for id in [7, 3, 7, 9] {
            index.insert(&text, id);
        }
        index.insert(&other, 11);
        assert_eq!(index.candidates(&text), vec![3, 7, 9]);
        index.remove(&text, 7);
        index.remove(&text, 42);
        assert_eq!(index.candidates(&text), vec![3, 9]);
        index.remove(&text, 3);
        assert_eq!(index.candidates(&text), vec![9]);
        index.insert(&text, 9);
        assert_eq!(index.candidates(&text), vec![9]);
        index.remove(&text, 9);
        assert!(index.candidates(&text).is_empty());
        assert_eq!(index.candidates(&other), vec![11]);
        assert!(
            index
                .bands
                .iter()
                .all(|band| band.shared.is_empty() && band.single.len() == 1)
        );
        // Only 11 holds a number; the others' were freed, and are given again.
        assert_eq!(index.number_of.len(), 1);
        assert_eq!(index.numbered.len() - index.free.len(), 1);
        index.insert(&text, 12);
        assert_eq!(index.numbered.len(), 4, "a freed number is reused");
        assert_eq!(index.candidates(&text), vec![12]);
        assert_eq!(index.candidates(&other), vec![11]);
    }
}
