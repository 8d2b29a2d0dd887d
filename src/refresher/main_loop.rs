//! The refresher's loop: it hands what the scheduler says is due to check tasks (at most
//! [`MAX_IN_FLIGHT`], each on its own host), starts discovery passes beside them, stores the
//! freshness samples and the budgets spent, takes part in the lease rounds of several workers,
//! ends a one-pass run once what is left cannot go within [`ONCE_PATIENCE_MS`], and on shutdown
//! gives the checks in flight [`super::SHUTDOWN_GRACE`] before cutting them short. It sleeps
//! until the scheduler's next instant, a discovery time, a sample or a finished task.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinSet;
use tracing::{info, warn};

use super::context::Context;
use super::discoveries::Discoveries;
use super::{LeftDue, SAVE_PLANS_EVERY_MS, SHUTDOWN_GRACE, checks, leases, store_samples};
use crate::clock;
use crate::scheduler::{Fetched, Seen};

/// Checks in flight at once (each on its own host: the scheduler hands a host one at a time).
const MAX_IN_FLIGHT: usize = 64;
/// The longest the loop sleeps before looking again (clock time).
const MAX_IDLE: Duration = Duration::from_secs(300);
/// A one-pass run ends when what is left due cannot go within this long (clock time): it waits
/// on the site's budget or on a host closed by back-off.
pub(super) const ONCE_PATIENCE_MS: i64 = 60_000;

/// Queues the saves of the budgets spent from since the last ([`Ledger::budget_saves`]): a
/// restart, or the next `--once` pass, starts from them (one process on the database; several
/// workers share each site's credit through its pool instead). A failed save is logged; the site's
/// next spend saves it again.
pub(super) fn save_budgets(ctx: &Context, now: i64) {
    if ctx.leasing.is_some() {
        return; // several workers: the sites' pools hold the credit (`leases::round`)
    }
    let saves = ctx.ledger.budget_saves(now);
    if saves.is_empty() {
        return;
    }
    let saved = ctx.store.save_site_budgets(saves);
    tokio::spawn(async move {
        if let Err(error) = saved.await {
            warn!(error = %error, "a save of the sites' budgets failed");
        }
    });
}

/// Runs until stopped, or with `once` until the pass is done: then what it left due, if any.
/// The samples and plans are stored beside the loop ([`store_samples`], one save at a time):
/// a save writes every URL's plan, and the estimates a refit moved (a few microseconds each,
/// every page after a six-hour refit), which the loop must not wait for before handing out
/// the next checks. A save still running when the loop ends is waited for.
pub(super) async fn main_loop(ctx: &Arc<Context>, once: bool) -> anyhow::Result<Option<LeftDue>> {
    let mut saving = None;
    let result = turns(ctx, once, &mut saving).await;
    if let Some(save) = saving
        && let Err(error) = save.await
    {
        warn!(error = %error, "a save of the samples and plans failed");
    }
    result
}

