//! Where a run's page checks spent their time: each step of a check timed, and the sums over the
//! run, for `freshet bench` (`run.check_wait_ms` and its parts). A check's steps are mostly waits
//! (for the stored row, the server, the group commit), so these say where its time goes when
//! the CPU figures do not. Nothing decides by them: they are real time, not the freshet clock
//! (as the status line's checks a minute are).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// A step of a page check.
#[derive(Debug, Clone, Copy)]
pub enum Step {
    /// Reading the URL's stored row and admitting it (its site's fetch window, robots.txt as
    /// it reads now, the host not closed and held here).
    Admission,
    /// The request, with its redirect hops and its audit (the permit of the host, the
    /// politeness journal's commit before the request is sent, the server's answer).
    Request,
    /// Committing the observation with the URL's new summary (the group commit), with its
    /// tries again after a failure. A commit that failed for good is not counted here (its
    /// time is in the check's).
    Commit,
    /// Filing the fetched page with the dedup engine.
    Dedup,
}

/// The steps of one check, timed as they end (µs). The steps are disjoint stretches of the
/// check, so each timed to the microsecond below, they add up to at most the check's time
/// timed the same way.
#[derive(Debug, Clone, Copy, Default)]
pub struct StepTimes([u64; 4]);

impl StepTimes {
    /// Records `step` as lasting from `started` until now.
    pub fn ended(&mut self, step: Step, started: Instant) {
        self.0[step as usize] = self.0[step as usize].saturating_add(micros_since(started));
    }

    /// Takes up the steps `other` timed.
    pub fn add(&mut self, other: StepTimes) {
        for (mine, theirs) in self.0.iter_mut().zip(other.0) {
            *mine = mine.saturating_add(theirs);
        }
    }
}

/// The sums over a run, added to by every check task when its check ends (a check cut short at
/// shutdown adds nothing).
#[derive(Debug, Default)]
pub struct WaitSums {
    checks: AtomicU64,
    total_us: AtomicU64,
    steps_us: [AtomicU64; 4],
}

impl WaitSums {
    /// Counts a page check that started at `started` and ends now, with its steps.
    pub fn check_ended(&self, started: Instant, steps: StepTimes) {
        self.checks.fetch_add(1, Ordering::Relaxed);
        self.total_us
            .fetch_add(micros_since(started), Ordering::Relaxed);
        for (sum, step) in self.steps_us.iter().zip(steps.0) {
            sum.fetch_add(step, Ordering::Relaxed);
        }
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

/// A run's page checks and the time they and their steps took, summed (µs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckWaits {
    /// Page checks that ended (each from its task's start, its URL's lock awaited, to its end).
    pub checks: u64,
    /// The checks' own time.
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
    /// `sum_us` as milliseconds per check that ended.
    pub fn mean_ms(&self, sum_us: u64) -> f64 {
        sum_us as f64 / 1000.0 / self.checks.max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_checks_steps_are_summed_apart_and_averaged_over_the_checks() {
        let sums = WaitSums::default();
        let check_started = Instant::now() - Duration::from_millis(80);
        let mut steps = StepTimes::default();
        steps.ended(Step::Admission, Instant::now() - Duration::from_millis(60));
        let mut fetched = StepTimes::default();
        fetched.ended(Step::Commit, Instant::now() - Duration::from_millis(50));
        steps.add(fetched);
        sums.check_ended(check_started, steps);
        sums.check_ended(Instant::now(), StepTimes::default());
        let waits = sums.snapshot();
        assert_eq!(waits.checks, 2);
        assert!(waits.admission_us >= 60_000 && waits.commit_us >= 50_000);
        assert_eq!((waits.request_us, waits.dedup_us), (0, 0));
        assert!(waits.mean_ms(waits.commit_us) >= 25.0);
        assert!(waits.total_us >= 80_000);
    }
}
