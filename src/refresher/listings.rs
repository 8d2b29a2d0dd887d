//! What a discovery pass's sitemaps said of the pages they list: each page with its `lastmod`
//! and when the sitemap was read, for the scheduler's judgement of the host's `lastmod`s and of
//! the span in which a sitemap kept quiet about a copy ([`crate::scheduler::lastmod`]).
//!
//! A sitemap that answers 304 Not Modified still lists what it listed at its last read. Its
//! pages are listed again at this read with their stored `lastmod`: dropping them made an
//! unchanged sitemap, the usual answer of a host whose pages rarely change, say nothing of the
//! time since, so the demo's `live` pages were judged as if nothing had watched them (their
//! estimated age 5 times their true age). A 304 read is then a read like any other: the first
//! read after a check saw a change judges the host's `lastmod` (an honest sitemap regenerated
//! only some time after its pages change is judged by what it said then).
//!
//! Its pages are those it named first (the store's `discovered_from`), with the newest
//! `lastmod` any read gave them. Not done: a membership of each page in the sitemaps that list
//! it, with each one's own `lastmod`. Until then a page the sitemap named first and dropped
//! since is listed again by its 304s (its quiet span grows though the sitemap no longer lists
//! it), a page another source named first is not, and a `lastmod` another sitemap gave can
//! count for this one; a read skipped (a ttl not run out, another worker's host) lists nothing.

use std::collections::HashMap;

use crate::store::urls::UrlRow;

/// The listings of one discovery pass, resolved to row ids as the pass reads the site's rows.
#[derive(Debug, Default)]
pub struct Listings {
    /// Pages read in sitemaps that came with a body: (index in `urls`, read at, lastmod).
    read: Vec<(usize, i64, i64)>,
    /// Their URLs, each once, with the index of its row id in `ids`.
    urls: HashMap<String, usize>,
    /// Row ids of `urls`, once [`Listings::resolve`] met their rows.
    ids: Vec<Option<i64>>,
    /// Sitemaps that answered 304, with when.
    unchanged: HashMap<String, i64>,
    /// (row id, read at, lastmod), clock ms: the pages of the unchanged sitemaps.
    replayed: Vec<(i64, i64, i64)>,
}

impl Listings {
    /// A sitemap read at `read_ms` listed `url` with `lastmod_ms`.
    pub fn listed(&mut self, url: String, read_ms: i64, lastmod_ms: i64) {
        let next = self.ids.len();
        let index = *self.urls.entry(url).or_insert(next);
        if index == next {
            self.ids.push(None);
        }
        self.read.push((index, read_ms, lastmod_ms));
    }

    /// The sitemap `url` answered 304 Not Modified at `read_ms`.
    pub fn unchanged(&mut self, url: &str, read_ms: i64) {
        self.unchanged.insert(url.to_string(), read_ms);
    }

    /// Takes from `rows` (a page of the site's rows; each row once over the calls) the row ids
    /// of the pages read, and the pages an unchanged sitemap named first, listed at its read
    /// with their stored `lastmod`.
    pub fn resolve(&mut self, rows: &[UrlRow]) {
        for row in rows.iter().filter(|row| row.kind == "page") {
            if let Some(&index) = self.urls.get(&row.url) {
                self.ids[index] = Some(row.id);
            }
            let from_unchanged = row
                .discovered_from
                .as_deref()
                .and_then(|from| self.unchanged.get(from));
            // A row updated without a lastmod stores 0: no lastmod.
            let lastmod = row.lastmod_ms.filter(|&m| m > 0);
            if let (Some(&read_ms), Some(lastmod)) = (from_unchanged, lastmod) {
                self.replayed.push((row.id, read_ms, lastmod));
            }
        }
    }

    /// Every listing whose row was met, as (row id, read at, lastmod), in the order of the
    /// reads (the first read after a check that saw a change judges the host's `lastmod`).
    pub fn into_resolved(self) -> Vec<(i64, i64, i64)> {
        let ids = self.ids;
        let mut out = self.replayed;
        out.extend(
            self.read
                .into_iter()
                .filter_map(|(index, read_ms, lastmod)| Some((ids[index]?, read_ms, lastmod))),
        );
        out.sort_by_key(|&(_, read_ms, _)| read_ms);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64, kind: &str, from: Option<&str>, lastmod_ms: Option<i64>) -> UrlRow {
        UrlRow {
            id,
            url: format!("http://a.test/{id}"),
            site_id: 1,
            host_id: 1,
            kind: kind.to_string(),
            discovered_ms: 0,
            lastmod_ms,
            changefreq: None,
            priority: None,
            disallowed: 0,
            checks: 0,
            changes: 0,
            last_checked_ms: None,
            last_status: None,
            last_error: None,
            last_changed_ms: None,
            etag: None,
            last_modified: None,
            fingerprint: None,
            known_change_ms: None,
            min_interval_ms: None,
            rate_per_day: None,
            rate_low: None,
            rate_high: None,
            rate_shape: None,
            rate_scale: None,
            weight: 1.0,
            planned_per_day: None,
            next_due_ms: None,
            stats: None,
            content_fingerprint: None,
            content_changes: 0,
            discovered_from: from.map(str::to_string),
        }
    }

    #[test]
    fn an_unchanged_sitemap_lists_its_pages_again_at_its_read() {
        let (same, other) = ("http://a.test/s1.xml", "http://a.test/s2.xml");
        let mut listings = Listings::default();
        listings.listed("http://a.test/9".into(), 50, 7);
        listings.unchanged(same, 40);
        listings.resolve(&[
            row(1, "page", Some(same), Some(5)),
            // Named first by another sitemap, which came with a body (or was not read).
            row(2, "page", Some(other), Some(5)),
            // Never given a lastmod (stored as 0), or none at all: nothing to list.
            row(3, "page", Some(same), Some(0)),
            row(4, "page", Some(same), None),
            // A child sitemap is no page.
            row(5, "sitemap", Some(same), Some(5)),
        ]);
        // The page read is met later, in another page of rows.
        listings.resolve(&[UrlRow {
            url: "http://a.test/9".into(),
            ..row(9, "page", None, Some(7))
        }]);
        assert_eq!(listings.into_resolved(), vec![(1, 40, 5), (9, 50, 7)]);
    }

    #[test]
    fn a_page_read_without_a_row_is_not_listed() {
        let mut listings = Listings::default();
        listings.listed("http://a.test/new".into(), 50, 7);
        listings.resolve(&[row(1, "page", None, Some(7))]);
        assert!(listings.into_resolved().is_empty());
    }
}
