//! Why a check failed. A failure is data in the [`FetchOutcome`](super::FetchOutcome), never a
//! panic or an `Err`: every variant names the URL it concerns and the reason.

use std::error::Error as StdError;

/// Where in a request a timeout struck.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Opening the TCP (and TLS) connection.
    Connecting,
    /// Waiting for the response headers.
    Waiting,
    /// Reading the body (idle read timeout or total timeout).
    Reading,
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stage::Connecting => "connecting",
            Stage::Waiting => "waiting for the response",
            Stage::Reading => "reading the body",
        })
    }
}

/// A failed check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// The URL cannot be fetched (not http/https, no host, ...).
    #[error("{url}: not a fetchable URL: {reason}")]
    InvalidUrl {
        /// The URL.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The connection could not be made (refused, unreachable, DNS, TLS).
    #[error("{url}: cannot connect: {reason}")]
    Connect {
        /// The URL.
        url: String,
        /// The underlying cause.
        reason: String,
    },
    /// A connect, idle-read or total timeout.
    #[error("{url}: timed out {stage}")]
    Timeout {
        /// The URL.
        url: String,
        /// Where it struck.
        stage: Stage,
    },
    /// The decompressed body passed the cap; reading stopped there.
    #[error("{url}: body larger than {limit} bytes after decompression")]
    BodyTooLarge {
        /// The URL.
        url: String,
        /// The cap in force.
        limit: u64,
    },
    /// Still redirected after the allowed number of redirects.
    #[error("{url}: too many redirects ({hops} responses, all redirects)")]
    TooManyRedirects {
        /// The URL that redirected once too often.
        url: String,
        /// Responses received, every one a redirect.
        hops: usize,
    },
    /// A redirect pointed back to a URL already visited in this chain.
    #[error("{url}: redirect loop back to {target}")]
    RedirectLoop {
        /// The URL that redirected.
        url: String,
        /// The already-visited target.
        target: String,
    },
    /// A redirect without a usable `Location`.
    #[error("{url}: redirect {status} with a bad Location: {reason}")]
    BadRedirect {
        /// The URL that redirected.
        url: String,
        /// Its status.
        status: u16,
        /// What was wrong with `Location`.
        reason: String,
    },
    /// The final response was neither 2xx nor 304.
    #[error("{url}: HTTP status {status}")]
    Http {
        /// The URL.
        url: String,
        /// The status.
        status: u16,
    },
    /// The body could not be decoded (corrupt gzip, brotli, ...).
    #[error("{url}: cannot decode the body: {reason}")]
    Decode {
        /// The URL.
        url: String,
        /// The underlying cause.
        reason: String,
    },
    /// The address policy refused every address of the host (see [`super::address`]).
    #[error("{url}: not requested: {refused}")]
    AddressRefused {
        /// The URL.
        url: String,
        /// The address and the range it is in.
        refused: super::address::Refused,
    },
    /// robots.txt of the URL's own host disallows it (a redirect hop is checked like the
    /// first request).
    #[error("{url}: not requested: disallowed by robots.txt ({rule})")]
    Disallowed {
        /// The URL.
        url: String,
        /// The rule that disallows it (`Disallow: /private/`, or why everything is).
        rule: String,
        /// Only for now: robots.txt could not be read (a 5xx, a 429, out of reach), and
        /// everything is disallowed until it can (the host's trouble, not the URL's).
        for_now: bool,
    },
    /// The body ended before the length the response declared (`Content-Length`).
    #[error("{url}: body truncated: {got} of the {expected} bytes its Content-Length declared")]
    Truncated {
        /// The URL.
        url: String,
        /// The declared length.
        expected: u64,
        /// Bytes received.
        got: u64,
    },
    /// An empty 2xx body where the copy we hold says there should be content; the copy is kept.
    #[error("{url}: empty body while {reason}; kept the previous copy")]
    EmptyBody {
        /// The URL.
        url: String,
        /// What says it should not be empty.
        reason: String,
    },
    /// Any other transport failure (connection reset mid-body, protocol error, ...).
    #[error("{url}: transfer failed: {reason}")]
    Transport {
        /// The URL.
        url: String,
        /// The underlying cause.
        reason: String,
    },
    /// The request was not sent: shutdown, or its host closed for longer than freshet waits.
    /// Nothing reached the server; the check is made later, not recorded as a failure.
    #[error("{url}: {reason}")]
    NotSent {
        /// The URL.
        url: String,
        /// Why (see [`crate::politeness::NotNow`]).
        reason: crate::politeness::NotNow,
    },
}

impl FetchError {
    /// A short stable name for storage and reports (`timeout`, `http`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            FetchError::InvalidUrl { .. } => "invalid_url",
            FetchError::Connect { .. } => "connect",
            FetchError::Timeout { .. } => "timeout",
            FetchError::BodyTooLarge { .. } => "body_too_large",
            FetchError::TooManyRedirects { .. } => "too_many_redirects",
            FetchError::RedirectLoop { .. } => "redirect_loop",
            FetchError::BadRedirect { .. } => "bad_redirect",
            FetchError::Http { .. } => "http",
            FetchError::Decode { .. } => "decode",
            FetchError::AddressRefused { .. } => "address_refused",
            FetchError::Disallowed { .. } => "robots_disallowed",
            FetchError::Truncated { .. } => "truncated",
            FetchError::EmptyBody { .. } => "empty_body",
            FetchError::Transport { .. } => "transport",
            FetchError::NotSent { .. } => "not_sent",
        }
    }

    /// Classifies a reqwest error raised at `stage` of a request to `url`.
    pub(crate) fn from_reqwest(url: &str, stage: Stage, err: &reqwest::Error) -> Self {
        let url = url.to_string();
        if let Some(refused) = refused_by_policy(err) {
            return FetchError::AddressRefused { url, refused };
        }
        if err.is_timeout() {
            let stage = if err.is_connect() {
                Stage::Connecting
            } else {
                stage
            };
            FetchError::Timeout { url, stage }
        } else if err.is_connect() {
            FetchError::Connect {
                url,
                reason: root_cause(err),
            }
        } else if err.is_decode() {
            FetchError::Decode {
                url,
                reason: root_cause(err),
            }
        } else if err.is_builder() {
            FetchError::InvalidUrl {
                url,
                reason: root_cause(err),
            }
        } else {
            FetchError::Transport {
                url,
                reason: root_cause(err),
            }
        }
    }
}

/// The address policy's refusal, if the resolver failed with one (it sits deep in the chain).
fn refused_by_policy(err: &(dyn StdError + 'static)) -> Option<super::address::Refused> {
    let mut cause = Some(err);
    while let Some(error) = cause {
        if let Some(refused) = error.downcast_ref::<super::address::Refused>() {
            return Some(refused.clone());
        }
        cause = error.source();
    }
    None
}

/// The innermost error message (reqwest's own message repeats the URL).
fn root_cause(err: &(dyn StdError + 'static)) -> String {
    let mut cause = err;
    while let Some(source) = cause.source() {
        cause = source;
    }
    cause.to_string()
}
