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

/// Source -> target of every permanent redirect seen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PermanentRedirects {
    /// One hop per source, as observed.
    hops: BTreeMap<String, String>,
    /// The XOR of every hop's [`hop_digest`]: equal tables have equal digests, whatever order
    /// their hops were learnt in and whoever learnt them (kept as hops change).
    digest: u64,
}

/// A hop's share of [`PermanentRedirects::digest`].
fn hop_digest(source: &str, target: &str) -> u64 {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    hasher.update(source.as_bytes());
    hasher.update(&[0]);
    hasher.update(target.as_bytes());
    hasher.digest()
}

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
        if let Some(old) = self.hops.insert(source.to_string(), target.to_string()) {
            self.digest ^= hop_digest(source, &old);
        }
        self.digest ^= hop_digest(source, target);
        Ok(())
    }

    /// Forgets `source`'s redirect (it answered without one); returns whether it had one.
    pub fn remove(&mut self, source: &str) -> bool {
        match self.hops.remove(source) {
            Some(old) => {
                self.digest ^= hop_digest(source, &old);
                true
            }
            None => false,
        }
    }

    /// A 64-bit digest of the table's hops: a link rewritten through a table rewrites the same
    /// through any table with this digest (two different tables share one by chance only).
    pub fn digest(&self) -> u64 {
        self.digest
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
    fn the_digest_is_of_the_hops_whoever_learnt_them_in_whatever_order() {
        let hops = [("a", "b"), ("c", "d"), ("e", "f")];
        let forwards = PermanentRedirects::from_hops(hops.map(|(s, t)| (s.into(), t.into()))).0;
        let mut backwards = PermanentRedirects::new();
        for (s, t) in hops.iter().rev() {
            backwards.insert(s, t).unwrap();
        }
        assert_eq!(forwards.digest(), backwards.digest());
        assert_ne!(forwards.digest(), PermanentRedirects::new().digest());
        // Learnt and forgotten, or moved and moved back: the table and its digest as before.
        let before = backwards.digest();
        backwards.insert("x", "y").unwrap();
        assert_ne!(backwards.digest(), before);
        backwards.remove("x");
        assert_eq!(backwards.digest(), before);
        backwards.insert("a", "z").unwrap();
        assert_ne!(backwards.digest(), before, "a hop's target moved");
        backwards.insert("a", "b").unwrap();
        assert_eq!(backwards.digest(), before);
        // Two workers each learn one hop: the table that holds both is neither's.
        let (mut one, mut other) = (forwards.clone(), forwards.clone());
        one.insert("x", "y").unwrap();
        other.insert("u", "v").unwrap();
        let mut both = one.clone();
        both.insert("u", "v").unwrap();
        assert_ne!(both.digest(), one.digest());
        assert_ne!(both.digest(), other.digest());
        // A refused cycle changes nothing.
        let digest = both.digest();
        assert!(both.insert("b", "a").is_err());
        assert_eq!(both.digest(), digest);
    }

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
