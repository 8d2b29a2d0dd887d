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

mod walk;
mod xml;

#[cfg(test)]
mod tests;

use std::cell::Cell;
use std::io::{self, BufRead, BufReader, Read};
use std::rc::Rc;

use chrono::{DateTime, Utc};
use serde::Serialize;
use url::Url;

pub use walk::{SitemapWalk, WalkRefusal};

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
            limits: SitemapLimits::default(),
        }
    }
}

/// The kind of document a sitemap turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SitemapKind {
    /// `<urlset>`: page URLs.
    Urlset,
    /// `<sitemapindex>`: child sitemaps.
    Index,
    /// One URL per line.
    Text,
    /// RSS 0.9x / 1.0 / 2.0 used as a sitemap.
    Rss,
    /// Atom used as a sitemap.
    Atom,
    /// Not a sitemap at all (empty, HTML, another XML vocabulary).
    Unknown,
}

/// `<changefreq>`: the site's hint of how often a page changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeFreq {
    /// Changes each time it is accessed.
    Always,
    /// About every hour.
    Hourly,
    /// About every day.
    Daily,
    /// About every week.
    Weekly,
    /// About every month.
    Monthly,
    /// About every year.
    Yearly,
    /// Archived: never changes.
    Never,
}

impl ChangeFreq {
    /// Parses a `<changefreq>` value (case-insensitive, trimmed).
    pub fn parse(value: &str) -> Option<ChangeFreq> {
        Some(match value.trim().to_ascii_lowercase().as_str() {
            "always" => ChangeFreq::Always,
            "hourly" => ChangeFreq::Hourly,
            "daily" => ChangeFreq::Daily,
            "weekly" => ChangeFreq::Weekly,
            "monthly" => ChangeFreq::Monthly,
            "yearly" => ChangeFreq::Yearly,
            "never" => ChangeFreq::Never,
            _ => return None,
        })
    }

    /// The hinted change rate in changes per day: hourly 24, daily 1, weekly 1/7, monthly 1/30,
    /// yearly 1/365; `always` is taken as once a minute (1440) and `never` as once a decade
    /// (1/3650): never exactly 0, which would starve a page forever.
    pub fn per_day(self) -> f64 {
        match self {
            ChangeFreq::Always => 1440.0,
            ChangeFreq::Hourly => 24.0,
            ChangeFreq::Daily => 1.0,
            ChangeFreq::Weekly => 1.0 / 7.0,
            ChangeFreq::Monthly => 1.0 / 30.0,
            ChangeFreq::Yearly => 1.0 / 365.0,
            ChangeFreq::Never => 1.0 / 3650.0,
        }
    }

    /// The protocol's lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeFreq::Always => "always",
            ChangeFreq::Hourly => "hourly",
            ChangeFreq::Daily => "daily",
            ChangeFreq::Weekly => "weekly",
            ChangeFreq::Monthly => "monthly",
            ChangeFreq::Yearly => "yearly",
            ChangeFreq::Never => "never",
        }
    }
}

/// One page URL with its hints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SitemapUrl {
    /// Absolute URL, as serialized by [`Url`].
    pub loc: String,
    /// `<lastmod>` (or the feed entry's date), if valid and not in the future.
    pub lastmod: Option<DateTime<Utc>>,
    /// `<changefreq>`, if valid.
    pub changefreq: Option<ChangeFreq>,
    /// `<priority>` in [0, 1], if valid.
    pub priority: Option<f32>,
}

/// One child sitemap of an index.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChildSitemap {
    /// Absolute URL of the child.
    pub loc: String,
    /// `<lastmod>` of the child: when it last changed (skip re-reading it if older).
    pub lastmod: Option<DateTime<Utc>>,
}

/// Everything read from one sitemap, including what went wrong.
#[derive(Debug, Clone, Serialize)]
pub struct SitemapDoc {
    /// What the document is.
    pub kind: SitemapKind,
    /// Page URLs (urlset, text, RSS, Atom).
    pub urls: Vec<SitemapUrl>,
    /// Child sitemaps (index).
    pub sitemaps: Vec<ChildSitemap>,
    /// The document's own date (RSS channel `pubDate`/`lastBuildDate`, Atom feed `updated`).
    pub lastmod: Option<DateTime<Utc>>,
    /// Problems, in document order (at most [`MAX_ERRORS`]).
    pub errors: Vec<SitemapError>,
    /// Errors beyond [`MAX_ERRORS`] that were only counted.
    pub errors_dropped: usize,
}

