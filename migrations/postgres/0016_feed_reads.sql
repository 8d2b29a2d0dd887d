-- What a feed's reads have shown of whether it dates its entries at each read (the twin of
-- migrations/sqlite/0028_feed_reads.sql, which says why and what the columns hold).
ALTER TABLE urls ADD COLUMN stamps_entries_since_ms BIGINT;
ALTER TABLE urls ADD COLUMN last_read_json TEXT;
