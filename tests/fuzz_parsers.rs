//! Fuzzing every parser of untrusted input on stable Rust: a seeded generator mixing random bytes
//! with mutations of a recorded corpus (`tests/fuzz_corpus/`, see its README), one test per
//! parser, each call under `catch_unwind` with a panic hook that counts every panic, caught
//! inside freshet or not (0 allowed). Inputs are capped at [`MAX_INPUT`] bytes, so memory stays
//! bounded; each test also checks the process's peak RSS.
//!
//! - `FRESHET_FUZZ_CASES`: generated inputs per parser (default [`DEFAULT_CASES`], the CI share;
//!   the corpus seeds are run verbatim on top).
//! - `FRESHET_FUZZ_SEED`: the generator's seed (default fixed, so a failure reproduces).
//! - `FRESHET_FUZZ_LAST`: a file each input is written to before it runs (finds the input of
//!   an abort such as a stack overflow; slow).
//! - `FRESHET_FUZZ_SKIP`: generated inputs to skip before running (with `_LAST`, reaches the
//!   input of an abort quickly).
//!
//! The on-demand run, one core, ten million inputs per parser:
//! `FRESHET_FUZZ_CASES=10000000 cargo test --release --test fuzz_parsers -- --nocapture --test-threads=1`
//! (add a parser's name, e.g. `fuzz_feed`, to run one). A panicking input is written to
//! `$CARGO_TARGET_TMPDIR/fuzz-<parser>-<n>.bin` and its message printed.

use std::cell::Cell;
use std::io::Cursor;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Once;
use std::time::Instant;

use chrono::{TimeZone, Utc};
use freshet::dedup::urlnorm::{self, UrlRules};
use freshet::dedup::{charset as dedup_charset, extract, fingerprint};
use freshet::discover::sitemap::{self, SitemapContext};
use freshet::discover::{dates, feed};
use freshet::fetch::{charset as fetch_charset, headers};
use freshet::robots::{self, Robots};
use freshet::schedule;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use url::Url;

/// Largest input handed to a parser.
const MAX_INPUT: usize = 1 << 20;
/// Generated inputs per parser in an ordinary `cargo test`.
const DEFAULT_CASES: u64 = 3_000;
/// Peak resident memory allowed for the whole test process.
const MAX_RSS_KIB: u64 = 1 << 20;

thread_local! {
    /// Panics seen on this thread, caught or not (counted by the hook).
    static PANICS: Cell<u64> = const { Cell::new(0) };
}

/// Installs (once) a panic hook that counts panics per thread and prints one line each.
fn count_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        panic::set_hook(Box::new(|info| {
            PANICS.with(|p| p.set(p.get() + 1));
            eprintln!("fuzz: panic: {info}");
        }));
    });
}

fn panics_so_far() -> u64 {
    PANICS.with(Cell::get)
}

/// Seeds from `tests/fuzz_corpus/<dir>`: every file, and for `seeds.txt` every line.
fn corpus(dir: &str) -> Vec<Vec<u8>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz_corpus")
        .join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut seeds = Vec::new();
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        if file.file_name().is_some_and(|n| n == "seeds.txt") {
            seeds.extend(bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec));
        } else {
            seeds.push(bytes);
        }
    }
    assert!(!seeds.is_empty(), "no seeds in {}", root.display());
    seeds
}

/// Byte strings that matter to one parser, spliced in by mutations.
const XML_TOKENS: &[&[u8]] = &[
    b"<?xml version=\"1.0\" encoding=\"UTF-16\"?>",
    b"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>",
    b"<![CDATA[",
    b"]]>",
    b"<!--",
    b"-->",
    b"&amp;",
    b"&#0;",
    b"&#x10FFFF;",
    b"&unknown;",
    b"<!DOCTYPE x [<!ENTITY a \"aaaa\">]>",
    b"<url><loc>",
    b"</loc></url>",
    b"<sitemap><loc>",
    b"<lastmod>2024-13-45T25:61:61+99:99</lastmod>",
    b"<item><link>",
    b"<entry><link href=\"",
    b"<pubDate>",
    b"xmlns=\"http://www.w3.org/2005/Atom\"",
    b"\xEF\xBB\xBF",
    b"\xFF\xFE",
    b"\x00",
];
const ROBOTS_TOKENS: &[&[u8]] = &[
    b"User-agent: freshet\n",
    b"User-agent: *\n",
    b"Disallow: /",
    b"Allow: /$",
    b"*",
    b"$",
    b"%2F",
    b"%",
    b"Crawl-delay: 1e308\n",
    b"Crawl-delay: -1\n",
    b"Sitemap: http://",
    b"\r",
    b"#",
];
const TEXT_TOKENS: &[&[u8]] = &[
    b"<html><head><title>",
    b"<a href=\"",
    b"<link rel=\"canonical\" href=\"",
    b"<meta charset=\"",
    b"<meta http-equiv=\"content-type\" content=\"text/html; charset=",
    b"<script>",
    b"<p>",
    b"utf-16",
    b"[[site]]\n",
    b"name = \"",
    b"host_rate = \"",
    b"rediscover = \"",
    b"0 0 */6 * * *",
    b"max_body = \"",
    b"1e400",
    b"-0",
    b"http://[",
    b"%zz",
    b"T24:00:00Z",
    b"GMT",
    b"+99:99",
    b"\xF0\x9F\x98\x80",
];

