//! A recording HTTP server for integration tests: axum on 127.0.0.1:0, routes per Host header,
//! and a log of every request (clock time, real instant, method, host, path, headers), so tests
//! assert politeness, robots and conditional requests from the server's side.
//!
//! Use it from a test file with
//! `#[path = "support/recording_server.rs"] mod recording_server;`.
//!
//! Virtual host names (`a.test`, `b.test`, ...) reach it through
//! `FetchConfig { resolve: server.resolve(&["a.test", "b.test"]), allow_networks:
//! loopback_networks(), .. }` (the address policy refuses loopback unless allowed) and URLs
//! from [`RecordingServer::url`], which carry the server's port.
#![allow(dead_code)]

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use freshet::clock::{SharedClock, SystemClock};
use tokio::sync::oneshot;
use url::Url;

/// The ranges a client must allow to reach a test server (`allow_networks`): loopback.
pub fn loopback_networks() -> Vec<freshet::fetch::Cidr> {
    ["127.0.0.0/8", "::1/128"]
        .iter()
        .map(|cidr| cidr.parse().expect("valid CIDR"))
        .collect()
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The server's clock reading when the request arrived (Unix ms).
    pub clock_ms: i64,
    /// The real instant it arrived (std, so paused tokio time does not touch it).
    pub at: Instant,
    /// `GET`, `HEAD`, ...
    pub method: String,
    /// The Host header's name, lower case, without the port.
    pub host: String,
    /// The path, without the query.
    pub path: String,
    /// The query, if any.
    pub query: Option<String>,
    /// All request headers.
    pub headers: HeaderMap,
    /// How many earlier requests hit the same host and path (0 for the first).
    pub hit: usize,
}

impl Recorded {
    /// A header's value as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }
}

/// What a route does with a request.
pub type Handler = Arc<dyn Fn(&Recorded) -> Response + Send + Sync>;

/// A fixed response, cloned for every request.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The status.
    pub status: u16,
    /// Headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Bytes,
}

impl Reply {
    /// An empty response with `status`.
    pub fn status(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Bytes::new(),
        }
    }

    /// 200 with an HTML body (UTF-8).
    pub fn html(body: impl Into<Bytes>) -> Self {
        Self::status(200)
            .header("content-type", "text/html; charset=utf-8")
            .body(body)
    }

    /// 200 with a plain-text body.
    pub fn text(body: impl Into<Bytes>) -> Self {
        Self::status(200)
            .header("content-type", "text/plain")
            .body(body)
    }

    /// 200 with a sitemap (`urlset`) that lists `locs`, without `lastmod`s.
    pub fn sitemap<S: AsRef<str>>(locs: impl IntoIterator<Item = S>) -> Self {
        let urls: String = (locs.into_iter())
            .map(|loc| format!("<url><loc>{}</loc></url>", loc.as_ref()))
            .collect();
        Self::status(200)
            .header("content-type", "application/xml")
            .body(format!(
                r#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>"#
            ))
    }

    /// 200 with a sitemap index (`sitemapindex`) that lists the sitemaps `locs`.
    pub fn sitemap_index<S: AsRef<str>>(locs: impl IntoIterator<Item = S>) -> Self {
        let sitemaps: String = (locs.into_iter())
            .map(|loc| format!("<sitemap><loc>{}</loc></sitemap>", loc.as_ref()))
            .collect();
        Self::status(200)
            .header("content-type", "application/xml")
            .body(format!(
                r#"<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{sitemaps}</sitemapindex>"#
            ))
    }

    /// A redirect with `status` to `location`.
    pub fn redirect(status: u16, location: &str) -> Self {
        Self::status(status).header("location", location)
    }

    /// This reply with one more header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// This reply with `body`.
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self
    }

    /// The axum response.
    pub fn to_response(&self) -> Response {
        let mut response = Response::new(Body::from(self.body.clone()));
        *response.status_mut() =
            StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        for (name, value) in &self.headers {
            if let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(value),
            ) {
                response.headers_mut().append(name, value);
            }
        }
        response
    }
}

/// A body that sends `chunk` every `every`, `count` times (forever when `None`).
pub fn drip_body(chunk: Bytes, every: Duration, count: Option<usize>) -> Body {
    let stream = futures_util::stream::unfold(0usize, move |sent| {
        let chunk = chunk.clone();
        async move {
            if count.is_some_and(|count| sent >= count) {
                return None;
            }
            if sent > 0 {
                tokio::time::sleep(every).await;
            }
            Some((Ok::<_, Infallible>(chunk), sent + 1))
        }
    });
    Body::from_stream(stream)
}

/// Shared between the server task and the test.
struct Shared {
    /// Clock stamped on every request.
    clock: SharedClock,
    /// (host, path) -> handler.
    routes: Mutex<HashMap<(String, String), Handler>>,
    /// Every request, in arrival order.
    log: Mutex<Vec<Recorded>>,
}

