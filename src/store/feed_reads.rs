//! What a feed's reads have shown of whether it dates its entries at each read, not when
//! their pages changed ([`crate::scheduler::STAMPING_READS`]), kept with the feed's row so a
//! restart, or the next `run --once` pass, goes on from it (migration 0028).

use serde::{Deserialize, Serialize};

use super::Store;
use super::discovered::ReadValidators;
use crate::scheduler::FeedShown;

/// A feed's reads towards the judgement, and what else they have shown of it
/// ([`crate::scheduler::FeedShown`]), as the store keeps them (a row written before the
/// latter were kept reads them as none shown yet).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FeedReads {
    /// Reads in a row that looked stamped.
    pub stamped_reads: u8,
    /// The row ids of the site's pages its last read listed.
    pub listed: Vec<i64>,
    /// For each of `listed`, the change it last listed of the page, where the page waits for
    /// it ([`crate::scheduler::Scheduler::listed_change`]): a later document that keeps older
    /// entries but not the page's shows the page has left it. Empty in a row written before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listed_ms: Vec<Option<i64>>,
    /// The row ids of the site's pages its reads found to have left it, until it lists them
    /// again ([`crate::scheduler::Scheduler::feed_left`]): a worker that holds a page's host
    /// and not the feed's forgets its wait for the feed, and one that gains both does not
    /// take it up from the page's row. Empty in a row written before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left: Vec<i64>,
    /// Its capacity and the rest, as fields of the same object.
    #[serde(flatten)]
    pub shown: FeedShown,
}

impl FeedReads {
    /// Reads the stored JSON; `None` for none, or for one that does not parse (it is only
    /// a head start: the reads after it show the same again).
    pub fn parse(json: Option<&str>) -> Option<Self> {
        serde_json::from_str(json?).ok()
    }
}

/// What one feed read writes to the feed's row ([`Store::save_feed_read`]).
#[derive(Debug, Clone, Copy)]
pub struct FeedReadSaved<'a> {
    /// Its validators and the floor on the next read (the server's, or the `ttl` if longer).
    pub validators: &'a ReadValidators,
    /// What the feed's reads have shown, up to this one (`None`: not known here).
    pub reads: Option<&'a FeedReads>,
    /// Whether the feed is taken to stamp its entries.
    pub stamps_entries: bool,
    /// When the read's request went out.
    pub read_ms: i64,
    /// When this is written (the row's `written_ms`).
    pub written_ms: i64,
}

