-- What a URL's last filing by the dedup engine depended on beside its bytes
-- (src/dedup/url_record.rs, FiledWith): a digest of the permanent-redirect table its links were
-- rewritten through, and the key of the Content-Type it was served with. A check whose body is
-- the stored copy's byte for byte, under the same two, is filed again without extracting it
-- (DedupEngine::refile_same_bytes), also by a later run or another worker. NULL: not known
-- (rows written before this migration): filed whole once.
ALTER TABLE dedup_urls ADD COLUMN filed_redirects INTEGER;
ALTER TABLE dedup_urls ADD COLUMN filed_content_type INTEGER;
