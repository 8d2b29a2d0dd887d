//! A validated site: the typed values one `[[site]]` table turns into, and the questions the
//! refresher asks of it (does this URL belong, may we fetch now, which query parameters go).

use std::collections::BTreeSet;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use regex::Regex;
use url::Url;

use super::units::HostRate;

/// Defaults for keys a `[[site]]` may leave out.
pub mod defaults {
    use std::num::NonZeroU32;
    use std::time::Duration;

    use super::HostRate;

    /// `weight`: every site counts the same unless told otherwise.
    pub const WEIGHT: f64 = 1.0;
    /// `requests_per_day`: one request every ~9 seconds on average.
    pub const REQUESTS_PER_DAY: f64 = 10_000.0;
    /// `host_rate`: at most one request per second per host (`"1/s"`).
    pub const HOST_RATE: HostRate = HostRate {
        requests: 1.0,
        per: Duration::from_secs(1),
    };
    /// `rediscover`: re-read sitemaps and feeds every six hours.
    pub const REDISCOVER: &str = "0 0 */6 * * *";
    /// `max_body`: larger responses are cut off and recorded as too large (`"10MB"`).
    pub const MAX_BODY: u64 = 10_000_000;
    /// `timeout`: total time for one request (`"30s"`).
    pub const TIMEOUT: Duration = Duration::from_secs(30);
    /// `concurrency`: requests in flight per host.
    pub const CONCURRENCY: NonZeroU32 = NonZeroU32::MIN;
}

/// How pages of a site are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    /// Conditional GET (If-None-Match / If-Modified-Since), the safe default.
    #[default]
    Get,
    /// HEAD, comparing Last-Modified, and a GET only when it moved: for hosts whose
    /// Last-Modified is good but who ignore conditional requests.
    Head,
}

/// Which changes of a page count: the ones the estimator learns the rate of, and so the ones
/// the budget chases. Both are recorded on every check either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChangeSignal {
    /// A change of the extracted main text (ads, counters, tokens, "updated N minutes ago"
    /// lines and navigation do not count): the default.
    #[default]
    Content,
    /// Any change of the decoded body, noise included.
    Bytes,
}

impl ChangeSignal {
    /// The schedule-file spelling: `content` or `bytes`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeSignal::Content => "content",
            ChangeSignal::Bytes => "bytes",
        }
    }
}

/// When fetching is allowed: windows that open at each time a cron expression fires and stay
/// open for `length`. Outside every window nothing of the site is fetched.
#[derive(Debug, Clone)]
pub struct Window {
    /// When windows open (UTC).
    pub starts: Vec<cron::Schedule>,
    /// How long each window stays open.
    pub length: Duration,
}

impl Window {
    /// True if `at` lies in a window: some start `t` with `t <= at < t + length`.
    pub fn allows(&self, at: DateTime<Utc>) -> bool {
        let Ok(length) = TimeDelta::from_std(self.length) else {
            return true;
        };
        let Some(opened_after) = at.checked_sub_signed(length) else {
            return true;
        };
        // `after` is exclusive, which makes the window half-open at its end.
        self.starts.iter().any(|start| {
            start
                .after(&opened_after)
                .next()
                .is_some_and(|opened| opened <= at)
        })
    }

    /// The first instant at or after `at` when fetching is allowed (`at` itself if a window is
    /// open); `None` if no window ever opens again.
    pub fn next_open(&self, at: DateTime<Utc>) -> Option<DateTime<Utc>> {
        if self.allows(at) {
            return Some(at);
        }
        self.starts
            .iter()
            .filter_map(|start| start.after(&at).next())
            .min()
    }
}

/// One site of a schedule file, validated. Built only by [`super::load`] and
/// [`super::parse_str`], so every value here has been checked.
#[derive(Debug, Clone)]
pub struct Site {
    /// Unique name across all schedule files (letters, digits, `.`, `_`, `-`).
    pub name: String,
    /// Sitemaps (or sitemap indexes) to read; robots.txt `Sitemap:` lines add more.
    pub sitemaps: Vec<Url>,
    /// RSS / Atom / JSON feeds: their entries give URLs and exact change times.
    pub feeds: Vec<Url>,
    /// Plain start URLs, kept fresh themselves and crawled for links.
    pub seeds: Vec<Url>,
    /// A discovered URL belongs to the site only if one of these matches (all, when empty).
    /// Unanchored: a match anywhere in the URL counts. The listed sitemaps, feeds and seeds are
    /// read whatever the patterns say.
    pub include: Vec<Regex>,
    /// A URL matching any of these never belongs to the site, even if included.
    pub exclude: Vec<Regex>,
    /// Importance relative to other sites (> 0): scales every page's weight in the plan.
    pub weight: f64,
    /// This site's share of the fetch budget, in requests per day (> 0).
    pub requests_per_day: f64,
    /// Politeness: the most any one host of this site is asked (Crawl-delay may lower it).
    pub host_rate: HostRate,
    /// When sitemaps and feeds are re-read (UTC).
    pub rediscover: cron::Schedule,
    /// When fetching is allowed at all; `None` means always.
    pub window: Option<Window>,
    /// User-Agent header for this site; `None` uses freshet's default.
    pub user_agent: Option<String>,
    /// How pages are checked.
    pub method: Method,
    /// Which changes feed the estimator: main content (default) or bytes.
    pub change_signal: ChangeSignal,
    /// Largest response body kept, in decompressed bytes.
    pub max_body: u64,
    /// Total time allowed for one request.
    pub timeout: Duration,
    /// Requests in flight per host.
    pub concurrency: NonZeroU32,
    /// Query parameters removed from discovered URLs (session ids, trackers). A trailing `*`
    /// matches any parameter starting with what comes before it (`utm_*`).
    pub drop_params: Vec<String>,
    /// `allow_networks`: special-purpose address ranges (loopback, private, link-local, ...)
    /// this site may connect to; by default only public addresses are (an intranet or a test
    /// server on 127.0.0.1 must be named here, e.g. `["127.0.0.0/8", "::1/128"]`).
    pub allow_networks: Vec<crate::fetch::Cidr>,
    /// The schedule file this site came from.
    pub source: PathBuf,
    /// The line of its `[[site]]` header in that file.
    pub line: usize,
}

