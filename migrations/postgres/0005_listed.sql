-- Which sitemap listed a page at that sitemap's last read with a body, when, and with what
-- `lastmod` (the twin of migrations/sqlite/0017_listed.sql; see there).
ALTER TABLE urls ADD COLUMN listed_in BIGINT;
ALTER TABLE urls ADD COLUMN listed_ms BIGINT;
ALTER TABLE urls ADD COLUMN listed_lastmod_ms BIGINT;
