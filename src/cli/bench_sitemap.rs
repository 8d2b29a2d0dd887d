//! The `sitemap` part of `freshet bench`: freshet's full sitemap reader (the one `freshet run`
//! uses: `<loc>` checked and normalised by the URL rules, `<lastmod>`, `<changefreq>`,
//! `<priority>`, the limits) against a raw quick-xml event scan of the same bytes in the same run,
//! and the reader's memory.
//!
//! The sitemap is generated into a temporary file (about 230 bytes per URL: 50,000 URLs make
//! 11.5 MB) and both readers read it through the same 64 KiB `BufReader`, so the page cache, not
//! the process, holds the bytes: the resident memory measured is the reader's own. The raw scan
//! and the reader take turns, each keeping its best time of up to five. The reader is
//! timed streaming ([`sitemap::parse_each`], each URL handed on as it is read) and keeping the
//! list ([`sitemap::parse`], what `run` does with a fetched sitemap today). Peak memory is the
//! kernel's high-water mark `VmHWM` of /proc/self/status, reset before each reader by writing 5
//! to /proc/self/clear_refs (Linux ≥ 4.0); where that fails it is the process's peak so far.

use std::fs::File;
use std::hint::black_box;
use std::io::{BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::time::Instant;

use chrono::{TimeZone, Utc};
use quick_xml::events::Event;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::bench_figures::{Figures, reset_peak, status_bytes};
use crate::discover::sitemap::{self, SitemapContext};

/// Bytes read per repetition at least: small sitemaps are read several times, the best kept.
const READ_AT_LEAST: u64 = 200_000_000;
/// Most repetitions of one reading.
const MAX_REPEATS: u64 = 5;
/// The read buffer of both readers.
const BUFFER: usize = 64 * 1024;

/// A temporary file removed when dropped.
struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Writes a sitemap of `urls` URLs on www.example.com; returns its size in bytes.
fn write_sitemap(path: &PathBuf, urls: usize) -> std::io::Result<u64> {
    const SECTIONS: &[&str] = &["news", "sport", "culture", "business", "travel", "opinion"];
    const WORDS: &[&str] = &[
        "river", "council", "budget", "summer", "festival", "market", "election", "storm",
        "school", "bridge", "report", "season", "museum", "harbour", "rail", "garden",
    ];
    const FREQS: &[&str] = &["hourly", "daily", "weekly", "monthly", "yearly"];
    let mut rng = StdRng::seed_from_u64(7);
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
    out.write_all(
        b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
          <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    )?;
    let mut written = 0u64;
    let mut line = String::with_capacity(512);
    for i in 0..urls {
        let (year, month, day) = (
            rng.random_range(2019..=2025),
            rng.random_range(1..=12),
            rng.random_range(1..=28),
        );
        line.clear();
        let slug: Vec<&str> = (0..rng.random_range(3..=6))
            .map(|_| WORDS[rng.random_range(0..WORDS.len())])
            .collect();
        use std::fmt::Write as _;
        let _ = write!(
            line,
            "  <url>\n    <loc>https://www.example.com/{}/{year}/{month:02}/{day:02}/{}-{i}.html</loc>\n    \
             <lastmod>{year}-{month:02}-{day:02}T{:02}:{:02}:{:02}+00:00</lastmod>\n    \
             <changefreq>{}</changefreq>\n    <priority>0.{}</priority>\n  </url>\n",
            SECTIONS[rng.random_range(0..SECTIONS.len())],
            slug.join("-"),
            rng.random_range(0..24),
            rng.random_range(0..60),
            rng.random_range(0..60),
            FREQS[rng.random_range(0..FREQS.len())],
            rng.random_range(1..=9),
        );
        out.write_all(line.as_bytes())?;
        written += line.len() as u64;
    }
    out.write_all(b"</urlset>\n")?;
    out.flush()?;
    Ok(std::fs::metadata(path)?.len().max(written))
}

fn open(path: &PathBuf) -> std::io::Result<BufReader<File>> {
    Ok(BufReader::with_capacity(BUFFER, File::open(path)?))
}

/// The raw scan: every quick-xml event read and counted, nothing else done.
fn raw_scan(path: &PathBuf) -> anyhow::Result<u64> {
    let mut reader = quick_xml::Reader::from_reader(open(path)?);
    let mut buf = Vec::with_capacity(1024);
    let mut events = 0u64;
    loop {
        match reader.read_event_into(&mut buf)? {
            Event::Eof => return Ok(events),
            _ => events += 1,
        }
        buf.clear();
    }
}

/// The time of one run of `read`.
fn timed(read: impl FnOnce() -> anyhow::Result<()>) -> anyhow::Result<f64> {
    let started = Instant::now();
    read()?;
    Ok(started.elapsed().as_secs_f64())
}

/// Runs the sitemap part on a generated sitemap of `urls` URLs.
pub fn run(urls: usize) -> anyhow::Result<Figures> {
    let path = std::env::temp_dir().join(format!(
        "freshet-bench-sitemap-{}-{urls}.xml",
        std::process::id()
    ));
    let file = TempFile(path);
    let bytes = write_sitemap(&file.0, urls)?;
    let repeats = (READ_AT_LEAST / bytes.max(1)).clamp(1, MAX_REPEATS);
    let mb = bytes as f64 / 1e6;

    let mut ctx = SitemapContext::new(
        url::Url::parse("https://www.example.com/sitemap.xml")?,
        Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0)
            .single()
            .unwrap_or_default(),
    );
    // A sitemap larger than the protocol's limits is read whole (the limits are still checked).
    ctx.limits.max_urls = ctx.limits.max_urls.max(urls);
    ctx.limits.max_bytes = ctx.limits.max_bytes.max(bytes + 1);

    // The two readers take turns and each keeps its best time, so that a change in the machine's
    // load while the part runs weighs on both alike.
    let rss_before = status_bytes("VmRSS").unwrap_or(0);
    let reset = reset_peak();
    let (mut raw_seconds, mut stream_seconds) = (f64::INFINITY, f64::INFINITY);
    let mut read = 0usize;
    let mut errors = 0usize;
    for _ in 0..repeats {
        raw_seconds = raw_seconds.min(timed(|| {
            black_box(raw_scan(&file.0)?);
            Ok(())
        })?);
        stream_seconds = stream_seconds.min(timed(|| {
            read = 0;
            let doc = sitemap::parse_each(open(&file.0)?, &ctx, &mut |url| {
                read += 1;
                black_box(url);
            });
            errors = doc.errors.len();
            Ok(())
        })?);
    }
    let peak = status_bytes("VmHWM").unwrap_or(0);

    let collect_before = status_bytes("VmRSS").unwrap_or(0);
    reset_peak();
    let collect_seconds = timed(|| {
        black_box(sitemap::parse(open(&file.0)?, &ctx));
        Ok(())
    })?;
    let collect_peak = status_bytes("VmHWM").unwrap_or(0);

    Ok(vec![
        ("urls", urls as f64),
        ("bytes", bytes as f64),
        ("mb_per_second", mb / stream_seconds),
        ("raw_scan_mb_per_second", mb / raw_seconds),
        ("ratio_to_raw_scan", raw_seconds / stream_seconds),
        ("peak_rss_bytes", peak as f64),
        ("rss_before_bytes", rss_before as f64),
        ("rss_growth_bytes", peak.saturating_sub(rss_before) as f64),
        ("peak_reset", f64::from(u8::from(reset))),
        ("urls_read", read as f64),
        ("errors", errors as f64),
        ("collect_mb_per_second", mb / collect_seconds),
        (
            "collect_rss_growth_bytes",
            collect_peak.saturating_sub(collect_before) as f64,
        ),
    ])
}
