//! The document store: the latest body of each canonical page, zstd-compressed, by URL (table
//! `documents`). The refresher writes it with the dedup results ([`super::Store::save_dedup`]);
//! `freshet export warc` reads it back ([`Store::documents`]).

use sqlx::{Any, Transaction};

use super::{Store, hash_from_db, hash_to_db};

/// The zstd level bodies are compressed at (fast, still about 4x on HTML).
const ZSTD_LEVEL: i32 = 3;

/// A body to keep, already compressed.
#[derive(Debug, Clone)]
pub struct DocumentWrite {
    /// The canonical URL (normalised).
    pub url: String,
    /// When it was fetched (clock ms).
    pub fetched_ms: i64,
    /// Its `Content-Type`.
    pub content_type: Option<String>,
    /// Exact fingerprint of its main text.
    pub content_fp: u64,
    /// The body, zstd-compressed.
    pub body_zstd: Vec<u8>,
}

impl DocumentWrite {
    /// Compresses `body` for storage.
    pub fn new(
        url: String,
        fetched_ms: i64,
        content_type: Option<String>,
        content_fp: u64,
        body: &[u8],
    ) -> std::io::Result<Self> {
        Ok(DocumentWrite {
            url,
            fetched_ms,
            content_type,
            content_fp,
            body_zstd: compress(body)?,
        })
    }
}

thread_local! {
    /// Each thread's compressor, kept: a fresh one allocates and clears its tables (about a
    /// megabyte at level 3) for every body, which cost more than compressing a 17 KB page.
    static COMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// `body` zstd-compressed at [`ZSTD_LEVEL`] (a frame `zstd::decode_all` reads).
fn compress(body: &[u8]) -> std::io::Result<Vec<u8>> {
    COMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        let compressor = match slot.as_mut() {
            Some(compressor) => compressor,
            None => slot.insert(zstd::bulk::Compressor::new(ZSTD_LEVEL)?),
        };
        compressor.compress(body)
    })
}

/// A stored document, decompressed.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// The canonical URL.
    pub url: String,
    /// When it was fetched (Unix ms).
    pub fetched_ms: i64,
    /// Its `Content-Type`.
    pub content_type: Option<String>,
    /// Exact fingerprint of its main text.
    pub content_fp: u64,
    /// The body.
    pub body: Vec<u8>,
}

/// Why a stored document could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    /// The database failed.
    #[error("reading documents")]
    Db(#[from] sqlx::Error),
    /// A body did not decompress.
    #[error("the stored body of {url} is not valid zstd")]
    Corrupt {
        /// Whose body.
        url: String,
        /// What zstd said.
        #[source]
        source: std::io::Error,
    },
}

/// Inserts or replaces one document.
pub(super) async fn put(tx: &mut Transaction<'_, Any>, doc: &DocumentWrite) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO documents (url, fetched_ms, content_type, content_fp, body)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (url) DO UPDATE SET fetched_ms = excluded.fetched_ms,
             content_type = excluded.content_type, content_fp = excluded.content_fp,
             body = excluded.body",
    )
    .bind(&doc.url)
    .bind(doc.fetched_ms)
    .bind(&doc.content_type)
    .bind(hash_to_db(doc.content_fp))
    .bind(&doc.body_zstd)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Deletes the documents of `urls`.
pub(super) async fn delete(tx: &mut Transaction<'_, Any>, urls: &[String]) -> sqlx::Result<()> {
    for url in urls {
        sqlx::query("DELETE FROM documents WHERE url = $1")
            .bind(url)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

type DocRow = (String, i64, Option<String>, i64, Vec<u8>);

impl Store {
    /// Every stored document, decompressed, by URL.
    pub async fn documents(&self) -> Result<Vec<Document>, DocumentError> {
        let rows: Vec<DocRow> = sqlx::query_as(
            "SELECT url, fetched_ms, content_type, content_fp, body FROM documents ORDER BY url",
        )
        .fetch_all(self.reader())
        .await?;
        rows.into_iter()
            .map(|(url, fetched_ms, content_type, fp, body)| {
                let body =
                    zstd::decode_all(&body[..]).map_err(|source| DocumentError::Corrupt {
                        url: url.clone(),
                        source,
                    })?;
                Ok(Document {
                    url,
                    fetched_ms,
                    content_type,
                    content_fp: hash_from_db(fp),
                    body,
                })
            })
            .collect()
    }

    /// How many documents are stored.
    pub async fn document_count(&self) -> sqlx::Result<i64> {
        sqlx::query_scalar("SELECT COUNT(*) FROM documents")
            .fetch_one(self.reader())
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_compressed_one_after_another_by_the_kept_compressor_each_decode_alone() {
        let pages: Vec<Vec<u8>> = (0..3)
            .map(|i| {
                format!("<p>page {i}</p>")
                    .repeat(200 * (i + 1))
                    .into_bytes()
            })
            .collect();
        for page in &pages {
            let stored = DocumentWrite::new("u".into(), 0, None, 0, page).unwrap();
            assert!(stored.body_zstd.len() < page.len() / 4);
            assert_eq!(
                &zstd::decode_all(stored.body_zstd.as_slice()).unwrap(),
                page
            );
        }
    }
}
