//! The `dedup` part of `freshet bench`: content-fingerprint, simhash and main-text extraction
//! throughput (MB/s) on synthetic pages, and near-duplicate lookup among N simhashes through the
//! permuted-table index (each lookup timed alone), against a linear scan; then the resemblance
//! sketches' LSH index over at most [`MAX_SKETCHES`] pages: the resident memory it takes per
//! page and its candidate lookup. It measures wall time (`std::time::Instant`), which is what a
//! benchmark is for; nothing here is asserted.

use std::hint::black_box;
use std::time::Instant;

use super::bench_figures::{Figures, status_bytes};
use crate::dedup::extract::extract_html;
use crate::dedup::fingerprint::{DEFAULT_SHINGLE_WORDS, content_fingerprint, hamming, simhash};
use crate::dedup::near::NearIndex;
use crate::dedup::resemblance::{LshIndex, SKETCH_LEN, Sketch};
use crate::dedup::urlnorm::UrlRules;

/// Lookups timed (half planted near copies, half random).
const QUERIES: usize = 10_000;
/// Linear scans timed for comparison.
const SCANS: usize = 100;
/// Near-duplicate distance k.
const DISTANCE: u32 = 3;
/// The most pages whose resemblance sketches are indexed (every checked page has one: the index
/// grows with the pages checked, not with the URLs known).
const MAX_SKETCHES: usize = 1_000_000;
/// Synthetic text fingerprinted: 160 bytes per URL, between 1 and 16 MB.
const TEXT_BYTES_PER_URL: usize = 160;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

fn synthetic_pages(rng: &mut Rng, total_bytes: usize) -> Vec<String> {
    const SYLLABLES: &[&str] = &[
        "ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "bri", "dal", "fen", "gor", "hul", "jin",
        "mar", "pol", "quen", "ros", "tis", "wen",
    ];
    let vocabulary: Vec<String> = (0..5000)
        .map(|_| {
            let n = 1 + rng.next() % 3;
            (0..n)
                .map(|_| SYLLABLES[(rng.next() % SYLLABLES.len() as u64) as usize])
                .collect()
        })
        .collect();
    let mut pages = Vec::new();
    let mut size = 0;
    while size < total_bytes {
        let mut page = String::with_capacity(8 * 1024);
        while page.len() < 8 * 1024 {
            page.push_str(&vocabulary[(rng.next() % vocabulary.len() as u64) as usize]);
            page.push(if rng.next().is_multiple_of(12) {
                '\n'
            } else {
                ' '
            });
        }
        size += page.len();
        pages.push(page);
    }
    pages
}

fn as_html(text: &str) -> String {
    let mut html = String::from(
        "<html><head><title>t</title></head><body><nav><a href='/'>Home</a> <a href='/a'>A</a>\
         </nav><div class='sidebar'><a href='/x'>x</a></div><article>",
    );
    for para in text.lines() {
        html.push_str("<p>");
        html.push_str(para);
        html.push_str("</p>");
    }
    html.push_str("</article><footer>(c) example</footer></body></html>");
    html
}

fn mb_per_s(bytes: usize, seconds: f64) -> f64 {
    bytes as f64 / 1e6 / seconds.max(1e-9)
}

