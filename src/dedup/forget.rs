//! A URL that stops being a page ([`DedupEngine::forget`]): its row became a sitemap or a feed
//! (a schedule names it so, or discovery read it as one), so its body is no page's content and
//! it holds no place among the pages that share it.

use std::collections::BTreeSet;

use super::engine::DedupEngine;
use super::page::{DedupError, Hop};
use super::redirects::RedirectError;

impl DedupEngine {
    /// Forgets `url` as a page: its row became a sitemap or a feed, whose body is no page's
    /// content. It leaves its content (the content and its near group stay while another URL
    /// serves it), its classes (a place it held goes to the best of the rest), and its links and
    /// `rel=canonical` stop counting for their targets; its record goes, and with it its rows
    /// at the next save ([`DedupChanges::removed_urls`](super::DedupChanges)). What the engine
    /// knows of it as a target (links and votes from pages, a permanent redirect) stays: filed
    /// again as a page one day, it stands as it would have. Answers whether it had a record.
    ///
    /// `url` is the row's URL, forgotten only when the engine files it under that very text
    /// (records are kept under normalised URLs): another row's URL that normalises to it
    /// (tracking parameters dropped, say) may be a page still, whose record this is.
    pub fn forget(&mut self, url: &str) -> bool {
        if !self.urls.contains(url) {
            return false;
        }
        let url = url.to_string();
        let mut touched = BTreeSet::new();
        self.set_out_links(&url, &[], &mut touched);
        self.set_vote(&url, None, &mut touched);
        let record = self.record(&url);
        record.temp_target = None;
        record.sketch = None;
        let old = (record.content_fp.take(), record.simhash.take());
        if let (Some(fp), Some(sim)) = old {
            self.leave_content(&url, fp, sim, &mut touched);
        }
        // Out of every class (it wants none now), then gone.
        self.sync(&url);
        self.urls.remove(&url);
        touched.remove(&url);
        for u in &touched {
            self.sync(u);
        }
        true
    }

    /// Files a fetch of `url` that redirected to a URL that is no page (a sitemap, a feed):
    /// its redirects as [`Self::observe_redirects`] files them, and `url`, which serves no page
    /// now, leaves the content it had (a temporary redirect's source kept it, and its place
    /// as the canonical of pages that still serve it).
    pub fn observe_redirects_to_no_page(
        &mut self,
        url: &str,
        chain: &[Hop],
        last: &str,
    ) -> Result<Vec<RedirectError>, DedupError> {
        let errors = self.observe_redirects(url, chain, last)?;
        let url = self.norm(url)?;
        if self.urls.get(&url).is_some_and(|r| r.content_fp.is_some()) {
            let mut touched = BTreeSet::new();
            let record = self.record(&url);
            record.sketch = None;
            let old = (record.content_fp.take(), record.simhash.take());
            if let (Some(fp), Some(sim)) = old {
                self.leave_content(&url, fp, sim, &mut touched);
            }
            touched.insert(url);
            for u in &touched {
                self.sync(u);
            }
        }
        Ok(errors)
    }
}

#[cfg(test)]
mod tests {
    use crate::dedup::{DedupConfig, DedupEngine, FetchedPage, Hop};

    const STORY: &str = "<p>The ferry across the lower crossing carried its first passengers on \
        Saturday after two winters tied up at the boatyard, paid for by a raffle.</p>";

    fn page(url: &str, priority: Option<f64>) -> FetchedPage {
        FetchedPage {
            sitemap_priority: priority,
            ..FetchedPage::html(url, format!("<html><body>{STORY}</body></html>"))
        }
    }

    #[test]
    fn a_forgotten_canonical_gives_its_class_to_the_next_and_its_rows_go() {
        let mut engine = DedupEngine::new(DedupConfig::default());
        let first = engine.observe(page("http://a.test/x", Some(0.9))).unwrap();
        let second = engine.observe(page("http://b.test/x", None)).unwrap();
        assert_eq!(first.class, second.class);
        assert_eq!(second.canonical.as_deref(), Some("http://a.test/x"));
        engine.take_changes();

        assert!(engine.forget("http://a.test/x"));
        assert!(engine.is_canonical("http://b.test/x"));
        assert!(!engine.is_canonical("http://a.test/x"));
        let class = (engine.content_class("http://b.test/x"))
            .expect("the class stays while b serves its content");
        assert_eq!(class.id, second.class);
        assert_eq!(class.canonical.as_deref(), Some("http://b.test/x"));
        assert_eq!(class.members.len(), 1);
        let changes = engine.take_changes();
        assert_eq!(changes.removed_urls, ["http://a.test/x"]);
        assert!(changes.touched.contains("http://b.test/x"));
        assert!(
            engine
                .state()
                .urls
                .iter()
                .all(|r| r.url != "http://a.test/x")
        );
        // Once: nothing more to forget, nothing to save.
        assert!(!engine.forget("http://a.test/x"));
        assert!(!engine.forget("not a url"));
        // Another row's URL that files under b's: b is a page still.
        assert!(!engine.forget("http://b.test/x?utm_source=feed"));
        assert!(engine.is_canonical("http://b.test/x"));
        assert!(!engine.has_unsaved_changes());

        // Its content goes with its last user, and the class with it.
        assert!(engine.forget("http://b.test/x"));
        assert!(engine.state().classes.is_empty());
        let changes = engine.take_changes();
        assert_eq!(changes.removed_classes, [second.class]);
        assert!(engine.state().urls.is_empty());
    }

    #[test]
    fn a_page_redirecting_to_no_page_leaves_its_content_to_the_pages_that_serve_it() {
        let mut engine = DedupEngine::new(DedupConfig::default());
        engine.observe(page("http://a.test/x", Some(0.9))).unwrap();
        engine.observe(page("http://b.test/x", None)).unwrap();
        assert!(engine.is_canonical("http://a.test/x"));
        let chain = [Hop {
            url: "http://a.test/x".into(),
            status: 302,
        }];
        let to = "http://a.test/feed.xml";
        engine
            .observe_redirects_to_no_page("http://a.test/x", &chain, to)
            .unwrap();
        assert!(engine.is_canonical("http://b.test/x"));
        let state = engine.state();
        let a = state.urls.iter().find(|r| r.url == "http://a.test/x");
        let a = a.expect("a's record: a redirect");
        assert_eq!((a.content_fp, a.temp_target.as_deref()), (None, Some(to)));
        assert!(
            state.urls.iter().all(|r| r.url != to),
            "no page filed at the feed"
        );
    }
}
