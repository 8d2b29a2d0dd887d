//! URL normalisation and the 64-bit URL fingerprint.
//!
//! Two spellings of one address must become one string before anything is counted or compared:
//! scheme and host are lower-cased, default ports dropped, `.` and `..` segments resolved (the
//! `url` crate does these per the WHATWG URL standard), the fragment removed, percent-encoding
//! normalised (escapes of unreserved characters decoded, the remaining hex digits upper-cased,
//! RFC 3986 §6.2.2), empty query pairs dropped, and session-id style parameters removed, both from
//! the query (`?PHPSESSID=..`, `utm_source=..`) and from path parameters (`;jsessionid=..`).
//! Only `http` and `https` URLs are kept: a link to `mailto:` or `javascript:` is not a page.

use serde::{Deserialize, Serialize};
use url::Url;
use xxhash_rust::xxh3::xxh3_64;

/// Why a string could not be made into a page URL.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum UrlError {
    /// The string does not parse as a URL (against the base, if one was given).
    #[error("cannot parse URL {url:?}: {source}")]
    Parse {
        /// The input.
        url: String,
        /// What the parser said.
        #[source]
        source: url::ParseError,
    },
    /// The URL is not http or https.
    #[error("URL {url:?} has scheme {scheme:?}, not http or https")]
    Scheme {
        /// The input.
        url: String,
        /// Its scheme.
        scheme: String,
    },
}

/// Which query and path parameters are session ids or trackers, dropped by normalisation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UrlRules {
    /// Parameter names, compared case-insensitively; a trailing `*` makes a prefix (`utm_*`).
    pub drop_params: Vec<String>,
}

impl Default for UrlRules {
    fn default() -> Self {
        let names = [
            "jsessionid",
            "phpsessid",
            "sid",
            "sessionid",
            "session_id",
            "aspsessionid*",
            "cfid",
            "cftoken",
            "utm_*",
            "gclid",
            "fbclid",
        ];
        UrlRules {
            drop_params: names.iter().map(|s| s.to_string()).collect(),
        }
    }
}

impl UrlRules {
    /// Whether a parameter of this name is dropped.
    pub fn drops(&self, name: &str) -> bool {
        let name = name.to_ascii_lowercase();
        self.drop_params.iter().any(|rule| {
            let rule = rule.to_ascii_lowercase();
            match rule.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => name == rule,
            }
        })
    }
}

/// Normalises `input`, resolved against `base` when it is relative.
pub fn normalize(input: &str, base: Option<&Url>, rules: &UrlRules) -> Result<Url, UrlError> {
    let input = input.trim();
    let parsed = match base {
        Some(base) => base.join(input),
        None => Url::parse(input),
    }
    .map_err(|source| UrlError::Parse {
        url: input.to_string(),
        source,
    })?;
    normalize_url(parsed, rules).map_err(|scheme| UrlError::Scheme {
        url: input.to_string(),
        scheme,
    })
}

/// Normalises `input` and returns it as a string: the form stored and compared everywhere.
pub fn normalize_str(input: &str, rules: &UrlRules) -> Result<String, UrlError> {
    normalize(input, None, rules).map(String::from)
}

/// The 64-bit fingerprint (xxh3) of an already normalised URL.
pub fn url_fingerprint(normalized: &str) -> u64 {
    xxh3_64(normalized.as_bytes())
}

fn normalize_url(mut url: Url, rules: &UrlRules) -> Result<Url, String> {
    if url.scheme() != "http" && url.scheme() != "https" {
        return Err(url.scheme().to_string());
    }
    url.set_fragment(None);
    let path = clean_path(url.path(), rules);
    url.set_path(&path);
    let query = url.query().map(|q| clean_query(q, rules));
    match query {
        Some(q) if !q.is_empty() => url.set_query(Some(&q)),
        _ => url.set_query(None),
    }
    // Re-parse so escapes that decoding produced (`%2E%2E` -> `..`) are resolved like typed ones.
    Url::parse(url.as_str()).map_err(|_| url.scheme().to_string())
}

