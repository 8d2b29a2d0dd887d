-- Which sitemap listed a page at that sitemap's last read with a body, when, and with what
-- `lastmod` (the twin of migrations/postgres/0005_listed.sql). A sitemap that answers 304 lists
-- again exactly these pages with their own `lastmod` (src/refresher/listings.rs); on a sitemap's
-- own row `listed_ms` is when it last listed its pages, so a page it dropped (listed before
-- that) is no longer its own.
ALTER TABLE urls ADD COLUMN listed_in INTEGER;
ALTER TABLE urls ADD COLUMN listed_ms INTEGER;
ALTER TABLE urls ADD COLUMN listed_lastmod_ms INTEGER;
