-- When a worker last named a host as one of its schedules' (the twin of
-- migrations/sqlite/0018_lease_seen.sql; see there).
ALTER TABLE leases ADD COLUMN seen_ms BIGINT NOT NULL DEFAULT 0;
