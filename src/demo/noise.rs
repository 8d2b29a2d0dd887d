//! The demo's noise-only pages (the `live` host, see [`super::world`]) judged from both sides:
//! from the server's request log, the share of the requests they took ([`noise_figures`], pure);
//! from freshet's database, the rates it learnt for them ([`learnt_noise_rates`]).
//!
//! Their content changes about once a month; their bytes change at almost every request. A
//! refresher that learns the rate of content changes (`change_signal = "content"`) should learn a
//! rate near their true one and spend little on them; one that learns byte changes
//! (`change_signal = "bytes"`) learns the rate of their noise and spends its budget there.
//!
//! The learnt rates are re-derived from each page's stored checks with the pure estimator and
//! the uninformative prior, once from `observations.content_changed` and once from
//! `observations.changed`, so both are comparable whichever signal the run used (a 304 is
//! "unchanged" for both); `mean_learnt_rate` is what the scheduler itself held (`urls`).

use super::server::RequestRecord;
use super::world::{NOISE_HOST, World};
use crate::estimate::{Check, Evidence, Prior, estimate};
use crate::store::Store;

/// The noise-only pages' figures.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct NoisePages {
    /// How many there are.
    pub pages: usize,
    /// Their share of the world's distinct pages.
    pub share_of_pages: f64,
    /// Requests to them in the judged window.
    pub requests: u64,
    /// Their share of every request in the judged window.
    pub share_of_requests: f64,
    /// Their mean true (content) change rate, per day.
    pub mean_true_rate: f64,
    /// Mean rate the scheduler held for them at the end, per day (filled from the database).
    pub mean_learnt_rate: Option<f64>,
    /// Mean rate of content changes learnt from their checks, per day (from the database).
    pub mean_learnt_content_rate: Option<f64>,
    /// Mean rate of byte changes learnt from their checks, per day (from the database).
    pub mean_learnt_byte_rate: Option<f64>,
}

/// The noise pages' requests in [from, to) out of `total` requests in that window.
pub fn noise_figures(
    world: &World,
    log: &[RequestRecord],
    from: i64,
    to: i64,
    total: u64,
) -> NoisePages {
    let Some((_, host)) = world.host(NOISE_HOST) else {
        return NoisePages::empty();
    };
    let requests = log
        .iter()
        .filter(|r| r.at_ms >= from && r.at_ms < to && r.host.eq_ignore_ascii_case(NOISE_HOST))
        .filter(|r| host.page_at(&r.path).is_some())
        .count() as u64;
    let pages = host.pages.len();
    let true_rates: f64 = host
        .pages
        .iter()
        .map(|&p| world.pages[p].rate_per_day)
        .sum();
    NoisePages {
        pages,
        share_of_pages: pages as f64 / world.pages.len().max(1) as f64,
        requests,
        share_of_requests: requests as f64 / total.max(1) as f64,
        mean_true_rate: true_rates / pages.max(1) as f64,
        mean_learnt_rate: None,
        mean_learnt_content_rate: None,
        mean_learnt_byte_rate: None,
    }
}

impl NoisePages {
    fn empty() -> Self {
        NoisePages {
            pages: 0,
            share_of_pages: 0.0,
            requests: 0,
            share_of_requests: 0.0,
            mean_true_rate: 0.0,
            mean_learnt_rate: None,
            mean_learnt_content_rate: None,
            mean_learnt_byte_rate: None,
        }
    }

    /// Fills in the learnt rates ([`learnt_noise_rates`]).
    pub fn set_learnt(&mut self, learnt: &LearntRates) {
        self.mean_learnt_rate = learnt.scheduler;
        self.mean_learnt_content_rate = learnt.content;
        self.mean_learnt_byte_rate = learnt.bytes;
    }
}

/// Mean learnt rates of the noise pages, per day (None when no page has one).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LearntRates {
    /// What the scheduler held (`urls.rate_per_day`).
    pub scheduler: Option<f64>,
    /// From the checks' content verdicts.
    pub content: Option<f64>,
    /// From the checks' byte verdicts.
    pub bytes: Option<f64>,
}

/// The noise pages' learnt rates from the database `store` of a demo run on `world`.
pub async fn learnt_noise_rates(world: &World, store: &Store) -> anyhow::Result<LearntRates> {
    let Some((_, host)) = world.host(NOISE_HOST) else {
        return Ok(LearntRates::default());
    };
    let (mut scheduler, mut content, mut bytes) = (Vec::new(), Vec::new(), Vec::new());
    for row in store.url_status(None).await? {
        let on_host = url::Url::parse(&row.url).ok().is_some_and(|u| {
            u.host_str()
                .is_some_and(|h| h.eq_ignore_ascii_case(NOISE_HOST))
                && host.page_at(u.path()).is_some()
        });
        if !on_host {
            continue;
        }
        scheduler.extend(row.rate_per_day);
        let history = store.observations_for(row.url_id, i64::MAX).await?;
        let answered: Vec<_> = history
            .iter()
            .filter(|o| {
                o.status
                    .is_some_and(|s| (200..300).contains(&s) || s == 304)
            })
            .collect();
        if answered.len() < 2 {
            continue;
        }
        let rate =
            |verdict: &dyn Fn(&crate::store::observations::ObservationRow) -> Option<i64>| {
                let checks = answered
                    .iter()
                    .map(|o| Check::from_ms(o.checked_ms, verdict(o).map(|c| c != 0), None))
                    .collect();
                let evidence = Evidence {
                    checks,
                    ..Evidence::default()
                };
                estimate(&evidence, &Prior::default()).rate_per_day
            };
        content.push(rate(&|o| o.content_changed));
        bytes.push(rate(&|o| o.changed));
    }
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    Ok(LearntRates {
        scheduler: mean(&scheduler),
        content: mean(&content),
        bytes: mean(&bytes),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::world::WorldConfig;

    #[test]
    fn requests_to_noise_pages_are_counted_in_the_window_only() {
        let world = World::generate(&WorldConfig::default());
        let (_, live) = world.host(NOISE_HOST).unwrap();
        let path = world.pages[live.pages[0]].path.clone();
        let record =
            |at_ms: i64, host: &str, path: &str| RequestRecord::get(at_ms, host, path, 200);
        let log = vec![
            record(5, NOISE_HOST, &path),
            record(15, NOISE_HOST, &path),
            record(16, NOISE_HOST, "/robots.txt"),
            record(17, "news.freshet.test", &path),
            record(30, NOISE_HOST, &path),
        ];
        let figures = noise_figures(&world, &log, 10, 20, 4);
        assert_eq!(figures.requests, 1);
        assert_eq!(figures.share_of_requests, 0.25);
        assert_eq!(figures.pages, live.pages.len());
        assert!(figures.mean_true_rate < 0.2, "{}", figures.mean_true_rate);
        assert!(figures.mean_learnt_content_rate.is_none());
    }
}
