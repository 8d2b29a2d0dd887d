//! What the rest of freshet asks the engine: is a URL canonical and why, its planner weight, the
//! classes and redirect errors for reports, link rewriting for discovery, and the state to save.

use super::class::{Class, ClassKind};
use super::engine::DedupEngine;
use super::redirects::{PermanentRedirects, RedirectError};
use super::score;
use super::url_record::UrlRecord;

impl DedupEngine {
    /// Whether `url` (normalised) is canonical: known, not a permanent-redirect source, and the
    /// canonical of every class it belongs in (content, temporary-redirect target, and near group
    /// when [`super::DedupConfig::near_joins_content`] is set).
    pub fn is_canonical(&self, url: &str) -> bool {
        if self.permanent.is_source(url) || !self.urls.contains(url) {
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

    /// The planner's weight multiplier for `url`: [`super::DedupConfig::redirect_weight`] for a
    /// permanent-redirect source, [`super::DedupConfig::duplicate_weight`] for a known page that is not
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
        let permanent = self.permanent.final_target(url);
        if let Some(target) = permanent {
            lines.push(format!(
                "{url} permanently redirects to {target}: its target's duplicate, planned at {} \
                 of its weight to see the redirect hold",
                self.config.redirect_weight
            ));
        }
        let Some(record) = self.urls.get(url) else {
            if permanent.is_none() {
                lines.push(format!(
                    "{url}: no page of it has reached the duplicate engine (not fetched with a \
                     body yet, or not HTML)"
                ));
            }
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
}
