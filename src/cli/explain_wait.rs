//! What `freshet explain` says holds a URL back when no run fetches it now: its site out of the
//! schedules or its file skipped, its host closed (back-off, Retry-After) or its robots.txt
//! unreadable, the feed it waits for; or, when it is due, that its turn comes in a run.

use std::fmt::Write as _;

use crate::clock::ms_to_rfc3339;
use crate::store::Store;
use crate::store::feed_reads::FeedReads;
use crate::store::hosts::HostRow;
use crate::store::reports::UrlStatusRow;
use crate::store::urls::UrlRow;

/// What holds back a URL no run fetches now: its site is out of the schedules, its host is
/// closed by back-off or Retry-After, its host's robots.txt could not be read, or it waits for
/// its feed; otherwise, when it is due, that its turn comes in a run.
pub(super) async fn describe_wait(
    out: &mut String,
    store: &Store,
    row: &UrlRow,
    status: Option<&UrlStatusRow>,
    now_ms: i64,
) -> anyhow::Result<()> {
    if let Some(problem) = store.site_file_skipped(row.site_id).await? {
        let _ = writeln!(
            out,
            "  not fetched: its site's schedule file was skipped at the last run for its \
             problems ({problem}; `freshet check` lists them all)"
        );
        return Ok(());
    }
    if let Some(since) = store.site_unscheduled_ms(row.site_id).await? {
        let site = status.map_or("its site", |s| s.site.as_str());
        let _ = writeln!(
            out,
            "  not planned: site `{site}` is in none of the schedules loaded since {} (a site \
             that names it again takes it over)",
            ms_to_rfc3339(since)
        );
        return Ok(());
    }
    let mut closed = None;
    let mut robots_unread = None;
    let mut doubted = Vec::new();
    if let Ok(url) = url::Url::parse(&row.url) {
        let origin = crate::politeness::origin_of(&url);
        let key = crate::politeness::key_of(&origin);
        if let Some(host) = store.saved_host(&key).await? {
            let until = host
                .backoff_until_ms
                .max(host.retry_after_until_ms.unwrap_or(0));
            closed = (until > now_ms).then_some(until);
        }
        let host = store.host(&origin).await?;
        robots_unread = host.as_ref().and_then(unread_robots);
        doubted = host.as_ref().map(doubted_announcements).unwrap_or_default();
    }
    for what in doubted {
        let _ = writeln!(out, "  {what}");
    }
    if let Some(until) = closed {
        let _ = writeln!(
            out,
            "  waiting: its host is closed (back-off after errors, or the server's Retry-After) \
             until {}",
            ms_to_rfc3339(until)
        );
    }
    if let Some(why) = &robots_unread {
        let _ = writeln!(
            out,
            "  waiting: its host's robots.txt could not be read when last tried ({why}): \
             nothing on the host is fetched until it can be, and it is tried again soon"
        );
    }
    // As of the last save of its plan (every quarter of an hour, at a stop, and at a read of
    // its feed that ended its wait); a URL out of the plan waits for nothing.
    if let Some(feed_id) = row.waits_for_feed_id.filter(|_| row.next_due_ms.is_some()) {
        let feed = store.url_row_by_id(feed_id).await?;
        let feed_url = feed.as_ref().map(|f| f.url.clone());
        // (Its reader holds the feed's host and not the page's, and cannot write the page's
        // row: the page's holder takes it up, `refresher::ledger`.)
        let left = (feed.as_ref())
            .and_then(|f| FeedReads::parse(f.last_read_json.as_deref()))
            .is_some_and(|reads| reads.left.contains(&row.id));
        let feed = feed_url.as_deref().unwrap_or("its feed");
        let key_of = crate::politeness::key_of;
        let page_holder = store.host_holder(&key_of(&row.url), now_ms).await?;
        let feed_holder = match &feed_url {
            Some(url) => Some(store.host_holder(&key_of(url), now_ms).await?),
            None => None,
        };
        match (page_holder, feed_holder) {
            _ if left => {
                let _ = writeln!(
                    out,
                    "  follows its plan: it waited for its feed, {feed}, whose reads have found \
                     that it no longer lists the page (its row names the feed until the next \
                     save of the plans)"
                );
            }
            // Several workers, the feed's host not held by the page's holder, and the page
            // due within its planned intervals: the wait is kept aside for a worker that
            // holds both (`refresher::ledger`). (A worker that lost the feed's host after the
            // wait was proven goes on waiting: its page is due eight intervals on.)
            (Some(page_holder), Some(feed_holder))
                if feed_holder.as_ref() != Some(&page_holder) && !due_as_waiting(row) =>
            {
                let feed_holder = feed_holder.as_deref().unwrap_or("no worker now");
                let _ = writeln!(
                    out,
                    "  follows its plan: it waited for its feed, {feed}, whose host another \
                     worker holds ({feed_holder}; this page's host: {page_holder}); the wait \
                     is kept with its row and taken up by a worker that holds both hosts"
                );
            }
            _ => {
                let _ = writeln!(
                    out,
                    "  waits for its feed, {feed} (as of the last save of the plans): fetched \
                     soon after the feed announces a change, and otherwise only {} planned \
                     intervals after its last check, to see that the feed still lists its \
                     changes (so its next due time lies past its planned interval)",
                    crate::scheduler::AUDIT_INTERVALS
                );
            }
        }
    }
    if closed.is_none()
        && robots_unread.is_none()
        && row.next_due_ms.is_some_and(|due| due <= now_ms)
    {
        let _ = writeln!(
            out,
            "  due: a running refresher fetches it in its host's turn, as its site's budget and \
             its host's limit allow"
        );
    }
    Ok(())
}