/// The generator: random bytes, or a corpus seed under a few mutations.
struct Generator<'a> {
    rng: SmallRng,
    seeds: &'a [Vec<u8>],
    tokens: &'a [&'a [u8]],
}

impl Generator<'_> {
    fn input(&mut self) -> Vec<u8> {
        let mut data = match self.rng.random_range(0..16) {
            0 => {
                let len = self.small_len();
                (0..len).map(|_| self.rng.random()).collect()
            }
            1 => {
                let mut out = Vec::new();
                for _ in 0..self.rng.random_range(1..32) {
                    out.extend_from_slice(self.token());
                }
                out
            }
            _ => self.seed().to_vec(),
        };
        for _ in 0..self.rng.random_range(1..=8) {
            self.mutate(&mut data);
        }
        data.truncate(MAX_INPUT);
        data
    }

    fn small_len(&mut self) -> usize {
        if self.rng.random_ratio(1, 64) {
            self.rng.random_range(0..65_536)
        } else {
            self.rng.random_range(0..512)
        }
    }

    fn seed(&mut self) -> &[u8] {
        &self.seeds[self.rng.random_range(0..self.seeds.len())]
    }

    fn token(&mut self) -> &[u8] {
        self.tokens[self.rng.random_range(0..self.tokens.len())]
    }

    fn at(&mut self, data: &[u8]) -> usize {
        self.rng.random_range(0..=data.len())
    }

    fn mutate(&mut self, data: &mut Vec<u8>) {
        match self.rng.random_range(0..10) {
            0 if !data.is_empty() => {
                let i = self.rng.random_range(0..data.len());
                data[i] ^= 1 << self.rng.random_range(0..8);
            }
            1 if !data.is_empty() => {
                let i = self.rng.random_range(0..data.len());
                const EDGY: &[u8] = b"\x00\xFF<>&;\"'\n\r\t /:%*$#=[]\x80\xC0\xE0";
                data[i] = EDGY[self.rng.random_range(0..EDGY.len())];
            }
            2 => {
                let at = self.at(data);
                let len = self.rng.random_range(1..16);
                let bytes: Vec<u8> = (0..len).map(|_| self.rng.random()).collect();
                data.splice(at..at, bytes);
            }
            3 if !data.is_empty() => {
                let a = self.at(data);
                let b = (a + self.rng.random_range(0..256)).min(data.len());
                data.drain(a..b);
            }
            4 if !data.is_empty() => {
                // Repeat a slice: deep nesting, long lines, many entries.
                let a = self.rng.random_range(0..data.len());
                let b = (a + self.rng.random_range(1..64)).min(data.len());
                let chunk = data[a..b].to_vec();
                let times = if self.rng.random_ratio(1, 32) {
                    self.rng.random_range(100..5_000)
                } else {
                    self.rng.random_range(1..8)
                };
                let at = self.at(data);
                let repeated: Vec<u8> = chunk
                    .iter()
                    .copied()
                    .cycle()
                    .take((chunk.len() * times).min(MAX_INPUT))
                    .collect();
                data.splice(at..at, repeated);
            }
            5 | 6 => {
                let at = self.at(data);
                let token = self.token().to_vec();
                data.splice(at..at, token);
            }
            7 => {
                // Splice: this input's head with another seed's tail.
                let cut = self.at(data);
                let other = self.seed().to_vec();
                let from = self.rng.random_range(0..=other.len());
                data.truncate(cut);
                data.extend_from_slice(&other[from..]);
            }
            8 => {
                let cut = self.at(data);
                data.truncate(cut);
            }
            _ => {
                let at = self.at(data);
                let digits = self.rng.random::<u64>().to_string().into_bytes();
                data.splice(at..at, digits);
            }
        }
    }
}

