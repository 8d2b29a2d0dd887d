//! The instants at which the refresher judges its copies' freshness: a quarter-hour grid of clock
//! time, so that several workers' parts of one site's sample (each over the hosts it holds) fall
//! on the same instants and add up.
//!
//! Each instant is judged with what the scheduler held at that instant, not when the refresher's
//! loop gets round to it: the ledger judges every instant passed before it lets anything change
//! ([`super::ledger::Ledger`]). Judged late, a sample counted the checks that landed between
//! its instant and its judgment as if they had been there at the instant: on a demo's fast clock
//! with three workers on PostgreSQL the loop woke up to 14 clock minutes after an instant, and
//! the estimated mean age came out at half the truth on a loaded machine.

/// The grid's instants not judged yet.
#[derive(Debug, Clone)]
pub struct SampleGrid {
    every_ms: i64,
    next_ms: i64,
}

/// At most this many passed instants are judged at once: a process stalled for hours (a
/// suspended machine) judges the last of them, each a pass over every copy, and leaves a gap
/// before them in its samples, as it would have had it been stopped.
const MAX_CATCH_UP: i64 = 4;

impl SampleGrid {
    /// The grid of instants every `every_ms`, from the first one after `now_ms`.
    pub fn after(now_ms: i64, every_ms: i64) -> Self {
        let every_ms = every_ms.max(1);
        Self {
            every_ms,
            next_ms: now_ms - now_ms.rem_euclid(every_ms) + every_ms,
        }
    }

    /// The next instant to judge.
    pub fn next_ms(&self) -> i64 {
        self.next_ms
    }

    /// The instants passed by `now_ms` (it included) and not judged yet, oldest first; they count
    /// as judged from now on.
    pub fn passed(&mut self, now_ms: i64) -> impl Iterator<Item = i64> + use<> {
        let passed = if now_ms < self.next_ms {
            0
        } else {
            (now_ms - self.next_ms) / self.every_ms + 1
        };
        let skipped = (passed - MAX_CATCH_UP).max(0);
        let first = self.next_ms + skipped * self.every_ms;
        self.next_ms += passed * self.every_ms;
        let every_ms = self.every_ms;
        (0..passed - skipped).map(move |i| first + i * every_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUARTER: i64 = 15 * 60_000;

    #[test]
    fn the_first_instant_is_the_next_on_the_grid() {
        assert_eq!(
            SampleGrid::after(QUARTER * 4 + 7, QUARTER).next_ms(),
            QUARTER * 5
        );
        // An instant on the grid was the start's to judge, not the grid's.
        assert_eq!(
            SampleGrid::after(QUARTER * 4, QUARTER).next_ms(),
            QUARTER * 5
        );
    }

    #[test]
    fn each_instant_passed_is_handed_out_once_in_order() {
        let mut grid = SampleGrid::after(0, QUARTER);
        assert_eq!(grid.passed(QUARTER - 1).count(), 0);
        assert_eq!(grid.passed(QUARTER).collect::<Vec<_>>(), vec![QUARTER]);
        assert_eq!(grid.passed(QUARTER + 5).count(), 0);
        assert_eq!(
            grid.passed(QUARTER * 3 + 1).collect::<Vec<_>>(),
            vec![QUARTER * 2, QUARTER * 3]
        );
        assert_eq!(grid.next_ms(), QUARTER * 4);
    }

    #[test]
    fn a_long_stall_judges_only_its_last_instants() {
        let mut grid = SampleGrid::after(0, QUARTER);
        let judged: Vec<i64> = grid.passed(QUARTER * 100).collect();
        assert_eq!(
            judged,
            vec![QUARTER * 97, QUARTER * 98, QUARTER * 99, QUARTER * 100]
        );
        assert_eq!(grid.next_ms(), QUARTER * 101);
    }

    #[test]
    fn a_clock_going_back_judges_nothing() {
        let mut grid = SampleGrid::after(QUARTER * 10, QUARTER);
        assert_eq!(grid.passed(QUARTER * 2).count(), 0);
        assert_eq!(grid.next_ms(), QUARTER * 11);
    }
}
