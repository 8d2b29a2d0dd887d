//! Content fingerprints: an exact 64-bit hash and a 64-bit simhash of a page's main text.
//!
//! - **Exact**: xxh3 of the text with case folded and every run of whitespace made one space, so
//!   re-indented or re-wrapped copies of a page still match.
//! - **Simhash** (Charikar, "Similarity estimation techniques from rounding algorithms", STOC 2002;
//!   used for web pages by Manku, Jain and Das Sarma, WWW 2007): the text is cut into words
//!   (alphanumeric runs, lower-cased), the features are the shingles of `w` consecutive words, each
//!   hashed to 64 bits. For every bit position, add 1 for each feature whose hash has the bit set
//!   and subtract 1 otherwise; the fingerprint's bit is 1 where the sum is positive. Two texts whose
//!   feature sets have cosine similarity s differ in about 64·arccos(s)/π bits, so near-duplicates
//!   are fingerprints at a small Hamming distance.

use xxhash_rust::xxh3::xxh3_64;

/// The default shingle size in words.
pub const DEFAULT_SHINGLE_WORDS: usize = 2;

/// Case-folds `text` and collapses whitespace runs into single spaces (trimmed at both ends).
pub fn normalize_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        if word.is_ascii() {
            let start = out.len();
            out.push_str(word);
            out[start..].make_ascii_lowercase();
        } else {
            out.extend(word.chars().flat_map(char::to_lowercase));
        }
    }
    out
}

/// The exact content fingerprint: xxh3 of [`normalize_text`].
pub fn content_fingerprint(text: &str) -> u64 {
    xxh3_64(normalize_text(text).as_bytes())
}

/// The 64-bit simhash of `text` over shingles of `shingle_words` words (at least 1).
///
/// A text with fewer words than a shingle is one feature; an empty text has simhash 0.
pub fn simhash(text: &str, shingle_words: usize) -> u64 {
    let shingle_words = shingle_words.max(1);
    let mut lowered = String::new();
    let words: Vec<u64> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            if w.bytes().any(|b| b.is_ascii_uppercase() || b >= 0x80) {
                lowered.clear();
                lowered.extend(w.chars().flat_map(char::to_lowercase));
                xxh3_64(lowered.as_bytes())
            } else {
                xxh3_64(w.as_bytes())
            }
        })
        .collect();
    if words.is_empty() {
        return 0;
    }
    // Count set bits per position; the sum of ±1 is positive iff the count exceeds half.
    let mut ones = [0u32; 64];
    let mut features = 0u32;
    let mut add = |feature: u64| {
        features += 1;
        for (bit, count) in ones.iter_mut().enumerate() {
            *count += (feature >> bit & 1) as u32;
        }
    };
    if words.len() <= shingle_words {
        add(shingle_hash(&words));
    } else {
        for window in words.windows(shingle_words) {
            add(shingle_hash(window));
        }
    }
    ones.iter().enumerate().fold(0u64, |fp, (bit, &count)| {
        if 2 * count > features {
            fp | 1 << bit
        } else {
            fp
        }
    })
}

/// Combines word hashes into one well-mixed 64-bit feature hash (order matters).
fn shingle_hash(words: &[u64]) -> u64 {
    let combined = words
        .iter()
        .fold(0x9E37_79B9_7F4A_7C15u64, |acc, &w| acc.rotate_left(23) ^ w);
    // splitmix64's finaliser: every input bit affects every output bit.
    let mut z = combined;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The number of bits in which two fingerprints differ.
pub fn hamming(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "The quick brown fox jumps over the lazy dog while the farmer sleeps \
        under an old oak tree at the edge of the meadow, dreaming of rain and a good harvest \
        before the first frost of autumn arrives in the valley below the hills.";

    #[test]
    fn exact_fingerprint_ignores_case_and_whitespace_only() {
        let reflowed = TEXT.to_uppercase().replace(' ', "\n  ");
        assert_eq!(content_fingerprint(TEXT), content_fingerprint(&reflowed));
        assert_ne!(
            content_fingerprint(TEXT),
            content_fingerprint(&TEXT.replace("fox", "cat"))
        );
    }

    #[test]
    fn simhash_is_close_for_small_edits_and_far_for_other_text() {
        let edited = TEXT.replace("lazy", "sleepy");
        let other = "Quarterly results exceeded analyst expectations as revenue from cloud \
            services grew faster than hardware sales, lifting the shares in early trading.";
        let near = hamming(simhash(TEXT, 2), simhash(&edited, 2));
        let far = hamming(simhash(TEXT, 2), simhash(other, 2));
        assert!(near < far, "near {near} far {far}");
        assert!(far > 16, "far {far}");
    }

    #[test]
    fn simhash_is_deterministic_and_case_insensitive() {
        assert_eq!(simhash(TEXT, 3), simhash(&TEXT.to_uppercase(), 3));
        assert_eq!(simhash("", 3), 0);
        assert_ne!(simhash("one", 3), 0);
    }

    #[test]
    fn hamming_counts_bits() {
        assert_eq!(hamming(0b1011, 0b0001), 2);
        assert_eq!(hamming(u64::MAX, 0), 64);
    }
}
