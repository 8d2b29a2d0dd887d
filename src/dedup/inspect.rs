//! Near-duplicate groups among local files: the pure part of `freshet inspect duplicates`, so a
//! user can see what the extraction keeps and tune the distance and shingle size.
//!
//! Each file goes through the same steps as a fetched page (charset, main-text extraction for
//! HTML, exact fingerprint, simhash, resemblance sketch). As in the engine, candidates are the
//! files whose simhash is within distance k ([`NearIndex`]) or that share an LSH band
//! ([`LshIndex`]); a candidate pair is a near-duplicate pair when its verified resemblance
//! reaches [`NEAR_DUPLICATE_RESEMBLANCE`]. Groups are the transitive closure of those pairs, and
//! each pair is reported with its resemblance.

use std::collections::BTreeMap;

use super::charset;
use super::extract::{extract_html, extract_plain};
use super::fingerprint::{content_fingerprint, hamming, simhash};
use super::near::NearIndex;
use super::resemblance::{LshIndex, NEAR_DUPLICATE_RESEMBLANCE, Sketch};
use super::urlnorm::UrlRules;

/// The fingerprints of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileFingerprint {
    /// The name given (usually the path).
    pub name: String,
    /// Exact fingerprint of the main text.
    pub content_fp: u64,
    /// Simhash of the main text.
    pub simhash: u64,
    /// Words in the main text.
    pub words: usize,
    /// Resemblance sketch of the main text.
    pub sketch: Sketch,
}

/// Two files found to be near-duplicates, and how much.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    /// The earlier file (input order).
    pub a: String,
    /// The later file.
    pub b: String,
    /// Their verified resemblance (estimated shingle Jaccard, 0..1).
    pub resemblance: f64,
    /// Their simhash distance (bits).
    pub simhash_distance: u32,
}

/// A group of near-duplicate files.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// File names, in input order.
    pub files: Vec<String>,
    /// Largest simhash distance between two files of the group.
    pub max_distance: u32,
    /// The verified pairs that made the group, in input order.
    pub pairs: Vec<Pair>,
}

/// Fingerprints a file's bytes; HTML when the name ends in `.htm`/`.html`/`.xhtml` or the
/// content starts with `<`, plain text otherwise.
pub fn fingerprint_file(name: &str, bytes: &[u8], shingle_words: usize) -> FileFingerprint {
    let lower = name.to_ascii_lowercase();
    let html = [".htm", ".html", ".xhtml"]
        .iter()
        .any(|e| lower.ends_with(e))
        || bytes
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|&b| b == b'<');
    let decoded = charset::decode(bytes, None);
    let extracted = if html {
        extract_html(&decoded.text, None, &UrlRules::default())
    } else {
        extract_plain(&decoded.text)
    };
    let text = extracted.main_text;
    FileFingerprint {
        name: name.to_string(),
        content_fp: content_fingerprint(&text),
        simhash: simhash(&text, shingle_words),
        words: text.split_whitespace().count(),
        sketch: Sketch::of(&text),
    }
}

