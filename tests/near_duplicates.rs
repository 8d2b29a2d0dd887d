//! Near-duplicates on the real articles of tests/extraction: perturbed copies are grouped, and
//! distinct articles (same-topic ones included) never are. The verified resemblance and its one
//! threshold are in `freshet::dedup::resemblance`.
//!
//! A copy of an article is perturbed the way two copies of one story differ in practice: the
//! date line changed ("Published 12 November 2025" / "Updated 13 November 2025"), an ad block
//! and a navigation block added and swapped around, and one sentence edited. Each article is
//! tried whole and cut to its first 90 words (the short news stories simhash missed).

#[path = "extraction/evalset.rs"]
mod evalset;

use freshet::dedup::resemblance::{LshIndex, NEAR_DUPLICATE_RESEMBLANCE, Sketch};

/// Pages of the set that are the same article as another page of the set (two test cases made
/// from one source page, found by this very test), left out of the "distinct articles" pairs.
const SAME_ARTICLE: &[(&str, &str)] = &[
    // One Lifehacker post saved twice (with and without its comments loaded).
    (
        "mozilla-lifehacker-post-comment-load",
        "mozilla-lifehacker-working",
    ),
    // One cleveland.com story; newspaper's expected text of one starts with the headline.
    ("newspaper-cleveland.com1", "newspaper-video_article_01"),
];

/// The set's own duplicates are real near-duplicates, found without perturbing anything.
#[test]
fn the_sets_own_duplicate_pages_are_grouped() {
    let articles = articles();
    let text = |name: &str| {
        &articles
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("{name} not in the set"))
            .1
    };
    for (a, b) in SAME_ARTICLE {
        let r = Sketch::of(text(a)).resemblance(&Sketch::of(text(b)));
        assert!(r >= NEAR_DUPLICATE_RESEMBLANCE, "{a} / {b}: {r}");
    }
}

fn first_words(text: &str, n: usize) -> String {
    text.split_whitespace()
        .take(n)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The two perturbed copies of `body`.
fn copies(body: &str) -> (String, String) {
    let a = format!(
        "Published 12 November 2025\n{body}\nAdvertisement\nSubscribe now for 1 dollar a week\nHome News Sport Weather"
    );
    // Edit one sentence: change the fifth word after the first full stop, or the tenth word.
    let words: Vec<&str> = body.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| w.ends_with('.'))
        .map_or(10, |i| i + 5)
        .min(words.len().saturating_sub(1));
    let edited: Vec<&str> = words
        .iter()
        .enumerate()
        .map(|(i, w)| if i == at { "reportedly" } else { w })
        .collect();
    let b = format!(
        "Home Politics Business Culture Opinion\nUpdated 13 November 2025\n{}\nSponsored: the best mortgage rates of the month, compared",
        edited.join(" ")
    );
    (a, b)
}

fn articles() -> Vec<(String, String)> {
    evalset::load()
        .into_iter()
        .map(|p| (p.name, p.expected))
        .collect()
}

#[test]
fn perturbed_copies_of_real_articles_are_grouped() {
    let articles = articles();
    assert!(articles.len() >= 100, "{} articles", articles.len());
    for words in [None, Some(90)] {
        let mut grouped = 0;
        let mut found_by_lsh = 0;
        let mut lowest = f64::MAX;
        for (_, text) in &articles {
            let body = words.map_or(text.clone(), |n| first_words(text, n));
            let (a, b) = copies(&body);
            let (sa, sb) = (Sketch::of(&a), Sketch::of(&b));
            let r = sa.resemblance(&sb);
            lowest = lowest.min(r);
            grouped += usize::from(r >= NEAR_DUPLICATE_RESEMBLANCE);
            let mut index = LshIndex::new();
            index.insert(&sa, 1);
            found_by_lsh += usize::from(index.candidates(&sb) == [1]);
        }
        let share = grouped as f64 / articles.len() as f64;
        eprintln!(
            "copies ({}): {grouped}/{} grouped ({:.1}%), {found_by_lsh} found by LSH, lowest resemblance {lowest:.3}",
            words.map_or("whole articles".to_string(), |n| format!("first {n} words")),
            articles.len(),
            share * 100.0
        );
        assert!(share >= 0.95, "{grouped} of {} grouped", articles.len());
        assert!(found_by_lsh as f64 / articles.len() as f64 >= 0.95);
    }
}

