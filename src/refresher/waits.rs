//! Where a run's page checks waited: the time of each step of a check, summed over the run, for
//! `freshet bench` (`run.check_wait_ms` and its parts). A check's steps are mostly waits (for
//! the stored row, the server, the group commit), so these say where a check's time goes when
//! the CPU figures do not. Nothing decides by them: they are real time, not the freshet clock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// A step of a page check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Reading the URL's stored row and admitting it (its site's fetch window, robots.txt as
    /// it reads now, the host not closed and held here).
    Admission,
    /// The request, with its redirect hops and its audit (the permit of the host, the
    /// politeness journal's commit before the request is sent, the server's answer).
    Request,
    /// Committing the observation with the URL's new summary (the group commit).
    Commit,
    /// Filing the fetched page with the dedup engine.
    Dedup,
}

/// The sums, updated by every check task.
#[derive(Debug, Default)]
pub struct WaitClocks {
    checks: AtomicU64,
    total_us: AtomicU64,
    steps_us: [AtomicU64; 4],
}

impl WaitClocks {
    /// Adds the time since `started` to `step`.
    pub fn step(&self, step: Step, started: Instant) {
        self.steps_us[step as usize].fetch_add(micros_since(started), Ordering::Relaxed);
    }

    /// Counts a page check that took the time since `started`, from its hand-out to its end.
    pub fn check(&self, started: Instant) {
        self.checks.fetch_add(1, Ordering::Relaxed);
        self.total_us
            .fetch_add(micros_since(started), Ordering::Relaxed);
    }

    /// The sums so far.
    pub fn snapshot(&self) -> CheckWaits {
        let step = |step: Step| self.steps_us[step as usize].load(Ordering::Relaxed);
        CheckWaits {
            checks: self.checks.load(Ordering::Relaxed),
            total_us: self.total_us.load(Ordering::Relaxed),
            admission_us: step(Step::Admission),
            request_us: step(Step::Request),
            commit_us: step(Step::Commit),
            dedup_us: step(Step::Dedup),
        }
    }
}

fn micros_since(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// A run's page checks and the time their steps took, summed (µs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckWaits {
    /// Page checks timed (those handed out as pages, whatever became of them).
    pub checks: u64,
    /// From hand-out to end.
    pub total_us: u64,
    /// [`Step::Admission`].
    pub admission_us: u64,
    /// [`Step::Request`].
    pub request_us: u64,
    /// [`Step::Commit`].
    pub commit_us: u64,
    /// [`Step::Dedup`].
    pub dedup_us: u64,
}

impl CheckWaits {
    /// `sum_us` as milliseconds per check timed.
    pub fn mean_ms(&self, sum_us: u64) -> f64 {
        sum_us as f64 / 1000.0 / self.checks.max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_summed_apart_and_averaged_over_the_checks() {
        let clocks = WaitClocks::default();
        let long_ago = Instant::now() - std::time::Duration::from_millis(50);
        clocks.step(Step::Commit, long_ago);
        clocks.check(long_ago);
        clocks.check(Instant::now());
        let waits = clocks.snapshot();
        assert_eq!(waits.checks, 2);
        assert!(waits.commit_us >= 50_000);
        assert_eq!(
            (waits.admission_us, waits.request_us, waits.dedup_us),
            (0, 0, 0)
        );
        assert!(waits.mean_ms(waits.commit_us) >= 25.0);
        assert!(waits.total_us >= waits.commit_us);
    }
}
