//! The demo's HTTP server: every virtual host of a [`World`] on one loopback port, routed by the
//! `Host` header, reading "now" from the freshet clock, recording every request.
//!
//! Routes per host: `/robots.txt`, `/sitemap.xml` (an index) -> `/sitemap-pages.xml.gz` (a gzip
//! urlset), `/feed.xml`, `/` (links to every page), the pages, the private page (behind a robots
//! `Disallow`; any request to it is in the log for all to see), and the redirects. Responses carry
//! an `ETag` (a hash of the body) and a `Last-Modified` (the true last change, or "now" on the lying
//! host), and answer 304 to a matching `If-None-Match`, or to `If-Modified-Since` when there is no
//! `If-None-Match` (the liar ignores `If-Modified-Since`). HEAD gets the headers without the body.
//!
//! The server binds `127.0.0.1:0` only; clients reach the virtual names through their resolver
//! (reqwest's `ClientBuilder::resolve`, see [`DemoServer::resolve`]).

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::render;
use super::world::{Host, World};
use crate::clock::SharedClock;

/// One request as the server saw it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RequestRecord {
    /// Clock time at arrival (virtual in the demo), Unix ms.
    pub at_ms: i64,
    /// Host name without port, lower case, as sent in the `Host` header.
    pub host: String,
    /// Request path (no query).
    pub path: String,
    /// `GET`, `HEAD`, ...
    pub method: String,
    /// Status answered.
    pub status: u16,
}

impl RequestRecord {
    /// The page whose copy this request (to `host`) synchronised: a GET answered 200 or 304 on a
    /// path serving a page.
    pub fn synced_page(&self, host: &Host) -> Option<usize> {
        let synced = self.method == "GET" && matches!(self.status, 200 | 304);
        synced.then(|| host.page_at(&self.path)).flatten()
    }
}

#[cfg(test)]
impl RequestRecord {
    /// A GET of `path` on `host` answered `status` at `at_ms` (for the demo's tests).
    pub(crate) fn get(at_ms: i64, host: &str, path: &str, status: u16) -> Self {
        Self {
            at_ms,
            host: host.to_string(),
            path: path.to_string(),
            method: "GET".to_string(),
            status,
        }
    }
}

/// The server's request log, shared with whoever wants to count or check requests.
#[derive(Debug, Clone, Default)]
pub struct RequestLog {
    /// A std Mutex, not a tokio one: nothing async happens while it is held.
    records: Arc<Mutex<Vec<RequestRecord>>>,
}

impl RequestLog {
    fn lock(&self) -> MutexGuard<'_, Vec<RequestRecord>> {
        // A panic while pushing cannot leave the Vec inconsistent: keep using it.
        self.records.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn push(&self, record: RequestRecord) {
        self.lock().push(record);
    }

    /// A copy of every record so far, in arrival order.
    pub fn snapshot(&self) -> Vec<RequestRecord> {
        self.lock().clone()
    }

    /// Number of requests so far.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no request has arrived yet.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }
}

/// A running demo server. Dropping it stops the server.
#[derive(Debug)]
pub struct DemoServer {
    /// The loopback address every virtual host is served on.
    pub addr: SocketAddr,
    /// The virtual host names the client must resolve to [`DemoServer::addr`].
    pub hosts: Vec<String>,
    /// Every request received.
    pub log: RequestLog,
    /// Fires the graceful shutdown.
    shutdown: Option<oneshot::Sender<()>>,
    /// The serving task, awaited by [`DemoServer::stop`].
    task: Option<JoinHandle<()>>,
}

impl DemoServer {
    /// (host name, address) pairs for `reqwest::ClientBuilder::resolve` or `RunOptions::resolve`.
    pub fn resolve(&self) -> Vec<(String, SocketAddr)> {
        self.hosts.iter().map(|h| (h.clone(), self.addr)).collect()
    }

    /// `http://name:port`, the base of every URL on host `name`.
    pub fn base_url(&self, name: &str) -> String {
        format!("http://{name}:{}", self.addr.port())
    }

    /// Stops accepting requests and waits for the server task to end.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for DemoServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// What the handler shares.
struct AppState {
    world: Arc<World>,
    clock: SharedClock,
    log: RequestLog,
}

/// Binds `127.0.0.1:0` and serves `world` on the freshet `clock` until the server is dropped.
pub async fn start(world: Arc<World>, clock: SharedClock) -> std::io::Result<DemoServer> {
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
    let addr = listener.local_addr()?;
    let log = RequestLog::default();
    let hosts = world.host_names();
    let state = Arc::new(AppState {
        world,
        clock,
        log: log.clone(),
    });
    let app = Router::new().fallback(handle).with_state(state);
    let (tx, rx) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let serve = axum::serve(listener, app).with_graceful_shutdown(async {
            let _ = rx.await;
        });
        if let Err(err) = serve.await {
            tracing::warn!(error = %err, "demo server stopped with an error");
        }
    });
    Ok(DemoServer {
        addr,
        hosts,
        log,
        shutdown: Some(tx),
        task: Some(task),
    })
}

