//! The XML declaration, taken out of feed-rs's hands.
//!
//! feed-rs switches quick-xml's decoder to the encoding an XML declaration names, and quick-xml
//! panics ("set_encoding() called after prefix buffer was drained") when that happens after its
//! 64-byte prefix: on a second declaration in the middle of a document, or on a first one
//! padded past 64 bytes. By the time a body gets here [`normalize`](super::normalize) has made it
//! UTF-8, so the leading declaration has nothing left to say: it is cut off, and a declaration
//! anywhere else (outside comments and CDATA) is what XML forbids, so the document is refused
//! with the byte offset instead of reaching the parser.

use std::borrow::Cow;

/// `body` without its leading XML declaration, or the offset of a declaration that is not at
/// the start. Documents that do not start with `<` (JSON Feed) are returned as they are.
pub fn strip_declaration(body: &[u8]) -> Result<Cow<'_, [u8]>, usize> {
    let bom = if body.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let start = bom
        + body[bom..]
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .unwrap_or(body.len() - bom);
    if body.get(start) != Some(&b'<') {
        return Ok(Cow::Borrowed(body));
    }
    let mut rest_from = start;
    if is_declaration(&body[start..]) {
        match find(&body[start..], b"?>") {
            Some(end) => rest_from = start + end + 2,
            // Unterminated: no declaration event ever reaches feed-rs, which refuses the rest.
            None => return Ok(Cow::Borrowed(body)),
        }
    }
    if let Some(at) = later_declaration(&body[rest_from..]) {
        return Err(rest_from + at);
    }
    if rest_from == start {
        return Ok(Cow::Borrowed(body));
    }
    Ok(Cow::Owned(body[rest_from..].to_vec()))
}

/// Whether `at` begins `<?xml` followed by white space or `?>` (any case: the target is
/// reserved), as opposed to `<?xml-stylesheet ...?>`.
fn is_declaration(at: &[u8]) -> bool {
    at.len() >= 6
        && at[..5].eq_ignore_ascii_case(b"<?xml")
        && (at[5].is_ascii_whitespace() || at[5] == b'?')
}

/// The offset of the first XML declaration in `body`, skipping comments and CDATA sections.
fn later_declaration(body: &[u8]) -> Option<usize> {
    let mut i = 0;
    while let Some(lt) = memchr(b'<', &body[i..]) {
        let at = i + lt;
        let tail = &body[at..];
        if tail.starts_with(b"<!--") {
            i = at + 4 + find(&tail[4..], b"-->")? + 3;
        } else if tail.starts_with(b"<![CDATA[") {
            i = at + 9 + find(&tail[9..], b"]]>")? + 3;
        } else if is_declaration(tail) {
            return Some(at);
        } else {
            i = at + 1;
        }
    }
    None
}

fn memchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&b| b == needle)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_leading_declaration_is_cut_and_a_later_one_refused() {
        let doc = b"\xEF\xBB\xBF <?xml version=\"1.0\" encoding=\"UTF-8\"?><rss/>";
        assert_eq!(&*strip_declaration(doc).unwrap(), b"<rss/>");
        let second =
            b"<?xml version=\"1.0\"?><rss><?xml version=\"1.0\" encoding=\"UTF-16\"?></rss>";
        assert_eq!(strip_declaration(second), Err(26));
        assert_eq!(strip_declaration(b"<rss><?XML  ?></rss>"), Err(5));
    }

    #[test]
    fn stylesheets_comments_cdata_and_json_pass() {
        let doc = b"<?xml-stylesheet href=\"a.xsl\"?><rss><!-- <?xml version=\"1.0\"?> -->\
            <d><![CDATA[<?xml version=\"1.0\"?>]]></d></rss>";
        assert_eq!(&*strip_declaration(doc).unwrap(), &doc[..]);
        let json = b"{\"title\": \"<?xml version=1.0?>\"}";
        assert_eq!(&*strip_declaration(json).unwrap(), &json[..]);
        assert_eq!(&*strip_declaration(b"").unwrap(), b"");
        // Unterminated comments and declarations are left for the parser to refuse.
        assert!(strip_declaration(b"<rss><!-- <?xml ").is_ok());
        assert!(strip_declaration(b"<?xml version=").is_ok());
    }
}
