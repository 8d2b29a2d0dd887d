//! Groups of a site's pages that run at their own pace: a population of rates for each, drawn
//! from the site's ([`Population::for_group`]), so a page with little evidence of its own reads
//! as the pages most like it have shown rather than as the whole site.
//!
//! A site joins pages of different paces: a news front and an archive on two hosts, home pages
//! that never change among articles that change daily. Pooled into one population, a slow page
//! that has been quiet for a while still reads as what quiet pages of the whole site have in
//! common (the demo's `live` pages, which change monthly, were believed 2.5 times as fast as
//! they were, and each host's unchanging home page as fast as its articles). The groups, tried
//! in this order, the first with [`MIN_GROUP_PAGES`] pages with evidence:
//! 1. the pages of one host in one section (the first segment of a path with more after it,
//!    `/news/` of `/news/17-harbour`);
//! 2. the pages of one section across the site's hosts (a mirror's `/docs/` with the
//!    original's; every host's top-level pages, home pages among them);
//! 3. the pages of one host;
//! 4. otherwise the site's population itself.
//!
//! A group that is the whole site, or the same pages as a narrower one (a section found on one
//! host only, a host of a single section), is not fitted again. A site's groups are fitted
//! whenever its population is, from a sample of about [`SITE_SAMPLE`] of its pages spread over
//! all of them, at most [`GROUP_SAMPLE`] pages each.

use std::collections::HashMap;

use crate::estimate::population::MIN_GROUP_PAGES;
use crate::estimate::{Population, Stats};

use super::{HostKey, Scheduler, UrlKey, UrlKind};

/// Pages whose evidence fits one group's population; about how many of a site's pages are
/// sampled (every `n / SITE_SAMPLE`-th); and the most pages' evidence one fit of all sites'
/// groups weighs (about a second: the sites past it keep the groups they had, and the next fit
/// starts with another site).
const GROUP_SAMPLE: usize = 64;
const SITE_SAMPLE: usize = 5_000;
const ROWS_PER_FIT: usize = 100_000;

/// A URL that is in no group: its site's population is its prior.
pub const NO_GROUP: u32 = u32::MAX;

/// The section of a URL, hashed: the first segment of its path when more follows it (`news` of
/// `/news/17-harbour`, `docs` of `/docs/a/b`), else the empty section of top-level pages (`/`,
/// `/about`). The simulator's pages have none (0).
pub fn section_of(url: &str) -> u64 {
    let path = url::Url::parse(url)
        .ok()
        .map(|u| u.path().to_string())
        .unwrap_or_default();
    let trimmed = path.trim_start_matches('/');
    let section = match trimmed.split_once('/') {
        Some((first, _)) => first,
        None => "",
    };
    xxhash_rust::xxh3::xxh3_64(section.as_bytes())
}

/// A site's groups that have a population of their own.
#[derive(Debug, Clone, Default)]
pub(super) struct SiteGroups {
    /// Their populations, indexed by [`super::UrlState::group`].
    pub populations: Vec<Population>,
    /// The index of each group's population.
    index: HashMap<GroupKey, u32>,
}

/// The pages of one group sampled for its fit.
#[derive(Debug, Clone, Default)]
struct Sample<'a> {
    /// Pages of the group in the sample.
    pages: usize,
    /// The evidence of the first [`GROUP_SAMPLE`] of them.
    stats: Vec<&'a Stats>,
    /// Whether they are on several hosts, and of several sections.
    hosts: Several,
    sections: Several,
}

/// Whether more than one value was seen.
#[derive(Debug, Clone, Copy, Default)]
struct Several {
    first: Option<u64>,
    several: bool,
}

impl Several {
    fn note(&mut self, value: u64) {
        match self.first {
            None => self.first = Some(value),
            Some(first) => self.several |= first != value,
        }
    }
}

/// Which group a page may belong to, by how specific it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum GroupKey {
    HostSection(HostKey, u64),
    Section(u64),
    Host(HostKey),
}

impl GroupKey {
    /// A page's candidate groups, most specific first.
    fn of(host: HostKey, section: u64) -> [GroupKey; 3] {
        [
            GroupKey::HostSection(host, section),
            GroupKey::Section(section),
            GroupKey::Host(host),
        ]
    }
}

