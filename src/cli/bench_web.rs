//! The loopback web of `freshet bench`'s `run` part: `urls` pages spread over `hosts` virtual
//! hosts (`h{n}.bench.test`) on one `127.0.0.1` port, routed by the `Host` header, with no
//! politeness limit of its own.
//!
//! Per host: `/robots.txt` (allows everything), `/sitemap.xml` (an index) -> `/sitemap-{k}.xml`
//! (up to 50,000 pages each), and its pages `/p/{i}` (page `i` lives on host `i % hosts`), each
//! about 17 KB of HTML with an `ETag` naming its version, answering 304 to a matching
//! `If-None-Match`. [`BenchWeb::next_generation`] changes one page in ten (a fixed hash of the page
//! and the generation picks which), so a pass over pages already fetched meets the 90% 304 /
//! 10% changed mix. The server counts what it answered, and when the first and last page request
//! arrived (wall clock: this is a benchmark), so that throughput is read from the server's side.
//! It serves from a thread of its own ([`BenchWeb::server_cpu_seconds`]), so the CPU the
//! refresher spends can be told apart from the server's.

use std::fmt::Write as _;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use tokio::sync::oneshot;

/// Pages per sitemap file (the protocol's limit).
const PAGES_PER_SITEMAP: usize = 50_000;
/// The size a page's body reaches at least.
const PAGE_BYTES: usize = 17_000;
/// One page in this many changes at each generation.
const CHANGE_ONE_IN: u64 = 10;

/// What the server answered since the counts were last reset.
#[derive(Debug, Clone, Copy, Default)]
pub struct PageCounts {
    /// Page requests answered 200 (a body sent).
    pub ok: u64,
    /// Page requests answered 304.
    pub not_modified: u64,
    /// Everything else: robots.txt, sitemaps, unknown paths.
    pub other: u64,
    /// Wall seconds between the first and the last page request.
    pub page_seconds: f64,
}

#[derive(Debug, Default)]
struct Counters {
    ok: AtomicU64,
    not_modified: AtomicU64,
    other: AtomicU64,
    /// First and last page request.
    span: Mutex<Option<(Instant, Instant)>>,
}

impl Counters {
    fn page_request(&self) {
        let now = Instant::now();
        let mut span = self.span.lock().unwrap_or_else(|e| e.into_inner());
        *span = Some(span.map_or((now, now), |(first, _)| (first, now)));
    }
}

#[derive(Debug)]
struct Web {
    urls: usize,
    hosts: usize,
    generation: AtomicU32,
    counters: Counters,
}

/// The running server. [`BenchWeb::stop`] shuts it down.
#[derive(Debug)]
pub struct BenchWeb {
    /// The loopback address every virtual host is served on.
    pub addr: SocketAddr,
    web: Arc<Web>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// The CPU-time clock of the server's thread.
    thread_clock: libc::clockid_t,
}

/// The name of virtual host `n`.
pub fn host_name(n: usize) -> String {
    format!("h{n}.bench.test")
}

