//! Re-planning a site: pool its pages' estimates into a prior (empirical Bayes), solve the
//! revisit rates under the site's budget and its hosts' limits with [`crate::plan`], and write
//! the rates and due times back. Between full re-plans each check updates its own page through
//! the solved multipliers ([`Context::planned_rate`]), in O(1).

use std::collections::{HashMap, HashSet};

use url::Url;

use crate::clock::MS_PER_DAY;
use crate::estimate::{self, Evidence, Prior, changefreq_per_day};
use crate::plan::{self, Limits, Objective, PlanPage, Policy};
use crate::politeness::origin_of;
use crate::store::urls::{PlanUpdate, UrlRow};

use super::PolicyChoice;
use super::checks::{estimate_row, plan_page};
use super::context::{Context, SitePlan, SiteState};

/// The uniform baseline never visits a page more than this many times its changefreq hint.
const UNIFORM_HINT_FACTOR: f64 = 4.0;

/// Re-plans every site.
pub async fn replan_all(ctx: &Context) -> anyhow::Result<()> {
    for site in &ctx.sites {
        replan_site(ctx, site).await?;
    }
    Ok(())
}

/// The planner's policy for the refresher's choice.
pub fn planner_policy(choice: PolicyChoice) -> Policy {
    match choice {
        PolicyChoice::Learned => Policy::AgeOptimal,
        PolicyChoice::Uniform => Policy::Uniform,
    }
}

/// A stored page as the planner sees it under `choice`.
pub fn page_for(
    choice: PolicyChoice,
    site: &SiteState,
    row: &UrlRow,
    rate: f64,
    host: usize,
) -> PlanPage {
    let mut page = plan_page(
        rate,
        site.site.weight * row.weight,
        host,
        row.min_interval_ms,
    );
    if choice == PolicyChoice::Uniform
        && let Some(hint) = row.changefreq.as_deref().and_then(changefreq_per_day)
    {
        page.max_visits_per_day = page.max_visits_per_day.min(UNIFORM_HINT_FACTOR * hint);
    }
    page
}

/// The share of a site's budget always left to its pages, however many sitemaps and feeds it has.
const MIN_PAGE_SHARE: f64 = 0.1;

/// What is left of a site's `requests_per_day` for its pages once its sitemaps and feeds have
/// been re-read at every `rediscover` time of the coming day (they count against the budget too).
pub fn page_budget(site: &SiteState, documents: usize, now: chrono::DateTime<chrono::Utc>) -> f64 {
    let day_end = now + chrono::TimeDelta::days(1);
    let passes = site
        .site
        .rediscover
        .after(&now)
        .take_while(|t| *t <= day_end)
        .take(10_000)
        .count();
    let overhead = (documents * passes) as f64;
    let total = site.site.requests_per_day;
    (total - overhead).max(total * MIN_PAGE_SHARE)
}

/// Pages with at least this many checks judge their host's changefreq hints.
const HINT_JUDGE_CHECKS: i64 = 3;
/// A host's hints are dropped when the median learned/hinted rate ratio is off by more than
/// this factor either way (hints that lie are worse than none: a `yearly` page that changes
/// daily would wait days for its second visit).
const HINT_TOLERANCE: f64 = 5.0;

/// The hosts of `rows` whose sitemap changefreq hints disagree with what their own pages taught
/// (learned trust, like validator trust): their hints are ignored from then on.
pub fn distrusted_hint_hosts(rows: &[UrlRow]) -> HashSet<i64> {
    let mut log_ratios: HashMap<i64, Vec<f64>> = HashMap::new();
    for row in rows.iter().filter(|r| r.checks >= HINT_JUDGE_CHECKS) {
        let (Some(learned), Some(hint)) = (
            row.rate_per_day,
            row.changefreq.as_deref().and_then(changefreq_per_day),
        ) else {
            continue;
        };
        log_ratios
            .entry(row.host_id)
            .or_default()
            .push((learned.max(1e-6) / hint).ln().abs());
    }
    log_ratios
        .into_iter()
        .filter(|(_, ratios)| ratios.len() >= 3)
        .filter_map(|(host, mut ratios)| {
            ratios.sort_by(f64::total_cmp);
            (ratios[ratios.len() / 2] > HINT_TOLERANCE.ln()).then_some(host)
        })
        .collect()
}

