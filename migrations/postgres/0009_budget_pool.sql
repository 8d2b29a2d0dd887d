-- The credit of a site's budget that no worker holds (the twin of
-- migrations/sqlite/0021_budget_pool.sql, which says how it is used). On PostgreSQL it
-- replaces the restore of `budget_credit`, which each worker overwrote with its own share's
-- credit.
ALTER TABLE sites ADD COLUMN budget_pool DOUBLE PRECISION;
ALTER TABLE sites ADD COLUMN budget_pool_at_ms BIGINT;
