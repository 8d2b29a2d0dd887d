//! The permanent-redirect table: what 301 and 308 responses said, followed to the end.
//!
//! Each observed hop `source -> target` is kept as it was seen (so a source that stops redirecting
//! can be removed without losing the rest). Lookups follow the hops to the final target, so a chain
//! a -> b -> c reads as a -> c and b -> c. A hop that would close a cycle (c -> a) is refused and
//! recorded as a [`RedirectError`]: the table stays acyclic, so following it always ends.
//! [`PermanentRedirects::rewrite`] sends a link through the table before it feeds discovery.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A redirect problem, kept as data for reports; it never stops the engine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum RedirectError {
    /// Permanent redirects that lead back to where they started.
    #[error("permanent redirect cycle: {}", urls.join(" -> "))]
    Cycle {
        /// The URLs in order; the last one equals the first.
        urls: Vec<String>,
    },
}

/// Source -> target of every permanent redirect seen. Two tables are equal when their hops
/// are (however often each changed).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PermanentRedirects {
    /// One hop per source, as observed.
    hops: BTreeMap<String, String>,
    /// How many times a hop was added, changed or removed (not saved: what a page's links were
    /// rewritten through is known only for pages filed since the engine started).
    #[serde(skip)]
    changes: u64,
}

impl PartialEq for PermanentRedirects {
    fn eq(&self, other: &Self) -> bool {
        self.hops == other.hops
    }
}

impl Eq for PermanentRedirects {}

impl PermanentRedirects {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Rebuilds a table from saved hops (cycles among them are dropped and returned).
    pub fn from_hops(
        hops: impl IntoIterator<Item = (String, String)>,
    ) -> (Self, Vec<RedirectError>) {
        let mut table = Self::new();
        let errors = hops
            .into_iter()
            .filter_map(|(s, t)| table.insert(&s, &t).err())
            .collect();
        (table, errors)
    }

    /// The observed hops, source -> immediate target (to save).
    pub fn hops(&self) -> impl Iterator<Item = (&str, &str)> {
        self.hops.iter().map(|(s, t)| (s.as_str(), t.as_str()))
    }

    /// Records that `source` permanently redirects to `target`.
    ///
    /// Refused (the table unchanged) when it would close a cycle; a self-redirect is a cycle too.
    pub fn insert(&mut self, source: &str, target: &str) -> Result<(), RedirectError> {
        let mut path = vec![source.to_string(), target.to_string()];
        let mut at = target;
        while at != source {
            match self.hops.get(at) {
                Some(next) => {
                    path.push(next.clone());
                    at = next;
                }
                _ => break,
            }
        }
        if at == source {
            return Err(RedirectError::Cycle { urls: path });
        }
        if self.hops.get(source).map(String::as_str) != Some(target) {
            self.hops.insert(source.to_string(), target.to_string());
            self.changes += 1;
        }
        Ok(())
    }

    /// Forgets `source`'s redirect (it answered without one); returns whether it had one.
    pub fn remove(&mut self, source: &str) -> bool {
        let removed = self.hops.remove(source).is_some();
        self.changes += u64::from(removed);
        removed
    }

    /// How many times the table changed (a hop added, changed or removed) since it was made: a
    /// link rewritten through it may be rewritten differently once this moved.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// Sets the change count to `count`, as saved with the table by an earlier run.
    pub fn set_changes(&mut self, count: u64) {
        self.changes = count;
    }

    /// The immediate target of `source`, if it redirects permanently.
    pub fn target_of(&self, source: &str) -> Option<&str> {
        self.hops.get(source).map(String::as_str)
    }

    /// Whether `url` is known to redirect permanently.
    pub fn is_source(&self, url: &str) -> bool {
        self.hops.contains_key(url)
    }

    /// The final target of `url`, if it is a source.
    pub fn final_target(&self, url: &str) -> Option<&str> {
        let mut at = self.hops.get(url)?;
        // The table is acyclic, so this ends; the bound only guards against a broken invariant.
        for _ in 0..=self.hops.len() {
            match self.hops.get(at) {
                Some(next) => at = next,
                None => break,
            }
        }
        Some(at)
    }

    /// `url` rewritten to where it permanently leads (itself when it is not a source).
    pub fn rewrite<'a>(&'a self, url: &'a str) -> &'a str {
        self.final_target(url).unwrap_or(url)
    }

    /// Every source with its final target: the chains compressed.
    pub fn compressed(&self) -> BTreeMap<String, String> {
        self.hops
            .keys()
            .filter_map(|s| Some((s.clone(), self.final_target(s)?.to_string())))
            .collect()
    }

    /// Number of sources.
    pub fn len(&self) -> usize {
        self.hops.len()
    }

    /// Whether no redirect is known.
    pub fn is_empty(&self) -> bool {
        self.hops.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_compress_and_links_rewrite() {
        let mut t = PermanentRedirects::new();
        t.insert("a", "b").unwrap();
        t.insert("b", "c").unwrap();
        assert_eq!(t.final_target("a"), Some("c"));
        assert_eq!(t.rewrite("a"), "c");
        assert_eq!(t.rewrite("z"), "z");
        let compressed = t.compressed();
        assert_eq!(compressed["a"], "c");
        assert_eq!(compressed["b"], "c");
    }

    #[test]
    fn cycles_are_refused_and_reported() {
        let mut t = PermanentRedirects::new();
        t.insert("a", "b").unwrap();
        t.insert("b", "c").unwrap();
        let err = t.insert("c", "a").unwrap_err();
        assert_eq!(
            err,
            RedirectError::Cycle {
                urls: vec!["c".into(), "a".into(), "b".into(), "c".into()]
            }
        );
        assert!(matches!(
            t.insert("x", "x"),
            Err(RedirectError::Cycle { .. })
        ));
        assert_eq!(t.rewrite("a"), "c");
        assert!(!t.is_source("c"));
    }

    #[test]
    fn removal_and_reload() {
        let mut t = PermanentRedirects::new();
        t.insert("a", "b").unwrap();
        t.insert("b", "c").unwrap();
        assert!(t.remove("b"));
        assert_eq!(t.rewrite("a"), "b");
        let saved: Vec<(String, String)> = t
            .hops()
            .map(|(s, d)| (s.to_string(), d.to_string()))
            .collect();
        let (loaded, errors) = PermanentRedirects::from_hops(saved);
        assert!(errors.is_empty());
        assert_eq!(loaded, t);
    }
}
