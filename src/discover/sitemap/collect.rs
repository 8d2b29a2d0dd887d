//! The collector: turns raw entries into [`SitemapDoc`] contents, applying the URL rules of the
//! module docs (host, directory, cross-submission), the date rules and the URL limit.

use std::io;

use chrono::{DateTime, Utc};
use url::Url;

use super::gzip::CAP_MESSAGE;
use super::{
    ChangeFreq, ChildSitemap, MAX_ERRORS, SitemapContext, SitemapDoc, SitemapError, SitemapKind,
    SitemapUrl,
};

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
    /// Where page URLs go as they are read; `None` keeps them in [`SitemapDoc::urls`].
    sink: Option<&'a mut dyn FnMut(SitemapUrl)>,
    /// Page URLs accepted so far (the limit counts them wherever they went).
    accepted: usize,
    /// Set when the URL limit was hit: reading stops.
    full: bool,
}

impl<'a> Collector<'a> {
    pub(super) fn new(
        ctx: &'a SitemapContext,
        sink: Option<&'a mut dyn FnMut(SitemapUrl)>,
    ) -> Self {
        Collector {
            ctx,
            sink,
            accepted: 0,
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

    /// The finished document.
    pub(super) fn finish(self) -> SitemapDoc {
        self.doc
    }

    /// The rules and limits being applied.
    pub(super) fn context(&self) -> &'a SitemapContext {
        self.ctx
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
        if e.to_string() != CAP_MESSAGE {
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
        if self.accepted >= self.ctx.limits.max_urls {
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
        let url = SitemapUrl {
            loc,
            lastmod,
            changefreq,
            priority,
        };
        self.accepted += 1;
        match self.sink.as_mut() {
            Some(sink) => sink(url),
            None => self.doc.urls.push(url),
        }
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
        if !ctx.home_known
            || ctx
                .cross_submitted_hosts
                .iter()
                .any(|h| h.eq_ignore_ascii_case(host))
        {
            return Some(url.into());
        }
        if !crate::discover::same_host(&url, &ctx.url) {
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
