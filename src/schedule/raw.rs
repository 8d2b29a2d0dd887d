//! Phase one of reading a schedule file: TOML text into plain serde structs that keep where each
//! value was written (`toml::Spanned`), so that phase two can name the line of every problem.
//!
//! serde stops at the first error. To report every unknown key and every value of the wrong type,
//! the file is parsed once into toml's spanned document tree, and deserialised from it again and
//! again: each failure names a key (found from the error's span), which is recorded and removed
//! before the next attempt. What remains is then validated as usual, so one run reports them all.

use std::fmt;
use std::ops::Range;

use serde::Deserialize;
use serde::de::{self, SeqAccess, Visitor};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// The whole file: nothing but `[[site]]` tables.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFile {
    /// The `[[site]]` tables, with their spans.
    #[serde(default)]
    pub site: Vec<Spanned<RawSite>>,
}

/// One `[[site]]` table as written. Every key is optional here: what is required is checked in
/// phase two, where the message can say so plainly. The fields are the keys one to one; their
/// meaning is documented on [`super::Site`] and in `schedules/*.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSite {
    pub name: Option<Spanned<String>>,
    pub sitemaps: Option<Spanned<StringList>>,
    pub feeds: Option<Spanned<StringList>>,
    pub seeds: Option<Spanned<StringList>>,
    pub include: Option<Spanned<StringList>>,
    pub exclude: Option<Spanned<StringList>>,
    pub weight: Option<Spanned<f64>>,
    pub requests_per_day: Option<Spanned<f64>>,
    pub host_rate: Option<Spanned<String>>,
    pub rediscover: Option<Spanned<String>>,
    pub window: Option<Spanned<StringList>>,
    pub window_length: Option<Spanned<String>>,
    pub user_agent: Option<Spanned<String>>,
    pub method: Option<Spanned<String>>,
    pub change_signal: Option<Spanned<String>>,
    pub max_body: Option<Spanned<String>>,
    pub timeout: Option<Spanned<String>>,
    pub concurrency: Option<Spanned<i64>>,
    pub drop_params: Option<Spanned<StringList>>,
    pub allow_networks: Option<Spanned<StringList>>,
    /// Keys removed because they could not be read (already reported): phase two does not
    /// report them again as missing.
    #[serde(skip)]
    pub unreadable: Vec<String>,
}

/// The keys a `[[site]]` may have, for "did you mean" hints.
pub(super) const SITE_KEYS: &[&str] = &[
    "name",
    "sitemaps",
    "feeds",
    "seeds",
    "include",
    "exclude",
    "weight",
    "requests_per_day",
    "host_rate",
    "rediscover",
    "window",
    "window_length",
    "user_agent",
    "method",
    "change_signal",
    "max_body",
    "timeout",
    "concurrency",
    "drop_params",
    "allow_networks",
];

/// A string or an array of strings (`feeds = "https://.."` is as good as a one-element array).
/// Each item keeps its span when it has one of its own.
#[derive(Debug, Default)]
pub(super) struct StringList(pub Vec<(Option<Range<usize>>, String)>);

impl<'de> Deserialize<'de> for StringList {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ListVisitor;
        impl<'de> Visitor<'de> for ListVisitor {
            type Value = StringList;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or an array of strings")
            }
            fn visit_str<E: de::Error>(self, value: &str) -> Result<StringList, E> {
                Ok(StringList(vec![(None, value.to_owned())]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<StringList, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<Spanned<String>>()? {
                    items.push((Some(item.span()), item.into_inner()));
                }
                Ok(StringList(items))
            }
        }
        deserializer.deserialize_any(ListVisitor)
    }
}

/// A problem found while reading: where (byte offset), which key, what.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Problem {
    /// Byte offset into the file.
    pub at: usize,
    /// The key concerned, if any.
    pub key: Option<String>,
    /// One line saying what is wrong.
    pub message: String,
}

