-- The clock a run used: 1 for wall time, N for the virtual clock of `freshet demo` and tests
-- (N clock seconds per real second). Reports read "now" from the last virtual run's end, so a
-- demo database answers "how stale" as of the end of its own virtual time.
ALTER TABLE runs ADD COLUMN clock_speed REAL NOT NULL DEFAULT 1.0;
