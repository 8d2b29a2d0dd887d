//! Several `freshet run` workers on one PostgreSQL database: each contacts only the hosts it
//! holds a lease on ([`crate::store::leases`]), so no host ever has two workers' requests at
//! once, and a killed worker's hosts are taken over when its leases expire.
//!
//! Every [`super::lease_state::RENEW_EVERY_MS`] (at most) a round renews this worker's leases
//! and claims free hosts up to its fair share. What the round changes is applied where
//! requests are decided: the politeness pool hands out permits only for held hosts
//! ([`crate::politeness::HeldHosts`]: pages, hops, robots.txt, sitemaps and feeds alike), and
//! the scheduler hands out no URL of a host held elsewhere. A host taken over is contacted only
//! once its politeness row is read (so the gap since the last worker's last request holds) and
//! its URLs' rows (their evidence and due times). A host beyond the share
//! (another worker joined) is first no longer contacted, then given back once no request to it
//! is in flight. Discovery reads each sitemap and robots.txt on the worker that holds its host
//! (one at a time, like any request), and a worker that gains a host runs discovery again for
//! the sites with sources there; every worker reads the URLs others found at each round.
//!
//! Without PostgreSQL (one process on a SQLite file) there are no leases and every host is held.

use std::collections::HashSet;
use std::sync::atomic::Ordering;

use tracing::{info, warn};

use super::ROWS_PER_READ;
use super::context::Context;
use super::lease_state::{Leasing, NAME_CHUNK, NAME_EVERY_MS, REREAD_IDS};
use crate::politeness::key_of;
use crate::scheduler::{IdleRefill, PoolExchange};
use crate::store::leases::LeaseRound;
use crate::store::urls::{UrlPages, UrlScope};

