//! Path extraction and pattern matching for robots.txt rules (RFC 9309 §2.2.2, §2.2.3).
//!
//! Matching is on octets: the URL is used exactly as given (the caller percent-encodes it, as a
//! serialized [`url::Url`] is), rule patterns are percent-encoded where they hold non-ASCII bytes,
//! and `%xx` escapes are compared with upper-case hex. `*` matches any run of octets and a final
//! `$` anchors the end. Rules match the octets as written, as Google's reference matcher does
//! (its tests, which the corpus holds, read `Allow: /%62az` as no rule for `/baz`); but RFC 9309
//! §2.2.2 decodes escaped unreserved characters (`%62` is `b`) before comparing, and servers
//! serve `/%70rivate/x` as `/private/x` (and nginx serves `/private%2Fx` as `/private/x` too).
//! So a URL is allowed only if it is allowed both as written and with those escapes and `%2F`
//! decoded in it and in the rules ([`decode_as_served`]; `super::Robots::disallowed_by`):
//! `Disallow: /private/` keeps `/%70rivate/x` and `/private%2Fx` out.

use std::borrow::Cow;

/// `text` with every `%xx` escape of an unreserved character (RFC 3986: letters, digits,
/// `-`, `.`, `_`, `~`) and of `/` decoded, as a server reads a path to find what it serves
/// (nginx decodes `%2F` too); other escapes are kept, their hex upper-cased.
pub fn decode_as_served(text: &str) -> Cow<'_, str> {
    if !text.contains('%') {
        return Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let (Some(&hi), Some(&lo)) = (bytes.get(i + 1), bytes.get(i + 2))
            && let (Some(h), Some(l)) = ((hi as char).to_digit(16), (lo as char).to_digit(16))
        {
            let byte = (h * 16 + l) as u8;
            if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
                out.push(byte as char);
            } else {
                out.push('%');
                out.push(hi.to_ascii_uppercase() as char);
                out.push(lo.to_ascii_uppercase() as char);
            }
            i += 3;
            continue;
        }
        // Not an escape: copied as it is (whole characters, `text` being UTF-8).
        let width = text[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&text[i..i + width]);
        i += width;
    }
    if out == text {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(out)
    }
}

/// The path, parameters and query of `url`, without the fragment: the part rules match against.
/// An absolute URL, a scheme-relative `//host/path`, or a bare path are all accepted; a URL with
/// no path gives `/`.
pub fn path_params_query(url: &str) -> String {
    let bytes = url.as_bytes();
    let search_start = if url.starts_with("//") { 2 } else { 0 };
    let find_any = |from: usize, set: &[u8]| {
        bytes[from.min(bytes.len())..]
            .iter()
            .position(|b| set.contains(b))
            .map(|i| i + from)
    };
    let early_path = find_any(search_start, b"/?;");
    let protocol_end = url[search_start..].find("://").map(|i| i + search_start);
    let protocol_end = match (protocol_end, early_path) {
        (Some(p), Some(e)) if e < p => search_start,
        (Some(p), _) => p + 3,
        (None, _) => search_start,
    };
    let Some(path_start) = find_any(protocol_end, b"/?;") else {
        return "/".to_string();
    };
    let hash = url[search_start..].find('#').map(|i| i + search_start);
    if matches!(hash, Some(h) if h < path_start) {
        return "/".to_string();
    }
    let path_end = hash.unwrap_or(url.len());
    let path = &url[path_start..path_end];
    if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/{path}")
    }
}

/// Percent-encodes the non-ASCII bytes of a rule pattern and upper-cases existing `%xx` escapes,
/// so that patterns compare with percent-encoded URLs octet by octet.
pub fn escape_pattern(pattern: &str) -> String {
    let bytes = pattern.as_bytes();
    let mut out = String::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%'
            && i + 2 < bytes.len()
            && bytes[i + 1].is_ascii_hexdigit()
            && bytes[i + 2].is_ascii_hexdigit()
        {
            out.push('%');
            out.push(bytes[i + 1].to_ascii_uppercase() as char);
            out.push(bytes[i + 2].to_ascii_uppercase() as char);
            i += 3;
            continue;
        }
        if b.is_ascii() {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
        i += 1;
    }
    out
}

/// Whether `pattern` (escaped, with `*` and a final `$`) matches a prefix of `path`.
///
/// Runs in O(|path| · |pattern|) with one position set, never backtracking, so a hostile pattern
/// like `/a*a*a*a*b` cannot blow up.
pub fn matches(path: &[u8], pattern: &[u8]) -> bool {
    let len = path.len();
    // `pos[..n]` holds the path offsets reachable after the pattern bytes consumed so far.
    let mut pos: Vec<usize> = Vec::with_capacity(len + 1);
    pos.push(0);
    for (i, &p) in pattern.iter().enumerate() {
        if p == b'$' && i + 1 == pattern.len() {
            return pos.last() == Some(&len);
        }
        if p == b'*' {
            let first = pos[0];
            pos.clear();
            pos.extend(first..=len);
        } else {
            pos.retain_mut(|at| {
                if *at < len && path[*at] == p {
                    *at += 1;
                    true
                } else {
                    false
                }
            });
            if pos.is_empty() {
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extracts_path_params_query() {
        assert_eq!(path_params_query(""), "/");
        assert_eq!(path_params_query("http://www.example.com"), "/");
        assert_eq!(path_params_query("http://www.example.com/a?b#c"), "/a?b");
        assert_eq!(path_params_query("http://a.b/c;d=e"), "/c;d=e");
        assert_eq!(path_params_query("//a.b/c"), "/c");
        assert_eq!(path_params_query("a.b?x"), "/?x");
        assert_eq!(path_params_query("http://a.b#/c"), "/");
    }

    #[test]
    fn escapes_patterns() {
        assert_eq!(escape_pattern("/a/ツ"), "/a/%E3%83%84");
        assert_eq!(escape_pattern("/a/%aa%zz"), "/a/%AA%zz");
        assert_eq!(escape_pattern("/a/%a"), "/a/%a");
    }

    #[test]
    fn wildcard_and_anchor() {
        assert!(matches(b"/foo/bar/qux", b"/foo/*/qux"));
        assert!(!matches(b"/foo/qux", b"/foo/*/qux"));
        assert!(matches(b"/foo/bar", b"/foo/bar$"));
        assert!(!matches(b"/foo/bar/", b"/foo/bar$"));
        assert!(matches(b"/anything", b"*"));
        assert!(matches(b"/x.php", b"/*.php$"));
        assert!(!matches(b"/x.php5", b"/*.php$"));
        assert!(matches(b"/a$b", b"/a$b"));
    }
}