/// One problem found in a sitemap. URL-level problems drop that URL (or that field); document
/// problems stop reading, keeping what was read.
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize)]
#[serde(tag = "error", rename_all = "snake_case")]
pub enum SitemapError {
    /// A URL on a host that did not cross-submit this sitemap.
    #[error(
        "{loc}: refused, on another host than the sitemap and not cross-submitted by its robots.txt"
    )]
    ForeignHost {
        /// The refused URL.
        loc: String,
    },
    /// A same-host URL outside the sitemap's directory.
    #[error("{loc}: refused, outside the sitemap's directory {dir}")]
    OutsideDirectory {
        /// The refused URL.
        loc: String,
        /// The directory the sitemap may speak for.
        dir: String,
    },
    /// A `<loc>` that is not an http(s) URL.
    #[error("{loc:?}: not an http(s) URL ({reason})")]
    BadUrl {
        /// The value as written.
        loc: String,
        /// Why it was refused.
        reason: String,
    },
    /// An entry with no URL at all.
    #[error("an entry has no <loc> / link")]
    MissingLoc,
    /// A date that could not be read.
    #[error("{loc}: unreadable lastmod {value:?}")]
    BadLastmod {
        /// The URL it belongs to.
        loc: String,
        /// The value as written.
        value: String,
    },
    /// A date after `now`: ignored.
    #[error("{loc}: lastmod {value:?} is in the future, ignored")]
    FutureLastmod {
        /// The URL it belongs to.
        loc: String,
        /// The value as written.
        value: String,
    },
    /// A `<changefreq>` that is not one of the seven words.
    #[error("{loc}: unknown changefreq {value:?}")]
    BadChangefreq {
        /// The URL it belongs to.
        loc: String,
        /// The value as written.
        value: String,
    },
    /// A `<priority>` that is not a number in [0, 1].
    #[error("{loc}: priority {value:?} is not a number in [0, 1]")]
    BadPriority {
        /// The URL it belongs to.
        loc: String,
        /// The value as written.
        value: String,
    },
    /// More entries than allowed: the rest were not read.
    #[error("more than {limit} URLs: the rest was not read")]
    TooManyUrls {
        /// The limit.
        limit: usize,
    },
    /// More uncompressed bytes than allowed: the rest was not read.
    #[error("larger than {limit_bytes} bytes uncompressed: the rest was not read")]
    TooLarge {
        /// The limit.
        limit_bytes: u64,
    },
    /// The XML is broken at this byte offset (of the uncompressed document).
    #[error("malformed XML at byte {byte}: {message}")]
    MalformedXml {
        /// Offset in the uncompressed document.
        byte: u64,
        /// quick-xml's description.
        message: String,
    },
    /// A DOCTYPE: never needed by a sitemap; its entities are never expanded.
    #[error("DOCTYPE declaration ignored; entities are not expanded")]
    Doctype,
    /// An entity reference other than the five XML ones and character references.
    #[error("unknown entity &{name}; dropped")]
    UnknownEntity {
        /// The entity name.
        name: String,
    },
    /// The root element is not a sitemap, index or feed, or the document is empty.
    #[error("not a sitemap: {found}")]
    UnknownFormat {
        /// What was found instead.
        found: String,
    },
    /// Reading failed (including broken gzip).
    #[error("read error: {message}")]
    Io {
        /// The I/O error.
        message: String,
    },
}