/// Whether the row's plan has the page due past twice its planned interval after its last
/// check, as a page that waits for its feed is (audited only every
/// [`crate::scheduler::AUDIT_INTERVALS`] intervals).
fn due_as_waiting(row: &UrlRow) -> bool {
    match (row.next_due_ms, row.last_checked_ms, row.planned_per_day) {
        (Some(due), Some(last), Some(per_day)) if per_day > 0.0 => {
            (due - last) as f64 > 2.0 * crate::clock::MS_PER_DAY / per_day
        }
        _ => false,
    }
}

/// What the host announces that freshet no longer acts on: its feeds' entries, or its
/// sitemaps' newer `lastmod`s, once the checks they sent found too many false alarms
/// (`scheduler::announcements`), as the host's stored trust says.
fn doubted_announcements(host: &HostRow) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Stored {
        #[serde(default)]
        announcements: crate::scheduler::HostClaims,
    }
    let Some(stored) =
        (host.trust_json.as_deref()).and_then(|json| serde_json::from_str::<Stored>(json).ok())
    else {
        return Vec::new();
    };
    let claims = stored.announcements;
    [
        (claims.feed, "feed entries dated after a copy"),
        (claims.lastmod, "sitemap `lastmod`s newer than a copy"),
    ]
    .into_iter()
    .filter(|(claims, _)| !claims.believed())
    .map(|(claims, what)| {
        format!(
            "not believed: its host's {what} ({} of the checks they sent found nothing new): \
             they do not send its pages early or mark their copies stale",
            claims.false_alarms
        )
    })
    .collect()
}

