-- Since when a site is in none of the schedules the last run loaded (NULL: scheduled; the
-- twin of migrations/postgres/0012_site_unscheduled.sql). A site renamed in its schedule file
-- is a new site to the store, and its URLs keep the old site's id: a known URL whose site is
-- unscheduled is taken over by the scheduled site that names it again, with its history
-- (src/store/found_writes.rs), rather than left out of every plan.
ALTER TABLE sites ADD COLUMN unscheduled_ms INTEGER;