/// Locks a mutex, ignoring poisoning (a failed test thread should not hide the log).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The running server. Stops when dropped.
pub struct RecordingServer {
    /// Where it listens (127.0.0.1, a free port).
    pub addr: SocketAddr,
    /// Routes, log and clock.
    shared: Arc<Shared>,
    /// Dropping this stops the server.
    _stop: oneshot::Sender<()>,
}

impl RecordingServer {
    /// Starts a server stamping requests with the system clock.
    pub async fn start() -> Self {
        Self::start_with_clock(Arc::new(SystemClock)).await
    }

    /// Starts a server stamping requests with `clock` (a virtual clock in demo-speed tests).
    pub async fn start_with_clock(clock: SharedClock) -> Self {
        Self::start_on("127.0.0.1", clock).await
    }

    /// Starts a server on another loopback address (`127.0.0.2`: a second "machine" for the
    /// address policy's tests), stamping requests with `clock`.
    pub async fn start_on(ip: &str, clock: SharedClock) -> Self {
        let shared = Arc::new(Shared {
            clock,
            routes: Mutex::new(HashMap::new()),
            log: Mutex::new(Vec::new()),
        });
        let listener = tokio::net::TcpListener::bind((ip, 0))
            .await
            .expect("bind a loopback address");
        let addr = listener.local_addr().expect("local address");
        let app = Router::new()
            .fallback(handle)
            .with_state(Arc::clone(&shared));
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await;
        });
        Self {
            addr,
            shared,
            _stop: stop,
        }
    }

    /// Serves `reply` for `host` + `path` (replacing any earlier route).
    pub fn route(&self, host: &str, path: &str, reply: Reply) {
        self.handle(host, path, move |_| reply.to_response());
    }

    /// Serves `path` on `host` with a function of the request (it sees `hit` for sequences).
    pub fn handle(
        &self,
        host: &str,
        path: &str,
        handler: impl Fn(&Recorded) -> Response + Send + Sync + 'static,
    ) {
        lock(&self.shared.routes).insert(
            (host.to_ascii_lowercase(), path.to_string()),
            Arc::new(handler),
        );
    }

    /// `http://host:port/path` for this server.
    pub fn url(&self, host: &str, path: &str) -> Url {
        Url::parse(&format!("http://{host}:{}{path}", self.addr.port())).expect("valid test URL")
    }

    /// `FetchConfig::resolve` entries mapping each name to this server.
    pub fn resolve(&self, hosts: &[&str]) -> Vec<(String, SocketAddr)> {
        hosts
            .iter()
            .map(|host| (host.to_string(), self.addr))
            .collect()
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.shared.log).clone()
    }

    /// The requests to `host`, in arrival order.
    pub fn requests_to(&self, host: &str) -> Vec<Recorded> {
        let host = host.to_ascii_lowercase();
        lock(&self.shared.log)
            .iter()
            .filter(|request| request.host == host)
            .cloned()
            .collect()
    }

    /// Real time between consecutive requests to `host`.
    pub fn gaps(&self, host: &str) -> Vec<Duration> {
        let requests = self.requests_to(host);
        requests
            .windows(2)
            .map(|pair| pair[1].at.duration_since(pair[0].at))
            .collect()
    }

    /// Clock time (ms) between consecutive requests to `host`, as stamped by the server's clock.
    pub fn clock_gaps_ms(&self, host: &str) -> Vec<i64> {
        let requests = self.requests_to(host);
        requests
            .windows(2)
            .map(|pair| pair[1].clock_ms - pair[0].clock_ms)
            .collect()
    }
}

/// Records the request, then answers from the routes (404 when none matches).
async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let headers = request.headers().clone();
    let host = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .map(|value| strip_port(value).to_ascii_lowercase())
        .or_else(|| request.uri().host().map(str::to_ascii_lowercase))
        .unwrap_or_default();
    let path = request.uri().path().to_string();
    let handler = {
        let mut log = lock(&shared.log);
        let hit = log
            .iter()
            .filter(|seen| seen.host == host && seen.path == path)
            .count();
        let recorded = Recorded {
            clock_ms: shared.clock.now_ms(),
            at: Instant::now(),
            method: request.method().to_string(),
            host: host.clone(),
            path: path.clone(),
            query: request.uri().query().map(str::to_string),
            headers,
            hit,
        };
        log.push(recorded.clone());
        let handler = lock(&shared.routes).get(&(host, path)).cloned();
        handler.map(|handler| (handler, recorded))
    };
    match handler {
        Some((handler, recorded)) => handler(&recorded),
        None => (StatusCode::NOT_FOUND, "no route").into_response(),
    }
}

/// `a.test:8080` -> `a.test` (and `[::1]:80` -> `[::1]`).
fn strip_port(host: &str) -> &str {
    match host.rsplit_once(':') {
        Some((name, port)) if !name.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}
