-- Each site's budget credit as the last run left it (src/refresher/ledger: `budget_saves`): the
-- requests it could still send at `budget_credit_at_ms`, negative when more were charged. A
-- run restores it at start, refilled at the site's rate since then, so that a restart (or each
-- `run --once` pass) goes on from what was spent instead of a full bucket.
ALTER TABLE sites ADD COLUMN budget_credit REAL;
ALTER TABLE sites ADD COLUMN budget_credit_at_ms INTEGER;
