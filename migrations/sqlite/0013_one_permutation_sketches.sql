-- The resemblance sketch is computed by one-permutation hashing since this migration (one hash
-- per shingle, 128 bins, optimal densification) instead of 128 hash functions. Sketches of the
-- two kinds are not comparable, so the old ones are dropped: a page gets its new sketch at its
-- next fetch and is not a near-duplicate candidate until then.
UPDATE dedup_urls SET sketch = NULL;
