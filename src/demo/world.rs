//! The demo's world: virtual hosts, their pages, and every page's change times (pure).
//!
//! A [`World`] is generated once from a seed ([`WorldConfig`]) and never changes afterwards: it
//! knows when every page changed in the past and will change in the future, so the demo can
//! compute the *true* age of freshet's copies. Each page's changes are a Poisson process with its
//! own rate λ (changes per day), drawn log-normal around a host-specific median ([`RATE_SIGMA`]) and clamped to
//! [1/30, 8] per day ("from several per day to one per month"). Changes are generated from
//! `origin - history` (pages have a past, so feeds and Last-Modified mean something at the start)
//! to `origin + horizon`; after the horizon a page no longer changes.
//!
//! The version of a page at time t is the number of its changes at or before t; its body is a pure
//! function of (page, version) (see [`super::render`]).
//!
//! The hosts (all under the reserved `.test` TLD, resolved to loopback by the client):
//! - `news.freshet.test`: fast-changing articles, an RSS feed, robots.txt with `Disallow: /private/`
//!   and a `Crawl-delay`, a 301 chain and two 302s to one target.
//! - `blog.freshet.test`: posts, an Atom feed.
//! - `docs.freshet.test`: slow-changing pages, an RSS feed.
//! - `shop.freshet.test`: the liar: `Last-Modified` is "now" on every response, its sitemap
//!   `lastmod` is stale and its `changefreq` hints are random; its feed is honest.
//! - `live.freshet.test`: noise-only pages. Their article text changes rarely (a month apart, the
//!   slowest rate), but every response carries noise that changes all the time: an ad block, a
//!   "readers online" counter and a CSRF token that change every [`Page::noise_period_ms`], and an
//!   "updated N minutes ago" line (see [`super::render::page_html`]). Like any dynamic page's,
//!   its ETag is a hash of the body (it changes with the noise) and its Last-Modified the last
//!   change of the article. Its feed lists none of them: what freshet learns of them comes from
//!   its own checks.
//! - `mirror.freshet.test`: serves the same pages as `docs` (same paths, same article text).
//!
//! A page's `changes` are changes of its *content*: noise is a pure function of the time
//! ([`Page::noise_at`]), never a change, so the demo's truth (the age of the content) is the
//! same whatever a refresher makes of the noise.

use std::collections::HashMap;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp, LogNormal};

use crate::clock::MS_PER_DAY;

/// 2026-01-01T00:00:00Z, the default origin of the demo's virtual clock.
pub const DEMO_ORIGIN_MS: i64 = 1_767_225_600_000;

/// Spread of log(rate) around the host's median: pages of one host differ a lot, as on the web
/// (one standard deviation is a factor of 3).
pub const RATE_SIGMA: f64 = 1.1;

/// Lowest change rate a page may have (once a month), per day.
pub const MIN_RATE_PER_DAY: f64 = 1.0 / 30.0;
/// Highest change rate a page may have, per day.
pub const MAX_RATE_PER_DAY: f64 = 8.0;

/// How a world is generated.
#[derive(Debug, Clone)]
pub struct WorldConfig {
    /// Seed of every random choice: the same config gives the same world.
    pub seed: u64,
    /// The virtual clock's origin (the demo starts here).
    pub origin_ms: i64,
    /// Days of change history before the origin.
    pub history_days: f64,
    /// Days of changes generated after the origin (the demo must not run longer).
    pub horizon_days: f64,
    /// Multiplies every host's page count (1.0 = 136 distinct pages).
    pub scale: f64,
}

impl Default for WorldConfig {
    fn default() -> Self {
        Self {
            seed: 1,
            origin_ms: DEMO_ORIGIN_MS,
            history_days: 30.0,
            horizon_days: 10.0,
            scale: 1.0,
        }
    }
}

/// The syndication format of a host's feed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedFormat {
    /// RSS 2.0 with `pubDate`.
    Rss,
    /// Atom with `updated`.
    Atom,
}

/// A sitemap `changefreq` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Changefreq {
    /// `hourly` (24 per day).
    Hourly,
    /// `daily`.
    Daily,
    /// `weekly`.
    Weekly,
    /// `monthly`.
    Monthly,
    /// `yearly`.
    Yearly,
}

