//! `freshet inspect page FILE_OR_URL [--json]`: what freshet reads in one page, through the same
//! [`extract_html`] and fingerprints as the dedup engine and change detection: title, main text,
//! canonical, outgoing links, the exact content fingerprint and the simhash.
//!
//! A URL is fetched as `freshet run` would fetch it ([`InspectFetcher`]: the address policy on
//! every hop, robots.txt of each hop's host obeyed). A file is read from disk; `--base` is the
//! URL it stands for.
//!
//! `--json` prints `{"url", "title", "main_text", "canonical", "links", "fingerprint",
//! "simhash"}`. Both fingerprints are 16-digit lower-case hex strings (a u64 does not survive
//! a JSON number in most readers): `fingerprint` is the xxh3-64 of the normalised main text
//! (`dedup::fingerprint::content_fingerprint`; of the raw bytes when there is no main text, as
//! in the engine), `simhash` the 64-bit simhash of its 2-word shingles (0 when there is none).
//! Exit codes: 0 when the page was read, 1 when it could not be (the reason is on stderr).

use serde_json::json;
use url::Url;
use xxhash_rust::xxh3::xxh3_64;

use super::inspect_fetch::InspectFetcher;
use super::inspect_source::{Source, placeholder_base};
use crate::dedup::charset;
use crate::dedup::extract::{Extracted, extract_html, extract_plain};
use crate::dedup::fingerprint::{DEFAULT_SHINGLE_WORDS, content_fingerprint, simhash};
use crate::dedup::urlnorm::UrlRules;
use crate::fetch::{Cidr, FetchConfig};

/// Arguments of `freshet inspect page`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub source: Source,
}

/// The page as read: its bytes, `Content-Type`, and the URL it came from.
struct Page {
    body: Vec<u8>,
    content_type: Option<String>,
    url: Url,
}

/// Runs `freshet inspect page`; returns the exit code.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let page = match load(&args).await {
        Ok(page) => page,
        Err(message) => {
            eprintln!("error: {message}");
            return Ok(1);
        }
    };
    let decoded = charset::decode(&page.body, page.content_type.as_deref());
    let html = page.content_type.as_deref().map_or_else(
        || {
            let name = args.source.file_or_url.to_ascii_lowercase();
            [".htm", ".html", ".xhtml"]
                .iter()
                .any(|e| name.ends_with(e))
                || decoded.text.trim_start().starts_with('<')
        },
        |ct| ct.contains("html"),
    );
    let extracted: Extracted = if html {
        extract_html(&decoded.text, Some(&page.url), &UrlRules::default())
    } else {
        extract_plain(&decoded.text)
    };
    let (fingerprint, sim) = if extracted.main_text.is_empty() {
        (xxh3_64(&page.body), 0)
    } else {
        (
            content_fingerprint(&extracted.main_text),
            simhash(&extracted.main_text, DEFAULT_SHINGLE_WORDS),
        )
    };
    if args.source.json {
        let value = json!({
            "url": page.url.as_str(),
            "title": extracted.title,
            "main_text": extracted.main_text,
            "canonical": extracted.canonical,
            "links": extracted.links,
            "fingerprint": format!("{fingerprint:016x}"),
            "simhash": format!("{sim:016x}"),
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        println!("url:         {}", page.url);
        println!("title:       {}", extracted.title.as_deref().unwrap_or("-"));
        println!(
            "canonical:   {}",
            extracted.canonical.as_deref().unwrap_or("-")
        );
        println!("fingerprint: {fingerprint:016x}");
        println!("simhash:     {sim:016x}");
        println!(
            "main text ({} words):",
            extracted.main_text.split_whitespace().count()
        );
        for line in extracted.main_text.lines() {
            println!("  {line}");
        }
        println!("links ({}):", extracted.links.len());
        for link in &extracted.links {
            println!("  {link}");
        }
    }
    Ok(0)
}

async fn load(args: &Args) -> Result<Page, String> {
    let arg = &args.source.file_or_url;
    if arg.starts_with("http://") || arg.starts_with("https://") {
        let url = Url::parse(arg).map_err(|e| format!("bad URL {arg}: {e}"))?;
        return fetch(url, &args.source.allow_networks).await;
    }
    let max = FetchConfig::default().max_body_bytes;
    let body =
        crate::localfile::read_regular(std::path::Path::new(arg), max).map_err(|e| match e {
            crate::localfile::LocalFileError::Io { source, .. } => {
                format!("cannot read {arg}: {source}")
            }
            other => other.to_string(),
        })?;
    Ok(Page {
        body,
        content_type: None,
        url: args.source.base.clone().unwrap_or_else(placeholder_base),
    })
}

/// One GET through freshet's fetcher, robots.txt asked before every hop.
async fn fetch(url: Url, allow_networks: &[Cidr]) -> Result<Page, String> {
    let inspect = InspectFetcher::new(allow_networks)?;
    let fetched = inspect
        .document(&url, inspect.max_body_bytes())
        .await
        .map_err(|e| format!("cannot fetch {e}"))?;
    if !(200..300).contains(&fetched.status) {
        return Err(format!("{url} answered {}", fetched.status));
    }
    Ok(Page {
        body: fetched.body,
        content_type: fetched.content_type,
        url: fetched.url,
    })
}
