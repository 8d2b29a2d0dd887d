//! The simulated web: pages with Poisson changes, hosts with limits and validators of varying
//! honesty, sitemap hints of varying quality, and per-host feeds (pure, seeded, deterministic).
//!
//! Defaults resemble what crawl studies report (Cho & Garcia-Molina 2000/2003; Fetterly et al.
//! 2003; Kolobov et al. 2019): change rates are log-normal over four decades (median one change
//! in five days, σ = 1.5 in ln, so the top 1% change several times a day and a quarter change less
//! than weekly); host sizes are skewed; half the hosts send an honest Last-Modified, a fifth one that
//! is always "now", the rest none; 70% of pages have a sitemap `changefreq` that is the true rate
//! times log-normal noise (σ = 1) rounded to a changefreq word, and a tenth of hosts say "daily"
//! for everything.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp, LogNormal};

/// How a host fills in Last-Modified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LastModified {
    /// The time of the page's last change.
    Honest,
    /// The time of the request, every time (a dynamic page stamping "now").
    Now,
    /// No Last-Modified at all.
    Absent,
}

/// What shapes a world.
#[derive(Debug, Clone, PartialEq)]
pub struct WorldConfig {
    /// Number of pages.
    pub pages: usize,
    /// Number of hosts.
    pub hosts: usize,
    /// Simulated days (changes are generated on `[0, days]`).
    pub days: f64,
    /// Visits per page per day on average (the total budget is `budget × pages`).
    pub budget: f64,
    /// Fraction of pages announced in their host's feed.
    pub signals: f64,
    /// Median change rate per day.
    pub median_rate: f64,
    /// Spread of ln(rate).
    pub rate_sigma: f64,
    /// Entries a feed lists (its most recent changes).
    pub feed_capacity: usize,
    /// What a feed's entries are ([`FeedEntries`]).
    pub feed_entries: FeedEntries,
    /// Seed of everything random.
    pub seed: u64,
}

impl Default for WorldConfig {
    fn default() -> Self {
        Self {
            pages: 20_000,
            hosts: 100,
            days: 90.0,
            budget: 0.5,
            signals: 0.0,
            median_rate: 0.2,
            rate_sigma: 1.5,
            feed_capacity: 20,
            feed_entries: FeedEntries::EveryChange,
            seed: 1,
        }
    }
}

/// What a feed lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FeedEntries {
    /// Every change of its pages (a page that changed twice since the last poll is listed
    /// twice).
    #[default]
    EveryChange,
    /// Each page once, at its latest change (as most real feeds list an article with its
    /// `updated` time): a page that changed twice since the last poll shows one change.
    LatestChange,
    /// The pages of [`FeedEntries::LatestChange`], each dated with the time of the poll (a feed
    /// generated on request that dates every entry with its build time): every poll
    /// announces a change of each page it lists, most of which never happened.
    Redated,
}

/// One page: a reusable pure type (the demo serves the same pages over HTTP).
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// True changes per day.
    pub rate: f64,
    /// Index of its host.
    pub host: usize,
    /// Change times in days, increasing.
    pub changes: Vec<f64>,
    /// The sitemap's `changefreq` as changes per day, if the sitemap gives one.
    pub changefreq: Option<f64>,
    /// Whether the host's feed announces this page's changes.
    pub announced: bool,
}

impl Page {
    /// Index in `changes` of the first change strictly after `t`.
    pub fn next_change_index(&self, t: f64) -> usize {
        self.changes.partition_point(|&c| c <= t)
    }

    /// The first change strictly after `t`, or infinity.
    pub fn next_change_after(&self, t: f64) -> f64 {
        self.changes
            .get(self.next_change_index(t))
            .copied()
            .unwrap_or(f64::INFINITY)
    }

    /// The last change at or before `t` (`None`: unchanged since the world began).
    pub fn last_change_at(&self, t: f64) -> Option<f64> {
        self.next_change_index(t)
            .checked_sub(1)
            .map(|i| self.changes[i])
    }

