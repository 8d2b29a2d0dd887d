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
-- 0008_freshness and 0001_initial).
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
SELECT url, site, host, checks, changes, content_changes, rate_per_day, days_since_check,
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

CREATE VIEW staleness_by_site AS
SELECT site, COUNT(*) AS pages, SUM(checks) AS checks, SUM(changes) AS changes,
       SUM(content_changes) AS content_changes,
       CASE WHEN SUM(checks) > 0 THEN 1.0 * SUM(changes) / SUM(checks) END AS change_ratio,
       CASE WHEN SUM(checks) > 0 THEN 1.0 * SUM(content_changes) / SUM(checks) END
           AS content_change_ratio,
       SUM(CASE WHEN checks = 0 THEN 1 ELSE 0 END) AS never_checked
FROM url_status WHERE kind = 'page' GROUP BY site;

CREATE VIEW host_status AS
SELECT h.origin AS host, COUNT(u.id) AS urls, COALESCE(SUM(u.checks), 0) AS checks,
       COALESCE(SUM(u.changes), 0) AS changes,
       COALESCE(SUM(u.content_changes), 0) AS content_changes,
       SUM(CASE WHEN u.last_error IS NOT NULL THEN 1 ELSE 0 END) AS urls_in_error,
       MAX(u.last_checked_ms) AS last_checked_ms, MIN(u.next_due_ms) AS next_due_ms,
       h.crawl_delay_ms, h.robots_status, h.robots_checked_ms, h.backoff_until_ms
FROM hosts h LEFT JOIN urls u ON u.host_id = h.id GROUP BY h.id;