/// Peak resident memory of this process in KiB (Linux).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .map(|v| {
            v.replace('_', "")
                .parse()
                .unwrap_or_else(|_| panic!("{name}={v}"))
        })
        .unwrap_or(default)
}

/// Runs `target` on every seed, then on `FRESHET_FUZZ_CASES` generated inputs; fails on any
/// panic (caught by freshet or not) and on a peak RSS over [`MAX_RSS_KIB`].
fn fuzz(name: &str, dir: &str, tokens: &[&[u8]], target: impl Fn(&[u8])) {
    count_panics();
    let seeds = corpus(dir);
    let cases = env_u64("FRESHET_FUZZ_CASES", DEFAULT_CASES);
    let seed = env_u64("FRESHET_FUZZ_SEED", 0x5EED_F2E5);
    let mut generator = Generator {
        rng: SmallRng::seed_from_u64(
            name.bytes()
                .fold(seed, |h, b| h.rotate_left(8) ^ u64::from(b)),
        ),
        seeds: &seeds,
        tokens,
    };
    let started = Instant::now();
    let failures = std::cell::RefCell::new(Vec::new());
    // FRESHET_FUZZ_LAST=FILE writes each input there first: a stack overflow aborts the
    // process before anything can be saved, and this leaves the culprit behind.
    let last = std::env::var_os("FRESHET_FUZZ_LAST");
    let run = |input: &[u8], n: u64| {
        if let Some(path) = &last {
            let _ = std::fs::write(path, input);
        }
        let before = panics_so_far();
        let result = panic::catch_unwind(AssertUnwindSafe(|| target(input)));
        if result.is_err() || panics_so_far() > before {
            let mut failures = failures.borrow_mut();
            if failures.len() < 5 {
                let path = Path::new(env!("CARGO_TARGET_TMPDIR"))
                    .join(format!("fuzz-{name}-{}.bin", failures.len()));
                let _ = std::fs::write(&path, input);
                eprintln!(
                    "fuzz: {name}: input {n} panicked, saved as {}",
                    path.display()
                );
            }
            failures.push(n);
        }
    };
    for (n, input) in seeds.iter().enumerate() {
        run(&input[..input.len().min(MAX_INPUT)], n as u64);
    }
    // FRESHET_FUZZ_SKIP=N generates the first N inputs without running them, to reach a late
    // input (a stack overflow found at input N) quickly.
    let skip = env_u64("FRESHET_FUZZ_SKIP", 0);
    let mut report_at = 1_000_000;
    for n in 0..cases {
        let input = generator.input();
        if n < skip {
            continue;
        }
        run(&input, seeds.len() as u64 + n);
        if n + 1 == report_at {
            let secs = started.elapsed().as_secs_f64();
            eprintln!(
                "fuzz: {name}: {} inputs, {:.0}/s, {} panics so far",
                n + 1,
                (n + 1) as f64 / secs,
                failures.borrow().len()
            );
            report_at += 1_000_000;
        }
    }
    let failures = failures.into_inner();
    let secs = started.elapsed().as_secs_f64();
    let total = seeds.len() as u64 + cases;
    let rss = peak_rss_kib();
    eprintln!(
        "fuzz: {name}: {total} inputs ({} seeds + {cases} generated) in {secs:.1} s = {:.0} inputs/s, \
         {} panics, peak RSS {} KiB",
        seeds.len(),
        total as f64 / secs.max(1e-9),
        failures.len(),
        rss.map_or("?".to_string(), |k| k.to_string())
    );
    assert!(
        failures.is_empty(),
        "{name}: {} inputs panicked",
        failures.len()
    );
    if let Some(rss) = rss {
        assert!(rss < MAX_RSS_KIB, "{name}: peak RSS {rss} KiB");
    }
}

fn lossy(input: &[u8]) -> String {
    String::from_utf8_lossy(input).into_owned()
}

fn base() -> Url {
    Url::parse("https://news.example/dir/page.xml").unwrap()
}

