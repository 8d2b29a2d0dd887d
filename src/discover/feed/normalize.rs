//! Byte-level repairs applied before feed-rs sees a document, each for an input that feed-rs
//! mishandles:
//! - UTF-16 (with or without BOM) and declared 8-bit encodings (`ISO-8859-1`, `koi8-r`, ...) are
//!   transcoded to UTF-8 and the XML declaration's `encoding` is set to match: feed-rs 3.0 with
//!   quick-xml 0.42 panics on UTF-16BE input, and on any encoding change when the declaration is
//!   longer than quick-xml's 64-byte detection prefix;
//! - `<rss>` without `version` (or with an unlisted one such as `0.94` or `2.01`) is read as RSS
//!   2.0: feed-rs otherwise reports "no root element";
//! - Atom 0.3 (`http://purl.org/atom/ns#`) is mapped onto Atom 1.0 (`modified` = `updated`,
//!   `issued` = `published`): feed-rs otherwise reads an empty feed.

use std::borrow::Cow;

/// The body with the repairs above applied (borrowed when none is needed).
pub fn normalize(body: &[u8]) -> Cow<'_, [u8]> {
    let mut out = Cow::Borrowed(body);
    if let Some(utf8) = utf16_to_utf8(body).or_else(|| declared_to_utf8(body)) {
        out = Cow::Owned(utf8);
    }
    if let Some(fixed) = rss_version(&out) {
        out = Cow::Owned(fixed);
    }
    if let Some(fixed) = atom03(&out) {
        out = Cow::Owned(fixed);
    }
    out
}

/// UTF-16 text (BOM, or `<` as a 16-bit unit) as UTF-8 with a matching declaration.
fn utf16_to_utf8(body: &[u8]) -> Option<Vec<u8>> {
    let encoding = match body {
        [0xFE, 0xFF, ..] | [0x00, b'<', ..] => encoding_rs::UTF_16BE,
        [0xFF, 0xFE, ..] | [b'<', 0x00, ..] => encoding_rs::UTF_16LE,
        _ => return None,
    };
    let (text, _, _) = encoding.decode(body);
    let text = text.trim_start_matches('\u{FEFF}');
    Some(set_declared_encoding_utf8(text).into_bytes())
}

/// A document declaring an 8-bit encoding other than UTF-8, transcoded to UTF-8.
fn declared_to_utf8(body: &[u8]) -> Option<Vec<u8>> {
    let start = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let encoding = crate::discover::sitemap::decode::declared_encoding(start);
    if encoding == encoding_rs::UTF_8 {
        return None;
    }
    let (text, _) = encoding.decode_without_bom_handling(start);
    Some(set_declared_encoding_utf8(&text).into_bytes())
}

/// `text` with the XML declaration's `encoding` pseudo-attribute (if any) set to UTF-8.
fn set_declared_encoding_utf8(text: &str) -> String {
    let Some(rest) = text.strip_prefix("<?xml") else {
        return text.to_string();
    };
    let Some(end) = rest.find("?>") else {
        return text.to_string();
    };
    let decl = &rest[..end];
    let Some(at) = decl.find("encoding") else {
        return text.to_string();
    };
    let after = &decl[at + "encoding".len()..];
    let value_start = after.find(['"', '\'']);
    let Some(q) = value_start else {
        return text.to_string();
    };
    let quote = after.as_bytes()[q] as char;
    let Some(len) = after[q + 1..].find(quote) else {
        return text.to_string();
    };
    let value_from = 5 + at + "encoding".len() + q + 1;
    format!("{}utf-8{}", &text[..value_from], &text[value_from + len..])
}

/// Rewrites the root `<rss ...>` tag to say `version="2.0"` when it says nothing feed-rs reads.
fn rss_version(body: &[u8]) -> Option<Vec<u8>> {
    let start = find_root_tag(body, b"rss")?;
    let end = start + body[start..].iter().position(|&b| b == b'>')?;
    let tag = &body[start..end];
    let version = attribute(tag, b"version");
    if matches!(version, Some(b"2.0" | b"0.91" | b"0.92" | b"")) {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() + 16);
    out.extend_from_slice(&body[..start + 4]);
    out.extend_from_slice(b" version=\"2.0\"");
    match version_span(tag) {
        // Drop the old version attribute.
        Some((a, b)) => {
            out.extend_from_slice(&tag[4..a]);
            out.extend_from_slice(&tag[b..]);
        }
        None => out.extend_from_slice(&tag[4..]),
    }
    out.extend_from_slice(&body[end..]);
    Some(out)
}

/// Atom text constructs with a media type where Atom 1.0 wants `text` / `html` / `xhtml`
/// (`type="text/plain"`, `type="application/xhtml+xml"`, Atom 0.3 style), which make feed-rs
/// refuse the whole feed: rewritten to the Atom 1.0 words. `None` if there is nothing to do.
pub fn relax_atom_types(body: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(body).ok()?;
    let mut out = text.to_string();
    for (from, to) in [
        ("text/plain", "text"),
        ("text/html", "html"),
        ("application/xhtml+xml", "xhtml"),
    ] {
        for quote in ['"', '\''] {
            out = out.replace(
                &format!("type={quote}{from}{quote}"),
                &format!("type={quote}{to}{quote}"),
            );
        }
    }
    (out != text).then(|| out.into_bytes())
}

