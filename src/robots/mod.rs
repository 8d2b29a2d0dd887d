//! robots.txt per RFC 9309: parsing, matching, Crawl-delay and Sitemap lines (pure).
//!
//! [`Robots::parse`] reads one robots.txt body for one product token (`freshet`, not
//! `freshet/0.1`: a version after `/` is dropped) and answers [`Robots::is_allowed`] for URLs of
//! that host. The most specific (longest) matching rule wins, and Allow wins a tie (§2.2.2);
//! `/robots.txt` itself is always allowed. [`rules_for_status`] turns a fetch outcome into rules:
//! 2xx is parsed, 4xx allows all (the file is "unavailable", §2.3.1.3), and 5xx, 429, unfinished
//! redirects or an unreachable host disallow all and ask to retry later (§2.3.1.4).
//! Only the first [`MAX_ROBOTS_BYTES`] are read (§2.5), cut at a line end.
//!
//! Not here: fetching and caching per host (the refresher's job).

mod matcher;
mod parse;

use std::borrow::Cow;
use std::time::Duration;

use matcher::decode_as_served;
pub use matcher::{escape_pattern, matches, path_params_query};
pub use parse::{GroupMatch, Rule, is_token_char, product_token};

/// The part of a robots.txt body that is read: 500 KiB (RFC 9309 §2.5).
pub const MAX_ROBOTS_BYTES: usize = 500 * 1024;

/// What a robots.txt lets one agent do on one host.
#[derive(Debug, Clone)]
pub struct Robots {
    /// The verdict source: parsed rules, or a blanket answer from the fetch status.
    policy: Policy,
    /// Crawl-delay for our agent, if its groups give one.
    crawl_delay: Option<Duration>,
    /// `Sitemap:` lines (they apply to every agent).
    sitemaps: Vec<String>,
    /// Whether the fetch failed temporarily and robots.txt should be fetched again soon.
    retry_soon: bool,
}

/// How [`Robots::is_allowed`] decides.
#[derive(Debug, Clone)]
enum Policy {
    /// Rules of the applicable groups.
    Rules { rules: Vec<Rule>, group: GroupMatch },
    /// Everything allowed (4xx, or no robots.txt).
    AllowAll,
    /// Nothing allowed (5xx, unreachable).
    DisallowAll,
}

impl Robots {
    /// Parses a robots.txt body for `agent_token`. Never fails: junk lines are skipped. A UTF-8
    /// BOM is skipped, a UTF-16 body (with BOM) is decoded, invalid UTF-8 is replaced.
    pub fn parse(body: &[u8], agent_token: &str) -> Robots {
        let body = &body[..cut_at_line_end(body, MAX_ROBOTS_BYTES)];
        let text = decode(body);
        let token = valid_token(agent_token);
        let parsed = parse::parse_text(&text, token);
        Robots {
            policy: Policy::Rules {
                rules: parsed.rules,
                group: parsed.group,
            },
            crawl_delay: parsed.crawl_delay,
            sitemaps: parsed.sitemaps,
            retry_soon: false,
        }
    }

    /// Everything allowed: what a missing robots.txt (4xx) means.
    pub fn allow_all() -> Robots {
        Robots {
            policy: Policy::AllowAll,
            crawl_delay: None,
            sitemaps: Vec::new(),
            retry_soon: false,
        }
    }

    /// Nothing allowed: what a server error or an unreachable host means until the next try.
    pub fn disallow_all() -> Robots {
        Robots {
            policy: Policy::DisallowAll,
            crawl_delay: None,
            sitemaps: Vec::new(),
            retry_soon: true,
        }
    }

    /// Whether our agent may fetch `url` (absolute, or a path; percent-encoded as
    /// [`url::Url::as_str`] gives it).
    pub fn is_allowed(&self, url: &str) -> bool {
        self.disallowed_by(url).is_none()
    }

