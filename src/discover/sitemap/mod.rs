//! Sitemap parsing, streamed with quick-xml: urlset, sitemapindex, plain text, RSS/Atom.
//!
//! [`parse`] reads a sitemap from any [`BufRead`] without building the document: gzip is detected
//! by its magic bytes and decompressed on the fly, the protocol's limits (50,000 URLs, 50 MiB
//! uncompressed, sitemaps.org) are enforced while reading, and whatever was read before an error
//! is kept. Every problem is a specific [`SitemapError`] in [`SitemapDoc::errors`]; nothing panics.
//!
//! Which URLs a sitemap may list (sitemaps.org, "Sitemap file location" and "Cross-submits"):
//! - a URL on the sitemap's own host must lie under the sitemap's directory (`/a/sitemap.xml` may
//!   list `/a/x` but not `/b/x`), as the protocol says and crawler-commons' default "strict" mode
//!   does. freshet keeps this rule because a sitemap dropped in a subdirectory (an upload folder, a
//!   user's pages) is not the site's voice about the rest of the host;
//! - unless that host's robots.txt lists the sitemap: then it speaks for the whole host, any path
//!   (how Google reads robots.txt-submitted sitemaps). The caller passes such hosts in
//!   [`SitemapContext::cross_submitted_hosts`], which may include the sitemap's own host;
//! - a URL on another host is refused unless that host is cross-submitted.
//!
//! http and https count as the same host (sites move to https and keep old sitemaps). A
//! `<lastmod>` in the future is ignored (with an error), as are invalid `<changefreq>` and
//! `<priority>` values. Index depth limits and loop guards are the caller's job; [`SitemapWalk`]
//! is a small pure helper for them.

mod collect;
pub(crate) mod decode;
mod entry;
mod gzip;
mod model;
mod names;
mod plain_loc;
mod walk;
mod xml;

#[cfg(test)]
mod tests;

use std::cell::Cell;
use std::io::{self, BufRead, BufReader, Read};
use std::rc::Rc;

use chrono::{DateTime, Utc};
use url::Url;

use collect::{Collector, Dialect};
use gzip::Capped;
pub use gzip::{DecompressError, decompress, is_gzip};
pub use model::{ChangeFreq, ChildSitemap, SitemapDoc, SitemapError, SitemapKind, SitemapUrl};
pub use walk::{MAX_DEPTH, MAX_SITEMAPS_PER_WALK, SitemapWalk, WalkRefusal, depth_by_naming};

/// The protocol's limit on URLs (or child sitemaps) per file.
pub const MAX_URLS: usize = 50_000;
/// The protocol's limit on the uncompressed size of a file: 50 MiB (52,428,800 bytes).
pub const MAX_BYTES: u64 = 50 * 1024 * 1024;
/// At most this many errors are kept per document; the rest are only counted.
pub const MAX_ERRORS: usize = 1000;

/// Limits applied while reading (configurable so tests can use small ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SitemapLimits {
    /// URLs (urlset, text, feeds) or child sitemaps (index) read before stopping.
    pub max_urls: usize,
    /// Uncompressed bytes read before stopping.
    pub max_bytes: u64,
}

impl Default for SitemapLimits {
    fn default() -> Self {
        SitemapLimits {
            max_urls: MAX_URLS,
            max_bytes: MAX_BYTES,
        }
    }
}

/// What the parser needs to know about where a sitemap came from.
#[derive(Debug, Clone)]
pub struct SitemapContext {
    /// The sitemap's own URL: base for relative links, home host and directory.
    pub url: Url,
    /// Now, to ignore lastmod values in the future (pure code never reads a clock).
    pub now: DateTime<Utc>,
    /// Hosts whose robots.txt lists this sitemap: their URLs are accepted on any path.
    pub cross_submitted_hosts: Vec<String>,
    /// Refuse same-host URLs outside the sitemap's directory (default true; see module docs).
    pub restrict_to_directory: bool,
    /// Whether `url` is where the sitemap really lives (default true). False for a saved file
    /// read without a URL (`freshet inspect sitemap FILE`): it has no host, so neither the
    /// cross-host nor the directory rule can apply, and every URL it holds is listed.
    pub home_known: bool,
    /// Size and count limits.
    pub limits: SitemapLimits,
}

