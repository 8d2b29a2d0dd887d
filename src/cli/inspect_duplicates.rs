//! `freshet inspect duplicates FILE... [--json]`: runs main-text extraction, fingerprints and the
//! near-duplicate index over local HTML or text files and prints the groups found, so thresholds
//! can be tuned before a crawl (`-k` distance, `--shingle` size).

use std::path::PathBuf;

use crate::dedup::fingerprint::DEFAULT_SHINGLE_WORDS;
use crate::dedup::inspect::{FileFingerprint, Group, fingerprint_file, group, groups_json};
use crate::dedup::resemblance::NEAR_DUPLICATE_RESEMBLANCE;

/// Arguments of `freshet inspect duplicates`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// HTML (.html, .htm, or starting with `<`) or plain-text files to compare.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Print `{"groups": [[file, ..], ..], "pairs": [{"a", "b", "resemblance",
    /// "simhash_distance"}, ..]}` instead of text.
    #[arg(long)]
    pub json: bool,
    /// Largest simhash Hamming distance (of 64 bits) that makes two files candidates (LSH bands
    /// find candidates too); every candidate pair is verified by resemblance.
    #[arg(short = 'k', long = "distance", default_value_t = 3,
          value_parser = clap::value_parser!(u32).range(0..=31))]
    pub distance: u32,
    /// Words per simhash shingle.
    #[arg(long, default_value_t = DEFAULT_SHINGLE_WORDS as u32,
          value_parser = clap::value_parser!(u32).range(1..=16))]
    pub shingle: u32,
    /// Also print every file's word count and fingerprints (text output only).
    #[arg(short, long)]
    pub verbose: bool,
}

/// Runs `freshet inspect duplicates`; returns 0, or 1 when a file could not be read (the others
/// are still compared).
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let mut files = Vec::with_capacity(args.files.len());
    let mut failed = false;
    for path in &args.files {
        match tokio::fs::read(path).await {
            Ok(bytes) => files.push(fingerprint_file(
                &path.display().to_string(),
                &bytes,
                args.shingle as usize,
            )),
            Err(err) => {
                eprintln!("error: cannot read {}: {err}", path.display());
                failed = true;
            }
        }
    }
    let groups = group(&files, args.distance);
    let output = if args.json {
        groups_json(&groups).to_string()
    } else {
        render_text(&files, &groups, &args)
    };
    crate::outln!("{output}");
    Ok(u8::from(failed))
}

fn render_text(files: &[FileFingerprint], groups: &[Group], args: &Args) -> String {
    let mut out = format!(
        "{} file(s), {} group(s) of near-duplicates (verified resemblance >= {}; candidates: \
         simhash distance <= {} with shingles of {} word(s), or a shared LSH band)",
        files.len(),
        groups.len(),
        NEAR_DUPLICATE_RESEMBLANCE,
        args.distance,
        args.shingle
    );
    if args.verbose {
        for f in files {
            out.push_str(&format!(
                "\n  {}  words={} content={:016x} simhash={:016x}",
                f.name, f.words, f.content_fp, f.simhash
            ));
        }
    }
    for (i, g) in groups.iter().enumerate() {
        out.push_str(&format!(
            "\ngroup {} ({} files, largest distance {}):",
            i + 1,
            g.files.len(),
            g.max_distance
        ));
        for f in &g.files {
            out.push_str(&format!("\n  {f}"));
        }
        for p in &g.pairs {
            out.push_str(&format!(
                "\n  resemblance {:.3} (simhash distance {}): {} ~ {}",
                p.resemblance, p.simhash_distance, p.a, p.b
            ));
        }
    }
    out
}
