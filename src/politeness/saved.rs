//! Politeness that survives a restart: what is persisted per host, how a restart takes it up,
//! and the journal that writes it as it changes.
//!
//! Written (through the store's single writer, table `host_politeness`, migration 0006):
//! - **before** a request is sent, unless a reservation already committed covers its start: a
//!   reservation, the row's `last_start_ms` set [`RESERVED_STARTS_MS`](super::RESERVED_STARTS_MS) (one second) after the
//!   request's start, with the interval in force (the schedule's rate or the learnt
//!   Crawl-delay, whichever is longer) and the back-off. The permit is handed out only once
//!   this is committed, so a process killed at any moment has recorded a start at or after
//!   every request the server may have seen; the host's requests that start before the
//!   reservation ends go without a write of their own. A host asked many times a second so
//!   commits once a second, not once a request, and a check waits for one group commit, not
//!   two. A host whose interval is a second or more commits its own start before every
//!   request, as before: none of its next requests could use a reservation;
//! - when a response pushes back (429 / 503 / 5xx / timeout): the back-off level, the closure
//!   (`backoff_until_ms`, which holds any Retry-After) and the Retry-After's own end, committed
//!   before the request's permit is released;
//! - when a request ends: its end, in the background. An end inside the reservation changes
//!   nothing a restart reads (the row says a request may be in flight until the reservation's
//!   end), so it is not written then: once the reservation is over with no request in flight
//!   (or at shutdown), the reservation's end is written as the host's last end, unless a later
//!   reservation was committed by then (one deferred write per reservation at most), and the
//!   reservation is used up: a request counted as started after it commits its own. A lost end only
//!   makes the next run wait a little longer, see below.
//!
//! At start, [`SavedHost::gate_ms`] turns a row into the earliest time the host may be contacted:
//! `last_end + interval`, where a request whose start is recorded without a later end (the
//! process died with it in flight) is taken to have ended at the restart itself: a dead
//! process's connection is closed, so the server saw it end by then at the latest. A
//! reservation is such a start, at the reservation's end: a restart before it waits for it,
//! then the interval, so a restart (or another worker taking the host over) waits at most a
//! second longer than the last request's start alone would make it. Back-off and Retry-After
//! closures are restored as they were.
//!
//! The one gap no journal can close: a response that arrives and is killed with the process
//! before its back-off is committed (a window of about one SQLite write).

use std::sync::{Arc, Mutex};

use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::clock::{self, SharedClock};
use crate::store::Store;
pub use crate::store::politeness::SavedHost;

/// What a saved row means for the next run (the row itself is the store's).
impl SavedHost {
    /// When the last request of the earlier run ended, as far as the server can have seen it:
    /// its recorded end, or `now_ms` (the restart) when it was in flight at the end.
    pub fn ended_ms(&self, now_ms: i64) -> Option<i64> {
        match (self.last_start_ms, self.last_end_ms) {
            (Some(start), end) if end.is_none_or(|end| end < start) => Some(now_ms.max(start)),
            (_, end) => end,
        }
    }

    /// The earliest time (Unix ms) the host may be contacted after a restart at `now_ms`,
    /// counting only the gap after the last request (closures are restored separately).
    pub fn gate_ms(&self, now_ms: i64) -> i64 {
        let interval = self.min_interval_ms.max(0);
        let mut gate = self.ended_ms(now_ms).map_or(0, |end| end + interval);
        if let Some(start) = self.last_start_ms {
            gate = gate.max(start + interval);
        }
        gate
    }
}

/// Writes hosts' politeness state through the store as it changes. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Journal {
    /// The database.
    store: Store,
    /// Stamps each write (`updated_ms`).
    clock: SharedClock,
    /// Writes started in the background (request ends), awaited by [`Journal::flush`].
    pending: Arc<Mutex<JoinSet<()>>>,
    /// Set by [`Journal::flush`]: deferred writes go at once.
    flushing: Arc<watch::Sender<bool>>,
}

impl Journal {
    /// A journal writing to `store`, stamped with `clock`.
    pub fn new(store: Store, clock: SharedClock) -> Self {
        Self {
            store,
            clock,
            pending: Arc::default(),
            flushing: Arc::new(watch::channel(false).0),
        }
    }

