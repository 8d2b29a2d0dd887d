-- When the URL's copy was taken (the twin of migrations/sqlite/0025_copy_time.sql, which says
-- why).
ALTER TABLE urls ADD COLUMN copy_ms BIGINT;
UPDATE urls SET copy_ms = (
    SELECT MAX(o.checked_ms) FROM observations o
    WHERE o.url_id = urls.id AND o.error IS NULL
      AND (o.status BETWEEN 200 AND 299 OR o.status = 304)
);

-- The views judge the copy from its time too (the twin of the sqlite migration's views, from
-- 0001_schema but for that; columns are added at the end, which CREATE OR REPLACE allows).
CREATE OR REPLACE VIEW url_status AS
SELECT u.id AS url_id, u.url, s.name AS site, h.origin AS host, u.kind,
       u.last_checked_ms, u.checks, u.changes, u.last_status, u.last_error, u.next_due_ms,
       u.rate_per_day, u.rate_low, u.rate_high, u.planned_per_day, u.weight,
       u.last_changed_ms, u.known_change_ms, u.disallowed,
       u.rate_shape, u.rate_scale, u.watched_from_ms, u.watched_until_ms,
       u.content_changes, u.copy_ms
FROM urls u JOIN sites s ON s.id = u.site_id JOIN hosts h ON h.id = u.host_id;

CREATE OR REPLACE VIEW age_now AS
WITH copies AS (
    SELECT u.url, u.site, u.host, u.checks, u.changes, u.content_changes, u.rate_per_day,
           u.rate_low, u.rate_high, u.weight, u.copy_ms AS last_checked_ms, u.last_checked_ms AS checked_ms, u.known_change_ms, c.now_ms,
           CASE WHEN u.rate_shape > 0 AND u.rate_scale > 0 THEN u.rate_shape END AS a,
           CASE WHEN u.rate_shape > 0 AND u.rate_scale > 0 THEN u.rate_scale END AS b,
           -- SQLite's MAX(x, y), NULL when either is NULL
           CASE WHEN c.now_ms IS NULL OR u.copy_ms IS NULL THEN NULL
                ELSE GREATEST(c.now_ms, u.copy_ms) END AS t_now,
           CASE WHEN u.watched_from_ms IS NULL OR u.copy_ms IS NULL THEN NULL
                ELSE GREATEST(u.watched_from_ms, u.copy_ms) END AS w_from,
           u.watched_until_ms AS w_until
    FROM url_status u CROSS JOIN report_clock c
    WHERE u.kind = 'page'
), spans AS (
    -- SQLite: COALESCE(w_until > w_from AND w_from < t_now, 0)
    SELECT *, CASE WHEN w_until > w_from AND w_from < t_now THEN 1 ELSE 0 END AS has_w
    FROM copies
), parts AS (
    -- with has_w = 1, w_until, w_from and t_now are all non-NULL: LEAST is SQLite's MIN there
    SELECT *,
           (CASE WHEN has_w = 1 THEN w_from ELSE t_now END - last_checked_ms)::double precision
               / 86400000.0::double precision AS before_days,
           CASE WHEN has_w = 1
                THEN (LEAST(w_until, t_now) - w_from)::double precision
                     / 86400000.0::double precision
                ELSE 0.0::double precision END AS watched_days,
           CASE WHEN has_w = 1
                THEN (t_now - LEAST(w_until, t_now))::double precision
                     / 86400000.0::double precision
                ELSE 0.0::double precision END AS after_days,
           -- SQLite: COALESCE(known_change_ms > last_checked_ms, 0)
           CASE WHEN known_change_ms > last_checked_ms THEN 1 ELSE 0 END::bigint AS known_stale
    FROM spans
), judged AS (
    SELECT *, before_days + after_days AS unseen_days,
           (before_days + after_days) / b AS z     -- b > 0 or NULL
    FROM parts
), decays AS (
    -- each computed only where the final SELECT uses it (a Gamma posterior; a positive rate)
    SELECT *,
           -- (b / (b + unseen_days))^a
           CASE WHEN a IS NULL THEN NULL::double precision
                WHEN a * ln(b / (b + unseen_days)) < -700.0 THEN 0.0::double precision
                ELSE pow(b / (b + unseen_days), a) END AS pow_unseen,
           -- (b / (b + before_days))^a
           CASE WHEN a IS NULL THEN NULL::double precision
                WHEN a * ln(b / (b + before_days)) < -700.0 THEN 0.0::double precision
                ELSE pow(b / (b + before_days), a) END AS pow_before,
           -- (1 + z)^(1 - a)
           CASE WHEN a IS NULL THEN NULL::double precision
                WHEN (1.0 - a) * ln(1.0 + z) < -700.0 THEN 0.0::double precision
                ELSE pow(1.0 + z, 1.0 - a) END AS pow_z,
           -- e^{-λ unseen_days}, e^{-λ before_days}
           CASE WHEN NOT rate_per_day > 0 THEN NULL::double precision
                WHEN -rate_per_day * unseen_days < -700.0 THEN 0.0::double precision
                ELSE exp(-rate_per_day * unseen_days) END AS exp_unseen,
           CASE WHEN NOT rate_per_day > 0 THEN NULL::double precision
                WHEN -rate_per_day * before_days < -700.0 THEN 0.0::double precision
                ELSE exp(-rate_per_day * before_days) END AS exp_before
    FROM judged
)
SELECT url, site, host, checks, changes, content_changes, rate_per_day, rate_low, rate_high, weight,
       checked_ms AS last_checked_ms, now_ms,
       (t_now - last_checked_ms)::double precision / 86400000.0::double precision
           AS days_since_check,
       unseen_days,
       CASE WHEN known_stale = 1 THEN 1.0::double precision
            WHEN unseen_days IS NULL THEN NULL::double precision
            WHEN a IS NOT NULL THEN 1.0 - pow_unseen
            WHEN rate_per_day > 0 THEN 1.0 - exp_unseen
       END AS p_stale,
       CASE WHEN known_stale = 1 THEN
                GREATEST(now_ms - known_change_ms, 0)::double precision
                / 86400000.0::double precision
            WHEN unseen_days IS NULL THEN NULL::double precision
            WHEN a IS NOT NULL THEN
                watched_days * (1.0 - pow_before)
                + CASE WHEN unseen_days <= 0 THEN 0.0::double precision
                       WHEN (a + 2.0) * z < 1e-4 THEN
                           unseen_days * (a * z / 2.0)
                           * (1.0 - (a + 1.0) * z / 3.0 * (1.0 - (a + 2.0) * z / 4.0))
                       WHEN abs((1.0 - a) * ln(1.0 + z)) < 1e-8 THEN
                           GREATEST(0.0::double precision, unseen_days - b * ln(1.0 + z))
                       -- 1 - a != 0 here: the branch above takes a = 1
                       ELSE GREATEST(0.0::double precision,
                                     unseen_days - b * (pow_z - 1.0) / (1.0 - a))
                  END
            WHEN rate_per_day > 0 THEN
                watched_days * (1.0 - exp_before)
                + GREATEST(0.0::double precision,
                           unseen_days - (1.0 - exp_unseen) / rate_per_day)
       END AS expected_age_days,
       known_stale,
       last_checked_ms AS copy_ms
FROM decays;
