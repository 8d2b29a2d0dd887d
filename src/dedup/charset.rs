//! Bytes to text for the engine: the same encoding sniffing as the fetcher
//! ([`crate::fetch::charset::decode`]: BOM, then the header's `charset`, then `<meta>` /
//! XML declaration, then UTF-8 or windows-1252), taking the whole `Content-Type` value as pages
//! arrive with it.

pub use crate::fetch::charset::Decoded;

/// The `charset` parameter of a `Content-Type` header value, if any.
pub fn header_charset(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches(|c| c == '"' || c == '\''))
    })
}

/// Decodes a response body given its `Content-Type` header value (if any).
pub fn decode(bytes: &[u8], content_type: Option<&str>) -> Decoded {
    crate::fetch::charset::decode(bytes, content_type.and_then(header_charset))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_charset_wins_over_meta() {
        let body = b"<meta charset=utf-8><p>caf\xe9</p>";
        let decoded = decode(body, Some("text/html; charset=ISO-8859-1"));
        assert_eq!(decoded.encoding, "windows-1252");
        assert!(decoded.text.contains("café"), "{}", decoded.text);
    }

    #[test]
    fn meta_charset_is_read_when_the_header_has_none() {
        let body = b"<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1251\"></head><p>\xcf\xf0\xe8\xe2\xe5\xf2</p>";
        let decoded = decode(body, Some("text/html"));
        assert_eq!(decoded.encoding, "windows-1251");
        assert!(decoded.text.contains("Привет"), "{}", decoded.text);
    }

    #[test]
    fn bom_wins_over_everything_and_is_removed() {
        let mut body = vec![0xFF, 0xFE];
        for unit in "hé".encode_utf16() {
            body.extend_from_slice(&unit.to_le_bytes());
        }
        let decoded = decode(&body, Some("text/html; charset=iso-8859-1"));
        assert_eq!(decoded.encoding, "UTF-16LE");
        assert_eq!(decoded.text, "hé");
    }

    #[test]
    fn undeclared_bytes_fall_back_to_utf8_then_windows_1252() {
        assert_eq!(decode("é".as_bytes(), None).encoding, "UTF-8");
        let legacy = decode(b"caf\xe9", None);
        assert_eq!(legacy.encoding, "windows-1252");
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
