-- When the URL's copy was taken: the last check that left one (2xx, or a 304 that confirmed
-- it), where `last_checked_ms` is the last check whatever it answered (the twin of
-- migrations/postgres/0013_copy_time.sql). A copy is as stale as the time since it was taken:
-- judged from the last check, a page that answered 500 or 404 since its copy read as fresh as
-- that failed check, and one that never answered with a page read as holding a copy at all.
-- Filled from the observations: the last check with a 2xx or 304 and no error (what a check
-- counts as leaving a copy), which is the copy the row's validators and fingerprints are of.
ALTER TABLE urls ADD COLUMN copy_ms INTEGER;
UPDATE urls SET copy_ms = (
    SELECT MAX(o.checked_ms) FROM observations o
    WHERE o.url_id = urls.id AND o.error IS NULL
      AND (o.status BETWEEN 200 AND 299 OR o.status = 304)
);

-- The views judge the copy from its time too (`copy_ms` added to url_status and age_now; in
-- age_now `last_checked_ms` stays the last check, and `days_since_check`, `p_stale` and
-- `expected_age_days` are the copy's). Copied from 0012_content_changes but for that.
DROP VIEW age_now;
DROP VIEW url_status;
CREATE VIEW url_status AS
SELECT u.id AS url_id, u.url, s.name AS site, h.origin AS host, u.kind,
       u.last_checked_ms, u.checks, u.changes, u.last_status, u.last_error, u.next_due_ms,
       u.rate_per_day, u.rate_low, u.rate_high, u.planned_per_day, u.weight,
       u.last_changed_ms, u.known_change_ms, u.disallowed,
       u.rate_shape, u.rate_scale, u.watched_from_ms, u.watched_until_ms,
       u.content_changes, u.copy_ms
FROM urls u JOIN sites s ON s.id = u.site_id JOIN hosts h ON h.id = u.host_id;

CREATE VIEW age_now AS
WITH copies AS (
    SELECT u.url, u.site, u.host, u.checks, u.changes, u.content_changes, u.rate_per_day, u.rate_low, u.rate_high,
           u.weight, u.copy_ms AS last_checked_ms, u.last_checked_ms AS checked_ms, u.known_change_ms, c.now_ms,
           CASE WHEN u.rate_shape > 0 AND u.rate_scale > 0 THEN u.rate_shape END AS a,
           CASE WHEN u.rate_shape > 0 AND u.rate_scale > 0 THEN u.rate_scale END AS b,
           MAX(c.now_ms, u.copy_ms) AS t_now,
           MAX(u.watched_from_ms, u.copy_ms) AS w_from,
           u.watched_until_ms AS w_until
    FROM url_status u CROSS JOIN report_clock c
    WHERE u.kind = 'page'
), spans AS (
    SELECT *, COALESCE(w_until > w_from AND w_from < t_now, 0) AS has_w FROM copies
), parts AS (
    SELECT *,
           (CASE WHEN has_w THEN w_from ELSE t_now END - last_checked_ms) / 86400000.0
               AS before_days,
           CASE WHEN has_w THEN (MIN(w_until, t_now) - w_from) / 86400000.0 ELSE 0.0 END
               AS watched_days,
           CASE WHEN has_w THEN (t_now - MIN(w_until, t_now)) / 86400000.0 ELSE 0.0 END
               AS after_days,
           COALESCE(known_change_ms > last_checked_ms, 0) AS known_stale
    FROM spans
), judged AS (
    SELECT *, before_days + after_days AS unseen_days,
           (before_days + after_days) / b AS z
    FROM parts
)
SELECT url, site, host, checks, changes, content_changes, rate_per_day, rate_low, rate_high, weight,
       checked_ms AS last_checked_ms, now_ms,
       (t_now - last_checked_ms) / 86400000.0 AS days_since_check,
       unseen_days,
       CASE WHEN known_stale THEN 1.0
            WHEN unseen_days IS NULL THEN NULL
            WHEN a IS NOT NULL THEN 1.0 - pow(b / (b + unseen_days), a)
            WHEN rate_per_day > 0 THEN 1.0 - exp(-rate_per_day * unseen_days)
       END AS p_stale,
       CASE WHEN known_stale THEN MAX(now_ms - known_change_ms, 0) / 86400000.0
            WHEN unseen_days IS NULL THEN NULL
            WHEN a IS NOT NULL THEN
                watched_days * (1.0 - pow(b / (b + before_days), a))
                + CASE WHEN unseen_days <= 0 THEN 0.0
                       WHEN (a + 2.0) * z < 1e-4 THEN
                           unseen_days * (a * z / 2.0)
                           * (1.0 - (a + 1.0) * z / 3.0 * (1.0 - (a + 2.0) * z / 4.0))
                       WHEN abs((1.0 - a) * ln(1.0 + z)) < 1e-8 THEN
                           MAX(0.0, unseen_days - b * ln(1.0 + z))
                       ELSE MAX(0.0, unseen_days - b * (pow(1.0 + z, 1.0 - a) - 1.0) / (1.0 - a))
                  END
            WHEN rate_per_day > 0 THEN
                watched_days * (1.0 - exp(-rate_per_day * before_days))
                + MAX(0.0, unseen_days - (1.0 - exp(-rate_per_day * unseen_days)) / rate_per_day)
       END AS expected_age_days,
       known_stale,
       last_checked_ms AS copy_ms
FROM judged;
