//! `freshet inspect page FILE_OR_URL [--json]`: what freshet reads in one page, through the same
//! [`extract_html`] and fingerprints as the dedup engine and change detection: title, main text,
//! canonical, outgoing links, the exact content fingerprint and the simhash.
//!
//! A URL is fetched by freshet's own fetcher ([`Fetcher`]): the address policy applies to every
//! hop (loopback and private ranges are refused unless `--allow-network` names them), and before
//! each hop robots.txt of that hop's host is read and obeyed (RFC 9309 status handling; the
//! agent token is `freshet`). A file is read from disk; `--base` is the URL it stands for.
//!
//! `--json` prints `{"url", "title", "main_text", "canonical", "links", "fingerprint",
//! "simhash"}`. Both fingerprints are 16-digit lower-case hex strings (a u64 does not survive
//! a JSON number in most readers): `fingerprint` is the xxh3-64 of the normalised main text
//! (`dedup::fingerprint::content_fingerprint`; of the raw bytes when there is no main text, as
//! in the engine), `simhash` the 64-bit simhash of its 2-word shingles (0 when there is none).
//! Exit codes: 0 when the page was read, 1 when it could not be (the reason is on stderr).

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::json;
use url::Url;
use xxhash_rust::xxh3::xxh3_64;

use super::inspect_source::{Source, placeholder_base};
use crate::clock::{Clock, SharedClock, SystemClock};
use crate::dedup::charset;
use crate::dedup::extract::{Extracted, extract_html, extract_plain};
use crate::dedup::fingerprint::{DEFAULT_SHINGLE_WORDS, content_fingerprint, simhash};
use crate::dedup::urlnorm::UrlRules;
use crate::fetch::{Cidr, FetchConfig, FetchError, FetchRequest, Fetcher, HopGate};
use crate::politeness::{HostPool, origin_of};
use crate::robots::{Robots, rules_for_status};

/// robots.txt is read up to this many bytes (RFC 9309 asks for at least 500 KiB).
const ROBOTS_BYTES: u64 = 512 * 1024;

/// Arguments of `freshet inspect page`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub source: Source,
    /// A special-purpose range (e.g. `127.0.0.0/8`) the fetch may connect to; repeatable.
    #[arg(long = "allow-network", value_name = "CIDR")]
    pub allow_networks: Vec<Cidr>,
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
        return fetch(url, &args.allow_networks).await;
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
    let clock: SharedClock = Arc::new(SystemClock);
    let pool = HostPool::new(clock.clone());
    let fetcher = Fetcher::new(FetchConfig {
        allow_networks: allow_networks.to_vec(),
        ..FetchConfig::default()
    })
    .map_err(|e| format!("{e}"))?;
    let gate = RobotsGate {
        fetcher: &fetcher,
        pool: &pool,
        clock: clock.as_ref(),
    };
    let cap = fetcher.config().max_body_bytes;
    let outcome = fetcher
        .fetch_gated(
            &FetchRequest::get(url.clone()),
            cap,
            &pool,
            clock.as_ref(),
            &gate,
        )
        .await;
    if let Some(error) = outcome.error {
        return Err(format!("cannot fetch {url}: {error}"));
    }
    match outcome.status {
        Some(status) if (200..300).contains(&status) => Ok(Page {
            body: outcome.body.map(|b| b.to_vec()).unwrap_or_default(),
            content_type: outcome.content_type,
            url: outcome.final_url,
        }),
        status => Err(format!(
            "{url} answered {}",
            status.map_or("nothing".to_string(), |s| s.to_string())
        )),
    }
}

/// robots.txt of each hop's own origin, fetched through the same fetcher (so the address
/// policy applies to it too).
struct RobotsGate<'a> {
    fetcher: &'a Fetcher,
    pool: &'a HostPool,
    clock: &'a dyn Clock,
}

impl HopGate for RobotsGate<'_> {
    fn admit<'a>(&'a self, url: &'a Url) -> BoxFuture<'a, Result<(), FetchError>> {
        Box::pin(async move {
            let robots = match Url::parse(&origin_of(url)).and_then(|o| o.join("/robots.txt")) {
                Ok(robots_url) => {
                    let out = self
                        .fetcher
                        .fetch_prefix(&robots_url, ROBOTS_BYTES, self.pool, self.clock)
                        .await;
                    let status = if out.error.is_some() && out.status.is_none() {
                        0
                    } else {
                        out.status.unwrap_or(0)
                    };
                    rules_for_status(status, out.body.as_deref().unwrap_or(&[]), "freshet")
                }
                Err(_) => Robots::disallow_all(),
            };
            match robots.disallowed_by(url.as_str()) {
                None => Ok(()),
                Some(rule) => Err(FetchError::Disallowed {
                    url: url.to_string(),
                    rule,
                }),
            }
        })
    }
}
