-- The duplicate and canonical-page engine's state (module `dedup`), loaded at refresher start
-- with `DedupEngine::from_state` and written back after each fetch (only the rows that changed),
-- and the document store. 64-bit fingerprints are INTEGER (the u64 reinterpreted as i64).

-- What the engine knows of each normalised URL: its fingerprints and the evidence of its score.
CREATE TABLE dedup_urls (
    url                 TEXT    PRIMARY KEY,
    content_fp          INTEGER,          -- exact fingerprint of the main text
    simhash             INTEGER,          -- 64-bit simhash of the main text (0: none)
    sitemap_priority    REAL,
    temp_target         TEXT,             -- final target when it redirects with 302/303/307
    declared_canonical  TEXT,             -- what its rel=canonical names
    out_links           TEXT    NOT NULL DEFAULT '[]',  -- JSON: fingerprints of linked URLs
    memberships         TEXT    NOT NULL DEFAULT '[]'   -- JSON: class ids it is a member of
);

-- Classes of URLs: same content, same temporary-redirect target, or near-duplicate group.
CREATE TABLE dedup_classes (
    kind       TEXT    NOT NULL CHECK (kind IN ('content', 'redirect', 'near')),
    key        INTEGER NOT NULL,          -- content fingerprint, target-URL fingerprint or group
    canonical  TEXT,
    reason     TEXT    NOT NULL DEFAULT '',   -- why the canonical is what it is
    PRIMARY KEY (kind, key)
);

-- Members of each class with the scores they were ranked by (rank 0 is the best).
CREATE TABLE dedup_members (
    kind   TEXT    NOT NULL,
    key    INTEGER NOT NULL,
    rank   INTEGER NOT NULL,
    url    TEXT    NOT NULL,
    score  REAL    NOT NULL,
    PRIMARY KEY (kind, key, url),
    FOREIGN KEY (kind, key) REFERENCES dedup_classes(kind, key) ON DELETE CASCADE
);
CREATE INDEX dedup_members_url ON dedup_members(url);

-- Permanent redirects (301, 308) as observed: one hop per source; chains are followed on read.
CREATE TABLE dedup_redirects (
    source  TEXT PRIMARY KEY,
    target  TEXT NOT NULL
);

-- Permanent-redirect cycles refused by the engine (each also logged in `errors`).
CREATE TABLE dedup_redirect_errors (
    id             INTEGER PRIMARY KEY,
    chain          TEXT    NOT NULL UNIQUE,   -- JSON array of URLs; the last equals the first
    first_seen_ms  INTEGER NOT NULL
);

-- Near-duplicate group of each distinct content (simhash within the engine's distance).
CREATE TABLE dedup_near_groups (
    content_fp  INTEGER PRIMARY KEY,
    group_id    INTEGER NOT NULL
);

-- Scalars of the engine's state (`next_group`).
CREATE TABLE dedup_meta (
    name   TEXT    PRIMARY KEY,
    value  INTEGER NOT NULL
);

-- The latest body of each canonical page, zstd-compressed; `freshet export warc` reads it.
CREATE TABLE documents (
    url           TEXT    PRIMARY KEY,
    fetched_ms    INTEGER NOT NULL,
    content_type  TEXT,
    content_fp    INTEGER NOT NULL,
    body          BLOB    NOT NULL
);

-- duplicate_members: one row per class member, with the class's canonical, for the sqlite3 shell
-- (`SELECT * FROM duplicate_members WHERE kind = 'near'`).
CREATE VIEW duplicate_members AS
SELECT c.kind, printf('%016x', c.key) AS class_key, c.canonical, m.rank, m.url, m.score,
       m.url = c.canonical AS is_canonical,
       (SELECT COUNT(*) FROM dedup_members n WHERE n.kind = c.kind AND n.key = c.key) AS members
FROM dedup_classes c JOIN dedup_members m ON m.kind = c.kind AND m.key = c.key;
