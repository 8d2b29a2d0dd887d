-- The scheduler's folded evidence per URL (estimate::Stats as JSON: exact events, exposure in
-- days, and the histogram of changed-check intervals). A restart rebuilds every estimate from
-- this column instead of re-reading observations, and old observations can be compacted without
-- changing an estimate.
ALTER TABLE urls ADD COLUMN stats TEXT;
