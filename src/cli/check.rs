//! `freshet check`: validate schedule files without running anything. Prints every problem on
//! its own line (`file:line: key: message`) and a summary; exit code 1 if there was any problem.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;

use crate::schedule::{self, Loaded, Site, format_duration};

/// Arguments of `freshet check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Schedule files, or folders whose *.toml files are read [default: schedules/]
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Also print one line per valid site with its settings (defaults filled in).
    #[arg(short, long)]
    pub verbose: bool,
}

/// Runs `freshet check`; returns the exit code (0 all valid, 1 any problem).
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from("schedules")]
    } else {
        args.paths
    };
    let loaded = schedule::load(&paths);
    let mut out = super::output::stdout().lock();
    for error in &loaded.errors {
        writeln!(out, "{error}")?;
    }
    if args.verbose {
        for site in &loaded.sites {
            writeln!(out, "{}", describe(site))?;
        }
    }
    // Valid, but nothing would ever come of it from now on (a cron with a past year).
    let now = crate::clock::Clock::now(&crate::clock::SystemClock);
    let stopped: Vec<String> = loaded
        .sites
        .iter()
        .flat_map(|site| site.stopped_for_good(now))
        .collect();
    for sentence in &stopped {
        writeln!(out, "warning: {sentence}")?;
    }
    // Valid and meant, most likely, but not what each site's own line says.
    for sentence in schedule::shared_host_notes(&loaded.sites) {
        writeln!(out, "note: {sentence}")?;
    }
    match stopped.len() {
        0 => writeln!(out, "{}", summary(&loaded))?,
        n => writeln!(out, "{}, but {}", summary(&loaded), count(n, "warning"))?,
    }
    Ok(u8::from(!loaded.errors.is_empty() || !stopped.is_empty()))
}

/// `"3 sites in 2 files OK"` or `"2 problems in 1 file"`.
pub fn summary(loaded: &Loaded) -> String {
    if loaded.errors.is_empty() {
        return format!(
            "{} in {} OK",
            count(loaded.sites.len(), "site"),
            count(loaded.files.len(), "file")
        );
    }
    let files: BTreeSet<&PathBuf> = loaded.errors.iter().map(|error| &error.file).collect();
    format!(
        "{} in {}",
        count(loaded.errors.len(), "problem"),
        count(files.len(), "file")
    )
}

/// `"1 site"`, `"2 sites"`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// One line about a valid site, defaults included, so a user sees what freshet will do.
fn describe(site: &Site) -> String {
    let window = match &site.window {
        None => "always".to_owned(),
        Some(window) => {
            let starts: Vec<&str> = window.starts.iter().map(|s| s.source()).collect();
            format!(
                "windows [{}] for {}",
                starts.join("; "),
                format_duration(window.length)
            )
        }
    };
    format!(
        "{name} ({file}:{line}): {sitemaps}, {feeds}, {seeds}; {budget} requests/day, host {rate}, \
         weight {weight}, {method:?}, changes of {signal}, rediscover `{rediscover}`, fetch {window}",
        name = site.name,
        file = site.source.display(),
        line = site.line,
        sitemaps = count(site.sitemaps.len(), "sitemap"),
        feeds = count(site.feeds.len(), "feed"),
        seeds = count(site.seeds.len(), "seed"),
        budget = site.requests_per_day,
        rate = site.host_rate,
        weight = site.weight,
        method = site.method,
        signal = site.change_signal.as_str(),
        rediscover = site.rediscover.source(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::ScheduleError;

    #[test]
    fn summaries_count_with_plurals() {
        let mut loaded = Loaded {
            files: vec!["a.toml".into(), "b.toml".into()],
            ..Loaded::default()
        };
        assert_eq!(summary(&loaded), "0 sites in 2 files OK");
        let error = |file: &str| ScheduleError {
            file: file.into(),
            line: 1,
            key: None,
            message: "x".into(),
        };
        loaded.errors = vec![error("a.toml")];
        assert_eq!(summary(&loaded), "1 problem in 1 file");
        loaded.errors = vec![error("a.toml"), error("b.toml"), error("a.toml")];
        assert_eq!(summary(&loaded), "3 problems in 2 files");
    }
}
