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
//! that are cleared and reused, so reading costs little more than quick-xml's own event scan.

use std::io::BufRead;

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use super::{Collector, Dialect, SitemapError, SitemapKind};

/// Deeper nesting than this is refused (no sitemap needs it; it bounds memory).
const MAX_DEPTH: usize = 64;
/// Longest field text kept (a URL is far shorter; the byte cap bounds the document anyway).
const MAX_FIELD: usize = 64 * 1024;

/// The fields freshet reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
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
struct Slot {
    text: String,
    set: bool,
}

impl Slot {
    fn put(&mut self, value: &str) {
        self.text.clear();
        self.text.push_str(value);
        self.set = true;
    }

    fn get(&self) -> Option<&str> {
        self.set.then_some(self.text.as_str())
    }
}

/// The entry being read (one value, reused for every entry).
#[derive(Debug, Default)]
struct Entry {
    /// Whether an entry is open.
    open: bool,
    /// Stack depth of the entry element.
    depth: usize,
    loc: Slot,
    lastmod: Slot,
    published: Slot,
    changefreq: Slot,
    priority: Slot,
    guid: Slot,
    /// Text directly inside the entry element.
    bare: String,
}

impl Entry {
    /// Opens a new, empty entry at `depth`.
    fn start(&mut self, depth: usize) {
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
    }
}

/// The names of the open elements (lower-case local names), in strings reused as the depth
/// goes up and down.
#[derive(Debug, Default)]
struct Names {
    names: Vec<String>,
    depth: usize,
}

impl Names {
    fn push(&mut self, local: &str) {
        if self.depth == self.names.len() {
            self.names.push(String::new());
        }
        let name = &mut self.names[self.depth];
        name.clear();
        name.push_str(local);
        name.make_ascii_lowercase();
        self.depth += 1;
    }

    fn pop(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    fn len(&self) -> usize {
        self.depth
    }

    fn is_empty(&self) -> bool {
        self.depth == 0
    }

    /// The name at `depth` (1 is the root).
    fn at(&self, depth: usize) -> &str {
        &self.names[depth - 1]
    }

    fn joined(&self) -> String {
        self.names[..self.depth].join("><")
    }
}

/// What text is currently being collected into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Field(Field, usize),
    DocDate(usize),
}

/// Parses an XML sitemap or feed into `out`.
pub(super) fn parse(reader: impl BufRead, out: &mut Collector<'_>) {
    let mut xml = Reader::from_reader(reader);
    xml.config_mut().trim_text(false);
    let mut buf = Vec::new();
    let mut stack = Names::default();
    let mut entry = Entry::default();
    let mut target: Option<Target> = None;
    let mut text = String::new();

    loop {
        buf.clear();
        let event = match xml.read_event_into(&mut buf) {
            Ok(event) => event,
            Err(e) => {
                // Text before the error ended at markup, so it is complete: keep the entry.
                if let (Some(Target::Field(field, _)), true) = (target, entry.open) {
                    store(&mut entry, field, &text, out.kind());
                }
                if entry.open {
                    entry.open = false;
                    flush(&entry, out);
                }
                if let quick_xml::Error::Io(io) = &e {
                    out.io_error(io);
                } else {
                    out.error(SitemapError::MalformedXml {
                        byte: xml.error_position(),
                        message: e.to_string(),
                    });
                }
                return;
            }
        };
        match event {
            Event::Start(start) => {
                stack.push(start.local_name().as_ref());
                if stack.len() > MAX_DEPTH {
                    out.error(SitemapError::MalformedXml {
                        byte: xml.buffer_position(),
                        message: format!("nesting deeper than {MAX_DEPTH}"),
                    });
                    return;
                }
                if !open(&stack, &start, &mut entry, &mut target, &mut text, out) {
                    return;
                }
            }
            Event::Empty(start) => {
                stack.push(start.local_name().as_ref());
                let keep_going = open(&stack, &start, &mut entry, &mut target, &mut text, out);
                stack.pop();
                if !keep_going {
                    return;
                }
                // An empty field element has no text: drop the target it may have opened.
                if matches!(target, Some(Target::Field(_, d)) | Some(Target::DocDate(d)) if d > stack.len())
                {
                    target = None;
                }
            }
            Event::End(_) => {
                let depth = stack.len();
                match target {
                    Some(Target::Field(field, d)) if d == depth => {
                        if entry.open {
                            if field == Field::Loc
                                && entry.loc.set
                                && matches!(out.kind(), SitemapKind::Urlset | SitemapKind::Index)
                            {
                                // A second <loc> in one entry: the first entry is complete.
                                if !flush(&entry, out) {
                                    return;
                                }
                                entry.start(entry.depth);
                            }
                            store(&mut entry, field, &text, out.kind());
                        }
                        target = None;
                    }
                    Some(Target::DocDate(d)) if d == depth => {
                        let dialect = dialect(out.kind());
                        out.set_doc_lastmod(&text, dialect);
                        target = None;
                    }
                    _ => {}
                }
                if entry.open && entry.depth == depth {
                    entry.open = false;
                    if !flush(&entry, out) {
                        return;
                    }
                }
                stack.pop();
            }
            Event::Text(t) => push_text(&t.xml10_content(), target, &mut text, &mut entry, &stack),
            Event::CData(c) => {
                push_text(&c.into_inner(), target, &mut text, &mut entry, &stack);
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
                    push_text(&s, target, &mut text, &mut entry, &stack);
                }
            }
            Event::DocType(_) => out.error(SitemapError::Doctype),
            Event::Eof => {
                if !stack.is_empty() {
                    // Truncated: the last text may be cut mid-URL, so only closed fields count.
                    if entry.open {
                        entry.open = false;
                        flush(&entry, out);
                    }
                    out.error(SitemapError::MalformedXml {
                        byte: xml.buffer_position(),
                        message: format!("document ends inside <{}>", stack.joined()),
                    });
                } else if out.kind() == SitemapKind::Unknown {
                    out.error(SitemapError::UnknownFormat {
                        found: "XML without a root element".into(),
                    });
                }
                return;
            }
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) => {}
        }
    }
}