/// What phase one read: the sites it could read, and every problem on the way.
#[derive(Debug, Default)]
pub(super) struct RawRead {
    /// `(span of the [[site]] table, its keys)`.
    pub sites: Vec<(Range<usize>, RawSite)>,
    /// TOML syntax errors, unknown keys, values of the wrong type.
    pub problems: Vec<Problem>,
}

/// Reads a schedule file's text into [`RawSite`]s, collecting every problem (see module docs).
pub(super) fn read(text: &str) -> RawRead {
    let mut out = RawRead::default();
    if let Some(at) = super::nesting::too_deep_at(text) {
        out.problems.push(Problem {
            at,
            key: None,
            message: format!(
                "arrays and inline tables nested deeper than {} levels (or left unclosed); \
                 not read further",
                super::nesting::MAX_NESTING
            ),
        });
        return out;
    }
    let (mut doc, syntax) = DeTable::parse_recoverable(text);
    if !syntax.is_empty() {
        // What follows a syntax error is a guess; report the syntax and nothing else.
        out.problems = syntax
            .iter()
            .map(|err| Problem {
                at: err.span().map_or(0, |span| span.start),
                key: None,
                message: format!("TOML syntax: {}", one_line(err.message())),
            })
            .collect();
        return out;
    }
    // (site index or None for the top level, key) removed so far.
    let mut removed: Vec<(Option<usize>, String)> = Vec::new();
    // Each attempt removes one entry and reads the rest again, so a file of many bad entries
    // costs their count times its size: past `MAX_LISTED` the list says it stops there.
    for _ in 0..=MAX_LISTED {
        match RawFile::deserialize(toml::de::Deserializer::from(doc.clone())) {
            Ok(file) => {
                out.sites = file
                    .site
                    .into_iter()
                    .enumerate()
                    .map(|(index, site)| {
                        let span = site.span();
                        let mut site = site.into_inner();
                        site.unreadable = removed
                            .iter()
                            .filter(|(at, _)| *at == Some(index))
                            .map(|(_, key)| key.clone())
                            .collect();
                        (span, site)
                    })
                    .collect();
                return out;
            }
            Err(_) if out.problems.len() == MAX_LISTED => break,
            Err(err) => {
                let at = err.span().map_or(0, |span| span.start);
                let found = remove_entry_at(doc.get_mut(), at);
                let key = found.as_ref().map(|(_, key)| key.clone());
                let in_site = found.as_ref().is_some_and(|(site, _)| site.is_some());
                let message = explain(err.message(), key.as_deref(), in_site);
                out.problems.push(Problem { at, key, message });
                match found {
                    Some(entry) => removed.push(entry),
                    None => return out,
                }
            }
        }
    }
    out.problems.push(Problem {
        at: 0,
        key: None,
        message: format!(
            "more problems than the {MAX_LISTED} listed (the first found, which is not line order): fix these and check again"
        ),
    });
    out
}

/// The most problems one file's entries are listed with.
const MAX_LISTED: usize = 200;

/// Removes the entry whose key or value contains byte `at`: inside a `[[site]]` table first,
/// else at the top level. Returns `(site index, key)`.
fn remove_entry_at(doc: &mut DeTable<'_>, at: usize) -> Option<(Option<usize>, String)> {
    if let Some(DeValue::Array(sites)) = doc.get_mut("site").map(|v| v.get_mut()) {
        for (index, site) in sites.iter_mut().enumerate() {
            if let DeValue::Table(table) = site.get_mut()
                && let Some(key) = key_at(table, at)
            {
                table.remove(key.as_str());
                return Some((Some(index), key));
            }
        }
    }
    let key = key_at(doc, at)?;
    doc.remove(key.as_str());
    Some((None, key))
}

