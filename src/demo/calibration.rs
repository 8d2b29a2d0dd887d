//! How well freshet knows the state of its copies at the end of a run: what its database
//! believes about each page URL (its last check, a change it was told of, the Gamma posterior on
//! the page's rate and that posterior's 90% interval) against the world's truth (pure).
//!
//! Over the world's pages freshet checked at least once, a page served under two URLs (a mirror)
//! counted once, by the URL whose copy is the freshest:
//! - `true_stale_share`: the share whose copy is stale at the end, i.e. the page changed after its
//!   last synchronising fetch (a GET answered 200 or 304 on any URL serving it, as the server
//!   logged it and [`super::outcome`] counts it). A page never synchronised has no copy: stale.
//! - `mean_p_stale`: freshet's mean probability of the same event, as
//!   [`crate::estimate::CopyKnowledge::staleness`] judges it: 1 when it knows of a change after its
//!   last check (a feed or a sitemap lastmod said so), else the posterior predictive
//!   1 - (b / (b + t))^a with t the days between the copy and the end that no feed watched (a
//!   feed covering the page that listed no change of it watched the span it read), judged on
//!   the one watched span the database stores (the samples over the window judge a feed's and
//!   a sitemap's spans apart, and read a little younger).
//! - `interval_coverage_90`: the share whose true rate lies inside freshet's 90% interval.
//! - `exact_counts_coverage_90`: the same share for an estimator that saw every change of each
//!   page from freshet's first synchronising fetch of it (a GET answered 200 or 304) to the
//!   end, with the page's 90% interval from that count alone (Jeffreys: Gamma(n + ½, T)), over
//!   the pages with such a span (one synchronised only at the end has none). It is what the
//!   world's own luck allows: in a world whose pages changed unusually often or seldom for
//!   their rates, it falls short of 0.9 too, and freshet, which sees changes only through its
//!   checks, is judged beside it. (A span much shorter than a page's mean time between changes
//!   says little, and the equal-tailed interval then misses a slow rate: the demo's spans are
//!   days, its slowest pages change monthly.)
//!
//! A calibrated freshet has `mean_p_stale` near `true_stale_share` (averaged over pages, its
//! probabilities match the frequency) and a coverage near 0.9.

use super::server::RequestRecord;
use super::world::World;
use crate::clock::MS_PER_DAY;

/// What freshet's database says about one page URL it checked at least once.
#[derive(Debug, Clone, PartialEq)]
pub struct UrlBelief {
    /// The URL.
    pub url: String,
    /// When its copy was taken, clock ms.
    pub copy_ms: i64,
    /// When a feed or sitemap said it changed, if that is after our copy, clock ms.
    pub known_change_ms: Option<i64>,
    /// Lower end of the rate's 90% credible interval, per day.
    pub rate_low: f64,
    /// Upper end of that interval, per day.
    pub rate_high: f64,
    /// Shape a of the Gamma posterior on the rate.
    pub rate_shape: f64,
    /// Rate b of the Gamma posterior on the rate, in days.
    pub rate_scale: f64,
    /// A span after the copy over which the page is known not to have changed, clock ms.
    pub watched: Option<(i64, i64)>,
}

impl UrlBelief {
    /// freshet's view of its copy's staleness at `at_ms`.
    pub fn staleness(&self, at_ms: i64) -> crate::estimate::Staleness {
        let copy = crate::estimate::CopyKnowledge {
            taken_ms: self.copy_ms,
            watched: self.watched,
            quiet: None,
            known_change_ms: self.known_change_ms,
        };
        let belief = crate::estimate::Prior {
            shape: self.rate_shape,
            rate: self.rate_scale,
        };
        copy.staleness(&belief, at_ms)
    }

    /// freshet's probability that its copy is stale at `at_ms`.
    pub fn p_stale(&self, at_ms: i64) -> f64 {
        self.staleness(at_ms).p_stale
    }
}

