//! The engine's state as plain data: what the store saves in SQLite and loads back. Derived
//! indexes (in-link and vote counts, URLs by content, the near-duplicate index) are not saved;
//! [`DedupEngine::from_state`] rebuilds them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::class::Class;
use super::config::DedupConfig;
use super::engine::DedupEngine;
use super::near::NearIndex;
use super::redirects::{PermanentRedirects, RedirectError};
use super::resemblance::LshIndex;
pub use super::url_record::UrlRecord;
use super::urlnorm::url_fingerprint;

/// Everything the engine knows, as plain data to save (and load with [`DedupEngine::from_state`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DedupState {
    /// Known URLs.
    pub urls: Vec<UrlRecord>,
    /// All classes, including single-member ones.
    pub classes: Vec<Class>,
    /// Permanent redirects as observed: (source, immediate target).
    pub permanent: Vec<(String, String)>,
    /// Redirect errors seen.
    pub errors: Vec<RedirectError>,
    /// Near-duplicate group of each content fingerprint.
    pub near_groups: Vec<(u64, u64)>,
    /// The next near-group number.
    pub next_group: u64,
}

impl DedupEngine {
    /// Everything the engine knows, as plain data (sorted, so equal states compare equal).
    pub fn state(&self) -> DedupState {
        let mut urls: Vec<UrlRecord> = self.urls.values().cloned().collect();
        urls.sort_by(|a, b| a.url.cmp(&b.url));
        let mut classes: Vec<Class> = self.classes.values().cloned().collect();
        classes.sort_by_key(|c| c.id);
        let mut near_groups: Vec<(u64, u64)> =
            self.group_of.iter().map(|(&c, &g)| (c, g)).collect();
        near_groups.sort_unstable();
        DedupState {
            urls,
            classes,
            permanent: self
                .permanent
                .hops()
                .map(|(s, t)| (s.to_string(), t.to_string()))
                .collect(),
            errors: self.errors.clone(),
            near_groups,
            next_group: self.next_group,
        }
    }

    /// An engine with a saved state; the derived indexes (in-links, votes, near index) are rebuilt.
    pub fn from_state(config: DedupConfig, state: DedupState) -> Self {
        let mut engine = DedupEngine::new(config);
        // What was loaded is saved: only what changes from here on is written.
        engine.unsaved.errors_saved = state.errors.len();
        engine.unsaved.next_group_saved = state.next_group;
        let (permanent, mut errors) = PermanentRedirects::from_hops(state.permanent);
        engine.permanent = permanent;
        engine.errors = state.errors;
        for e in errors.drain(..) {
            if !engine.errors.contains(&e) {
                engine.errors.push(e);
            }
        }
        let mut simhashes = BTreeMap::new();
        for record in state.urls {
            for fp in &record.out_links {
                *engine.in_links.entry(*fp).or_default() += 1;
            }
            for fp in &record.external_out_links {
                *engine.external_in_links.entry(*fp).or_default() += 1;
            }
            if let Some(target) = &record.declared_canonical {
                *engine.votes.entry(url_fingerprint(target)).or_default() += 1;
            }
            if let (Some(fp), Some(sim)) = (record.content_fp, record.simhash) {
                engine
                    .by_content
                    .entry(fp)
                    .or_default()
                    .insert(url_fingerprint(&record.url));
                simhashes.insert(fp, sim);
                if let Some(sketch) = &record.sketch {
                    engine.sketches.insert(fp, sketch.clone());
                }
            }
            engine.urls.insert(record);
        }
        engine.near = NearIndex::new(engine.config.near_distance);
        for (&fp, &sim) in simhashes.iter().filter(|&(_, &sim)| sim != 0) {
            engine.near.insert(sim, fp);
        }
        engine.lsh = LshIndex::new();
        for (&fp, sketch) in &engine.sketches {
            engine.lsh.insert(sketch, fp);
        }
        for (content, group) in state.near_groups {
            engine.group_of.insert(content, group);
            engine.groups.entry(group).or_default().insert(content);
        }
        engine.next_group = state.next_group.max(1);
        engine.classes = state.classes.into_iter().map(|c| (c.id, c)).collect();
        engine
    }
}
