//! Equivalence classes of URLs and the hysteresis that picks their canonical page.
//!
//! A class keeps at most K members, the highest-scoring (the current canonical is never the one
//! evicted). Its canonical changes only when the best challenger beats it by both margins:
//! `challenger ≥ canonical + additive` and `challenger ≥ canonical × multiplicative`, so two URLs
//! whose scores drift around each other do not swap on every fetch.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

/// What makes URLs one class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ClassKind {
    /// They serve the same main text (same exact content fingerprint).
    Content,
    /// They temporarily redirect (302, 303, 307) to the same target.
    Redirect,
    /// Their main texts' simhashes are within the near-duplicate distance.
    Near,
}

/// A class's identity: its kind and key (content fingerprint, target-URL fingerprint, or near
/// group number).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ClassId {
    /// The kind.
    pub kind: ClassKind,
    /// The key within the kind.
    pub key: u64,
}

impl std::fmt::Display for ClassId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.kind {
            ClassKind::Content => "content",
            ClassKind::Redirect => "redirect",
            ClassKind::Near => "near",
        };
        write!(f, "{kind}:{:016x}", self.key)
    }
}

/// One URL in a class, with the score it was ranked by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Member {
    /// Normalised URL.
    pub url: String,
    /// Its score when last seen.
    pub score: f64,
}

/// A class of URLs and its canonical page. Plain data: saved and loaded as it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Class {
    /// Kind and key.
    pub id: ClassId,
    /// The canonical member (`None` only while empty).
    pub canonical: Option<String>,
    /// Members, highest score first, at most K.
    pub members: Vec<Member>,
    /// Why the canonical is what it is (the last decision).
    pub reason: String,
}

/// The class limits and margins.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hysteresis {
    /// K: most members kept.
    pub max_members: usize,
    /// A challenger must exceed the canonical's score by at least this much...
    pub additive: f64,
    /// ...and be at least this many times the canonical's score.
    pub multiplicative: f64,
}

impl Class {
    /// An empty class.
    pub fn new(id: ClassId) -> Self {
        Class {
            id,
            canonical: None,
            members: Vec::new(),
            reason: String::new(),
        }
    }

    /// Whether `url` is a member.
    pub fn contains(&self, url: &str) -> bool {
        self.members.iter().any(|m| m.url == url)
    }

    /// Adds `url` or updates its score, then re-decides. Returns the URLs evicted by the limit
    /// (possibly `url` itself).
    pub fn upsert(&mut self, url: &str, score: f64, h: &Hysteresis) -> Vec<String> {
        match self.members.iter_mut().find(|m| m.url == url) {
            Some(member) => member.score = score,
            None => self.members.push(Member {
                url: url.to_string(),
                score,
            }),
        }
        self.settle(h)
    }

    /// Removes `url`; returns whether it was a member. A departing canonical is replaced.
    pub fn remove(&mut self, url: &str, h: &Hysteresis) -> bool {
        let before = self.members.len();
        self.members.retain(|m| m.url != url);
        if self.members.len() == before {
            return false;
        }
        if self.canonical.as_deref() == Some(url) {
            self.canonical = None;
            self.settle(h);
            if let Some(new) = &self.canonical {
                self.reason = format!("{new} took over: the previous canonical {url} left");
            }
        }
        true
    }

    /// Sorts, applies the hysteresis rule and the member limit; returns evicted URLs.
    pub fn settle(&mut self, h: &Hysteresis) -> Vec<String> {
        self.members.sort_by(|a, b| {
            b.score
                .partial_cmp(&a.score)
                .unwrap_or(Ordering::Equal)
                .then_with(|| a.url.cmp(&b.url))
        });
        let current = self
            .canonical
            .as_ref()
            .and_then(|c| self.members.iter().find(|m| &m.url == c))
            .cloned();
        match current {
            None => {
                self.canonical = self.members.first().map(|m| m.url.clone());
                if let Some(first) = self.members.first() {
                    self.reason = format!(
                        "{} chosen: highest score {:.2} of {} member(s)",
                        first.url,
                        first.score,
                        self.members.len()
                    );
                }
            }
            Some(cur) => {
                let challenger = self.members.iter().find(|m| m.url != cur.url);
                self.reason = match challenger {
                    Some(ch)
                        if ch.score >= cur.score + h.additive
                            && ch.score >= cur.score * h.multiplicative =>
                    {
                        self.canonical = Some(ch.url.clone());
                        format!(
                            "{} replaced {}: score {:.2} beats {:.2} by at least +{} and x{}",
                            ch.url, cur.url, ch.score, cur.score, h.additive, h.multiplicative
                        )
                    }
                    Some(ch) if ch.score > cur.score => format!(
                        "{} kept: challenger {} scores {:.2} against {:.2}, not by +{} and x{}",
                        cur.url, ch.url, ch.score, cur.score, h.additive, h.multiplicative
                    ),
                    _ => format!(
                        "{} kept: highest score {:.2} of {} member(s)",
                        cur.url,
                        cur.score,
                        self.members.len()
                    ),
                };
            }
        }
        let mut evicted = Vec::new();
        while self.members.len() > h.max_members.max(1) {
            let canonical = self.canonical.clone();
            let pos = self
                .members
                .iter()
                .rposition(|m| Some(&m.url) != canonical.as_ref())
                .unwrap_or(self.members.len() - 1);
            evicted.push(self.members.remove(pos).url);
        }
        evicted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: Hysteresis = Hysteresis {
        max_members: 3,
        additive: 0.5,
        multiplicative: 1.1,
    };

    fn class() -> Class {
        Class::new(ClassId {
            kind: ClassKind::Content,
            key: 1,
        })
    }

    #[test]
    fn canonical_moves_only_past_both_margins() {
        let mut c = class();
        c.upsert("a", 10.0, &H);
        c.upsert("b", 10.4, &H);
        assert_eq!(c.canonical.as_deref(), Some("a"));
        assert!(c.reason.contains("not by"), "{}", c.reason);
        // +0.6 passes the additive margin but not x1.1.
        c.upsert("b", 10.6, &H);
        assert_eq!(c.canonical.as_deref(), Some("a"));
        c.upsert("b", 11.0, &H);
        assert_eq!(c.canonical.as_deref(), Some("b"));
        assert!(c.reason.starts_with("b replaced a"), "{}", c.reason);
    }

    #[test]
    fn at_most_k_members_and_the_canonical_stays() {
        let mut c = class();
        c.upsert("low", 10.0, &H);
        for (url, s) in [("x", 10.1), ("y", 10.2)] {
            assert!(c.upsert(url, s, &H).is_empty());
        }
        // "low" is canonical (first) but scores least: another member is evicted instead.
        let evicted = c.upsert("z", 10.05, &H);
        assert_eq!(c.members.len(), 3);
        assert!(c.contains("low"));
        assert_eq!(evicted, vec!["z".to_string()]);
    }

    #[test]
    fn removing_the_canonical_promotes_the_best() {
        let mut c = class();
        c.upsert("a", 3.0, &H);
        c.upsert("b", 2.0, &H);
        c.upsert("c", 2.5, &H);
        assert!(c.remove("a", &H));
        assert_eq!(c.canonical.as_deref(), Some("c"));
        assert!(c.reason.contains("left"), "{}", c.reason);
        assert!(!c.remove("a", &H));
    }
}
