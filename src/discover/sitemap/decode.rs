//! Character decoding for XML sitemaps: everything reaches quick-xml as valid UTF-8.
//!
//! The protocol requires UTF-8, but real sitemaps declare `ISO-8859-1` or `windows-1252`, or
//! hold a stray invalid byte. quick-xml would stop at the first invalid byte (and its own
//! `DecodingReader` panics when the XML declaration is longer than its 64-byte prefix), so the
//! declared ASCII-compatible encoding is applied here by a streaming encoding_rs decoder, and
//! invalid sequences become U+FFFD instead of ending the document. [`Window`] holds the decoded
//! document a part at a time for quick-xml's slice reader.

use std::io::{self, BufRead};

use encoding_rs::{Decoder, Encoding, UTF_8};

/// The encoding named by the XML declaration at the start of `head`, if it is ASCII-compatible
/// (UTF-16 declarations on 8-bit input are wrong and ignored); UTF-8 otherwise.
pub(crate) fn declared_encoding(head: &[u8]) -> &'static Encoding {
    let head = &head[..head.len().min(1024)];
    let Some(rest) = head.strip_prefix(b"<?xml") else {
        return UTF_8;
    };
    let Some(end) = rest.windows(2).position(|w| w == b"?>") else {
        return UTF_8;
    };
    let decl = &rest[..end];
    let Some(at) = decl.windows(8).position(|w| w == b"encoding") else {
        return UTF_8;
    };
    let after = &decl[at + 8..];
    let Some(open) = after.iter().position(|&b| b == b'"' || b == b'\'') else {
        return UTF_8;
    };
    let quote = after[open];
    let Some(len) = after[open + 1..].iter().position(|&b| b == quote) else {
        return UTF_8;
    };
    Encoding::for_label(&after[open + 1..open + 1 + len])
        .filter(|e| e.is_ascii_compatible())
        .unwrap_or(UTF_8)
}

/// The decoded document, held one window at a time for quick-xml's borrowing (slice) reader.
///
/// quick-xml reading a [`BufRead`] copies every event into a buffer and checks it again, which
/// costs about as much as the parsing; over a slice it hands out events that borrow the slice.
/// A sitemap may be 50 MiB uncompressed (more, for a caller with higher limits), so it is never
/// held whole: the window holds the part not read yet, decoded to UTF-8 (only whole characters,
/// so the window always ends on a character boundary). An event that reaches the window's end
/// may be cut short; the reader reads it again after [`Window::fill`] has brought in more of the
/// document, and the window grows (doubling) only when one event is larger than it.
pub(super) struct Window<R> {
    /// The undecoded document.
    source: R,
    decoder: Decoder,
    /// Decoded bytes; `buf[start..end]` is the part not read yet.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Offset in the decoded document of `buf[0]`.
    base: u64,
    /// The source is exhausted: the window holds the rest of the document (the decoder has seen
    /// the end of the input and must not be called again).
    last: bool,
    /// A read error met after some bytes were decoded: returned by the next [`Window::fill`].
    error: Option<io::Error>,
}

/// The window's initial size: small enough to stay in the processor's fastest caches (measured:
/// 16 KiB reads about 8% faster than 64 KiB).
pub(super) const WINDOW: usize = 16 * 1024;

impl<R: BufRead> Window<R> {
    pub(super) fn new(source: R, encoding: &'static Encoding) -> Self {
        Window {
            source,
            decoder: encoding.new_decoder_without_bom_handling(),
            buf: vec![0; WINDOW],
            start: 0,
            end: 0,
            base: 0,
            last: false,
            error: None,
        }
    }

    /// The part of the document not read yet that the window holds.
    pub(super) fn rest(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// The offset in the decoded document of the first byte of [`Window::rest`].
    pub(super) fn offset(&self) -> u64 {
        self.base + self.start as u64
    }

    /// Whether [`Window::rest`] is all that is left of the document.
    pub(super) fn is_last(&self) -> bool {
        self.last
    }

    /// Marks the first `n` bytes of [`Window::rest`] as read.
    pub(super) fn consume(&mut self, n: usize) {
        self.start = (self.start + n).min(self.end);
    }

    /// Keeps what is not read yet and decodes more of the document after it, until the window
    /// is full or the source exhausted. A read error is returned once what was decoded before it
    /// has been read (as quick-xml reading the source itself would have returned it).
    pub(super) fn fill(&mut self) -> io::Result<()> {
        if let Some(error) = self.error.take() {
            return Err(error);
        }
        if self.last {
            return Ok(());
        }
        self.buf.copy_within(self.start..self.end, 0);
        self.base += self.start as u64;
        self.end -= self.start;
        self.start = 0;
        if self.buf.len() - self.end < self.buf.len() / 2 {
            self.buf.resize(self.buf.len() * 2, 0);
        }
        let before = self.end;
        loop {
            let input = match self.source.fill_buf() {
                Ok(input) => input,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if self.end > before => {
                    self.error = Some(e);
                    return Ok(());
                }
                Err(e) => return Err(e),
            };
            let last = input.is_empty();
            let (_, read, written, _) =
                self.decoder
                    .decode_to_utf8(input, &mut self.buf[self.end..], last);
            self.source.consume(read);
            self.end += written;
            self.last = last;
            // No progress: too little room left for the next character.
            if last || self.end == self.buf.len() || (read == 0 && written == 0) {
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads the whole document through a window.
    fn read_all(input: &[u8], encoding: &'static Encoding) -> String {
        let mut window = Window::new(input, encoding);
        let mut out = Vec::new();
        loop {
            window.fill().unwrap();
            out.extend_from_slice(window.rest());
            let n = window.rest().len();
            window.consume(n);
            if window.is_last() && window.rest().is_empty() {
                return String::from_utf8(out).unwrap();
            }
        }
    }

    #[test]
    fn the_window_keeps_what_is_unread_grows_for_it_and_counts_offsets() {
        // Multi-byte characters across the source's chunks, and more than a window of input.
        let text: String = "é€x".repeat(40_000);
        let reader = std::io::BufReader::with_capacity(7, text.as_bytes());
        let mut window = Window::new(reader, UTF_8);
        let mut out = Vec::new();
        let mut kept_whole = false;
        loop {
            window.fill().unwrap();
            assert!(std::str::from_utf8(window.rest()).is_ok());
            if window.is_last() {
                out.extend_from_slice(window.rest());
                break;
            }
            // Leave everything unread once, so the window must grow to hold more.
            if !kept_whole && window.rest().len() >= WINDOW / 2 {
                kept_whole = true;
                let before = window.rest().len();
                let offset = window.offset();
                window.fill().unwrap();
                assert!(window.rest().len() > before);
                assert_eq!(window.offset(), offset);
            }
            let n = window.rest().len();
            out.extend_from_slice(window.rest());
            window.consume(n);
            assert_eq!(window.offset(), out.len() as u64);
        }
        assert!(kept_whole);
        assert_eq!(String::from_utf8(out).unwrap(), text);
    }

    #[test]
    fn latin1_and_bad_bytes_become_utf8() {
        let input = b"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a>caf\xe9</a>";
        let enc = declared_encoding(input);
        assert_eq!(enc.name(), "windows-1252");
        assert!(read_all(&input[..], enc).ends_with("<a>café</a>"));
        assert_eq!(read_all(&b"<a>\xff</a>"[..], UTF_8), "<a>\u{FFFD}</a>");
        assert_eq!(declared_encoding(b"<?xml encoding='utf-16'?>"), UTF_8);
    }
}
