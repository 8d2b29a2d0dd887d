//! Phase two of reading a schedule file: one [`RawSite`] into a typed [`Site`], reporting every
//! problem with the byte offset of the value (or of the `[[site]]` header for a missing key).

use std::num::NonZeroU32;
use std::path::Path;
use std::time::Duration;

use regex::Regex;
use toml::Spanned;
use url::Url;

use super::cronexpr::parse_cron;
use super::raw::{Problem, RawSite, StringList, one_line};
use super::site::{ChangeSignal, Method, Site, Window, defaults};
use super::units::{HostRate, parse_duration, parse_size};

/// The most requests in flight per host a schedule may ask for.
pub const MAX_CONCURRENCY: i64 = 64;

/// Collects the problems of one site.
struct Checker<'a> {
    /// Where the `[[site]]` header starts: the place of problems with no value to point at.
    header: usize,
    /// Keys already reported as unreadable by phase one.
    unreadable: &'a [String],
    problems: &'a mut Vec<Problem>,
}

impl Checker<'_> {
    /// True if phase one already reported `key` as unreadable.
    fn is_unreadable(&self, key: &str) -> bool {
        self.unreadable.iter().any(|k| k == key)
    }

    fn report(&mut self, at: usize, key: &str, message: impl Into<String>) {
        self.problems.push(Problem {
            at,
            key: Some(key.to_owned()),
            message: message.into(),
        });
    }

    /// Checks one optional single value with `parse`; `None` when absent or bad.
    fn value<T, U>(
        &mut self,
        key: &str,
        raw: Option<Spanned<T>>,
        parse: impl FnOnce(T) -> Result<U, String>,
    ) -> Option<U> {
        let raw = raw?;
        let at = raw.span().start;
        parse(raw.into_inner())
            .map_err(|message| self.report(at, key, message))
            .ok()
    }

    /// Checks every item of an optional list with `parse`, reporting each bad item.
    fn list<U>(
        &mut self,
        key: &str,
        raw: Option<Spanned<StringList>>,
        parse: impl Fn(&str) -> Result<U, String>,
    ) -> Vec<U> {
        let Some(raw) = raw else {
            return Vec::new();
        };
        let outer = raw.span();
        let mut out = Vec::new();
        for (span, item) in raw.into_inner().0 {
            match parse(&item) {
                Ok(value) => out.push(value),
                Err(message) => self.report(span.unwrap_or(outer.clone()).start, key, message),
            }
        }
        out
    }
}

