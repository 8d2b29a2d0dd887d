//! The dedup engine as a run holds it: loaded from the store at start, behind the lock that
//! keeps its saves in the order it made them, and the write each observation leaves to save
//! (used by [`super::dedup_hook`]).

use std::collections::{BTreeSet, HashSet};

use tokio::sync::Mutex;

use crate::dedup::urlnorm::normalize_str;
use crate::dedup::{DedupConfig, DedupEngine};
use crate::store::Store;
use crate::store::dedup::DedupWrite;

/// The engine. A tokio Mutex, held across the database write, so that saves reach SQLite in the
/// order the engine made them.
pub struct Dedup {
    /// The engine.
    pub(super) inner: Mutex<Runtime>,
    /// The engine's settings, to extract a page without waiting for the engine.
    pub(super) config: DedupConfig,
    /// Links this run has recorded as refused (robots.txt, the site's filters): each once a
    /// run, not at every check of every page that gives it.
    refused_links: std::sync::Mutex<std::collections::HashSet<String>>,
}

/// The most links [`Dedup::first_refusal`] remembers; past it a link is recorded each time.
const REFUSED_LINKS_REMEMBERED: usize = 100_000;

/// The engine, which knows what of its state is not saved yet.
pub(super) struct Runtime {
    /// The engine.
    pub(super) engine: DedupEngine,
    /// The URLs (as the engine files them) it forgot as pages this run, their rows sitemaps or
    /// feeds: a fetch that ends at one files no content there (a check in flight when its row
    /// or its redirect's target changed kind would put back what was forgotten).
    no_pages: HashSet<String>,
}

impl Dedup {
    /// Loads the engine's saved state from the store (an empty engine on a new database).
    pub async fn load(store: &Store, config: DedupConfig) -> anyhow::Result<Dedup> {
        let state = store.load_dedup_state().await?;
        let engine = DedupEngine::from_state(config.clone(), state);
        Ok(Dedup {
            inner: Mutex::new(Runtime::new(engine)),
            config,
            refused_links: Default::default(),
        })
    }

    /// Whether this is the run's first refusal of `link` (remembered from now on).
    pub(super) fn first_refusal(&self, link: &str) -> bool {
        let mut refused = self.refused_links.lock().unwrap_or_else(|e| e.into_inner());
        if refused.contains(link) {
            return false;
        }
        if refused.len() < REFUSED_LINKS_REMEMBERED {
            refused.insert(link.to_string());
        }
        true
    }
}

impl Runtime {
    /// The engine with nothing forgotten yet.
    pub(super) fn new(engine: DedupEngine) -> Self {
        Runtime {
            engine,
            no_pages: HashSet::new(),
        }
    }

    /// Notes that `url`'s row is no page (forgotten only as the text the engine files it
    /// under: [`DedupEngine::forget`]).
    pub(super) fn no_page(&mut self, url: &str) {
        if normalize_str(url, &self.engine.config().url_rules).is_ok_and(|n| n == url) {
            self.no_pages.insert(url.to_string());
        }
    }

    /// The row of `url` is a page again.
    pub(super) fn page_again(&mut self, url: &str) {
        self.no_pages.remove(url);
    }

    /// Whether a fetch that ended at `url` ended at no page (as the engine files it).
    pub(super) fn is_no_page(&self, url: &str) -> bool {
        !self.no_pages.is_empty()
            && normalize_str(url, &self.engine.config().url_rules)
                .is_ok_and(|n| self.no_pages.contains(&n))
    }

    /// The write for this point: the rows changed since the last save, and the weights and
    /// documents of every URL they touch (with `touched`).
    pub(super) fn write(&mut self, mut touched: BTreeSet<String>) -> DedupWrite {
        let mut write = DedupWrite {
            changes: self.engine.take_changes(),
            ..DedupWrite::default()
        };
        touched.extend(write.changes.touched.iter().cloned());
        let engine = &self.engine;
        write.weights = touched
            .iter()
            .map(|u| (u.clone(), engine.planner_weight(u)))
            .collect();
        write.drop_documents = touched
            .into_iter()
            .filter(|u| !engine.is_canonical(u))
            .collect();
        write
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dedup::FetchedPage;

    #[test]
    fn a_url_noted_no_page_is_matched_as_the_engine_files_it_until_a_page_again() {
        let mut rt = Runtime::new(DedupEngine::new(DedupConfig::default()));
        assert!(!rt.is_no_page("http://a.test/s.xml"));
        rt.no_page("http://a.test/s.xml");
        // Not the text the engine files it under: another row's that may be a page.
        rt.no_page("http://a.test/n?utm_source=x");
        assert!(rt.is_no_page("http://a.test/s.xml?utm_source=rss"));
        assert!(!rt.is_no_page("http://a.test/n"));
        rt.page_again("http://a.test/s.xml");
        assert!(!rt.is_no_page("http://a.test/s.xml"));
    }

    #[test]
    fn each_write_carries_what_changed_since_the_last() {
        let mut rt = Runtime::new(DedupEngine::new(DedupConfig::default()));
        let page = FetchedPage::html("http://a.test/", "<p>one page of text</p>");
        rt.engine.observe(page).unwrap();
        let first = rt.write(BTreeSet::new());
        assert_eq!(first.changes.urls.len(), 1);
        assert_eq!(first.weights, vec![("http://a.test/".to_string(), 1.0)]);
        // Nothing new: no rows, only the given URLs get weights.
        let idle = rt.write(BTreeSet::from(["http://a.test/".to_string()]));
        assert!(idle.changes.is_empty());
        assert!(!rt.engine.has_unsaved_changes());
        assert_eq!(idle.weights, vec![("http://a.test/".to_string(), 1.0)]);
    }
}
