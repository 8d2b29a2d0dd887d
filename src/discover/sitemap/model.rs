//! The data a sitemap yields: kinds, URLs with hints, child sitemaps, and specific errors.

use chrono::{DateTime, Utc};
use serde::Serialize;

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
        let value = value.trim();
        [
            ChangeFreq::Always,
            ChangeFreq::Hourly,
            ChangeFreq::Daily,
            ChangeFreq::Weekly,
            ChangeFreq::Monthly,
            ChangeFreq::Yearly,
            ChangeFreq::Never,
        ]
        .into_iter()
        .find(|f| f.as_str().eq_ignore_ascii_case(value))
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
    /// Absolute URL, as serialized by [`url::Url`].
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
    /// Problems, in document order: at most [`MAX_ERRORS`](super::MAX_ERRORS), and the one
    /// that stopped the reading, if one did ([`SitemapError::stopped_reading`]).
    pub errors: Vec<SitemapError>,
    /// Problems of single URLs beyond [`MAX_ERRORS`](super::MAX_ERRORS), only counted.
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
    /// The XML is broken at this byte offset (of the uncompressed, UTF-8-decoded document).
    #[error("malformed XML at byte {byte}: {message}")]
    MalformedXml {
        /// Offset in the uncompressed, UTF-8-decoded document.
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

impl SitemapError {
    /// Whether the problem stopped the reading (what was read is kept): such a problem is
    /// always kept, however many problems of single URLs came before it.
    pub fn stopped_reading(&self) -> bool {
        matches!(
            self,
            Self::TooManyUrls { .. }
                | Self::TooLarge { .. }
                | Self::MalformedXml { .. }
                | Self::UnknownFormat { .. }
                | Self::Io { .. }
        )
    }
}
