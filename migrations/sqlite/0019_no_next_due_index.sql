-- The index on `urls.next_due_ms` goes (the twin of
-- migrations/postgres/0007_no_next_due_index.sql). It served the due-URL queries the refresher
-- made before its frontier moved into memory (src/scheduler/frontier); no query filters or
-- sorts by the column now (the `host_status` view takes its MIN per host over every row of
-- `urls` anyway, which a one-column index cannot serve). Every check rewrites the column, so
-- each check also wrote the index: at most two of its pages (a URL is checked when due, so its
-- old entry is near the index's low end, shared by the other checks of its group).
DROP INDEX IF EXISTS urls_next_due;