#[test]
fn distinct_real_articles_are_never_grouped() {
    let articles = articles();
    for words in [None, Some(90)] {
        let sketches: Vec<Sketch> = articles
            .iter()
            .map(|(_, t)| Sketch::of(&words.map_or(t.clone(), |n| first_words(t, n))))
            .collect();
        let mut highest = (0.0f64, "", "");
        let mut false_groups = Vec::new();
        for i in 0..articles.len() {
            for j in i + 1..articles.len() {
                let (a, b) = (articles[i].0.as_str(), articles[j].0.as_str());
                if SAME_ARTICLE.contains(&(a, b)) || SAME_ARTICLE.contains(&(b, a)) {
                    continue;
                }
                let r = sketches[i].resemblance(&sketches[j]);
                if r > highest.0 {
                    highest = (r, a, b);
                }
                if r >= NEAR_DUPLICATE_RESEMBLANCE {
                    false_groups.push((a, b, r));
                }
            }
        }
        let pairs = articles.len() * (articles.len() - 1) / 2;
        eprintln!(
            "distinct ({}): {pairs} pairs, {} false groups, highest resemblance {:.3} ({} / {})",
            words.map_or("whole articles".to_string(), |n| format!("first {n} words")),
            false_groups.len(),
            highest.0,
            highest.1,
            highest.2
        );
        assert!(false_groups.is_empty(), "{false_groups:?}");
    }
}

/// Same topic, same facts, different words: two reports of one event are different articles.
#[test]
fn same_topic_articles_are_not_grouped() {
    let pairs = [
        (
            "Heavy rain caused the river Severn to burst its banks on Tuesday, flooding more than \
             two hundred homes in Shrewsbury. The Environment Agency issued three severe flood \
             warnings and residents were moved to a leisure centre overnight. Forecasters expect \
             the water to peak on Thursday before the weather settles at the weekend.",
            "Residents of Shrewsbury spent the night in a leisure centre after the Severn rose \
             above its defences following days of rain. About 200 properties were flooded, the \
             Environment Agency said, adding that the river would not crest until Thursday. \
             Drier conditions are forecast from Saturday.",
        ),
        (
            "The central bank raised its main interest rate by a quarter of a point to 4.5%, its \
             ninth increase in a row, saying inflation remained too high. Two members of the \
             committee voted to hold rates. Markets had largely expected the move.",
            "Borrowing costs rose again on Thursday as the bank's rate-setters lifted the base \
             rate to 4.5 per cent. Policymakers split seven to two, with the minority arguing \
             that earlier rises had yet to be felt. Investors had priced in the increase.",
        ),
        (
            "Apple unveiled its new iPhone at an event in Cupertino, highlighting a faster chip, \
             a brighter display and a titanium frame. Prices start at 799 dollars and the phone \
             goes on sale next Friday.",
            "A titanium body, a quicker processor and an improved screen headline the latest \
             iPhone, which Apple showed off at its California headquarters. It will cost from \
             $799 when shops receive it at the end of next week.",
        ),
    ];
    for (a, b) in pairs {
        let r = Sketch::of(a).resemblance(&Sketch::of(b));
        assert!(r < NEAR_DUPLICATE_RESEMBLANCE, "{r}: {a}");
    }
}

/// Distinct short pages of one template whose boilerplate leaked into the main text.
#[test]
fn pages_of_one_template_are_not_grouped() {
    let articles = articles();
    let template = "Sign in to read more. Subscribe to our newsletter for the day's top stories \
        delivered to your inbox every morning. Follow us on social media. Copyright 2025 The \
        Daily Example. All rights reserved. Terms of use. Privacy policy. Contact us.";
    let sketches: Vec<Sketch> = articles
        .iter()
        .take(40)
        .map(|(_, t)| Sketch::of(&format!("{template}\n{}\n{template}", first_words(t, 60))))
        .collect();
    for i in 0..sketches.len() {
        for j in i + 1..sketches.len() {
            let r = sketches[i].resemblance(&sketches[j]);
            assert!(
                r < NEAR_DUPLICATE_RESEMBLANCE,
                "{} / {}: {r}",
                articles[i].0,
                articles[j].0
            );
        }
    }
}
