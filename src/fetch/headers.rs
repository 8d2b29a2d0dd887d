//! Parsing the response headers a check cares about (pure: the clock reading is an argument).
//!
//! HTTP dates in all three forms RFC 9110 §5.6.7 requires recipients to accept (IMF-fixdate,
//! RFC 850, asctime), `Retry-After` (delay-seconds or a date, made relative to the clock),
//! `Cache-Control: max-age`, and `Content-Type` (essence and charset parameter).

use std::time::Duration;

use chrono::{DateTime, NaiveDateTime};
use reqwest::header::{CACHE_CONTROL, HeaderMap, HeaderName};

/// Parses an HTTP date to Unix milliseconds; `None` if it is in none of the three forms.
pub fn parse_http_date(value: &str) -> Option<i64> {
    let value = value.trim();
    if let Ok(date) = DateTime::parse_from_rfc2822(value) {
        return Some(date.timestamp_millis());
    }
    // RFC 850 ("Sunday, 06-Nov-94 08:49:37 GMT") and asctime ("Sun Nov  6 08:49:37 1994").
    let without_zone = value.strip_suffix("GMT").unwrap_or(value).trim_end();
    ["%A, %d-%b-%y %H:%M:%S", "%a %b %e %H:%M:%S %Y"]
        .iter()
        .find_map(|format| NaiveDateTime::parse_from_str(without_zone, format).ok())
        .map(|naive| naive.and_utc().timestamp_millis())
}

/// Parses `Retry-After` (seconds, or an HTTP date taken relative to `now_ms`; a date in the past
/// means zero).
pub fn parse_retry_after(value: &str, now_ms: i64) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at_ms = parse_http_date(value)?;
    let ms = at_ms.saturating_sub(now_ms).max(0);
    Some(Duration::from_millis(u64::try_from(ms).unwrap_or(0)))
}

/// The `max-age` directive of all `Cache-Control` headers (the first valid one).
pub fn cache_control_max_age(headers: &HeaderMap) -> Option<Duration> {
    headers
        .get_all(CACHE_CONTROL)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .find_map(|directive| {
            let (name, arg) = directive.split_once('=')?;
            if !name.trim().eq_ignore_ascii_case("max-age") {
                return None;
            }
            let seconds = arg.trim().trim_matches('"').parse::<u64>().ok()?;
            Some(Duration::from_secs(seconds))
        })
}

/// A header's first value as text, trimmed; `None` if absent, empty or not visible ASCII/Latin-1.
pub fn header_text(headers: &HeaderMap, name: HeaderName) -> Option<String> {
    let value = headers.get(name)?.to_str().ok()?.trim();
    (!value.is_empty()).then(|| value.to_string())
}

/// A parsed `Content-Type`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentType {
    /// `type/subtype`, lower case.
    pub essence: String,
    /// The `charset` parameter, unquoted, if any.
    pub charset: Option<String>,
}

impl ContentType {
    /// Parses `text/html; charset="ISO-8859-1"`.
    pub fn parse(value: &str) -> Self {
        let mut parts = value.split(';');
        let essence = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let charset = parts.find_map(|param| {
            let (name, arg) = param.split_once('=')?;
            name.trim()
                .eq_ignore_ascii_case("charset")
                .then(|| arg.trim().trim_matches(['"', '\'']).to_string())
                .filter(|charset| !charset.is_empty())
        });
        Self { essence, charset }
    }

    /// Whether the body is text worth decoding (HTML, XML, JSON, feeds, plain text).
    pub fn is_textual(&self) -> bool {
        let essence = self.essence.as_str();
        essence.is_empty()
            || essence.starts_with("text/")
            || essence.ends_with("+xml")
            || essence.ends_with("+json")
            || matches!(
                essence,
                "application/xml" | "application/json" | "application/javascript"
            )
    }
}

#[cfg(test)]
mod tests {
    use reqwest::header::HeaderValue;

    use super::*;

    const NOV_6_1994: i64 = 784_111_777_000;

    #[test]
    fn http_dates_in_all_three_forms() {
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(NOV_6_1994)
        );
        assert_eq!(
            parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"),
            Some(NOV_6_1994)
        );
        assert_eq!(
            parse_http_date("Sun Nov  6 08:49:37 1994"),
            Some(NOV_6_1994)
        );
        assert_eq!(parse_http_date("yesterday"), None);
        assert_eq!(parse_http_date(""), None);
    }

    #[test]
    fn retry_after_seconds_and_dates() {
        assert_eq!(parse_retry_after("120", 0), Some(Duration::from_secs(120)));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", NOV_6_1994 - 5_000),
            Some(Duration::from_secs(5))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", NOV_6_1994 + 5_000),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("-3", 0), None);
        assert_eq!(parse_retry_after("soon", 0), None);
    }

    #[test]
    fn max_age_from_any_cache_control_header() {
        let mut headers = HeaderMap::new();
        headers.append(CACHE_CONTROL, HeaderValue::from_static("public"));
        headers.append(
            CACHE_CONTROL,
            HeaderValue::from_static("no-transform, Max-Age=\"600\""),
        );
        assert_eq!(
            cache_control_max_age(&headers),
            Some(Duration::from_secs(600))
        );
        let mut bad = HeaderMap::new();
        bad.insert(CACHE_CONTROL, HeaderValue::from_static("max-age=soon"));
        assert_eq!(cache_control_max_age(&bad), None);
    }

    #[test]
    fn content_type_essence_and_charset() {
        let ct = ContentType::parse("Text/HTML; charset=\"ISO-8859-1\"");
        assert_eq!(ct.essence, "text/html");
        assert_eq!(ct.charset.as_deref(), Some("ISO-8859-1"));
        assert!(ct.is_textual());
        assert!(ContentType::parse("application/rss+xml").is_textual());
        assert!(!ContentType::parse("image/png").is_textual());
        assert_eq!(ContentType::parse("text/plain; charset=").charset, None);
    }
}