    /// Writes `saved` and waits until it is committed. A failed write is logged: politeness
    /// then holds for this run, and the next run starts from the last state written.
    pub async fn save(&self, saved: &SavedHost) -> bool {
        match self.store.save_politeness(saved, self.clock.now_ms()).await {
            Ok(()) => true,
            Err(error) => {
                tracing::warn!(host = %saved.key, %error, "politeness state not saved");
                false
            }
        }
    }

    /// Writes `saved` in the background (from a `Drop`, which cannot wait).
    pub fn save_later(&self, saved: SavedHost) {
        let journal = self.clone();
        self.spawn(async move {
            journal.save(&saved).await;
        });
    }

    /// Once the clock reaches `at_ms` (or at once when flushed), writes what `decide` says
    /// then, if anything (a host's deferred end: `Host::deferred_end`). False when there is
    /// no runtime to wait on.
    pub(super) fn save_at(
        &self,
        at_ms: i64,
        decide: impl FnOnce() -> Option<SavedHost> + Send + 'static,
    ) -> bool {
        let journal = self.clone();
        let mut flushing = self.flushing.subscribe();
        self.spawn(async move {
            tokio::select! {
                () = clock::sleep_until(journal.clock.as_ref(), at_ms) => {}
                _ = flushing.wait_for(|flushed| *flushed) => {}
            }
            if let Some(saved) = decide() {
                journal.save(&saved).await;
            }
        })
    }