    /// Why our agent may not fetch `url`: the deciding rule as written in robots.txt
    /// (`Disallow: /private/`), or why everything is off limits; `None` when it may.
    pub fn disallowed_by(&self, url: &str) -> Option<String> {
        let rules = match &self.policy {
            Policy::AllowAll => return None,
            Policy::DisallowAll => {
                return Some(
                    "robots.txt could not be read (5xx, 429 or unreachable): everything is \
                     disallowed until it can"
                        .to_string(),
                );
            }
            Policy::Rules { rules, .. } => rules,
        };
        let path = path_params_query(url);
        if path == "/robots.txt" {
            return None;
        }
        let rules_as_written = rules.iter().map(|r| (r.pattern.as_str(), r));
        if let Some(rule) = deciding_disallow(&path, rules_as_written) {
            return Some(format!("Disallow: {}", rule.pattern));
        }
        // The same with escaped unreserved characters and slashes decoded (see the matcher's docs), when
        // that changes the path or a rule (no `%` anywhere: nothing to decode).
        if !path.contains('%') && !rules.iter().any(|r| r.pattern.contains('%')) {
            return None;
        }
        // (Where decoding changed nothing, this pass repeats the first one's answer.)
        let decoded_path = decode_as_served(&path);
        let decoded: Vec<(Cow<'_, str>, &Rule)> = rules
            .iter()
            .map(|r| (decode_as_served(&r.pattern), r))
            .collect();
        let decoded_rules = decoded.iter().map(|(pattern, r)| (pattern.as_ref(), *r));
        if let Some(rule) = deciding_disallow(&decoded_path, decoded_rules) {
            return Some(format!(
                "Disallow: {} (the path with its escaped letters, digits and slashes decoded, as a server \
                 reads it, is {decoded_path})",
                rule.pattern
            ));
        }
        None
    }

    /// Crawl-delay for our agent (a floor on the interval between requests to the host).
    pub fn crawl_delay(&self) -> Option<Duration> {
        self.crawl_delay
    }

    /// The `Sitemap:` URLs as written (absolute per the protocol; not validated here).
    pub fn sitemaps(&self) -> &[String] {
        &self.sitemaps
    }

    /// The `Sitemap:` URLs resolved against the robots.txt's own URL (a relative value such as
    /// `/sitemap.xml` is common though not allowed); values that are not http(s) URLs are dropped.
    pub fn sitemap_urls(&self, robots_url: &url::Url) -> Vec<url::Url> {
        self.sitemaps
            .iter()
            .filter_map(|s| robots_url.join(s.trim()).ok())
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .collect()
    }

    /// Which groups applied (`None` also for blanket allow/disallow).
    pub fn group_match(&self) -> GroupMatch {
        match &self.policy {
            Policy::Rules { group, .. } => *group,
            _ => GroupMatch::None,
        }
    }

    /// Whether these rules stand in for a failed fetch that should be retried soon (5xx, 429,
    /// unreachable): the refresher re-fetches robots.txt instead of caching this for long.
    pub fn retry_soon(&self) -> bool {
        self.retry_soon
    }
}

/// Rules from the outcome of fetching robots.txt: `status` after redirects (0 = unreachable:
/// DNS, connect or timeout), and the body. 2xx parses the body; 4xx except 429 allows all; 429,
/// 5xx, a 3xx left after the redirect limit, and anything else disallow all and ask to retry.
pub fn rules_for_status(status: u16, body: &[u8], agent_token: &str) -> Robots {
    match status {
        200..=299 => Robots::parse(body, agent_token),
        429 => Robots::disallow_all(),
        400..=499 => Robots::allow_all(),
        _ => Robots::disallow_all(),
    }
}

/// Rules from what the store kept of the last fetch: its `status` (`None`: unreachable, or a
/// body that broke off) and its body.
pub fn rules_for_stored(status: Option<i64>, body: &[u8], agent_token: &str) -> Robots {
    match status {
        Some(status) => rules_for_status(u16::try_from(status).unwrap_or(500), body, agent_token),
        None => Robots::disallow_all(),
    }
}

/// The product token to match, or `None` when `agent` holds none (only `*` groups then apply).
fn valid_token(agent: &str) -> Option<&str> {
    let token = agent.split('/').next().unwrap_or("").trim();
    let ok = !token.is_empty() && token.chars().all(parse::is_token_char);
    ok.then_some(token)
}

/// The length of the longest prefix of `body` within `limit` bytes that ends at a line end.
fn cut_at_line_end(body: &[u8], limit: usize) -> usize {
    if body.len() <= limit {
        return body.len();
    }
    body[..limit]
        .iter()
        .rposition(|&b| b == b'\n' || b == b'\r')
        .map_or(limit, |i| i + 1)
}

/// Body bytes to text: BOM-aware, lossy.
fn decode(body: &[u8]) -> std::borrow::Cow<'_, str> {
    match encoding_rs::Encoding::for_bom(body) {
        Some((enc, _)) => enc.decode_with_bom_removal(body).0,
        None => String::from_utf8_lossy(body),
    }
}

/// The rule that decides `path` (the longest pattern that matches it, Allow winning a tie), if
/// it is a Disallow; `rules` pairs each rule with the pattern to match.
fn deciding_disallow<'r>(
    path: &str,
    rules: impl Iterator<Item = (&'r str, &'r Rule)>,
) -> Option<&'r Rule> {
    let mut best: Option<(usize, &Rule)> = None;
    for (pattern, rule) in rules {
        if !matches(path.as_bytes(), pattern.as_bytes()) {
            continue;
        }
        let better = match best {
            None => true,
            Some((len, b)) => {
                pattern.len() > len || (pattern.len() == len && rule.allow && !b.allow)
            }
        };
        if better {
            best = Some((pattern.len(), rule));
        }
    }
    best.map(|(_, rule)| rule).filter(|r| !r.allow)
}

#[cfg(test)]
mod tests;
