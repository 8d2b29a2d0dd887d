//! The entry (`<url>`, `<sitemap>`, `<item>`, `<entry>`) being read: its fields' texts, kept in
//! strings reused from entry to entry, and how a finished entry is handed to the collector.

use quick_xml::events::BytesStart;

use super::{Collector, Dialect, SitemapError, SitemapKind};

/// The fields freshet reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Field {
    Loc,
    Lastmod,
    Changefreq,
    Priority,
    Guid,
    /// Atom `<published>`: used when there is no `<updated>`.
    Published,
}

/// One field's text, its string reused from entry to entry.
#[derive(Debug, Default)]
pub(super) struct Slot {
    text: String,
    /// The part of `text` that is the value (white space around it left out).
    value: std::ops::Range<usize>,
    pub(super) set: bool,
}

impl Slot {
    fn put(&mut self, value: &str) {
        self.text.clear();
        self.text.push_str(value);
        self.value = 0..self.text.len();
        self.set = true;
    }

    /// Takes the text collected in `text` (trimmed), handing back this slot's old string for
    /// reuse: no copy.
    fn take(&mut self, text: &mut String) {
        std::mem::swap(&mut self.text, text);
        let trimmed = self.text.trim_start();
        let start = self.text.len() - trimmed.len();
        self.value = start..start + trimmed.trim_end().len();
        self.set = true;
    }

    fn get(&self) -> Option<&str> {
        self.set.then(|| &self.text[self.value.clone()])
    }
}

/// The entry being read (one value, reused for every entry).
#[derive(Debug, Default)]
pub(super) struct Entry {
    /// Whether an entry is open.
    pub(super) open: bool,
    /// Stack depth of the entry element.
    pub(super) depth: usize,
    pub(super) loc: Slot,
    lastmod: Slot,
    published: Slot,
    changefreq: Slot,
    priority: Slot,
    guid: Slot,
    /// Text directly inside the entry element.
    pub(super) bare: String,
    /// Bytes of white space directly inside the entry element before any other text: left out
    /// of `bare` (which is trimmed anyway) but counted against the field size limit as if kept.
    pub(super) bare_skipped: usize,
}

impl Entry {
    /// Opens a new, empty entry at `depth`.
    pub(super) fn start(&mut self, depth: usize) {
        self.open = true;
        self.depth = depth;
        for slot in [
            &mut self.loc,
            &mut self.lastmod,
            &mut self.published,
            &mut self.changefreq,
            &mut self.priority,
            &mut self.guid,
        ] {
            slot.set = false;
        }
        self.bare.clear();
        self.bare_skipped = 0;
    }

    /// Atom `<link href rel>`: the first link with no rel or rel="alternate" is the entry's URL.
    pub(super) fn atom_link(&mut self, start: &BytesStart<'_>) {
        let (mut href, mut rel) = (None, None);
        for attr in start.attributes().flatten() {
            let value = attr
                .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .map(|v| v.into_owned())
                .ok();
            match attr.key.local_name().as_ref() {
                "href" => href = value,
                "rel" => rel = value,
                _ => {}
            }
        }
        if !self.loc.set
            && rel.as_deref().is_none_or(|r| r == "alternate")
            && let Some(href) = href
        {
            self.loc.put(&href);
        }
    }

    /// Stores a finished field's text (trimmed) in the entry, taking the string `text`.
    pub(super) fn store(&mut self, field: Field, text: &mut String, kind: SitemapKind) {
        match field {
            Field::Loc => {
                // An RSS item may have several links; the first one is the page.
                if !self.loc.set || kind != SitemapKind::Rss {
                    self.loc.take(text);
                }
            }
            Field::Lastmod => self.lastmod.take(text),
            Field::Published => self.published.take(text),
            Field::Changefreq => self.changefreq.take(text),
            Field::Priority => self.priority.take(text),
            Field::Guid => self.guid.take(text),
        }
    }

    /// Hands a finished entry to the collector; returns false to stop reading.
    pub(super) fn flush(&self, out: &mut Collector<'_>) -> bool {
        let kind = out.kind();
        let bare = self.bare.trim();
        let loc = self
            .loc
            .get()
            .filter(|l| !l.is_empty())
            .or_else(|| {
                // RSS: an item with no <link> may carry its URL in <guid>.
                self.guid
                    .get()
                    .filter(|g| g.starts_with("http://") || g.starts_with("https://"))
            })
            .or_else(|| (!bare.is_empty()).then_some(bare));
        let Some(loc) = loc else {
            out.error(SitemapError::MissingLoc);
            return true;
        };
        let lastmod = self.lastmod.get().or(self.published.get());
        match kind {
            SitemapKind::Index => out.push_child(loc, lastmod),
            _ => out.push_url(
                loc,
                lastmod,
                self.changefreq.get(),
                self.priority.get(),
                dialect(kind),
            ),
        }
    }
}

/// Which date format a document of `kind` uses.
pub(super) fn dialect(kind: SitemapKind) -> Dialect {
    if kind == SitemapKind::Rss {
        Dialect::Rss
    } else {
        Dialect::Sitemap
    }
}
