//! One `freshet run` per SQLite file: a run holds an exclusive lock on `<db>-run.lock` for as
//! long as it runs, and a second run on the same file is refused at start.
//!
//! Why: two runs on one file each pace every host by their own clocks and hand out the same
//! due URLs, so a host saw twice its limit and every page was fetched twice within
//! milliseconds (an outside tester's server log). Several workers share work through
//! PostgreSQL's host leases instead. The lock is the kernel's (`flock`), so a killed run
//! leaves no stale lock behind; it is taken on a file of its own because closing any other
//! descriptor of the database file would drop SQLite's own POSIX locks on it. The lock file
//! is left in place (removing it would race with a run starting).
//!
//! The lock sits beside the file the path leads to, not the path as spelt: a symlink to the
//! database, `./state/../freshet.db` or a relative path from another folder all take the one
//! lock ([`file_the_path_leads_to`]; the store opens that same file). Two hard links to one
//! file are two names the lock cannot tell apart.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use super::Location;

/// The lock a run holds while it runs (released when dropped or when the process ends).
#[derive(Debug)]
pub struct RunLock {
    _file: File,
}

/// Another process holds the run lock of a SQLite file: the error of [`lock_for_run`] then
/// (a caller that is not a run, such as the demo, can say it its own way).
#[derive(Debug)]
pub struct Busy {
    /// The database, as given.
    pub db: PathBuf,
    /// The lock file the other process holds.
    pub lock: PathBuf,
}

impl std::fmt::Display for Busy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "another `freshet run` is using {} (it holds {}): two runs on one SQLite file would \
             each send requests to every host at its full rate. Stop the other run first, or \
             give this one another --db; for several workers, use PostgreSQL (--db \
             postgres://..., see the README)",
            self.db.display(),
            self.lock.display()
        )
    }
}

impl std::error::Error for Busy {}

/// The lock file beside a SQLite database.
pub fn lock_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push("-run.lock");
    PathBuf::from(name)
}

/// Takes the run lock of `--db` (`None` for PostgreSQL, where workers lease hosts), or says
/// that another run holds it.
pub fn lock_for_run(db: &Path) -> anyhow::Result<Option<RunLock>> {
    let Location::SqliteFile(path) = Location::parse(db)? else {
        return Ok(None);
    };
    // A --db in a folder not made yet: the store makes it too.
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|error| {
            anyhow::anyhow!("cannot create the folder {}: {error}", parent.display())
        })?;
    }
    let lock = lock_path(&file_the_path_leads_to(path)?);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock)
        .map_err(|error| anyhow::anyhow!("cannot open the run lock {}: {error}", lock.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(Some(RunLock { _file: file })),
        Err(TryLockError::WouldBlock) => Err(Busy {
            db: path.to_path_buf(),
            lock,
        }
        .into()),
        Err(TryLockError::Error(error)) => {
            anyhow::bail!("cannot lock {}: {error}", lock.display())
        }
    }
}

/// The file `path` leads to as the kernel reads it: symlinks followed (one whose target does not
/// exist yet too: SQLite creates the target), `.` and `..` resolved after them, made absolute.
/// The file itself need not exist; its folder must.
pub fn file_the_path_leads_to(path: &Path) -> anyhow::Result<PathBuf> {
    let cannot =
        |error: std::io::Error| anyhow::anyhow!("cannot resolve {}: {error}", path.display());
    let mut step = path.to_path_buf();
    // Linux gives up after 40 links (ELOOP); so does this.
    for _ in 0..40 {
        if let Ok(found) = std::fs::canonicalize(&step) {
            return Ok(found);
        }
        match std::fs::symlink_metadata(&step) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(&step).map_err(cannot)?;
                step = match step.parent() {
                    Some(parent) => parent.join(target),
                    None => target,
                };
            }
            // Not there yet: its folder resolved, and its name.
            _ => {
                let name = step
                    .file_name()
                    .ok_or_else(|| anyhow::anyhow!("{} does not name a file", path.display()))?;
                let folder = match step.parent().filter(|p| !p.as_os_str().is_empty()) {
                    Some(parent) => std::fs::canonicalize(parent).map_err(cannot)?,
                    None => std::env::current_dir().map_err(cannot)?,
                };
                return Ok(folder.join(name));
            }
        }
    }
    Err(anyhow::anyhow!(
        "cannot resolve {}: too many levels of symbolic links",
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_run_on_one_file_is_refused_until_the_first_ends() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("freshet.db");
        let first = lock_for_run(&db).unwrap().expect("a SQLite file is locked");
        let error = lock_for_run(&db).unwrap_err().to_string();
        assert!(error.contains("another `freshet run` is using"), "{error}");
        assert!(error.contains("freshet.db"), "{error}");
        // Another file is another run's.
        assert!(
            lock_for_run(&dir.path().join("other.db"))
                .unwrap()
                .is_some()
        );
        drop(first);
        assert!(lock_for_run(&db).unwrap().is_some());
        // A database in a folder not made yet is locked in it.
        let nested = dir.path().join("state/deeper/f.db");
        assert!(lock_for_run(&nested).unwrap().is_some());
        // PostgreSQL's workers lease hosts instead.
        let url = Path::new("postgres://u@127.0.0.1:1/db");
        assert!(lock_for_run(url).unwrap().is_none());
    }

    #[cfg(unix)]
    #[test]
    fn another_spelling_of_the_same_file_is_the_same_run() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("state")).unwrap();
        let db = dir.path().join("state/freshet.db");
        // A symlink whose target does not exist yet (the first run creates the database).
        let link = dir.path().join("link.db");
        std::os::unix::fs::symlink("state/freshet.db", &link).unwrap();
        let first = lock_for_run(&link).unwrap().expect("locked");
        for other in [db.clone(), dir.path().join("state/../state/./freshet.db")] {
            let error = lock_for_run(&other).unwrap_err().to_string();
            assert!(
                error.contains("another `freshet run` is using"),
                "{}: {error}",
                other.display()
            );
        }
        drop(first);
        // Once the file exists, and through a link to its folder.
        std::fs::write(&db, b"").unwrap();
        std::os::unix::fs::symlink(dir.path().join("state"), dir.path().join("s")).unwrap();
        let first = lock_for_run(&dir.path().join("s/freshet.db"))
            .unwrap()
            .expect("locked");
        assert!(lock_for_run(&link).is_err());
        assert!(lock_for_run(&db).is_err());
        drop(first);
        // A loop of links is an error that names it, not a hang.
        std::os::unix::fs::symlink("loop-b", dir.path().join("loop-a")).unwrap();
        std::os::unix::fs::symlink("loop-a", dir.path().join("loop-b")).unwrap();
        let error = lock_for_run(&dir.path().join("loop-a"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("symbolic links"), "{error}");
    }
}
