//! Verified near-duplicates: the resemblance of two main texts (Broder, "On the resemblance and
//! containment of documents", 1997), estimated from a compact sketch, and an LSH index that finds
//! the candidates worth verifying without a scan.
//!
//! **Resemblance.** A text is cut into words (as for the simhash: alphanumeric runs, lower-cased)
//! and its shingles are the runs of [`SHINGLE_WORDS`] consecutive words. The resemblance of two
//! texts is the Jaccard index of their shingle sets, |A ∩ B| / |A ∪ B|.
//!
//! **Sketch** (b-bit minwise hashing, Li and König, "b-Bit minwise hashing", WWW 2010): for each
//! of [`SKETCH_LEN`] hash functions h_i, the minimum of h_i over the shingles; only its low 8
//! bits are kept, so a sketch is 128 bytes whatever the page's length. For one function,
//! P[min h_i(A) = min h_i(B)] = J; two different minima still agree on 8 bits with probability
//! 1/256, so J is estimated as (m - 1/256) / (1 - 1/256) where m is the share of equal bytes.
//! With 128 functions the estimate's standard error is at most about 0.045.
//!
//! **Threshold.** Two texts are near-duplicates when the estimated resemblance is at least
//! [`NEAR_DUPLICATE_RESEMBLANCE`] = 0.5. Copies of an article that differ in a date line, an
//! ad or navigation block and an edited sentence keep most of their 3-word shingles, while
//! distinct articles, on one topic or of one template, share few. Measured on the 104 articles
//! of tests/extraction, whole and cut to their first 90 words (tests/near_duplicates.rs): the
//! lowest resemblance of such a copy pair was 0.584 (104 of 104 grouped), the highest between
//! two distinct articles 0.043 (0 of 5,356 pairs grouped). 0.5 sits between the two, about two
//! standard errors of the estimate below the copies' floor.
//!
//! **Candidates** (LSH banding, Indyk and Motwani 1998; Broder et al.): the sketch is cut into
//! [`BANDS`] bands of [`ROWS`] bytes; texts that agree on a whole band are candidates. A pair of
//! resemblance J is a candidate with probability 1 - (1 - J^4)^32: 0.99 at J = 0.5, 0.9999 at
//! J = 0.7, and 0.05 at J = 0.2; unrelated texts (J = 0) collide in a band only by the 2^-32
//! chance of four equal bytes. Every candidate is then verified on the whole sketch.

use std::collections::HashMap;

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
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Sketch(pub Vec<u8>);

impl Sketch {
    /// The sketch of `text`.
    pub fn of(text: &str) -> Sketch {
        let words: Vec<u64> = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(|w| xxh3_64(w.to_lowercase().as_bytes()))
            .collect();
        if words.is_empty() {
            return Sketch::default();
        }
        let shingles: Vec<u64> = if words.len() <= SHINGLE_WORDS {
            vec![combine(&words)]
        } else {
            words.windows(SHINGLE_WORDS).map(combine).collect()
        };
        let mut minima = [u64::MAX; SKETCH_LEN];
        for &s in &shingles {
            for (i, min) in minima.iter_mut().enumerate() {
                // h_i(s): one well-mixed hash per function, seeded by its index.
                let h = mix(s ^ SEEDS[i]);
                if h < *min {
                    *min = h;
                }
            }
        }
        Sketch(minima.iter().map(|&m| m as u8).collect())
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
        let equal = self.0.iter().zip(&other.0).filter(|(a, b)| a == b).count();
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

/// The seeds of the hash functions: fixed, so sketches stay comparable across runs.
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
#[derive(Debug, Clone, Default)]
pub struct LshIndex {
    /// One table per band: band value -> ids.
    tables: Vec<HashMap<u32, Vec<u64>>>,
}

impl LshIndex {
    /// An empty index.
    pub fn new() -> Self {
        LshIndex {
            tables: vec![HashMap::new(); BANDS],
        }
    }

    /// Stores `id` under `sketch` (an empty sketch is not stored).
    pub fn insert(&mut self, sketch: &Sketch, id: u64) {
        if sketch.0.len() != SKETCH_LEN {
            return;
        }
        for (b, table) in self.tables.iter_mut().enumerate() {
            let bucket = table.entry(sketch.band(b)).or_default();
            if !bucket.contains(&id) {
                bucket.push(id);
            }
        }
    }

    /// Removes `id` stored under `sketch`.
    pub fn remove(&mut self, sketch: &Sketch, id: u64) {
        if sketch.0.len() != SKETCH_LEN {
            return;
        }
        for (b, table) in self.tables.iter_mut().enumerate() {
            let key = sketch.band(b);
            if let Some(bucket) = table.get_mut(&key) {
                bucket.retain(|&x| x != id);
                if bucket.is_empty() {
                    table.remove(&key);
                }
            }
        }
    }

    /// The ids sharing at least one band with `sketch`, each once, ascending.
    pub fn candidates(&self, sketch: &Sketch) -> Vec<u64> {
        if sketch.0.len() != SKETCH_LEN {
            return Vec::new();
        }
        let mut out: Vec<u64> = self
            .tables
            .iter()
            .enumerate()
            .filter_map(|(b, table)| table.get(&sketch.band(b)))
            .flatten()
            .copied()
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
}
