-- When the site's open discovery pass started (the twin of
-- migrations/sqlite/0022_discovery_pass.sql, which says how it is used).
ALTER TABLE sites ADD COLUMN pass_started_ms BIGINT;
