//! How a run is watched while it runs: Prometheus metrics served on the listener the user gave
//! (`freshet run --metrics ADDR`), and a live status line on a terminal. Both read the run's
//! [`crate::metrics::Metrics`]; the scheduler's gauges are brought up to date only when one of
//! them looks ([`gauges`]), so a run nobody watches pays nothing for them.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;
use tracing::warn;

use crate::metrics::{Gauges, SiteGauges, Snapshot};

use super::context::Context;

/// What watches a run.
#[derive(Debug, Default)]
pub struct Watch {
    /// Serve `/metrics` here (bound by the caller, so a bad address fails before the run).
    pub metrics: Option<tokio::net::TcpListener>,
    /// Draw a live status line on stderr (the caller checks that stderr is a terminal).
    pub status: bool,
}

/// The tasks watching a run; they end when this is dropped.
pub struct Watching {
    tasks: Vec<JoinHandle<()>>,
    bar: Option<indicatif::ProgressBar>,
}

impl Drop for Watching {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The scheduler's state now, for the gauges. Takes the scheduler's lock once for the
/// freshness of every copy: O(URLs), fine for a scrape every few seconds.
pub fn gauges(ctx: &Context) -> Gauges {
    let now = ctx.clock.now_ms();
    let freshness = ctx.ledger.freshness(now);
    Gauges {
        urls_due: ctx.ledger.due_by(now) as u64,
        hosts_in_backoff: ctx.pool.closed_hosts(now).len() as u64,
        sites: ctx
            .sites
            .iter()
            .map(|s| {
                let judged = freshness
                    .iter()
                    .find(|f| f.site_id == s.id)
                    .map(|f| (f.mean_expected_age_days, f.mean_p_stale));
                SiteGauges {
                    site: s.site.name.clone(),
                    budget_per_day: s.site.requests_per_day,
                    staleness: judged,
                }
            })
            .collect(),
    }
}

/// Starts what `watch` asks for.
pub fn start(ctx: &Arc<Context>, watch: Watch) -> Watching {
    let mut tasks = Vec::new();
    if let Some(listener) = watch.metrics {
        let scrape_ctx = Arc::clone(ctx);
        let scrape = move || {
            scrape_ctx.metrics.set_gauges(&gauges(&scrape_ctx));
            scrape_ctx.metrics.encode()
        };
        tasks.push(tokio::spawn(async move {
            if let Err(error) = crate::metrics::serve(listener, scrape).await {
                warn!(error = %error, "the metrics listener stopped");
            }
        }));
    }
    let bar = watch.status.then(|| {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        let ctx = Arc::clone(ctx);
        let line = bar.clone();
        tasks.push(tokio::spawn(async move {
            let mut rate = CheckRate::default();
            loop {
                ctx.metrics.set_gauges(&gauges(&ctx));
                let snapshot = ctx.metrics.snapshot(ctx.clock.now_ms());
                let per_minute = rate.per_minute(Instant::now(), snapshot.checks);
                line.set_message(status_line(&snapshot, per_minute));
                line.tick();
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }));
        bar
    });
    Watching { tasks, bar }
}

/// Checks per minute of real time over the last minute (or since the start).
#[derive(Default)]
struct CheckRate {
    samples: VecDeque<(Instant, u64)>,
}

impl CheckRate {
    fn per_minute(&mut self, now: Instant, checks: u64) -> f64 {
        self.samples.push_back((now, checks));
        while self
            .samples
            .front()
            .is_some_and(|(at, _)| now.duration_since(*at) > Duration::from_secs(60))
        {
            self.samples.pop_front();
        }
        let (first_at, first) = self.samples.front().copied().unwrap_or((now, checks));
        let span = now.duration_since(first_at).as_secs_f64();
        if span < 1.0 {
            return 0.0;
        }
        (checks - first) as f64 * 60.0 / span
    }
}

/// The status line: checks per minute, due now, hosts in back-off, budget used today.
pub fn status_line(s: &Snapshot, checks_per_minute: f64) -> String {
    let budget = if s.budget_per_day > 0.0 {
        format!(
            "budget today {}/{:.0} ({:.0}%)",
            s.requests_today,
            s.budget_per_day,
            100.0 * s.requests_today as f64 / s.budget_per_day
        )
    } else {
        format!("{} requests today", s.requests_today)
    };
    format!(
        "{checks_per_minute:.1} checks/min · {} due now · {} hosts in back-off · {budget} · \
         {} checks, {} requests in this run",
        s.urls_due, s.hosts_in_backoff, s.checks, s.requests
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_line_says_rate_due_backoff_and_budget() {
        let s = Snapshot {
            requests: 40,
            checks: 30,
            requests_today: 25,
            budget_per_day: 100.0,
            urls_due: 7,
            hosts_in_backoff: 2,
        };
        let line = status_line(&s, 12.0);
        assert!(line.starts_with("12.0 checks/min · 7 due now · 2 hosts in back-off"));
        assert!(line.contains("budget today 25/100 (25%)"), "{line}");
    }

    #[test]
    fn checks_per_minute_over_the_last_minute() {
        let mut rate = CheckRate::default();
        let t0 = Instant::now();
        assert_eq!(rate.per_minute(t0, 0), 0.0);
        assert_eq!(rate.per_minute(t0 + Duration::from_secs(30), 10), 20.0);
        // A minute and a half in: only the last minute counts (10 -> 40 over 60 s).
        rate.per_minute(t0 + Duration::from_secs(60), 25);
        let r = rate.per_minute(t0 + Duration::from_secs(90), 40);
        assert!((r - 30.0).abs() < 1e-9, "{r}");
    }
}
