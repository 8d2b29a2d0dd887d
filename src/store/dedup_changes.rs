//! What changed in the dedup engine's state since it was last saved: [`SavedDedup`] keeps the
//! last-saved state indexed, and [`SavedDedup::changes_to`] compares a new state with it, row by
//! row, so [`super::Store::save_dedup`] writes only the rows that differ. Pure: no database here.
//!
//! The comparison costs O(known URLs + classes) per save (the engine's state is cloned and
//! compared), because the engine does not report which rows it touched; the rows written are
//! only those that changed.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::dedup::{Class, ClassId, DedupState, RedirectError, UrlRecord};

/// The rows that changed between two saves of the engine's state.
#[derive(Debug, Clone, Default)]
pub struct DedupChanges {
    /// URL records new or changed.
    pub urls: Vec<UrlRecord>,
    /// URL records gone.
    pub removed_urls: Vec<String>,
    /// Classes new or changed (members and canonical written again).
    pub classes: Vec<Class>,
    /// Classes gone.
    pub removed_classes: Vec<ClassId>,
    /// Permanent-redirect hops new or changed: (source, immediate target).
    pub redirects: Vec<(String, String)>,
    /// Permanent-redirect sources that no longer redirect.
    pub removed_redirects: Vec<String>,
    /// Redirect errors not seen before.
    pub new_errors: Vec<RedirectError>,
    /// Near groups of contents, new or moved: (content fingerprint, group).
    pub near: Vec<(u64, u64)>,
    /// Contents no longer in a near group.
    pub removed_near: Vec<u64>,
    /// The engine's next near-group number, when it moved.
    pub next_group: Option<u64>,
    /// URLs whose canonical status (hence planner weight and document) may have moved: changed
    /// records, old and new members of changed classes, changed redirect sources.
    pub touched: BTreeSet<String>,
}

impl DedupChanges {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.urls.is_empty()
            && self.removed_urls.is_empty()
            && self.classes.is_empty()
            && self.removed_classes.is_empty()
            && self.redirects.is_empty()
            && self.removed_redirects.is_empty()
            && self.new_errors.is_empty()
            && self.near.is_empty()
            && self.removed_near.is_empty()
            && self.next_group.is_none()
    }
}

/// The engine's state as last saved, indexed so the next save can write only what changed.
#[derive(Debug, Clone, Default)]
pub struct SavedDedup {
    /// URL records by URL.
    urls: HashMap<String, UrlRecord>,
    /// Classes by id.
    classes: HashMap<ClassId, Class>,
    /// Permanent-redirect hops.
    redirects: BTreeMap<String, String>,
    /// Redirect errors.
    errors: Vec<RedirectError>,
    /// Near group of each content.
    near: HashMap<u64, u64>,
    /// The next near-group number.
    next_group: u64,
}

impl SavedDedup {
    /// What was just loaded (or saved) as `state`.
    pub fn from_state(state: &DedupState) -> Self {
        let mut saved = SavedDedup::default();
        saved.changes_to(state.clone());
        saved
    }

    /// How many URL records were last saved.
    pub fn url_count(&self) -> usize {
        self.urls.len()
    }

    /// The rows of `now` that differ from the last save; `now` becomes the last save.
    pub fn changes_to(&mut self, now: DedupState) -> DedupChanges {
        let mut out = DedupChanges::default();
        let mut seen: BTreeSet<String> = BTreeSet::new();
        for record in now.urls {
            seen.insert(record.url.clone());
            if self.urls.get(&record.url) != Some(&record) {
                out.touched.insert(record.url.clone());
                out.urls.push(record.clone());
                self.urls.insert(record.url.clone(), record);
            }
        }
        let gone: Vec<String> = self
            .urls
            .keys()
            .filter(|u| !seen.contains(*u))
            .cloned()
            .collect();
        for url in gone {
            self.urls.remove(&url);
            out.touched.insert(url.clone());
            out.removed_urls.push(url);
        }

        let mut seen: BTreeSet<ClassId> = BTreeSet::new();
        for class in now.classes {
            seen.insert(class.id);
            let old = self.classes.get(&class.id);
            if old == Some(&class) {
                continue;
            }
            let old_members = old.into_iter().flat_map(|c| &c.members);
            out.touched
                .extend(old_members.chain(&class.members).map(|m| m.url.clone()));
            out.classes.push(class.clone());
            self.classes.insert(class.id, class);
        }
        let gone: Vec<ClassId> = self
            .classes
            .keys()
            .filter(|id| !seen.contains(*id))
            .copied()
            .collect();
        for id in gone {
            if let Some(class) = self.classes.remove(&id) {
                out.touched.extend(class.members.into_iter().map(|m| m.url));
            }
            out.removed_classes.push(id);
        }

        let hops: BTreeMap<String, String> = now.permanent.into_iter().collect();
        for (source, target) in &hops {
            if self.redirects.get(source) != Some(target) {
                out.touched.insert(source.clone());
                out.redirects.push((source.clone(), target.clone()));
            }
        }
        for source in self.redirects.keys().filter(|s| !hops.contains_key(*s)) {
            out.touched.insert(source.clone());
            out.removed_redirects.push(source.clone());
        }
        self.redirects = hops;

        for error in now.errors {
            if !self.errors.contains(&error) {
                out.new_errors.push(error.clone());
                self.errors.push(error);
            }
        }

        let near: HashMap<u64, u64> = now.near_groups.into_iter().collect();
        for (&content, &group) in &near {
            if self.near.get(&content) != Some(&group) {
                out.near.push((content, group));
            }
        }
        out.removed_near = self
            .near
            .keys()
            .filter(|c| !near.contains_key(*c))
            .copied()
            .collect();
        self.near = near;
        if now.next_group != self.next_group {
            out.next_group = Some(now.next_group);
            self.next_group = now.next_group;
        }
        out
    }
}
