//! Discovery parsers: sitemaps, feeds and their dates (pure; no network inside).

pub mod dates;
pub mod feed;
pub mod sitemap;