impl BenchWeb {
    /// Serves `urls` pages over `hosts` hosts on `127.0.0.1` (an ephemeral port).
    pub async fn start(urls: usize, hosts: usize) -> std::io::Result<Self> {
        let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let web = Arc::new(Web {
            urls,
            hosts: hosts.max(1),
            generation: AtomicU32::new(0),
            counters: Counters::default(),
        });
        let app = Router::new().fallback(answer).with_state(Arc::clone(&web));
        let (tx, rx) = oneshot::channel::<()>();
        // One thread with a runtime of its own: its CPU time is the server's alone.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let listener = {
            let _in_runtime = runtime.enter();
            tokio::net::TcpListener::from_std(listener)?
        };
        let thread = std::thread::Builder::new()
            .name("bench-web".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let serve = axum::serve(listener, app).with_graceful_shutdown(async {
                        let _ = rx.await;
                    });
                    if let Err(error) = serve.await {
                        tracing::warn!(%error, "bench web server stopped with an error");
                    }
                });
            })?;
        let mut thread_clock: libc::clockid_t = 0;
        // SAFETY: the thread is alive (joined only in `stop`), and the call writes one clockid_t.
        let found = unsafe {
            libc::pthread_getcpuclockid(
                std::os::unix::thread::JoinHandleExt::as_pthread_t(&thread),
                &mut thread_clock,
            )
        };
        if found != 0 {
            return Err(std::io::Error::from_raw_os_error(found));
        }
        Ok(Self {
            addr,
            web,
            shutdown: Some(tx),
            thread: Some(thread),
            thread_clock,
        })
    }

    /// CPU seconds the server's thread has used (user and system).
    pub fn server_cpu_seconds(&self) -> f64 {
        let mut time = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: the clock is the running server thread's; the call writes one timespec.
        if unsafe { libc::clock_gettime(self.thread_clock, &mut time) } != 0 {
            return 0.0;
        }
        time.tv_sec as f64 + time.tv_nsec as f64 / 1e9
    }

    /// Every host name mapped to the server's address, for the refresher's resolver.
    pub fn resolve(&self) -> Vec<(String, SocketAddr)> {
        (0..self.web.hosts)
            .map(|n| (host_name(n), self.addr))
            .collect()
    }

    /// Every host's sitemap index URL.
    pub fn sitemaps(&self) -> Vec<String> {
        let port = self.addr.port();
        (0..self.web.hosts)
            .map(|n| format!("http://{}:{port}/sitemap.xml", host_name(n)))
            .collect()
    }

    /// Changes one page in ten.
    pub fn next_generation(&self) {
        self.web.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// What was answered since the last reset.
    pub fn counts(&self) -> PageCounts {
        let c = &self.web.counters;
        let span = *c.span.lock().unwrap_or_else(|e| e.into_inner());
        PageCounts {
            ok: c.ok.load(Ordering::SeqCst),
            not_modified: c.not_modified.load(Ordering::SeqCst),
            other: c.other.load(Ordering::SeqCst),
            page_seconds: span.map_or(0.0, |(first, last)| (last - first).as_secs_f64()),
        }
    }

    /// Starts counting afresh.
    pub fn reset_counts(&self) {
        let c = &self.web.counters;
        c.ok.store(0, Ordering::SeqCst);
        c.not_modified.store(0, Ordering::SeqCst);
        c.other.store(0, Ordering::SeqCst);
        *c.span.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Stops the server and waits for it.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = tokio::task::spawn_blocking(move || thread.join()).await;
        }
    }
}

/// A fixed, well-mixed hash (splitmix64's finaliser).
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Page `page`'s version at `generation`: how many of the generations so far changed it.
fn version(page: usize, generation: u32) -> u32 {
    (1..=generation)
        .filter(|&g| mix((page as u64) ^ (u64::from(g) << 40)).is_multiple_of(CHANGE_ONE_IN))
        .count() as u32
}

/// About [`PAGE_BYTES`] of article HTML, different for every page and version (different enough
/// that no two are near-duplicates).
fn page_body(page: usize, version: u32) -> String {
    const WORDS: &[&str] = &[
        "river", "council", "budget", "summer", "festival", "market", "election", "storm",
        "school", "bridge", "report", "season", "museum", "harbour", "rail", "garden", "north",
        "station", "library", "winter", "theatre", "league", "forest", "minister", "village",
        "market", "coast", "valley", "hospital", "airport", "company", "result", "tower", "energy",
        "water", "street", "court", "police", "film", "music", "price", "farm",
    ];
    let mut state = mix(((page as u64) << 20) ^ u64::from(version));
    let mut body = String::with_capacity(PAGE_BYTES + 512);
    let _ = write!(
        body,
        "<!doctype html><html><head><title>Page {page}, edition {version}</title></head><body>\
         <nav><a href=\"/\">Home</a> <a href=\"/news\">News</a></nav><article><h1>Page {page}</h1>"
    );
    while body.len() < PAGE_BYTES {
        body.push_str("<p>");
        for _ in 0..60 {
            state = mix(state);
            body.push_str(WORDS[(state % WORDS.len() as u64) as usize]);
            body.push(' ');
        }
        body.push_str("</p>\n");
    }
    body.push_str("</article><footer>bench web</footer></body></html>\n");
    body
}

