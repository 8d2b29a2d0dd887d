//! Date parsing for sitemaps (W3C datetime) and feeds (RFC 822 and friends).