#[test]
fn fuzz_robots() {
    let robots_url = Url::parse("https://news.example/robots.txt").unwrap();
    fuzz("robots", "robots", ROBOTS_TOKENS, |input| {
        let robots = Robots::parse(input, "freshet");
        let text = lossy(input);
        let probe = format!("https://news.example/{}", text.lines().next().unwrap_or(""));
        for url in [
            "https://news.example/",
            "https://news.example/private/a?b=%2F",
            &probe,
        ] {
            std::hint::black_box(robots.is_allowed(url));
        }
        std::hint::black_box((robots.crawl_delay(), robots.sitemap_urls(&robots_url)));
        let status = 200 + u16::from(input.first().copied().unwrap_or(0)) * 2;
        let other = robots::rules_for_status(status, input, "freshet");
        std::hint::black_box(other.is_allowed("https://news.example/x"));
        std::hint::black_box(robots::product_token(&text));
    });
}

#[test]
fn fuzz_sitemap() {
    let mut ctx = SitemapContext::new(base(), Utc.with_ymd_and_hms(2024, 6, 1, 0, 0, 0).unwrap());
    // The protocol's 50 MB would make a decompressing input slow, not unbounded; 4 MiB keeps
    // the run fast through the same code path.
    ctx.limits.max_bytes = 4 << 20;
    fuzz("sitemap", "sitemap", XML_TOKENS, |input| {
        let doc = sitemap::parse(Cursor::new(input), &ctx);
        std::hint::black_box(doc);
    });
}

#[test]
fn fuzz_feed() {
    let url = base();
    fuzz("feed", "feed", XML_TOKENS, |input| {
        // A panic feed-rs raised and freshet caught is a failure too.
        if let Err(feed::FeedError::Crashed { url }) = feed::parse(input, &url) {
            panic!("feed-rs crashed on {url} (caught)");
        }
    });
}

#[test]
fn fuzz_dates() {
    fuzz("dates", "dates", TEXT_TOKENS, |input| {
        let text = lossy(input);
        std::hint::black_box((
            dates::parse_any(&text),
            dates::parse_w3c(&text),
            dates::parse_rfc822(&text),
            headers::parse_http_date(&text),
            headers::parse_retry_after(&text, 1_700_000_000_000),
        ));
    });
}

#[test]
fn fuzz_schedule() {
    fuzz("schedule", "schedule", TEXT_TOKENS, |input| {
        let text = lossy(input);
        std::hint::black_box(schedule::parse_str(Path::new("fuzz.toml"), &text).is_ok());
        for line in text.lines().take(64) {
            let value = line
                .split_once('=')
                .map_or(line, |(_, v)| v)
                .trim()
                .trim_matches('"');
            std::hint::black_box((
                schedule::parse_cron(value).is_ok(),
                schedule::parse_duration(value).is_ok(),
                schedule::parse_size(value).is_ok(),
                schedule::HostRate::parse(value).is_ok(),
            ));
        }
    });
}

#[test]
fn fuzz_html() {
    let url = Url::parse("https://news.example/a/b.html").unwrap();
    let rules = UrlRules::default();
    fuzz("html", "html", TEXT_TOKENS, |input| {
        let decoded = dedup_charset::decode(input, Some("text/html"));
        let fetched = fetch_charset::decode(input, None);
        let page = extract::extract_html(&decoded.text, Some(&url), &rules);
        let plain = extract::extract_plain(&fetched.text);
        std::hint::black_box((
            fingerprint::simhash(&page.main_text, 4),
            fingerprint::content_fingerprint(&plain.main_text),
            page.links.len(),
        ));
    });
}

#[test]
fn fuzz_urls_and_headers() {
    let url = base();
    let rules = UrlRules::default();
    fuzz("urls", "urls", TEXT_TOKENS, |input| {
        let text = lossy(input);
        std::hint::black_box((
            urlnorm::normalize(&text, Some(&url), &rules).is_ok(),
            urlnorm::normalize_str(&text, &rules).is_ok(),
            headers::ContentType::parse(&text).is_textual(),
            dedup_charset::header_charset(&text),
        ));
        if let Ok(value) = reqwest::header::HeaderValue::from_str(&text) {
            let mut map = reqwest::header::HeaderMap::new();
            map.insert(reqwest::header::CACHE_CONTROL, value);
            std::hint::black_box(headers::cache_control_max_age(&map));
        }
    });
}
