//! What the dedup engine knows of one URL, as plain data: the engine works on it and the store
//! saves it as it is (see [`super::state`]).

use serde::{Deserialize, Serialize};

use super::class::ClassId;
use super::resemblance::Sketch;

/// What the engine knows of one URL. Plain data, saved as it is.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UrlRecord {
    /// Normalised URL.
    pub url: String,
    /// Exact fingerprint of its content, once fetched.
    pub content_fp: Option<u64>,
    /// Simhash of its content.
    pub simhash: Option<u64>,
    /// Resemblance sketch of its content (128 bytes), to verify near-duplicates.
    #[serde(default)]
    pub sketch: Option<Sketch>,
    /// Sitemap priority, if given.
    pub sitemap_priority: Option<f64>,
    /// The final target when the URL temporarily redirects.
    pub temp_target: Option<String>,
    /// The URL its `rel=canonical` names.
    pub declared_canonical: Option<String>,
    /// Fingerprints of the URLs it links to (not itself), for in-link counts.
    pub out_links: Vec<u64>,
    /// The subset of `out_links` on another host than this URL's: votes of the wider web.
    #[serde(default)]
    pub external_out_links: Vec<u64>,
    /// Classes it is a member of.
    pub memberships: Vec<ClassId>,
}
