-- What freshet knows of its copies beyond their last check, and how fresh they were over time.
--
-- watched_from_ms .. watched_until_ms: a span after the page's copy over which it is known not
-- to have changed: the feed that covers it listed every change in the span, none of this page's.
ALTER TABLE urls ADD COLUMN watched_from_ms INTEGER;
ALTER TABLE urls ADD COLUMN watched_until_ms INTEGER;

-- One row per site every quarter of an hour (clock time) while `freshet run` runs: its copies'
-- importance-weighted mean expected age and probability of being stale, as the posterior and
-- what the feeds said judge them at that moment.
CREATE TABLE freshness_samples (
    site_id                INTEGER NOT NULL REFERENCES sites(id),
    at_ms                  INTEGER NOT NULL,
    copies                 INTEGER NOT NULL,
    known_stale            INTEGER NOT NULL,
    weight                 REAL    NOT NULL,
    mean_expected_age_days REAL    NOT NULL,
    mean_p_stale           REAL    NOT NULL,
    PRIMARY KEY (site_id, at_ms)
);

-- url_status and age_now gain what judging a copy needs: the posterior's Gamma and the watched
-- span. age_now's p_stale follows estimate::staleness: 1 for a known change; otherwise the chance
-- of a change in the time since the copy that nothing watched, averaged over the Gamma
-- posterior: p_stale = 1 - (b / (b + t))^a (t in days, as of the wall clock).
DROP VIEW age_now;
DROP VIEW url_status;
CREATE VIEW url_status AS
SELECT u.id AS url_id, u.url, s.name AS site, h.origin AS host, u.kind,
       u.last_checked_ms, u.checks, u.changes, u.last_status, u.last_error, u.next_due_ms,
       u.rate_per_day, u.rate_low, u.rate_high, u.planned_per_day, u.weight,
       u.last_changed_ms, u.known_change_ms, u.disallowed,
       u.rate_shape, u.rate_scale, u.watched_from_ms, u.watched_until_ms
FROM urls u JOIN sites s ON s.id = u.site_id JOIN hosts h ON h.id = u.host_id;

CREATE VIEW age_now AS
SELECT url, site, host, checks, changes, rate_per_day, days_since_check,
       CASE WHEN known_change_ms > last_checked_ms THEN 1.0
            WHEN rate_shape IS NULL OR unseen_days IS NULL THEN NULL
            ELSE 1.0 - pow(rate_scale / (rate_scale + unseen_days), rate_shape) END AS p_stale,
       CASE WHEN known_change_ms > last_checked_ms THEN 1 ELSE 0 END AS known_stale
FROM (
    SELECT *,
           (CAST(strftime('%s', 'now') AS INTEGER) * 1000 - last_checked_ms) / 86400000.0
               AS days_since_check,
           (CAST(strftime('%s', 'now') AS INTEGER) * 1000 - last_checked_ms
            - CASE WHEN watched_until_ms > MAX(watched_from_ms, last_checked_ms)
                   THEN MIN(watched_until_ms, CAST(strftime('%s', 'now') AS INTEGER) * 1000)
                        - MAX(watched_from_ms, last_checked_ms)
                   ELSE 0 END) / 86400000.0 AS unseen_days
    FROM url_status WHERE kind = 'page'
);
