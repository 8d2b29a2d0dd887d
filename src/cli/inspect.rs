//! `freshet inspect`: show how freshet reads one robots.txt, sitemap or feed.
//!
//! The document comes from a path (read from disk; `--base` is its URL) or from an http(s) URL,
//! fetched as `freshet run` fetches it (see [`super::inspect_fetch`]: the address policy on every
//! hop, robots.txt asked before each hop of a sitemap or feed). Output is a readable summary, or
//! JSON with `--json`. Exit codes: 0 when the document was read (problems inside it are listed),
//! 1 when it could not be read at all or freshet would not request it.

use std::io::{BufReader, Write};

use serde_json::json;
use url::Url;

use super::inspect_fetch::InspectFetcher;
pub use super::inspect_source::Source;
use super::inspect_source::placeholder_base;
use crate::clock::{Clock, SystemClock, ms_to_datetime};
use crate::discover::{feed, sitemap};
use crate::fetch::FetchError;
use crate::robots;

/// Largest sitemap or feed read, fetched or from a file: what `run` reads (the sitemap
/// protocol's 50 MiB; after gzip the parser's own cap applies).
const MAX_FETCH_BYTES: u64 = crate::refresher::MAX_DOCUMENT_BYTES;

/// Subcommands of `freshet inspect`.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Whether robots.txt lets an agent fetch a URL; its Crawl-delay and Sitemap lines.
    Robots(RobotsArgs),
    /// The URLs, hints, child sitemaps and errors of one sitemap (XML, text, gzip, RSS/Atom).
    Sitemap(SitemapArgs),
    /// The title, ttl and entries of one feed (RSS, Atom, JSON Feed).
    Feed(FeedArgs),
    /// Near-duplicate groups among local HTML or text files, to tune the thresholds.
    Duplicates(super::inspect_duplicates::Args),
    /// Title, main text, canonical, links and fingerprints of one page (file or URL).
    Page(super::inspect_page::Args),
}

/// Arguments of `freshet inspect robots`.
#[derive(Debug, clap::Args)]
pub struct RobotsArgs {
    #[command(flatten)]
    pub source: Source,
    /// The crawler's product token (`freshet`; a `/version` suffix is ignored).
    #[arg(long, default_value = "freshet")]
    pub agent: String,
    /// The URL (or path) to check; default: the root of the robots.txt's host.
    #[arg(long)]
    pub url: Option<String>,
}

/// Arguments of `freshet inspect sitemap`.
#[derive(Debug, clap::Args)]
pub struct SitemapArgs {
    #[command(flatten)]
    pub source: Source,
    /// Hosts whose robots.txt lists this sitemap (cross-submission); repeatable.
    #[arg(long = "cross-submitted", value_name = "HOST")]
    pub cross_submitted: Vec<String>,
}

/// Arguments of `freshet inspect feed`.
#[derive(Debug, clap::Args)]
pub struct FeedArgs {
    #[command(flatten)]
    pub source: Source,
}

/// Runs `freshet inspect`; returns the exit code.
pub async fn run(command: Command) -> anyhow::Result<u8> {
    match command {
        Command::Robots(args) => inspect_robots(args).await,
        Command::Sitemap(args) => inspect_sitemap(args).await,
        Command::Feed(args) => inspect_feed(args).await,
        Command::Duplicates(args) => super::inspect_duplicates::run(args).await,
        Command::Page(args) => super::inspect_page::run(args).await,
    }
}

/// A loaded document: its bytes, its URL, and the HTTP status (200 for files).
struct Loaded {
    body: Vec<u8>,
    url: Url,
    status: u16,
}

/// Why a document was not read.
enum LoadError {
    /// freshet would not send the request (a refused address, a Disallow on some hop).
    Refused(String),
    /// The file or URL could not be read.
    Unread(String),
}

impl LoadError {
    fn message(&self) -> &str {
        match self {
            Self::Refused(m) | Self::Unread(m) => m,
        }
    }
}

/// What is read: a robots.txt (its first 500 KiB, fetched without asking robots.txt) or a
/// sitemap or feed (robots.txt asked before every hop).
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Robots,
    Document,
}