/// One round: registers the hosts known, renews and claims leases, gives back idle surplus
/// hosts, and applies the result to the pool and the scheduler. Then reads the URLs other
/// workers added.
/// `refresh`: hosts gained read their URLs' rows again (at start the scheduler was just
/// filled from them). Answers the hosts gained.
pub async fn round(ctx: &Context, leasing: &Leasing, refresh: bool) -> anyhow::Result<Vec<String>> {
    let now = ctx.clock.now_ms();
    let mut known = ctx.ledger.politeness_keys();
    // The hosts of every site's sitemaps, feeds and seeds, which discovery reads on their
    // holder.
    known.extend(
        ctx.sites
            .iter()
            .flat_map(|s| s.site.origins())
            .map(|origin| key_of(&origin)),
    );
    // Every host known is named again every hour (a host no worker names for a week is gone
    // from every schedule: see `store::leases`), a new one at once; the hosts of the sites'
    // stored sitemaps too (not in the scheduler: a host that serves only a sitemap that an
    // index or a robots.txt names is known only there).
    let name_all =
        now.saturating_sub(leasing.named_all_ms.load(Ordering::Relaxed)) >= NAME_EVERY_MS;
    if name_all {
        for site in &ctx.sites {
            let stored = ctx.store.sitemaps_of_site(site.id).await?;
            known.extend(
                stored
                    .iter()
                    .filter_map(|row| url::Url::parse(&row.url).ok())
                    .map(|url| key_of(&crate::politeness::origin_of(&url))),
            );
        }
    }
    let named: Vec<String> = {
        let registered = leasing.registered.lock().unwrap_or_else(|e| e.into_inner());
        known
            .iter()
            .filter(|k| name_all || !registered.contains(*k))
            .cloned()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect()
    };
    // In key order, so that two workers registering the same new hosts never deadlock, and a
    // few hundred a transaction: naming every host in one would hold their rows against the
    // other workers' rounds for as long.
    for chunk in named.chunks(NAME_CHUNK) {
        ctx.store.add_lease_keys(chunk, now).await?;
    }
    if !named.is_empty() {
        let mut registered = leasing.registered.lock().unwrap_or_else(|e| e.into_inner());
        registered.extend(named);
    }
    if name_all {
        leasing.named_all_ms.store(now, Ordering::Relaxed);
    }
    let release: Vec<String> = {
        let leaving = leasing.leaving.lock().unwrap_or_else(|e| e.into_inner());
        leaving
            .iter()
            .filter(|key| ctx.pool.status(key).is_none_or(|s| s.in_flight == 0))
            .cloned()
            .collect()
    };
    let result = ctx
        .store
        .lease_round(&leasing.worker, now, leasing.ttl_ms, &release)
        .await?;
    // A lease that lapsed here (its margin passed before this round renewed it) counts as
    // gained again: what was skipped meanwhile (discovery, new URLs) is taken up.
    let listed: HashSet<String> = leasing.held.keys().into_iter().collect();
    let was: HashSet<String> = listed
        .iter()
        .filter(|key| leasing.held.holds(key, now))
        .cloned()
        .collect();
    let now_held: HashSet<String> = result.held.iter().cloned().collect();
    let (gained, leave) = apply(ctx, leasing, &release, &result, now + leasing.ttl_ms, &was);
    for key in listed.difference(&now_held) {
        // Lost (expired while the database was out of reach): never contacted again here
        // until held again. (A host no schedule names any more is let go: no loss.)
        if known.contains(key) {
            warn!(host = %key, "lease lost: another worker may hold this host now");
        }
        leasing.held.drop_host(key);
        ctx.ledger.set_held(key, None);
    }
    if !gained.is_empty() || !leave.is_empty() {
        info!(
            worker = %leasing.worker,
            gained = gained.len(),
            leaving = leave.len(),
            held = now_held.len(),
            share = result.share,
            workers = result.workers,
            "host leases"
        );
    }
    // A host gained is contacted only once its politeness row is read (the gap since another
    // worker's last request holds) and, after the start, its URLs' rows; should that fail, it
    // stays unheld here and is gained again at the next round. A lease that lapsed here is
    // marked held elsewhere first (another worker may have held the host meanwhile): its rows
    // are taken up as any gained host's, not as this worker's own.
    for key in &gained {
        ctx.ledger.set_held(key, None);
    }
    take_over(ctx, &gained, refresh).await?;
    for key in &gained {
        leasing.held.gain(key, now + leasing.ttl_ms);
        ctx.ledger
            .set_held(key, Some(ctx.pool.next_allowed_ms(key)));
    }
    // From here on a failure is said and the round goes on: the hosts gained are held, and
    // the caller must hear of them.
    if refresh {
        if let Err(error) = read_new_urls(ctx, leasing).await {
            warn!(error = %format!("{error:#}"), "the URLs other workers added could not be read");
        }
        if let Err(error) = read_others_checks(ctx, leasing, now).await {
            warn!(error = %format!("{error:#}"), "other workers' checks could not be read");
        }
    } else {
        leasing.checks_read_ms.store(now, Ordering::Relaxed);
    }
    // The budgets follow the hosts: the workers' shares of a site's budget add up to it.
    let now = ctx.clock.now_ms();
    let mine = ctx.ledger.budget_parts();
    match ctx
        .store
        .share_budget_parts(&leasing.worker, now, now + leasing.ttl_ms, &mine)
        .await
    {
        Ok(sums) => {
            // The first round of a worker that starts alone refills the pools for the time no
            // worker ran. Until one exchange went through, every round is its first: should it
            // fail, the next round refills them instead.
            let first = !leasing.settled_budgets.load(Ordering::Relaxed);
            let idle = if first && result.workers <= 1 {
                IdleRefill::Since {
                    others_until_ms: result.others_until_ms,
                }
            } else {
                IdleRefill::None
            };
            let exchanges = ctx
                .ledger
                .share_budgets(&mine, &sums, result.workers, now, idle);
            if exchange_budget_pools(ctx, exchanges).await {
                leasing.settled_budgets.store(true, Ordering::Relaxed);
            }
        }
        // The shares of the last round stay; the hosts gained are this round's all the same.
        Err(error) => warn!(error = %error, "the budget parts could not be shared"),
    }
    Ok(gained)
}

/// Hands the sites' pools what this worker's buckets no longer hold and takes what they have
/// room for ([`crate::scheduler::settle_pool`]); answers whether that went through. A failed
/// exchange loses what was handed in (the sites spend less, never more).
pub async fn exchange_budget_pools(ctx: &Context, exchanges: Vec<(i64, PoolExchange)>) -> bool {
    if exchanges.is_empty() {
        return true;
    }
    match ctx
        .store
        .exchange_budget_pools(exchanges, ctx.clock.now_ms())
        .await
    {
        Ok(granted) => {
            ctx.ledger.grant_budgets(&granted, ctx.clock.now_ms());
            true
        }
        Err(error) => {
            warn!(error = %error, "the budget pools could not be settled");
            false
        }
    }
}

