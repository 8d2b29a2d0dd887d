//! A small pure guard for following sitemap indexes: depth limit and loop detection.
//!
//! The protocol allows one level (an index lists sitemaps); real sites nest indexes and sometimes
//! list themselves. The refresher asks [`SitemapWalk::admit`] before fetching each child.

use std::collections::HashSet;

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

#[cfg(test)]
mod tests {
    use super::*;

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
