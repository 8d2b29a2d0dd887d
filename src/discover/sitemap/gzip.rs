//! Gzip detection, capped decompression, and a byte cap for streamed reading.
//!
//! The cap counts *decompressed* bytes, which is what stops a gzip bomb: a few kilobytes that
//! inflate to gigabytes are cut at the limit.

use std::cell::Cell;
use std::io::{self, BufRead, Read};
use std::rc::Rc;

/// Errors of [`decompress`].
#[derive(Debug, thiserror::Error)]
pub enum DecompressError {
    /// The output would exceed the cap: likely a gzip bomb.
    #[error("decompressed size exceeds {limit} bytes")]
    TooLarge {
        /// The cap.
        limit: u64,
    },
    /// Broken gzip data.
    #[error("bad gzip data: {0}")]
    Gzip(#[source] io::Error),
}

/// Whether `bytes` start with the gzip magic number.
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// The body as plain bytes: gunzipped if it is gzip (by magic bytes, whatever the URL or
/// Content-Type say), refusing to produce more than `max_bytes`.
pub fn decompress(bytes: &[u8], max_bytes: u64) -> Result<Vec<u8>, DecompressError> {
    if !is_gzip(bytes) {
        if bytes.len() as u64 > max_bytes {
            return Err(DecompressError::TooLarge { limit: max_bytes });
        }
        return Ok(bytes.to_vec());
    }
    let mut out = Vec::new();
    let mut decoder = flate2::read::MultiGzDecoder::new(bytes).take(max_bytes + 1);
    decoder
        .read_to_end(&mut out)
        .map_err(DecompressError::Gzip)?;
    if out.len() as u64 > max_bytes {
        return Err(DecompressError::TooLarge { limit: max_bytes });
    }
    Ok(out)
}

/// A [`BufRead`] that stops after `left` bytes and flags whether more data was there.
pub(super) struct Capped<R> {
    pub(super) inner: R,
    pub(super) left: u64,
    pub(super) exceeded: Rc<Cell<bool>>,
}

impl<R: BufRead> Read for Capped<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let buf = self.fill_buf()?;
        let n = buf.len().min(out.len());
        out[..n].copy_from_slice(&buf[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Capped<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        let left = self.left;
        let exceeded = self.exceeded.clone();
        let buf = self.inner.fill_buf()?;
        if left == 0 {
            if !buf.is_empty() {
                exceeded.set(true);
                return Err(io::Error::other(CAP_MESSAGE));
            }
            return Ok(&[]);
        }
        let n = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        Ok(&buf[..n])
    }

    fn consume(&mut self, n: usize) {
        self.left = self.left.saturating_sub(n as u64);
        self.inner.consume(n);
    }
}

/// The message of the error [`Capped`] returns at the limit (recognised by the collector).
pub(super) const CAP_MESSAGE: &str = "size limit reached";
