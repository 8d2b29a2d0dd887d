//! Sitemap parsing, streamed with quick-xml: urlset, sitemapindex, text, RSS/Atom.
