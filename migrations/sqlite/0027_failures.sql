-- A URL's checks that failed in a row, up to the last, as the scheduler counts them (the twin
-- of migrations/postgres/0015_failures.sql). From the second such failure the URL is out of
-- its site's plan and tried again on a back-off; before, the count lived in memory only, so
-- after every restart a failing URL took its full share of the budget until it failed twice
-- more. A failure that is the host's (429, 503, no connection) does not count, nor reset it.
-- Written with each check's summary.
ALTER TABLE urls ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