impl Changefreq {
    const ALL: [Changefreq; 5] = [
        Self::Hourly,
        Self::Daily,
        Self::Weekly,
        Self::Monthly,
        Self::Yearly,
    ];

    /// The sitemap protocol's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Hourly => "hourly",
            Self::Daily => "daily",
            Self::Weekly => "weekly",
            Self::Monthly => "monthly",
            Self::Yearly => "yearly",
        }
    }

    /// The rate it stands for, per day (DESIGN.md's mapping).
    pub fn per_day(self) -> f64 {
        match self {
            Self::Hourly => 24.0,
            Self::Daily => 1.0,
            Self::Weekly => 1.0 / 7.0,
            Self::Monthly => 1.0 / 30.0,
            Self::Yearly => 1.0 / 365.0,
        }
    }

    /// The value whose rate is closest to `rate_per_day` on a log scale.
    pub fn nearest(rate_per_day: f64) -> Self {
        let target = rate_per_day.max(1e-9).ln();
        Self::ALL
            .into_iter()
            .min_by(|a, b| {
                let da = (a.per_day().ln() - target).abs();
                let db = (b.per_day().ln() - target).abs();
                da.total_cmp(&db)
            })
            .unwrap_or(Self::Daily)
    }
}

/// A redirect served by a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The path that redirects.
    pub from: String,
    /// 301 (permanent) or 302 (temporary).
    pub status: u16,
    /// The path it redirects to, on the same host.
    pub to: String,
}

/// One virtual host.
#[derive(Debug, Clone)]
pub struct Host {
    /// Host name, e.g. `news.freshet.test` (no port).
    pub name: String,
    /// Ids of the pages it serves (a mirror serves its original's pages).
    pub pages: Vec<usize>,
    /// The host this one mirrors, if it is a mirror.
    pub mirror_of: Option<usize>,
    /// Whether `Last-Modified` is "now" on every response and the sitemap `lastmod` is stale.
    pub lies: bool,
    /// The `Crawl-delay` in seconds its robots.txt announces, if any.
    pub crawl_delay_s: Option<u32>,
    /// A path under a robots.txt `Disallow` that the host links to (must never be requested).
    pub private_path: Option<String>,
    /// The format of its `/feed.xml`.
    pub feed: FeedFormat,
    /// Redirects it serves.
    pub redirects: Vec<Redirect>,
    /// Page id by path, for routing.
    by_path: HashMap<String, usize>,
}

impl Host {
    /// The page served at `path`, if any.
    pub fn page_at(&self, path: &str) -> Option<usize> {
        self.by_path.get(path).copied()
    }

    /// The path prefix its robots.txt disallows (`/private/`), if any: the private page's folder.
    pub fn disallowed_prefix(&self) -> Option<String> {
        let private = self.private_path.as_deref()?;
        let folder = private.rsplit_once('/').map_or("", |(folder, _)| folder);
        Some(format!("{folder}/"))
    }

    /// The redirect served at `path`, if any.
    pub fn redirect_at(&self, path: &str) -> Option<&Redirect> {
        self.redirects.iter().find(|r| r.from == path)
    }
}

/// One page (one content; a mirror serves the same page under another host).
#[derive(Debug, Clone)]
pub struct Page {
    /// Index in [`World::pages`].
    pub id: usize,
    /// Index of the host that owns it (not the mirror).
    pub home: usize,
    /// URL path, e.g. `/news/17-harbour-lights`.
    pub path: String,
    /// Title (stable across versions).
    pub title: String,
    /// The true change rate λ, per day.
    pub rate_per_day: f64,
    /// When the page appeared (version 0).
    pub created_ms: i64,
    /// Change times, ascending; version v starts at `changes[v - 1]`.
    pub changes: Vec<i64>,
    /// Whether the host's feed announces its changes.
    pub in_feed: bool,
    /// The sitemap's `changefreq` hint (noisy; random on the liar).
    pub changefreq: Changefreq,
    /// The sitemap's `priority`.
    pub priority: f64,
    /// Other pages of the same host it links to (stable across versions).
    pub links: Vec<usize>,
    /// For a noise-only page: how often its noise (ads, counter, token) changes, clock ms.
    pub noise_period_ms: Option<i64>,
}