impl SitemapContext {
    /// A context with the protocol's limits, the directory rule on, and no cross-submission.
    pub fn new(url: Url, now: DateTime<Utc>) -> Self {
        SitemapContext {
            url,
            now,
            cross_submitted_hosts: Vec::new(),
            restrict_to_directory: true,
            home_known: true,
            limits: SitemapLimits::default(),
        }
    }
}

/// Parses a sitemap from `reader` (gzip or not) under `ctx`'s rules and limits.
pub fn parse<R: BufRead>(reader: R, ctx: &SitemapContext) -> SitemapDoc {
    read(reader, Collector::new(ctx, None))
}

/// As [`parse`], but hands each page URL to `on_url` as soon as it is read instead of keeping it
/// in [`SitemapDoc::urls`] (left empty; child sitemaps and errors are still kept): memory stays
/// flat however many URLs the sitemap lists.
pub fn parse_each<R: BufRead>(
    reader: R,
    ctx: &SitemapContext,
    on_url: &mut dyn FnMut(SitemapUrl),
) -> SitemapDoc {
    read(reader, Collector::new(ctx, Some(on_url)))
}

fn read<R: BufRead>(mut reader: R, mut out: Collector<'_>) -> SitemapDoc {
    let ctx = out.context();
    let gzip = match reader.fill_buf() {
        Ok(head) => is_gzip(head),
        Err(e) => {
            out.error(SitemapError::Io {
                message: e.to_string(),
            });
            return out.finish();
        }
    };
    let exceeded = Rc::new(Cell::new(false));
    let inner: Box<dyn BufRead + '_> = if gzip {
        Box::new(BufReader::new(flate2::bufread::MultiGzDecoder::new(reader)))
    } else {
        Box::new(reader)
    };
    let mut capped = Capped {
        inner,
        left: ctx.limits.max_bytes,
        exceeded: exceeded.clone(),
    };
    match first_byte(&mut capped) {
        Ok(Some(b'<')) => {
            let encoding = match capped.fill_buf() {
                Ok(head) => decode::declared_encoding(head),
                Err(_) => encoding_rs::UTF_8,
            };
            xml::parse(capped, encoding, &mut out)
        }
        Ok(Some(_)) => parse_text(capped, &mut out),
        Ok(None) => out.error(SitemapError::UnknownFormat {
            found: "an empty document".into(),
        }),
        Err(e) => out.io_error(&e),
    }
    if exceeded.get() {
        out.error(SitemapError::TooLarge {
            limit_bytes: ctx.limits.max_bytes,
        });
    }
    out.finish()
}

/// Skips a UTF-8 BOM and leading white space; returns the first byte left, if any.
fn first_byte(reader: &mut impl BufRead) -> io::Result<Option<u8>> {
    let mut at_start = true;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(None);
        }
        if at_start && buf.starts_with(&[0xEF, 0xBB, 0xBF]) {
            reader.consume(3);
            at_start = false;
            continue;
        }
        at_start = false;
        let skip = buf.iter().take_while(|b| b.is_ascii_whitespace()).count();
        if skip < buf.len() {
            let first = buf[skip];
            reader.consume(skip);
            return Ok(Some(first));
        }
        let n = buf.len();
        reader.consume(n);
    }
}

/// A text sitemap: one absolute URL per line, UTF-8.
fn parse_text(mut reader: impl BufRead, out: &mut Collector<'_>) {
    let mut line = Vec::new();
    let mut first = true;
    loop {
        line.clear();
        // A line longer than any URL is cut (the cap on bytes still bounds the whole read).
        match (&mut reader).take(64 * 1024).read_until(b'\n', &mut line) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) => return out.io_error(&e),
        }
        if line.len() == 64 * 1024 && line.last() != Some(&b'\n') {
            // Skip the rest of an overlong line.
            if let Err(e) = reader.read_until(b'\n', &mut Vec::new()) {
                return out.io_error(&e);
            }
        }
        let text = String::from_utf8_lossy(&line);
        let loc = text.trim();
        if loc.is_empty() {
            continue;
        }
        if first {
            first = false;
            // Not one URL per line (binary junk, prose, a JSON error page): say so once.
            if Url::parse(loc).is_err() {
                let shown: String = loc.chars().take(60).collect();
                out.error(SitemapError::UnknownFormat {
                    found: format!("text whose first line is not a URL: {shown:?}"),
                });
                return;
            }
            out.set_kind(SitemapKind::Text);
        }
        if !out.push_url(loc, None, None, None, Dialect::Sitemap) {
            return;
        }
    }
}
