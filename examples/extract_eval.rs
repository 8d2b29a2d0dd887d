//! Main-text extraction on the evaluation set (tests/extraction): mean precision, recall and F1
//! of token overlap with the expected text (defined in tests/extraction/evalset.rs), pages with
//! an empty result, and throughput in MB of HTML per second (one thread, parse included).
//!
//! ```text
//! cargo run --release --example extract_eval                          # freshet's extractor
//! cargo run --release --example extract_eval --features extract-eval  # and the crates compared
//! cargo run --release --example extract_eval -- --pages               # per-page F1 too
//! ```

#[path = "../tests/extraction/evalset.rs"]
mod evalset;

use std::time::Instant;

use freshet::dedup::extract::extract_html;
use freshet::dedup::urlnorm::UrlRules;

type Extractor = fn(&str) -> String;

/// freshet's `extract_html`: dom_smoothie, the hand-written extractor as fallback.
fn freshet_extract(html: &str) -> String {
    extract_html(html, None, &UrlRules::default()).main_text
}

/// The hand-written extractor alone (the fallback).
fn freshet_heuristic(html: &str) -> String {
    freshet::dedup::extract::heuristic::main_text(&scraper::Html::parse_document(html))
}

/// dom_smoothie alone, as freshet calls it but without the fallback.
fn dom_smoothie_formatted(html: &str) -> String {
    let cfg = dom_smoothie::Config {
        text_mode: dom_smoothie::TextMode::Formatted,
        ..Default::default()
    };
    dom_smoothie::Readability::new(html, None, Some(cfg))
        .ok()
        .and_then(|mut r| r.parse().ok())
        .map(|a| a.text_content.to_string())
        .unwrap_or_default()
}

#[cfg(feature = "extract-eval")]
fn rs_trafilatura_extract(html: &str) -> String {
    rs_trafilatura::extract(html)
        .map(|r| r.content_text)
        .unwrap_or_default()
}

#[cfg(feature = "extract-eval")]
fn trafilatura_extract(html: &str) -> String {
    trafilatura::extract(html, &trafilatura::Options::default())
        .map(|r| r.content_text)
        .unwrap_or_default()
}

#[cfg(feature = "extract-eval")]
fn readabilityrs_extract(html: &str) -> String {
    readabilityrs::Readability::new(html, None, None)
        .ok()
        .and_then(|r| r.parse())
        .and_then(|a| a.text_content)
        .unwrap_or_default()
}

fn extractors() -> Vec<(&'static str, Extractor)> {
    #[allow(unused_mut)]
    let mut list: Vec<(&'static str, Extractor)> = vec![
        ("freshet", freshet_extract),
        ("freshet heuristic", freshet_heuristic),
        ("dom_smoothie 0.19", dom_smoothie_formatted),
    ];
    #[cfg(feature = "extract-eval")]
    list.extend([
        ("rs-trafilatura 0.2", rs_trafilatura_extract as Extractor),
        ("trafilatura 0.6", trafilatura_extract),
        ("readabilityrs 0.1", readabilityrs_extract),
    ]);
    list
}

fn main() {
    let per_page = std::env::args().any(|a| a == "--pages");
    let pages = evalset::load();
    let bytes: usize = pages.iter().map(|p| p.html.len()).sum();
    println!(
        "{} pages, {:.1} MB of HTML (tests/extraction/pages)",
        pages.len(),
        bytes as f64 / 1e6
    );
    println!(
        "{:<20} {:>6} {:>6} {:>6} {:>6} {:>8} {:>9} {:>9}",
        "extractor", "F1", "prec", "recall", "empty", "MB/s", "F1 mozil", "F1 newsp"
    );
    for (name, extract) in extractors() {
        let started = Instant::now();
        let outputs: Vec<String> = pages.iter().map(|p| extract(&p.html)).collect();
        let seconds = started.elapsed().as_secs_f64();
        let scores: Vec<evalset::Score> = pages
            .iter()
            .zip(&outputs)
            .map(|(p, out)| evalset::score(&p.expected, out))
            .collect();
        let n = scores.len() as f64;
        let mean = |f: fn(&evalset::Score) -> f64| scores.iter().map(f).sum::<f64>() / n;
        let empty = outputs.iter().filter(|o| o.trim().is_empty()).count();
        // F1 on each source separately: the Mozilla pages' expected text is Readability.js's
        // output, the newspaper4k pages' is newspaper's.
        let subset = |prefix: &str| {
            let picked: Vec<f64> = pages
                .iter()
                .zip(&scores)
                .filter(|(p, _)| p.name.starts_with(prefix))
                .map(|(_, s)| s.f1)
                .collect();
            picked.iter().sum::<f64>() / picked.len().max(1) as f64
        };
        println!(
            "{:<20} {:>6.3} {:>6.3} {:>6.3} {:>6} {:>8.1} {:>9.3} {:>9.3}",
            name,
            mean(|s| s.f1),
            mean(|s| s.precision),
            mean(|s| s.recall),
            empty,
            bytes as f64 / 1e6 / seconds,
            subset("mozilla-"),
            subset("newspaper-"),
        );
        if per_page {
            for (p, s) in pages.iter().zip(&scores) {
                println!(
                    "    {:<45} F1 {:.3} P {:.3} R {:.3}",
                    p.name, s.f1, s.precision, s.recall
                );
            }
        }
    }
}