impl Page {
    /// Number of changes at or before `t_ms`: the version served at that time.
    pub fn version_at(&self, t_ms: i64) -> usize {
        self.changes.partition_point(|&c| c <= t_ms)
    }

    /// The noise epoch served at `t_ms` (None for a page without noise): it changes every
    /// [`Page::noise_period_ms`], and is no change of the content.
    pub fn noise_at(&self, t_ms: i64) -> Option<u64> {
        let period = self.noise_period_ms?.max(1);
        Some((t_ms - self.created_ms).div_euclid(period) as u64)
    }

    /// When the version served at `t_ms` began (its true Last-Modified).
    pub fn last_change_at(&self, t_ms: i64) -> i64 {
        match self.version_at(t_ms) {
            0 => self.created_ms,
            v => self.changes[v - 1],
        }
    }
}

/// The whole synthetic web.
#[derive(Debug, Clone)]
pub struct World {
    /// The config it was generated from.
    pub config: WorldConfig,
    /// The hosts; mirrors after the hosts they mirror.
    pub hosts: Vec<Host>,
    /// Every distinct page.
    pub pages: Vec<Page>,
}

/// What distinguishes one generated host from another.
struct HostSpec {
    name: &'static str,
    section: &'static str,
    pages: usize,
    median_rate: f64,
    feed_share: f64,
    feed: FeedFormat,
    lies: bool,
    /// Pages carry noise that changes every this many minutes (a range), or none.
    noise_minutes: Option<(i64, i64)>,
}

const HOSTS: [HostSpec; 5] = [
    HostSpec {
        name: "news.freshet.test",
        section: "news",
        pages: 40,
        median_rate: 3.0,
        feed_share: 0.8,
        feed: FeedFormat::Rss,
        lies: false,
        noise_minutes: None,
    },
    HostSpec {
        name: "blog.freshet.test",
        section: "posts",
        pages: 24,
        median_rate: 0.7,
        feed_share: 0.6,
        feed: FeedFormat::Atom,
        lies: false,
        noise_minutes: None,
    },
    HostSpec {
        name: "docs.freshet.test",
        section: "docs",
        pages: 24,
        median_rate: 0.15,
        feed_share: 0.4,
        feed: FeedFormat::Rss,
        lies: false,
        noise_minutes: None,
    },
    HostSpec {
        name: "shop.freshet.test",
        section: "items",
        pages: 32,
        median_rate: 1.0,
        feed_share: 0.5,
        feed: FeedFormat::Atom,
        lies: true,
        noise_minutes: None,
    },
    HostSpec {
        name: "live.freshet.test",
        section: "live",
        pages: 16,
        median_rate: MIN_RATE_PER_DAY,
        feed_share: 0.0,
        feed: FeedFormat::Rss,
        lies: false,
        noise_minutes: Some((20, 60)),
    },
];

/// Name of the host whose pages change only in their noise (but for rare edits).
pub const NOISE_HOST: &str = "live.freshet.test";

/// Name of the host that mirrors `docs`.
pub const MIRROR_HOST: &str = "mirror.freshet.test";
/// The robots.txt `Crawl-delay` of `news`, in seconds.
pub const NEWS_CRAWL_DELAY_S: u32 = 120;

const WORDS: [&str; 24] = [
    "harbour", "lights", "river", "market", "winter", "garden", "station", "bridge", "council",
    "festival", "orchard", "library", "tide", "quarry", "meadow", "signal", "lantern", "ferry",
    "copper", "valley", "beacon", "thistle", "granite", "willow",
];

