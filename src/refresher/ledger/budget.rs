//! The ledger's side of a site's budget: what it charges, saves and restores with one worker,
//! and, with several on one database, this worker's part of each budget, its share, and what
//! it hands the sites' pools and takes from them ([`crate::scheduler::settle_pool`]).

use std::collections::HashMap;

use super::Ledger;
use crate::scheduler::{IdleRefill, PoolExchange};
use crate::store::sites::BudgetSave;

impl Ledger {
    /// This worker's part of each site's budget, by site id (several workers on one
    /// database: see [`Scheduler::budget_parts`]).
    pub fn budget_parts(&self) -> Vec<(i64, f64)> {
        let inner = self.lock();
        let parts = inner.sched.budget_parts();
        inner.site_ids.iter().copied().zip(parts).collect()
    }

    /// Spends of each site's budget the share `mine` over `sums` (all workers' parts, by site
    /// id; a site no worker has a part of yet is split evenly between the `workers` alive).
    /// Answers, by site id, what to hand the site's pool and ask of it
    /// ([`Scheduler::share_budget_with_pool`]; `idle`: whether the pools first refill for the
    /// time no worker ran).
    pub fn share_budgets(
        &self,
        mine: &[(i64, f64)],
        sums: &HashMap<i64, f64>,
        workers: i64,
        now_ms: i64,
        idle: IdleRefill,
    ) -> Vec<(i64, PoolExchange)> {
        let mut inner = self.lock();
        let mut exchanges = Vec::new();
        for &(site_id, part) in mine {
            let Some(&site) = inner.site_keys.get(&site_id) else {
                continue;
            };
            let share = match sums.get(&site_id) {
                Some(&sum) if sum > 0.0 => part / sum,
                _ => 1.0 / workers.max(1) as f64,
            };
            if let Some(exchange) = inner
                .sched
                .share_budget_with_pool(site, share, now_ms, idle)
            {
                exchanges.push((site_id, exchange));
            }
        }
        exchanges
    }

    /// A worker's start: its buckets spend nothing and hold nothing until its first round
    /// shares the budgets and the sites' pools hand it credit (a new bucket is full and
    /// refills at the whole site's rate).
    pub fn hold_no_budget(&self, now_ms: i64) {
        let mut inner = self.lock();
        for site in 0..inner.site_ids.len() {
            inner.sched.share_budget(site, 0.0, now_ms);
            inner.sched.take_budget_credit(site, now_ms);
        }
    }

    /// Adds the credit sites' pools handed over (by site id).
    pub fn grant_budgets(&self, granted: &[(i64, f64)], now_ms: i64) {
        let mut inner = self.lock();
        for &(site_id, n) in granted {
            if let Some(&site) = inner.site_keys.get(&site_id) {
                inner.sched.grant_budget(site, n, now_ms);
            }
        }
    }

    /// Takes out every site's credit (a debt stays), answering, by site id, the pool deposits
    /// that hand it over (at a worker's end; every site is settled, so that the next worker
    /// starting alone refills its pool from this instant).
    pub fn take_budgets(&self, now_ms: i64) -> Vec<(i64, PoolExchange)> {
        let mut inner = self.lock();
        let inner = &mut *inner;
        let mut deposits = Vec::new();
        for (site, &site_id) in inner.site_ids.iter().enumerate() {
            let deposit = inner.sched.take_budget_credit(site, now_ms);
            let capacity = inner.sched.whole_budget(site);
            deposits.push((site_id, PoolExchange::deposit(deposit, capacity)));
        }
        deposits
    }

    /// Puts back the budget credit an earlier run saved for a site (`credit` at `at_ms`).
    pub fn restore_budget(&self, site_id: i64, credit: f64, at_ms: i64, now_ms: i64) {
        let mut inner = self.lock();
        if let Some(&site) = inner.site_keys.get(&site_id) {
            inner.sched.restore_budget(site, credit, at_ms, now_ms);
        }
    }

    /// The budgets spent from since they were last handed out here, to be saved: (site id,
    /// credit, the instant of the credit). Saved before the requests that spent them are sent
    /// (the store commits in the order writes are queued), a restart starts from them.
    pub fn budget_saves(&self, now_ms: i64) -> Vec<BudgetSave> {
        let mut inner = self.lock();
        let inner = &mut *inner;
        let mut saves = Vec::new();
        for (site, &site_id) in inner.site_ids.iter().enumerate() {
            let spent = inner.sched.budget_spent(site);
            if spent != inner.saved_spent[site] {
                inner.saved_spent[site] = spent;
                let (credit, at_ms) = inner.sched.budget_state(site, now_ms);
                saves.push(BudgetSave {
                    site_id,
                    credit,
                    at_ms,
                });
            }
        }
        saves
    }

    /// Charges requests made outside the frontier (robots.txt, sitemaps) to a site.
    pub fn charge(&self, site_id: i64, now_ms: i64, n: u32) {
        let mut inner = self.lock();
        if let Some(&site) = inner.site_keys.get(&site_id) {
            inner.sched.charge(site, now_ms, n);
        }
    }
}
