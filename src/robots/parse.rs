//! Reading robots.txt text into the rules of one agent (RFC 9309 §2.1, §2.2).
//!
//! Lines end at LF, CR or CRLF; `#` starts a comment; keys are case-insensitive and a few common
//! misspellings are accepted (as Google and crawler-commons do). A missing colon is tolerated when
//! key and value are separated by white space. Consecutive `User-agent` lines open a group; an
//! `Allow` or `Disallow` line closes the run of agents, so the next `User-agent` opens a new group.
//! `Sitemap` lines and unknown lines never end a group (§2.2.4). Groups naming our product token
//! are merged; if none does, the `*` groups are merged; if there is none either, all is allowed.
//!
//! `Crawl-delay` is not in RFC 9309: it applies to the agents named *before* it in its group (the
//! first value wins), which is what crawler-commons does and what robots.txt authors expect.

use std::time::Duration;

use super::matcher::escape_pattern;

/// One Allow or Disallow rule of the chosen groups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Escaped pattern (see [`escape_pattern`]); its length in octets is the rule's priority.
    pub pattern: String,
    /// Allow (true) or Disallow (false).
    pub allow: bool,
}

/// Which groups of a robots.txt apply to our agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GroupMatch {
    /// One or more groups name our product token.
    Specific,
    /// Only `User-agent: *` groups apply.
    Global,
    /// No group applies: everything is allowed.
    None,
}

/// What one robots.txt says to one agent.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// Rules of the applicable groups, in file order.
    pub rules: Vec<Rule>,
    /// Crawl-delay of the applicable groups.
    pub crawl_delay: Option<Duration>,
    /// Every `Sitemap:` value, in file order, without duplicates.
    pub sitemaps: Vec<String>,
    /// Which groups applied.
    pub group: GroupMatch,
}

/// Rules of one kind of group (ours or `*`) collected while reading.
#[derive(Default)]
struct Collected {
    rules: Vec<Rule>,
    delay: Option<Duration>,
    seen: bool,
}

/// Reads robots.txt `text` for `token`; `None` means "no valid product token: only `*` applies".
pub fn parse_text(text: &str, token: Option<&str>) -> Parsed {
    let mut specific = Collected::default();
    let mut global = Collected::default();
    let mut sitemaps: Vec<String> = Vec::new();
    // State of the current group: whether it names us / `*`, and whether a rule closed its agents.
    let (mut in_specific, mut in_global, mut closed) = (false, false, false);

    for raw in text.split(['\n', '\r']) {
        let Some((key, value)) = split_line(raw) else {
            continue;
        };
        match key {
            Key::UserAgent => {
                if closed {
                    (in_specific, in_global, closed) = (false, false, false);
                }
                if value == "*" || value.starts_with("* ") || value.starts_with("*\t") {
                    in_global = true;
                    global.seen = true;
                } else if token.is_some_and(|t| names_token(value, t)) {
                    in_specific = true;
                    specific.seen = true;
                }
            }
            Key::Allow | Key::Disallow => {
                if !(in_specific || in_global) {
                    // A rule outside any group we follow (or before any User-agent) is ignored,
                    // but it still closes the current run of agents.
                    closed = true;
                    continue;
                }
                closed = true;
                // An empty Disallow allows everything: it is no rule at all.
                if value.is_empty() {
                    continue;
                }
                let rule = Rule {
                    pattern: escape_pattern(value),
                    allow: key == Key::Allow,
                };
                for (inside, group) in [(in_specific, &mut specific), (in_global, &mut global)] {
                    if inside {
                        group.rules.push(rule.clone());
                        if rule.allow {
                            push_index_html_variant(&rule, &mut group.rules);
                        }
                    }
                }
            }
            Key::CrawlDelay => {
                let delay = parse_delay(value);
                for (inside, group) in [(in_specific, &mut specific), (in_global, &mut global)] {
                    if inside && group.delay.is_none() {
                        group.delay = delay;
                    }
                }
            }
            Key::Sitemap => {
                if !value.is_empty() && !sitemaps.iter().any(|s| s == value) {
                    sitemaps.push(value.to_string());
                }
            }
            Key::Other => {}
        }
    }

    let (chosen, group) = if specific.seen {
        (specific, GroupMatch::Specific)
    } else if global.seen {
        (global, GroupMatch::Global)
    } else {
        (Collected::default(), GroupMatch::None)
    };
    Parsed {
        rules: chosen.rules,
        crawl_delay: chosen.delay,
        sitemaps,
        group,
    }
}