/// Validates one `[[site]]` whose header starts at byte `header` on `line`. Problems go to
/// `problems`; the site is returned only if it had none.
pub(super) fn site(
    header: usize,
    line: usize,
    raw: RawSite,
    source: &Path,
    problems: &mut Vec<Problem>,
) -> Option<Site> {
    let before = problems.len();
    let mut check = Checker {
        header,
        unreadable: &raw.unreadable,
        problems,
    };
    let had_name = raw.name.is_some();
    let name = check.value("name", raw.name, check_name);
    if !had_name && !check.is_unreadable("name") {
        check.report(check.header, "name", "missing: every site needs a name");
    }
    let sources_before = check.problems.len();
    let sitemaps = check.list("sitemaps", raw.sitemaps, check_url);
    // One URL is read either as a sitemap or as a feed: its stored row has one kind.
    let feeds = check.list("feeds", raw.feeds, |text| {
        let url = check_url(text)?;
        match sitemaps.contains(&url) {
            true => Err(format!(
                "`{url}` is in `sitemaps` too: a URL is read either as a sitemap or as a feed; \
                 list it under one of them"
            )),
            false => Ok(url),
        }
    });
    let seeds = check.list("seeds", raw.seeds, check_url);
    let sources_reported = check.problems.len() > sources_before
        || ["sitemaps", "feeds", "seeds"]
            .iter()
            .any(|key| check.is_unreadable(key));
    if sitemaps.is_empty() && feeds.is_empty() && seeds.is_empty() && !sources_reported {
        check.problems.push(Problem {
            at: check.header,
            key: None,
            message: "a site needs at least one of sitemaps, feeds or seeds".to_owned(),
        });
    }
    let include = check.list("include", raw.include, check_regex);
    let exclude = check.list("exclude", raw.exclude, check_regex);
    let weight = check.value("weight", raw.weight, bounded);
    let requests_per_day = check.value("requests_per_day", raw.requests_per_day, bounded);
    let host_rate = check.value("host_rate", raw.host_rate, |r| HostRate::parse(&r));
    let rediscover = check.value("rediscover", raw.rediscover, |c| parse_cron(&c));
    let window = check_window(&mut check, raw.window, raw.window_length);
    let user_agent = check.value("user_agent", raw.user_agent, check_user_agent);
    let method = check.value("method", raw.method, check_method);
    let change_signal = check.value("change_signal", raw.change_signal, check_change_signal);
    let max_body = check.value("max_body", raw.max_body, |s| {
        parse_size(&s).and_then(|n| match n {
            0 => Err("must be larger than zero".to_owned()),
            n => Ok(n),
        })
    });
    let timeout = check.value("timeout", raw.timeout, |s| nonzero_duration(&s));
    let concurrency = check.value("concurrency", raw.concurrency, check_concurrency);
    let drop_params = check.list("drop_params", raw.drop_params, check_param);
    let allow_networks = check.list("allow_networks", raw.allow_networks, |text| {
        text.parse::<crate::fetch::Cidr>()
    });

    if problems.len() > before {
        return None;
    }
    Some(Site {
        name: name?,
        sitemaps,
        feeds,
        seeds,
        include,
        exclude,
        weight: weight.unwrap_or(defaults::WEIGHT),
        requests_per_day: requests_per_day.unwrap_or(defaults::REQUESTS_PER_DAY),
        host_rate: host_rate.unwrap_or(defaults::HOST_RATE),
        rediscover: rediscover.unwrap_or_else(|| {
            parse_cron(defaults::REDISCOVER).expect("the default rediscover expression parses")
        }),
        window,
        user_agent,
        method: method.unwrap_or_default(),
        change_signal: change_signal.unwrap_or_default(),
        max_body: max_body.unwrap_or(defaults::MAX_BODY),
        timeout: timeout.unwrap_or(defaults::TIMEOUT),
        concurrency: concurrency.unwrap_or(defaults::CONCURRENCY),
        drop_params,
        allow_networks,
        source: source.to_path_buf(),
        line,
    })
}

/// `window` and `window_length` go together: each needs the other.
fn check_window(
    check: &mut Checker<'_>,
    window: Option<Spanned<StringList>>,
    length: Option<Spanned<String>>,
) -> Option<Window> {
    let window_at = window.as_ref().map(|w| w.span().start);
    let length_at = length.as_ref().map(|l| l.span().start);
    let before = check.problems.len();
    let starts = check.list("window", window, parse_cron);
    let length = check.value("window_length", length, |s| nonzero_duration(&s));
    match (window_at, length_at) {
        (Some(at), None) if !check.is_unreadable("window_length") => check.report(
            at,
            "window",
            "a window needs window_length (how long each window stays open, e.g. \"6h\")",
        ),
        (None, Some(at)) if !check.is_unreadable("window") => check.report(
            at,
            "window_length",
            "window_length without window (cron expressions for when windows open)",
        ),
        (Some(at), Some(_)) if starts.is_empty() && check.problems.len() == before => {
            check.report(at, "window", "window lists no cron expressions")
        }
        _ => {}
    }
    Some(Window {
        starts,
        length: length?,
    })
    .filter(|w| !w.starts.is_empty())
}

/// Site names appear in reports and on command lines: keep them plain.
fn check_name(name: String) -> Result<String, String> {
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if name.is_empty() {
        Err("the name is empty".to_owned())
    } else if name.len() > 64 {
        Err("the name is longer than 64 characters".to_owned())
    } else if !name.chars().all(plain) {
        Err(format!(
            "`{name}` has characters other than letters, digits, `.`, `_` and `-`"
        ))
    } else {
        Ok(name)
    }
}

