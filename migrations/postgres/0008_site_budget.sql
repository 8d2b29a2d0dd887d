-- Each site's budget credit as the last run left it (the twin of
-- migrations/sqlite/0020_site_budget.sql). With several workers, the last one to save writes
-- its own share's credit; a worker restores it at start and its share's rate refills it.
ALTER TABLE sites ADD COLUMN budget_credit DOUBLE PRECISION;
ALTER TABLE sites ADD COLUMN budget_credit_at_ms BIGINT;
