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

/// `body` without its leading XML declaration and with invalid UTF-8 replaced, or the offset of
/// a declaration that is not at the start (or of a NUL byte). JSON Feed documents (first
/// non-blank byte `{`) are returned as they are.
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
    if body.get(start) == Some(&b'{') {
        return Ok(Cow::Borrowed(body));
    }
    let mut rest_from = 0;
    if is_declaration(&body[start..]) {
        match find(&body[start..], b"?>") {
            Some(end) => rest_from = start + end + 2,
            // Unterminated: no declaration event ever reaches feed-rs, which refuses the rest.
            None => return Ok(Cow::Borrowed(body)),
        }
    }
    // quick-xml guesses UTF-16 from a byte-order mark or from NULs around `<?` and then obeys
    // any declaration it decodes: left with UTF-8 text and no NUL (which XML forbids anyway),
    // it has nothing to guess from, and the scan below sees every declaration it could.
    if let Some(at) = memchr(0, body) {
        return Err(at);
    }
    let mut rest = valid_utf8(&body[rest_from..]);
    if let Some(at) = later_declaration(&mut rest) {
        return Err(rest_from + at);
    }
    Ok(rest)
}

/// Whether `at` begins `<?xml` followed by white space or `?>` (any case: the target is
/// reserved), as opposed to `<?xml-stylesheet ...?>`.
fn is_declaration(at: &[u8]) -> bool {
    at.len() >= 6
        && at[..5].eq_ignore_ascii_case(b"<?xml")
        && (at[5].is_ascii_whitespace() || at[5] == b'?')
}

/// The offset of the first XML declaration in `body` outside comments and CDATA sections.
/// Inside them a declaration is only text, but it is defused all the same (`<?xml` becomes
/// `<?xm_`): if a hostile document makes this scan misjudge where a comment starts (`<!--` in
/// an attribute value), quick-xml sees a harmless processing instruction, never a declaration.
/// Freshet reads no text from comments, and only links, ids and dates from a feed.
fn later_declaration(body: &mut Cow<'_, [u8]>) -> Option<usize> {
    let mut i = 0;
    while let Some(lt) = memchr(b'<', &body[i..]) {
        let at = i + lt;
        let tail = &body[at..];
        let skip = if tail.starts_with(b"<!--") {
            Some((4, b"-->".as_slice()))
        } else if tail.starts_with(b"<![CDATA[") {
            Some((9, b"]]>".as_slice()))
        } else {
            None
        };
        match skip {
            Some((open, close)) => {
                let end =
                    find(&tail[open..], close).map_or(body.len(), |e| at + open + e + close.len());
                defuse(body, at + open, end);
                i = end;
            }
            None if is_declaration(tail) => return Some(at),
            None => i = at + 1,
        }
    }
    None
}

/// Rewrites every `<?xml` in `body[from..to]` to `<?xm_`.
fn defuse(body: &mut Cow<'_, [u8]>, from: usize, to: usize) {
    let mut i = from;
    while let Some(at) = body[i..to]
        .windows(5)
        .position(|w| w.eq_ignore_ascii_case(b"<?xml"))
    {
        body.to_mut()[i + at + 4] = b'_';
        i += at + 5;
    }
}

/// `bytes` with each invalid UTF-8 sequence replaced by `?`: ASCII, not U+FFFD, because
/// feed-rs 3.0 slices author strings one byte before an e-mail address and panics when a
/// multi-byte character sits there.
fn valid_utf8(bytes: &[u8]) -> Cow<'_, [u8]> {
    if std::str::from_utf8(bytes).is_ok() {
        return Cow::Borrowed(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.extend_from_slice(chunk.valid().as_bytes());
        if !chunk.invalid().is_empty() {
            out.push(b'?');
        }
    }
    Cow::Owned(out)
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
        let defused = String::from_utf8(strip_declaration(doc).unwrap().into_owned()).unwrap();
        assert_eq!(defused.matches("<?xm_ version").count(), 2, "{defused}");
        assert!(defused.starts_with("<?xml-stylesheet"));
        // Not at the start, whatever comes first (text, NULs).
        assert_eq!(strip_declaration(b"12<rss><?xml version=\"1.0\"?>"), Err(7));
        assert_eq!(strip_declaration(b"\0\0<?xml version=\"1.0\"?>"), Err(0));
        // Found by fuzzing: a UTF-16 body after an ASCII declaration made quick-xml switch to
        // UTF-16 (byte-order mark) and then panic on the declaration it decoded.
        let utf16 = b"<?xml version=\"1.0\" encoding=\"UTF-16\"?>\xFE\xFF\0<\0?\0x\0m\0l\0 \0?\0>";
        assert_eq!(strip_declaration(utf16), Err(41));
        assert!(
            !strip_declaration(b"<rss>\xFE\xFF</rss>")
                .unwrap()
                .contains(&0xFE)
        );
        let json = b" {\"title\": \"<?xml version=1.0?>\"}";
        assert_eq!(&*strip_declaration(json).unwrap(), &json[..]);
        assert_eq!(&*strip_declaration(b"").unwrap(), b"");
        // Unterminated comments and declarations are left for the parser to refuse.
        assert!(strip_declaration(b"<rss><!-- <?xml ").is_ok());
        assert!(strip_declaration(b"<?xml version=").is_ok());
    }
}
