-- The feed whose announcements a page waits for instead of its plan (the twin of
-- migrations/sqlite/0026_waits_for_feed.sql, which says why).
ALTER TABLE urls ADD COLUMN waits_for_feed_id BIGINT;
