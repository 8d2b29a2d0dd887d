-- When the site's open discovery pass started (the twin of
-- migrations/postgres/0010_discovery_pass.sql). A pass's new pages are due at its start, so
-- that on a binding budget they go host by host in turns; kept here rather than in one
-- worker's memory, so that a pass cut short by a restart and the next attempt, or several
-- workers' passes at one `rediscover` time, share one instant (src/store/sites.rs:
-- `open_discovery_pass`). A pass is open while it started after `discovered_ms`, the end of
-- the last pass that completed.
ALTER TABLE sites ADD COLUMN pass_started_ms INTEGER;
