-- When the plan a feed read's save of a URL's plan wrote was taken (the twin of
-- migrations/sqlite/0029_plan_saved.sql, which says why and what the column holds).
ALTER TABLE urls ADD COLUMN plan_saved_ms BIGINT;
