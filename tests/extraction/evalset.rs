//! The extraction evaluation set (tests/extraction/pages, see its README) and the score used on
//! it; shared by `examples/extract_eval.rs` and the tests through `#[path]`.
//!
//! **Score.** Both texts are cut into tokens: runs of letters and digits, lower-cased, except
//! that every character of a script written without spaces (CJK ideographs, kana, hangul,
//! Thai, Burmese) is a token of its own. With `E` the multiset of expected tokens and `X` that
//! of the extracted ones, `overlap = |E ∩ X|` (multiset intersection), precision =
//! overlap / |X|, recall = overlap / |E|, F1 = 2PR / (P + R). An empty extraction scores
//! P = R = F1 = 0. Set figures are the means over pages (each page counts once).
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// One page of the set.
pub struct Page {
    /// File stem, e.g. `mozilla-bbc-1`.
    pub name: String,
    /// The source HTML (decoded as UTF-8, lossily).
    pub html: String,
    /// The expected main text.
    pub expected: String,
}

/// Precision, recall and F1 of one extraction.
#[derive(Debug, Clone, Copy, Default)]
pub struct Score {
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
}

/// The directory holding the pages.
pub fn pages_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/extraction/pages")
}

/// Loads every page, sorted by name. Panics with the file name on a broken file: the set is
/// part of the repository, so a broken file is a bug to see at once.
pub fn load() -> Vec<Page> {
    let dir = pages_dir();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".txt")
                .map(String::from)
        })
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let gz = dir.join(format!("{name}.html.gz"));
            let mut bytes = Vec::new();
            flate2::read::GzDecoder::new(
                std::fs::File::open(&gz).unwrap_or_else(|e| panic!("{}: {e}", gz.display())),
            )
            .read_to_end(&mut bytes)
            .unwrap_or_else(|e| panic!("{}: {e}", gz.display()));
            let txt = dir.join(format!("{name}.txt"));
            let expected =
                std::fs::read_to_string(&txt).unwrap_or_else(|e| panic!("{}: {e}", txt.display()));
            Page {
                name,
                html: String::from_utf8_lossy(&bytes).into_owned(),
                expected,
            }
        })
        .collect()
}

fn unspaced_script(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0E7F      // Thai
        | 0x1000..=0x109F    // Burmese
        | 0x3040..=0x30FF    // kana
        | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF // CJK ideographs
        | 0xAC00..=0xD7AF) // hangul
}

/// The tokens of `text` (see the module docs).
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        if unspaced_script(c) {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            out.push(c.to_string());
        } else if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        } else if !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// Scores `extracted` against `expected`.
pub fn score(expected: &str, extracted: &str) -> Score {
    let mut want: HashMap<String, usize> = HashMap::new();
    let expected = tokens(expected);
    for t in &expected {
        *want.entry(t.clone()).or_default() += 1;
    }
    let got = tokens(extracted);
    let mut overlap = 0usize;
    for t in &got {
        if let Some(n) = want.get_mut(t)
            && *n > 0
        {
            *n -= 1;
            overlap += 1;
        }
    }
    if got.is_empty() || expected.is_empty() || overlap == 0 {
        return Score::default();
    }
    let precision = overlap as f64 / got.len() as f64;
    let recall = overlap as f64 / expected.len() as f64;
    Score {
        precision,
        recall,
        f1: 2.0 * precision * recall / (precision + recall),
    }
}
