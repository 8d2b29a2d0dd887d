//! The stop flag: set once when shutdown is asked, seen by every wait on a host.
//!
//! A politeness wait can be long (a Crawl-delay, a stretched back-off interval), so each one
//! races its sleep with [`Stop::stopped`]: when the flag is set, every task waiting on a host
//! returns at once instead of sleeping out the host's gap. Cheap to clone (one `Arc`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

/// A one-way flag with a waitable "it is set" future.
#[derive(Debug, Clone, Default)]
pub struct Stop {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Set once, never cleared.
    stopped: AtomicBool,
    /// Wakes every task waiting in [`Stop::stopped`].
    notify: Notify,
}

impl Stop {
    /// A flag not set yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the flag and wakes every waiter (idempotent).
    pub fn stop(&self) {
        self.inner.stopped.store(true, Ordering::SeqCst);
        self.inner.notify.notify_waiters();
    }

    /// Whether the flag is set.
    pub fn is_stopped(&self) -> bool {
        self.inner.stopped.load(Ordering::SeqCst)
    }

    /// Resolves once the flag is set (at once if it is).
    pub async fn stopped(&self) {
        loop {
            let notified = self.inner.notify.notified();
            tokio::pin!(notified);
            // Registered before the check, so a `stop` between the check and the await is
            // not missed.
            notified.as_mut().enable();
            if self.is_stopped() {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::Stop;

    #[tokio::test]
    async fn waiters_wake_when_stopped_and_later_waits_return_at_once() {
        let stop = Stop::new();
        let waiter = tokio::spawn({
            let stop = stop.clone();
            async move { stop.stopped().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        stop.stop();
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("the waiter woke")
            .expect("no panic");
        assert!(stop.is_stopped());
        tokio::time::timeout(Duration::from_secs(5), stop.stopped())
            .await
            .expect("returns at once once set");
    }
}
