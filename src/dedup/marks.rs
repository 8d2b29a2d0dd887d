//! The marks the dedup engine leaves on what it modifies (URL records, classes, permanent-redirect
//! sources, near-group entries) between two saves; [`super::changes`] turns them into rows. Plain
//! data, so the engine can hold it without knowing how changes are written.

use std::collections::HashSet;

use super::class::ClassId;

/// The engine's marks since the last save.
#[derive(Debug, Clone, Default)]
pub(super) struct Unsaved {
    /// URL records touched.
    pub(super) urls: HashSet<String>,
    /// Classes touched.
    pub(super) classes: HashSet<ClassId>,
    /// Permanent-redirect sources touched.
    pub(super) redirects: HashSet<String>,
    /// Contents whose near group was touched.
    pub(super) near: HashSet<u64>,
    /// How many of the engine's redirect errors were saved.
    pub(super) errors_saved: usize,
    /// The next near-group number as saved.
    pub(super) next_group_saved: u64,
}

impl Unsaved {
    /// Marks a URL record.
    pub(super) fn url(&mut self, url: &str) {
        if !self.urls.contains(url) {
            self.urls.insert(url.to_string());
        }
    }

    /// Marks a class.
    pub(super) fn class(&mut self, id: ClassId) {
        self.classes.insert(id);
    }

    /// Marks a permanent-redirect source.
    pub(super) fn redirect(&mut self, source: &str) {
        if !self.redirects.contains(source) {
            self.redirects.insert(source.to_string());
        }
    }

    /// Marks a content's near group.
    pub(super) fn near(&mut self, content: u64) {
        self.near.insert(content);
    }
}