/// An absolute http(s) URL with a host; a fragment is dropped (it is never sent).
pub(super) fn check_url(text: &str) -> Result<Url, String> {
    let mut url = Url::parse(text.trim()).map_err(|err| format!("`{text}` is not a URL: {err}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("`{text}` is not an http or https URL"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("`{text}` has no host"));
    }
    url.set_fragment(None);
    Ok(url)
}

/// A regular expression (Rust `regex` syntax), its error made one line.
fn check_regex(text: &str) -> Result<Regex, String> {
    Regex::new(text).map_err(|err| {
        let err = err.to_string();
        // The regex crate draws a caret diagram; its last line says what is wrong.
        let reason = err.lines().last().unwrap_or_default();
        let reason = reason.strip_prefix("error: ").unwrap_or(reason);
        format!("bad regex `{text}`: {}", one_line(reason))
    })
}

/// A finite number above zero.
fn positive(value: f64) -> Result<f64, String> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(format!("must be a number above zero, not {}", shown(value)))
    }
}

/// A number as a person wrote it: `1e300`, not three hundred and one digits.
fn shown(value: f64) -> String {
    if value != 0.0 && value.is_finite() && !(1e-4..1e15).contains(&value.abs()) {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

/// The largest budget or weight a site may give: a trillion. Past it the plans and reports
/// lose their arithmetic (a budget of 1e308, written for "no limit", hung `report html`'s log
/// axis); a trillion requests a day is no limit to any deployment.
const LARGEST_QUANTITY: f64 = 1e12;

/// The smallest budget or weight: a millionth (a request every 2,700 years; a subnormal
/// number would put the plots' log axes at zero).
const SMALLEST_QUANTITY: f64 = 1e-6;

/// A number between [`SMALLEST_QUANTITY`] and [`LARGEST_QUANTITY`].
fn bounded(value: f64) -> Result<f64, String> {
    let value = positive(value)?;
    if value < SMALLEST_QUANTITY {
        return Err(format!("must be at least 1e-6, not {}", shown(value)));
    }
    if value > LARGEST_QUANTITY {
        return Err(format!(
            "must be at most 1e12, not {} (for no limit in practice, 1e9 is plenty)",
            shown(value)
        ));
    }
    Ok(value)
}

/// A duration above zero.
fn nonzero_duration(text: &str) -> Result<Duration, String> {
    match parse_duration(text)? {
        d if d.is_zero() => Err("must be longer than zero".to_owned()),
        d => Ok(d),
    }
}

/// A User-Agent that fits in an HTTP header.
fn check_user_agent(text: String) -> Result<String, String> {
    if text.trim().is_empty() {
        Err("must not be empty".to_owned())
    } else if !text.chars().all(|c| (' '..='~').contains(&c)) {
        Err("may only hold printable ASCII characters".to_owned())
    } else {
        Ok(text.trim().to_owned())
    }
}

/// `"get"` or `"head"`, any case.
fn check_method(text: String) -> Result<Method, String> {
    match text.to_ascii_lowercase().as_str() {
        "get" => Ok(Method::Get),
        "head" => Ok(Method::Head),
        _ => Err(format!(
            "`{text}` is not a method: expected \"get\" or \"head\""
        )),
    }
}

/// `"content"` or `"bytes"`, any case.
fn check_change_signal(text: String) -> Result<ChangeSignal, String> {
    match text.to_ascii_lowercase().as_str() {
        "content" => Ok(ChangeSignal::Content),
        "bytes" => Ok(ChangeSignal::Bytes),
        _ => Err(format!(
            "`{text}` is not a change signal: expected \"content\" (changes of the main text) \
             or \"bytes\" (any change of the body)"
        )),
    }
}

/// 1 to [`MAX_CONCURRENCY`] requests in flight per host.
fn check_concurrency(n: i64) -> Result<NonZeroU32, String> {
    u32::try_from(n)
        .ok()
        .filter(|_| n <= MAX_CONCURRENCY)
        .and_then(NonZeroU32::new)
        .ok_or_else(|| format!("must be 1 to {MAX_CONCURRENCY}, not {n}"))
}

/// A query parameter name, optionally ending in `*`.
fn check_param(text: &str) -> Result<String, String> {
    let body = text.strip_suffix('*').unwrap_or(text);
    if body.is_empty() {
        return Err(
            "an empty parameter name (or a lone `*`) would drop every parameter".to_owned(),
        );
    }
    if body
        .chars()
        .any(|c| c.is_whitespace() || matches!(c, '=' | '&' | '?' | '#' | '*' | ';' | '/'))
    {
        return Err(format!(
            "`{text}` is not a parameter name (a `*` may only end it)"
        ));
    }
    Ok(text.to_owned())
}