/// A JSON Feed whose items give their `id` as a number (the spec says a string; real feeds
/// do it, and feed-rs then refuses the whole feed): the ids written as strings. `None` if the
/// body is not such a JSON document.
pub fn json_ids_as_text(body: &[u8]) -> Option<Vec<u8>> {
    let mut feed: serde_json::Value = serde_json::from_slice(body).ok()?;
    let mut changed = false;
    for item in feed.get_mut("items")?.as_array_mut()? {
        if let Some(id) = item.get_mut("id")
            && let serde_json::Value::Number(number) = id
        {
            *id = serde_json::Value::String(number.to_string());
            changed = true;
        }
    }
    changed.then(|| serde_json::to_vec(&feed).ok()).flatten()
}

/// Maps an Atom 0.3 document onto the Atom 1.0 namespace and element names.
fn atom03(body: &[u8]) -> Option<Vec<u8>> {
    const OLD: &str = "http://purl.org/atom/ns#";
    let text = std::str::from_utf8(body).ok()?;
    if !text.contains(OLD) {
        return None;
    }
    let mapped = text
        .replace(OLD, "http://www.w3.org/2005/Atom")
        .replace("<modified>", "<updated>")
        .replace("</modified>", "</updated>")
        .replace("<issued>", "<published>")
        .replace("</issued>", "</published>");
    Some(mapped.into_bytes())
}

/// Offset of the first `<name` followed by white space or `>`, outside comments and declarations
/// (good enough for a root element, which follows them).
fn find_root_tag(body: &[u8], name: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i + 1 + name.len() < body.len() {
        if body[i] == b'<' {
            if body[i + 1..].starts_with(b"!--") {
                i += find(&body[i..], b"-->")? + 3;
                continue;
            }
            if matches!(body[i + 1], b'?' | b'!') {
                i += 1;
                continue;
            }
            let after = &body[i + 1..];
            let fits = after.len() > name.len()
                && after[..name.len()].eq_ignore_ascii_case(name)
                && (after[name.len()].is_ascii_whitespace() || after[name.len()] == b'>');
            return fits.then_some(i);
        }
        i += 1;
    }
    None
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The value of `name="..."` inside a start tag.
fn attribute<'a>(tag: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    let (a, b) = version_span_named(tag, name)?;
    let raw = &tag[a..b];
    let eq = raw.iter().position(|&c| c == b'=')?;
    let v = raw[eq + 1..].trim_ascii();
    (v.len() >= 2).then(|| &v[1..v.len() - 1])
}

fn version_span(tag: &[u8]) -> Option<(usize, usize)> {
    version_span_named(tag, b"version")
}

/// The byte span of ` name="value"` (with its leading white space) inside a start tag.
fn version_span_named(tag: &[u8], name: &[u8]) -> Option<(usize, usize)> {
    let mut i = 0;
    while i + name.len() < tag.len() {
        if tag[i].is_ascii_whitespace() && tag[i + 1..].starts_with(name) {
            let mut j = i + 1 + name.len();
            while j < tag.len() && tag[j].is_ascii_whitespace() {
                j += 1;
            }
            if tag.get(j) != Some(&b'=') {
                i += 1;
                continue;
            }
            j += 1;
            while j < tag.len() && tag[j].is_ascii_whitespace() {
                j += 1;
            }
            let quote = *tag.get(j)?;
            if quote != b'"' && quote != b'\'' {
                return None;
            }
            let close = j + 1 + tag[j + 1..].iter().position(|&c| c == quote)?;
            return Some((i, close + 1));
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rss_version_is_added_or_replaced() {
        let fixed = normalize(b"<!-- c --><rss><channel/></rss>");
        assert_eq!(
            &fixed[..],
            b"<!-- c --><rss version=\"2.0\"><channel/></rss>"
        );
        let fixed = normalize(b"<rss version='0.94' a=\"b\"><channel/></rss>");
        assert_eq!(&fixed[..], b"<rss version=\"2.0\" a=\"b\"><channel/></rss>");
        assert!(matches!(
            normalize(b"<rss version=\"2.0\">"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn declared_latin1_becomes_utf8_even_with_a_long_declaration() {
        let mut body = b"<?xml version=\"1.0\"".to_vec();
        body.extend(std::iter::repeat_n(b' ', 100));
        body.extend_from_slice(b"encoding=\"ISO-8859-1\"?><rss version=\"2.0\"><channel><title>caf\xe9</title></channel></rss>");
        let fixed = normalize(&body);
        let text = std::str::from_utf8(&fixed).unwrap();
        assert!(text.contains("encoding=\"utf-8\"") && text.contains("café"));
        let doc =
            crate::discover::feed::parse(&body, &url::Url::parse("http://a/").unwrap()).unwrap();
        assert_eq!(doc.title.as_deref(), Some("café"));
    }

    #[test]
    fn utf16_becomes_utf8() {
        let text = "<?xml version=\"1.0\" encoding=\"utf-16\"?><rss version=\"2.0\"/>";
        let mut be = vec![0xFE, 0xFF];
        for u in text.encode_utf16() {
            be.extend_from_slice(&u.to_be_bytes());
        }
        let fixed = normalize(&be);
        assert_eq!(
            std::str::from_utf8(&fixed).unwrap(),
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><rss version=\"2.0\"/>"
        );
    }
}
