-- freshet's schema. Every timestamp is INTEGER Unix milliseconds. 64-bit hashes are stored as
-- INTEGER (the u64 reinterpreted as i64).

-- One row per schedule entry.
CREATE TABLE sites (
    id               INTEGER PRIMARY KEY,
    name             TEXT    NOT NULL UNIQUE,
    weight           REAL    NOT NULL DEFAULT 1.0,
    requests_per_day REAL    NOT NULL,
    source_file      TEXT,
    discovered_ms    INTEGER,          -- last completed discovery pass
    updated_ms       INTEGER NOT NULL
);

-- One row per origin (scheme://host:port), the unit of politeness.
CREATE TABLE hosts (
    id                 INTEGER PRIMARY KEY,
    origin             TEXT    NOT NULL UNIQUE,
    robots_checked_ms  INTEGER,        -- when robots.txt was last fetched
    robots_status      INTEGER,        -- its HTTP status; NULL when unreachable
    robots_txt         BLOB,           -- its body (capped at 500 KiB)
    robots_error       TEXT,
    crawl_delay_ms     INTEGER,
    backoff_until_ms   INTEGER,
    trust_json         TEXT            -- learnt validator trust (estimate::ValidatorTrust)
);

-- One row per URL: what it is, where it came from, and the summary the scheduler reads so that it
-- never scans history.
CREATE TABLE urls (
    id               INTEGER PRIMARY KEY,
    url              TEXT    NOT NULL UNIQUE,
    site_id          INTEGER NOT NULL REFERENCES sites(id),
    host_id          INTEGER NOT NULL REFERENCES hosts(id),
    kind             TEXT    NOT NULL DEFAULT 'page' CHECK (kind IN ('page', 'sitemap', 'feed')),
    discovered_ms    INTEGER NOT NULL,
    discovered_from  TEXT,            -- the sitemap, feed, seed or robots.txt that named it
    lastmod_ms       INTEGER,         -- latest sitemap lastmod (not in the future)
    changefreq       TEXT,
    priority         REAL,
    disallowed       INTEGER NOT NULL DEFAULT 0,
    -- summary of checks
    checks           INTEGER NOT NULL DEFAULT 0,
    changes          INTEGER NOT NULL DEFAULT 0,
    last_checked_ms  INTEGER,
    last_status      INTEGER,
    last_error       TEXT,
    last_changed_ms  INTEGER,         -- check time at which the last change was seen
    etag             TEXT,
    last_modified    TEXT,            -- raw header, sent back as If-Modified-Since
    fingerprint      INTEGER,
    known_change_ms  INTEGER,         -- a feed entry or lastmod says it changed at this time
    min_interval_ms  INTEGER,         -- server floor: Cache-Control, Retry-After, feed ttl
    -- estimate and plan
    rate_per_day     REAL,
    rate_low         REAL,
    rate_high        REAL,
    rate_shape       REAL,            -- the Gamma posterior behind the estimate
    rate_scale       REAL,            -- (its rate parameter, in days)
    weight           REAL    NOT NULL DEFAULT 1.0,
    planned_per_day  REAL,
    next_due_ms      INTEGER
);
CREATE INDEX urls_next_due ON urls(next_due_ms);
CREATE INDEX urls_site ON urls(site_id);
CREATE INDEX urls_host ON urls(host_id);

-- Append-only: one row per request made for a URL. The evidence estimates are derived from.
CREATE TABLE observations (
    id                INTEGER PRIMARY KEY,
    url_id            INTEGER NOT NULL REFERENCES urls(id),
    checked_ms        INTEGER NOT NULL,
    method            TEXT    NOT NULL,
    status            INTEGER,         -- NULL when no response arrived
    etag              TEXT,
    last_modified_ms  INTEGER,
    fingerprint       INTEGER,
    bytes             INTEGER NOT NULL DEFAULT 0,
    duration_ms       INTEGER NOT NULL DEFAULT 0,
    error             TEXT,
    changed           INTEGER,         -- 1 changed, 0 unchanged, NULL unknown (first check, error)
    change_evidence   TEXT,            -- '304', 'etag', 'last-modified', 'fingerprint', 'first'
    final_url         TEXT,
    redirects         TEXT             -- JSON [[url, status], ...] of each hop
);
CREATE INDEX observations_url ON observations(url_id, checked_ms);

-- Exact change times announced by feeds or trusted lastmod: strongest evidence for the estimator.
CREATE TABLE change_events (
    url_id     INTEGER NOT NULL REFERENCES urls(id),
    changed_ms INTEGER NOT NULL,
    source     TEXT    NOT NULL,
    PRIMARY KEY (url_id, changed_ms)
);

-- Every problem met on the way, with where it was.
CREATE TABLE errors (
    id       INTEGER PRIMARY KEY,
    at_ms    INTEGER NOT NULL,
    scope    TEXT    NOT NULL,   -- schedule, robots, sitemap, feed, fetch, dedup
    site     TEXT,
    url      TEXT,
    file     TEXT,
    line     INTEGER,
    message  TEXT    NOT NULL
);
CREATE INDEX errors_at ON errors(at_ms);

-- One row per `freshet run`.
CREATE TABLE runs (
    id         INTEGER PRIMARY KEY,
    started_ms INTEGER NOT NULL,
    ended_ms   INTEGER,
    policy     TEXT    NOT NULL,
    requests   INTEGER NOT NULL DEFAULT 0,
    checks     INTEGER NOT NULL DEFAULT 0,
    changes    INTEGER NOT NULL DEFAULT 0,
    errors     INTEGER NOT NULL DEFAULT 0
);

-- Views for the reports and for people with only the sqlite3 shell.
-- url_status: one row per URL with its site and host names.
CREATE VIEW url_status AS
SELECT u.id AS url_id, u.url, s.name AS site, h.origin AS host, u.kind,
       u.last_checked_ms, u.checks, u.changes, u.last_status, u.last_error, u.next_due_ms,
       u.rate_per_day, u.rate_low, u.rate_high, u.planned_per_day, u.weight,
       u.last_changed_ms, u.known_change_ms, u.disallowed
FROM urls u JOIN sites s ON s.id = u.site_id JOIN hosts h ON h.id = u.host_id;

-- age_now: days since each page was last checked, as of the moment the view is read.
CREATE VIEW age_now AS
SELECT url, site, host, checks, changes, rate_per_day,
       (CAST(strftime('%s', 'now') AS INTEGER) * 1000 - last_checked_ms) / 86400000.0
           AS days_since_check
FROM url_status WHERE kind = 'page';

-- staleness_by_site: per site, pages, checks, changes seen and the share of checks that saw one.
CREATE VIEW staleness_by_site AS
SELECT site, COUNT(*) AS pages, SUM(checks) AS checks, SUM(changes) AS changes,
       CASE WHEN SUM(checks) > 0 THEN 1.0 * SUM(changes) / SUM(checks) END AS change_ratio,
       SUM(CASE WHEN checks = 0 THEN 1 ELSE 0 END) AS never_checked
FROM url_status WHERE kind = 'page' GROUP BY site;

-- host_status: per origin, pages, checks, changes, errors, politeness state.
CREATE VIEW host_status AS
SELECT h.origin AS host, COUNT(u.id) AS urls, COALESCE(SUM(u.checks), 0) AS checks,
       COALESCE(SUM(u.changes), 0) AS changes,
       SUM(CASE WHEN u.last_error IS NOT NULL THEN 1 ELSE 0 END) AS urls_in_error,
       MAX(u.last_checked_ms) AS last_checked_ms, MIN(u.next_due_ms) AS next_due_ms,
       h.crawl_delay_ms, h.robots_status, h.robots_checked_ms, h.backoff_until_ms
FROM hosts h LEFT JOIN urls u ON u.host_id = h.id GROUP BY h.id;
