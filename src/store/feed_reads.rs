//! What a feed's reads have shown of whether it dates its entries at each read, not when
//! their pages changed ([`crate::scheduler::STAMPING_READS`]), kept with the feed's row so a
//! restart, or the next `run --once` pass, goes on from it (migration 0028).

use serde::{Deserialize, Serialize};

use super::Store;

/// A feed's reads towards the judgement, as the store keeps them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeedReads {
    /// Reads in a row that looked stamped.
    pub stamped_reads: u8,
    /// The row ids of the site's pages its last read listed.
    pub listed: Vec<i64>,
}

impl FeedReads {
    /// Reads the stored JSON; `None` for none, or for one that does not parse (it is only
    /// a head start: the reads after it show the same again).
    pub fn parse(json: Option<&str>) -> Option<Self> {
        serde_json::from_str(json?).ok()
    }
}

impl Store {
    /// Keeps a feed's reads, and whether it is taken to stamp its entries: from the first read
    /// that took it so (`since_ms` then, kept while it stays so), cleared once it is not.
    pub async fn save_feed_reads(
        &self,
        url_id: i64,
        reads: &FeedReads,
        stamps_entries: bool,
        now_ms: i64,
    ) -> sqlx::Result<()> {
        let json = serde_json::to_string(reads).unwrap_or_default();
        self.write("save_feed_reads", |mut tx| {
            let json = json.clone();
            async move {
                sqlx::query(
                    "UPDATE urls SET last_read_json = $1, stamps_entries_since_ms = \
                 CASE WHEN $2 = 1 THEN COALESCE(stamps_entries_since_ms, $3) ELSE NULL END \
                 WHERE id = $4",
                )
                .bind(json)
                .bind(i64::from(stamps_entries))
                .bind(now_ms)
                .bind(url_id)
                .execute(&mut *tx)
                .await?;
                Ok((tx, ()))
            }
        })
        .await
    }
}
