-- Views that hold what their names say (issue 12), and the refusals table.
--
-- report_clock: the "now" every report judges copies at. A database whose last run used the
-- virtual clock (`freshet demo`, tests) is judged as of that run's end; otherwise the wall clock.
-- The same rule as Store::report_now, so `sqlite3` and `freshet report` agree.
CREATE VIEW report_clock AS
SELECT CASE WHEN r.clock_speed != 1.0 AND r.ended_ms IS NOT NULL THEN r.ended_ms
            ELSE CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER) END AS now_ms,
       CASE WHEN r.clock_speed != 1.0 AND r.ended_ms IS NOT NULL THEN 'virtual run end'
            ELSE 'wall clock' END AS clock
FROM (SELECT 1) LEFT JOIN (SELECT clock_speed, ended_ms FROM runs ORDER BY id DESC LIMIT 1) r
    ON 1;

-- age_now: per page, as of report_clock: days since its last check, the span of them nothing
-- watched, and the copy's probable staleness and expected age (days), as estimate::staleness
-- computes them: a known later change makes the copy known stale (age = now - change);
-- otherwise with the Gamma(a, b) posterior on the rate, g1 days from the copy to a watched span
-- of w days and g2 days after it (t = g1 + g2 unseen):
--   p_stale = 1 - (b / (b + t))^a
--   expected_age_days = w * (1 - (b / (b + g1))^a) + t - b ((1 + t/b)^(1-a) - 1) / (1 - a)
-- (b ln(1 + t/b) at a = 1; a series when t/b is tiny). A row with only a point rate λ uses the
-- exponential: 1 - e^{-λt} and t - (1 - e^{-λt}) / λ. Never-checked pages have NULLs.
DROP VIEW age_now;
CREATE VIEW age_now AS
WITH copies AS (
    SELECT u.url, u.site, u.host, u.checks, u.changes, u.rate_per_day, u.rate_low, u.rate_high,
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
SELECT url, site, host, checks, changes, rate_per_day, rate_low, rate_high, weight,
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

-- staleness_by_site: per site, its page URLs told apart (`urls` = `pages` + `duplicates` +
-- `redirects`: a duplicate is a non-canonical member of a content class, a redirect a permanent
-- redirect's source: neither is a page of its own), their checks and changes, the copies'
-- weighted mean probability of being stale and expected age now (from age_now), and the latest
-- freshness sample the refresher recorded (`sampled_*`, NULL before the first one).
DROP VIEW staleness_by_site;
CREATE VIEW staleness_by_site AS
WITH duplicate_urls AS (
    SELECT DISTINCT m.url FROM dedup_members m
    JOIN dedup_classes c ON c.kind = m.kind AND c.key = m.key
    WHERE c.kind = 'content' AND c.canonical IS NOT NULL AND c.canonical != m.url
), kinds AS (
    SELECT u.url_id, u.site, u.checks, u.changes, u.disallowed,
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
       CASE WHEN SUM(k.checks) > 0 THEN 1.0 * SUM(k.changes) / SUM(k.checks) END AS change_ratio,
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

-- Every URL freshet chose not to add or not to fetch, and why: the latest refusal per URL and
-- reason (a URL refused again updates its row and counts it). `reason` is one of 'robots'
-- (a robots.txt Disallow or an unreadable robots.txt), 'filter' (the site's include/exclude
-- patterns, or not http(s)), 'address' (the address policy refused the resolved address),
-- 'cross-host' (a sitemap or feed named a URL on another host or outside its directory).
-- `rule` is what decided: the robots.txt rule, the pattern, the address and range, the
-- sitemap or feed; `source` where the URL came from.
CREATE TABLE refusals (
    url       TEXT    NOT NULL,
    reason    TEXT    NOT NULL CHECK (reason IN ('robots', 'filter', 'address', 'cross-host')),
    rule      TEXT    NOT NULL,
    site      TEXT,
    source    TEXT,
    first_ms  INTEGER NOT NULL,
    last_ms   INTEGER NOT NULL,
    times     INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (url, reason)
);
CREATE INDEX refusals_last ON refusals(last_ms);
