//! The collector: turns raw entries into [`SitemapDoc`] contents, applying the URL rules of the
//! module docs (host, directory, cross-submission), the date rules and the URL limit.

use std::io;

use chrono::{DateTime, Utc};
use url::{Position, Url};

use super::gzip::CAP_MESSAGE;
use super::plain_loc::plain_path;
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
    /// The sitemap URL's `scheme://host[:port]` when it is http(s), for [`Collector::parse_loc`].
    home_prefix: Option<&'a str>,
    /// The sitemap's directory: the path of its URL up to the last `/`.
    home_dir: &'a str,
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
            home_prefix: matches!(ctx.url.scheme(), "http" | "https")
                .then(|| &ctx.url[..Position::BeforePath]),
            home_dir: {
                let path = ctx.url.path();
                &path[..path.rfind('/').map_or(1, |i| i + 1)]
            },
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
        if self.doc.errors.len() < MAX_ERRORS || error.stopped_reading() {
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
            None => {
                // A URL read relative to the sitemap's has room to spare (the url crate sized
                // it for the path alone, then doubled it); a kept list holds tens of thousands,
                // so each is copied to its size (shrinking in place would leave the room as
                // holes between them).
                let loc = url.loc.as_str().into();
                self.doc.urls.push(SitemapUrl { loc, ..url });
            }
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
        let raw = raw.trim();
        if raw.is_empty() {
            self.error(SitemapError::MissingLoc);
            return None;
        }
        // The protocol wants absolute URLs; feeds may use relative links.
        let base =
            matches!(self.doc.kind, SitemapKind::Rss | SitemapKind::Atom).then_some(&self.ctx.url);
        // Nearly every `<loc>`: the sitemap's own scheme and host, then a path the url crate
        // would not change.
        if let Some(path) = self
            .home_prefix
            .and_then(|prefix| raw.strip_prefix(prefix))
            .and_then(plain_path)
        {
            debug_assert_eq!(
                Url::options().base_url(base).parse(raw).map(String::from),
                Ok(raw.to_string())
            );
            let host = self.ctx.url.host_str().unwrap_or_default();
            return self
                .admits(raw, host, path, true, directory_rule)
                .then(|| raw.to_string());
        }
        let (url, on_home) = match self.parse_loc(raw, base) {
            Ok(parsed) => parsed,
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
        // A URL read under the sitemap's own scheme, host and port is on its host.
        let on_home = on_home || crate::discover::same_host(&url, &self.ctx.url);
        let host = url.host_str().unwrap_or_default();
        self.admits(url.as_str(), host, url.path(), on_home, directory_rule)
            .then(|| url.into())
    }

    /// Whether the URL `loc` (on `host`, with `path`; `on_home` when that is the sitemap's own
    /// host and port) may be listed by this sitemap: the host and directory rules of the module
    /// docs. A refusal is recorded.
    fn admits(
        &mut self,
        loc: &str,
        host: &str,
        path: &str,
        on_home: bool,
        directory_rule: bool,
    ) -> bool {
        let ctx = self.ctx;
        if !ctx.home_known
            || ctx
                .cross_submitted_hosts
                .iter()
                .any(|h| h.eq_ignore_ascii_case(host))
        {
            return true;
        }
        if !on_home {
            self.error(SitemapError::ForeignHost {
                loc: loc.to_string(),
            });
            return false;
        }
        if directory_rule && ctx.restrict_to_directory && !path.starts_with(self.home_dir) {
            self.error(SitemapError::OutsideDirectory {
                loc: loc.to_string(),
                dir: self.home_dir.to_string(),
            });
            return false;
        }
        true
    }

    /// Parses a URL as `Url::options().base_url(base).parse(raw)` does. A URL that starts with the
    /// sitemap's own `scheme://host[:port]` followed by a path (nearly every `<loc>`) is parsed as
    /// that path relative to the sitemap's URL: the url crate still checks and normalises its
    /// path, query and fragment, and only the scheme and host, the same bytes as the sitemap's
    /// own already-parsed ones, are not read again. The URL is the same (debug builds check it);
    /// the flag says it was read that way.
    fn parse_loc(&self, raw: &str, base: Option<&Url>) -> Result<(Url, bool), url::ParseError> {
        if let Some(prefix) = self.home_prefix
            && let Some(path) = raw.strip_prefix(prefix)
            && path.starts_with('/')
            // `//x` or `/\x` (tabs and newlines are skipped) would name another host.
            && !matches!(path.as_bytes().get(1), Some(b'/' | b'\\' | b'\t' | b'\n' | b'\r'))
        {
            let url = Url::options().base_url(Some(&self.ctx.url)).parse(path);
            debug_assert_eq!(url, Url::options().base_url(base).parse(raw), "{raw}");
            return url.map(|url| (url, true));
        }
        Url::options()
            .base_url(base)
            .parse(raw)
            .map(|url| (url, false))
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

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn a_loc_on_the_sitemaps_host_parses_as_the_whole_url_would() {
        let home = "https://a.example:8443/dir/sitemap.xml";
        let ctx = SitemapContext::new(
            Url::parse(home).unwrap(),
            Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap(),
        );
        let collector = Collector::new(&ctx, None);
        for raw in [
            "https://a.example:8443/dir/p?x=1&y=2#top",
            "https://a.example:8443/dir/./../dir/%7euser/x%zz y\\z",
            "https://a.example:8443/dir/ü/päge?q=ä#é",
            "https://a.example:8443//evil.example/x",
            "https://a.example:8443/\\evil.example/x",
            "https://a.example:8443/\t/evil.example/x",
            "https://a.example:8443/\n/evil.example/x",
            "https://a.example:8443/%2e%2e/x/..",
            "https://a.example:8443/",
            "https://a.example:8443",
            "https://a.example:8443?q",
            "https://a.example:8443.evil.example/x",
            "https://a.example:8443@evil.example/x",
            "https://a.example:84431/x",
            "https://A.example:8443/x",
            "http://a.example:8443/x",
            "https://a.example:8443/x\t\ny ",
            "https://a.example:8443/x y\u{1}",
        ] {
            for base in [None, Some(&ctx.url)] {
                let parsed = collector.parse_loc(raw, base);
                assert_eq!(
                    parsed.as_ref().map(|(url, _)| url),
                    Url::options().base_url(base).parse(raw).as_ref(),
                    "{raw:?}"
                );
                if let Ok((url, true)) = parsed {
                    assert!(crate::discover::same_host(&url, &ctx.url), "{raw:?}");
                }
            }
        }
    }
}