/// The stored Gamma posterior of a page, for pooling.
fn stored_posterior(row: &UrlRow) -> Option<Prior> {
    Some(Prior {
        shape: row.rate_shape?,
        rate: row.rate_scale?,
    })
}

/// Re-plans one site from its pages' summary rows.
pub async fn replan_site(ctx: &Context, site: &SiteState) -> anyhow::Result<()> {
    let all_rows = ctx.store.urls_of_site(site.id).await?;
    let documents = all_rows.iter().filter(|r| r.kind != "page").count();
    let rows: Vec<UrlRow> = all_rows
        .into_iter()
        .filter(|r| r.kind == "page" && r.disallowed == 0)
        .collect();
    if rows.is_empty() {
        return Ok(());
    }
    let checked: Vec<Prior> = rows
        .iter()
        .filter(|r| r.checks >= 2)
        .filter_map(stored_posterior)
        .collect();
    let prior = estimate::pool(&checked, Prior::default());
    let distrusted = distrusted_hint_hosts(&rows);
    if let Some(plan) = ctx
        .plans
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_mut(&site.id)
    {
        // Re-estimates below must already ignore the hints just found to lie.
        plan.distrusted_hint_hosts = distrusted.clone();
    }

    let mut host_index: HashMap<i64, usize> = HashMap::new();
    let mut limits = Limits {
        budget_per_day: page_budget(site, documents, ctx.clock.now()),
        host_limits_per_day: Vec::new(),
    };
    let mut pages = Vec::with_capacity(rows.len());
    for row in &rows {
        let host = *host_index.entry(row.host_id).or_insert_with(|| {
            let interval = Url::parse(&row.url)
                .ok()
                .and_then(|u| ctx.robots.interval(&origin_of(&u)))
                .unwrap_or(site.site.host_rate.min_interval());
            let per_day = if interval.is_zero() {
                f64::INFINITY
            } else {
                86_400.0 / interval.as_secs_f64()
            };
            limits.host_limits_per_day.push(per_day);
            limits.host_limits_per_day.len() - 1
        });
        let rate = match row.rate_per_day {
            // Estimated while the host's hints were still believed: estimate again without.
            Some(_)
                if row.checks > 0
                    && row.checks < HINT_JUDGE_CHECKS * 2
                    && distrusted.contains(&row.host_id) =>
            {
                estimate_row(ctx, row, None).await?.rate_per_day
            }
            Some(rate) if row.checks > 0 => rate,
            _ => {
                let hints = Evidence {
                    changefreq_per_day: row
                        .changefreq
                        .as_deref()
                        .filter(|_| !distrusted.contains(&row.host_id))
                        .and_then(changefreq_per_day),
                    ..Default::default()
                };
                estimate::prior_with_hints(&hints, &prior).mean()
            }
        };
        pages.push(page_for(ctx.policy, site, row, rate, host));
    }
    let (rates, multipliers) =
        plan::solve_full(planner_policy(ctx.policy), &pages, &limits, Objective::Age);
    let now = ctx.clock.now_ms();
    let updates: Vec<PlanUpdate> = rows
        .iter()
        .zip(&rates)
        .map(|(row, &f)| {
            let interval_ms = (MS_PER_DAY / f.max(1e-6)).min(365.0 * MS_PER_DAY) as i64;
            let next_due_ms = match (row.last_checked_ms, row.known_change_ms) {
                (Some(last), None) => {
                    (last + interval_ms.max(row.min_interval_ms.unwrap_or(0))).max(now)
                }
                _ => row.next_due_ms.unwrap_or(now),
            };
            PlanUpdate {
                url_id: row.id,
                planned_per_day: f,
                next_due_ms,
            }
        })
        .collect();
    ctx.store.save_plan(&updates).await?;
    let mut plans = ctx.plans.lock().unwrap_or_else(|e| e.into_inner());
    plans.insert(
        site.id,
        SitePlan {
            multipliers,
            host_index,
            prior,
            distrusted_hint_hosts: distrusted,
        },
    );
    Ok(())
}
