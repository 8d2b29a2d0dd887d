-- The truth beside freshet's estimate, for `freshet demo`'s database: the demo's world knows
-- every change and its server every fetch, so at each instant the refresher sampled
-- `freshness_samples` the demo records what the copies' age really was (src/demo/truth.rs,
-- `true_freshness_at`). `freshet report html` plots both; a database of a real `run` has no rows.
CREATE TABLE true_freshness_samples (
    site_id        INTEGER NOT NULL REFERENCES sites(id),
    at_ms          INTEGER NOT NULL,
    copies         INTEGER NOT NULL,  -- distinct pages of the world with a copy at at_ms
    stale          INTEGER NOT NULL,  -- of them, changed since their last fetch
    mean_age_days  REAL    NOT NULL,  -- mean true age of those copies (0 while current)
    share_stale    REAL    NOT NULL,  -- stale / copies
    PRIMARY KEY (site_id, at_ms)
);