    /// Whether the page changed in `(since, t]`.
    pub fn changed_between(&self, since: f64, t: f64) -> bool {
        self.last_change_at(t).is_some_and(|c| c > since)
    }
}

/// One host.
#[derive(Debug, Clone, PartialEq)]
pub struct Host {
    /// Visits per day it allows.
    pub limit_per_day: f64,
    /// How it fills in Last-Modified.
    pub last_modified: LastModified,
    /// Its feed: every announced change as `(time, page)`, in time order (empty: no feed).
    pub feed: Vec<(f64, usize)>,
}

impl Host {
    /// What a poll at `t` shows: the most recent `capacity` entries at or before `t`, oldest
    /// first; with [`FeedEntries::LatestChange`], the `capacity` pages that changed last, each
    /// at its latest change; with [`FeedEntries::Redated`], those pages at `t`.
    pub fn feed_at(&self, t: f64, capacity: usize, entries: FeedEntries) -> Vec<(f64, usize)> {
        let end = self.feed.partition_point(|&(c, _)| c <= t);
        match entries {
            FeedEntries::EveryChange => self.feed[end.saturating_sub(capacity)..end].to_vec(),
            FeedEntries::LatestChange => {
                let mut listed = std::collections::HashSet::new();
                let mut latest: Vec<(f64, usize)> = self.feed[..end]
                    .iter()
                    .rev()
                    .filter(|&&(_, page)| listed.insert(page))
                    .take(capacity)
                    .copied()
                    .collect();
                latest.reverse();
                latest
            }
            FeedEntries::Redated => {
                let mut listed = self.feed_at(t, capacity, FeedEntries::LatestChange);
                for entry in &mut listed {
                    entry.0 = t;
                }
                listed
            }
        }
    }
}

/// The whole simulated web.
#[derive(Debug, Clone, PartialEq)]
pub struct World {
    /// How it was made.
    pub config: WorldConfig,
    /// All pages.
    pub pages: Vec<Page>,
    /// All hosts.
    pub hosts: Vec<Host>,
}

/// Snaps a rate to the nearest sitemap changefreq word's rate (in log space).
fn snap_changefreq(rate: f64) -> f64 {
    const WORDS: [f64; 5] = [24.0, 1.0, 1.0 / 7.0, 1.0 / 30.0, 1.0 / 365.0];
    WORDS
        .into_iter()
        .min_by(|a, b| {
            (a.ln() - rate.ln())
                .abs()
                .total_cmp(&(b.ln() - rate.ln()).abs())
        })
        .unwrap_or(1.0)
}

