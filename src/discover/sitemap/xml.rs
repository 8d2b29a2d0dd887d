//! The XML side of sitemap parsing: one pass over quick-xml events with a small state machine.
//!
//! The root element decides the kind (`urlset`, `sitemapindex`, `rss`/`rdf:RDF`, `feed`); any
//! namespace prefix is accepted. Fields are read only as direct children of their entry element
//! (`<url>`, `<sitemap>`, `<item>`, `<entry>`), so `<image:loc>` inside `<image:image>` is never
//! taken for the page's `<loc>`. Text, CDATA and entity events are stitched together (quick-xml
//! 0.42 reports `&amp;` as its own event). A second `<loc>` inside one entry starts a new entry.
//! An entry without `<loc>` whose own text is a URL (`<sitemap>http://…</sitemap>`) uses it.
//!
//! Nothing is allocated per element or per entry: element names and field texts go into strings
//! that are cleared and reused, and events borrow the decoded document, read one [`Window`] at a
//! time by quick-xml's slice reader (which copies nothing). A new slice reader starts at each
//! window, so it cannot check that end tags match their start tags: [`Names`] does, with
//! quick-xml's own error.

use std::io::BufRead;

use encoding_rs::Encoding;
use quick_xml::Reader;
use quick_xml::errors::{IllFormedError, SyntaxError};
use quick_xml::events::{BytesStart, Event};

use super::decode::Window;
use super::entry::{Entry, Field, dialect};
use super::names::{Names, Tag};
use super::{Collector, SitemapError, SitemapKind};

/// Deeper nesting than this is refused (no sitemap needs it; it bounds memory).
const MAX_DEPTH: usize = 64;
/// Longest field text kept (a URL is far shorter; the byte cap bounds the document anyway).
pub(super) const MAX_FIELD: usize = 64 * 1024;

/// What text is currently being collected into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Field(Field, usize),
    DocDate(usize),
}

/// The UTF-8 byte-order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Parses an XML sitemap or feed into `out`; `source` is the document in `encoding`, after any
/// byte-order mark and leading white space.
pub(super) fn parse(source: impl BufRead, encoding: &'static Encoding, out: &mut Collector<'_>) {
    let mut window = Window::new(source, encoding);
    let mut reading = Reading::default();
    loop {
        if let Err(e) = window.fill() {
            reading.keep_open_entry(out);
            out.io_error(&e);
            return;
        }
        // quick-xml drops a byte-order mark where a reader starts; here it is text (U+FEFF).
        if window.rest().starts_with(BOM) {
            reading.push_text("\u{FEFF}");
            window.consume(BOM.len());
        }
        let (offset, last, rest) = (window.offset(), window.is_last(), window.rest());
        let mut xml = Reader::from_reader(rest);
        let config = xml.config_mut();
        config.check_end_names = false;
        config.allow_unmatched_ends = true;
        // Bytes of `rest` read up to the end of whole events.
        let mut read = 0;
        loop {
            // Where white space before the next text or markup means nothing, quick-xml skips
            // it instead of handing it over as an event of its own (most events of a sitemap).
            let skipping = reading.white_space_is_noise();
            xml.config_mut().trim_text_start = skipping;
            let result = xml.read_event();
            let at = xml.buffer_position();
            if !last && cut_short(&result, xml.error_position(), at, rest.len() as u64) {
                break;
            }
            let go_on = match result {
                Ok(event) => {
                    if skipping {
                        let white = rest[read as usize..at as usize]
                            .iter()
                            .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
                            .count();
                        reading.skipped_white_space(white);
                    }
                    reading.event(event, offset + read, offset + at, out)
                }
                Err(e) => {
                    reading.malformed(offset + xml.error_position(), &e, out);
                    false
                }
            };
            if !go_on {
                return;
            }
            read = at;
        }
        window.consume(read as usize);
    }
}

/// Whether an event read up to `at` in a window ending at `end`, which is not the end of the
/// document, may have been cut short by the window: text or the end of input reaching its end,
/// or markup it leaves open (an error reported at the `<`, `error_at`, where quick-xml may not
/// have moved on: `<` or `<!` at the very end).
fn cut_short(result: &quick_xml::Result<Event<'_>>, error_at: u64, at: u64, end: u64) -> bool {
    match result {
        Ok(Event::Text(_) | Event::Eof) => at == end,
        Ok(_) => false,
        Err(quick_xml::Error::Syntax(SyntaxError::UnclosedTag)) => true,
        Err(quick_xml::Error::Syntax(SyntaxError::InvalidBangMarkup)) => error_at + 2 >= end,
        Err(_) => at == end,
    }
}

/// What reading has gathered so far, carried from event to event and window to window.
#[derive(Debug, Default)]
struct Reading {
    stack: Names,
    entry: Entry,
    target: Option<Target>,
    /// The text of the field being read.
    text: String,
}

