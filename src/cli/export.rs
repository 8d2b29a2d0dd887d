//! `freshet export warc --out FILE [--db PATH]`: the stored documents (the latest body of each
//! canonical page) as WARC 1.1 `response` records after one `warcinfo` record.

use std::io::BufWriter;
use std::path::PathBuf;

use anyhow::Context as _;

use crate::clock::{Clock, SystemClock};
use crate::store::Store;
use crate::warc::WarcWriter;

/// Arguments of `freshet export warc`.
#[derive(Debug, clap::Args)]
pub struct WarcArgs {
    /// The WARC file to write (replaced if it exists).
    #[arg(long)]
    pub out: PathBuf,
    /// The database file.
    #[arg(long, default_value = "freshet.db")]
    pub db: PathBuf,
}

/// Subcommands of `freshet export`.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Write the stored documents as a WARC 1.1 file.
    Warc(WarcArgs),
}

/// Runs `freshet export`; returns the exit code.
pub async fn run(command: Command) -> anyhow::Result<u8> {
    match command {
        Command::Warc(args) => warc(args).await,
    }
}

async fn warc(args: WarcArgs) -> anyhow::Result<u8> {
    crate::store::refuse_an_output_over_a_database(&args.out, &args.db)?;
    let store = Store::open_existing(&args.db).await?;
    let documents = store.documents().await;
    store.close().await;
    let documents = documents.with_context(|| format!("reading {}", args.db.display()))?;
    let file = std::fs::File::create(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let mut writer = WarcWriter::new(BufWriter::new(file));
    let name = args
        .out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let software = concat!("freshet/", env!("CARGO_PKG_VERSION"));
    let write = |writer: &mut WarcWriter<_>| -> std::io::Result<()> {
        writer.warcinfo(
            SystemClock.now_ms(),
            &name,
            &[
                ("software", software),
                ("format", "WARC File Format 1.1"),
                (
                    "description",
                    "latest body of each canonical page kept by freshet",
                ),
            ],
        )?;
        for doc in &documents {
            writer.response(
                &doc.url,
                doc.fetched_ms,
                doc.content_type.as_deref(),
                &doc.body,
            )?;
        }
        Ok(())
    };
    write(&mut writer).with_context(|| format!("writing {}", args.out.display()))?;
    let records = writer.records();
    writer
        .finish()
        .with_context(|| format!("writing {}", args.out.display()))?;
    // On standard error, as `report html` says what it wrote: `--out /dev/stdout` streams the
    // WARC, which a line after it would spoil.
    eprintln!(
        "wrote {} response record(s) and a warcinfo record to {}",
        records.saturating_sub(1),
        args.out.display()
    );
    Ok(0)
}
