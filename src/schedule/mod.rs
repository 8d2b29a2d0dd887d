//! Schedule files: which sites to keep fresh and how, read from TOML and validated into typed
//! [`Site`]s. Not the place where anything is fetched or scheduled: this module only reads.
//!
//! A schedule file holds one or more `[[site]]` tables (see `schedules/*.toml` for every key,
//! commented). Reading is two phases (STYLE.md 9): serde structs with `deny_unknown_fields` read
//! the text (`raw.rs`), then one validation step turns them into typed values (`validate.rs`):
//! [`url::Url`], [`regex::Regex`], [`cron::Schedule`], [`HostRate`], [`std::time::Duration`].
//!
//! Every problem is reported, not just the first, as a [`ScheduleError`] naming file, line and key:
//! TOML syntax, unknown keys, values of the wrong type, bad URLs, regexes, cron expressions, rates,
//! sizes and durations, non-positive weights and budgets, and site names used twice (in one file or
//! across files; the message names the other place). Nothing from a file with a problem is applied.
//! Cron expressions: see [`parse_cron`] (five-field form accepted, classic day-of-week numbers).

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

mod cronexpr;
mod nesting;
mod notes;
mod raw;
mod site;
#[cfg(test)]
mod tests;
mod units;
mod validate;

pub use cronexpr::parse_cron;
pub use notes::shared_host_notes;
pub use site::{ChangeSignal, Method, Site, Window, defaults};
pub use units::{HostRate, format_duration, parse_duration, parse_size};
pub use validate::MAX_CONCURRENCY;

/// One problem in a schedule file. Displays as `file:line: key: message` (the line is left out
/// when it is 0, i.e. the whole file is concerned; the key when there is none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleError {
    /// The schedule file (or folder) concerned.
    pub file: PathBuf,
    /// 1-based line of the problem; 0 when the whole file is concerned (unreadable, empty).
    pub line: usize,
    /// The key concerned (`host_rate`), if any.
    pub key: Option<String>,
    /// What is wrong, one line.
    pub message: String,
}

