//! A small pure guard for following sitemap indexes: depth limit and loop detection.
//!
//! The protocol allows one level (an index lists sitemaps); real sites nest indexes and sometimes
//! list themselves. The refresher asks [`SitemapWalk::admit`] before fetching each child, and
//! [`depth_by_naming`] where a walk that another worker began goes on (several workers: a
//! sitemap on a host held elsewhere is stored for its holder, which walks on from it).

use std::collections::{HashMap, HashSet};

/// How deep the refresher follows sitemap indexes (the protocol allows one level; real sites
/// nest).
pub const MAX_DEPTH: usize = 3;
/// The most sitemap files the refresher reads in one walk from a root.
pub const MAX_SITEMAPS_PER_WALK: usize = 1_000;

/// Why a child sitemap is not followed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WalkRefusal {
    /// Already read in this walk (a loop or a duplicate).
    #[error("{0}: already read in this walk")]
    Seen(String),
    /// Deeper than the limit.
    #[error("{loc}: index depth {depth} exceeds {max}")]
    TooDeep {
        /// The child.
        loc: String,
        /// Its depth (the root sitemap is 0).
        depth: usize,
        /// The limit.
        max: usize,
    },
    /// More sitemaps than the walk allows.
    #[error("{0}: too many sitemaps in one walk")]
    TooMany(String),
}

/// The state of one walk from a root sitemap.
#[derive(Debug, Clone)]
pub struct SitemapWalk {
    seen: HashSet<String>,
    max_depth: usize,
    max_sitemaps: usize,
}

impl SitemapWalk {
    /// A walk from `root` allowing children down to `max_depth` (1 = the protocol's one level)
    /// and at most `max_sitemaps` files in all.
    pub fn new(root: &str, max_depth: usize, max_sitemaps: usize) -> Self {
        let mut seen = HashSet::new();
        seen.insert(root.to_string());
        SitemapWalk {
            seen,
            max_depth,
            max_sitemaps,
        }
    }

    /// Whether to read `loc`, found at `depth` (children of the root are at depth 1).
    pub fn admit(&mut self, loc: &str, depth: usize) -> Result<(), WalkRefusal> {
        if depth > self.max_depth {
            return Err(WalkRefusal::TooDeep {
                loc: loc.to_string(),
                depth,
                max: self.max_depth,
            });
        }
        if self.seen.contains(loc) {
            return Err(WalkRefusal::Seen(loc.to_string()));
        }
        if self.seen.len() >= self.max_sitemaps {
            return Err(WalkRefusal::TooMany(loc.to_string()));
        }
        self.seen.insert(loc.to_string());
        Ok(())
    }
}

/// How deep below a root a stored sitemap lies, and that root, from what named each of a
/// site's sitemaps (`named_by`: sitemap URL to the URL of what named it first): named by
/// another of these sitemaps, it is one deeper than that one; named by anything else (the
/// schedule, a robots.txt, a redirect's source page) it is a root. None when the naming loops
/// (every sitemap of the loop was named by another: none can be reached from a root).
///
/// Without it, a sitemap stored for another worker's host was walked as a root of its own: an
/// index and its children alternating between two workers' hosts went one level deeper at
/// each discovery.
pub fn depth_by_naming<'a>(
    url: &'a str,
    named_by: &'a HashMap<String, String>,
) -> Option<(usize, &'a str)> {
    let mut depth = 0;
    let mut at = url;
    while let Some(parent) = named_by
        .get(at)
        .filter(|p| named_by.contains_key(p.as_str()))
    {
        depth += 1;
        if depth > named_by.len() {
            return None;
        }
        at = parent;
    }
    Some((depth, at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_sitemap_is_as_deep_as_its_chain_of_namers() {
        let named: HashMap<String, String> = [
            ("http://a/index.xml", "schedule"),
            ("http://b/part.xml", "http://a/index.xml"),
            ("http://a/sub.xml", "http://b/part.xml"),
            ("http://c/cross.xml", "http://c/robots.txt"),
            ("http://a/loop1.xml", "http://a/loop2.xml"),
            ("http://a/loop2.xml", "http://a/loop1.xml"),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        let index = "http://a/index.xml";
        assert_eq!(depth_by_naming(index, &named), Some((0, index)));
        assert_eq!(
            depth_by_naming("http://b/part.xml", &named),
            Some((1, index))
        );
        assert_eq!(
            depth_by_naming("http://a/sub.xml", &named),
            Some((2, index))
        );
        let cross = "http://c/cross.xml";
        assert_eq!(depth_by_naming(cross, &named), Some((0, cross)));
        assert_eq!(depth_by_naming("http://a/loop1.xml", &named), None);
        let unknown = "http://unknown/x.xml";
        assert_eq!(depth_by_naming(unknown, &named), Some((0, unknown)));
    }

    #[test]
    fn refuses_loops_depth_and_excess() {
        let mut walk = SitemapWalk::new("http://a/s.xml", 2, 3);
        assert!(walk.admit("http://a/1.xml", 1).is_ok());
        assert!(matches!(
            walk.admit("http://a/s.xml", 2),
            Err(WalkRefusal::Seen(_))
        ));
        assert!(matches!(
            walk.admit("http://a/2.xml", 3),
            Err(WalkRefusal::TooDeep { .. })
        ));
        assert!(walk.admit("http://a/2.xml", 2).is_ok());
        assert!(matches!(
            walk.admit("http://a/3.xml", 1),
            Err(WalkRefusal::TooMany(_))
        ));
    }
}
