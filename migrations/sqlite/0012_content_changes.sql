-- Change detection on what matters: every check records whether the page's main content changed
-- (the extracted main text, as the dedup engine fingerprints it; the bytes for bodies without
-- text) separately from whether its bytes changed. A site's `change_signal` picks which of the
-- two feeds the estimator; both are kept.
--
-- observations.content_fingerprint: content fingerprint of the body read (NULL: no body, or a
-- row written before this migration). observations.content_changed: 1 changed, 0 unchanged (a
-- 304 is unchanged), NULL unknown (first copy, error, or a row from before this migration).
ALTER TABLE observations ADD COLUMN content_fingerprint INTEGER;
ALTER TABLE observations ADD COLUMN content_changed INTEGER;
-- urls.content_fingerprint: of our copy. urls.content_changes: checks that saw the main content
-- change (counted from this migration on; `changes` counts byte changes).
ALTER TABLE urls ADD COLUMN content_fingerprint INTEGER;
ALTER TABLE urls ADD COLUMN content_changes INTEGER NOT NULL DEFAULT 0;
-- sites.change_signal: the site's `change_signal` as last loaded ('content' or 'bytes'; NULL for
-- a site not loaded since this migration).
ALTER TABLE sites ADD COLUMN change_signal TEXT;

-- The views that list changes show content changes next to them (definitions otherwise as in
-- 0009_views for age_now and staleness_by_site, 0008_freshness for url_status, 0001_initial for
-- host_status).
DROP VIEW host_status;
DROP VIEW staleness_by_site;
DROP VIEW age_now;
DROP VIEW url_status;
CREATE VIEW url_status AS
SELECT u.id AS url_id, u.url, s.name AS site, h.origin AS host, u.kind,
       u.last_checked_ms, u.checks, u.changes, u.last_status, u.last_error, u.next_due_ms,
       u.rate_per_day, u.rate_low, u.rate_high, u.planned_per_day, u.weight,
       u.last_changed_ms, u.known_change_ms, u.disallowed,
       u.rate_shape, u.rate_scale, u.watched_from_ms, u.watched_until_ms,
       u.content_changes
FROM urls u JOIN sites s ON s.id = u.site_id JOIN hosts h ON h.id = u.host_id;

CREATE VIEW age_now AS
WITH copies AS (
    SELECT u.url, u.site, u.host, u.checks, u.changes, u.content_changes, u.rate_per_day, u.rate_low, u.rate_high,
           u.weight, u.last_checked_ms, u.known_change_ms, c.now_ms,
           CASE WHEN u.rate_shape > 0 AND u.rate_scale > 0 THEN u.rate_shape END AS a,
           CASE WHEN u.rate_shape > 0 AND u.rate_scale > 0 THEN u.rate_scale END AS b,
           MAX(c.now_ms, u.last_checked_ms) AS t_now,
           MAX(u.watched_from_ms, u.last_checked_ms) AS w_from,
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
       last_checked_ms, now_ms,
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
       known_stale
FROM judged;

CREATE VIEW staleness_by_site AS
WITH duplicate_urls AS (
    SELECT DISTINCT m.url FROM dedup_members m
    JOIN dedup_classes c ON c.kind = m.kind AND c.key = m.key
    WHERE c.kind = 'content' AND c.canonical IS NOT NULL AND c.canonical != m.url
), kinds AS (
    SELECT u.url_id, u.site, u.checks, u.changes, u.content_changes, u.disallowed,
           u.url IN (SELECT url FROM duplicate_urls) AS is_duplicate,
           u.url NOT IN (SELECT url FROM duplicate_urls)
               AND u.url IN (SELECT source FROM dedup_redirects) AS is_redirect
    FROM url_status u WHERE u.kind = 'page'
), latest AS (
    SELECT f.* FROM freshness_samples f
    WHERE f.at_ms = (SELECT MAX(g.at_ms) FROM freshness_samples g WHERE g.site_id = f.site_id)
), judged AS (
    SELECT site, COUNT(*) AS copies,
           SUM(weight * p_stale) / NULLIF(SUM(weight), 0) AS mean_p_stale,
           SUM(weight * expected_age_days) / NULLIF(SUM(weight), 0) AS mean_expected_age_days
    FROM age_now WHERE p_stale IS NOT NULL AND expected_age_days IS NOT NULL GROUP BY site
)
SELECT s.name AS site,
       COUNT(k.url_id) AS urls,
       COALESCE(SUM(1 - k.is_duplicate - k.is_redirect), 0) AS pages,
       COALESCE(SUM(k.is_duplicate), 0) AS duplicates,
       COALESCE(SUM(k.is_redirect), 0) AS redirects,
       COALESCE(SUM(k.disallowed), 0) AS disallowed,
       COALESCE(SUM(k.checks = 0), 0) AS never_checked,
       COALESCE(SUM(k.checks), 0) AS checks,
       COALESCE(SUM(k.changes), 0) AS changes,
       COALESCE(SUM(k.content_changes), 0) AS content_changes,
       CASE WHEN SUM(k.checks) > 0 THEN 1.0 * SUM(k.changes) / SUM(k.checks) END AS change_ratio,
       CASE WHEN SUM(k.checks) > 0 THEN 1.0 * SUM(k.content_changes) / SUM(k.checks) END
           AS content_change_ratio,
       j.copies AS copies,
       j.mean_p_stale AS mean_p_stale,
       j.mean_expected_age_days AS mean_expected_age_days,
       l.at_ms AS sampled_ms,
       l.copies AS sampled_copies,
       l.known_stale AS sampled_known_stale,
       l.mean_p_stale AS sampled_mean_p_stale,
       l.mean_expected_age_days AS sampled_mean_expected_age_days
FROM sites s
LEFT JOIN kinds k ON k.site = s.name
LEFT JOIN judged j ON j.site = s.name
LEFT JOIN latest l ON l.site_id = s.id
GROUP BY s.id;

CREATE VIEW host_status AS
SELECT h.origin AS host, COUNT(u.id) AS urls, COALESCE(SUM(u.checks), 0) AS checks,
       COALESCE(SUM(u.changes), 0) AS changes,
       COALESCE(SUM(u.content_changes), 0) AS content_changes,
       SUM(CASE WHEN u.last_error IS NOT NULL THEN 1 ELSE 0 END) AS urls_in_error,
       MAX(u.last_checked_ms) AS last_checked_ms, MIN(u.next_due_ms) AS next_due_ms,
       h.crawl_delay_ms, h.robots_status, h.robots_checked_ms, h.backoff_until_ms
FROM hosts h LEFT JOIN urls u ON u.host_id = h.id GROUP BY h.id;
