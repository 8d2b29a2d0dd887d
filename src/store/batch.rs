//! Multi-row statements for the writes the group commit batches ([`super::check_writes`], the
//! politeness journal): rows cut into chunks of a power of two, so that a handful of statement
//! texts, built once, cover every group size and stay in the connection's statement cache.

use std::sync::Arc;

use sqlx::AssertSqlSafe;

/// The most rows one statement writes.
pub(super) const MAX_CHUNK: usize = 64;

/// `rows` cut, in order, into chunks of a power of two of at most [`MAX_CHUNK`].
pub(super) fn power_of_two_chunks<'a, T>(mut rows: &'a [T], out: &mut Vec<&'a [T]>) {
    while !rows.is_empty() {
        let len = MAX_CHUNK.min(1 << rows.len().ilog2());
        let (chunk, rest) = rows.split_at(len);
        out.push(chunk);
        rows = rest;
    }
}

/// `rows` cut, in order, into runs in which no key repeats (PostgreSQL refuses one statement
/// that upserts or updates a row twice; SQLite would apply them in turn), each run cut into
/// power-of-two chunks.
pub(super) fn distinct_chunks<T, K: std::hash::Hash + Eq>(
    rows: &[T],
    key: impl Fn(&T) -> K,
) -> Vec<&[T]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut seen = std::collections::HashSet::new();
    for (i, row) in rows.iter().enumerate() {
        if !seen.insert(key(row)) {
            power_of_two_chunks(&rows[start..i], &mut out);
            start = i;
            seen.clear();
            seen.insert(key(row));
        }
    }
    power_of_two_chunks(&rows[start..], &mut out);
    out
}

/// `n` rows of `width` placeholders each, numbered on from `$1`, comma-separated:
/// `($1, $2), ($3, $4)`.
pub(super) fn placeholder_rows(n: usize, width: usize) -> String {
    (0..n)
        .map(|row| {
            let values: Vec<String> = (1..=width)
                .map(|i| format!("${}", row * width + i))
                .collect();
            format!("({})", values.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `statement(n)` for each chunk size 1, 2, 4, … [`MAX_CHUNK`]. The texts hold only
/// placeholders: every value is bound.
pub(super) fn texts(statement: impl Fn(usize) -> String) -> Vec<Arc<str>> {
    (0..=MAX_CHUNK.ilog2())
        .map(|power| Arc::from(statement(1 << power)))
        .collect()
}

/// The text of `texts` for a chunk of `len` rows (a power of two).
pub(super) fn text_for(texts: &[Arc<str>], len: usize) -> AssertSqlSafe<Arc<str>> {
    AssertSqlSafe(texts[len.ilog2() as usize].clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_have_power_of_two_sizes_in_order() {
        let rows: Vec<usize> = (0..200).collect();
        let mut out = Vec::new();
        power_of_two_chunks(&rows, &mut out);
        let sizes: Vec<usize> = out.iter().map(|c| c.len()).collect();
        assert_eq!(sizes, vec![64, 64, 64, 8]);
        assert_eq!(out.concat(), rows);
        assert_eq!(placeholder_rows(2, 3), "($1, $2, $3), ($4, $5, $6)");
        assert_eq!(texts(|n| n.to_string()).len(), 7);
    }
}
