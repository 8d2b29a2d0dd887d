//! Character decoding for XML sitemaps: everything reaches quick-xml as valid UTF-8.
//!
//! The protocol requires UTF-8, but real sitemaps declare `ISO-8859-1` or `windows-1252`, or
//! hold a stray invalid byte. quick-xml would stop at the first invalid byte (and its own
//! `DecodingReader` panics when the XML declaration is longer than its 64-byte prefix), so the
//! declared ASCII-compatible encoding is applied here by a streaming encoding_rs decoder, and
//! invalid sequences become U+FFFD instead of ending the document.

use std::io::{self, BufRead, Read};

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

/// A [`BufRead`] that decodes `inner` from `encoding` to UTF-8, replacing invalid sequences.
pub(super) struct Transcode<R> {
    inner: R,
    decoder: Decoder,
    out: Box<[u8]>,
    pos: usize,
    len: usize,
    /// The decoder has seen the end of input (it must not be called again).
    done: bool,
}

impl<R: BufRead> Transcode<R> {
    pub(super) fn new(inner: R, encoding: &'static Encoding) -> Self {
        Transcode {
            inner,
            decoder: encoding.new_decoder_without_bom_handling(),
            out: vec![0; 16 * 1024].into_boxed_slice(),
            pos: 0,
            len: 0,
            done: false,
        }
    }
}

impl<R: BufRead> BufRead for Transcode<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.pos == self.len && !self.done {
            let input = self.inner.fill_buf()?;
            let last = input.is_empty();
            let (_, read, written, _) = self.decoder.decode_to_utf8(input, &mut self.out, last);
            self.inner.consume(read);
            self.pos = 0;
            self.len = written;
            self.done = last;
        }
        Ok(&self.out[self.pos..self.len])
    }

    fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.len);
    }
}

impl<R: BufRead> Read for Transcode<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_and_bad_bytes_become_utf8() {
        let input = b"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a>caf\xe9</a>";
        let enc = declared_encoding(input);
        assert_eq!(enc.name(), "windows-1252");
        let mut out = String::new();
        Transcode::new(&input[..], enc)
            .read_to_string(&mut out)
            .unwrap();
        assert!(out.ends_with("<a>café</a>"));
        let mut out = String::new();
        Transcode::new(&b"<a>\xff</a>"[..], UTF_8)
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(out, "<a>\u{FFFD}</a>");
        assert_eq!(declared_encoding(b"<?xml encoding='utf-16'?>"), UTF_8);
    }
}