impl World {
    /// Generates a world; the same config always gives the same world.
    pub fn generate(config: &WorldConfig) -> World {
        let mut rng = StdRng::seed_from_u64(config.seed);
        let hosts_n = config.hosts.max(1);
        let liar: Vec<bool> = (0..hosts_n).map(|_| rng.random_bool(0.1)).collect();
        let rate_dist = LogNormal::new(config.median_rate.ln(), config.rate_sigma.max(0.0))
            .unwrap_or_else(|_| LogNormal::new(0.0, 1.0).expect("valid"));
        let hint_noise = LogNormal::new(0.0, 1.0).expect("valid");
        let mut pages = Vec::with_capacity(config.pages);
        for _ in 0..config.pages {
            // Skewed host sizes: host = H u², so low-numbered hosts are big.
            let u: f64 = rng.random();
            let host = ((hosts_n as f64 * u * u) as usize).min(hosts_n - 1);
            let rate = rate_dist.sample(&mut rng).clamp(1e-3, 48.0);
            let gap = Exp::new(rate).expect("positive rate");
            let mut changes = Vec::new();
            let mut t = 0.0;
            loop {
                t += gap.sample(&mut rng);
                if t > config.days {
                    break;
                }
                changes.push(t);
            }
            let changefreq = if liar[host] {
                Some(1.0)
            } else if rng.random_bool(0.7) {
                Some(snap_changefreq(rate * hint_noise.sample(&mut rng)))
            } else {
                None
            };
            let announced = rng.random_bool(config.signals.clamp(0.0, 1.0));
            pages.push(Page {
                rate,
                host,
                changes,
                changefreq,
                announced,
            });
        }
        let mut sizes = vec![0usize; hosts_n];
        for p in &pages {
            sizes[p.host] += 1;
        }
        let hosts = (0..hosts_n)
            .map(|h| {
                // Most hosts allow twice their pages' share of the budget; a fifth are tight.
                let slack = if rng.random_bool(0.2) { 0.6 } else { 2.0 };
                let limit_per_day = (slack * sizes[h] as f64 * config.budget).max(1.0);
                let last_modified = match rng.random_range(0..10) {
                    0..5 => LastModified::Honest,
                    5..7 => LastModified::Now,
                    _ => LastModified::Absent,
                };
                Host {
                    limit_per_day,
                    last_modified,
                    feed: Vec::new(),
                }
            })
            .collect::<Vec<_>>();
        let mut world = World {
            config: config.clone(),
            pages,
            hosts,
        };
        for (i, p) in world.pages.iter().enumerate() {
            if p.announced {
                world.hosts[p.host]
                    .feed
                    .extend(p.changes.iter().map(|&c| (c, i)));
            }
        }
        for host in &mut world.hosts {
            host.feed.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        world
    }

    /// The Last-Modified a fetch of `page` at `t` returns, in days.
    pub fn last_modified(&self, page: usize, t: f64) -> Option<f64> {
        let p = &self.pages[page];
        match self.hosts[p.host].last_modified {
            // A page unchanged since the world began was last modified a year before it.
            LastModified::Honest => Some(p.last_change_at(t).unwrap_or(-365.0)),
            LastModified::Now => Some(t),
            LastModified::Absent => None,
        }
    }

    /// Whether a host publishes a feed.
    pub fn has_feed(&self, host: usize) -> bool {
        self.config.signals > 0.0 && self.pages.iter().any(|p| p.host == host && p.announced)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worlds_are_deterministic_and_feeds_are_windows() {
        let config = WorldConfig {
            pages: 300,
            hosts: 5,
            days: 20.0,
            signals: 0.3,
            ..Default::default()
        };
        let a = World::generate(&config);
        assert_eq!(a, World::generate(&config));
        let host = a
            .hosts
            .iter()
            .find(|h| h.feed.len() > 25)
            .expect("a busy feed");
        let window = host.feed_at(10.0, 20, FeedEntries::EveryChange);
        assert!(window.len() <= 20 && window.iter().all(|&(t, _)| t <= 10.0));
        let p = &a.pages[window[0].1];
        assert!(p.announced && p.changed_between(window[0].0 - 1e-9, window[0].0));
        // Each page once, at its latest change: no change after it up to the poll.
        let latest = host.feed_at(10.0, 20, FeedEntries::LatestChange);
        let pages: std::collections::HashSet<usize> = latest.iter().map(|&(_, p)| p).collect();
        assert_eq!(pages.len(), latest.len());
        assert!(latest.is_sorted_by(|a, b| a.0 <= b.0));
        for &(at, page) in &latest {
            assert_eq!(a.pages[page].last_change_at(10.0), Some(at));
        }
        // As many pages as it holds, or every page that changed by then.
        let changed: std::collections::HashSet<usize> = host
            .feed
            .iter()
            .filter(|&&(t, _)| t <= 10.0)
            .map(|&(_, p)| p)
            .collect();
        assert_eq!(latest.len(), changed.len().min(20));
        assert_eq!(snap_changefreq(0.9), 1.0);
        assert_eq!(snap_changefreq(0.2), 1.0 / 7.0);
    }
}
