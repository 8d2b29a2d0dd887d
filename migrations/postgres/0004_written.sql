-- When a URL's last check was handed to the store (clock ms; the twin of
-- migrations/sqlite/0016_written.sql). Each worker reads at every round what the others wrote
-- since its last read (src/refresher/leases.rs), by this time rather than the request's start
-- (`last_checked_ms`), which for a slow request or a host that changed hands meanwhile may lie
-- further back than the read's overlap.
ALTER TABLE urls ADD COLUMN written_ms BIGINT;
DROP INDEX urls_last_checked;
CREATE INDEX urls_written ON urls (written_ms);