/// freshet's beliefs against the truth at the end of the run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Calibration {
    /// Pages judged: the world's pages freshet checked at least once, each once.
    pub pages: usize,
    /// Share of them whose copy was truly stale at the end.
    pub true_stale_share: f64,
    /// freshet's mean probability that the copy was stale at the end.
    pub mean_p_stale: f64,
    /// Share of them whose true rate lies in freshet's 90% credible interval.
    pub interval_coverage_90: f64,
    /// Share of them whose true rate lies in the 90% interval of an estimator that saw every
    /// change since freshet's first synchronising fetch of the page, over the pages with such a
    /// span (see the module docs): the reference the world allows for `interval_coverage_90`.
    pub exact_counts_coverage_90: f64,
    /// The true mean age of their copies at the end, days (a page never synchronised counts 0).
    pub true_mean_age_days: f64,
    /// freshet's mean expected age of the same copies at the end, days.
    pub expected_mean_age_days: f64,
    /// The same judgement over the whole window instead of at its end: the time average, over
    /// the instants the refresher sampled its freshness in the window, of its mean P(stale)
    /// (`freshness_samples`). One instant's share moves a lot with what happened just before it;
    /// the average over a few hundred does not.
    pub sampled_mean_p_stale: Option<f64>,
    /// The time average over the same instants of the true share of stale copies, weighed as
    /// freshet weighs them (`true_freshness_samples`, over the copies freshet judged:
    /// [`super::copies`]).
    pub sampled_true_stale_share: Option<f64>,
    /// The time average over the same instants of freshet's mean expected age of its copies,
    /// days (what `freshet.estimated_mean_age_days` reports).
    pub sampled_expected_mean_age_days: Option<f64>,
    /// The time average over the same instants of the true mean age of the same copies, days:
    /// what the estimate is judged against. (`freshet.true_mean_age_days` judges the world's
    /// pages, each synchronised by a fetch of any URL serving it, for the comparison with the
    /// uniform and the oracle schedules.)
    pub sampled_true_mean_age_days: Option<f64>,
    /// The instants of the window at which the refresher sampled its freshness.
    pub sampled_instants: Option<usize>,
    /// Those whose sample held (nearly) every copy the truth held then: the sampled figures
    /// above are averaged over these (with several workers, a part missing from an instant
    /// would leave its copies out of the estimate and not out of the truth).
    pub sampled_instants_complete: Option<usize>,
}

/// Judges `beliefs` at `end_ms` against `world` and the server's `log`; URLs that are not pages
/// of the world are ignored, and a page's URLs other than its freshest copy too. None when no
/// page is left.
pub fn calibrate(
    world: &World,
    log: &[RequestRecord],
    end_ms: i64,
    beliefs: &[UrlBelief],
) -> Option<Calibration> {
    let mut last_sync: Vec<Option<i64>> = vec![None; world.pages.len()];
    let mut first_sync: Vec<Option<i64>> = vec![None; world.pages.len()];
    for record in log.iter().filter(|r| r.at_ms <= end_ms) {
        let page = world
            .host(&record.host)
            .and_then(|(_, host)| record.synced_page(host));
        if let Some(page) = page {
            last_sync[page] = last_sync[page].max(Some(record.at_ms));
            first_sync[page] = Some(first_sync[page].map_or(record.at_ms, |f| f.min(record.at_ms)));
        }
    }
    // A page served under several URLs is judged by its freshest copy.
    let mut judged: Vec<Option<&UrlBelief>> = vec![None; world.pages.len()];
    for belief in beliefs {
        if let Some(id) = world.page_for_url(&belief.url) {
            let best = &mut judged[id];
            if best.is_none_or(|b| belief.copy_ms > b.copy_ms) {
                *best = Some(belief);
            }
        }
    }
    let (mut pages, mut stale, mut p_stale, mut covered) = (0usize, 0usize, 0.0, 0usize);
    let (mut covered_by_counts, mut spans) = (0usize, 0usize);
    let (mut true_age, mut expected_age) = (0.0, 0.0);
    for (id, belief) in judged
        .iter()
        .enumerate()
        .filter_map(|(id, b)| Some((id, (*b)?)))
    {
        let page = &world.pages[id];
        pages += 1;
        let changed_since = |synced: i64| page.version_at(end_ms) > page.version_at(synced);
        stale += usize::from(last_sync[id].is_none_or(changed_since));
        let staleness = belief.staleness(end_ms);
        p_stale += staleness.p_stale;
        expected_age += staleness.expected_age_days;
        if let Some(synced) = last_sync[id].filter(|&synced| changed_since(synced)) {
            let first_change = page.changes[page.version_at(synced)];
            true_age += (end_ms - first_change) as f64 / MS_PER_DAY;
        }
        covered += usize::from((belief.rate_low..=belief.rate_high).contains(&page.rate_per_day));
        if let Some(first) = first_sync[id].filter(|&first| first < end_ms) {
            let (low, high) = exact_count_interval(page, first, end_ms);
            covered_by_counts += usize::from((low..=high).contains(&page.rate_per_day));
            spans += 1;
        }
    }
    let n = pages as f64;
    (pages > 0).then(|| Calibration {
        pages,
        true_stale_share: stale as f64 / n,
        mean_p_stale: p_stale / n,
        interval_coverage_90: covered as f64 / n,
        exact_counts_coverage_90: covered_by_counts as f64 / spans.max(1) as f64,
        true_mean_age_days: true_age / n,
        expected_mean_age_days: expected_age / n,
        sampled_mean_p_stale: None,
        sampled_true_stale_share: None,
        sampled_expected_mean_age_days: None,
        sampled_true_mean_age_days: None,
        sampled_instants: None,
        sampled_instants_complete: None,
    })
}

