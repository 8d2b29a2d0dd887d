//! Turning a body's bytes into text (pure).
//!
//! The encoding is chosen as the HTML standard's encoding sniffing does, simplified:
//! 1. a byte-order mark (UTF-8, UTF-16LE/BE) wins;
//! 2. then the `charset` of the `Content-Type` header;
//! 3. then, in the first 1024 bytes, `<meta charset=...>`, `<meta http-equiv="Content-Type"
//!    content="...; charset=...">`, or an XML declaration's `encoding="..."`;
//! 4. else UTF-8 if the bytes are valid UTF-8, and windows-1252 if not.
//!
//! Labels go through the WHATWG Encoding Standard (encoding_rs), so `ISO-8859-1` and `latin1`
//! decode as windows-1252, as every browser does. Decoding never fails: invalid sequences become
//! U+FFFD.

use std::sync::LazyLock;

use encoding_rs::{Encoding, UTF_8, UTF_16BE, UTF_16LE, WINDOWS_1252};
use regex::bytes::Regex;

/// How far into the body the markup prescan looks (the HTML standard's 1024 bytes).
const PRESCAN_BYTES: usize = 1024;

/// `<meta ... charset=NAME` in either of its two forms.
static META_CHARSET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i-u)<meta[\s/][^>]*?charset\s*=\s*["']?\s*([a-z0-9_:.\-]+)"#)
        .expect("constant pattern compiles")
});

/// `<?xml ... encoding="NAME"` at the very start.
static XML_ENCODING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i-u)^\s*<\?xml[^>]*?encoding\s*=\s*["']([a-z0-9_:.\-]+)["']"#)
        .expect("constant pattern compiles")
});

/// Decoded text and the encoding used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// The body as text, without any BOM.
    pub text: String,
    /// The encoding's canonical name (e.g. `windows-1252`).
    pub encoding: &'static str,
    /// Whether invalid sequences were replaced by U+FFFD.
    pub had_errors: bool,
}

/// Decodes `body`, with `header_charset` from `Content-Type` if any.
pub fn decode(body: &[u8], header_charset: Option<&str>) -> Decoded {
    let (encoding, bom_len) = Encoding::for_bom(body)
        .or_else(|| header_charset.and_then(label).map(|encoding| (encoding, 0)))
        .or_else(|| prescan(body).map(|encoding| (encoding, 0)))
        .unwrap_or_else(|| (fallback(body), 0));
    let (text, had_errors) = encoding.decode_without_bom_handling(&body[bom_len..]);
    Decoded {
        text: text.into_owned(),
        encoding: encoding.name(),
        had_errors,
    }
}

/// The encoding for a label (`None` for unknown labels).
fn label(name: &str) -> Option<&'static Encoding> {
    Encoding::for_label(name.trim().as_bytes())
}

/// The encoding declared in the first 1024 bytes of markup, if any.
fn prescan(body: &[u8]) -> Option<&'static Encoding> {
    let head = &body[..body.len().min(PRESCAN_BYTES)];
    let declared = XML_ENCODING
        .captures(head)
        .or_else(|| META_CHARSET.captures(head))
        .and_then(|captures| captures.get(1))
        .and_then(|name| Encoding::for_label(name.as_bytes()))?;
    // A document that could be read far enough to find its declaration is not UTF-16
    // (the HTML standard reads such a declaration as UTF-8).
    Some(if declared == UTF_16LE || declared == UTF_16BE {
        UTF_8
    } else {
        declared
    })
}

/// UTF-8 if the bytes are valid UTF-8, else windows-1252 (the web's legacy default).
fn fallback(body: &[u8]) -> &'static Encoding {
    if std::str::from_utf8(body).is_ok() {
        UTF_8
    } else {
        WINDOWS_1252
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_charset_latin1_is_windows_1252() {
        let decoded = decode(b"caf\xe9 \x80", Some("ISO-8859-1"));
        assert_eq!(decoded.text, "café €");
        assert_eq!(decoded.encoding, "windows-1252");
        assert!(!decoded.had_errors);
    }

    #[test]
    fn meta_charset_is_found() {
        let html = b"<html><head><meta charset=\"windows-1252\"><title>na\xefve</title>";
        assert_eq!(
            decode(html, None).text,
            "<html><head><meta charset=\"windows-1252\"><title>naïve</title>"
        );
        let http_equiv =
            b"<meta http-equiv='Content-Type' content='text/html; charset=koi8-r'>\xc1";
        let decoded = decode(http_equiv, None);
        assert_eq!(decoded.encoding, "KOI8-R");
        assert!(decoded.text.ends_with('а'));
    }

    #[test]
    fn xml_declaration_is_found() {
        let xml = b"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a>\xe9</a>";
        assert_eq!(
            decode(xml, None).text,
            "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a>é</a>"
        );
    }

    #[test]
    fn bom_beats_header_and_meta() {
        let body = b"\xef\xbb\xbf<meta charset=windows-1252>\xc3\xa9";
        let decoded = decode(body, Some("iso-8859-1"));
        assert_eq!(decoded.encoding, "UTF-8");
        assert_eq!(decoded.text, "<meta charset=windows-1252>é");
        let utf16 = b"\xff\xfeh\0i\0";
        assert_eq!(decode(utf16, None).text, "hi");
    }

    #[test]
    fn header_beats_meta() {
        let body = b"<meta charset=windows-1252>\xc3\xa9";
        assert_eq!(
            decode(body, Some("utf-8")).text,
            "<meta charset=windows-1252>é"
        );
    }

    #[test]
    fn declared_utf16_in_markup_reads_as_utf8() {
        let body = "<meta charset=utf-16>é".as_bytes();
        assert_eq!(decode(body, None).text, "<meta charset=utf-16>é");
    }

    #[test]
    fn fallback_is_utf8_then_windows_1252() {
        assert_eq!(decode("é".as_bytes(), None).encoding, "UTF-8");
        assert_eq!(decode(b"\xe9", None).text, "é");
        let unknown = decode(b"abc", Some("no-such-charset"));
        assert_eq!(unknown.encoding, "UTF-8");
    }

    #[test]
    fn meta_after_the_prescan_window_is_ignored() {
        let mut body = vec![b' '; PRESCAN_BYTES];
        body.extend_from_slice(b"<meta charset=koi8-r>\xe9");
        assert_eq!(decode(&body, None).encoding, "windows-1252");
    }
}
