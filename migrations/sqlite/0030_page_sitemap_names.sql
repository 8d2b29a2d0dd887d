-- A page that a sitemap index or a robots.txt on a host another worker held named as a sitemap
-- (the twin of migrations/postgres/0018_page_sitemap_names.sql). The worker whose walk met it
-- does not read it (its host is another's), and a page's row keeps what listed it first: the
-- worker holding the page's host never learned, and never read the page to learn whether it is
-- a sitemap. Written by that walk (`Store::name_page_a_sitemap`); read by the holder's next
-- discovery pass, which reads the page, and deleted once it has (refresher::sitemap_kinds).
-- url_id: the page's row; named_by: the index's or robots.txt's URL; named_ms: when (clock ms).
CREATE TABLE page_sitemap_names (
    url_id   INTEGER NOT NULL PRIMARY KEY REFERENCES urls(id),
    named_by TEXT    NOT NULL,
    named_ms INTEGER NOT NULL
);
