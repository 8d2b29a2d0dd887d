//! What the rest of freshet asks the engine: is a URL canonical and why, its planner weight, the
//! classes and redirect errors for reports, link rewriting for discovery, and the state to save.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::class::{Class, ClassKind};
use super::config::DedupConfig;
use super::engine::{DedupEngine, DedupState, UrlRecord};
use super::near::NearIndex;
use super::redirects::{PermanentRedirects, RedirectError};
use super::score;
use super::urlnorm::url_fingerprint;

impl DedupEngine {
    /// Whether `url` (normalised) is canonical: known, not a permanent-redirect source, and the
    /// canonical of every class it belongs in (content, temporary-redirect target, and near group
    /// when [`DedupConfig::near_joins_content`] is set).
    pub fn is_canonical(&self, url: &str) -> bool {
        if self.permanent.is_source(url) || !self.urls.contains_key(url) {
            return false;
        }
        self.wanted_classes(url)
            .iter()
            .filter(|id| id.kind != ClassKind::Near || self.config.near_joins_content)
            .all(|id| {
                self.classes
                    .get(id)
                    .is_some_and(|c| c.canonical.as_deref() == Some(url))
            })
    }

    /// The planner's weight multiplier for `url`: [`DedupConfig::redirect_weight`] for a
    /// permanent-redirect source, [`DedupConfig::duplicate_weight`] for a known page that is not
    /// canonical, 1 otherwise (canonical pages and pages not fetched yet).
    pub fn planner_weight(&self, url: &str) -> f64 {
        let url = self.norm(url).unwrap_or_else(|_| url.to_string());
        if self.permanent.is_source(&url) {
            self.config.redirect_weight
        } else if self
            .urls
            .get(&url)
            .is_some_and(|r| r.content_fp.is_some() || r.temp_target.is_some())
            && !self.is_canonical(&url)
        {
            self.config.duplicate_weight
        } else {
            1.0
        }
    }

    /// A human-readable account of what the engine decided about `url`, one fact per line.
    pub fn explain(&self, url: &str) -> String {
        let mut lines = Vec::new();
        if let Some(target) = self.permanent.final_target(url) {
            lines.push(format!("{url} permanently redirects to {target}"));
        }
        let Some(record) = self.urls.get(url) else {
            lines.push(format!("{url} has not been observed"));
            return lines.join("\n");
        };
        if let Some(target) = &record.temp_target {
            lines.push(format!("{url} temporarily redirects to {target}"));
        }
        for id in self.wanted_classes(url) {
            let Some(class) = self.classes.get(&id) else {
                continue;
            };
            let counted = id.kind != ClassKind::Near || self.config.near_joins_content;
            let member = if class.contains(url) {
                format!("one of {} member(s)", class.members.len())
            } else {
                format!("not kept: the class holds its best {}", class.members.len())
            };
            lines.push(format!(
                "{id} ({member}{}): {}",
                if counted { "" } else { ", reported only" },
                class.reason
            ));
        }
        lines.push(score::describe(
            url,
            &self.score_inputs(url),
            &self.config.score,
        ));
        lines.push(if self.is_canonical(url) {
            format!("{url} is canonical")
        } else {
            format!("{url} is not canonical")
        });
        lines.join("\n")
    }

    /// The classes worth reporting: every temporary-redirect class, and content and near classes
    /// with two members or more. Ordered by kind and key.
    pub fn classes(&self) -> Vec<Class> {
        let mut out: Vec<Class> = self
            .classes
            .values()
            .filter(|c| c.id.kind == ClassKind::Redirect || c.members.len() > 1)
            .cloned()
            .collect();
        out.sort_by_key(|c| c.id);
        out
    }

    /// The class `url` is filed in for its content, if fetched.
    pub fn content_class(&self, url: &str) -> Option<&Class> {
        let fp = self.urls.get(url)?.content_fp?;
        self.classes.get(&super::ClassId {
            kind: ClassKind::Content,
            key: fp,
        })
    }

    /// Redirect errors (cycles) seen so far, each once.
    pub fn redirect_errors(&self) -> &[RedirectError] {
        &self.errors
    }

    /// The permanent-redirect table.
    pub fn permanent_redirects(&self) -> &PermanentRedirects {
        &self.permanent
    }

    /// `url` normalised and sent through the permanent-redirect table: call it on every link
    /// before it feeds discovery. `None` when it is not an http(s) URL.
    pub fn rewrite_link(&self, url: &str) -> Option<String> {
        let url = self.norm(url).ok()?;
        Some(self.permanent.rewrite(&url).to_string())
    }

    /// What the engine knows of one normalised URL.
    pub fn url_record(&self, url: &str) -> Option<&UrlRecord> {
        self.urls.get(url)
    }

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
            if let Some(target) = &record.declared_canonical {
                *engine.votes.entry(url_fingerprint(target)).or_default() += 1;
            }
            if let (Some(fp), Some(sim)) = (record.content_fp, record.simhash) {
                engine
                    .by_content
                    .entry(fp)
                    .or_default()
                    .insert(record.url.clone());
                simhashes.insert(fp, sim);
            }
            engine
                .by_fp
                .insert(url_fingerprint(&record.url), record.url.clone());
            engine.urls.insert(record.url.clone(), record);
        }
        engine.near = NearIndex::new(engine.config.near_distance);
        for (&fp, &sim) in simhashes.iter().filter(|&(_, &sim)| sim != 0) {
            engine.near.insert(sim, fp);
        }
        let mut groups: HashMap<u64, BTreeSet<u64>> = HashMap::new();
        for (content, group) in state.near_groups {
            engine.group_of.insert(content, group);
            groups.entry(group).or_default().insert(content);
        }
        engine.groups = groups;
        engine.next_group = state.next_group.max(1);
        engine.classes = state.classes.into_iter().map(|c| (c.id, c)).collect();
        engine
    }
}
