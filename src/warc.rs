//! A WARC 1.1 writer (ISO 28500:2017), by hand: a `warcinfo` record, then one `response` record
//! per stored document, uncompressed. The `warc` crate is stale and gzips a whole file as one
//! member; the format itself is a few header lines per record.
//!
//! A record is `WARC/1.1` CRLF, named fields each ending CRLF, an empty line, the block of
//! `Content-Length` bytes, then CRLF CRLF. A `response` block is the HTTP response as an
//! `application/http;msgtype=response` message: status line, headers, empty line, body.

use std::io::{self, Write};

use rand::RngCore;

use crate::clock::ms_to_datetime;

/// Writes WARC records to `W`.
#[derive(Debug)]
pub struct WarcWriter<W: Write> {
    /// Where records go.
    out: W,
    /// The `warcinfo` record's id, referenced by later records.
    warcinfo_id: Option<String>,
    /// Records written.
    records: usize,
}

/// A fresh `<urn:uuid:...>` record id (UUID version 4, random).
pub fn record_id() -> String {
    let mut b = [0u8; 16];
    rand::rng().fill_bytes(&mut b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "<urn:uuid:{}-{}-{}-{}-{}>",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// A `WARC-Date` (UTC, `YYYY-MM-DDThh:mm:ssZ`).
pub fn warc_date(ms: i64) -> String {
    ms_to_datetime(ms).format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// A header value with line breaks removed (they would end the header).
fn one_line(value: &str) -> String {
    value.replace(['\r', '\n'], " ")
}

impl<W: Write> WarcWriter<W> {
    /// A writer on `out`.
    pub fn new(out: W) -> Self {
        WarcWriter {
            out,
            warcinfo_id: None,
            records: 0,
        }
    }

    /// Writes the `warcinfo` record (call first); `fields` become `name: value` lines.
    pub fn warcinfo(
        &mut self,
        date_ms: i64,
        filename: &str,
        fields: &[(&str, &str)],
    ) -> io::Result<()> {
        let id = record_id();
        let block: String = fields
            .iter()
            .map(|(k, v)| format!("{k}: {}\r\n", one_line(v)))
            .collect();
        let headers = [
            ("WARC-Type", "warcinfo".to_string()),
            ("WARC-Record-ID", id.clone()),
            ("WARC-Date", warc_date(date_ms)),
            ("WARC-Filename", one_line(filename)),
            ("Content-Type", "application/warc-fields".to_string()),
        ];
        self.record(&headers, block.as_bytes())?;
        self.warcinfo_id = Some(id);
        Ok(())
    }

    /// Writes a `response` record for a 200 response of `target_uri` with `body`.
    pub fn response(
        &mut self,
        target_uri: &str,
        date_ms: i64,
        content_type: Option<&str>,
        body: &[u8],
    ) -> io::Result<()> {
        let mut block = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n", body.len());
        if let Some(t) = content_type {
            block.push_str(&format!("Content-Type: {}\r\n", one_line(t)));
        }
        block.push_str("\r\n");
        let mut block = block.into_bytes();
        block.extend_from_slice(body);
        let mut headers = vec![
            ("WARC-Type", "response".to_string()),
            ("WARC-Record-ID", record_id()),
            ("WARC-Date", warc_date(date_ms)),
            ("WARC-Target-URI", one_line(target_uri)),
            (
                "Content-Type",
                "application/http;msgtype=response".to_string(),
            ),
        ];
        if let Some(info) = &self.warcinfo_id {
            headers.push(("WARC-Warcinfo-ID", info.clone()));
        }
        self.record(&headers, &block)
    }

    fn record(&mut self, headers: &[(&str, String)], block: &[u8]) -> io::Result<()> {
        let mut head = String::from("WARC/1.1\r\n");
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str(&format!("Content-Length: {}\r\n\r\n", block.len()));
        self.out.write_all(head.as_bytes())?;
        self.out.write_all(block)?;
        self.out.write_all(b"\r\n\r\n")?;
        self.records += 1;
        Ok(())
    }

    /// Records written so far.
    pub fn records(&self) -> usize {
        self.records
    }

    /// Flushes and returns the output.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_have_their_length_and_ids() {
        let mut w = WarcWriter::new(Vec::new());
        w.warcinfo(0, "x.warc", &[("software", "freshet")]).unwrap();
        w.response("http://a.test/", 1_000, Some("text/html"), b"<p>hi</p>")
            .unwrap();
        let text = String::from_utf8(w.finish().unwrap()).unwrap();
        assert!(text.starts_with("WARC/1.1\r\nWARC-Type: warcinfo\r\n"));
        assert_eq!(text.matches("WARC/1.1\r\n").count(), 2);
        assert!(text.contains("WARC-Date: 1970-01-01T00:00:01Z\r\n"));
        let block =
            "HTTP/1.1 200 OK\r\nContent-Length: 9\r\nContent-Type: text/html\r\n\r\n<p>hi</p>";
        assert!(text.contains(&format!(
            "Content-Length: {}\r\n\r\n{block}\r\n\r\n",
            block.len()
        )));
        let id = record_id();
        assert_eq!(id.len(), "<urn:uuid:>".len() + 36);
        assert_eq!(&id[24..25], "4");
        assert_ne!(id, record_id());
    }
}