/// The key of the entry of `table` whose key or value span contains byte `at`.
fn key_at(table: &DeTable<'_>, at: usize) -> Option<String> {
    let contains = |span: Range<usize>| span.contains(&at) || span.start == at;
    table
        .iter()
        .find(|(key, value)| contains(key.span()) || contains(value.span()))
        .map(|(key, _)| key.get_ref().to_string())
}

/// Turns serde's message about `key` into one line for a schedule file's author.
/// `in_site` says whether the key sits in a `[[site]]` table or at the top of the file.
fn explain(message: &str, key: Option<&str>, in_site: bool) -> String {
    let message = one_line(message);
    let key = key.unwrap_or_default();
    if message.starts_with("unknown field") {
        return match (in_site, key) {
            (true, "robots") => {
                "unknown key: robots.txt is always obeyed, there is no switch".to_owned()
            }
            (true, _) => match closest(key, SITE_KEYS) {
                Some(hint) => format!("unknown key (did you mean `{hint}`?)"),
                None => format!("unknown key; a site may have: {}", SITE_KEYS.join(", ")),
            },
            (false, _) if SITE_KEYS.contains(&key) => {
                "this key belongs in a [[site]] table (it is above the first [[site]] line)"
                    .to_owned()
            }
            (false, _) => "unknown key; a schedule file holds only [[site]] tables".to_owned(),
        };
    }
    if !in_site && key == "site" {
        return "write each site as a [[site]] table (double brackets)".to_owned();
    }
    let example = match key {
        "host_rate" => " like \"1/s\"",
        "max_body" => " like \"10MB\"",
        "allow_networks" => " like [\"10.0.0.0/8\"]",
        "timeout" | "window_length" => " like \"30s\" or \"6h\"",
        "rediscover" | "window" => " like \"0 */6 * * *\"",
        _ => "",
    };
    let message = message
        .replace("invalid type: ", "wrong type: ")
        .replace("expected f64", "expected a number")
        .replace("expected i64", "expected a whole number")
        .replace("map", "table")
        .replace("sequence", "array");
    if message.ends_with("expected a string") {
        format!("{message}{example}")
    } else {
        message
    }
}

/// Makes a multi-line message one line.
pub(super) fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The candidate within edit distance 2 of `word`, if one is clearly closest.
fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (edit_distance(word, c), *c))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Levenshtein distance between two short strings.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_and_hints() {
        assert_eq!(edit_distance("nmae", "name"), 2);
        assert_eq!(edit_distance("feed", "feeds"), 1);
        assert_eq!(closest("sitemap", SITE_KEYS), Some("sitemaps"));
        assert_eq!(closest("colour", SITE_KEYS), None);
    }

    #[test]
    fn unreadable_keys_are_removed_and_remembered() {
        let read = read("[[site]]\nname = \"a\"\nfoo = 1\nweight = \"x\"\n");
        assert_eq!(read.problems.len(), 2);
        assert_eq!(read.sites.len(), 1);
        assert_eq!(read.sites[0].1.unreadable, ["foo", "weight"]);
        assert_eq!(read.sites[0].1.name.as_ref().unwrap().get_ref(), "a");
    }

    #[test]
    fn a_file_of_more_problems_than_listed_says_so() {
        let text: String = (0..MAX_LISTED + 50)
            .map(|i| format!("[[site]]\nname = \"s{i}\"\nfoo{i} = 1\n"))
            .collect();
        // Exactly as many as are listed: all of them, and the file's sites.
        let exact: String = (0..MAX_LISTED)
            .map(|i| format!("[[site]]\nname = \"s{i}\"\nfoo{i} = 1\n"))
            .collect();
        let exact = read(&exact);
        assert_eq!(exact.problems.len(), MAX_LISTED);
        assert_eq!(exact.sites.len(), MAX_LISTED);
        let read = read(&text);
        assert_eq!(read.problems.len(), MAX_LISTED + 1);
        let last = &read.problems[MAX_LISTED].message;
        assert!(last.contains("more problems than the 200 listed"), "{last}");
    }
}
