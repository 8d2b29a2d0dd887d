//! The hop loop of one check: address policy (literal IPs) -> gate (robots.txt) -> permit ->
//! request -> record the host's health -> follow a redirect or read the final response.

use reqwest::header::{
    CONTENT_TYPE, ETAG, HeaderMap, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED, LOCATION,
    RETRY_AFTER,
};
use reqwest::{Response, StatusCode};
use url::Url;
use xxhash_rust::xxh3::xxh3_64;

use super::headers::{
    ContentType, cache_control_max_age, header_text, parse_http_date, parse_retry_after,
};
use super::{FetchError, FetchOutcome, FetchRequest, Fetcher, Hop, Limits, Method, Stage, charset};
use crate::clock::Clock;
use crate::politeness::{HostPool, Signal, origin_of};

/// Runs one check to completion. See [`Fetcher::fetch`].
pub(super) async fn run(
    fetcher: &Fetcher,
    request: &FetchRequest,
    limits: &Limits<'_>,
    pool: &HostPool,
    clock: &dyn Clock,
) -> FetchOutcome {
    let asked_ms = clock.now_ms();
    let mut outcome = FetchOutcome::new(request.url.clone(), asked_ms);
    let mut url = request.url.clone();
    let mut first = true;
    loop {
        if let Err(reason) = fetchable(&url) {
            outcome.error = Some(FetchError::InvalidUrl {
                url: url.to_string(),
                reason,
            });
            break;
        }
        // Names are checked after resolution by the client's resolver; literal IPs here.
        if let Err(refused) = fetcher.policy.check_host(url.host()) {
            outcome.error = Some(FetchError::AddressRefused {
                url: url.to_string(),
                refused,
            });
            url = last_requested(&outcome, url);
            break;
        }
        if let Some(gate) = limits.gate
            && let Err(error) = gate.admit(&url).await
        {
            // Not sent here (another worker holds the host): the check ends at this URL, as
            // when the pool refuses a permit below.
            if !matches!(error, FetchError::NotSent { .. }) {
                url = last_requested(&outcome, url);
            }
            outcome.error = Some(error);
            break;
        }
        let origin = origin_of(&url);
        let permit = match pool.try_acquire(&origin).await {
            Ok(permit) => permit,
            Err(reason) => {
                outcome.error = Some(FetchError::NotSent {
                    url: url.to_string(),
                    reason,
                });
                break;
            }
        };
        if first {
            outcome.started_ms = clock.now_ms();
            outcome.waited_ms = outcome.started_ms - asked_ms;
            first = false;
        }
        tracing::debug!(url = %url, "requesting");
        let response = match send(fetcher, request, &url).await {
            Ok(response) => response,
            Err(err) => {
                let error = FetchError::from_reqwest(url.as_str(), Stage::Waiting, &err);
                pool.record_and_save(&origin, &signal_for(&error)).await;
                outcome.error = Some(error);
                break;
            }
        };
        let status = response.status().as_u16();
        outcome.hops.push(Hop {
            url: url.clone(),
            status,
        });
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| parse_retry_after(value, clock.now_ms()));
        pool.record_and_save(&origin, &Signal::from_status(status, retry_after))
            .await;
        if !is_redirect(response.status()) {
            read_final(&mut outcome, response, request, limits, retry_after).await;
            if matches!(outcome.error, Some(FetchError::Timeout { .. })) {
                pool.record_and_save(&origin, &Signal::Timeout).await;
            }
            drop(permit);
            break;
        }
        // A redirect: its body is not needed; dropping the response closes the connection.
        let next = redirect_target(&response, &url);
        drop(response);
        drop(permit);
        match next {
            Ok(next) => {
                if let Some(error) = stop_redirect(&outcome, &url, &next, fetcher) {
                    outcome.status = Some(status);
                    outcome.error = Some(error);
                    break;
                }
                url = next;
            }
            Err(reason) => {
                outcome.status = Some(status);
                outcome.error = Some(FetchError::BadRedirect {
                    url: url.to_string(),
                    status,
                    reason,
                });
                break;
            }
        }
    }
    outcome.final_url = url;
    outcome.duration_ms = clock.now_ms() - outcome.started_ms;
    if let Some(error) = &outcome.error {
        tracing::debug!(error = %error, kind = error.kind(), "check failed");
    }
    outcome
}

