//! `freshet report html`: one self-contained HTML page (inline CSS and SVG, nothing fetched)
//! with plots of how stale the copies are and were, how the budget and the hosts' limits were
//! spent, what failed, the stalest copies with why, and the duplicate classes.
//!
//! # Layout
//! - [`gather`]: reads the store into plain data (the SQL lives in
//!   [`crate::store::report_data`]); staleness judged by the same code as `report age`.
//! - [`plots`]: the plots, drawn with plotters' SVG backend.
//! - [`page`]: the HTML document, its CSS (phone and print) and the tables.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;

use crate::clock::{Clock, SystemClock};
use crate::store::Store;

pub mod gather;
pub mod page;
pub mod plots;

/// Options of `freshet report html`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// The database file.
    #[arg(long, default_value = "freshet.db")]
    pub db: PathBuf,
    /// Where to write the page; `-` for standard output.
    #[arg(long, default_value = "freshet-report.html")]
    pub out: PathBuf,
}

/// The page for the database at `db`.
pub async fn html_for(db: &std::path::Path) -> anyhow::Result<String> {
    let store = Store::open_existing(db).await?;
    let data = async {
        let now = store.report_now(SystemClock.now_ms()).await?;
        gather::gather(&store, now).await
    }
    .await;
    store.close().await;
    page::render(&data?, &db.display().to_string())
}

/// Runs `freshet report html`; returns the exit code.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    if args.out.as_os_str() != "-" {
        crate::store::refuse_an_output_over_a_database(&args.out, &args.db)?;
    }
    let html = html_for(&args.db).await?;
    if args.out.as_os_str() == "-" {
        let mut stdout = std::io::stdout().lock();
        match stdout
            .write_all(html.as_bytes())
            .and_then(|()| stdout.flush())
        {
            Ok(()) => {}
            // A reader that stops early (`| head`) is not an error.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            Err(e) => return Err(e).context("writing the report to standard output"),
        }
    } else {
        std::fs::write(&args.out, &html)
            .with_context(|| format!("writing the report to {}", args.out.display()))?;
        eprintln!("wrote {} ({} bytes)", args.out.display(), html.len());
    }
    Ok(0)
}