impl World {
    /// Generates the world for `config` (deterministic).
    pub fn generate(config: &WorldConfig) -> World {
        let mut rng = StdRng::seed_from_u64(config.seed);
        let start =
            (config.origin_ms - (config.history_days * MS_PER_DAY) as i64).div_euclid(1000) * 1000;
        let end = config.origin_ms + (config.horizon_days * MS_PER_DAY) as i64;
        let mut hosts = Vec::new();
        let mut pages: Vec<Page> = Vec::new();
        for (h, spec) in HOSTS.iter().enumerate() {
            let count = ((spec.pages as f64 * config.scale).round() as usize).max(3);
            let first = pages.len();
            let spread =
                LogNormal::new(spec.median_rate.ln(), RATE_SIGMA).expect("finite parameters");
            for i in 0..count {
                let rate = spread
                    .sample(&mut rng)
                    .clamp(MIN_RATE_PER_DAY, MAX_RATE_PER_DAY);
                let slug = format!(
                    "{}-{}",
                    WORDS[rng.random_range(0..WORDS.len())],
                    WORDS[rng.random_range(0..WORDS.len())]
                );
                let changefreq = if spec.lies {
                    Changefreq::ALL[rng.random_range(0..Changefreq::ALL.len())]
                } else {
                    // An honest but rough hint: the true rate off by up to ~3x either way.
                    Changefreq::nearest(rate * (rng.random_range(-1.1..1.1_f64)).exp())
                };
                let links = (0..3)
                    .map(|_| first + rng.random_range(0..count))
                    .filter(|&p| p != first + i)
                    .collect();
                pages.push(Page {
                    id: first + i,
                    home: h,
                    path: format!("/{}/{}-{}", spec.section, i, slug),
                    title: title_case(&slug),
                    rate_per_day: rate,
                    created_ms: start,
                    changes: poisson_times(&mut rng, rate, start, end),
                    in_feed: rng.random_bool(spec.feed_share),
                    changefreq,
                    priority: (rng.random_range(1..=10) as f64) / 10.0,
                    links,
                    noise_period_ms: spec
                        .noise_minutes
                        .map(|(lo, hi)| rng.random_range(lo..=hi) * 60_000),
                });
            }
            hosts.push(Host {
                name: spec.name.to_string(),
                pages: (first..pages.len()).collect(),
                mirror_of: None,
                lies: spec.lies,
                crawl_delay_s: None,
                private_path: None,
                feed: spec.feed,
                redirects: Vec::new(),
                by_path: HashMap::new(),
            });
        }
        let news = &mut hosts[0];
        news.crawl_delay_s = Some(NEWS_CRAWL_DELAY_S);
        news.private_path = Some("/private/drafts".to_string());
        let (first, second) = (news.pages[0], news.pages[1]);
        news.redirects = vec![
            redirect("/old/front", 301, "/moved/front"),
            redirect("/moved/front", 301, &pages[first].path),
            redirect("/go/1", 302, &pages[second].path),
            redirect("/go/2", 302, &pages[second].path),
        ];
        let docs = 2;
        let mut mirror = hosts[docs].clone();
        mirror.name = MIRROR_HOST.to_string();
        mirror.mirror_of = Some(docs);
        hosts.push(mirror);
        for host in &mut hosts {
            host.by_path = host
                .pages
                .iter()
                .map(|&p| (pages[p].path.clone(), p))
                .collect();
        }
        World {
            config: config.clone(),
            hosts,
            pages,
        }
    }

    /// The host called `name` (without port), with its index.
    pub fn host(&self, name: &str) -> Option<(usize, &Host)> {
        self.hosts
            .iter()
            .enumerate()
            .find(|(_, h)| h.name.eq_ignore_ascii_case(name))
    }

    /// Every host name (what the client resolves to loopback).
    pub fn host_names(&self) -> Vec<String> {
        self.hosts.iter().map(|h| h.name.clone()).collect()
    }

    /// The host that owns the pages `host` serves: itself, or the original of a mirror.
    pub fn site_of(&self, host: usize) -> usize {
        self.hosts[host].mirror_of.unwrap_or(host)
    }

    /// The page a URL (`http://host:port/path`) serves, if it is one of the world's pages.
    pub fn page_for_url(&self, url: &str) -> Option<usize> {
        let url = url::Url::parse(url).ok()?;
        let (_, host) = self.host(url.host_str()?)?;
        host.page_at(url.path())
    }

    /// The last moment changes were generated for; the demo must end before it.
    pub fn horizon_ms(&self) -> i64 {
        self.config.origin_ms + (self.config.horizon_days * MS_PER_DAY) as i64
    }
}

