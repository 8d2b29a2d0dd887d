-- What a feed's reads have shown of whether it dates its entries at each read, not when their
-- pages changed (the twin of migrations/postgres/0016_feed_reads.sql). Before, it lived in
-- memory only: after every restart (and at every `run --once` pass, which reads a feed once)
-- the feed's reads were taken at their word, a false alarm against its host for each page
-- they listed, until two more reads in one process showed the stamping again, and the feed
-- error saying so was recorded again. Written at each read of a feed.
-- stamps_entries_since_ms: since when it is taken to stamp its entries (NULL: it is not).
-- last_read_json: the reads in a row that looked stamped and the row ids of the site's pages
-- its last read listed, {"stamped_reads": 1, "listed": [12, 40]}.
ALTER TABLE urls ADD COLUMN stamps_entries_since_ms INTEGER;
ALTER TABLE urls ADD COLUMN last_read_json TEXT;
