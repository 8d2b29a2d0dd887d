//! Politeness that survives a restart: what is persisted per host, how a restart takes it up,
//! and the journal that writes it as it changes.
//!
//! Written (through the store's single writer, table `host_politeness`, migration 0006):
//! - **before** each request is sent: its start, the interval in force (the schedule's rate or
//!   the learnt Crawl-delay, whichever is longer) and the back-off. The permit is handed out only
//!   once this is committed, so a process killed at any moment has recorded every request the
//!   server may have seen;
//! - when a response pushes back (429 / 503 / 5xx / timeout): the back-off level, the closure
//!   (`backoff_until_ms`, which holds any Retry-After) and the Retry-After's own end, committed
//!   before the request's permit is released;
//! - when a request ends: its end (in the background; a lost end only makes the next run
//!   wait a little longer, see below).
//!
//! At start, [`SavedHost::gate_ms`] turns a row into the earliest time the host may be contacted:
//! `last_end + interval`, where a request whose start is recorded without a later end (the
//! process died with it in flight) is taken to have ended at the restart itself: a dead
//! process's connection is closed, so the server saw it end by then at the latest. Back-off and
//! Retry-After closures are restored as they were.
//!
//! The one gap no journal can close: a response that arrives and is killed with the process
//! before its back-off is committed (a window of about one SQLite write).

use std::sync::{Arc, Mutex};

use tokio::task::JoinSet;

use crate::clock::SharedClock;
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
}

impl Journal {
    /// A journal writing to `store`, stamped with `clock`.
    pub fn new(store: Store, clock: SharedClock) -> Self {
        Self {
            store,
            clock,
            pending: Arc::default(),
        }
    }

    /// Writes `saved` and waits until it is committed. A failed write is logged: politeness
    /// then holds for this run, and the next run starts from the last state written.
    pub async fn save(&self, saved: &SavedHost) {
        if let Err(error) = self.store.save_politeness(saved, self.clock.now_ms()).await {
            tracing::warn!(host = %saved.key, %error, "politeness state not saved");
        }
    }

    /// Writes `saved` in the background (from a `Drop`, which cannot wait).
    pub fn save_later(&self, saved: SavedHost) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let journal = self.clone();
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        while pending.try_join_next().is_some() {}
        pending.spawn_on(async move { journal.save(&saved).await }, &runtime);
    }

    /// Waits for the background writes (before the store is closed).
    pub async fn flush(&self) {
        let mut pending =
            std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()));
        while pending.join_next().await.is_some() {}
    }
}

#[cfg(test)]
mod tests {
    use super::SavedHost;

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
}
