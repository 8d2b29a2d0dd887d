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

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use super::Location;

/// The lock a run holds while it runs (released when dropped or when the process ends).
#[derive(Debug)]
pub struct RunLock {
    _file: File,
}

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
    let lock = lock_path(path);
    // A --db in a folder not made yet: the store makes it too.
    if let Some(parent) = lock.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|error| {
            anyhow::anyhow!("cannot create the folder {}: {error}", parent.display())
        })?;
    }
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock)
        .map_err(|error| anyhow::anyhow!("cannot open the run lock {}: {error}", lock.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(Some(RunLock { _file: file })),
        Err(TryLockError::WouldBlock) => anyhow::bail!(
            "another `freshet run` is using {} (it holds {}): two runs on one SQLite file would \
             each send requests to every host at its full rate. Stop the other run first, or \
             give this one another --db; for several workers, use PostgreSQL (--db \
             postgres://..., see the README)",
            path.display(),
            lock.display()
        ),
        Err(TryLockError::Error(error)) => {
            anyhow::bail!("cannot lock {}: {error}", lock.display())
        }
    }
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
}
