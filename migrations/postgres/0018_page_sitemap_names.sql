-- A page that a sitemap index or a robots.txt on a host another worker held named as a sitemap
-- (the twin of migrations/sqlite/0030_page_sitemap_names.sql, which says why and what the
-- columns hold).
CREATE TABLE page_sitemap_names (
    url_id   BIGINT NOT NULL PRIMARY KEY REFERENCES urls(id),
    named_by TEXT   NOT NULL,
    named_ms BIGINT NOT NULL
);