/// Errors of [`decompress`].
#[derive(Debug, thiserror::Error)]
pub enum DecompressError {
    /// The output would exceed the cap: likely a gzip bomb.
    #[error("decompressed size exceeds {limit} bytes")]
    TooLarge {
        /// The cap.
        limit: u64,
    },
    /// Broken gzip data.
    #[error("bad gzip data: {0}")]
    Gzip(#[source] io::Error),
}

/// Whether `bytes` start with the gzip magic number.
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// The body as plain bytes: gunzipped if it is gzip (by magic bytes, whatever the URL or
/// Content-Type say), refusing to produce more than `max_bytes`.
pub fn decompress(bytes: &[u8], max_bytes: u64) -> Result<Vec<u8>, DecompressError> {
    if !is_gzip(bytes) {
        if bytes.len() as u64 > max_bytes {
            return Err(DecompressError::TooLarge { limit: max_bytes });
        }
        return Ok(bytes.to_vec());
    }
    let mut out = Vec::new();
    let mut decoder = flate2::read::MultiGzDecoder::new(bytes).take(max_bytes + 1);
    decoder
        .read_to_end(&mut out)
        .map_err(DecompressError::Gzip)?;
    if out.len() as u64 > max_bytes {
        return Err(DecompressError::TooLarge { limit: max_bytes });
    }
    Ok(out)
}

/// Parses a sitemap from `reader` (gzip or not) under `ctx`'s rules and limits.
pub fn parse<R: BufRead>(mut reader: R, ctx: &SitemapContext) -> SitemapDoc {
    let mut out = Collector::new(ctx);
    let gzip = match reader.fill_buf() {
        Ok(head) => is_gzip(head),
        Err(e) => {
            out.error(SitemapError::Io {
                message: e.to_string(),
            });
            return out.doc;
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
        Ok(Some(b'<')) => xml::parse(capped, &mut out),
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
    out.doc
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

/// A [`BufRead`] that stops after `left` bytes and flags whether more data was there.
struct Capped<R> {
    inner: R,
    left: u64,
    exceeded: Rc<Cell<bool>>,
}

impl<R: BufRead> Read for Capped<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let buf = self.fill_buf()?;
        let n = buf.len().min(out.len());
        out[..n].copy_from_slice(&buf[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Capped<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        let left = self.left;
        let exceeded = self.exceeded.clone();
        let buf = self.inner.fill_buf()?;
        if left == 0 {
            if !buf.is_empty() {
                exceeded.set(true);
                return Err(io::Error::other("size limit reached"));
            }
            return Ok(&[]);
        }
        let n = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        Ok(&buf[..n])
    }

    fn consume(&mut self, n: usize) {
        self.left = self.left.saturating_sub(n as u64);
        self.inner.consume(n);
    }
}

/// Which format a date or URL came from: sitemaps use W3C dates, RSS uses RFC 822.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sitemap,
    Rss,
}

/// Builds a [`SitemapDoc`], applying the URL rules and limits.
pub(crate) struct Collector<'a> {
    ctx: &'a SitemapContext,
    doc: SitemapDoc,
    /// Set when the URL limit was hit: reading stops.
    full: bool,
}

impl<'a> Collector<'a> {
    fn new(ctx: &'a SitemapContext) -> Self {
        Collector {
            ctx,
            doc: SitemapDoc {
                kind: SitemapKind::Unknown,
                urls: Vec::new(),
                sitemaps: Vec::new(),
                lastmod: None,
                errors: Vec::new(),
                errors_dropped: 0,
            },
            full: false,
        }
    }

    pub(crate) fn set_kind(&mut self, kind: SitemapKind) {
        self.doc.kind = kind;
    }

    pub(crate) fn kind(&self) -> SitemapKind {
        self.doc.kind
    }

    pub(crate) fn error(&mut self, error: SitemapError) {
        if self.doc.errors.len() < MAX_ERRORS {
            self.doc.errors.push(error);
        } else {
            self.doc.errors_dropped += 1;
        }
    }

    /// Records a read error, unless it is the size cap (reported once, by [`parse`]).
    pub(crate) fn io_error(&mut self, e: &io::Error) {
        if e.to_string() != "size limit reached" {
            self.error(SitemapError::Io {
                message: e.to_string(),
            });
        }
    }

    /// Sets the document's own date from its raw text.
    pub(crate) fn set_doc_lastmod(&mut self, raw: &str, dialect: Dialect) {
        let loc = self.ctx.url.to_string();
        self.doc.lastmod = self.lastmod(&loc, raw, dialect);
    }

    /// Adds a page URL; returns false once the URL limit is reached (stop reading).
    pub(crate) fn push_url(
        &mut self,
        raw_loc: &str,
        lastmod: Option<&str>,
        changefreq: Option<&str>,
        priority: Option<&str>,
        dialect: Dialect,
    ) -> bool {
        if self.full {
            return false;
        }
        if self.doc.urls.len() >= self.ctx.limits.max_urls {
            return self.hit_limit();
        }
        let Some(loc) = self.check_loc(raw_loc, true) else {
            return true;
        };
        let lastmod = lastmod.and_then(|v| self.lastmod(&loc, v, dialect));
        let changefreq = changefreq.and_then(|v| {
            let parsed = ChangeFreq::parse(v);
            if parsed.is_none() && !v.trim().is_empty() {
                self.error(SitemapError::BadChangefreq {
                    loc: loc.clone(),
                    value: v.trim().to_string(),
                });
            }
            parsed
        });
        let priority = priority.and_then(|v| {
            let parsed = v
                .trim()
                .parse::<f32>()
                .ok()
                .filter(|p| (0.0..=1.0).contains(p));
            if parsed.is_none() && !v.trim().is_empty() {
                self.error(SitemapError::BadPriority {
                    loc: loc.clone(),
                    value: v.trim().to_string(),
                });
            }
            parsed
        });
        self.doc.urls.push(SitemapUrl {
            loc,
            lastmod,
            changefreq,
            priority,
        });
        true
    }

    /// Adds a child sitemap; returns false once the limit is reached.
    pub(crate) fn push_child(&mut self, raw_loc: &str, lastmod: Option<&str>) -> bool {
        if self.full {
            return false;
        }
        if self.doc.sitemaps.len() >= self.ctx.limits.max_urls {
            return self.hit_limit();
        }
        // The directory rule is for page URLs; an index may name sitemaps anywhere on its host.
        let Some(loc) = self.check_loc(raw_loc, false) else {
            return true;
        };
        let lastmod = lastmod.and_then(|v| self.lastmod(&loc, v, Dialect::Sitemap));
        self.doc.sitemaps.push(ChildSitemap { loc, lastmod });
        true
    }

    fn hit_limit(&mut self) -> bool {
        self.full = true;
        self.error(SitemapError::TooManyUrls {
            limit: self.ctx.limits.max_urls,
        });
        false
    }

    /// Applies the URL rules of the module docs; `None` (with an error recorded) if refused.
    fn check_loc(&mut self, raw: &str, directory_rule: bool) -> Option<String> {
        let raw = raw.trim_matches(|c: char| c.is_whitespace());
        if raw.is_empty() {
            self.error(SitemapError::MissingLoc);
            return None;
        }
        // The protocol wants absolute URLs; feeds may use relative links.
        let base =
            matches!(self.doc.kind, SitemapKind::Rss | SitemapKind::Atom).then_some(&self.ctx.url);
        let url = match Url::options().base_url(base).parse(raw) {
            Ok(url) => url,
            Err(e) => {
                self.error(SitemapError::BadUrl {
                    loc: raw.to_string(),
                    reason: e.to_string(),
                });
                return None;
            }
        };
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            self.error(SitemapError::BadUrl {
                loc: raw.to_string(),
                reason: format!("scheme {} is not http(s)", url.scheme()),
            });
            return None;
        }
        let host = url.host_str().unwrap_or_default();
        let ctx = self.ctx;
        if ctx
            .cross_submitted_hosts
            .iter()
            .any(|h| h.eq_ignore_ascii_case(host))
        {
            return Some(url.into());
        }
        let home = ctx.url.host_str().unwrap_or_default();
        if !host.eq_ignore_ascii_case(home) || url.port() != ctx.url.port() {
            self.error(SitemapError::ForeignHost { loc: url.into() });
            return None;
        }
        if directory_rule && ctx.restrict_to_directory {
            let path = ctx.url.path();
            let dir = &path[..path.rfind('/').map_or(1, |i| i + 1)];
            if !url.path().starts_with(dir) {
                self.error(SitemapError::OutsideDirectory {
                    loc: url.into(),
                    dir: dir.to_string(),
                });
                return None;
            }
        }
        Some(url.into())
    }

    /// A lastmod value, or `None` with an error if unreadable or in the future.
    fn lastmod(&mut self, loc: &str, raw: &str, dialect: Dialect) -> Option<DateTime<Utc>> {
        use crate::discover::dates::{parse_any, parse_rfc822, parse_w3c};
        let value = raw.trim();
        if value.is_empty() {
            return None;
        }
        // RSS insists on a zone (a zone-less time is ambiguous); sitemaps are read leniently.
        let parsed = match dialect {
            Dialect::Sitemap => parse_any(value),
            Dialect::Rss => parse_rfc822(value).or_else(|| parse_w3c(value)),
        };
        let Some(date) = parsed else {
            self.error(SitemapError::BadLastmod {
                loc: loc.to_string(),
                value: value.to_string(),
            });
            return None;
        };
        if date > self.ctx.now {
            self.error(SitemapError::FutureLastmod {
                loc: loc.to_string(),
                value: value.to_string(),
            });
            return None;
        }
        Some(date)
    }
}