/// The 90% interval of `page`'s rate, per day, from the count of its changes in `(from_ms,
/// end_ms]` alone: Jeffreys' Gamma(n + ½, T) (T in days). Empty (NaN) over an empty span.
fn exact_count_interval(page: &super::world::Page, from_ms: i64, end_ms: i64) -> (f64, f64) {
    let changes = page.version_at(end_ms) - page.version_at(from_ms);
    let days = (end_ms - from_ms) as f64 / MS_PER_DAY;
    if days <= 0.0 {
        return (f64::NAN, f64::NAN);
    }
    let jeffreys = crate::estimate::Prior {
        shape: changes as f64 + 0.5,
        rate: days,
    };
    jeffreys.interval_90()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::world::{MIRROR_HOST, WorldConfig};

    fn belief(url: String, copy_ms: i64, low: f64, high: f64) -> UrlBelief {
        UrlBelief {
            url,
            copy_ms,
            known_change_ms: None,
            rate_low: low,
            rate_high: high,
            rate_shape: 2.0,
            rate_scale: 4.0,
            watched: None,
        }
    }

    #[test]
    fn a_known_change_is_certain_and_otherwise_the_posterior_speaks() {
        let day = MS_PER_DAY as i64;
        let mut b = belief("http://a.test/x".into(), 10 * day, 0.1, 1.0);
        assert_eq!(b.p_stale(10 * day), 0.0);
        // Two days on with a = 2, b = 4: 1 - (4/6)².
        assert!((b.p_stale(12 * day) - 5.0 / 9.0).abs() < 1e-12);
        b.known_change_ms = Some(10 * day - 1);
        assert!((b.p_stale(12 * day) - 5.0 / 9.0).abs() < 1e-12);
        b.known_change_ms = Some(10 * day + 1);
        assert_eq!(b.p_stale(10 * day + 2), 1.0);
    }

    #[test]
    fn stale_share_probability_and_coverage_over_pages_once() {
        let world = World::generate(&WorldConfig::default());
        let origin = world.config.origin_ms;
        let day = MS_PER_DAY as i64;
        let url = |host: &str, id: usize| format!("http://{host}:80{}", world.pages[id].path);
        let news = &world.hosts[0];
        // A news page that changes on day 2 to 5: fetched just before, stale at the end.
        let (stale_id, change) = news
            .pages
            .iter()
            .find_map(|&id| {
                let c = world.pages[id]
                    .changes
                    .iter()
                    .find(|&&c| c > origin + 2 * day && c < origin + 5 * day)?;
                Some((id, *c))
            })
            .unwrap();
        let end = change + day / 10;
        let fresh_id = news
            .pages
            .iter()
            .copied()
            .find(|&id| id != stale_id)
            .unwrap();
        let (_, docs) = world.host("docs.freshet.test").unwrap();
        let docs_id = docs.pages[0];
        let log = vec![
            RequestRecord::get(change - 1000, &news.name, &world.pages[stale_id].path, 200),
            RequestRecord::get(end, &news.name, &world.pages[fresh_id].path, 200),
            // The docs page is refreshed through its mirror.
            RequestRecord::get(end, MIRROR_HOST, &world.pages[docs_id].path, 200),
            // After the end: not seen.
            RequestRecord::get(end + 1, &news.name, &world.pages[stale_id].path, 200),
        ];
        let rate = |id: usize| world.pages[id].rate_per_day;
        let mut beliefs = vec![
            belief(url(&news.name, stale_id), change - 1000, 0.0, f64::INFINITY),
            belief(
                url(&news.name, fresh_id),
                end - day,
                rate(fresh_id) * 2.0,
                9.0,
            ),
            belief(url(&docs.name, docs_id), end, rate(docs_id), rate(docs_id)),
            // The same page again under the mirror, and a URL of no page: neither counts.
            belief(url(MIRROR_HOST, docs_id), end - 9 * day, 0.0, 0.0),
            belief("http://elsewhere.test/".into(), end - 9 * day, 0.0, 0.0),
        ];
        beliefs[0].known_change_ms = Some(change);
        let c = calibrate(&world, &log, end, &beliefs).unwrap();
        assert_eq!(c.pages, 3);
        assert!((c.true_stale_share - 1.0 / 3.0).abs() < 1e-12, "{c:?}");
        let one_day = p_stale_gamma_2_4(1.0);
        assert!((c.mean_p_stale - (1.0 + one_day + 0.0) / 3.0).abs() < 1e-12);
        assert!((c.interval_coverage_90 - 2.0 / 3.0).abs() < 1e-12);
        // Only the stale page has a span (the others were synchronised at the end): it changed
        // once in a tenth of a day, and a news page's rate is inside that count's interval.
        let (low, high) = exact_count_interval(&world.pages[stale_id], change - 1000, end);
        assert!(
            low < rate(stale_id) && rate(stale_id) < high,
            "{low} {high}"
        );
        assert_eq!(c.exact_counts_coverage_90, 1.0, "{c:?}");

        // A page checked (per the database) but never synchronised has no copy: stale.
        let c = calibrate(&world, &[], end, &beliefs[1..2]).unwrap();
        assert_eq!((c.pages, c.true_stale_share), (1, 1.0));
        assert_eq!(calibrate(&world, &log, end, &beliefs[4..]), None);
    }

    /// Over a large world, an estimator that sees every change covers about 90% of the true
    /// rates: the world's pages are Poisson at their rates, and the reference is one (each page
    /// fetched at the start, judged ten days on).
    #[test]
    fn the_exact_count_reference_covers_about_nine_in_ten_of_a_large_world() {
        let world = World::generate(&WorldConfig {
            scale: 10.0,
            horizon_days: 10.0,
            ..WorldConfig::default()
        });
        let origin = world.config.origin_ms;
        let end = origin + 10 * MS_PER_DAY as i64;
        let mut log = Vec::new();
        let mut beliefs = Vec::new();
        for host in world.hosts.iter().filter(|h| h.mirror_of.is_none()) {
            for &id in &host.pages {
                let page = &world.pages[id];
                log.push(RequestRecord::get(origin + 1, &host.name, &page.path, 200));
                let url = format!("http://{}:80{}", host.name, page.path);
                beliefs.push(belief(url, origin + 1, 0.0, 0.0));
            }
        }
        let c = calibrate(&world, &log, end, &beliefs).unwrap();
        assert!(c.pages > 1_000, "{c:?}");
        assert!((0.85..=0.95).contains(&c.exact_counts_coverage_90), "{c:?}");
        // No interval of freshet's held anything but zero here.
        assert_eq!(c.interval_coverage_90, 0.0);
    }

    fn p_stale_gamma_2_4(days: f64) -> f64 {
        1.0 - (4.0_f64 / (4.0 + days)).powi(2)
    }
}
