//! What changed in the engine since its state was last saved, so that a save writes only those
//! rows: the engine marks every URL record, class, permanent-redirect source and near-group entry
//! it modifies ([`super::marks::Unsaved`]), and [`DedupEngine::take_changes`] turns the marks
//! into rows ([`DedupChanges`]) and clears them. A save costs what the observations since the
//! last one changed, not the size of the engine. Pure: no database here.
//!
//! Marks are conservative: a row marked but left as it was is written again (an upsert of the
//! same values), never the reverse.

use std::collections::BTreeSet;

use super::class::{Class, ClassId};
use super::engine::DedupEngine;
use super::redirects::RedirectError;
use super::url_record::UrlRecord;

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
    /// records, members of changed classes (a member that left is a changed record), changed
    /// redirect sources.
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

impl DedupEngine {
    /// The rows changed since the last call (or since the engine was created or loaded), sorted;
    /// the marks are cleared.
    pub fn take_changes(&mut self) -> DedupChanges {
        let unsaved = std::mem::take(&mut self.unsaved);
        let mut out = DedupChanges::default();
        let mut urls: Vec<String> = unsaved.urls.into_iter().collect();
        urls.sort_unstable();
        for url in urls {
            match self.urls.get(&url) {
                Some(record) => out.urls.push(record.clone()),
                None => out.removed_urls.push(url.clone()),
            }
            out.touched.insert(url);
        }
        let mut classes: Vec<ClassId> = unsaved.classes.into_iter().collect();
        classes.sort_unstable();
        for id in classes {
            match self.classes.get(&id) {
                Some(class) => {
                    out.touched
                        .extend(class.members.iter().map(|m| m.url.clone()));
                    out.classes.push(class.clone());
                }
                None => out.removed_classes.push(id),
            }
        }
        let mut sources: Vec<String> = unsaved.redirects.into_iter().collect();
        sources.sort_unstable();
        for source in sources {
            match self.permanent.target_of(&source) {
                Some(target) => out.redirects.push((source.clone(), target.to_string())),
                None => out.removed_redirects.push(source.clone()),
            }
            out.touched.insert(source);
        }
        out.new_errors = self.errors[unsaved.errors_saved.min(self.errors.len())..].to_vec();
        let mut near: Vec<u64> = unsaved.near.into_iter().collect();
        near.sort_unstable();
        for content in near {
            match self.group_of.get(&content) {
                Some(&group) => out.near.push((content, group)),
                None => out.removed_near.push(content),
            }
        }
        if self.next_group != unsaved.next_group_saved {
            out.next_group = Some(self.next_group);
        }
        self.unsaved.errors_saved = self.errors.len();
        self.unsaved.next_group_saved = self.next_group;
        out
    }