/// The loop's turns; `saving` holds the save of samples and plans running beside it.
async fn turns(
    ctx: &Arc<Context>,
    once: bool,
    saving: &mut Option<tokio::task::JoinHandle<()>>,
) -> anyhow::Result<Option<LeftDue>> {
    // When a shutdown's grace ends (real time: promptness is about the user, not the clock).
    let mut cut_short_at: Option<tokio::time::Instant> = None;
    let mut checks: JoinSet<()> = JoinSet::new();
    // The URL each running check works on, so a panicked task still frees its host.
    let mut check_urls: HashMap<tokio::task::Id, i64> = HashMap::new();
    let mut discoveries = Discoveries::new(ctx).await?;
    // With --once, only what is due by the end of the first discovery passes is fetched.
    let mut once_cutoff: Option<i64> = None;
    // Every copy is judged at each instant of the quarter-hour grid, with what was held then.
    ctx.ledger
        .start_sampling(ctx.clock.clone(), SAVE_PLANS_EVERY_MS);
    let mut next_lease_round = ctx.clock.now_ms();
    loop {
        let now = ctx.clock.now_ms();
        let stopping = ctx.is_stopping();
        // What discovery and the checks that ended spent or gave back since the last turn.
        save_budgets(ctx, now);
        if saving.as_ref().is_none_or(|save| save.is_finished())
            && (ctx.ledger.samples_waiting() || ctx.ledger.estimates_outdated())
        {
            let ctx = Arc::clone(ctx);
            *saving = Some(tokio::spawn(async move {
                store_samples(&ctx).await;
            }));
        }
        if let Some(leasing) = &ctx.leasing
            && !stopping
            && now >= next_lease_round
        {
            // A failed round is tried again at the next; meanwhile the leases run out here a
            // margin before they do in the database, so nothing is contacted without one.
            match leases::round(ctx, leasing, true).await {
                Ok(gained) => discoveries.hosts_gained(ctx, &gained, now),
                Err(error) => warn!(error = %format!("{error:#}"), "the lease round failed"),
            }
            next_lease_round = now + leasing.renew_every_ms();
        }
        if !stopping {
            if !once || discoveries.done_once.len() < ctx.sites.len() {
                discoveries.start_due(ctx, now);
            }
            let mut due_now = Vec::new();
            while checks.len() + due_now.len() < MAX_IN_FLIGHT {
                let Some(due) = ctx.ledger.poll(now) else {
                    break;
                };
                due_now.push(due);
            }
            // What they spend is queued before any of their requests' writes.
            save_budgets(ctx, now);
            for due in due_now {
                let url_id = due.url_id;
                let task_ctx = Arc::clone(ctx);
                let handle = checks.spawn(async move { checks::check(&task_ctx, due).await });
                check_urls.insert(handle.id(), url_id);
            }
        }
        if once && discoveries.running.is_empty() {
            // What the pass's own reading found (a feed's new pages) belongs to the pass too.
            let found = ctx.ledger.last_added_ms().unwrap_or(now);
            once_cutoff = Some(once_cutoff.unwrap_or(now).max(found));
        }
        if let Some(cutoff) = once_cutoff
            && checks.is_empty()
            && discoveries.tasks.is_empty()
        {
            let left = ctx.ledger.due_by(cutoff);
            // What is left waits on the budget or a closed host for longer than a pass should.
            // (When the next request could go: a re-plan due sooner makes nothing go sooner.)
            let next_request_at = ctx.ledger.next_request_at();
            let blocked = next_request_at.is_none_or(|at| at > now + ONCE_PATIENCE_MS);
            if left == 0 || blocked {
                info!(left, "one pass done");
                return Ok((left > 0).then_some(LeftDue {
                    urls: left as u64,
                    next_at_ms: next_request_at,
                }));
            }
        }
        if stopping && checks.is_empty() && discoveries.tasks.is_empty() {
            return Ok(None);
        }
        let mut wake = now + MAX_IDLE.as_millis() as i64;
        if !stopping
            && checks.len() < MAX_IN_FLIGHT
            && let Some(at) = ctx.ledger.timeout()
        {
            wake = wake.min(at);
        }
        if let Some(at) = discoveries.next_due().filter(|_| !once) {
            wake = wake.min(at);
        }
        if let Some(at) = ctx.ledger.next_sample_ms() {
            // The samples judged then are stored soon after.
            wake = wake.min(at);
        }
        if ctx.leasing.is_some() && !stopping {
            wake = wake.min(next_lease_round);
        }
        if stopping && cut_short_at.is_none() {
            info!(
                in_flight = checks.len(),
                "shutting down: finishing checks in flight"
            );
            cut_short_at = Some(tokio::time::Instant::now() + SHUTDOWN_GRACE);
        }
        let grace_over = async {
            match cut_short_at {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = ctx.stop.stopped(), if !stopping => {}
            () = grace_over => {
                warn!(
                    checks = checks.len(),
                    discoveries = discoveries.tasks.len(),
                    "shutting down: cutting short what is still running"
                );
                checks.abort_all();
                discoveries.tasks.abort_all();
                while checks.join_next().await.is_some() {}
                while discoveries.tasks.join_next().await.is_some() {}
                save_budgets(ctx, ctx.clock.now_ms());
                return Ok(None);
            }
            Some(done) = checks.join_next_with_id(), if !checks.is_empty() => {
                let id = match done {
                    Ok((id, ())) => id,
                    Err(err) => {
                        // A failed check must not take the daemon down, nor keep its host.
                        warn!(error = %err, "a check task failed");
                        if let Some(&url_id) = check_urls.get(&err.id()) {
                            let at = ctx.clock.now_ms();
                            ctx.ledger.fetched(at, url_id, Fetched::at(at, Seen::Unanswered));
                        }
                        err.id()
                    }
                };
                check_urls.remove(&id);
            }
            Some(done) = discoveries.tasks.join_next_with_id(), if !discoveries.tasks.is_empty() => {
                let (id, site_id, result) = match done {
                    Ok((id, (site_id, result))) => (id, Some(site_id), result),
                    Err(err) => {
                        let site_id = discoveries.task_sites.get(&err.id()).copied();
                        (err.id(), site_id, Err(anyhow::anyhow!("the discovery task failed: {err}")))
                    }
                };
                discoveries.task_sites.remove(&id);
                if let Some(site_id) = site_id {
                    discoveries.finished(ctx, site_id, result).await;
                }
            }
            // A URL handed out came back: its host may take the next one before its check ends.
            () = ctx.ledger.returned(), if !stopping && checks.len() < MAX_IN_FLIGHT => {}
            () = clock::sleep_until(ctx.clock.as_ref(), wake.max(now + 1)) => {}
        }
    }
}
