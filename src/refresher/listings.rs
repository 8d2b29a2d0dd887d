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
//! Its pages are those its last read with a body listed: each page records the sitemap that
//! listed it, when, and the `lastmod` that sitemap gave (`listed_in`, `listed_ms`,
//! `listed_lastmod_ms`), and the sitemap's own row when it last listed its pages, so a page it
//! dropped since (listed before that) is not its own any more, and a page two sitemaps list
//! belongs to the one that read it last, with that one's `lastmod`. Rows written before these
//! columns existed (no sitemap has listed them since) keep the old rule until their sitemap
//! next comes with a body: the pages it named first, with the newest `lastmod` any source gave.
//! A read skipped (a ttl not run out, another worker's host) lists nothing.

use std::collections::HashMap;

use crate::store::urls::UrlRow;

/// A sitemap that answered 304.
#[derive(Debug, Clone, Copy)]
struct Unchanged {
    /// When (clock ms).
    read_ms: i64,
    /// When it last listed its pages, if it has since the listing columns came.
    listed_ms: Option<i64>,
    /// Whether its last change came after it last listed its pages: a kill between saving the
    /// read's validators and writing its pages left the listing of the read before, which
    /// this 304 must not repeat.
    listing_behind: bool,
}

/// The listings of one discovery pass, resolved to row ids as the pass reads the site's rows.
#[derive(Debug)]
pub struct Listings {
    /// Pages read in sitemaps that came with a body: (index in `urls`, read at, lastmod).
    read: Vec<(usize, i64, i64)>,
    /// Their URLs, each once, with the index of its row id in `ids`.
    urls: HashMap<String, usize>,
    /// Row ids of `urls`, once [`Listings::resolve`] met their rows.
    ids: Vec<Option<i64>>,
    /// Sitemaps that answered 304, by row id.
    unchanged: HashMap<i64, Unchanged>,
    /// The same by URL, for the rows no sitemap has listed since the listing columns came.
    unchanged_urls: HashMap<String, i64>,
    /// (row id, read at, lastmod), clock ms: the pages of the unchanged sitemaps.
    replayed: Vec<(i64, i64, i64)>,
    /// When the pass started (clock ms): the pages it finds new are due then.
    pass_started_ms: i64,
}

impl Listings {
    /// The listings of a discovery pass that started at `started_ms`.
    pub fn of_pass(started_ms: i64) -> Self {
        Self {
            read: Vec::new(),
            urls: HashMap::new(),
            ids: Vec::new(),
            unchanged: HashMap::new(),
            unchanged_urls: HashMap::new(),
            replayed: Vec::new(),
            pass_started_ms: started_ms,
        }
    }

    /// When the pass started (clock ms): its new pages are all due then
    /// ([`crate::store::Store::upsert_found_in_pass`]).
    pub fn pass_started_ms(&self) -> i64 {
        self.pass_started_ms
    }

    /// A sitemap read at `read_ms` listed `url` with `lastmod_ms`.
    pub fn listed(&mut self, url: String, read_ms: i64, lastmod_ms: i64) {
        let next = self.ids.len();
        let index = *self.urls.entry(url).or_insert(next);
        if index == next {
            self.ids.push(None);
        }
        self.read.push((index, read_ms, lastmod_ms));
    }

    /// The sitemap of row `sitemap` answered 304 Not Modified at `read_ms`.
    pub fn unchanged(&mut self, sitemap: &UrlRow, read_ms: i64) {
        let listed_ms = sitemap.listed_ms;
        let listing_behind = listed_ms
            .zip(sitemap.last_changed_ms)
            .is_some_and(|(listed, changed)| changed > listed);
        let unchanged = Unchanged {
            read_ms,
            listed_ms,
            listing_behind,
        };
        self.unchanged.insert(sitemap.id, unchanged);
        self.unchanged_urls.insert(sitemap.url.clone(), sitemap.id);
    }

    /// The read at which an unchanged sitemap lists `row` again, and the `lastmod` it gives.
    fn replay(&self, row: &UrlRow) -> Option<(i64, i64)> {
        // A row updated without a lastmod stores 0: no lastmod.
        let given = |lastmod: Option<i64>| lastmod.filter(|&m| m > 0);
        if let Some(sitemap) = row.listed_in {
            let unchanged = self.unchanged.get(&sitemap)?;
            let still_listed = row.listed_ms >= unchanged.listed_ms && !unchanged.listing_behind;
            return still_listed
                .then_some(unchanged.read_ms)
                .zip(given(row.listed_lastmod_ms));
        }
        let sitemap = self.unchanged_urls.get(row.discovered_from.as_deref()?)?;
        let unchanged = self.unchanged[sitemap];
        unchanged
            .listed_ms
            .is_none()
            .then_some(unchanged.read_ms)
            .zip(given(row.lastmod_ms))
    }

