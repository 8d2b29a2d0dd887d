//! What the schedule files said to a run: the files skipped for their problems, counted for
//! the run's summary, and the message of a run that has no valid site at all.

use crate::schedule;

use super::RunOptions;

/// Problems that kept schedule files out of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScheduleProblems {
    /// Files skipped.
    pub files: u64,
    /// Problems in them.
    pub problems: u64,
}

impl ScheduleProblems {
    pub(super) fn of(errors: &[schedule::ScheduleError]) -> Self {
        let files: std::collections::HashSet<&std::path::Path> =
            errors.iter().map(|e| e.file.as_path()).collect();
        Self {
            files: files.len() as u64,
            problems: errors.len() as u64,
        }
    }
}

/// Why a run has nothing to do: no schedule file gave a valid site.
pub(super) fn no_site_message(options: &RunOptions, loaded: &schedule::Loaded) -> String {
    let files: Vec<String> = (options.schedules.iter())
        .map(|p| p.display().to_string())
        .collect();
    let problems = match loaded.errors.as_slice() {
        [] => "no [[site]] table in them".to_string(),
        [only] => format!("{only}"),
        [first, rest @ ..] => format!(
            "{first}; and {} more problem{} (`freshet check` lists them)",
            rest.len(),
            if rest.len() == 1 { "" } else { "s" }
        ),
    };
    format!("no valid site in {}: {problems}", files.join(", "))
}