impl Reading {
    /// Handles one event found between the offsets `start` and `end` of the decoded document;
    /// returns false to stop reading.
    #[inline]
    fn event(&mut self, event: Event<'_>, start: u64, end: u64, out: &mut Collector<'_>) -> bool {
        match event {
            Event::Start(element) => {
                self.stack.push(element.name().as_ref());
                if self.stack.len() > MAX_DEPTH {
                    out.error(SitemapError::MalformedXml {
                        byte: end,
                        message: format!("nesting deeper than {MAX_DEPTH}"),
                    });
                    return false;
                }
                self.open(&element, out)
            }
            Event::Empty(element) => {
                self.stack.push(element.name().as_ref());
                let keep_going = self.open(&element, out);
                self.stack.pop();
                // An empty field element has no text: drop the target it may have opened.
                if matches!(self.target, Some(Target::Field(_, d)) | Some(Target::DocDate(d)) if d > self.stack.len())
                {
                    self.target = None;
                }
                keep_going
            }
            Event::End(element) => self.close(element.name().as_ref(), start, out),
            Event::Text(t) => {
                self.push_text(&t.xml10_content());
                true
            }
            Event::CData(c) => {
                self.push_text(&c.into_inner());
                true
            }
            Event::GeneralRef(r) => {
                let resolved = if r.is_char_ref() {
                    r.resolve_char_ref().ok().flatten().map(String::from)
                } else {
                    let name = r.xml10_content();
                    let known = quick_xml::escape::resolve_predefined_entity(&name);
                    if known.is_none() {
                        out.error(SitemapError::UnknownEntity {
                            name: name.to_string(),
                        });
                    }
                    known.map(String::from)
                };
                if let Some(s) = resolved {
                    self.push_text(&s);
                }
                true
            }
            Event::DocType(_) => {
                out.error(SitemapError::Doctype);
                true
            }
            Event::Eof => {
                if !self.stack.is_empty() {
                    // Truncated: the last text may be cut mid-URL, so only closed fields count.
                    if self.entry.open {
                        self.entry.open = false;
                        self.entry.flush(out);
                    }
                    out.error(SitemapError::MalformedXml {
                        byte: end,
                        message: format!("document ends inside <{}>", self.stack.joined()),
                    });
                } else if out.kind() == SitemapKind::Unknown {
                    out.error(SitemapError::UnknownFormat {
                        found: "XML without a root element".into(),
                    });
                }
                false
            }
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) => true,
        }
    }

    /// Handles an element start at the top of the stack; returns false to stop reading.
    fn open(&mut self, start: &BytesStart<'_>, out: &mut Collector<'_>) -> bool {
        let depth = self.stack.len();
        let tag = self.stack.tag(depth);
        if depth == 1 {
            let kind = match tag {
                Tag::Urlset => SitemapKind::Urlset,
                Tag::SitemapIndex => SitemapKind::Index,
                Tag::Rss | Tag::Rdf => SitemapKind::Rss,
                Tag::Feed => SitemapKind::Atom,
                _ => {
                    out.error(SitemapError::UnknownFormat {
                        found: format!("root element <{}>", self.stack.local_lowercase(1)),
                    });
                    return false;
                }
            };
            out.set_kind(kind);
            return true;
        }
        let kind = out.kind();
        if self.entry.open {
            if depth == self.entry.depth + 1 && self.target.is_none() {
                let field = match (kind, tag) {
                    (SitemapKind::Urlset | SitemapKind::Index, Tag::Loc) => Some(Field::Loc),
                    (SitemapKind::Urlset | SitemapKind::Index, Tag::Lastmod) => {
                        Some(Field::Lastmod)
                    }
                    (SitemapKind::Urlset, Tag::Changefreq) => Some(Field::Changefreq),
                    (SitemapKind::Urlset, Tag::Priority) => Some(Field::Priority),
                    (SitemapKind::Rss, Tag::Link) => Some(Field::Loc),
                    (SitemapKind::Rss, Tag::Guid) => Some(Field::Guid),
                    (SitemapKind::Rss, Tag::PubDate | Tag::Date) => Some(Field::Lastmod),
                    (SitemapKind::Atom, Tag::Updated | Tag::Modified) => Some(Field::Lastmod),
                    (SitemapKind::Atom, Tag::Published | Tag::Issued) => Some(Field::Published),
                    (SitemapKind::Atom, Tag::Link) => {
                        self.entry.atom_link(start);
                        None
                    }
                    _ => None,
                };
                if let Some(field) = field {
                    self.target = Some(Target::Field(field, depth));
                    self.text.clear();
                }
            }
            return true;
        }
        let parent = self.stack.tag(depth - 1);
        let starts_entry = match kind {
            SitemapKind::Urlset => depth == 2 && tag == Tag::Url,
            SitemapKind::Index => depth == 2 && tag == Tag::Sitemap,
            SitemapKind::Rss => tag == Tag::Item,
            SitemapKind::Atom => depth == 2 && tag == Tag::Entry,
            _ => false,
        };
        if starts_entry {
            self.entry.start(depth);
            self.target = None;
            return true;
        }
        let doc_date = match kind {
            SitemapKind::Rss => {
                parent == Tag::Channel
                    && matches!(tag, Tag::PubDate | Tag::LastBuildDate | Tag::Date)
            }
            SitemapKind::Atom => depth == 2 && tag == Tag::Updated,
            _ => false,
        };
        if doc_date && self.target.is_none() {
            self.target = Some(Target::DocDate(depth));
            self.text.clear();
        }
        true
    }

    /// Handles the end tag `name` found at offset `start`; returns false to stop reading.
    fn close(&mut self, name: &str, start: u64, out: &mut Collector<'_>) -> bool {
        // The check quick-xml makes when it reads a whole document itself, with its error.
        let mismatch = match self.stack.innermost() {
            Some(open) if open == name => None,
            Some(open) => Some(IllFormedError::MismatchedEndTag {
                expected: open.to_string(),
                found: name.to_string(),
            }),
            None => Some(IllFormedError::UnmatchedEndTag(name.to_string())),
        };
        if let Some(e) = mismatch {
            self.malformed(start, &quick_xml::Error::IllFormed(e), out);
            return false;
        }
        let depth = self.stack.len();
        let entry = &mut self.entry;
        match self.target {
            Some(Target::Field(field, d)) if d == depth => {
                if entry.open {
                    if field == Field::Loc
                        && entry.loc.set
                        && matches!(out.kind(), SitemapKind::Urlset | SitemapKind::Index)
                    {
                        // A second <loc> in one entry: the first entry is complete.
                        if !entry.flush(out) {
                            return false;
                        }
                        entry.start(entry.depth);
                    }
                    entry.store(field, &mut self.text, out.kind());
                }
                self.target = None;
            }
            Some(Target::DocDate(d)) if d == depth => {
                let dialect = dialect(out.kind());
                out.set_doc_lastmod(&self.text, dialect);
                self.target = None;
            }
            _ => {}
        }
        if entry.open && entry.depth == depth {
            entry.open = false;
            if !entry.flush(out) {
                return false;
            }
        }
        self.stack.pop();
        true
    }

    /// Whether white space before the next event would be dropped or left out anyway: no
    /// field is being read, and it is not inside an entry after text of the entry's own.
    fn white_space_is_noise(&self) -> bool {
        self.target.is_none()
            && (!self.entry.open
                || self.entry.depth != self.stack.len()
                || self.entry.bare.is_empty())
    }

    /// Counts `n` bytes of white space quick-xml skipped as [`Reading::push_text`] would have
    /// (they count against the size limit of the entry's own text).
    fn skipped_white_space(&mut self, n: usize) {
        let entry = &mut self.entry;
        if n > 0
            && self.target.is_none()
            && entry.open
            && entry.depth == self.stack.len()
            && entry.bare_skipped + entry.bare.len() + n <= MAX_FIELD
        {
            entry.bare_skipped += n;
        }
    }

    /// Appends text to the current field, or to the entry's own text.
    fn push_text(&mut self, s: &str) {
        if self.target.is_some() {
            if self.text.len() + s.len() <= MAX_FIELD {
                self.text.push_str(s);
            }
            return;
        }
        let entry = &mut self.entry;
        if entry.open
            && entry.depth == self.stack.len()
            && entry.bare_skipped + entry.bare.len() + s.len() <= MAX_FIELD
        {
            // The white space between an entry's elements is never part of its text.
            if entry.bare.is_empty() && s.bytes().all(|b| b.is_ascii_whitespace()) {
                entry.bare_skipped += s.len();
            } else {
                entry.bare.push_str(s);
            }
        }
    }

    /// Keeps the entry being read when reading stops at an error: text before the error ended
    /// at markup, so it is complete.
    fn keep_open_entry(&mut self, out: &mut Collector<'_>) {
        if let (Some(Target::Field(field, _)), true) = (self.target, self.entry.open) {
            self.entry.store(field, &mut self.text, out.kind());
        }
        if self.entry.open {
            self.entry.open = false;
            self.entry.flush(out);
        }
    }

    /// Stops reading at malformed XML found at offset `byte`.
    fn malformed(&mut self, byte: u64, error: &quick_xml::Error, out: &mut Collector<'_>) {
        self.keep_open_entry(out);
        out.error(SitemapError::MalformedXml {
            byte,
            message: error.to_string(),
        });
    }
}