impl Site {
    /// True if `url` belongs to this site by its include / exclude patterns.
    pub fn matches(&self, url: &str) -> bool {
        (self.include.is_empty() || self.include.iter().any(|re| re.is_match(url)))
            && !self.exclude.iter().any(|re| re.is_match(url))
    }

    /// Whether the site has `include` or `exclude` patterns.
    pub fn has_url_filters(&self) -> bool {
        !self.include.is_empty() || !self.exclude.is_empty()
    }

    /// Why the site's filters refuse `url`, or `None` when they keep it: a scheme other than
    /// http(s), the exclude pattern it matches, or the include patterns it matches none of.
    pub fn refused_by(&self, url: &Url) -> Option<String> {
        if !matches!(url.scheme(), "http" | "https") {
            return Some(format!("scheme {}: only http and https", url.scheme()));
        }
        if let Some(re) = self.exclude.iter().find(|re| re.is_match(url.as_str())) {
            return Some(format!("exclude = '{}'", re.as_str()));
        }
        if !self.include.is_empty() && !self.include.iter().any(|re| re.is_match(url.as_str())) {
            let patterns: Vec<String> = self
                .include
                .iter()
                .map(|re| format!("'{}'", re.as_str()))
                .collect();
            return Some(format!(
                "matches no include pattern ({})",
                patterns.join(", ")
            ));
        }
        None
    }

    /// True if fetching is allowed at `at` (always, without a `window`).
    pub fn fetch_allowed(&self, at: DateTime<Utc>) -> bool {
        self.window.as_ref().is_none_or(|window| window.allows(at))
    }

    /// When fetching may resume, if it is not allowed at `at`: the window's next opening (clock
    /// ms), or an hour after `at` if it never opens again; `None` while it is allowed.
    pub fn fetch_resumes_ms(&self, at: DateTime<Utc>) -> Option<i64> {
        if self.fetch_allowed(at) {
            return None;
        }
        let open = self.window.as_ref().and_then(|w| w.next_open(at));
        Some(open.map_or(at.timestamp_millis() + 3_600_000, |t| t.timestamp_millis()))
    }

    /// What of this site's schedule will never happen again after `at` (a `window` or
    /// `rediscover` cron whose firings all lie in the past, such as one with a past year),
    /// each as a sentence for a warning: such a site is never fetched, or never re-read.
    pub fn stopped_for_good(&self, at: DateTime<Utc>) -> Vec<String> {
        let mut stopped = Vec::new();
        let at_site = format!("{}:{}", self.source.display(), self.line);
        if let Some(window) = &self.window
            && window.next_open(at).is_none()
        {
            stopped.push(format!(
                "{at_site}: window: site `{}`: its window never opens again: none of its pages will be fetched",
                self.name
            ));
        }
        if self.next_rediscover(at).is_none() {
            stopped.push(format!(
                "{at_site}: rediscover: site `{}`: its rediscover cron never fires again: its sitemaps and feeds will not be read again",
                self.name
            ));
        }
        stopped
    }

    /// When sitemaps and feeds should next be re-read after `after`.
    pub fn next_rediscover(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.rediscover.after(&after).next()
    }

    /// The origins (`scheme://host[:port]`) named by this site's sitemaps, feeds and seeds.
    pub fn origins(&self) -> BTreeSet<String> {
        self.sitemaps
            .iter()
            .chain(&self.feeds)
            .chain(&self.seeds)
            .map(|url| url.origin().ascii_serialization())
            .collect()
    }

    /// True if the query parameter `name` is one of `drop_params`.
    pub fn drops_param(&self, name: &str) -> bool {
        self.drop_params
            .iter()
            .any(|pattern| match pattern.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => name == pattern,
            })
    }

    /// `url` without the parameters named by `drop_params`: query parameters (dropping the `?`
    /// when none are left) and `;name=value` path parameters (Java's `;jsessionid=`). What is
    /// kept keeps its order and its exact encoding.
    pub fn strip_params(&self, url: &Url) -> Url {
        let mut out = url.clone();
        if self.drop_params.is_empty() {
            return out;
        }
        let name_of = |piece: &str| {
            url::form_urlencoded::parse(piece.as_bytes())
                .next()
                .map(|(name, _)| name.into_owned())
                .unwrap_or_default()
        };
        if let Some(query) = url.query() {
            let kept: Vec<&str> = query
                .split('&')
                .filter(|piece| !piece.is_empty() && !self.drops_param(&name_of(piece)))
                .collect();
            out.set_query((!kept.is_empty()).then(|| kept.join("&")).as_deref());
        }
        if url.path().contains(';') {
            let path: Vec<String> = url
                .path()
                .split('/')
                .map(|segment| {
                    let mut parts = segment.split(';');
                    let mut kept = vec![parts.next().unwrap_or_default()];
                    kept.extend(parts.filter(|param| !self.drops_param(&name_of(param))));
                    kept.join(";")
                })
                .collect();
            out.set_path(&path.join("/"));
        }
        out
    }
}
