//! The query-independent score that picks a class's canonical page.
//!
//! ```text
//! score = base + w_p · priority + w_c · [rel=canonical votes > 0] + ln(1 + in-links)
//!         + w_x · ln(1 + in-links from other hosts)
//!         + w_s · [https] - min(length / 100, 1) - w_q · min(query params, 5)
//! ```
//! where `[condition]` is 1 when it holds, else 0.
//!
//! In-links from other hosts weigh more (w_x = 2 on top of the plain in-link term) because they
//! tell the original from a mirror: a mirror serves the same pages, its own sitemap lists them
//! and its pages link to each other exactly as the original's do, so every other signal is a
//! tie (and URL length a coin flip); but the rest of the web links to the original. One
//! external link (2 · ln 2 ≈ 1.4) beats the hysteresis margins of a canonical of score ~8.
//!
//! `priority` is the sitemap priority (0.5 when none was given, the protocol's default); votes are
//! pages whose `<link rel=canonical>` names this URL; in-links are links from other known pages.
//! The score is kept positive so the multiplicative margin of the hysteresis means something.

use serde::{Deserialize, Serialize};
use url::Url;

/// Weights of the score (see the module formula).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreWeights {
    /// The constant that keeps scores positive.
    pub base: f64,
    /// Per unit of sitemap priority.
    pub priority: f64,
    /// For being named by at least one `rel=canonical`.
    pub canonical_vote: f64,
    /// For https.
    pub https: f64,
    /// Per query parameter (up to five).
    pub query_param: f64,
    /// Per unit of ln(1 + in-links from other hosts).
    #[serde(default = "default_external_link")]
    pub external_link: f64,
}

fn default_external_link() -> f64 {
    2.0
}

impl Default for ScoreWeights {
    fn default() -> Self {
        ScoreWeights {
            base: 5.0,
            priority: 4.0,
            canonical_vote: 2.0,
            https: 1.0,
            query_param: 0.3,
            external_link: default_external_link(),
        }
    }
}

/// The evidence a score is computed from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScoreInputs {
    /// Sitemap `<priority>`, if the URL came with one.
    pub sitemap_priority: Option<f64>,
    /// Pages whose `rel=canonical` names this URL.
    pub canonical_votes: u32,
    /// Links to this URL from other known pages.
    pub in_links: u32,
    /// Of those, links from pages on another host.
    #[serde(default)]
    pub external_in_links: u32,
}

/// The sitemap protocol's default priority.
const DEFAULT_PRIORITY: f64 = 0.5;

/// The score of `url` (normalised) given its evidence.
pub fn score(url: &str, inputs: &ScoreInputs, weights: &ScoreWeights) -> f64 {
    let parsed = Url::parse(url).ok();
    let https = parsed.as_ref().is_some_and(|u| u.scheme() == "https");
    let params = parsed
        .as_ref()
        .and_then(|u| u.query())
        .map_or(0, |q| q.split('&').filter(|p| !p.is_empty()).count());
    let priority = inputs
        .sitemap_priority
        .unwrap_or(DEFAULT_PRIORITY)
        .clamp(0.0, 1.0);
    let value = weights.base
        + weights.priority * priority
        + if inputs.canonical_votes > 0 {
            weights.canonical_vote
        } else {
            0.0
        }
        + f64::from(inputs.in_links).ln_1p()
        + weights.external_link * f64::from(inputs.external_in_links).ln_1p()
        + if https { weights.https } else { 0.0 }
        - (url.len() as f64 / 100.0).min(1.0)
        - weights.query_param * params.min(5) as f64;
    value.max(0.01)
}

/// A one-line account of a score, for reasons shown by `freshet explain`.
pub fn describe(url: &str, inputs: &ScoreInputs, weights: &ScoreWeights) -> String {
    format!(
        "{url} scores {:.2} (priority {}, {} rel=canonical vote(s), {} in-link(s) ({} from other hosts), {}, {} chars)",
        score(url, inputs, weights),
        inputs
            .sitemap_priority
            .map_or("default 0.5".to_string(), |p| format!("{p:.2}")),
        inputs.canonical_votes,
        inputs.in_links,
        inputs.external_in_links,
        if url.starts_with("https:") {
            "https"
        } else {
            "http"
        },
        url.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_signal_moves_the_score_the_right_way() {
        let w = ScoreWeights::default();
        let plain = ScoreInputs::default();
        let s = |url: &str, i: &ScoreInputs| score(url, i, &w);
        let base = s("http://example.com/a", &plain);
        assert!(s("https://example.com/a", &plain) > base);
        assert!(s("http://example.com/a?x=1&y=2", &plain) < base);
        assert!(s("http://example.com/a/much/longer/path/to/the/same", &plain) < base);
        let voted = ScoreInputs {
            canonical_votes: 1,
            ..plain.clone()
        };
        assert!(s("http://example.com/a", &voted) > base);
        let linked = ScoreInputs {
            in_links: 10,
            ..plain.clone()
        };
        assert!(s("http://example.com/a", &linked) > base);
        let linked_from_afar = ScoreInputs {
            external_in_links: 1,
            ..linked.clone()
        };
        // One link from another host outweighs the margins (0.5, x1.1) of a canonical.
        let (near, far) = (
            s("http://example.com/a", &linked),
            s("http://example.com/a", &linked_from_afar),
        );
        assert!(far > near + 0.5 && far > near * 1.1, "{near} {far}");
        let high = ScoreInputs {
            sitemap_priority: Some(1.0),
            ..plain.clone()
        };
        assert!(s("http://example.com/a", &high) > base);
        assert!(s("garbage", &plain) > 0.0);
    }

    #[test]
    fn description_names_the_evidence() {
        let text = describe(
            "https://example.com/",
            &ScoreInputs {
                in_links: 3,
                ..Default::default()
            },
            &ScoreWeights::default(),
        );
        assert!(
            text.contains("3 in-link(s)") && text.contains("https"),
            "{text}"
        );
    }
}