/// Reads a file or fetches a URL (as `freshet run` would: see [`InspectFetcher`]); `Err`
/// carries the message for the user.
async fn load(source: &Source, kind: Kind) -> Result<Loaded, LoadError> {
    let arg = &source.file_or_url;
    if arg.starts_with("http://") || arg.starts_with("https://") {
        let url = Url::parse(arg).map_err(|e| LoadError::Unread(format!("bad URL {arg}: {e}")))?;
        let inspect = InspectFetcher::new(&source.allow_networks).map_err(LoadError::Unread)?;
        let fetched = match kind {
            Kind::Robots => inspect.robots(&url).await,
            Kind::Document => inspect.document(&url, MAX_FETCH_BYTES).await,
        }
        .map_err(|e| match e {
            FetchError::AddressRefused { .. } | FetchError::Disallowed { .. } => {
                LoadError::Refused(format!("{e}"))
            }
            other => LoadError::Unread(format!("cannot fetch {other}")),
        })?;
        return Ok(Loaded {
            body: fetched.body,
            url: fetched.url,
            status: fetched.status,
        });
    }
    // Local files get the same cap as fetched ones (and no FIFO or device).
    let body = crate::localfile::read_regular(std::path::Path::new(arg), MAX_FETCH_BYTES).map_err(
        |e| {
            LoadError::Unread(match e {
                crate::localfile::LocalFileError::Io { source, .. } => {
                    format!("cannot read {arg}: {source}")
                }
                other => other.to_string(),
            })
        },
    )?;
    Ok(Loaded {
        body,
        url: source.base.clone().unwrap_or_else(placeholder_base),
        status: 200,
    })
}

async fn inspect_robots(args: RobotsArgs) -> anyhow::Result<u8> {
    let loaded = match load(&args.source, Kind::Robots).await {
        Ok(l) => l,
        // An unreachable robots.txt is an answer too (disallow all), but not for a local file
        // nor for an address freshet refuses to connect to.
        Err(e) if !args.source.file_or_url.starts_with("http") => return fail(e.message()),
        Err(LoadError::Refused(msg)) => return fail(&msg),
        Err(LoadError::Unread(msg)) => {
            eprintln!("warning: {msg}: treating robots.txt as unreachable");
            Loaded {
                body: Vec::new(),
                url: Url::parse(&args.source.file_or_url)?,
                status: 0,
            }
        }
    };
    let rules = robots::rules_for_status(loaded.status, &loaded.body, &args.agent);
    // A path (or a URL) resolved against the robots.txt's own URL: the line `url:` says what
    // was checked.
    let asked = args.url.as_deref().unwrap_or("/");
    let target = match loaded.url.join(asked) {
        Ok(url) => url.to_string(),
        Err(e) => return fail(&format!("--url {asked}: not a URL or path: {e}")),
    };
    let allowed = rules.is_allowed(&target);
    let delay = rules.crawl_delay().map(|d| d.as_secs_f64());
    if args.source.json {
        print_json(&json!({
            "status": loaded.status,
            "status_note": status_note(loaded.status, &rules),
            "agent": args.agent,
            "group": rules.group_match(),
            "url": target,
            "allowed": allowed,
            "disallowed_by": rules.disallowed_by(&target),
            "crawl_delay_s": delay,
            "sitemaps": rules.sitemaps(),
        }))?;
        return Ok(0);
    }
    let mut out = super::output::stdout().lock();
    writeln!(out, "status:      {}", status_note(loaded.status, &rules))?;
    writeln!(
        out,
        "agent:       {} ({:?} group)",
        args.agent,
        rules.group_match()
    )?;
    writeln!(out, "url:         {target}")?;
    writeln!(out, "allowed:     {}", if allowed { "yes" } else { "no" })?;
    if let Some(rule) = rules.disallowed_by(&target) {
        writeln!(out, "rule:        {rule}")?;
    }
    match delay {
        Some(d) => writeln!(out, "crawl delay: {d} s")?,
        None => writeln!(out, "crawl delay: none")?,
    }
    writeln!(out, "sitemaps:    {}", rules.sitemaps().len())?;
    for s in rules.sitemaps() {
        writeln!(out, "  {s}")?;
    }
    Ok(0)
}

fn status_note(status: u16, rules: &robots::Robots) -> String {
    match status {
        200..=299 => format!("{status}: rules parsed"),
        0 => "unreachable: disallow all, retry soon".to_string(),
        _ if rules.retry_soon() => format!("{status}: disallow all, retry soon"),
        _ => format!("{status}: no robots.txt, allow all"),
    }
}

async fn inspect_sitemap(args: SitemapArgs) -> anyhow::Result<u8> {
    let now = ms_to_datetime(SystemClock.now_ms());
    let path = &args.source.file_or_url;
    let is_url = args.source.is_url();
    let base = args.source.base.clone();
    let mut ctx = sitemap::SitemapContext::new(base.clone().unwrap_or_else(placeholder_base), now);
    ctx.cross_submitted_hosts = args.cross_submitted.clone();
    // A saved file without --base has no host: it lists what it holds (see SitemapContext).
    ctx.home_known = is_url || base.is_some();
    let doc = if is_url {
        let loaded = match load(&args.source, Kind::Document).await {
            Ok(l) => l,
            Err(e) => return fail(e.message()),
        };
        if !(200..300).contains(&loaded.status) {
            return fail(&format!("{path}: HTTP status {}", loaded.status));
        }
        ctx.url = loaded.url;
        sitemap::parse(&loaded.body[..], &ctx)
    } else {
        // A file is streamed, as the refresher streams bodies: never loaded whole.
        match std::fs::File::open(path) {
            Ok(file) => sitemap::parse(BufReader::new(file), &ctx),
            Err(e) => return fail(&format!("cannot read {path}: {e}")),
        }
    };
    let readable = doc.kind != sitemap::SitemapKind::Unknown;
    if args.source.json {
        print_json(&json!({
            "kind": doc.kind,
            "urls": doc.urls.iter().map(|u| json!({
                "loc": u.loc,
                "lastmod": u.lastmod.map(|d| d.to_rfc3339()),
                "changefreq": u.changefreq,
                "priority": u.priority,
            })).collect::<Vec<_>>(),
            "document_date": doc.lastmod.map(|d| d.to_rfc3339()),
            "sitemaps": doc.sitemaps.iter().map(|s| json!({
                "loc": s.loc,
                "lastmod": s.lastmod.map(|d| d.to_rfc3339()),
            })).collect::<Vec<_>>(),
            "errors": doc.errors.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "errors_dropped": doc.errors_dropped,
        }))?;
    } else {
        print_sitemap(&doc)?;
    }
    Ok(if readable { 0 } else { 1 })
}

