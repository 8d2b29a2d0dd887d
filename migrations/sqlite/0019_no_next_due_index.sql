-- The index on `urls.next_due_ms` goes (the twin of
-- migrations/postgres/0007_no_next_due_index.sql). It served the due-URL queries the refresher
-- made before its frontier moved into memory (src/scheduler/frontier); no query filters or
-- sorts by the column now (the views take its MIN per site, a scan of the site's rows anyway).
-- Every check rewrites the column, so the index cost each check two more pages written (its
-- old entry out, the new one in, both at random places) for nothing.
DROP INDEX IF EXISTS urls_next_due;