    /// Starts `write` among the background writes [`Journal::flush`] waits for. False when
    /// there is no runtime to run it on.
    fn spawn(&self, write: impl Future<Output = ()> + Send + 'static) -> bool {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return false;
        };
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        while pending.try_join_next().is_some() {}
        pending.spawn_on(write, &runtime);
        true
    }

    /// Waits for the background writes (before the store is closed, once no request will be
    /// sent); deferred ones go at once.
    pub async fn flush(&self) {
        self.flushing.send_replace(true);
        let mut pending =
            std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()));
        while pending.join_next().await.is_some() {}
        self.flushing.send_replace(false);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::{Journal, SavedHost};
    use crate::clock::{Clock, ManualClock, SharedClock};
    use crate::politeness::{HostConfig, HostPool, RESERVED_STARTS_MS};
    use crate::store::Store;

    fn saved(start: Option<i64>, end: Option<i64>) -> SavedHost {
        SavedHost {
            key: "a.test".into(),
            min_interval_ms: 3_000,
            last_start_ms: start,
            last_end_ms: end,
            backoff_level: 0,
            backoff_until_ms: 0,
            retry_after_until_ms: None,
        }
    }

    #[test]
    fn a_finished_request_gates_from_its_end() {
        assert_eq!(saved(Some(1_000), Some(1_200)).gate_ms(50_000), 4_200);
    }

    #[test]
    fn a_request_in_flight_at_the_end_gates_from_the_restart() {
        // Started at 5 000 after the previous one ended at 1 200: the process died with it.
        assert_eq!(saved(Some(5_000), Some(1_200)).gate_ms(6_000), 9_000);
        assert_eq!(saved(Some(5_000), None).gate_ms(6_000), 9_000);
    }

    #[test]
    fn a_host_never_contacted_is_open() {
        assert_eq!(saved(None, None).gate_ms(6_000), 0);
    }

    /// A clock set by hand whose sleeps never end in a test's time: the journal's deferred
    /// writes then go only when it is flushed, whatever the machine's load.
    #[derive(Debug)]
    struct HandClock(ManualClock);

    impl Clock for HandClock {
        fn now_ms(&self) -> i64 {
            self.0.now_ms()
        }

        fn speed(&self) -> f64 {
            1e-9
        }
    }

    /// A permit for `a.test`; a gate that would wait (forever, on [`HandClock`]) fails the test.
    async fn acquire(pool: &HostPool) -> crate::politeness::HostPermit {
        tokio::time::timeout(Duration::from_secs(60), pool.try_acquire("http://a.test"))
            .await
            .expect("the gate is open at the times the test sets")
            .expect("a permit")
    }

    /// A pool on `store` with a journal, on a [`HandClock`] reading `t0`, `a.test` at `gap_ms`.
    fn pool_on(store: &Store, t0: i64, gap_ms: u64) -> (HostPool, Arc<HandClock>) {
        let clock = Arc::new(HandClock(ManualClock::new(t0)));
        (pool_with(store, clock.clone(), gap_ms), clock)
    }

    /// A pool on `store` with a journal on `clock`, `a.test` at `gap_ms`.
    fn pool_with(store: &Store, clock: SharedClock, gap_ms: u64) -> HostPool {
        let pool = HostPool::new(clock.clone()).with_journal(Journal::new(store.clone(), clock));
        let config = HostConfig {
            min_interval: Duration::from_millis(gap_ms),
            concurrency: 1,
        };
        pool.configure("http://a.test", config);
        pool
    }

    /// The row the journal left for `a.test` and when it was last written.
    async fn row(store: &Store) -> (SavedHost, i64) {
        let saved = store.load_politeness().await.unwrap();
        let updated = crate::store::test_support::politeness_updated_ms(store, "a.test").await;
        (saved.into_iter().next().expect("a row for a.test"), updated)
    }

    #[tokio::test]
    async fn one_committed_start_covers_the_requests_of_the_next_second() {
        const T0: i64 = 1_000_000;
        const GAP: i64 = 100;
        let (stores, _dir) = crate::store::test_support::stores(
            "one_committed_start_covers_the_requests_of_the_next_second",
        )
        .await;
        for store in stores {
            let (pool, clock) = pool_on(&store, T0, GAP as u64);
            let set = |at: i64| clock.0.set(at);

            // The first request commits a start a second ahead before it is sent.
            let permit = acquire(&pool).await;
            let (saved, updated) = row(&store).await;
            assert_eq!(saved.last_start_ms, Some(T0 + RESERVED_STARTS_MS));
            assert_eq!(updated, T0);
            // Killed now, a restart waits for the reservation's end and the gap.
            assert_eq!(saved.gate_ms(T0 + 10), T0 + RESERVED_STARTS_MS + GAP);
            set(T0 + 5);
            drop(permit);

            // Within that second, requests go without a write, and so do their ends.
            for at in [T0 + 400, T0 + 900] {
                set(at);
                drop(acquire(&pool).await);
            }
            assert_eq!(row(&store).await.1, T0, "no write inside the reservation");

            // Past it, the next request commits a new reservation, which carries the last end.
            set(T0 + 1_500);
            let permit = acquire(&pool).await;
            let (saved, updated) = row(&store).await;
            assert_eq!(saved.last_start_ms, Some(T0 + 1_500 + RESERVED_STARTS_MS));
            assert_eq!(saved.last_end_ms, Some(T0 + 901));
            assert_eq!(updated, T0 + 1_500);
            // An end past the reservation is written as it ends (flush waits for the write).
            set(T0 + 3_000);
            drop(permit);
            pool.flush().await;
            let (saved, _) = row(&store).await;
            assert_eq!(saved.last_end_ms, Some(T0 + 3_001));
            assert_eq!(
                saved.gate_ms(T0 + 60_000),
                T0 + 3_001 + GAP,
                "gated from its end"
            );

            // An end inside a reservation waits for the reservation's end; once it is written,
            // a restart long after is not held back (it was, while the row said "in flight").
            set(T0 + 5_000);
            let permit = acquire(&pool).await;
            set(T0 + 5_010);
            drop(permit);
            let (saved, _) = row(&store).await;
            assert_eq!(saved.last_end_ms, Some(T0 + 3_001), "not written yet");
            assert_eq!(saved.gate_ms(T0 + 60_000), T0 + 60_000 + GAP);
            pool.flush().await;
            let (saved, _) = row(&store).await;
            let reservation_end = T0 + 5_000 + RESERVED_STARTS_MS;
            assert_eq!(saved.last_start_ms, Some(reservation_end));
            assert_eq!(saved.last_end_ms, Some(reservation_end));
            assert_eq!(saved.gate_ms(T0 + 60_000), reservation_end + GAP);

            // A request in flight when the reservation is over keeps the row "in flight"; the
            // reservation's end is written once it has ended.
            set(T0 + 8_000);
            let first = acquire(&pool).await;
            set(T0 + 8_010);
            drop(first);
            set(T0 + 8_500);
            let covered = acquire(&pool).await;
            pool.flush().await;
            let (saved, updated) = row(&store).await;
            assert_eq!(updated, T0 + 8_000, "the covered request wrote nothing");
            assert_eq!(saved.gate_ms(T0 + 60_000), T0 + 60_000 + GAP, "in flight");
            set(T0 + 8_600);
            drop(covered);
            pool.flush().await;
            let (saved, _) = row(&store).await;
            assert_eq!(saved.last_end_ms, Some(T0 + 9_000));
            assert_eq!(saved.gate_ms(T0 + 60_000), T0 + 9_000 + GAP);

            // Once written as ended, the reservation covers nothing more: a request whose clock
            // reading still falls inside it (read before its end, or a system clock stepped
            // back) commits a reservation of its own.
            set(T0 + 8_800);
            drop(acquire(&pool).await);
            let (saved, updated) = row(&store).await;
            assert_eq!(updated, T0 + 8_800);
            assert_eq!(saved.last_start_ms, Some(T0 + 9_800));
            pool.flush().await;
            store.close().await;
        }
    }

    /// The deferred end's own timer, not a flush: the clock set past the reservation, its
    /// sleep (a second of real time on this clock) ends and writes the reservation as ended.
    #[tokio::test]
    async fn a_reservation_over_is_written_as_ended_by_its_timer() {
        const T0: i64 = 1_000_000;
        const GAP: i64 = 100;
        let (stores, _dir) = crate::store::test_support::stores(
            "a_reservation_over_is_written_as_ended_by_its_timer",
        )
        .await;
        for store in stores {
            let clock = Arc::new(ManualClock::new(T0));
            let pool = pool_with(&store, clock.clone(), GAP as u64);
            let permit = acquire(&pool).await;
            clock.set(T0 + 5);
            drop(permit);
            let reservation_end = T0 + RESERVED_STARTS_MS;
            assert_eq!(row(&store).await.0.last_end_ms, None, "deferred");
            clock.set(reservation_end);
            // Waits for the write, however long the loaded machine takes to make it.
            let saved = tokio::time::timeout(Duration::from_secs(120), async {
                loop {
                    let (saved, _) = row(&store).await;
                    if saved.last_end_ms.is_some() {
                        return saved;
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            })
            .await
            .expect("the deferred end is written once its time has come");
            assert_eq!(saved.last_end_ms, Some(reservation_end));
            assert_eq!(saved.last_start_ms, Some(reservation_end));
            assert_eq!(saved.gate_ms(T0 + 60_000), reservation_end + GAP);
            // Used up: the next request, even at a reading inside it, commits its own.
            clock.set(T0 + 900);
            drop(acquire(&pool).await);
            let (saved, updated) = row(&store).await;
            assert_eq!(updated, T0 + 900);
            assert_eq!(saved.last_start_ms, Some(T0 + 900 + RESERVED_STARTS_MS));
            pool.flush().await;
            store.close().await;
        }
    }

    #[tokio::test]
    async fn a_slow_host_commits_each_start_and_a_longer_interval_at_once() {
        const T0: i64 = 1_000_000;
        let (stores, _dir) = crate::store::test_support::stores(
            "a_slow_host_commits_each_start_and_a_longer_interval_at_once",
        )
        .await;
        for store in stores {
            // An interval of a second or more: no request could use a reservation.
            let (pool, clock) = pool_on(&store, T0, 2_000);
            let permit = acquire(&pool).await;
            assert_eq!(row(&store).await.0.last_start_ms, Some(T0));
            clock.0.set(T0 + 10);
            drop(permit);
            pool.flush().await;
            let (saved, _) = row(&store).await;
            assert_eq!(
                saved.last_end_ms,
                Some(T0 + 11),
                "its end written as it ends"
            );
            assert_eq!(saved.gate_ms(T0 + 60_000), T0 + 11 + 2_000);

            // A faster host's reservation is cut short when its interval grows (a Crawl-delay
            // learnt): the next request commits the longer interval.
            let host = HostConfig {
                min_interval: Duration::from_millis(100),
                concurrency: 1,
            };
            pool.configure("http://b.test", host.clone());
            let b = || async {
                tokio::time::timeout(Duration::from_secs(60), pool.try_acquire("http://b.test"))
                    .await
                    .expect("the gate is open at the times the test sets")
            };
            let reserved = b().await.unwrap();
            clock.0.set(T0 + 20);
            drop(reserved);
            pool.configure(
                "http://b.test",
                HostConfig {
                    min_interval: Duration::from_millis(300),
                    ..host
                },
            );
            clock.0.set(T0 + 400);
            drop(b().await.unwrap());
            let saved = store.load_politeness().await.unwrap();
            let b_row = saved.iter().find(|row| row.key == "b.test").unwrap();
            assert_eq!(b_row.min_interval_ms, 300);
            assert_eq!(b_row.last_start_ms, Some(T0 + 400 + RESERVED_STARTS_MS));
            pool.flush().await;
            store.close().await;
        }
    }
}
