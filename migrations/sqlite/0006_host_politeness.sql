-- Politeness state per politeness host, so that a restart keeps every host's gap, back-off and
-- Retry-After (src/politeness/saved.rs says when each column is written and how a restart reads
-- it). The key is the server name and port whatever the scheme (politeness::host_key): http://x
-- and https://x are one host. Times are Unix ms.
CREATE TABLE host_politeness (
    host_key             TEXT    PRIMARY KEY,
    min_interval_ms      INTEGER NOT NULL,            -- interval in force: schedule rate or Crawl-delay
    last_start_ms        INTEGER,                     -- written before the request is sent
    last_end_ms          INTEGER,
    backoff_level        INTEGER NOT NULL DEFAULT 0,
    backoff_until_ms     INTEGER NOT NULL DEFAULT 0,  -- closed until (back-off, Retry-After)
    retry_after_until_ms INTEGER,                     -- the latest Retry-After's end
    updated_ms           INTEGER NOT NULL             -- when the row was last written (clock)
);