fn print_sitemap(doc: &sitemap::SitemapDoc) -> std::io::Result<()> {
    let mut out = super::output::stdout().lock();
    writeln!(
        out,
        "kind: {:?}   urls: {}   child sitemaps: {}   errors: {}",
        doc.kind,
        doc.urls.len(),
        doc.sitemaps.len(),
        doc.errors.len() + doc.errors_dropped
    )?;
    if let Some(d) = doc.lastmod {
        writeln!(out, "document date: {}", d.to_rfc3339())?;
    }
    for u in &doc.urls {
        let lastmod = u.lastmod.map_or("-".to_string(), |d| d.to_rfc3339());
        let freq = u.changefreq.map_or("-", |c| c.as_str());
        let prio = u.priority.map_or("-".to_string(), |p| format!("{p:.1}"));
        writeln!(out, "{lastmod:25} {freq:8} {prio:>4}  {}", u.loc)?;
    }
    if !doc.sitemaps.is_empty() {
        writeln!(out, "child sitemaps:")?;
        for s in &doc.sitemaps {
            let lastmod = s.lastmod.map_or("-".to_string(), |d| d.to_rfc3339());
            writeln!(out, "{lastmod:25} {}", s.loc)?;
        }
    }
    if !doc.errors.is_empty() {
        writeln!(out, "errors:")?;
        for e in &doc.errors {
            writeln!(out, "  {e}")?;
        }
        if doc.errors_dropped > 0 {
            writeln!(out, "  ... and {} more", doc.errors_dropped)?;
        }
    }
    Ok(())
}

async fn inspect_feed(args: FeedArgs) -> anyhow::Result<u8> {
    let loaded = match load(&args.source, Kind::Document).await {
        Ok(l) => l,
        Err(e) => return fail(e.message()),
    };
    if !(200..300).contains(&loaded.status) {
        return fail(&format!(
            "{}: HTTP status {}",
            args.source.file_or_url, loaded.status
        ));
    }
    let doc = match feed::parse(&loaded.body, &loaded.url) {
        Ok(doc) => doc,
        Err(e) => {
            // A file read without --base stands for no URL: the error names the file.
            let path = &args.source.file_or_url;
            let message = e.to_string();
            return fail(&match message.strip_prefix(loaded.url.as_str()) {
                Some(rest) if !args.source.is_url() && args.source.base.is_none() => {
                    format!("{path}{rest}")
                }
                _ => message,
            });
        }
    };
    if args.source.json {
        print_json(&json!({
            "title": doc.title,
            "ttl_minutes": doc.ttl_minutes,
            "entries": doc.entries.iter().map(|e| json!({
                "id": e.id,
                "link": e.link,
                "published": e.published.map(|d| d.to_rfc3339()),
                "updated": e.updated.map(|d| d.to_rfc3339()),
            })).collect::<Vec<_>>(),
        }))?;
        return Ok(0);
    }
    let mut out = super::output::stdout().lock();
    writeln!(out, "title:   {}", doc.title.as_deref().unwrap_or("-"))?;
    match doc.ttl_minutes {
        Some(t) => writeln!(out, "ttl:     {t} min")?,
        None => writeln!(out, "ttl:     none")?,
    }
    writeln!(out, "entries: {}", doc.entries.len())?;
    for e in &doc.entries {
        let date =
            |d: Option<chrono::DateTime<chrono::Utc>>| d.map_or("-".into(), |d| d.to_rfc3339());
        writeln!(
            out,
            "{:25} {:25} {}  (id {})",
            date(e.published),
            date(e.updated),
            e.link.as_deref().unwrap_or("-"),
            e.id
        )?;
    }
    Ok(0)
}

fn print_json(value: &serde_json::Value) -> anyhow::Result<()> {
    let mut out = super::output::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

/// Reports a document that could not be read; exit code 1.
fn fail(message: &str) -> anyhow::Result<u8> {
    eprintln!("error: {message}");
    Ok(1)
}