/// Groups files by verified near-duplicate pairs (candidates: simhash within `distance` or a
/// shared LSH band); only groups of two or more, ordered by their first file.
pub fn group(files: &[FileFingerprint], distance: u32) -> Vec<Group> {
    let mut index = NearIndex::new(distance);
    let mut lsh = LshIndex::new();
    let mut parent: Vec<usize> = (0..files.len()).collect();
    let mut pairs: Vec<(usize, usize, f64)> = Vec::new();
    for (i, file) in files.iter().enumerate() {
        if file.words == 0 {
            continue;
        }
        let mut candidates: Vec<usize> = lsh
            .candidates(&file.sketch)
            .into_iter()
            .map(|j| j as usize)
            .collect();
        index.for_each_match(file.simhash, |j, _| candidates.push(j as usize));
        candidates.sort_unstable();
        candidates.dedup();
        for j in candidates {
            let r = file.sketch.resemblance(&files[j].sketch);
            if r >= NEAR_DUPLICATE_RESEMBLANCE {
                pairs.push((j, i, r));
                union(&mut parent, i, j);
            }
        }
        index.insert(file.simhash, i as u64);
        lsh.insert(&file.sketch, i as u64);
    }
    let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..files.len() {
        let root = find(&mut parent, i);
        groups.entry(root).or_default().push(i);
    }
    pairs.sort_by_key(|&(a, b, _)| (a, b));
    let mut out: Vec<Group> = groups
        .into_values()
        .filter(|members| members.len() > 1)
        .map(|members| Group {
            max_distance: members
                .iter()
                .flat_map(|&a| members.iter().map(move |&b| (a, b)))
                .map(|(a, b)| hamming(files[a].simhash, files[b].simhash))
                .max()
                .unwrap_or(0),
            files: members.iter().map(|&i| files[i].name.clone()).collect(),
            pairs: pairs
                .iter()
                .filter(|(a, _, _)| members.contains(a))
                .map(|&(a, b, r)| Pair {
                    a: files[a].name.clone(),
                    b: files[b].name.clone(),
                    resemblance: r,
                    simhash_distance: hamming(files[a].simhash, files[b].simhash),
                })
                .collect(),
        })
        .collect();
    out.sort_by_key(|g| {
        files
            .iter()
            .position(|f| f.name == g.files[0])
            .unwrap_or(usize::MAX)
    });
    out
}

/// The groups as `{"groups": [[file, ..], ..], "pairs": [{"a", "b", "resemblance",
/// "simhash_distance"}, ..]}` (the `--json` output; resemblance rounded to 3 decimals).
pub fn groups_json(groups: &[Group]) -> serde_json::Value {
    let files: Vec<&Vec<String>> = groups.iter().map(|g| &g.files).collect();
    let pairs: Vec<serde_json::Value> = groups
        .iter()
        .flat_map(|g| &g.pairs)
        .map(|p| {
            serde_json::json!({
                "a": p.a,
                "b": p.b,
                "resemblance": (p.resemblance * 1000.0).round() / 1000.0,
                "simhash_distance": p.simhash_distance,
            })
        })
        .collect();
    serde_json::json!({ "groups": files, "pairs": pairs })
}

fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

fn union(parent: &mut [usize], a: usize, b: usize) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    // The smaller index is the root, so groups list files in input order.
    let (root, child) = if ra < rb { (ra, rb) } else { (rb, ra) };
    parent[child] = root;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_near_copies_and_leaves_others_alone() {
        let sentence = "Storm clouds gathered over the harbour as fishermen hauled their boats \
            onto the shingle, tying them down against the gale forecast for the night";
        // Long enough that one changed word moves only a few of the 64 bits.
        let text: String = (0..12)
            .map(|i| format!("{sentence} number {i}. "))
            .collect();
        let files = [
            fingerprint_file("a.txt", text.as_bytes(), 2),
            fingerprint_file("b.txt", text.replacen("night", "evening", 1).as_bytes(), 2),
            fingerprint_file(
                "c.txt",
                b"An entirely different note about baking sourdough bread at home.",
                2,
            ),
            fingerprint_file("d.txt", text.to_uppercase().as_bytes(), 2),
            fingerprint_file("empty.txt", b"", 2),
            fingerprint_file("empty2.txt", b"  ", 2),
        ];
        let groups = group(&files, 6);
        assert_eq!(groups.len(), 1, "{groups:?}");
        assert_eq!(groups[0].files, vec!["a.txt", "b.txt", "d.txt"]);
        assert!(groups[0].max_distance <= 6);
        assert!(!groups[0].pairs.is_empty());
        assert!(
            groups[0]
                .pairs
                .iter()
                .all(|p| p.resemblance >= NEAR_DUPLICATE_RESEMBLANCE),
            "{:?}",
            groups[0].pairs
        );
    }
}
