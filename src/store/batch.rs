//! Multi-row statements for the writes the group commit batches ([`super::check_writes`], the
//! politeness journal): rows cut into chunks of a power of two, so that a handful of statement
//! texts, built once, cover every group size and stay in the connection's statement cache.

use std::sync::Arc;

use sqlx::AssertSqlSafe;

use super::backend::Backend;

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
pub(super) fn distinct_chunks<'a, T, K: std::hash::Hash + Eq>(
    rows: &'a [T],
    key: impl Fn(&'a T) -> K,
) -> Vec<&'a [T]> {
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

/// A batched statement's text for each chunk size, with `$N` placeholders and with `?` (see
/// [`super::backend::Backend::anonymous_placeholders`]).
pub(super) struct Texts {
    numbered: Vec<Arc<str>>,
    anonymous: Vec<Arc<str>>,
}

/// `statement(n)` for each chunk size 1, 2, 4, … [`MAX_CHUNK`]. The texts hold only
/// placeholders: every value is bound.
pub(super) fn texts(statement: impl Fn(usize) -> String) -> Texts {
    let numbered: Vec<Arc<str>> = (0..=MAX_CHUNK.ilog2())
        .map(|power| Arc::from(statement(1 << power)))
        .collect();
    let anonymous = numbered
        .iter()
        .map(|text| Arc::from(anonymous(text)))
        .collect();
    Texts {
        numbered,
        anonymous,
    }
}

/// `text` with each `$N` written `?`: the placeholders must be `$1`, `$2`, … in order, each once
/// (as [`placeholder_rows`] writes them), so that binding in order binds the same values.
fn anonymous(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut next = 1;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let digits = rest[at + 1..]
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len() - at - 1);
        let number: usize = rest[at + 1..at + 1 + digits]
            .parse()
            .expect("a `$` starts a placeholder");
        assert_eq!(number, next, "placeholders in order, each once");
        next += 1;
        out.push('?');
        rest = &rest[at + 1 + digits..];
    }
    out.push_str(rest);
    out
}

/// The text of `texts` for a chunk of `len` rows (a power of two), for the database of
/// `connection`.
pub(super) fn text_for(
    texts: &Texts,
    connection: &sqlx::AnyConnection,
    len: usize,
) -> AssertSqlSafe<Arc<str>> {
    let list = if Backend::of(connection).anonymous_placeholders() {
        &texts.anonymous
    } else {
        &texts.numbered
    };
    AssertSqlSafe(list[len.ilog2() as usize].clone())
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
        assert_eq!(texts(|n| n.to_string()).numbered.len(), 7);
    }

    #[test]
    fn anonymous_placeholders_bind_the_same_values_in_order() {
        let texts = texts(|n| format!("INSERT INTO t (a, b) VALUES {}", placeholder_rows(n, 2)));
        assert_eq!(texts.anonymous.len(), texts.numbered.len());
        assert_eq!(
            &*texts.anonymous[1],
            "INSERT INTO t (a, b) VALUES (?, ?), (?, ?)"
        );
        let last = &texts.anonymous[texts.anonymous.len() - 1];
        assert_eq!(last.matches('?').count(), 2 * MAX_CHUNK);
        assert!(!last.contains('$'));
        assert_eq!(anonymous("($1, $2) AND x = $3"), "(?, ?) AND x = ?");
    }

    #[test]
    #[should_panic(expected = "placeholders in order")]
    fn placeholders_out_of_order_are_refused() {
        anonymous("($2, $1)");
    }
}
