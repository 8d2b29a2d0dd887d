-- When the plan a feed read's save of a URL's plan wrote was taken (clock ms; the twin of
-- migrations/postgres/0017_plan_saved.sql). A check whose plan was taken before it, and whose
-- commit lands after it, keeps the saved plan: the saved one is newer (a read ends waits).
-- Before, the check compared its plan with the row's `written_ms`, which every check, every
-- feed read and every adoption moves too: an old lease holder's late check, or a page's
-- adoption by another site, made a newer check keep an older plan. Written by `Store::save_plan` only (the save of every plan leaves it). NULL: none yet.
ALTER TABLE urls ADD COLUMN plan_saved_ms INTEGER;