/// The last URL actually requested (a hop refused before its request is not one), or `url`
/// when nothing was requested.
fn last_requested(outcome: &FetchOutcome, url: Url) -> Url {
    outcome.hops.last().map_or(url, |hop| hop.url.clone())
}

/// Refuses URLs that are not http(s) with a host.
fn fetchable(url: &Url) -> Result<(), String> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("scheme {:?} is not http or https", url.scheme()));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("no host".to_string());
    }
    Ok(())
}

/// Sends one request with the check's method and validators.
async fn send(
    fetcher: &Fetcher,
    request: &FetchRequest,
    url: &Url,
) -> Result<Response, reqwest::Error> {
    let method = match request.method {
        Method::Get => reqwest::Method::GET,
        Method::Head => reqwest::Method::HEAD,
    };
    let mut builder = fetcher.client.request(method, url.clone());
    if let Some(etag) = &request.validators.etag {
        builder = builder.header(IF_NONE_MATCH, etag);
    }
    if let Some(last_modified) = &request.validators.last_modified {
        builder = builder.header(IF_MODIFIED_SINCE, last_modified);
    }
    builder.send().await
}

/// The statuses followed as redirects.
fn is_redirect(status: StatusCode) -> bool {
    matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308)
}

/// The redirect's target, a relative `Location` joined onto the response URL.
fn redirect_target(response: &Response, url: &Url) -> Result<Url, String> {
    let location = response
        .headers()
        .get(LOCATION)
        .ok_or_else(|| "no Location header".to_string())?
        .to_str()
        .map_err(|_| "Location is not ASCII".to_string())?;
    url.join(location.trim())
        .map_err(|err| format!("cannot resolve {location:?}: {err}"))
}

/// Whether following `next` must stop the chain, and with which error.
fn stop_redirect(
    outcome: &FetchOutcome,
    url: &Url,
    next: &Url,
    fetcher: &Fetcher,
) -> Option<FetchError> {
    let visited = |candidate: &Url| {
        *candidate == outcome.requested_url || outcome.hops.iter().any(|hop| hop.url == *candidate)
    };
    if visited(next) {
        return Some(FetchError::RedirectLoop {
            url: url.to_string(),
            target: next.to_string(),
        });
    }
    if outcome.hops.len() > fetcher.config.max_redirects {
        return Some(FetchError::TooManyRedirects {
            url: url.to_string(),
            hops: outcome.hops.len(),
        });
    }
    None
}

