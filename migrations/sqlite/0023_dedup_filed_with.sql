-- What a URL's last filing by the dedup engine depended on beside its bytes
-- (src/dedup/url_record.rs, FiledWith): the permanent-redirect table's change count when its
-- links were rewritten through it, and the key of the Content-Type it was served with. A check
-- whose body is the stored copy's byte for byte, under the same two, is filed again without
-- extracting it (DedupEngine::refile_same_bytes), also by a later run. NULL: not known (rows
-- written before this migration): filed whole once. The table's count itself is kept in
-- dedup_meta as 'redirect_changes'.
ALTER TABLE dedup_urls ADD COLUMN filed_redirect_changes INTEGER;
ALTER TABLE dedup_urls ADD COLUMN filed_content_type INTEGER;