    /// Takes from `rows` (a page of the site's rows; each row once over the calls) the row ids
    /// of the pages read, and the pages of the unchanged sitemaps, listed at their read with
    /// the `lastmod` they gave.
    pub fn resolve(&mut self, rows: &[UrlRow]) {
        for row in rows.iter().filter(|row| row.kind == "page") {
            if let Some(&index) = self.urls.get(&row.url) {
                self.ids[index] = Some(row.id);
            }
            if let Some((read_ms, lastmod)) = self.replay(row) {
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

    const SITEMAP: i64 = 100;

    fn row(id: i64, kind: &str, from: Option<&str>, lastmod_ms: Option<i64>) -> UrlRow {
        UrlRow {
            lastmod_ms,
            discovered_from: from.map(str::to_string),
            ..UrlRow::for_tests(id, kind)
        }
    }

    /// A page `sitemap` listed at `at` with `lastmod` (the newest of any source: `newest`).
    fn listed(id: i64, sitemap: i64, at: i64, lastmod: Option<i64>, newest: i64) -> UrlRow {
        UrlRow {
            listed_in: Some(sitemap),
            listed_ms: Some(at),
            listed_lastmod_ms: lastmod,
            ..row(id, "page", Some("http://a.test/first.xml"), Some(newest))
        }
    }

    /// The sitemap's row: it last listed its pages at `listed_ms`.
    fn sitemap(listed_ms: Option<i64>) -> UrlRow {
        UrlRow {
            url: "http://a.test/s1.xml".into(),
            listed_ms,
            ..row(SITEMAP, "sitemap", Some("schedule"), None)
        }
    }

    #[test]
    fn an_unchanged_sitemap_lists_again_the_pages_of_its_last_read_with_their_lastmod() {
        let mut listings = Listings::of_pass(0);
        listings.listed("http://a.test/9".into(), 50, 7);
        listings.unchanged(&sitemap(Some(30)), 40);
        listings.resolve(&[
            listed(1, SITEMAP, 30, Some(5), 5),
            // Dropped at its read of 30: listed only before.
            listed(2, SITEMAP, 20, Some(5), 5),
            // Listed last by another sitemap (read with a body, or not read).
            listed(3, 200, 30, Some(5), 5),
            // Listed without a lastmod: nothing to list.
            listed(4, SITEMAP, 30, None, 5),
            // Another source gave a newer lastmod: this sitemap's own counts.
            listed(6, SITEMAP, 30, Some(6), 9),
            // A child sitemap is no page.
            UrlRow {
                listed_in: Some(SITEMAP),
                listed_ms: Some(30),
                listed_lastmod_ms: Some(5),
                ..row(5, "sitemap", None, Some(5))
            },
        ]);
        // The page read is met later, in another page of rows.
        listings.resolve(&[UrlRow {
            url: "http://a.test/9".into(),
            ..row(9, "page", None, Some(7))
        }]);
        assert_eq!(
            listings.into_resolved(),
            vec![(1, 40, 5), (6, 40, 6), (9, 50, 7)]
        );
    }

    #[test]
    fn a_kill_before_the_sitemap_marked_its_read_leaves_every_page_it_listed_its_own() {
        let mut listings = Listings::of_pass(0);
        listings.unchanged(&sitemap(None), 40);
        listings.resolve(&[listed(1, SITEMAP, 30, Some(5), 5)]);
        assert_eq!(listings.into_resolved(), vec![(1, 40, 5)]);
    }

    #[test]
    fn a_kill_before_a_changed_sitemap_listed_its_pages_lists_nothing_at_its_304() {
        // Its read of 35 changed it (validators saved) and was killed before its pages were
        // written: the pages still carry the listing of 30, which the 304 must not repeat.
        let mut listings = Listings::of_pass(0);
        let behind = UrlRow {
            last_changed_ms: Some(35),
            ..sitemap(Some(30))
        };
        listings.unchanged(&behind, 40);
        listings.resolve(&[listed(1, SITEMAP, 30, Some(5), 5)]);
        assert!(listings.into_resolved().is_empty());
    }

    #[test]
    fn rows_from_before_the_listing_columns_follow_what_named_them_first_until_it_lists_again() {
        let first = |id, from: &str| row(id, "page", Some(from), Some(5));
        for (listed_since, want) in [(None, vec![(1, 40, 5)]), (Some(30), vec![])] {
            let mut listings = Listings::of_pass(0);
            listings.unchanged(&sitemap(listed_since), 40);
            listings.resolve(&[
                first(1, "http://a.test/s1.xml"),
                first(2, "http://a.test/s2.xml"),
                // Never given a lastmod (stored as 0).
                UrlRow {
                    lastmod_ms: Some(0),
                    ..first(3, "http://a.test/s1.xml")
                },
            ]);
            assert_eq!(listings.into_resolved(), want, "{listed_since:?}");
        }
    }

    #[test]
    fn a_page_read_without_a_row_is_not_listed() {
        let mut listings = Listings::of_pass(0);
        listings.listed("http://a.test/new".into(), 50, 7);
        listings.resolve(&[row(1, "page", None, Some(7))]);
        assert!(listings.into_resolved().is_empty());
    }
}
