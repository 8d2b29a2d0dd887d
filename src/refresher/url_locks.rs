//! One check of a URL at a time, from reading its stored row to its last write.

use std::collections::HashMap;
use std::sync::Arc;

/// Per-URL locks: a check holds its URL's from reading the stored row to its last write.
///
/// The scheduler is told a check's result (freeing the URL and its host) before the check is
/// committed, because the commit stores what the scheduler answers. At demo speed, or on a
/// loaded machine, the next check of the same URL could then read the row before that commit
/// and take the page for one without a copy: an empty body accepted as a "first" copy, an
/// unconditional request where a conditional one was due.
#[derive(Debug, Default)]
pub struct UrlLocks(std::sync::Mutex<HashMap<i64, Arc<tokio::sync::Mutex<()>>>>);

impl UrlLocks {
    pub(super) fn get(&self, url_id: i64) -> Arc<tokio::sync::Mutex<()>> {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(url_id).or_default().clone()
    }

    /// Forgets a URL's lock when no other check holds or waits for it.
    pub(super) fn release(&self, url_id: i64, lock: Arc<tokio::sync::Mutex<()>>) {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        // Ours and the map's: nobody else has it.
        if Arc::strong_count(&lock) == 2 {
            map.remove(&url_id);
        }
    }
}
