//! What goes into the engine per fetch ([`FetchedPage`], its redirect [`Hop`]s) and what comes
//! out ([`DedupOutcome`], or a [`DedupError`]).

use serde::{Deserialize, Serialize};

use super::class::ClassId;
use super::redirects::RedirectError;
use super::urlnorm::UrlError;

/// One redirect response in a fetch: the URL that answered and its status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hop {
    /// The URL requested at this step.
    pub url: String,
    /// Its status: 301, 302, 303, 307 or 308 (others are ignored).
    pub status: u16,
}

/// What the fetcher hands over for one successful fetch.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FetchedPage {
    /// The URL that was requested.
    pub url: String,
    /// The URL that finally answered with the body.
    pub final_url: String,
    /// The redirects on the way, in order (empty when `url` answered itself).
    pub redirect_chain: Vec<Hop>,
    /// The `Content-Type` header, if any.
    pub content_type: Option<String>,
    /// The body bytes (decompressed).
    pub body: Vec<u8>,
    /// The sitemap `<priority>` of `url`, if a sitemap gave one.
    pub sitemap_priority: Option<f64>,
}

impl FetchedPage {
    /// An HTML page that answered at `url` itself (no redirects, no sitemap priority).
    pub fn html(url: &str, body: impl Into<Vec<u8>>) -> Self {
        FetchedPage {
            url: url.to_string(),
            final_url: url.to_string(),
            redirect_chain: Vec::new(),
            content_type: Some("text/html; charset=utf-8".to_string()),
            body: body.into(),
            sitemap_priority: None,
        }
    }
}

/// What the engine made of one fetched page.
#[derive(Debug, Clone, PartialEq)]
pub struct DedupOutcome {
    /// The normalised URL the content was filed under.
    pub url: String,
    /// Exact fingerprint of the main text (of the body bytes for non-text bodies).
    pub content_fp: u64,
    /// Simhash of the main text (0 for empty or non-text bodies).
    pub simhash: u64,
    /// The page's `<title>`.
    pub title: Option<String>,
    /// The extracted main text.
    pub main_text: String,
    /// Outgoing links: absolute, normalised, rewritten through the permanent-redirect table.
    pub links: Vec<String>,
    /// The page's own `rel=canonical`, normalised.
    pub rel_canonical: Option<String>,
    /// The canonical URL of the page's content class.
    pub canonical: Option<String>,
    /// The content class.
    pub class: ClassId,
    /// Whether `url` is canonical (by content, by target URL, and by near group when that joins).
    pub is_canonical: bool,
    /// Human-readable account of the decision.
    pub reason: String,
    /// Redirect problems found in this fetch.
    pub errors: Vec<RedirectError>,
}

/// Why a page could not be observed.
#[derive(Debug, thiserror::Error)]
pub enum DedupError {
    /// The page's own URL, final URL or a hop is not an http(s) URL.
    #[error("page URL: {0}")]
    Url(#[from] UrlError),
}
