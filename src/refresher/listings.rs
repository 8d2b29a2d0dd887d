//! What a discovery pass's sitemaps said of the pages they list: each page with its `lastmod`
//! and when the sitemap was read, for the scheduler's judgement of the host's `lastmod`s and of
//! the span in which a sitemap kept quiet about a copy ([`crate::scheduler::lastmod`]).
//!
//! A sitemap that answers 304 Not Modified still lists what it listed at its last read. Its
//! pages (those it named first, by the store's `discovered_from`) are listed again at this read
//! with their stored `lastmod`: dropping them made an unchanged sitemap, the usual answer of a
//! host whose pages rarely change, say nothing of the time since, so the demo's `live` pages
//! were judged as if nothing had watched them (their estimated age 5 times their true age).
//! The stored `lastmod` is the newest any read gave; a newer one than this sitemap's errs
//! towards an older copy (no quiet span), never a younger one.

use std::collections::HashMap;

use crate::store::urls::UrlRow;

/// A page a sitemap listed with a `lastmod`, and when the sitemap was read (clock ms).
#[derive(Debug, Clone, PartialEq)]
struct Listed {
    url: String,
    read_ms: i64,
    lastmod_ms: i64,
}

/// The listings of one discovery pass, resolved to row ids as the pass reads the site's rows.
#[derive(Debug, Default)]
pub struct Listings {
    /// Pages read in sitemaps that came with a body.
    read: Vec<Listed>,
    /// Sitemaps that answered 304, with when.
    unchanged: HashMap<String, i64>,
    /// (row id, read at, lastmod), clock ms: what the scheduler is told.
    resolved: Vec<(i64, i64, i64)>,
}

impl Listings {
    /// A sitemap read at `read_ms` listed `url` with `lastmod_ms`.
    pub fn listed(&mut self, url: String, read_ms: i64, lastmod_ms: i64) {
        self.read.push(Listed {
            url,
            read_ms,
            lastmod_ms,
        });
    }

    /// The sitemap `url` answered 304 Not Modified at `read_ms`.
    pub fn unchanged(&mut self, url: &str, read_ms: i64) {
        self.unchanged.insert(url.to_string(), read_ms);
    }

    /// The URLs of the pages read, whose row ids [`Listings::into_resolved`] takes.
    pub fn urls(&self) -> impl Iterator<Item = &str> {
        self.read.iter().map(|l| l.url.as_str())
    }

    /// Takes from `rows` (a page of the site's rows; each row once over the calls) the pages
    /// an unchanged sitemap named first, listed at its read with their stored `lastmod`.
    pub fn resolve(&mut self, rows: &[UrlRow]) {
        for row in rows.iter().filter(|row| row.kind == "page") {
            let from_unchanged = row
                .discovered_from
                .as_deref()
                .and_then(|from| self.unchanged.get(from));
            // A row updated without a lastmod stores 0: no lastmod.
            let lastmod = row.lastmod_ms.filter(|&m| m > 0);
            if let (Some(&read_ms), Some(lastmod)) = (from_unchanged, lastmod) {
                self.resolved.push((row.id, read_ms, lastmod));
            }
        }
    }

    /// Every listing with its row id: the pages read (by `ids`, URL to row id) and those
    /// [`Listings::resolve`] found.
    pub fn into_resolved(self, ids: &HashMap<&str, Option<i64>>) -> Vec<(i64, i64, i64)> {
        let mut out = self.resolved;
        out.extend(
            self.read
                .iter()
                .filter_map(|l| Some(((*ids.get(l.url.as_str())?)?, l.read_ms, l.lastmod_ms))),
        );
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
        let ids = HashMap::from([("http://a.test/9", Some(9))]);
        assert_eq!(listings.into_resolved(&ids), vec![(1, 40, 5), (9, 50, 7)]);
    }

    #[test]
    fn a_page_read_without_a_row_is_not_listed() {
        let mut listings = Listings::default();
        listings.listed("http://a.test/new".into(), 50, 7);
        let ids = HashMap::from([("http://a.test/new", None)]);
        assert!(listings.into_resolved(&ids).is_empty());
    }
}