/// The host index a `Host` header names, if it is one of ours.
fn host_index(headers: &HeaderMap, hosts: usize) -> Option<usize> {
    let host = headers.get(header::HOST)?.to_str().ok()?;
    let name = host.split(':').next()?;
    let n: usize = name
        .strip_prefix('h')?
        .strip_suffix(".bench.test")?
        .parse()
        .ok()?;
    (n < hosts).then_some(n)
}

async fn answer(State(web): State<Arc<Web>>, headers: HeaderMap, uri: Uri) -> Response {
    let Some(host) = host_index(&headers, web.hosts) else {
        web.counters.other.fetch_add(1, Ordering::Relaxed);
        return StatusCode::NOT_FOUND.into_response();
    };
    let path = uri.path();
    if let Some(page) = path
        .strip_prefix("/p/")
        .and_then(|p| p.parse::<usize>().ok())
        && page < web.urls
        && page % web.hosts == host
    {
        web.counters.page_request();
        let version = version(page, web.generation.load(Ordering::SeqCst));
        let etag = format!("\"{page}-{version}\"");
        let matches = headers
            .get(header::IF_NONE_MATCH)
            .is_some_and(|v| v.as_bytes() == etag.as_bytes());
        if matches {
            web.counters.not_modified.fetch_add(1, Ordering::Relaxed);
            return (StatusCode::NOT_MODIFIED, [(header::ETAG, etag)]).into_response();
        }
        web.counters.ok.fetch_add(1, Ordering::Relaxed);
        let headers = [
            (header::ETAG, etag),
            (header::CONTENT_TYPE, "text/html; charset=utf-8".to_string()),
        ];
        return (headers, page_body(page, version)).into_response();
    }
    web.counters.other.fetch_add(1, Ordering::Relaxed);
    let port = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.rsplit_once(':'))
        .map_or(String::new(), |(_, port)| format!(":{port}"));
    let base = format!("http://{}{port}", host_name(host));
    let xml = [(header::CONTENT_TYPE, "application/xml")];
    let on_host = (web.urls + web.hosts - 1 - host) / web.hosts;
    let files = on_host.div_ceil(PAGES_PER_SITEMAP).max(1);
    match path {
        "/robots.txt" => "User-agent: *\nAllow: /\n".into_response(),
        "/sitemap.xml" => {
            let mut index = String::from(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
                 <sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
            );
            for k in 0..files {
                let _ = writeln!(
                    index,
                    "<sitemap><loc>{base}/sitemap-{k}.xml</loc></sitemap>"
                );
            }
            index.push_str("</sitemapindex>\n");
            (xml, index).into_response()
        }
        _ => {
            let Some(k) = path
                .strip_prefix("/sitemap-")
                .and_then(|p| p.strip_suffix(".xml"))
                .and_then(|k| k.parse::<usize>().ok())
                .filter(|&k| k < files)
            else {
                return StatusCode::NOT_FOUND.into_response();
            };
            let mut urlset = String::from(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
                 <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
            );
            let first = k * PAGES_PER_SITEMAP;
            let last = ((k + 1) * PAGES_PER_SITEMAP).min(on_host);
            for j in first..last {
                let page = host + j * web.hosts;
                let _ = writeln!(urlset, "<url><loc>{base}/p/{page}</loc></url>");
            }
            urlset.push_str("</urlset>\n");
            (xml, urlset).into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_page_in_ten_changes_at_each_generation() {
        let changed = (0..100_000).filter(|&p| version(p, 1) == 1).count();
        assert!((9_000..11_000).contains(&changed), "{changed}");
        assert!((0..1000).all(|p| version(p, 0) == 0));
        let body = page_body(3, 0);
        assert!(body.len() >= PAGE_BYTES && body.len() < PAGE_BYTES + 1024);
        assert_ne!(body, page_body(3, 1));
    }

    #[test]
    fn every_page_is_listed_once_on_its_own_host() {
        let (urls, hosts) = (103usize, 7usize);
        let listed: usize = (0..hosts).map(|h| (urls + hosts - 1 - h) / hosts).sum();
        assert_eq!(listed, urls);
    }
}
