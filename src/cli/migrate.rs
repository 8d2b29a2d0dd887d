//! `freshet migrate --from freshet.db --to postgres://...`: moves an existing database, every
//! row of every table, into a new, empty one (SQLite into PostgreSQL, or back), so that a
//! deployment that outgrows one machine keeps what it learnt.

use std::path::PathBuf;

use crate::store::Store;

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

/// A database named for a message (a URL's password hidden).
fn shown(db: &std::path::Path) -> String {
    crate::store::redact(&db.to_string_lossy())
}
