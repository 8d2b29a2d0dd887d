-- What a URL's last filing depended on beside its bytes (the twin of
-- migrations/sqlite/0023_dedup_filed_with.sql, which says how it is used).
ALTER TABLE dedup_urls ADD COLUMN filed_redirects BIGINT;
ALTER TABLE dedup_urls ADD COLUMN filed_content_type BIGINT;
