-- When a URL's last check was handed to the store (clock ms; the twin of
-- migrations/postgres/0004_written.sql). Several workers on one database read what the others
-- wrote since their last read by it (src/refresher/leases.rs); a check's request may start long
-- before it is written, so `last_checked_ms` would miss a slow one. A single worker on SQLite
-- writes it and never asks.
ALTER TABLE urls ADD COLUMN written_ms INTEGER;
