//! Contents and near-duplicate groups of the [`DedupEngine`]: which URLs serve each content,
//! which contents are near duplicates of each other (groups verified by resemblance), and, when
//! a URL's content changes, which URLs' classes that touches. A change costs what it changes:
//! a join touches the contents whose group changes, and the rest of a group is offered a place
//! only when a member of its near class leaves ([`DedupEngine::refill_near`]).

use std::collections::BTreeSet;

use super::class::{ClassId, ClassKind};
use super::engine::DedupEngine;
use super::fingerprint_set::FingerprintSet;
use super::resemblance::Sketch;
use super::urlnorm::url_fingerprint;

impl DedupEngine {
    /// Gives `url` new content; keeps the content index and near groups in step.
    pub(super) fn set_content(
        &mut self,
        url: &str,
        fp: u64,
        sim: u64,
        sketch: &Sketch,
        touched: &mut BTreeSet<String>,
    ) {
        let record = self.record(url);
        let old = record.content_fp.replace(fp);
        let old_sim = record.simhash.replace(sim);
        record.sketch = (!sketch.is_empty()).then(|| sketch.clone());
        if old == Some(fp) {
            // Unchanged content whose sketch the index lacks (dropped by migration 0013, or
            // saved before sketches existed): indexed now, so that new contents find it.
            if !sketch.is_empty() && !self.sketches.contains_key(&fp) {
                self.lsh.insert(sketch, fp);
                self.sketches.insert(fp, sketch.clone());
            }
            return;
        }
        if let (Some(old), Some(old_sim)) = (old, old_sim) {
            self.leave_content(url, old, old_sim, touched);
        }
        let users = self.by_content.entry(fp).or_default();
        users.insert(url_fingerprint(url));
        if users.len() == 1 && sim != 0 {
            self.join_near(fp, sim, sketch, touched);
        }
    }

    pub(super) fn leave_content(
        &mut self,
        url: &str,
        fp: u64,
        sim: u64,
        touched: &mut BTreeSet<String>,
    ) {
        let Some(users) = self.by_content.get_mut(&fp) else {
            return;
        };
        users.remove(url_fingerprint(url));
        if !users.is_empty() {
            return;
        }
        self.by_content.remove(&fp);
        self.near.remove(sim, fp);
        if let Some(sketch) = self.sketches.remove(&fp) {
            self.lsh.remove(&sketch, fp);
        }
        let group = self.group_of.remove(&fp);
        if group.is_some() {
            self.unsaved.near(fp);
        }
        if let Some(group) = group
            && let Some(contents) = self.groups.get_mut(&group)
        {
            contents.remove(fp);
            let rest: Vec<u64> = contents.iter().collect();
            if rest.is_empty() {
                self.groups.remove(&group);
            }
            // The others' classes change here only when the group falls to one content (its
            // near class goes); a place `url` held in the near class is refilled when its own
            // sync takes it out (`DedupEngine::refill_near`).
            if rest.len() <= 1 {
                for c in rest {
                    self.touch_users(c, touched);
                }
            }
        }
    }

    /// Adds a new distinct content to the near indexes and to the group of its verified near
    /// matches (merging groups the new content bridges). Candidates come from the simhash
    /// tables and the sketch's LSH bands; a candidate joins only if the resemblance of the two
    /// sketches reaches [`super::resemblance::NEAR_DUPLICATE_RESEMBLANCE`] (a content without
    /// a sketch, saved before sketches existed, is never verified and so never joined).
    fn join_near(&mut self, fp: u64, sim: u64, sketch: &Sketch, touched: &mut BTreeSet<String>) {
        let mut candidates: BTreeSet<u64> = self.lsh.candidates(sketch).into_iter().collect();
        self.near.for_each_match(sim, |other, _| {
            candidates.insert(other);
        });
        let matched: BTreeSet<u64> = candidates
            .into_iter()
            .filter(|c| *c != fp)
            .filter(|c| {
                self.sketches
                    .get(c)
                    .is_some_and(|other| other.is_near_duplicate(sketch))
            })
            .collect();
        self.near.insert(sim, fp);
        if !sketch.is_empty() {
            self.lsh.insert(sketch, fp);
            self.sketches.insert(fp, sketch.clone());
        }
        let mut groups: Vec<u64> = matched
            .iter()
            .filter_map(|c| self.group_of.get(c).copied())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let group = match groups.first() {
            Some(&g) => g,
            None => {
                let g = self.next_group;
                self.next_group += 1;
                g
            }
        };
        // The group a match already shared keeps its number: its contents' rows and their
        // users' classes change only when the group had been one content (its near class is
        // made now). Touching all of them at every join made a template site's saves grow
        // with its group (thousands of rows a check, quadratic over a crawl).
        let was_alone = self.groups.get(&group).is_some_and(|c| c.len() == 1);
        if groups.len() == 1 {
            // Joining one group: the content goes into its set (rebuilding the set at every
            // join cost a large group's size each time).
            let others: Vec<u64> = match self.groups.get_mut(&group) {
                Some(contents) => {
                    contents.insert(fp);
                    if was_alone {
                        contents.iter().collect()
                    } else {
                        vec![fp]
                    }
                }
                None => vec![fp],
            };
            for c in others {
                self.group_of.insert(c, group);
                self.unsaved.near(c);
                self.touch_users(c, touched);
            }
            return;
        }
        let mut contents = BTreeSet::from([fp]);
        for g in groups.drain(..) {
            contents.extend(self.groups.remove(&g).unwrap_or_default().iter());
        }
        for &c in &contents {
            if self.group_of.insert(c, group) != Some(group) || was_alone {
                self.unsaved.near(c);
                self.touch_users(c, touched);
            }
        }
        self.groups.insert(group, contents.into_iter().collect());
    }

    /// Adds the URLs that serve `content` to `touched`.
    fn touch_users(&self, content: u64, touched: &mut BTreeSet<String>) {
        let users = self
            .by_content
            .get(&content)
            .into_iter()
            .flat_map(FingerprintSet::iter);
        touched.extend(
            users
                .filter_map(|fp| self.urls.url_of(fp))
                .map(String::from),
        );
    }

    /// A URL left the near class of `group`: while the class has fewer than K members, the
    /// group's other URLs are offered its places (each sync keeps the K best). The cost is the
    /// group's size, paid only when a member leaves; joins do not pay it.
    pub(super) fn refill_near(&mut self, group: u64, left: &str) {
        let id = ClassId {
            kind: ClassKind::Near,
            key: group,
        };
        let members = self.classes.get(&id).map_or(0, |c| c.members.len());
        if members >= self.config.max_members {
            return;
        }
        let contents: Vec<u64> = self
            .groups
            .get(&group)
            .map(|g| g.iter().collect())
            .unwrap_or_default();
        let mut users = BTreeSet::new();
        for c in contents {
            self.touch_users(c, &mut users);
        }
        users.remove(left);
        for user in users {
            if !self.classes.get(&id).is_some_and(|c| c.contains(&user)) {
                self.sync(&user);
            }
        }
    }
}