/// Applies a round's result to the pool and the scheduler: hosts beyond the share start
/// leaving (the last ones in key order; given back at a later round, once idle), those held
/// already are held until `until`. Answers the hosts gained (not held yet: see [`round`]) and
/// those that started leaving.
fn apply(
    ctx: &Context,
    leasing: &Leasing,
    released: &[String],
    result: &LeaseRound,
    until: i64,
    was: &HashSet<String>,
) -> (Vec<String>, Vec<String>) {
    let mut leaving = leasing.leaving.lock().unwrap_or_else(|e| e.into_inner());
    for key in released {
        leaving.remove(key);
    }
    let surplus = result.held.len().saturating_sub(result.share);
    let mut leave: Vec<String> = result
        .held
        .iter()
        .filter(|k| !leaving.contains(*k))
        .rev()
        .take(surplus.saturating_sub(leaving.len()))
        .cloned()
        .collect();
    leave.sort_unstable();
    leaving.extend(leave.iter().cloned());
    let mut gained = Vec::new();
    for key in &result.held {
        if leaving.contains(key) {
            leasing.held.drop_host(key);
            ctx.ledger.set_held(key, None);
        } else if was.contains(key) && leasing.held.renew(key, until, ctx.clock.now_ms()) {
            // Held all along (a lease that passed its margin during this round is gained
            // again: walks may have passed its host by).
        } else {
            gained.push(key.clone());
        }
    }
    (gained, leave)
}

/// Starts the hosts this worker just took from the database: politeness first (the gap since
/// another worker's last request holds), then (`refresh`: not at the start, when the scheduler
/// was just filled from them) their URLs' evidence and due times.
async fn take_over(ctx: &Context, gained: &[String], refresh: bool) -> anyhow::Result<()> {
    if gained.is_empty() {
        return Ok(());
    }
    let gained: HashSet<&String> = gained.iter().collect();
    let saved: Vec<_> = ctx
        .store
        .load_politeness()
        .await?
        .into_iter()
        .filter(|row| gained.contains(&row.key))
        .collect();
    ctx.pool.restore(&saved);
    if !refresh {
        return Ok(());
    }
    let mut pages = UrlPages::new(UrlScope::Schedulable, ROWS_PER_READ);
    while let Some(rows) = pages.next(&ctx.store).await? {
        let mine: Vec<_> = rows
            .into_iter()
            .filter(|row| gained.contains(&key_of(&row.url)))
            .collect();
        ctx.take_over_rows(&mine).await;
    }
    Ok(())
}

/// Takes up what other workers learnt of their hosts' URLs since the last round (evidence,
/// last check), so that every worker plans each site, and sizes its part of the budget, on the
/// same knowledge; and, on the hosts it holds, a check another worker committed after the
/// host changed hands. Rows are read by when their check was written (`urls.written_ms`), with
/// an overlap for commits still in flight then.
async fn read_others_checks(ctx: &Context, leasing: &Leasing, now: i64) -> anyhow::Result<()> {
    let since = leasing.checks_read_ms.load(Ordering::Relaxed);
    let after = since.saturating_sub(leasing.checks_overlap_ms);
    let mut pages = UrlPages::new(UrlScope::WrittenAfter(after), ROWS_PER_READ);
    while let Some(rows) = pages.next(&ctx.store).await? {
        let (here, mut theirs): (Vec<_>, Vec<_>) = rows
            .into_iter()
            .partition(|row| leasing.held.holds(&key_of(&row.url), now));
        // A check another worker committed after this one took the host (its request went
        // out before the lease changed hands): its copy is newer than what this one knows.
        theirs.extend(ctx.ledger.newer_than_known(here));
        ctx.take_over_rows(&theirs).await;
    }
    leasing.checks_read_ms.store(now, Ordering::Relaxed);
    Ok(())
}

/// Hands the scheduler the URLs any worker added since the last read.
async fn read_new_urls(ctx: &Context, leasing: &Leasing) -> anyhow::Result<()> {
    // PostgreSQL hands out ids as rows are inserted, not as they are committed: a lower id
    // may become visible after a higher one. The last ids read are read again (a known URL's
    // row only refreshes its hints).
    let after = (leasing.last_url_id.load(Ordering::Relaxed) - REREAD_IDS).max(0);
    let mut pages = UrlPages::after(UrlScope::Schedulable, ROWS_PER_READ, after);
    while let Some(rows) = pages.next(&ctx.store).await? {
        if let Some(last) = rows.last() {
            leasing.saw_url_ids(last.id);
        }
        ctx.sync_rows(&rows);
    }
    Ok(())
}
