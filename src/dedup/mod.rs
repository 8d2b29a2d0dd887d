//! The duplicate and canonical-page engine (pure: no clock, database or network inside).
//!
//! After the patent "Duplicate document detection in a web crawler system" and DESIGN.md:
//! - [`charset`]: body bytes to text (BOM, `Content-Type` charset, `<meta charset>`).
//! - [`extract`]: main text without boilerplate (DOM heuristics + document slope), links,
//!   `rel=canonical`.
//! - [`content`]: a fetched page's main text and content fingerprint, extracted once per fetch
//!   and shared by the engine and the refresher's change detection.
//! - [`urlnorm`]: URL normalisation and the 64-bit URL fingerprint.
//! - [`fingerprint`]: the exact content fingerprint and the 64-bit simhash.
//! - [`near`]: the near-duplicate index over simhashes (permuted tables, Manku et al. 2007).
//! - [`redirects`]: the permanent-redirect table (chains compressed, cycles refused).
//! - [`score`]: the query-independent score that ranks a class's members.
//! - [`class`]: classes of URLs and the hysteresis that keeps their canonical from flapping.
//! - [`page`]: what goes in per fetch ([`FetchedPage`]) and what comes out ([`DedupOutcome`]).
//! - [`engine`]: [`DedupEngine`], fed one [`FetchedPage`] at a time by the refresher; its
//!   queries (canonical or not and why, planner weight, classes) are in `queries`.
//! - [`url_record`]: what the engine knows of one URL ([`state::UrlRecord`]), plain data, and
//!   the records keyed by the URL's fingerprint.
//! - `forget`: [`DedupEngine::forget`], a URL that stops being a page (a sitemap, a feed).
//! - `fingerprint_set`: a small set of fingerprints, inline while it holds one (the URLs of a
//!   content, the contents of a near group).
//! - [`state`]: the engine's state as plain data, to save and load.
//! - [`changes`]: what changed since the last save ([`DedupEngine::take_changes`]), so a save
//!   writes only those rows.
//! - [`inspect`]: near-duplicate groups among local files, for `freshet inspect duplicates`.
//!
//! The state is plain data ([`DedupState`]: URL records, classes, redirect hops, near groups) so
//! the store can save it in SQLite and [`DedupEngine::from_state`] can rebuild the engine.

pub mod changes;
pub mod charset;
pub mod class;
pub mod config;
pub mod content;
pub mod engine;
pub mod extract;
pub mod fingerprint;
mod fingerprint_set;
mod forget;
mod groups;
pub mod inspect;
mod marks;
pub mod near;
pub mod page;
mod queries;
pub mod redirects;
pub mod resemblance;
pub mod score;
pub mod state;
pub mod url_record;
pub mod urlnorm;

pub use changes::DedupChanges;
pub use class::{Class, ClassId, ClassKind, Member};
pub use config::DedupConfig;
pub use engine::DedupEngine;
pub use page::{DedupError, DedupOutcome, FetchedPage, Hop};
pub use redirects::{PermanentRedirects, RedirectError};
pub use state::{DedupState, UrlRecord};
