//! Bytes to text with the right character encoding.
//!
//! The order follows the HTML standard's encoding sniffing, simplified: a byte-order mark wins, then
//! the `charset` of the `Content-Type` header, then a `<meta charset>` (or `http-equiv` content)
//! found in the first 1024 bytes, then UTF-8 if the bytes are valid UTF-8, else windows-1252 (the
//! web's legacy default). Decoding never fails: malformed sequences become U+FFFD.

use std::sync::LazyLock;

use encoding_rs::{Encoding, UTF_8, UTF_16BE, UTF_16LE, WINDOWS_1252};
use regex::bytes::Regex;

/// Where the encoding used for a body came from, for `freshet explain` and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CharsetSource {
    /// A byte-order mark at the start of the body.
    Bom,
    /// The `charset` parameter of the `Content-Type` header.
    Header,
    /// A `<meta charset>` or `<meta http-equiv="Content-Type">` in the document.
    Meta,
    /// No declaration: the bytes were valid UTF-8.
    SniffedUtf8,
    /// No declaration and not UTF-8: the legacy default.
    Default,
}

/// A decoded body.
#[derive(Debug, Clone)]
pub struct Decoded {
    /// The text, with any byte-order mark removed.
    pub text: String,
    /// The encoding that was applied.
    pub encoding: &'static Encoding,
    /// Why that encoding was chosen.
    pub source: CharsetSource,
    /// Some bytes were malformed in that encoding and became U+FFFD.
    pub had_errors: bool,
}

/// How far into a document a `<meta charset>` is looked for (the HTML standard's prescan limit).
const META_PRESCAN_BYTES: usize = 1024;

static META_CHARSET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i-u)<meta[^>]*?charset\s*=\s*["']?\s*([a-z0-9_:.\-]+)"#).expect("valid regex")
});

/// The `charset` parameter of a `Content-Type` header value, if any.
pub fn header_charset(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches(|c| c == '"' || c == '\''))
    })
}

/// The encoding declared by a `<meta>` element near the start of an HTML document.
pub fn meta_charset(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = &bytes[..bytes.len().min(META_PRESCAN_BYTES)];
    let label = META_CHARSET.captures(head)?.get(1)?.as_bytes();
    let encoding = Encoding::for_label(label)?;
    // A document that could be parsed as ASCII cannot really be UTF-16: the standard says UTF-8.
    if encoding == UTF_16LE || encoding == UTF_16BE {
        return Some(UTF_8);
    }
    Some(encoding)
}

/// Decodes a response body given its `Content-Type` header (if any).
pub fn decode(bytes: &[u8], content_type: Option<&str>) -> Decoded {
    let (encoding, source) = choose(bytes, content_type);
    let (text, had_errors) = encoding.decode_with_bom_removal(bytes);
    Decoded {
        text: text.into_owned(),
        encoding,
        source,
        had_errors,
    }
}

fn choose(bytes: &[u8], content_type: Option<&str>) -> (&'static Encoding, CharsetSource) {
    if let Some((encoding, _)) = Encoding::for_bom(bytes) {
        return (encoding, CharsetSource::Bom);
    }
    if let Some(encoding) = content_type
        .and_then(header_charset)
        .and_then(|label| Encoding::for_label(label.as_bytes()))
    {
        return (encoding, CharsetSource::Header);
    }
    if let Some(encoding) = meta_charset(bytes) {
        return (encoding, CharsetSource::Meta);
    }
    if std::str::from_utf8(bytes).is_ok() {
        (UTF_8, CharsetSource::SniffedUtf8)
    } else {
        (WINDOWS_1252, CharsetSource::Default)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_charset_wins_over_meta() {
        let body = b"<meta charset=utf-8><p>caf\xe9</p>";
        let decoded = decode(body, Some("text/html; charset=ISO-8859-1"));
        assert_eq!(decoded.source, CharsetSource::Header);
        assert!(decoded.text.contains("café"), "{}", decoded.text);
    }

    #[test]
    fn meta_charset_is_read_when_the_header_has_none() {
        let body = b"<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1251\"></head><p>\xcf\xf0\xe8\xe2\xe5\xf2</p>";
        let decoded = decode(body, Some("text/html"));
        assert_eq!(decoded.source, CharsetSource::Meta);
        assert!(decoded.text.contains("Привет"), "{}", decoded.text);
    }

    #[test]
    fn bom_wins_over_everything_and_is_removed() {
        let mut body = vec![0xFF, 0xFE];
        for unit in "hé".encode_utf16() {
            body.extend_from_slice(&unit.to_le_bytes());
        }
        let decoded = decode(&body, Some("text/html; charset=iso-8859-1"));
        assert_eq!(decoded.source, CharsetSource::Bom);
        assert_eq!(decoded.text, "hé");
    }

    #[test]
    fn undeclared_bytes_fall_back_to_utf8_then_windows_1252() {
        assert_eq!(
            decode("é".as_bytes(), None).source,
            CharsetSource::SniffedUtf8
        );
        let legacy = decode(b"caf\xe9", None);
        assert_eq!(legacy.source, CharsetSource::Default);
        assert_eq!(legacy.text, "café");
    }

    #[test]
    fn header_charset_parsing_tolerates_quotes_and_case() {
        assert_eq!(
            header_charset("text/html; Charset=\"UTF-8\""),
            Some("UTF-8")
        );
        assert_eq!(header_charset("text/html"), None);
    }
}