/// The directives freshet reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    UserAgent,
    Allow,
    Disallow,
    CrawlDelay,
    Sitemap,
    Other,
}

/// Splits one line into a known key and its trimmed value; `None` for blank and comment lines.
fn split_line(raw: &str) -> Option<(Key, &str)> {
    let raw = truncate(raw, MAX_LINE_BYTES);
    let line = raw.split('#').next().unwrap_or("").trim();
    if line.is_empty() {
        return None;
    }
    let (key, value) = match line.find(':') {
        Some(i) => (line[..i].trim(), line[i + 1..].trim()),
        // Tolerate `Disallow /x`: key, white space, value (and nothing else).
        None => {
            let mut parts = line.splitn(2, char::is_whitespace);
            let key = parts.next()?;
            let value = parts.next()?.trim();
            if value.contains(char::is_whitespace) {
                return None;
            }
            (key, value)
        }
    };
    // Robots files wrapped in HTML end lines with `<br>`.
    let value = strip_suffix_ignore_case(value, "<br>").trim();
    let key = match key.to_ascii_lowercase().as_str() {
        "user-agent" | "useragent" | "user agent" | "user_agent" => Key::UserAgent,
        "allow" => Key::Allow,
        "disallow" | "dissallow" | "dissalow" | "disalow" | "diasllow" | "disallaw"
        | "desallow" => Key::Disallow,
        "crawl-delay" | "crawl_delay" | "crawldelay" => Key::CrawlDelay,
        "sitemap" | "site-map" => Key::Sitemap,
        _ => Key::Other,
    };
    Some((key, value))
}

/// Longest line read; the rest is cut off, as Google's parser does (2083 × 8 bytes with its NUL).
const MAX_LINE_BYTES: usize = 16_663;

fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn strip_suffix_ignore_case<'a>(value: &'a str, suffix: &str) -> &'a str {
    let n = suffix.len();
    if value.len() >= n
        && value.is_char_boundary(value.len() - n)
        && value[value.len() - n..].eq_ignore_ascii_case(suffix)
    {
        &value[..value.len() - n]
    } else {
        value
    }
}

/// Whether a product-token character: RFC 9309 §2.2.1 allows letters, `_` and `-`; digits are
/// accepted too because real crawlers (and robots.txt files) use names like `bot2`.
pub fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// The product token at the start of a `User-agent` value (`Googlebot/2.1 (...)` gives
/// `Googlebot`).
pub fn product_token(value: &str) -> &str {
    let end = value.find(|c| !is_token_char(c)).unwrap_or(value.len());
    &value[..end]
}

/// Whether a `User-agent` value names `token`: the product token at its start (Google's reading),
/// or any later word that is a whole product token, so that `User-agent: crawler1 crawler2` and
/// `User-agent: One, Two` name every listed crawler (crawler-commons' reading). A browser-like
/// value such as `Mozilla/5.0 (compatible; Butterfly/1.0)` names only `Mozilla`.
fn names_token(value: &str, token: &str) -> bool {
    if product_token(value).eq_ignore_ascii_case(token) {
        return true;
    }
    value
        .split(|c: char| c.is_whitespace() || c == ',')
        .skip(1)
        .filter(|w| !w.is_empty() && w.chars().all(is_token_char))
        .any(|w| w.eq_ignore_ascii_case(token))
}

/// A Crawl-delay value in seconds (`10`, `0.5`, `10<junk>`); negative or absurd values are ignored.
fn parse_delay(value: &str) -> Option<Duration> {
    let end = value
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(value.len());
    let secs: f64 = value[..end].parse().ok()?;
    // A day between requests is already a ban; larger values are treated as typos.
    (secs.is_finite() && (0.0..=86_400.0).contains(&secs)).then(|| Duration::from_secs_f64(secs))
}

/// `Allow: /dir/index.html` also allows `/dir/` (Google's reading; the server serves the same
/// page for both).
fn push_index_html_variant(rule: &Rule, rules: &mut Vec<Rule>) {
    for suffix in ["/index.html", "/index.htm"] {
        if let Some(dir) = rule.pattern.strip_suffix(suffix) {
            rules.push(Rule {
                pattern: format!("{dir}/$"),
                allow: true,
            });
            return;
        }
    }
}
