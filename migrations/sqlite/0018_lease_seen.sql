-- When a worker last named a host as one of its schedules' (the twin of
-- migrations/postgres/0006_lease_seen.sql). Every worker names the hosts it knows when it
-- first meets them and again every hour (src/refresher/leases.rs); a host no worker has named
-- for a week (gone from every schedule) no longer counts in the fair share, is not claimed,
-- and its row is deleted once no lease on it is running (src/store/leases.rs). Rows from
-- before this column read 0: named again at each worker's first round.
ALTER TABLE leases ADD COLUMN seen_ms INTEGER NOT NULL DEFAULT 0;
