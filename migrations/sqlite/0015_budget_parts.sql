-- Each worker's part of a site's budget, when several `freshet run` workers share one PostgreSQL
-- database (src/store/leases.rs): the visits a day its own plan gives the site's URLs on the
-- hosts it holds. A worker spends the site's budget times its part over the sum of the parts
-- still valid (until_ms not passed), so what all workers spend adds up to the one budget. A
-- worker's rows go when it shuts down; a killed worker's stop counting when they run out. A
-- single worker on SQLite writes none.
CREATE TABLE budget_parts (
    site_id          INTEGER NOT NULL,
    worker           TEXT    NOT NULL,
    planned_per_day  REAL    NOT NULL,
    until_ms         INTEGER NOT NULL,
    PRIMARY KEY (site_id, worker)
);