/// Why the host's robots.txt, as last tried, keeps every page of it off limits (unreachable,
/// 429 or 5xx: RFC 9309 says to assume a complete disallow), with when; `None` when it was read
/// or never tried.
fn unread_robots(host: &HostRow) -> Option<String> {
    let at = ms_to_rfc3339(host.robots_checked_ms?);
    // Judged as a run judges the stored fetch (`robots_rules`).
    if !crate::robots::rules_for_stored(host.robots_status, b"", "*").retry_soon() {
        return None;
    }
    Some(match host.robots_status {
        Some(status) => format!("{at}: HTTP {status}"),
        None => format!(
            "{at}: {}",
            host.robots_error.as_deref().unwrap_or("unreachable")
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::{FeedReads, HostRow, describe_wait, doubted_announcements, unread_robots};
    use crate::store::Store;
    use crate::store::discovered::Discovered;
    use crate::store::summary::PlanUpdate;
    use crate::store::test_support::{checked_at, page, site_and_host, stores};

    /// A page on `a.test` whose row waits for a feed on `b.test`: said to wait for it while one
    /// worker holds both hosts (or none, a single worker), and to follow its plan while two
    /// workers hold them apart (its wait kept aside, `refresher::ledger`).
    #[tokio::test]
    async fn a_wait_on_a_feed_another_worker_holds_is_said_to_be_kept_aside() {
        let (stores, _dir) = stores("explain_kept_aside").await;
        for store in stores {
            let (site_id, host_id) = site_and_host(&store).await;
            let feed = Discovered {
                kind: "feed",
                ..page("http://b.test/feed.xml", site_id, host_id)
            };
            let found = [page("http://a.test/p", site_id, host_id), feed];
            store.upsert_discovered(&found, 0).await.unwrap();
            let id_of = async |url: &str| store.url_row(url).await.unwrap().expect("a row").id;
            let (page_id, feed_id) = (
                id_of("http://a.test/p").await,
                id_of("http://b.test/feed.xml").await,
            );
            let plan = PlanUpdate {
                url_id: page_id,
                planned_per_day: 1.0,
                next_due_ms: 5_000,
                watched: None,
                rate: None,
                waits_for_feed_id: Some(feed_id),
                written_ms: None,
                taken_ms: None,
            };
            store.save_plan(vec![plan.clone()]).await.unwrap();
            let said = async |store: &Store, now_ms: i64| {
                let row = store
                    .url_row("http://a.test/p")
                    .await
                    .unwrap()
                    .expect("the page");
                let mut out = String::new();
                describe_wait(&mut out, store, &row, None, now_ms)
                    .await
                    .unwrap();
                out
            };
            assert!(
                said(&store, 10).await.contains("waits for its feed"),
                "one worker"
            );
            let keys = ["a.test".to_string(), "b.test".to_string()];
            store.add_lease_keys(&keys, 0).await.unwrap();
            store.lease_round("w1", 0, 1_000, &[]).await.unwrap();
            assert!(
                said(&store, 10).await.contains("waits for its feed"),
                "one holds both"
            );
            store.lease_round("w2", 20, 1_000, &[]).await.unwrap();
            store
                .lease_round("w1", 30, 1_000, &keys[1..])
                .await
                .unwrap();
            store.lease_round("w2", 40, 1_000, &[]).await.unwrap();
            let apart = said(&store, 50).await;
            let holders = "holds (w2; this page's host: w1)";
            assert!(
                apart.contains("follows its plan") && apart.contains(holders),
                "{apart}"
            );
            // The feed's host held by no one now (w2's lease ran out, w1 renewed its own).
            store.lease_round("w1", 500, 1_000, &[]).await.unwrap();
            let lapsed = said(&store, 1_200).await;
            assert!(
                lapsed.contains("holds (no worker now; this page's host: w1)"),
                "{lapsed}"
            );
            // Due eight intervals on, as a page that waits is (its holder proved the wait
            // before it lost the feed's host): it waits.
            checked_at(&store, 0).await;
            let waiting = PlanUpdate {
                next_due_ms: 8 * crate::clock::MS_PER_DAY as i64,
                ..plan
            };
            store.save_plan(vec![waiting]).await.unwrap();
            let still = said(&store, 50).await;
            assert!(still.contains("waits for its feed"), "{still}");
            // The feed's reader found the page has left the feed: its row names it until the
            // page's holder saves its plan.
            let reads = FeedReads {
                left: vec![page_id],
                ..FeedReads::default()
            };
            let validators = crate::store::discovered::ReadValidators::default();
            let read = crate::store::feed_reads::FeedReadSaved {
                validators: &validators,
                reads: Some(&reads),
                stamps_entries: false,
                read_ms: 60,
                written_ms: 60,
            };
            store.save_feed_read(feed_id, read).await.unwrap();
            let left = said(&store, 70).await;
            assert!(
                left.contains("follows its plan") && left.contains("no longer lists the page"),
                "{left}"
            );
        }
    }

    #[test]
    fn a_host_is_off_limits_while_its_robots_txt_failed_only() {
        let host = |status: Option<i64>, error: Option<&str>| HostRow {
            id: 1,
            origin: "http://a.test".into(),
            robots_checked_ms: Some(0),
            robots_status: status,
            robots_txt: None,
            robots_error: error.map(String::from),
            crawl_delay_ms: None,
            backoff_until_ms: None,
            trust_json: None,
        };
        let down = unread_robots(&host(None, Some("cannot connect"))).unwrap();
        assert!(down.contains("cannot connect"), "{down}");
        for status in [429, 500, 503] {
            let why = unread_robots(&host(Some(status), None)).unwrap();
            assert!(why.ends_with(&format!("HTTP {status}")), "{why}");
        }
        for status in [200, 404] {
            assert_eq!(unread_robots(&host(Some(status), None)), None);
        }
        let never = HostRow {
            robots_checked_ms: None,
            ..host(None, None)
        };
        assert_eq!(unread_robots(&never), None);
    }

    #[test]
    fn a_host_whose_lastmods_proved_false_alarms_is_said_so() {
        let host = |json: &str| HostRow {
            id: 1,
            origin: "http://a.test".into(),
            robots_checked_ms: None,
            robots_status: None,
            robots_txt: None,
            robots_error: None,
            crawl_delay_ms: None,
            backoff_until_ms: None,
            trust_json: Some(json.into()),
        };
        let doubted = doubted_announcements(&host(
            r#"{"lm_agree":1,"announcements":{"lastmod":{"weight":3.0,"false_alarms":3}}}"#,
        ));
        assert_eq!(doubted.len(), 1, "{doubted:?}");
        assert!(doubted[0].contains("sitemap `lastmod`s") && doubted[0].contains("3 of"));
        // Believed (one false alarm is forgiven), or stored before announcements were judged.
        for json in [
            r#"{"announcements":{"feed":{"weight":1.0,"false_alarms":1}}}"#,
            r#"{"lm_agree":3}"#,
        ] {
            assert!(doubted_announcements(&host(json)).is_empty(), "{json}");
        }
    }
}
