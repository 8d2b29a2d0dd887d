//! A site's pages as a re-plan hands them to the planner: the re-plan's list of the site's URLs
//! (borrowed, not copied: 4 bytes a URL at the re-plan), and its pages as runs of consecutive
//! pages the planner sees alike ([`crate::plan::solve_runs`]); a feed is in no run.
//!
//! A sitemap names its pages together, so they take consecutive keys, and until their first
//! check the pages of a host are alike (one prior, one weight, one host, no floor, one planning
//! interval: [`super::Scheduler::planning_rate`]): a site of a million pages never checked is
//! planned as a few runs, where a plan entry per page held 64 bytes per page at the re-plan
//! (the entry, its key, and the solver's term).

use crate::plan::PlanPage;

use super::UrlKey;

/// See the module docs.
#[derive(Debug)]
pub(super) struct SitePages<'a> {
    /// The site's URLs in key order (the re-plan's list; its feeds are in no run).
    keys: &'a [u32],
    /// One plan entry per run of consecutive pages alike.
    runs: Vec<PlanPage>,
    /// The pages in each run.
    counts: Vec<u32>,
    /// The index in `keys` after each run's last page.
    ends: Vec<u32>,
}

impl<'a> SitePages<'a> {
    /// No pages yet among the site's URLs `keys` (in increasing order).
    pub fn new(keys: &'a [u32]) -> Self {
        debug_assert!(keys.windows(2).all(|w| w[0] < w[1]));
        Self {
            keys,
            runs: Vec::new(),
            counts: Vec::new(),
            ends: Vec::new(),
        }
    }

    /// Makes the URL at `index` in the site's list a page planned as `page` (indices must come
    /// in increasing order).
    pub fn push(&mut self, index: usize, page: PlanPage) {
        let index = u32::try_from(index).expect("fewer than 2^32 URLs");
        debug_assert!(self.ends.last().is_none_or(|&end| end <= index));
        match (
            self.runs.last(),
            self.counts.last_mut(),
            self.ends.last_mut(),
        ) {
            (Some(last), Some(count), Some(end))
                if *end == index && *last == page && *count < u32::MAX =>
            {
                *count += 1;
                *end += 1;
            }
            _ => {
                self.runs.push(page);
                self.counts.push(1);
                self.ends.push(index + 1);
            }
        }
    }

    /// The runs' plan entries and their pages' counts.
    pub fn runs(&self) -> (&[PlanPage], &[u32]) {
        (&self.runs, &self.counts)
    }

    /// The plan entry of the page `key`, and its run, if it is one of these pages.
    pub fn find(&self, key: UrlKey) -> Option<(usize, &PlanPage)> {
        let index = self.keys.binary_search(&u32::try_from(key).ok()?).ok()? as u32;
        let run = self.ends.partition_point(|&end| end <= index);
        let start = self.ends.get(run)? - self.counts[run];
        (index >= start).then(|| (run, &self.runs[run]))
    }

    /// Each page's key with its run, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (UrlKey, usize)> + '_ {
        (self.ends.iter().zip(&self.counts))
            .enumerate()
            .flat_map(move |(run, (&end, &count))| {
                self.keys[(end - count) as usize..end as usize]
                    .iter()
                    .map(move |&key| (key as UrlKey, run))
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
        // The site's URLs: 7 and 20 are feeds (in no run: 7 splits a run).
        let keys = [3, 4, 7, 9, 10, 11, 12, 13, 20];
        let mut site = SitePages::new(&keys);
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
            let index = keys
                .iter()
                .position(|&k| k as UrlKey == key)
                .expect("listed");
            site.push(index, p);
        }
        let (runs, counts) = site.runs();
        assert_eq!(counts, &[2, 1, 1, 1, 2]);
        assert_eq!(runs.len(), 5);
        let walked: Vec<(UrlKey, usize)> = site.iter().collect();
        assert_eq!(
            walked,
            vec![(3, 0), (4, 0), (9, 1), (10, 2), (11, 3), (12, 4), (13, 4)]
        );
        for (key, p) in entries {
            let (run, found) = site.find(key).expect("listed");
            assert_eq!(*found, p);
            assert_eq!(walked.iter().find(|w| w.0 == key).map(|w| w.1), Some(run));
        }
        for absent in [5, 7, 20, 21] {
            assert!(site.find(absent).is_none(), "{absent}");
        }
    }
}
