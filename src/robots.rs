//! robots.txt per RFC 9309: parsing, matching, Crawl-delay and Sitemap lines (pure).
