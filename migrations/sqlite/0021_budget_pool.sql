-- The credit of a site's budget that no worker holds (the twin of
-- migrations/postgres/0009_budget_pool.sql): with several workers on one database each holds a
-- share of the site's bucket; a worker whose share shrinks hands what its bucket can no longer
-- hold in here, one with room takes from here, and a worker that stops hands in what it holds
-- (src/scheduler/workers.rs: `settle_pool`). NULL is a full pool (a new site's bucket).
-- `budget_pool_at_ms` is when it was last settled: a worker that starts alone refills it at
-- the site's rate since then (no worker's bucket was refilling meanwhile). One process on a
-- SQLite file holds every share and never uses it.
ALTER TABLE sites ADD COLUMN budget_pool REAL;
ALTER TABLE sites ADD COLUMN budget_pool_at_ms INTEGER;