impl fmt::Display for ScheduleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
        }
        write!(f, ": ")?;
        if let Some(key) = &self.key {
            write!(f, "{key}: ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for ScheduleError {}

/// What [`load`] found: the sites of every file without problems, and every problem.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Sites from files without problems, in file order then file position.
    pub sites: Vec<Site>,
    /// Every problem, in file order then line order.
    pub errors: Vec<ScheduleError>,
    /// The schedule files read (after expanding folders), in order.
    pub files: Vec<PathBuf>,
}

/// Reads schedule files. `paths` may be files or folders (every `*.toml` directly inside, sorted
/// by name). Never fails as a whole: problems are listed in [`Loaded::errors`], and a file with
/// any problem contributes no sites.
pub fn load(paths: &[PathBuf]) -> Loaded {
    let mut loaded = Loaded::default();
    loaded.files = schedule_files(paths, &mut loaded.errors);
    let mut parsed = Vec::new();
    for file in &loaded.files {
        match read_file(file) {
            Ok(text) => parsed.push(parse(file, &text)),
            Err(message) => loaded.errors.push(ScheduleError {
                file: file.clone(),
                line: 0,
                key: None,
                message,
            }),
        }
    }
    report_duplicates(&mut parsed);
    for file in parsed {
        tracing::debug!(
            file = %file.path.display(),
            sites = file.sites.len(),
            problems = file.errors.len(),
            "schedule file read"
        );
        if file.errors.is_empty() {
            loaded.sites.extend(file.sites);
        } else {
            loaded.errors.extend(file.errors);
        }
    }
    loaded
}

/// The largest schedule file read (1 MiB): a thousand sites fit in a tenth of it, and a path
/// like `/dev/zero` or a growing log must not fill memory.
pub const MAX_SCHEDULE_BYTES: u64 = 1024 * 1024;

/// Reads a schedule file: a regular file (a FIFO would block forever, a device never end) of at
/// most [`MAX_SCHEDULE_BYTES`], in UTF-8. The error says which limit was hit (the file is named
/// by the [`ScheduleError`] it goes into).
fn read_file(path: &Path) -> Result<String, String> {
    use crate::localfile::{LocalFileError, read_regular};
    let bytes = read_regular(path, MAX_SCHEDULE_BYTES).map_err(|err| match err {
        LocalFileError::NotRegular { .. } => {
            "not a regular file (a FIFO, device or socket); refused".to_string()
        }
        LocalFileError::TooLarge { .. } => {
            format!("larger than the {MAX_SCHEDULE_BYTES}-byte (1 MiB) cap on schedule files")
        }
        LocalFileError::Io { source, .. } => format!("cannot read: {source}"),
    })?;
    String::from_utf8(bytes).map_err(|err| {
        format!(
            "cannot read: not UTF-8 (invalid byte at offset {})",
            err.utf8_error().valid_up_to()
        )
    })
}

/// Reads one schedule file's text (`path` only names it in errors). All sites, or every problem.
/// Site names are checked for duplicates within this text only.
pub fn parse_str(path: &Path, text: &str) -> Result<Vec<Site>, Vec<ScheduleError>> {
    let mut file = parse(path, text);
    report_duplicates(std::slice::from_mut(&mut file));
    if file.errors.is_empty() {
        Ok(file.sites)
    } else {
        Err(file.errors)
    }
}

/// One file read: the sites that validated, the names written (for duplicates), the problems.
struct ParsedFile {
    path: PathBuf,
    sites: Vec<Site>,
    /// Every site name written, valid or not, with its line.
    names: Vec<(String, usize)>,
    errors: Vec<ScheduleError>,
}

/// Both phases for one file's text.
fn parse(path: &Path, text: &str) -> ParsedFile {
    let lines = LineIndex::new(text);
    let read = raw::read(text);
    let mut problems = read.problems;
    let mut sites = Vec::new();
    let mut names = Vec::new();
    if read.sites.is_empty() && problems.is_empty() {
        problems.push(raw::Problem {
            at: 0,
            key: None,
            message: "no [[site]] tables in this file".to_owned(),
        });
    }
    for (header, raw_site) in read.sites {
        if let Some(name) = &raw_site.name {
            names.push((name.get_ref().clone(), lines.line(name.span().start)));
        }
        let line = lines.line(header.start);
        sites.extend(validate::site(
            header.start,
            line,
            raw_site,
            path,
            &mut problems,
        ));
    }
    problems.sort_by_key(|problem| problem.at);
    let errors = problems
        .into_iter()
        .map(|problem| ScheduleError {
            file: path.to_path_buf(),
            line: lines.line(problem.at),
            key: problem.key,
            message: problem.message,
        })
        .collect();
    ParsedFile {
        path: path.to_path_buf(),
        sites,
        names,
        errors,
    }
}

/// Adds an error at every site name already used earlier (same file or an earlier one), naming
/// the first place. A file with such an error is then not applied, like any other problem.
fn report_duplicates(files: &mut [ParsedFile]) {
    let mut first: HashMap<String, (PathBuf, usize)> = HashMap::new();
    for file in files.iter_mut() {
        let mut found = Vec::new();
        for (name, line) in &file.names {
            match first.get(name) {
                Some((other, other_line)) => found.push(ScheduleError {
                    file: file.path.clone(),
                    line: *line,
                    key: Some("name".to_owned()),
                    message: format!(
                        "site name `{name}` is already used at {}:{other_line}",
                        other.display()
                    ),
                }),
                None => {
                    first.insert(name.clone(), (file.path.clone(), *line));
                }
            }
        }
        if !found.is_empty() {
            file.errors.extend(found);
            file.errors.sort_by_key(|err| err.line);
        }
    }
}

/// Expands folders into their `*.toml` files (sorted), drops repeats of the same file, and
/// reports paths that do not exist and folders without schedule files.
fn schedule_files(paths: &[PathBuf], errors: &mut Vec<ScheduleError>) -> Vec<PathBuf> {
    let whole = |path: &Path, message: String| ScheduleError {
        file: path.to_path_buf(),
        line: 0,
        key: None,
        message,
    };
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let entries = match std::fs::read_dir(path) {
                Ok(entries) => entries,
                Err(err) => {
                    errors.push(whole(path, format!("cannot read folder: {err}")));
                    continue;
                }
            };
            let mut found: Vec<PathBuf> = entries
                .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                .filter(|p| p.is_file() && p.extension().is_some_and(|ext| ext == "toml"))
                .collect();
            found.sort();
            if found.is_empty() {
                errors.push(whole(
                    path,
                    "no *.toml schedule files in this folder".to_owned(),
                ));
            }
            files.extend(found);
        } else if path.exists() {
            files.push(path.clone());
        } else {
            errors.push(whole(path, "no such file or folder".to_owned()));
        }
    }
    let mut seen = std::collections::HashSet::new();
    files.retain(|file| seen.insert(std::fs::canonicalize(file).unwrap_or_else(|_| file.clone())));
    files
}

/// Byte offset to 1-based line number.
struct LineIndex {
    /// Byte offsets at which lines 2, 3, ... start.
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(text: &str) -> LineIndex {
        let starts = text.match_indices('\n').map(|(at, _)| at + 1).collect();
        LineIndex { starts }
    }

    fn line(&self, at: usize) -> usize {
        self.starts.partition_point(|&start| start <= at) + 1
    }
}
