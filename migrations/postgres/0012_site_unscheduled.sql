-- Since when a site is in none of the schedules the last run loaded (the twin of
-- migrations/sqlite/0024_site_unscheduled.sql, which says how it is used).
ALTER TABLE sites ADD COLUMN unscheduled_ms BIGINT;