impl Scheduler {
    /// Fits the groups of each site whose population was just fitted (`refitted`) and puts each
    /// of its pages in the first of its groups that has a population (see the module docs).
    pub(super) fn fit_groups(&mut self, refitted: &[bool], now_ms: i64) {
        if !refitted.contains(&true) {
            return;
        }
        let is_page = |u: &&super::UrlState| u.kind == UrlKind::Page && !u.retired;
        let mut site_pages = vec![0usize; self.sites.len()];
        for u in self.urls.iter().filter(is_page) {
            site_pages[u.site()] += usize::from(refitted[u.site()]);
        }
        // Every `stride`-th page of a site, so a large site is sampled through all its pages.
        let strides: Vec<usize> = site_pages
            .iter()
            .map(|&n| (n / SITE_SAMPLE).max(1))
            .collect();
        let mut met = vec![0usize; self.sites.len()];
        let mut sampled = vec![0usize; self.sites.len()];
        let mut samples: Vec<HashMap<GroupKey, Sample>> = vec![HashMap::new(); self.sites.len()];
        for u in self.urls.iter().filter(is_page) {
            if !refitted[u.site()] {
                continue;
            }
            met[u.site()] += 1;
            if !met[u.site()].is_multiple_of(strides[u.site()]) {
                continue;
            }
            sampled[u.site()] += 1;
            for key in GroupKey::of(u.host(), u.section) {
                let sample = samples[u.site()].entry(key).or_default();
                sample.pages += 1;
                sample.hosts.note(u.host() as u64);
                sample.sections.note(u.section);
                if sample.stats.len() < GROUP_SAMPLE {
                    sample.stats.push(u.stats());
                }
            }
        }
        let site_pages = sampled;
        // The sites take turns first, so a fit that runs out of rows starves none for good.
        let first = (now_ms.div_euclid(super::replan::POPULATION_REFIT_MS))
            .rem_euclid(self.sites.len() as i64) as usize;
        let mut samples: Vec<(usize, HashMap<GroupKey, Sample>)> =
            samples.into_iter().enumerate().collect();
        samples.rotate_left(first);
        let mut rows_left = ROWS_PER_FIT;
        let mut fitted: Vec<Option<SiteGroups>> = vec![None; self.sites.len()];
        for (site, groups) in samples {
            let Some(population) = self.sites[site]
                .population
                .as_ref()
                .filter(|_| refitted[site] && site_pages[site] > 0)
            else {
                continue;
            };
            let rows: usize = groups.values().map(|g| g.stats.len()).sum();
            if rows > rows_left {
                continue;
            }
            rows_left -= rows;
            let mut own = SiteGroups::default();
            for (key, sample) in groups {
                // A group that is the whole site, or the same pages as a more specific group
                // (a section on one host only, a host of one section), adds nothing.
                let same_as_narrower = match key {
                    GroupKey::HostSection(..) => false,
                    GroupKey::Section(_) => !sample.hosts.several,
                    GroupKey::Host(_) => !sample.sections.several,
                };
                if sample.pages == site_pages[site]
                    || same_as_narrower
                    || sample.stats.len() < MIN_GROUP_PAGES
                {
                    continue;
                }
                if let Some(population) = population.for_group(sample.stats) {
                    own.index.insert(key, own.populations.len() as u32);
                    own.populations.push(population);
                }
            }
            fitted[site] = Some(own);
        }
        for (site, slot) in fitted.into_iter().enumerate() {
            if let Some(groups) = slot {
                self.sites[site].groups = groups;
            }
        }
        for key in 0..self.urls.len() {
            if refitted[self.urls[key].site()] {
                self.urls[key].group = self.group_of(key);
            }
        }
    }

    /// The group whose population is a URL's prior: the first of its groups that has one.
    pub(super) fn group_of(&self, url: UrlKey) -> u32 {
        let u = &self.urls[url];
        let index = &self.sites[u.site()].groups.index;
        GroupKey::of(u.host(), u.section)
            .iter()
            .find_map(|key| index.get(key).copied())
            .unwrap_or(NO_GROUP)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_is_the_first_segment_of_a_deeper_path() {
        let news = section_of("http://a.test/news/17-harbour");
        assert_eq!(news, section_of("https://b.test:8080/news/18?x=1"));
        assert_eq!(news, section_of("http://a.test/news/2024/05/story"));
        assert_ne!(news, section_of("http://a.test/posts/17-harbour"));
        let top = section_of("http://a.test/");
        assert_eq!(top, section_of("http://a.test/about"));
        assert_eq!(top, section_of("http://a.test"));
        assert_ne!(top, news);
    }
}
