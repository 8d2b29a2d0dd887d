//! Discovery parsers: sitemaps, feeds and their dates (pure; no network inside).

pub mod dates;
pub mod feed;
pub mod sitemap;

/// The cross-host rule's notion of one host: the same name (any case) and the same explicit
/// port; http and https count as one (sites move to https and keep old sitemaps and feeds). A
/// sitemap or feed speaks for URLs on its own host; others need a cross-submission (that host's
/// robots.txt listing it).
pub fn same_host(url: &url::Url, home: &url::Url) -> bool {
    let host = url.host_str().unwrap_or_default();
    let home_host = home.host_str().unwrap_or_default();
    !host.is_empty() && host.eq_ignore_ascii_case(home_host) && url.port() == home.port()
}