/// Runs the dedup part with `simhashes` fingerprints in the near-duplicate index.
pub fn run(simhashes: usize) -> Figures {
    let mut rng = Rng(42);
    let text_bytes = (simhashes.saturating_mul(TEXT_BYTES_PER_URL)).clamp(1_000_000, 16_000_000);
    let pages = synthetic_pages(&mut rng, text_bytes);
    let bytes: usize = pages.iter().map(String::len).sum();

    let start = Instant::now();
    for p in &pages {
        black_box(content_fingerprint(p));
    }
    let content_fp_mb_s = mb_per_s(bytes, start.elapsed().as_secs_f64());

    let start = Instant::now();
    for p in &pages {
        black_box(simhash(p, DEFAULT_SHINGLE_WORDS));
    }
    let simhash_mb_s = mb_per_s(bytes, start.elapsed().as_secs_f64());

    let html: Vec<String> = pages
        .iter()
        .take(pages.len() / 4 + 1)
        .map(|p| as_html(p))
        .collect();
    let html_bytes: usize = html.iter().map(String::len).sum();
    let rules = UrlRules::default();
    let start = Instant::now();
    for h in &html {
        black_box(extract_html(h, None, &rules));
    }
    let extract_mb_s = mb_per_s(html_bytes, start.elapsed().as_secs_f64());
    drop((pages, html));

    let stored: Vec<u64> = (0..simhashes).map(|_| rng.next()).collect();
    let mut index = NearIndex::new(DISTANCE);
    let start = Instant::now();
    for (id, &fp) in stored.iter().enumerate() {
        index.insert(fp, id as u64);
    }
    let index_build_s = start.elapsed().as_secs_f64();

    let k = index.distance();
    let queries: Vec<(u64, bool)> = (0..QUERIES)
        .map(|i| {
            if i.is_multiple_of(2) {
                let base = stored[(rng.next() % stored.len() as u64) as usize];
                let flips = rng.next() % (u64::from(k) + 1);
                let near = (0..flips).fold(base, |fp, _| fp ^ 1 << (rng.next() % 64));
                (near, true)
            } else {
                (rng.next(), false)
            }
        })
        .collect();
    let (mut found, mut planted) = (0, 0);
    let mut latencies = Vec::with_capacity(queries.len());
    for &(q, is_planted) in &queries {
        let start = Instant::now();
        let mut any = false;
        index.for_each_match(q, |_, _| any = true);
        latencies.push(start.elapsed().as_secs_f64() * 1e3);
        if is_planted {
            planted += 1;
            found += usize::from(any);
        }
    }
    latencies.sort_by(f64::total_cmp);
    let lookup_ms = latencies.iter().sum::<f64>() / latencies.len() as f64;
    let lookup_p99_ms = latencies[latencies.len() * 99 / 100];

    let start = Instant::now();
    for &(q, _) in &queries[..SCANS] {
        black_box(stored.iter().filter(|&&fp| hamming(fp, q) <= k).count());
    }
    let scan_ms = start.elapsed().as_secs_f64() * 1e3 / SCANS as f64;

    drop((index, stored));
    let mut figures = vec![
        ("urls", simhashes as f64),
        ("near_lookup_ms", lookup_ms),
        ("near_lookup_p99_ms", lookup_p99_ms),
        ("linear_scan_ms", scan_ms),
        ("near_distance_bits", f64::from(k)),
        (
            "planted_near_copies_found_share",
            found as f64 / planted.max(1) as f64,
        ),
        ("index_build_seconds", index_build_s),
        ("text_bytes", bytes as f64),
        ("content_fingerprint_mb_per_second", content_fp_mb_s),
        ("simhash_mb_per_second", simhash_mb_s),
        ("html_bytes", html_bytes as f64),
        ("extract_mb_per_second", extract_mb_s),
    ];
    figures.extend(resemblance_index(&mut rng, simhashes.min(MAX_SKETCHES)));
    figures
}

/// The LSH index of `pages` random resemblance sketches: resident memory per page (what
/// building it added to the process's), and the candidates of a sketch, timed alone, half of
/// them near copies of a stored one (a quarter of its bytes changed: resemblance about 0.75).
fn resemblance_index(rng: &mut Rng, pages: usize) -> Figures {
    let random_sketch = |rng: &mut Rng| Sketch((0..SKETCH_LEN).map(|_| rng.next() as u8).collect());
    let sketches: Vec<Sketch> = (0..pages).map(|_| random_sketch(rng)).collect();
    let before = status_bytes("VmRSS").unwrap_or(0);
    let start = Instant::now();
    let mut index = LshIndex::new();
    for (id, sketch) in sketches.iter().enumerate() {
        index.insert(sketch, id as u64);
    }
    let build_s = start.elapsed().as_secs_f64();
    let grown = status_bytes("VmRSS").unwrap_or(0).saturating_sub(before);
    let queries: Vec<(Sketch, Option<u64>)> = (0..QUERIES.min(2 * pages))
        .map(|i| {
            if i.is_multiple_of(2) {
                let id = (rng.next() % pages as u64) as usize;
                let near: Vec<u8> = sketches[id]
                    .0
                    .iter()
                    .map(|&byte| {
                        if rng.next().is_multiple_of(4) {
                            byte.wrapping_add(1)
                        } else {
                            byte
                        }
                    })
                    .collect();
                (Sketch(near.into()), Some(id as u64))
            } else {
                (random_sketch(rng), None)
            }
        })
        .collect();
    let (mut found, mut planted) = (0usize, 0usize);
    let mut latencies = Vec::with_capacity(queries.len());
    for (query, source) in &queries {
        let start = Instant::now();
        let candidates = black_box(index.candidates(query));
        latencies.push(start.elapsed().as_secs_f64() * 1e3);
        if let Some(id) = source {
            planted += 1;
            found += usize::from(candidates.contains(id));
        }
    }
    let mean_ms = latencies.iter().sum::<f64>() / latencies.len().max(1) as f64;
    vec![
        ("resemblance_pages", pages as f64),
        (
            "resemblance_index_bytes_per_page",
            grown as f64 / pages.max(1) as f64,
        ),
        ("resemblance_index_build_seconds", build_s),
        ("resemblance_lookup_ms", mean_ms),
        (
            "resemblance_near_copies_found_share",
            found as f64 / planted.max(1) as f64,
        ),
    ]
}
