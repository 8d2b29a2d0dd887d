//! What the dedup engine knows of one URL, as plain data: the engine works on it and the store
//! saves it as it is (see [`super::state`]).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::class::ClassId;
use super::resemblance::Sketch;
use super::urlnorm::url_fingerprint;

/// What the engine knows of one URL. Plain data, saved as it is; equality ignores
/// [`UrlRecord::filed_with`] (a record filed again unextracted equals one filed whole).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
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
    /// What its last filing depended on beside its bytes; `None` when not known (a record
    /// saved before these were kept), so its next filing is whole.
    #[serde(skip)]
    pub filed_with: Option<FiledWith>,
}

/// What a URL's filing depended on beside its bytes: the same bytes filed again under the same
/// of these give the same links and main text ([`super::DedupEngine::refile_same_bytes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FiledWith {
    /// [`super::redirects::PermanentRedirects::digest`] of the table its links were rewritten
    /// through.
    pub redirects: u64,
    /// xxh3 of its `Content-Type` (which picks the extraction and the charset).
    pub content_type: u64,
}

impl FiledWith {
    /// The key of a `Content-Type` header (none is a key of its own).
    pub fn content_type_key(content_type: Option<&str>) -> u64 {
        content_type.map_or(0, |t| xxhash_rust::xxh3::xxh3_64(t.as_bytes()) | 1)
    }
}

impl PartialEq for UrlRecord {
    fn eq(&self, other: &Self) -> bool {
        self.url == other.url
            && self.content_fp == other.content_fp
            && self.simhash == other.simhash
            && self.sketch == other.sketch
            && self.sitemap_priority == other.sitemap_priority
            && self.temp_target == other.temp_target
            && self.declared_canonical == other.declared_canonical
            && self.out_links == other.out_links
            && self.external_out_links == other.external_out_links
            && self.memberships == other.memberships
    }
}

/// The engine's records, one per normalised URL, keyed by its 64-bit fingerprint
/// ([`url_fingerprint`]): the record holds the URL's text once, and a link, a vote or a content
/// class names a URL by fingerprint and finds its text here ([`UrlRecords::url_of`]). Two URLs
/// with one fingerprint (odds about `n²/2⁶⁵`: 3·10⁻⁶ at 10M URLs) would share a record, as they
/// share their in-link and vote counts.
#[derive(Debug, Clone, Default)]
pub struct UrlRecords {
    by_fp: HashMap<u64, UrlRecord>,
}

impl UrlRecords {
    /// The record of `url`.
    pub fn get(&self, url: &str) -> Option<&UrlRecord> {
        self.by_fp.get(&url_fingerprint(url))
    }

    /// The record of `url`, to change.
    pub fn get_mut(&mut self, url: &str) -> Option<&mut UrlRecord> {
        self.by_fp.get_mut(&url_fingerprint(url))
    }

    /// Whether `url` has a record.
    pub fn contains(&self, url: &str) -> bool {
        self.by_fp.contains_key(&url_fingerprint(url))
    }

    /// The URL whose fingerprint is `fp`, if it has a record.
    pub fn url_of(&self, fp: u64) -> Option<&str> {
        self.by_fp.get(&fp).map(|r| r.url.as_str())
    }

    /// The record of `url`, made empty if it had none.
    pub fn get_or_insert(&mut self, url: &str) -> &mut UrlRecord {
        let record = self
            .by_fp
            .entry(url_fingerprint(url))
            .or_insert_with(|| UrlRecord {
                url: url.to_string(),
                ..UrlRecord::default()
            });
        debug_assert_eq!(record.url, url, "two URLs with one fingerprint");
        record
    }

    /// Takes the record of `url` out.
    pub fn remove(&mut self, url: &str) -> Option<UrlRecord> {
        self.by_fp.remove(&url_fingerprint(url))
    }

    /// Files `record` under its URL, replacing what was there.
    pub fn insert(&mut self, record: UrlRecord) {
        self.by_fp.insert(url_fingerprint(&record.url), record);
    }

    /// Every record, in no order.
    pub fn values(&self) -> impl Iterator<Item = &UrlRecord> {
        self.by_fp.values()
    }
}
