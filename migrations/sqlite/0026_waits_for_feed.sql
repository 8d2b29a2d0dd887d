-- The feed whose announcements a page waits for instead of its plan (the twin of
-- migrations/postgres/0014_waits_for_feed.sql): such a page is fetched soon after the feed
-- lists a change, and otherwise only after several planned intervals, to check that the feed
-- still lists its changes; `explain` says so. Before, its next due time lay days past what its
-- planned visits a day implied, and nothing said why. NULL: its plan alone decides. Written
-- with the plans.
ALTER TABLE urls ADD COLUMN waits_for_feed_id INTEGER;