fn clean_path(path: &str, rules: &UrlRules) -> String {
    path.split('/')
        .map(|segment| {
            let mut parts = segment.split(';');
            let mut out = normalize_escapes(parts.next().unwrap_or(""));
            for param in parts {
                let name = param.split('=').next().unwrap_or("");
                if !rules.drops(name) {
                    out.push(';');
                    out.push_str(&normalize_escapes(param));
                }
            }
            out
        })
        .collect::<Vec<_>>()
        .join("/")
}

fn clean_query(query: &str, rules: &UrlRules) -> String {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .filter(|pair| !rules.drops(pair.split('=').next().unwrap_or("")))
        .map(normalize_escapes)
        .collect::<Vec<_>>()
        .join("&")
}

/// Decodes escapes of unreserved characters and upper-cases the hex digits of the others.
fn normalize_escapes(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(hi), Some(lo)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            let byte = hi * 16 + lo;
            if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
                out.push(byte as char);
            } else {
                out.push('%');
                out.push(bytes[i + 1].to_ascii_uppercase() as char);
                out.push(bytes[i + 2].to_ascii_uppercase() as char);
            }
            i += 3;
            continue;
        }
        // `s` came out of a parsed URL, so it is ASCII; copy any other byte's char unchanged.
        let ch = s[i..].chars().next().unwrap_or('\u{FFFD}');
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(s: &str) -> String {
        normalize_str(s, &UrlRules::default()).unwrap()
    }

    #[test]
    fn case_ports_dots_and_fragments() {
        assert_eq!(
            norm("HTTP://Example.COM:80/a/./b/../c?x=1#frag"),
            "http://example.com/a/c?x=1"
        );
        assert_eq!(norm("https://example.com:443"), "https://example.com/");
        assert_eq!(
            norm("https://example.com:8443/"),
            "https://example.com:8443/"
        );
    }

    #[test]
    fn percent_encoding_is_normalised() {
        assert_eq!(
            norm("http://example.com/%7euser/%41b%2fc?q=%3a%61"),
            "http://example.com/~user/Ab%2Fc?q=%3Aa"
        );
    }

    #[test]
    fn session_ids_and_trackers_are_dropped() {
        assert_eq!(
            norm("http://example.com/a;jsessionid=ABC123?id=7&PHPSESSID=xyz&utm_source=feed&&b=2"),
            "http://example.com/a?id=7&b=2"
        );
        assert_eq!(norm("http://example.com/?sid=1"), "http://example.com/");
    }

    #[test]
    fn configured_rules_are_honoured() {
        let rules = UrlRules {
            drop_params: vec!["ref".into()],
        };
        let out = normalize_str("http://example.com/?ref=x&sid=2", &rules).unwrap();
        assert_eq!(out, "http://example.com/?sid=2");
    }

    #[test]
    fn relative_links_resolve_and_other_schemes_are_refused() {
        let base = Url::parse("https://example.com/dir/page.html").unwrap();
        let rules = UrlRules::default();
        let out = normalize("../other#x", Some(&base), &rules).unwrap();
        assert_eq!(out.as_str(), "https://example.com/other");
        assert!(matches!(
            normalize("mailto:a@b.c", Some(&base), &rules),
            Err(UrlError::Scheme { .. })
        ));
        assert!(matches!(
            normalize("http://[bad", None, &rules),
            Err(UrlError::Parse { .. })
        ));
    }

    #[test]
    fn fingerprints_agree_for_equal_normal_forms() {
        let a = norm("HTTP://EXAMPLE.com/x#y");
        let b = norm("http://example.com:80/x");
        assert_eq!(url_fingerprint(&a), url_fingerprint(&b));
        assert_ne!(url_fingerprint(&a), url_fingerprint("http://example.com/z"));
    }
}