    /// Whether anything changed since the last [`DedupEngine::take_changes`].
    pub fn has_unsaved_changes(&self) -> bool {
        let u = &self.unsaved;
        !(u.urls.is_empty() && u.classes.is_empty() && u.redirects.is_empty() && u.near.is_empty())
            || u.errors_saved != self.errors.len()
            || u.next_group_saved != self.next_group
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    use super::*;
    use crate::dedup::fingerprint_set::FingerprintSet;
    use crate::dedup::{DedupConfig, DedupState, FetchedPage, Hop};

    /// The saved rows, as the store keeps them, with the changes applied one save at a time.
    #[derive(Default)]
    struct Saved {
        urls: BTreeMap<String, UrlRecord>,
        classes: BTreeMap<ClassId, Class>,
        redirects: BTreeMap<String, String>,
        errors: Vec<RedirectError>,
        near: BTreeMap<u64, u64>,
        next_group: u64,
    }

    impl Saved {
        fn apply(&mut self, changes: DedupChanges) {
            for record in changes.urls {
                self.urls.insert(record.url.clone(), record);
            }
            for url in changes.removed_urls {
                self.urls.remove(&url);
            }
            for class in changes.classes {
                self.classes.insert(class.id, class);
            }
            for id in changes.removed_classes {
                self.classes.remove(&id);
            }
            self.redirects.extend(changes.redirects);
            for source in changes.removed_redirects {
                self.redirects.remove(&source);
            }
            self.errors.extend(changes.new_errors);
            self.near.extend(changes.near);
            for content in changes.removed_near {
                self.near.remove(&content);
            }
            if let Some(next) = changes.next_group {
                self.next_group = next;
            }
        }

        fn state(&self) -> DedupState {
            DedupState {
                urls: self.urls.values().cloned().collect(),
                classes: self.classes.values().cloned().collect(),
                permanent: self.redirects.clone().into_iter().collect(),
                errors: self.errors.clone(),
                near_groups: self.near.iter().map(|(&c, &g)| (c, g)).collect(),
                next_group: self.next_group,
            }
        }
    }

    fn text(rng: &mut StdRng) -> String {
        const STORIES: [&str; 4] = [
            "The ferry across the lower crossing carried its first passengers on Saturday after \
             two winters tied up at the boatyard, paid for by a raffle and a sponsored swim.",
            "Council members voted to keep the old library open on Sundays through the winter, \
             after a petition signed by more than four hundred residents of the valley.",
            "A storm brought down the footbridge by the mill on Tuesday night; the path along \
             the river stays closed until engineers have checked the banks downstream.",
            "The market moves to the station car park for the summer while the square is \
             resurfaced, with the same stalls and the same opening hours as before.",
        ];
        let story = STORIES[rng.random_range(0..STORIES.len())];
        // Now and then a near-duplicate: the same story with one word more.
        let tail = if rng.random_bool(0.3) {
            " Updated."
        } else {
            ""
        };
        let links: String = (0..rng.random_range(0..3))
            .map(|_| {
                format!(
                    "<a href=\"http://h{}.test/{}\">x</a>",
                    rng.random_range(0..3),
                    rng.random_range(0..6)
                )
            })
            .collect();
        let canonical = if rng.random_bool(0.2) {
            format!(
                "<link rel=\"canonical\" href=\"http://h0.test/{}\">",
                rng.random_range(0..6)
            )
        } else {
            String::new()
        };
        format!("<html><head>{canonical}</head><body><p>{story}{tail}</p>{links}</body></html>")
    }

    /// What the engine derives from its records (counts and indexes it keeps in step as it
    /// goes), as a load rebuilds them: equal for an engine and its saved state loaded again.
    fn derived(engine: &DedupEngine) -> impl PartialEq + std::fmt::Debug {
        let counts = |map: &std::collections::HashMap<u64, u32>| -> BTreeMap<u64, u32> {
            map.iter()
                .filter(|(_, n)| **n > 0)
                .map(|(k, n)| (*k, *n))
                .collect()
        };
        let sets = |map: &std::collections::HashMap<u64, FingerprintSet>| {
            (map.iter())
                .map(|(k, set)| (*k, set.iter().collect::<BTreeSet<u64>>()))
                .collect::<BTreeMap<_, _>>()
        };
        (
            counts(&engine.in_links),
            counts(&engine.external_in_links),
            counts(&engine.votes),
            sets(&engine.by_content),
            sets(&engine.groups),
            engine
                .group_of
                .iter()
                .map(|(c, g)| (*c, *g))
                .collect::<BTreeMap<_, _>>(),
            engine.sketches.keys().copied().collect::<BTreeSet<u64>>(),
        )
    }

    #[test]
    fn saving_only_what_was_marked_gives_the_whole_state() {
        let mut rng = StdRng::seed_from_u64(11);
        let mut engine = DedupEngine::new(DedupConfig::default());
        let mut saved = Saved::default();
        let url = |rng: &mut StdRng| {
            format!(
                "http://h{}.test/{}",
                rng.random_range(0..3),
                rng.random_range(0..6)
            )
        };
        for step in 0..600 {
            let from = url(&mut rng);
            match rng.random_range(0..12) {
                10 | 11 => {
                    // Its row became a sitemap or a feed.
                    engine.forget(&from);
                }
                0..6 => {
                    engine
                        .observe(FetchedPage::html(&from, text(&mut rng)))
                        .unwrap();
                }
                6..8 => {
                    let to = url(&mut rng);
                    let status = [301, 302, 307, 308][rng.random_range(0..4)];
                    let mut page = FetchedPage::html(&to, text(&mut rng));
                    page.url = from.clone();
                    page.redirect_chain = vec![Hop { url: from, status }];
                    engine.observe(page).unwrap();
                }
                _ => {
                    let (a, b) = (url(&mut rng), url(&mut rng));
                    let chain = [
                        Hop {
                            url: from.clone(),
                            status: 301,
                        },
                        Hop {
                            url: a,
                            status: 301,
                        },
                    ];
                    engine.observe_redirects(&from, &chain, &b).unwrap();
                }
            }
            if rng.random_bool(0.3) || step == 599 {
                saved.apply(engine.take_changes());
                assert_eq!(saved.state(), engine.state(), "after step {step}");
                assert!(!engine.has_unsaved_changes());
                let rebuilt = DedupEngine::from_state(DedupConfig::default(), engine.state());
                assert_eq!(derived(&engine), derived(&rebuilt), "after step {step}");
                // Every member of a class has a record that lists the class, and the reverse.
                let members: BTreeSet<(String, ClassId)> = (engine.classes.values())
                    .flat_map(|c| c.members.iter().map(|m| (m.url.clone(), c.id)))
                    .collect();
                let listed: BTreeSet<(String, ClassId)> = (engine.urls.values())
                    .flat_map(|r| r.memberships.iter().map(|id| (r.url.clone(), *id)))
                    .collect();
                assert_eq!(members, listed, "after step {step}");
            }
        }
        // A loaded engine has nothing to save until it changes.
        let mut loaded = DedupEngine::from_state(DedupConfig::default(), engine.state());
        assert!(!loaded.has_unsaved_changes());
        assert!(loaded.take_changes().is_empty());
    }
}