impl Store {
    /// Writes a feed read's validators and floor, written once its entries are
    /// ([`ReadValidators`]), with what the feed's reads have shown and whether it is taken to
    /// stamp its entries: from the first read that took it so (`read_ms` then, kept while it
    /// stays so), cleared once it is not. One statement, so that a later read's check cannot
    /// come between them and leave one read's validators with another's listing.
    ///
    /// Only while the row's latest check is no later than the read's own, `read_ms` (when its
    /// request went out): a row whose latest check is later keeps that read's writes (another
    /// worker's, its host having changed hands while this read was in flight: saved over it, a
    /// newer capacity or judgement was lost, and with it the other workers' view of the feed),
    /// and a row that is no feed any more (another worker's start made it a page or a sitemap
    /// while it was read) keeps its own. The row counts as written at `written_ms` (unless it was later), whatever it writes: saved after the read's
    /// check, what the read showed is taken up by the other workers at their next round
    /// ([`super::urls::UrlScope::WrittenAfter`]), not only with the feed's next check.
    pub async fn save_feed_read(&self, url_id: i64, read: FeedReadSaved<'_>) -> sqlx::Result<()> {
        let json = read
            .reads
            .map(|reads| serde_json::to_string(reads).unwrap_or_default());
        let validators = read.validators;
        self.write("save_feed_read", |mut tx| {
            let json = json.clone();
            async move {
                sqlx::query(
                    "UPDATE urls SET etag = COALESCE($1, etag), \
                     last_modified = COALESCE($2, last_modified), min_interval_ms = $3, \
                     last_read_json = COALESCE($4, last_read_json), \
                     stamps_entries_since_ms = CASE WHEN $4 IS NULL THEN stamps_entries_since_ms \
                     WHEN $5 = 1 THEN COALESCE(stamps_entries_since_ms, $6) ELSE NULL END, \
                     written_ms = CASE WHEN written_ms IS NULL OR written_ms < $7 THEN $7 \
                     ELSE written_ms END \
                     WHERE id = $8 AND kind = 'feed' \
                     AND (last_checked_ms IS NULL OR last_checked_ms <= $6)",
                )
                .bind(&validators.etag)
                .bind(&validators.last_modified)
                .bind(validators.min_interval_ms)
                .bind(json)
                .bind(i64::from(read.stamps_entries))
                .bind(read.read_ms)
                .bind(read.written_ms)
                .bind(url_id)
                .execute(&mut *tx)
                .await?;
                Ok((tx, ()))
            }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{checked_at, page, site_and_host, stores};
    use crate::store::urls::{UrlPages, UrlScope};

    /// A feed's row in `store` (of a site and host of its own): its id.
    async fn feed_row(store: &Store) -> i64 {
        let (site_id, host_id) = site_and_host(store).await;
        let feed = super::super::discovered::Discovered {
            kind: "feed",
            ..page("http://a.test/feed.xml", site_id, host_id)
        };
        store.upsert_discovered(&[feed], 0).await.unwrap();
        (store.url_row("http://a.test/feed.xml").await.unwrap())
            .expect("the feed's row")
            .id
    }

    /// The reads and the judgement round-trip on both databases; the judgement keeps the time
    /// it was first made while it holds, and is cleared once it does not.
    #[tokio::test]
    async fn a_feeds_reads_and_judgement_are_kept_with_its_row() {
        let (stores, _dir) = stores("a_feeds_reads_and_judgement_are_kept_with_its_row").await;
        for store in stores {
            let id = feed_row(&store).await;
            let kept = |row: UrlRowKept| row;
            let read = |store: &Store| {
                let store = store.clone();
                async move {
                    let row = store.url_row_by_id(id).await.unwrap().expect("the row");
                    kept((
                        FeedReads::parse(row.last_read_json.as_deref()),
                        row.stamps_entries_since_ms,
                    ))
                }
            };
            assert_eq!(read(&store).await, (None, None));
            let one = FeedReads {
                stamped_reads: 1,
                listed: vec![3, 7],
                listed_ms: vec![None, Some(1_000)],
                left: vec![9],
                shown: FeedShown {
                    most_entries: 20,
                    reads_below_most: 2,
                    count_below: 12,
                    lists_every_change: true,
                    entries_listed: 60.0,
                    entries_kept: 45.0,
                    ttl_ms: Some(3_600_000),
                },
            };
            store
                .save_feed_read(id, saved(&one, false, 100, 150))
                .await
                .unwrap();
            assert_eq!(read(&store).await, (Some(one), None));
            let two = FeedReads {
                stamped_reads: 2,
                listed: vec![3, 7],
                ..FeedReads::default()
            };
            store
                .save_feed_read(id, saved(&two, true, 200, 250))
                .await
                .unwrap();
            store
                .save_feed_read(id, saved(&two, true, 300, 120))
                .await
                .unwrap();
            assert_eq!(read(&store).await, (Some(two), Some(200)));
            store
                .save_feed_read(id, saved(&FeedReads::default(), false, 400, 450))
                .await
                .unwrap();
            assert_eq!(read(&store).await, (Some(FeedReads::default()), None));
            // Each save moves the row's `written_ms` on (other workers take it up at their next
            // round), never back.
            let written_after = async |at: i64| {
                let mut pages = UrlPages::new(UrlScope::WrittenAfter(at), 10);
                let rows = pages.next(&store).await.unwrap().unwrap_or_default();
                rows.iter().any(|row| row.id == id)
            };
            assert!(written_after(449).await);
            assert!(!written_after(450).await);
            store
                .save_feed_read(id, saved(&FeedReads::default(), false, 500, 300))
                .await
                .unwrap();
            assert!(written_after(449).await, "not moved back");
        }
    }

    /// A read whose check is older than the row's latest (another worker's later read of the
    /// feed, its host having changed hands while this read was in flight) writes neither what
    /// it showed nor its validators over that read's. A read's floor replaces the row's, and
    /// a read with nothing shown to keep writes its validators alone.
    #[tokio::test]
    async fn a_read_older_than_the_rows_check_leaves_the_later_reads_writes() {
        let (stores, _dir) = stores("a_read_older_than_the_rows_check").await;
        for store in stores {
            let id = feed_row(&store).await;
            checked_at(&store, 600).await;
            let shown = |reads: usize| FeedReads {
                listed: vec![reads as i64],
                ..FeedReads::default()
            };
            let validators = |etag: &str, ttl_ms: Option<i64>| ReadValidators {
                etag: Some(etag.into()),
                last_modified: None,
                min_interval_ms: ttl_ms,
            };
            let kept = async || {
                let row = store.url_row_by_id(id).await.unwrap().expect("the row");
                let reads = FeedReads::parse(row.last_read_json.as_deref());
                (reads, row.etag, row.min_interval_ms)
            };
            let read = |validators, reads, read_ms, written_ms| FeedReadSaved {
                validators,
                reads,
                stamps_entries: false,
                read_ms,
                written_ms,
            };
            let (later, older) = (validators("later", Some(60_000)), validators("older", None));
            let one = shown(1);
            store
                .save_feed_read(id, read(&later, Some(&one), 600, 650))
                .await
                .unwrap();
            let two = shown(2);
            store
                .save_feed_read(id, read(&older, Some(&two), 550, 700))
                .await
                .unwrap();
            let kept_later = (Some(one.clone()), Some("later".into()), Some(60_000));
            assert_eq!(kept().await, kept_later);
            // The row's check at 600 was this read's: a read without a `ttl` clears the floor,
            // and one with nothing shown keeps the row's reads (the row counts as written).
            let without_ttl = validators("again", None);
            store
                .save_feed_read(id, read(&without_ttl, None, 600, 800))
                .await
                .unwrap();
            let kept_again = (Some(one), Some("again".into()), None);
            assert_eq!(kept().await, kept_again);
            let mut pages = UrlPages::new(UrlScope::WrittenAfter(799), 10);
            let rows = pages.next(&store).await.unwrap().unwrap_or_default();
            assert!(rows.iter().any(|row| row.id == id), "written_ms moved on");
        }
    }

    /// A feed read's save leaves a row that is no feed any more (another worker's start made
    /// it a page while it was read).
    #[tokio::test]
    async fn a_read_is_not_saved_on_a_row_no_longer_a_feed() {
        let (stores, _dir) = stores("read_not_on_a_page").await;
        for store in stores {
            let (site_id, host_id) = site_and_host(&store).await;
            store
                .upsert_discovered(&[page("http://a.test/p", site_id, host_id)], 0)
                .await
                .unwrap();
            let row = store.url_row("http://a.test/p").await.unwrap().unwrap();
            let reads = FeedReads::default();
            store
                .save_feed_read(row.id, saved(&reads, true, 100, 150))
                .await
                .unwrap();
            let row = store.url_row_by_id(row.id).await.unwrap().unwrap();
            assert_eq!(
                (row.last_read_json, row.stamps_entries_since_ms),
                (None, None)
            );
            store.close().await;
        }
    }

    /// What a read with no validators writes, showing `reads`.
    fn saved(reads: &FeedReads, stamps: bool, read_ms: i64, written_ms: i64) -> FeedReadSaved<'_> {
        static NO_VALIDATORS: ReadValidators = ReadValidators {
            etag: None,
            last_modified: None,
            min_interval_ms: None,
        };
        FeedReadSaved {
            validators: &NO_VALIDATORS,
            reads: Some(reads),
            stamps_entries: stamps,
            read_ms,
            written_ms,
        }
    }

    /// A row written before a feed's capacity and the rest were kept reads as none shown; the
    /// rest is kept as fields of the same object.
    #[test]
    fn reads_stored_before_the_rest_was_kept_read_as_none_shown() {
        let json = r#"{"stamped_reads":0,"listed":[],"most_entries":20,"reads_below_most":1,"count_below":7,"lists_every_change":true,"entries_listed":3.0,"entries_kept":2.0}"#;
        let reads = FeedReads::parse(Some(json)).expect("parses");
        assert_eq!(reads.shown.most_entries, 20);
        assert_eq!(
            (reads.shown.reads_below_most, reads.shown.count_below),
            (1, 7)
        );
        assert!(reads.shown.lists_every_change);
        assert_eq!(serde_json::to_string(&reads).unwrap(), json);
        // Before a cut capacity was followed: no reads below it.
        let before = r#"{"stamped_reads":0,"listed":[],"most_entries":20,"lists_every_change":true,"entries_listed":3.0,"entries_kept":2.0}"#;
        let reads = FeedReads::parse(Some(before)).expect("parses");
        assert_eq!(
            (reads.shown.most_entries, reads.shown.reads_below_most),
            (20, 0)
        );
        let reads = FeedReads::parse(Some(r#"{"stamped_reads":1,"listed":[4]}"#));
        let want = FeedReads {
            stamped_reads: 1,
            listed: vec![4],
            ..FeedReads::default()
        };
        assert_eq!(reads, Some(want));
    }

    type UrlRowKept = (Option<FeedReads>, Option<i64>);
}
