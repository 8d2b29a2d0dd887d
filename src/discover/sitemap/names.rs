//! The open elements of a sitemap being read: each one's qualified name as written (to check
//! that end tags match, since quick-xml reads the document one window at a time and cannot) and
//! which of the names freshet acts on its local name is.
//!
//! Names are matched on the local name (any namespace prefix) without regard to ASCII case, by
//! comparing bytes: nothing is copied or lower-cased per element.

/// The element names freshet acts on; everything else is [`Tag::Other`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tag {
    Urlset,
    SitemapIndex,
    Rss,
    Rdf,
    Feed,
    Url,
    Sitemap,
    Item,
    Entry,
    Channel,
    Loc,
    Lastmod,
    Changefreq,
    Priority,
    Link,
    Guid,
    PubDate,
    Date,
    LastBuildDate,
    Updated,
    Modified,
    Published,
    Issued,
    Other,
}

impl Tag {
    /// The tag of a local name, in any ASCII case (compared by length first: most names are
    /// told apart by it alone).
    #[inline]
    fn of(local: &str) -> Tag {
        let is = |name: &str| local.eq_ignore_ascii_case(name);
        match local.len() {
            3 if is("loc") => Tag::Loc,
            3 if is("url") => Tag::Url,
            3 if is("rss") => Tag::Rss,
            3 if is("rdf") => Tag::Rdf,
            4 if is("item") => Tag::Item,
            4 if is("link") => Tag::Link,
            4 if is("guid") => Tag::Guid,
            4 if is("date") => Tag::Date,
            4 if is("feed") => Tag::Feed,
            5 if is("entry") => Tag::Entry,
            6 if is("urlset") => Tag::Urlset,
            6 if is("issued") => Tag::Issued,
            7 if is("lastmod") => Tag::Lastmod,
            7 if is("sitemap") => Tag::Sitemap,
            7 if is("pubdate") => Tag::PubDate,
            7 if is("updated") => Tag::Updated,
            7 if is("channel") => Tag::Channel,
            8 if is("priority") => Tag::Priority,
            8 if is("modified") => Tag::Modified,
            9 if is("published") => Tag::Published,
            10 if is("changefreq") => Tag::Changefreq,
            12 if is("sitemapindex") => Tag::SitemapIndex,
            13 if is("lastbuilddate") => Tag::LastBuildDate,
            _ => Tag::Other,
        }
    }
}

/// The stack of open elements, in buffers reused as the depth goes up and down.
#[derive(Debug, Default)]
pub(super) struct Names {
    /// The qualified names of the open elements, one after the other.
    qnames: String,
    /// Per open element: where its qualified name starts in `qnames`, where its local name
    /// starts, and its tag.
    open: Vec<(usize, usize, Tag)>,
}

impl Names {
    /// Opens an element named `qname` (its local name is the part after the first `:`, as
    /// quick-xml has it).
    #[inline]
    pub(super) fn push(&mut self, qname: &str) {
        let start = self.qnames.len();
        self.qnames.push_str(qname);
        // Names are short: a plain loop beats a vectorised search here.
        let prefix = qname.bytes().position(|b| b == b':').map_or(0, |i| i + 1);
        self.open
            .push((start, start + prefix, Tag::of(&qname[prefix..])));
    }

    /// Closes the innermost element.
    pub(super) fn pop(&mut self) {
        if let Some((start, _, _)) = self.open.pop() {
            self.qnames.truncate(start);
        }
    }

    /// The number of open elements.
    pub(super) fn len(&self) -> usize {
        self.open.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    /// The tag of the element at `depth` (1 is the root).
    pub(super) fn tag(&self, depth: usize) -> Tag {
        self.open[depth - 1].2
    }

    /// The qualified name of the innermost element, as written.
    pub(super) fn innermost(&self) -> Option<&str> {
        self.open.last().map(|&(start, _, _)| &self.qnames[start..])
    }

    /// The lower-case local name of the element at `depth`, for messages.
    pub(super) fn local_lowercase(&self, depth: usize) -> String {
        let (_, local_start, _) = self.open[depth - 1];
        let end = self
            .open
            .get(depth)
            .map_or(self.qnames.len(), |&(s, _, _)| s);
        self.qnames[local_start..end].to_ascii_lowercase()
    }

    /// The lower-case local names of the open elements, joined as in `urlset><url`.
    pub(super) fn joined(&self) -> String {
        (1..=self.len())
            .map(|depth| self.local_lowercase(depth))
            .collect::<Vec<_>>()
            .join("><")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_ignore_case_and_prefix_and_names_nest() {
        let mut names = Names::default();
        names.push("rdf:RDF");
        names.push("Item");
        names.push("dc:date");
        assert_eq!(
            (names.tag(1), names.tag(2), names.tag(3)),
            (Tag::Rdf, Tag::Item, Tag::Date)
        );
        assert_eq!(names.innermost(), Some("dc:date"));
        assert_eq!(names.joined(), "rdf><item><date");
        names.pop();
        assert_eq!(names.innermost(), Some("Item"));
        names.push("image:loc");
        names.push("x");
        assert_eq!((names.tag(3), names.tag(4)), (Tag::Loc, Tag::Other));
        assert_eq!(names.local_lowercase(1), "rdf");
        names.pop();
        names.pop();
        names.pop();
        names.pop();
        assert!(names.is_empty());
        assert_eq!(names.innermost(), None);
        names.pop();
        assert_eq!(names.len(), 0);
        for name in ["LOC", "lastBuildDate", "a:b:c"] {
            names.push(name);
        }
        assert_eq!(
            (names.tag(1), names.tag(2), names.tag(3)),
            (Tag::Loc, Tag::LastBuildDate, Tag::Other)
        );
        assert_eq!(names.local_lowercase(3), "b:c");
    }
}
