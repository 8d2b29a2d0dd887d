//! Which `<loc>`s on the sitemap's own host the url crate would hand back byte for byte, so that
//! reading one is a scan and a copy instead of a parse (issue 13: the url crate's checking and
//! normalising was the largest part of the reader after the XML events).
//!
//! A URL is *plain* when, after the sitemap's own `scheme://host[:port]`, it is a path that starts
//! with one `/`, optionally followed by `?` and a query, and
//! - every path byte is an ASCII letter or digit or one of `-._~!$&'()*+,;=:@/%`, which the URL
//!   standard's path percent-encode set leaves as they are (it encodes controls, space, `"`, `#`,
//!   `<`, `>`, `?`, `` ` ``, `{`, `}` and non-ASCII; `\` is a slash in http(s));
//! - no path segment is a dot segment (`.`, `..` or their `%2e` spellings, which are resolved);
//! - every query byte is one of the same or `?` but not `'` (the special-query set encodes it).
//!
//! A `%` stays as written in both (the url crate neither decodes nor re-cases escapes). Anything
//! else (a fragment, white space, non-ASCII, `|`, a host in another case) goes to the url crate,
//! and debug builds check that a plain URL parses to itself ([`super::collect`]).

/// Bit of [`CLASSES`]: the url crate leaves the byte as it is in an http(s) path.
const IN_PATH: u8 = 1;
/// Bit of [`CLASSES`]: the url crate leaves the byte as it is in an http(s) query.
const IN_QUERY: u8 = 2;

/// Per byte, where the url crate leaves it as it is.
const CLASSES: [u8; 256] = {
    let mut classes = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        if (b as u8).is_ascii_alphanumeric() {
            classes[b] = IN_PATH | IN_QUERY;
        }
        b += 1;
    }
    let both = b"-._~!$&()*+,;=:@/%";
    let mut i = 0;
    while i < both.len() {
        classes[both[i] as usize] = IN_PATH | IN_QUERY;
        i += 1;
    }
    classes[b'?' as usize] = IN_QUERY;
    classes[b'\'' as usize] = IN_PATH;
    classes
};

/// Whether every byte has `class` (no early exit: the loop stays branch-free, and URLs are short).
fn all_in(bytes: &[u8], class: u8) -> bool {
    bytes
        .iter()
        .fold(class, |seen, &b| seen & CLASSES[b as usize])
        == class
}

/// A segment the url crate resolves (`.` and `..`, their escapes in either case).
fn is_dot_segment(segment: &[u8]) -> bool {
    segment.len() <= 6
        && [&b"."[..], b"..", b"%2e", b".%2e", b"%2e.", b"%2e%2e"]
            .iter()
            .any(|dot| segment.eq_ignore_ascii_case(dot))
}

/// The path of `rest` (what follows the sitemap's own `scheme://host[:port]` in a `<loc>`) when the
/// whole URL is plain (see the module docs), else `None`.
pub(super) fn plain_path(rest: &str) -> Option<&str> {
    let bytes = rest.as_bytes();
    let path_end = memchr::memchr(b'?', bytes).unwrap_or(bytes.len());
    let (path, query) = bytes.split_at(path_end);
    if path.first() != Some(&b'/')
        || path.get(1) == Some(&b'/')
        || !all_in(path, IN_PATH)
        || !all_in(query, IN_QUERY)
    {
        return None;
    }
    // Only a segment that starts with `.` or `%` may be a dot segment; most paths have none
    // (a branch-free look first, the segments only if there is one).
    let maybe_dot = path.windows(2).fold(false, |seen, w| {
        seen | ((w[0] == b'/') & ((w[1] == b'.') | (w[1] == b'%')))
    });
    if maybe_dot && path.split(|&b| b == b'/').any(is_dot_segment) {
        return None;
    }
    Some(&rest[..path_end])
}

#[cfg(test)]
mod tests {
    use url::Url;

    use super::*;

    /// Whether the url crate, reading `home` + `rest`, gives it back unchanged.
    fn unchanged(home: &str, rest: &str) -> bool {
        let raw = format!("{home}{rest}");
        Url::parse(&raw).is_ok_and(|url| url.as_str() == raw)
    }

    #[test]
    fn ordinary_locs_are_plain_and_dot_segments_fragments_and_odd_bytes_are_not() {
        for rest in [
            "/",
            "/a/b-c_d.e~f",
            "/a/%E2%82%AC/x.html",
            "/a;v=1/b:c@d/!$&'()*+,=",
            "/p?id=5&x=a/b?c",
            "/p?",
            "/a/.x/..y/...",
        ] {
            assert_eq!(
                plain_path(rest),
                Some(rest.split('?').next().unwrap()),
                "{rest}"
            );
            assert!(unchanged("https://a.example", rest), "{rest}");
        }
        for rest in [
            "",
            "x",
            "//evil/x",
            "/a/./b",
            "/a/../b",
            "/a/%2E%2e/b",
            "/a/.%2E",
            "/a/..",
            "/a/.",
            "/a#f",
            "/a b",
            "/a\tb",
            "/a\\b",
            "/ü",
            "/a|b",
            "/a^b",
            "/a{b}",
            "/a\"b",
            "/a<b>",
            "/a`b",
            "/p?q='x'",
            "/p?q=a b",
        ] {
            assert_eq!(plain_path(rest), None, "{rest:?}");
        }
    }

    /// Random strings over an alphabet of the bytes that matter: whatever is plain, the url
    /// crate gives back unchanged.
    #[test]
    fn whatever_is_plain_the_url_crate_leaves_unchanged() {
        let alphabet: Vec<char> = "aZ09-._~!$&'()*+,;=:@/%2eE?#\\ \t|^`{}\"<>ü[]"
            .chars()
            .collect();
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut plain = 0;
        for _ in 0..200_000 {
            let len = (next() % 12) as usize;
            let mut rest = String::from("/");
            for _ in 0..len {
                rest.push(alphabet[(next() % alphabet.len() as u64) as usize]);
            }
            if plain_path(&rest).is_some() {
                plain += 1;
                for home in ["https://a.example", "http://a.example:8080"] {
                    assert!(unchanged(home, &rest), "{home}{rest:?}");
                }
            }
        }
        assert!(plain > 10_000, "only {plain} plain strings drawn");
    }
}
