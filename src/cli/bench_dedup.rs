//! The dedup benchmark for `freshet bench`: content-fingerprint, simhash and extraction throughput
//! (MB/s) on synthetic pages, and near-duplicate lookup time among a million simhashes through the
//! permuted-table index, against a linear scan. It measures wall time (`std::time::Instant`), which
//! is what a benchmark is for; nothing here is asserted.

use std::hint::black_box;
use std::io::Write;
use std::time::Instant;

use crate::dedup::extract::extract_html;
use crate::dedup::fingerprint::{DEFAULT_SHINGLE_WORDS, content_fingerprint, hamming, simhash};
use crate::dedup::near::NearIndex;
use crate::dedup::urlnorm::UrlRules;

/// Sizes of the dedup benchmark.
#[derive(Debug, Clone)]
pub struct DedupBenchOptions {
    /// Simhashes stored in the near-duplicate index (default 1,000,000).
    pub fingerprints: usize,
    /// Lookups timed (half planted near copies, half random; default 10,000).
    pub queries: usize,
    /// Megabytes of synthetic text fingerprinted (default 16).
    pub text_mb: usize,
    /// Near-duplicate distance k (default 3).
    pub distance: u32,
    /// Seed of the synthetic data.
    pub seed: u64,
}

impl Default for DedupBenchOptions {
    fn default() -> Self {
        DedupBenchOptions {
            fingerprints: 1_000_000,
            queries: 10_000,
            text_mb: 16,
            distance: 3,
            seed: 42,
        }
    }
}

/// The measured figures.
#[derive(Debug, Clone, Default)]
pub struct DedupBenchFigures {
    /// Exact content fingerprint throughput, MB/s of text.
    pub content_fp_mb_s: f64,
    /// Simhash throughput, MB/s of text.
    pub simhash_mb_s: f64,
    /// Main-text extraction throughput, MB/s of HTML.
    pub extract_mb_s: f64,
    /// Seconds to insert all fingerprints into the index.
    pub index_build_s: f64,
    /// Mean microseconds per indexed lookup.
    pub lookup_us: f64,
    /// Mean microseconds per linear-scan lookup (for comparison).
    pub scan_us: f64,
    /// Planted near copies found / planted.
    pub planted_found: (usize, usize),
}

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

/// Runs the dedup benchmark and prints its figures to `out`.
pub fn run_dedup_bench(
    options: &DedupBenchOptions,
    out: &mut dyn Write,
) -> std::io::Result<DedupBenchFigures> {
    let mut rng = Rng(options.seed);
    let mut figures = DedupBenchFigures::default();
    let pages = synthetic_pages(&mut rng, options.text_mb * 1_000_000);
    let bytes: usize = pages.iter().map(String::len).sum();

    let start = Instant::now();
    for p in &pages {
        black_box(content_fingerprint(p));
    }
    figures.content_fp_mb_s = mb_per_s(bytes, start.elapsed().as_secs_f64());

    let start = Instant::now();
    for p in &pages {
        black_box(simhash(p, DEFAULT_SHINGLE_WORDS));
    }
    figures.simhash_mb_s = mb_per_s(bytes, start.elapsed().as_secs_f64());

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
    figures.extract_mb_s = mb_per_s(html_bytes, start.elapsed().as_secs_f64());
    writeln!(
        out,
        "dedup fingerprints: {:.1} MB of text in {} pages of 8 KB\n  \
         content fingerprint {:>8.1} MB/s\n  simhash (shingles of {} words) {:>8.1} MB/s\n  \
         main-text extraction {:>8.1} MB/s of HTML ({:.1} MB)",
        bytes as f64 / 1e6,
        pages.len(),
        figures.content_fp_mb_s,
        DEFAULT_SHINGLE_WORDS,
        figures.simhash_mb_s,
        figures.extract_mb_s,
        html_bytes as f64 / 1e6
    )?;

    let stored: Vec<u64> = (0..options.fingerprints).map(|_| rng.next()).collect();
    let mut index = NearIndex::new(options.distance);
    let start = Instant::now();
    for (id, &fp) in stored.iter().enumerate() {
        index.insert(fp, id as u64);
    }
    figures.index_build_s = start.elapsed().as_secs_f64();

    let k = index.distance();
    let queries: Vec<(u64, bool)> = (0..options.queries)
        .map(|i| {
            if i.is_multiple_of(2) && !stored.is_empty() {
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
    let start = Instant::now();
    for &(q, is_planted) in &queries {
        let mut any = false;
        index.for_each_match(q, |_, _| any = true);
        if is_planted {
            planted += 1;
            found += usize::from(any);
        }
    }
    figures.lookup_us = start.elapsed().as_secs_f64() * 1e6 / queries.len().max(1) as f64;
    figures.planted_found = (found, planted);

    let scans = queries.len().min(200);
    let start = Instant::now();
    for &(q, _) in &queries[..scans] {
        black_box(stored.iter().filter(|&&fp| hamming(fp, q) <= k).count());
    }
    figures.scan_us = start.elapsed().as_secs_f64() * 1e6 / scans.max(1) as f64;
    writeln!(
        out,
        "dedup near-duplicate index: {} simhashes, k = {}, {} tables\n  \
         build {:>10.2} s\n  lookup {:>9.2} us (permuted tables, {} queries; planted near copies found {}/{})\n  \
         scan {:>11.2} us (linear, {} queries)",
        options.fingerprints,
        k,
        k + 1,
        figures.index_build_s,
        figures.lookup_us,
        queries.len(),
        found,
        planted,
        figures.scan_us,
        scans
    )?;
    Ok(figures)
}