async fn handle(
    State(state): State<Arc<AppState>>,
    method: Method,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    let now = state.clock.now_ms();
    let authority = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let name = match authority.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => authority.as_str(),
    };
    let path = uri.path();
    let response = respond(&state.world, &method, &headers, &authority, name, path, now);
    state.log.push(RequestRecord {
        at_ms: now,
        host: name.to_string(),
        path: path.to_string(),
        method: method.to_string(),
        status: response.status().as_u16(),
    });
    response
}

/// A body to serve and what its validators are.
struct Resource {
    body: Vec<u8>,
    content_type: &'static str,
    last_modified_ms: i64,
}

fn respond(
    world: &World,
    method: &Method,
    headers: &HeaderMap,
    authority: &str,
    name: &str,
    path: &str,
    now: i64,
) -> Response {
    if method != Method::GET && method != Method::HEAD {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let Some((_, host)) = world.host(name) else {
        return (StatusCode::NOT_FOUND, "unknown host\n").into_response();
    };
    let base = format!("http://{authority}");
    if let Some(redirect) = host.redirect_at(path) {
        let status = StatusCode::from_u16(redirect.status).unwrap_or(StatusCode::FOUND);
        let location = format!("{base}{}", redirect.to);
        return match HeaderValue::from_str(&location) {
            Ok(value) => (status, [(header::LOCATION, value)]).into_response(),
            Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
        };
    }
    let Some(resource) = resource(world, host, &base, path, now) else {
        return (StatusCode::NOT_FOUND, "no such page\n").into_response();
    };
    serve(method, headers, resource, host.lies, now)
}

fn resource(world: &World, host: &Host, base: &str, path: &str, now: i64) -> Option<Resource> {
    let text = |body: String, content_type, last_modified_ms| Resource {
        body: body.into_bytes(),
        content_type,
        last_modified_ms,
    };
    let latest = || render::latest_change(world, host, now);
    let created = world.pages.first().map_or(now, |p| p.created_ms);
    Some(match path {
        "/robots.txt" => text(
            render::robots_txt(host, base),
            "text/plain; charset=utf-8",
            created,
        ),
        "/sitemap.xml" => text(
            render::sitemap_index(base, latest()),
            "application/xml",
            latest(),
        ),
        "/sitemap-pages.xml.gz" => Resource {
            body: render::gzip(&render::sitemap_urlset(world, host, base, now)),
            content_type: "application/gzip",
            last_modified_ms: latest(),
        },
        "/feed.xml" => {
            let content_type = match host.feed {
                super::world::FeedFormat::Rss => "application/rss+xml",
                super::world::FeedFormat::Atom => "application/atom+xml",
            };
            text(
                render::feed_xml(world, host, base, now),
                content_type,
                latest(),
            )
        }
        "/" => text(render::home_html(world, host, base), HTML, created),
        _ if host.private_path.as_deref() == Some(path) => {
            text(render::private_html(host), HTML, created)
        }
        _ => {
            let page = &world.pages[host.page_at(path)?];
            let version = page.version_at(now);
            text(
                render::page_html(world, host, base, page, version, now),
                HTML,
                page.last_change_at(now),
            )
        }
    })
}

const HTML: &str = "text/html; charset=utf-8";

/// 200 with validators, or 304 when the request's validators match.
fn serve(
    method: &Method,
    headers: &HeaderMap,
    resource: Resource,
    lies: bool,
    now: i64,
) -> Response {
    let etag = format!("\"{:016x}\"", xxhash_rust::xxh3::xxh3_64(&resource.body));
    let last_modified = if lies { now } else { resource.last_modified_ms };
    let not_modified = match headers.get(header::IF_NONE_MATCH) {
        Some(value) => value.to_str().is_ok_and(|v| etag_matches(v, &etag)),
        None if lies => false,
        None => headers
            .get(header::IF_MODIFIED_SINCE)
            .and_then(|v| v.to_str().ok())
            .and_then(render::parse_http_date)
            .is_some_and(|since| last_modified / 1000 <= since / 1000),
    };
    let mut response_headers = HeaderMap::new();
    if let Ok(value) = HeaderValue::from_str(&etag) {
        response_headers.insert(header::ETAG, value);
    }
    if let Ok(value) = HeaderValue::from_str(&render::http_date(last_modified)) {
        response_headers.insert(header::LAST_MODIFIED, value);
    }
    if not_modified {
        return (StatusCode::NOT_MODIFIED, response_headers).into_response();
    }
    response_headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(resource.content_type),
    );
    let body = if method == Method::HEAD {
        Body::empty()
    } else {
        Body::from(resource.body)
    };
    (StatusCode::OK, response_headers, body).into_response()
}

/// Whether an `If-None-Match` value names `etag` (weak comparison, `*` matches anything).
fn etag_matches(if_none_match: &str, etag: &str) -> bool {
    let bare = |t: &str| t.trim().trim_start_matches("W/").to_string();
    if_none_match
        .split(',')
        .any(|candidate| candidate.trim() == "*" || bare(candidate) == bare(etag))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etag_comparison_is_weak_and_accepts_lists() {
        assert!(etag_matches("\"a\"", "\"a\""));
        assert!(etag_matches("W/\"a\"", "\"a\""));
        assert!(etag_matches("\"b\", \"a\"", "\"a\""));
        assert!(etag_matches("*", "\"a\""));
        assert!(!etag_matches("\"b\"", "\"a\""));
    }
}
