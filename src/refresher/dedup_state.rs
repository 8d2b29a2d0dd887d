//! The dedup engine as a run holds it: loaded from the store at start, behind the lock that
//! keeps its saves in the order it made them, and the write each observation leaves to save
//! (used by [`super::dedup_hook`]).

use std::collections::BTreeSet;
use std::sync::atomic::AtomicU64;

use tokio::sync::Mutex;

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
    /// How many times the engine was told of rows no longer pages, moved under its lock
    /// ([`super::dedup_hook::forget`]): a check that looked up where its redirect ended before
    /// it moved looks again (the target may have been made a sitemap or a feed since).
    pub(super) forgettings: AtomicU64,
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
}

impl Dedup {
    /// Loads the engine's saved state from the store (an empty engine on a new database).
    pub async fn load(store: &Store, config: DedupConfig) -> anyhow::Result<Dedup> {
        let state = store.load_dedup_state().await?;
        let engine = DedupEngine::from_state(config.clone(), state);
        Ok(Dedup {
            inner: Mutex::new(Runtime::new(engine)),
            config,
            forgettings: AtomicU64::new(0),
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
    /// The engine.
    pub(super) fn new(engine: DedupEngine) -> Self {
        Runtime { engine }
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
