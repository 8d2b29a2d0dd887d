-- The resemblance sketch of each URL's main text (128 bytes: b-bit minhash, see
-- src/dedup/resemblance.rs), so near-duplicates are verified after a restart too.
-- NULL for rows saved before it existed: those contents are never grouped as near-duplicates.
ALTER TABLE dedup_urls ADD COLUMN sketch BLOB;

-- Fingerprints of the URLs a page links to on other hosts (JSON, a subset of out_links): the
-- canonical score counts in-links from other hosts apart, which tells an original from its
-- mirror (src/dedup/score.rs).
ALTER TABLE dedup_urls ADD COLUMN external_out_links TEXT NOT NULL DEFAULT '[]';