fn redirect(from: &str, status: u16, to: &str) -> Redirect {
    Redirect {
        from: from.to_string(),
        status,
        to: to.to_string(),
    }
}

/// Arrival times of a Poisson process with `rate_per_day` in (start, end], truncated to whole
/// seconds (HTTP dates, sitemap lastmod and feed times have second precision, so the world's
/// announcements are exact).
fn poisson_times(rng: &mut StdRng, rate_per_day: f64, start: i64, end: i64) -> Vec<i64> {
    let gap = Exp::new(rate_per_day / MS_PER_DAY).expect("positive rate");
    let mut times = Vec::new();
    let mut t = start as f64;
    loop {
        t += gap.sample(rng).max(1.0);
        if t > end as f64 {
            times.dedup();
            return times;
        }
        times.push((t as i64).div_euclid(1000) * 1000);
    }
}

fn title_case(slug: &str) -> String {
    slug.split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_world() {
        let a = World::generate(&WorldConfig::default());
        let b = World::generate(&WorldConfig::default());
        assert_eq!(a.pages.len(), b.pages.len());
        for (x, y) in a.pages.iter().zip(&b.pages) {
            assert_eq!(x.changes, y.changes);
            assert!(x.changes.iter().all(|c| c % 1000 == 0));
            assert!(x.changes.windows(2).all(|w| w[0] < w[1]));
            assert_eq!(x.path, y.path);
        }
        let c = World::generate(&WorldConfig {
            seed: 2,
            ..WorldConfig::default()
        });
        assert_ne!(a.pages[0].changes, c.pages[0].changes);
    }

    #[test]
    fn rates_are_varied_and_change_counts_follow_them() {
        let world = World::generate(&WorldConfig::default());
        let rates: Vec<f64> = world.pages.iter().map(|p| p.rate_per_day).collect();
        let max = rates.iter().cloned().fold(0.0, f64::max);
        let min = rates.iter().cloned().fold(f64::INFINITY, f64::min);
        assert!(max > 3.0 && min < 0.1, "rates {min}..{max}");
        let days = world.config.history_days + world.config.horizon_days;
        let expected: f64 = rates.iter().map(|r| r * days).sum();
        let seen: usize = world.pages.iter().map(|p| p.changes.len()).sum();
        let rel = (seen as f64 - expected).abs() / expected;
        assert!(rel < 0.1, "{seen} changes, expected {expected}");
    }

    #[test]
    fn version_counts_changes_at_or_before() {
        let world = World::generate(&WorldConfig::default());
        let page = world.pages.iter().find(|p| p.changes.len() > 2).unwrap();
        let c = page.changes[1];
        assert_eq!(page.version_at(c - 1), 1);
        assert_eq!(page.version_at(c), 2);
        assert_eq!(page.last_change_at(c + 5), c);
        assert_eq!(page.last_change_at(page.created_ms), page.created_ms);
    }

    #[test]
    fn mirror_serves_the_docs_pages_and_urls_resolve() {
        let world = World::generate(&WorldConfig::default());
        assert_eq!(
            world.hosts[0].disallowed_prefix().as_deref(),
            Some("/private/")
        );
        assert_eq!(world.hosts[1].disallowed_prefix(), None);
        let (m, mirror) = world.host(MIRROR_HOST).unwrap();
        let (d, docs) = world.host("docs.freshet.test").unwrap();
        assert_eq!(mirror.pages, docs.pages);
        assert_eq!(world.site_of(m), d);
        let page = &world.pages[docs.pages[3]];
        let url = format!("http://{MIRROR_HOST}:8080{}", page.path);
        assert_eq!(world.page_for_url(&url), Some(page.id));
        assert_eq!(world.page_for_url("http://nowhere.test/x"), None);
    }

    #[test]
    fn changefreq_nearest() {
        assert_eq!(Changefreq::nearest(20.0), Changefreq::Hourly);
        assert_eq!(Changefreq::nearest(0.9), Changefreq::Daily);
        assert_eq!(Changefreq::nearest(0.1), Changefreq::Weekly);
        assert_eq!(Changefreq::nearest(0.02), Changefreq::Monthly);
    }
}
