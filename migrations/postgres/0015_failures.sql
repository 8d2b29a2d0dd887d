-- A URL's checks that failed in a row, up to the last, as the scheduler counts them (the twin
-- of migrations/sqlite/0027_failures.sql, which says why).
ALTER TABLE urls ADD COLUMN failures BIGINT NOT NULL DEFAULT 0;
