//! The group commit's promises: one transaction for the writes waiting together, a failing
//! or panicking write alone, the settling barrier, each site's last budget save.

use crate::store::test_support::{hold_writer, temp_store};

/// Queues an error row with `message` (or, with `fail`, an observation of a URL that does
/// not exist, which the foreign key refuses).
fn queue(
    store: &crate::store::Store,
    message: String,
    fail: bool,
) -> impl Future<Output = sqlx::Result<()>> + use<> {
    store.queue_grouped_beside_checks("test", move |mut tx| {
        let message = message.clone();
        async move {
            let sql = if fail {
                "INSERT INTO observations (url_id, checked_ms, method) VALUES (42, 1, $1)"
            } else {
                "INSERT INTO errors (at_ms, scope, message) VALUES (1, 'test', $1)"
            };
            sqlx::query(sql).bind(message).execute(&mut *tx).await?;
            Ok((tx, ()))
        }
    })
}

/// A store that only read (a report) closes while another process holds the write lock,
/// and takes no lock to do it; the writes it queued are settled before it closes.
#[tokio::test]
async fn closing_takes_no_lock_and_settles_the_writes_queued_before() {
    let (running, dir) = temp_store().await;
    let db = dir.path().join("test.db");
    // A short busy timeout: a close that asked for the lock would retry at once.
    let report = crate::store::Store::open_with(&db, std::time::Duration::from_millis(50))
        .await
        .unwrap();
    let held = hold_writer(&running).await;
    report.close().await;
    assert_eq!(report.lock_retries(), 0);
    held.release().await;

    let writer = crate::store::Store::open(&db).await.unwrap();
    let write = queue(&writer, "before the close".into(), false);
    writer.close().await;
    write.await.unwrap();
    let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM errors WHERE message = $1")
        .bind("before the close")
        .fetch_one(running.reader())
        .await
        .unwrap();
    assert_eq!(rows, 1);
    running.close().await;
}

#[tokio::test]
async fn waiting_writes_share_a_transaction_and_a_failing_one_takes_no_other_with_it() {
    let (stores, _dir) = crate::store::test_support::stores(
        "waiting_writes_share_a_transaction_and_a_failing_one_takes_no_other_with_it",
    )
    .await;
    for store in stores {
        // Queued while the task is held: one group of ten.
        let held = hold_writer(&store).await;
        let queued: Vec<_> = (0..10)
            .map(|i| queue(&store, format!("a{i}"), false))
            .collect();
        held.release().await;
        for write in queued {
            write.await.unwrap();
        }
        assert_eq!(store.group_commits(), (1, 10));
        assert_eq!(store.recent_errors(100).await.unwrap().len(), 10);

        // One write of the next group fails: it alone fails, the others are committed alone.
        let held = hold_writer(&store).await;
        let queued: Vec<_> = (0..10)
            .map(|i| queue(&store, format!("b{i}"), i == 4))
            .collect();
        held.release().await;
        let mut failed = Vec::new();
        for (i, write) in queued.into_iter().enumerate() {
            if write.await.is_err() {
                failed.push(i);
            }
        }
        assert_eq!(failed, vec![4]);
        assert_eq!(store.recent_errors(100).await.unwrap().len(), 19);
        assert_eq!(store.observation_count().await.unwrap(), 0);
        assert_eq!(
            store.group_commits(),
            (1, 10),
            "the failed group is not counted"
        );
        assert_eq!(store.lock_retries(), 0);
        store.close().await;
    }
}

#[tokio::test]
async fn of_a_sites_budget_saves_in_one_group_the_last_queued_stands() {
    use crate::store::sites::BudgetSave;
    let (stores, _dir) = crate::store::test_support::stores(
        "of_a_sites_budget_saves_in_one_group_the_last_queued_stands",
    )
    .await;
    for store in stores {
        let ids = crate::store::test_support::sites(&store, &["a", "b"]).await;
        let save = |site_id, credit, at_ms| BudgetSave {
            site_id,
            credit,
            at_ms,
        };
        let held = hold_writer(&store).await;
        let queued = vec![
            store.save_site_budgets(vec![save(ids[0], 5.0, 10), save(ids[1], 7.0, 10)]),
            store.save_site_budgets(vec![save(ids[0], 4.0, 20)]),
            store.save_site_budgets(vec![save(ids[0], 3.0, 30)]),
        ];
        let other = queue(&store, "beside".into(), false);
        held.release().await;
        for write in queued {
            write.await.unwrap();
        }
        other.await.unwrap();
        assert_eq!(store.group_commits(), (1, 4), "one group");
        assert_eq!(store.site_budget(ids[0]).await.unwrap(), Some((3.0, 30)));
        assert_eq!(store.site_budget(ids[1]).await.unwrap(), Some((7.0, 10)));
        store.close().await;
    }
}

#[tokio::test]
async fn a_write_that_panics_fails_alone_and_the_group_task_goes_on() {
    let (stores, _dir) = crate::store::test_support::stores(
        "a_write_that_panics_fails_alone_and_the_group_task_goes_on",
    )
    .await;
    for store in stores {
        let held = hold_writer(&store).await;
        let panics = store.queue_grouped_beside_checks("panics", |tx| async move {
            if std::hint::black_box(true) {
                panic!("a bug in a write");
            }
            Ok((tx, ()))
        });
        let others: Vec<_> = (0..3)
            .map(|i| queue(&store, format!("p{i}"), false))
            .collect();
        held.release().await;
        assert!(panics.await.is_err());
        for write in others {
            write.await.unwrap();
        }
        let held = hold_writer(&store).await;
        let later: Vec<_> = (0..4)
            .map(|i| queue(&store, format!("q{i}"), false))
            .collect();
        held.release().await;
        for write in later {
            write.await.unwrap();
        }
        assert_eq!(store.recent_errors(100).await.unwrap().len(), 7);
        assert_eq!(
            store.group_commits(),
            (1, 4),
            "the later writes are still grouped"
        );
        store.close().await;
    }
}

#[tokio::test]
async fn writes_queued_before_close_are_committed_though_no_one_waits_for_them() {
    let (store, dir) = temp_store().await;
    // A write that keeps the writer busy a while, so that the others are still queued when
    // `close` is called.
    let slow = store.queue_grouped_beside_checks("slow", |tx| async {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        Ok((tx, ()))
    });
    tokio::task::yield_now().await;
    for i in 0..5 {
        // Queued, and the caller stops waiting (an aborted check).
        drop(queue(&store, format!("c{i}"), false));
    }
    drop(slow);
    store.close().await;
    let store = crate::store::Store::open(&dir.path().join("test.db"))
        .await
        .unwrap();
    assert_eq!(store.recent_errors(100).await.unwrap().len(), 5);
    store.close().await;
}
