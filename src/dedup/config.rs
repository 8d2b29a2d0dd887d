//! Settings of the duplicate and canonical-page engine.

use serde::{Deserialize, Serialize};

use super::fingerprint::DEFAULT_SHINGLE_WORDS;
use super::score::ScoreWeights;
use super::urlnorm::UrlRules;

/// Settings of [`super::DedupEngine`]; `Default` gives the documented defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DedupConfig {
    /// K: most members kept per class (default 4).
    pub max_members: usize,
    /// A challenger must beat the canonical's score by at least this much (default 0.5)...
    pub additive_margin: f64,
    /// ...and by at least this factor (default 1.1) before the canonical moves.
    pub multiplicative_margin: f64,
    /// Largest simhash Hamming distance of near-duplicate candidates (default 3); every
    /// candidate is verified by resemblance (see [`super::resemblance`]).
    pub near_distance: u32,
    /// Words per simhash shingle (default 2).
    pub shingle_words: usize,
    /// Whether a near-duplicate group also decides canonicals, like an exact content class
    /// (default true: a verified near-copy gets the duplicate's planner weight; false only
    /// reports near groups).
    pub near_joins_content: bool,
    /// Planner weight multiplier of a known non-canonical page (default 0.1).
    pub duplicate_weight: f64,
    /// Planner weight multiplier of a permanent-redirect source (default 0.02).
    pub redirect_weight: f64,
    /// Session-id and tracker parameters dropped from URLs.
    pub url_rules: UrlRules,
    /// Weights of the canonical score.
    pub score: ScoreWeights,
}

impl Default for DedupConfig {
    fn default() -> Self {
        DedupConfig {
            max_members: 4,
            additive_margin: 0.5,
            multiplicative_margin: 1.1,
            near_distance: 3,
            shingle_words: DEFAULT_SHINGLE_WORDS,
            near_joins_content: true,
            duplicate_weight: 0.1,
            redirect_weight: 0.02,
            url_rules: UrlRules::default(),
            score: ScoreWeights::default(),
        }
    }
}
