-- Leases (the twin of migrations/sqlite/0014_leases.sql): which worker holds what, until when. Several `freshet run` workers on one PostgreSQL
-- database share the work through them (src/store/leases.rs); a single worker on SQLite takes
-- none. kind 'host' (key: the politeness host key, politeness::host_key): only the worker that
-- holds it contacts that host, pages, robots.txt, sitemaps and feeds alike; kind 'worker' (key:
-- the worker's name): its heartbeat, which tells the others how many share the hosts. A lease
-- whose until_ms has passed is free for the taking. `spread` orders the free hosts differently
-- for each worker, so that workers claiming at once rarely want the same rows.
CREATE TABLE leases (
    kind      TEXT    NOT NULL CHECK (kind IN ('host', 'worker')),
    key       TEXT    NOT NULL,
    worker    TEXT,
    until_ms  BIGINT  NOT NULL DEFAULT 0,
    spread    BIGINT  NOT NULL DEFAULT 0,
    PRIMARY KEY (kind, key)
);
