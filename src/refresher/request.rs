//! The request of a check, a feed read or a discovery pass, made politely and not yet recorded:
//! conditional on the copy's validators as far as its host's answers earned trust, robots.txt
//! asked on every redirect hop, a 304 the host's trust doubts audited with a plain GET.
//! [`super::fetching`] records what it gave; a discovery probe of a page named as a sitemap
//! records it only if it reads as one ([`super::sitemap_kinds`]).

use std::time::Instant;

use url::Url;

use crate::estimate::ValidatorTrust;
use crate::fetch::{FetchError, FetchOutcome, FetchRequest, Method, Validators};
use crate::store::urls::CheckRow;

use super::context::{Context, SiteState};
use super::evidence::PreviousCopy;
use super::robots_rules::RobotsGate;
use super::waits::{Step, StepTimes};

/// The largest sitemap or feed read (the sitemap protocol's 50 MB, compressed or not; the parser
/// caps the decompressed size again).
pub const MAX_DOCUMENT_BYTES: u64 = 50 * 1024 * 1024;

/// What a request gave.
pub(super) enum Request {
    /// Nothing reached the server (the host closed or not held here, the run stopping): its
    /// outcome's error says why.
    NotSent(FetchOutcome, StepTimes),
    /// The server answered, or the request failed on the way.
    Sent(Sent),
}

/// A request that went out, with what its recording needs.
pub(super) struct Sent {
    /// Its outcome (the audit's, when a doubted 304 was audited and the audit got a copy).
    pub outcome: FetchOutcome,
    /// What was known of the copy before it.
    pub previous: PreviousCopy,
    /// The host's validator trust it was made with.
    pub trust: ValidatorTrust,
    /// The requests made (every redirect hop, and an audit's).
    pub requests: u32,
    /// Whether the outcome is an audit's GET of a 304.
    pub audited: bool,
    /// How long it took.
    pub steps: StepTimes,
}

/// Makes the request of `row` at `url` (a body capped at `max_body`, else the site's cap).
pub(super) async fn request(
    ctx: &Context,
    site: &SiteState,
    row: &CheckRow,
    url: &Url,
    method: Method,
    max_body: Option<u64>,
) -> Request {
    let mut steps = StepTimes::default();
    let previous = PreviousCopy {
        // The last check that left a copy, not the last check: after a 500 the copy is still
        // there to ask conditionally and to compare with.
        exists: row.copy_ms.is_some(),
        etag: row.etag.clone(),
        last_modified: row.last_modified.clone(),
        fingerprint: row.fingerprint.map(crate::store::hash_from_db),
        content_fingerprint: row.content_fingerprint.map(crate::store::hash_from_db),
    };
    let trust = ctx.ledger.trust(row.host_id);
    let validators = if previous.exists {
        Validators {
            etag: row.etag.clone().filter(|_| trust.send_if_none_match()),
            last_modified: row
                .last_modified
                .clone()
                .filter(|_| trust.send_if_modified_since()),
        }
    } else {
        Validators::default()
    };
    let request = FetchRequest {
        url: url.clone(),
        method,
        validators,
    };
    let cap = max_body.unwrap_or(site.site.max_body);
    // robots.txt is asked again on every hop: a redirect may lead to a Disallowed path or to
    // another host with rules of its own.
    let gate = RobotsGate { ctx, site };
    let fetcher = &site.fetcher;
    let request_started = Instant::now();
    let mut outcome = fetcher
        .fetch_gated(&request, cap, &ctx.pool, ctx.clock.as_ref(), &gate)
        .await;
    if let (Some(FetchError::NotSent { .. }), true) = (&outcome.error, outcome.hops.is_empty()) {
        steps.ended(Step::Request, request_started);
        return Request::NotSent(outcome, steps);
    }
    let mut requests = outcome.hops.len().max(1) as u32;
    crate::metrics::report_fetch(&ctx.metrics, &site.site.name, &outcome);
    let mut audited = false;
    if outcome.not_modified() && method == Method::Get && trust.audit_after_304() {
        // The 304 is a claim: check it now with an unconditional GET (see estimate::trust).
        let audit = fetcher
            .fetch_gated(
                &FetchRequest::get(url.clone()),
                cap,
                &ctx.pool,
                ctx.clock.as_ref(),
                &gate,
            )
            .await;
        requests += audit.hops.len() as u32;
        crate::metrics::report_fetch(&ctx.metrics, &site.site.name, &audit);
        if audit.is_success() && audit.fingerprint.is_some() {
            tracing::debug!(url = %url, "audited a 304 with an unconditional GET");
            outcome = audit;
            audited = true;
        }
    }
    steps.ended(Step::Request, request_started);
    Request::Sent(Sent {
        outcome,
        previous,
        trust,
        requests,
        audited,
        steps,
    })
}