/// Handles an element start at the top of `stack`; returns false to stop reading.
fn open(
    stack: &Names,
    start: &BytesStart<'_>,
    entry: &mut Entry,
    target: &mut Option<Target>,
    text: &mut String,
    out: &mut Collector<'_>,
) -> bool {
    let depth = stack.len();
    let name = stack.at(depth);
    if depth == 1 {
        let kind = match name {
            "urlset" => SitemapKind::Urlset,
            "sitemapindex" => SitemapKind::Index,
            "rss" | "rdf" => SitemapKind::Rss,
            "feed" => SitemapKind::Atom,
            other => {
                out.error(SitemapError::UnknownFormat {
                    found: format!("root element <{other}>"),
                });
                return false;
            }
        };
        out.set_kind(kind);
        return true;
    }
    let kind = out.kind();
    if entry.open {
        let en = entry;
        if depth == en.depth + 1 && target.is_none() {
            let field = match (kind, name) {
                (SitemapKind::Urlset | SitemapKind::Index, "loc") => Some(Field::Loc),
                (SitemapKind::Urlset | SitemapKind::Index, "lastmod") => Some(Field::Lastmod),
                (SitemapKind::Urlset, "changefreq") => Some(Field::Changefreq),
                (SitemapKind::Urlset, "priority") => Some(Field::Priority),
                (SitemapKind::Rss, "link") => Some(Field::Loc),
                (SitemapKind::Rss, "guid") => Some(Field::Guid),
                (SitemapKind::Rss, "pubdate" | "date") => Some(Field::Lastmod),
                (SitemapKind::Atom, "updated" | "modified") => Some(Field::Lastmod),
                (SitemapKind::Atom, "published" | "issued") => Some(Field::Published),
                (SitemapKind::Atom, "link") => {
                    atom_link(start, en);
                    None
                }
                _ => None,
            };
            if let Some(field) = field {
                *target = Some(Target::Field(field, depth));
                text.clear();
            }
        }
        return true;
    }
    let parent = stack.at(depth - 1);
    let starts_entry = match kind {
        SitemapKind::Urlset => depth == 2 && name == "url",
        SitemapKind::Index => depth == 2 && name == "sitemap",
        SitemapKind::Rss => name == "item",
        SitemapKind::Atom => depth == 2 && name == "entry",
        _ => false,
    };
    if starts_entry {
        entry.start(depth);
        *target = None;
        return true;
    }
    let doc_date = match kind {
        SitemapKind::Rss => {
            parent == "channel" && matches!(name, "pubdate" | "lastbuilddate" | "date")
        }
        SitemapKind::Atom => depth == 2 && matches!(name, "updated"),
        _ => false,
    };
    if doc_date && target.is_none() {
        *target = Some(Target::DocDate(depth));
        text.clear();
    }
    true
}

/// Atom `<link href rel>`: the first link with no rel or rel="alternate" is the entry's URL.
fn atom_link(start: &BytesStart<'_>, entry: &mut Entry) {
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
    if !entry.loc.set
        && rel.as_deref().is_none_or(|r| r == "alternate")
        && let Some(href) = href
    {
        entry.loc.put(&href);
    }
}

/// Appends text to the current field, or to the entry's own text.
fn push_text(s: &str, target: Option<Target>, text: &mut String, entry: &mut Entry, stack: &Names) {
    if target.is_some() {
        if text.len() + s.len() <= MAX_FIELD {
            text.push_str(s);
        }
    } else if entry.open && entry.depth == stack.len() && entry.bare.len() + s.len() <= MAX_FIELD {
        entry.bare.push_str(s);
    }
}

/// Stores a finished field's text in the entry.
fn store(entry: &mut Entry, field: Field, text: &str, kind: SitemapKind) {
    let value = text.trim();
    match field {
        Field::Loc => {
            // An RSS item may have several links; the first one is the page.
            if !entry.loc.set || kind != SitemapKind::Rss {
                entry.loc.put(value);
            }
        }
        Field::Lastmod => entry.lastmod.put(value),
        Field::Published => entry.published.put(value),
        Field::Changefreq => entry.changefreq.put(value),
        Field::Priority => entry.priority.put(value),
        Field::Guid => entry.guid.put(value),
    }
}

/// Hands a finished entry to the collector; returns false to stop reading.
fn flush(entry: &Entry, out: &mut Collector<'_>) -> bool {
    let kind = out.kind();
    let bare = entry.bare.trim();
    let loc = entry
        .loc
        .get()
        .filter(|l| !l.is_empty())
        .or_else(|| {
            // RSS: an item with no <link> may carry its URL in <guid>.
            entry
                .guid
                .get()
                .filter(|g| g.starts_with("http://") || g.starts_with("https://"))
        })
        .or_else(|| (!bare.is_empty()).then_some(bare));
    let Some(loc) = loc else {
        out.error(SitemapError::MissingLoc);
        return true;
    };
    let lastmod = entry.lastmod.get().or(entry.published.get());
    match kind {
        SitemapKind::Index => out.push_child(loc, lastmod),
        _ => out.push_url(
            loc,
            lastmod,
            entry.changefreq.get(),
            entry.priority.get(),
            dialect(kind),
        ),
    }
}

fn dialect(kind: SitemapKind) -> Dialect {
    if kind == SitemapKind::Rss {
        Dialect::Rss
    } else {
        Dialect::Sitemap
    }
}
