//! `freshet migrate --from freshet.db --to postgres://...`: moves an existing database, every
//! row of every table, into a new, empty one (SQLite into PostgreSQL, or back), so that a
//! deployment that outgrows one machine keeps what it learnt.

use std::path::{Path, PathBuf};

use crate::store::run_lock::{self, Busy, RunLock};
use crate::store::{Location, Store};

/// Arguments of `freshet migrate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The database to copy: a SQLite file or a postgres:// URL (it is only read).
    #[arg(long)]
    pub from: PathBuf,
    /// The database to copy into: a SQLite file or a postgres:// URL, created and migrated if
    /// needed, holding no sites, URLs or observations yet.
    #[arg(long)]
    pub to: PathBuf,
}

/// Runs `freshet migrate`; returns the exit code.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    // Held to the end: no run starts on either file while the copy is made.
    let _locks = lock_both(&args.from, &args.to)?;
    let source = Store::open_existing(&args.from).await?;
    let target = Store::open(&args.to).await?;
    let copied = source.copy_into(&target).await;
    source.close().await;
    target.close().await;
    let copied = copied?;
    let rows: u64 = copied.iter().map(|(_, n)| n).sum();
    for (table, n) in &copied {
        println!("{table:<24} {n:>12}");
    }
    println!(
        "copied {rows} rows in {} tables from {} to {}",
        copied.len(),
        shown(&args.from),
        shown(&args.to)
    );
    Ok(0)
}

/// The run locks of both databases that are SQLite files, so that no `freshet run` or demo
/// writes to the source while it is copied (what it wrote after would be missing from the copy)
/// or to the target beside the copy. Refuses a target that is the source.
fn lock_both(from: &Path, to: &Path) -> anyhow::Result<Vec<RunLock>> {
    if let (Location::SqliteFile(from_file), Location::SqliteFile(to_file)) =
        (Location::parse(from)?, Location::parse(to)?)
        && run_lock::file_the_path_leads_to(from_file)?
            == run_lock::file_the_path_leads_to(to_file)?
    {
        anyhow::bail!(
            "--from {} and --to {} are one file: freshet migrate copies into another, empty \
             database",
            from.display(),
            to.display()
        );
    }
    let mut locks = Vec::new();
    for (db, role) in [(from, "copy from"), (to, "copy into")] {
        if role == "copy from"
            && matches!(Location::parse(db)?, Location::SqliteFile(f) if !f.exists())
        {
            // Opening it says there is none; no lock file is left beside nothing.
            continue;
        }
        let lock =
            run_lock::lock_for_run(db).map_err(|error| match error.downcast_ref::<Busy>() {
                Some(busy) => anyhow::anyhow!(
                    "a `freshet run` or `freshet demo` is using {} (it holds {}): stop it before \
                 migrating; nothing was copied. freshet migrate will not {role} a database \
                 while a run writes to it",
                    busy.db.display(),
                    busy.lock.display()
                ),
                None => error,
            })?;
        locks.extend(lock);
    }
    Ok(locks)
}

/// A database named for a message (a URL's password hidden).
fn shown(db: &std::path::Path) -> String {
    crate::store::redact(&db.to_string_lossy())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database with one site in it, as a run leaves it.
    async fn database_with_a_site(path: &Path) {
        let store = Store::open(path).await.unwrap();
        let site = crate::store::sites::SiteRecord {
            name: "s",
            weight: 1.0,
            requests_per_day: 2880.0,
            source_file: None,
        };
        store.upsert_site(&site, 0).await.unwrap();
        store.close().await;
    }

    #[tokio::test]
    async fn a_database_a_run_is_using_is_neither_copied_from_nor_into() {
        let dir = tempfile::tempdir().unwrap();
        let (from, to) = (dir.path().join("from.db"), dir.path().join("to.db"));
        database_with_a_site(&from).await;
        for busy in [&from, &to] {
            let running = run_lock::lock_for_run(busy).unwrap();
            let args = Args {
                from: from.clone(),
                to: to.clone(),
            };
            let error = run(args).await.unwrap_err().to_string();
            assert!(error.contains("stop it before migrating"), "{error}");
            assert!(error.contains(&busy.display().to_string()), "{error}");
            assert!(!to.exists(), "nothing is written into the target");
            drop(running);
        }
        let args = Args {
            from: from.clone(),
            to: to.clone(),
        };
        assert_eq!(run(args).await.unwrap(), 0, "once the run is gone");
        let copy = Store::open_existing(&to).await.unwrap();
        assert_eq!(copy.sites().await.unwrap().len(), 1);
        copy.close().await;
    }

    #[tokio::test]
    async fn a_database_is_not_migrated_into_itself() {
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("from.db");
        database_with_a_site(&from).await;
        let args = Args {
            from: from.clone(),
            to: dir.path().join(".").join("from.db"),
        };
        let error = run(args).await.unwrap_err().to_string();
        assert!(error.contains("are one file"), "{error}");
    }
}