/// Fills the outcome from the final (non-redirect) response, reading a 2xx GET body.
async fn read_final(
    outcome: &mut FetchOutcome,
    mut response: Response,
    request: &FetchRequest,
    limits: &Limits<'_>,
    retry_after: Option<std::time::Duration>,
) {
    let max_body_bytes = limits.max_body_bytes;
    let status = response.status().as_u16();
    let url = response.url().to_string();
    let headers: &HeaderMap = response.headers();
    outcome.status = Some(status);
    outcome.retry_after = retry_after;
    outcome.etag = header_text(headers, ETAG);
    outcome.last_modified = header_text(headers, LAST_MODIFIED);
    outcome.content_type = header_text(headers, CONTENT_TYPE);
    outcome.cache_control_max_age = cache_control_max_age(headers);
    if status == 304 {
        // 304 need not repeat the validators; the ones sent are still valid.
        outcome.etag = outcome.etag.take().or(request.validators.etag.clone());
        outcome.last_modified = outcome
            .last_modified
            .take()
            .or(request.validators.last_modified.clone());
    }
    outcome.last_modified_ms = outcome.last_modified.as_deref().and_then(parse_http_date);
    if status == 304 {
        return;
    }
    if !(200..300).contains(&status) {
        outcome.error = Some(FetchError::Http { url, status });
        return;
    }
    if request.method == Method::Head {
        return;
    }
    // Only identity-encoded bodies keep a length (reqwest drops it when it decompresses).
    let declared = response.content_length();
    let body = match read_capped(&mut response, max_body_bytes, limits.keep_prefix).await {
        Ok((body, truncated)) => {
            outcome.truncated = truncated;
            body
        }
        Err((read, error)) => {
            outcome.bytes = read;
            let error = error.into_error(&url, max_body_bytes);
            // The connection closed early: say so with the numbers, not as a decode failure.
            outcome.error = Some(match (declared, &error) {
                (Some(expected), FetchError::Decode { .. } | FetchError::Transport { .. })
                    if read < expected =>
                {
                    FetchError::Truncated {
                        url,
                        expected,
                        got: read,
                    }
                }
                _ => error,
            });
            return;
        }
    };
    outcome.bytes = body.len() as u64;
    // A prefix kept on purpose (robots.txt past 500 KiB) is short by design.
    if let Some(expected) = declared.filter(|&n| n > outcome.bytes && !outcome.truncated) {
        outcome.error = Some(FetchError::Truncated {
            url,
            expected,
            got: outcome.bytes,
        });
        return;
    }
    let content_type = ContentType::parse(outcome.content_type.as_deref().unwrap_or(""));
    if content_type.is_textual() {
        let decoded = charset::decode(&body, content_type.charset.as_deref());
        outcome.fingerprint = Some(xxh3_64(decoded.text.as_bytes()));
        outcome.charset = Some(decoded.encoding);
        outcome.text = Some(decoded.text);
    } else {
        outcome.fingerprint = Some(xxh3_64(&body));
    }
    outcome.body = Some(body.into());
}

/// Why reading a body stopped.
enum BodyStop {
    /// The cap was reached.
    TooLarge,
    /// The transfer failed.
    Failed(reqwest::Error),
}

impl BodyStop {
    /// The outcome's error for this stop.
    fn into_error(self, url: &str, limit: u64) -> FetchError {
        match self {
            BodyStop::TooLarge => FetchError::BodyTooLarge {
                url: url.to_string(),
                limit,
            },
            BodyStop::Failed(err) => FetchError::from_reqwest(url, Stage::Reading, &err),
        }
    }
}

/// Reads the decompressed body chunk by chunk, stopping before it passes `cap` bytes, so memory
/// never holds more than the cap whatever the body expands to. With `keep_prefix`, a longer body
/// gives its first `cap` bytes and `true` (truncated); otherwise it is an error. On failure,
/// returns the bytes read so far with the reason.
async fn read_capped(
    response: &mut Response,
    cap: u64,
    keep_prefix: bool,
) -> Result<(Vec<u8>, bool), (u64, BodyStop)> {
    // With decompression on, reqwest only reports a length for identity-encoded bodies.
    if !keep_prefix && response.content_length().is_some_and(|length| length > cap) {
        return Err((0, BodyStop::TooLarge));
    }
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let read = body.len() as u64 + chunk.len() as u64;
                if read > cap && keep_prefix {
                    let room = usize::try_from(cap).unwrap_or(usize::MAX) - body.len();
                    body.extend_from_slice(&chunk[..room]);
                    // Dropping the response closes the connection: the rest is never read.
                    return Ok((body, true));
                }
                if read > cap {
                    return Err((read, BodyStop::TooLarge));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok((body, false)),
            Err(err) => return Err((body.len() as u64, BodyStop::Failed(err))),
        }
    }
}

/// The host-health signal for a request that got no response.
fn signal_for(error: &FetchError) -> Signal {
    match error {
        FetchError::Timeout { .. } | FetchError::Connect { .. } => Signal::Timeout,
        FetchError::Transport { .. } => Signal::ServerError,
        _ => Signal::Ok,
    }
}
