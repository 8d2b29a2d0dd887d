//! A site's pages as a re-plan hands them to the planner: every page's key in key order, and
//! the pages as runs of consecutive pages the planner sees alike ([`crate::plan::solve_runs`]).
//!
//! A sitemap names its pages together, so they take consecutive keys, and until their first
//! check the pages of a host are alike (one prior, one weight, one host, no floor, one planning
//! interval: [`super::Scheduler::planning_rate`]): a site of a million pages never checked is
//! planned as a few runs, where a plan entry per page held 64 bytes per page at the re-plan
//! (the entry, its key, and the solver's term).

use crate::plan::PlanPage;

use super::UrlKey;

/// See the module docs.
#[derive(Debug, Default)]
pub(super) struct SitePages {
    /// Every page, in key order (32 bits: the re-plan's list of a site's URLs holds them so).
    keys: Vec<u32>,
    /// One plan entry per run of consecutive pages alike.
    runs: Vec<PlanPage>,
    /// The pages in each run.
    counts: Vec<u32>,
    /// The index in `keys` after each run's last page.
    ends: Vec<usize>,
}

impl SitePages {
    /// Appends a page (keys must come in increasing order).
    pub fn push(&mut self, key: UrlKey, page: PlanPage) {
        let key = u32::try_from(key).expect("fewer than 2^32 URLs");
        debug_assert!(self.keys.last().is_none_or(|&last| last < key));
        self.keys.push(key);
        match (
            self.runs.last(),
            self.counts.last_mut(),
            self.ends.last_mut(),
        ) {
            (Some(last), Some(count), Some(end)) if *last == page && *count < u32::MAX => {
                *count += 1;
                *end += 1;
            }
            _ => {
                self.runs.push(page);
                self.counts.push(1);
                self.ends.push(self.keys.len());
            }
        }
    }

    /// The runs' plan entries and their pages' counts.
    pub fn runs(&self) -> (&[PlanPage], &[u32]) {
        (&self.runs, &self.counts)
    }

    /// The run of the page at `index` in [`SitePages::keys`].
    pub fn run_of(&self, index: usize) -> usize {
        self.ends.partition_point(|&end| end <= index)
    }

    /// The plan entry of the page `key`, and its run, if it is one of these pages.
    pub fn find(&self, key: UrlKey) -> Option<(usize, &PlanPage)> {
        let index = self.keys.binary_search(&u32::try_from(key).ok()?).ok()?;
        let run = self.run_of(index);
        Some((run, &self.runs[run]))
    }

    /// Each page's key with its run, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (UrlKey, usize)> + '_ {
        let mut run = 0;
        self.keys.iter().enumerate().map(move |(i, &key)| {
            while self.ends[run] <= i {
                run += 1;
            }
            (key as UrlKey, run)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(rate: f64, host: usize) -> PlanPage {
        PlanPage {
            rate_per_day: rate,
            weight: 1.0,
            host,
            max_visits_per_day: f64::INFINITY,
        }
    }

    #[test]
    fn consecutive_pages_alike_make_one_run_and_each_page_finds_its_own() {
        let mut site = SitePages::default();
        let entries = [
            (3, page(0.1, 0)),
            (4, page(0.1, 0)),
            (9, page(0.1, 0)),
            (10, page(2.0, 0)),
            (11, page(0.1, 0)),
            (12, page(0.1, 1)),
            (13, page(0.1, 1)),
        ];
        for (key, p) in entries {
            site.push(key, p);
        }
        let (runs, counts) = site.runs();
        assert_eq!(counts, &[3, 1, 1, 2]);
        assert_eq!(runs.len(), 4);
        let walked: Vec<(UrlKey, usize)> = site.iter().collect();
        assert_eq!(
            walked,
            vec![(3, 0), (4, 0), (9, 0), (10, 1), (11, 2), (12, 3), (13, 3)]
        );
        for (key, p) in entries {
            let (run, found) = site.find(key).expect("listed");
            assert_eq!(*found, p);
            assert_eq!(walked.iter().find(|w| w.0 == key).map(|w| w.1), Some(run));
        }
        assert!(site.find(5).is_none());
    }
}
