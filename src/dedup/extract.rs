//! Main-content extraction from HTML: the text that makes a page what it is, without navigation,
//! headers, footers, sidebars, advertising and other template boilerplate; plus the page's
//! title, outgoing links (absolute, normalised) and its `rel=canonical`.
//!
//! [`extract_html`] is the one function the dedup engine, change detection and `freshet inspect`
//! share. Its main text comes from **dom_smoothie** (a Rust port of Mozilla's Readability.js,
//! the algorithm of Firefox's Reader View), adopted after comparing it with the hand-written
//! extractor and three other crates on the 104 real pages of tests/extraction
//! (`cargo run --release --example extract_eval --features extract-eval`):
//!
//! | extractor | F1 | precision | recall | empty | MB/s |
//! |---|---|---|---|---|---|
//! | freshet `extract_html` (adopted: the above, boilerplate-named boxes dropped first; MB/s with title, links and canonical) | 0.991 | 0.986 | 0.996 | 0 | 46 |
//! | dom_smoothie 0.19 alone (formatted text) | 0.992 | 0.987 | 0.999 | 0 | 76 |
//! | readabilityrs 0.1 | 0.943 | 0.932 | 0.978 | 0 | 7 |
//! | rs-trafilatura 0.2 | 0.937 | 0.935 | 0.960 | 0 | 16 |
//! | trafilatura 0.6 | 0.933 | 0.956 | 0.938 | 0 | 30 |
//! | hand-written, now the fallback (wrapper and form failures fixed) | 0.906 | 0.909 | 0.943 | 0 | 114 |
//! | hand-written (before) | 0.861 | 0.899 | 0.880 | 3 | 104 |
//!
//! On the 16 pages whose expected text is not Readability's own output (newspaper4k's) the
//! order holds: freshet 0.955, dom_smoothie 0.951, rs-trafilatura 0.931, trafilatura 0.920.
//!
//! Before Readability reads the page, elements named as boilerplate by `class` or `id` (the
//! hand-written extractor's word list: `ad`, `sponsored`, `share`, `related`, ...) are removed
//! unless they hold the content: Readability keeps an `ad-slot` box inside an article, and an ad
//! that rotates must not count as a change of the main text.
//!
//! The hand-written extractor ([`heuristic`]: DOM heuristics and document slope) remains the
//! fallback for what dom_smoothie does not read: documents nested deeper than
//! [`MAX_READABLE_DEPTH`] (its walk recurses; a hostile page must not overflow a thread's
//! stack), more than [`MAX_READABLE_ELEMENTS`] elements, pages in which it finds no article, and
//! a panic inside it (caught: bad input never takes the process down).

use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};

use scraper::{ElementRef, Html};
use url::Url;

use super::urlnorm::{UrlRules, normalize};

pub mod heuristic;

/// Deepest element nesting handed to dom_smoothie; deeper documents use [`heuristic`].
pub const MAX_READABLE_DEPTH: usize = 400;

/// Most elements handed to dom_smoothie; larger documents use [`heuristic`].
pub const MAX_READABLE_ELEMENTS: usize = 200_000;

/// What extraction found in one page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extracted {
    /// The `<title>`, whitespace collapsed.
    pub title: Option<String>,
    /// The main text: blocks separated by newlines, words by single spaces.
    pub main_text: String,
    /// Outgoing links (`a`, `area`), absolute and normalised, first occurrence order, no repeats.
    pub links: Vec<String>,
    /// The normalised target of `<link rel="canonical">`, if any.
    pub canonical: Option<String>,
}

/// Extracts main text, links and canonical from an HTML document fetched from `base`.
///
/// The main text is dom_smoothie's (Readability) when it finds an article, else the
/// hand-written extractor's ([`heuristic`]); see the module docs.
pub fn extract_html(html: &str, base: Option<&Url>, rules: &UrlRules) -> Extracted {
    let doc = Html::parse_document(html);
    let base = document_base(&doc, base);
    let main_text = match readable_text(html, &doc) {
        Some(text) => text,
        None => heuristic::main_text(&doc),
    };
    Extracted {
        title: title(&doc),
        main_text,
        links: links(&doc, base.as_ref(), rules),
        canonical: canonical(&doc, base.as_ref(), rules),
    }
}

/// Extraction for a plain-text body: all of it is main text; no links, no canonical.
pub fn extract_plain(text: &str) -> Extracted {
    Extracted {
        main_text: collapse_whitespace(text),
        ..Extracted::default()
    }
}

/// `text` with each line's words joined by single spaces and blank lines dropped, lines
/// joined by newlines: one pass into one string (a vector per line was a fiftieth of a
/// check's CPU in `bench --only run`).
fn collapse_whitespace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let Some(first) = words.next() else {
            continue;
        };
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(first);
        for word in words {
            out.push(' ');
            out.push_str(word);
        }
    }
    out
}

fn document_base(doc: &Html, fetched: Option<&Url>) -> Option<Url> {
    let declared = doc
        .tree
        .nodes()
        .filter_map(ElementRef::wrap)
        .find(|e| e.value().name() == "base")
        .and_then(|e| e.attr("href"))
        .and_then(|href| match fetched {
            Some(url) => url.join(href.trim()).ok(),
            None => Url::parse(href.trim()).ok(),
        });
    declared.or_else(|| fetched.cloned())
}

fn title(doc: &Html) -> Option<String> {
    let element = doc
        .tree
        .nodes()
        .filter_map(ElementRef::wrap)
        .find(|e| e.value().name() == "title")?;
    let text = element.text().collect::<Vec<_>>().join(" ");
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!text.is_empty()).then_some(text)
}

fn links(doc: &Html, base: Option<&Url>, rules: &UrlRules) -> Vec<String> {
    let mut seen = HashSet::new();
    doc.tree
        .nodes()
        .filter_map(ElementRef::wrap)
        .filter(|e| matches!(e.value().name(), "a" | "area"))
        .filter_map(|e| e.attr("href"))
        .filter_map(|href| normalize(href, base, rules).ok())
        .map(String::from)
        .filter(|u| seen.insert(u.clone()))
        .collect()
}

fn canonical(doc: &Html, base: Option<&Url>, rules: &UrlRules) -> Option<String> {
    doc.tree
        .nodes()
        .filter_map(ElementRef::wrap)
        .filter(|e| e.value().name() == "link")
        .filter(|e| {
            e.attr("rel").is_some_and(|rel| {
                rel.split_ascii_whitespace()
                    .any(|r| r.eq_ignore_ascii_case("canonical"))
            })
        })
        .find_map(|e| normalize(e.attr("href")?, base, rules).ok())
        .map(String::from)
}

/// dom_smoothie's main text, one block per line; `None` when the document is too deep or too
/// large for it, it finds no article, or it panics.
fn readable_text(html: &str, doc: &Html) -> Option<String> {
    if depth_exceeds(doc, MAX_READABLE_DEPTH) {
        return None;
    }
    let cfg = dom_smoothie::Config {
        text_mode: dom_smoothie::TextMode::Formatted,
        max_elements_to_parse: MAX_READABLE_ELEMENTS,
        ..Default::default()
    };
    let text = catch_unwind(AssertUnwindSafe(|| {
        let document = dom_query::Document::from(html);
        remove_named_boilerplate(&document);
        let mut readability =
            dom_smoothie::Readability::with_document(document, None, Some(cfg)).ok()?;
        readability
            .parse()
            .ok()
            .map(|article| article.text_content.to_string())
    }))
    .ok()
    .flatten()?;
    let text = collapse_whitespace(&text);
    (!text.is_empty()).then_some(text)
}

/// Removes the elements whose `class` or `id` names them boilerplate (an `ad-slot` inside the
/// article, which Readability keeps) unless they hold the page's content (an `article`, `main`
/// or `h1`, or [`heuristic::CONTENT_PARAGRAPHS`] paragraphs: a wrapper, not a box).
fn remove_named_boilerplate(document: &dom_query::Document) {
    let named: Vec<_> = document
        .select("[class], [id]")
        .nodes()
        .iter()
        .filter(|node| {
            heuristic::is_boilerplate_name(
                node.attr("class").as_deref(),
                node.attr("id").as_deref(),
            )
        })
        .cloned()
        .collect();
    for node in named {
        let inside = dom_query::Selection::from(node);
        let holds_content = inside.select("article, main, h1").exists()
            || inside.select("p").length() >= heuristic::CONTENT_PARAGRAPHS;
        if !holds_content && !matches!(node.node_name().as_deref(), Some("html" | "body")) {
            node.remove_from_parent();
        }
    }
}

/// Whether some node of `doc` is nested deeper than `limit` (an explicit stack, no recursion).
fn depth_exceeds(doc: &Html, limit: usize) -> bool {
    let mut stack = vec![(doc.tree.root(), 0usize)];
    while let Some((node, depth)) = stack.pop() {
        if depth > limit {
            return true;
        }
        stack.extend(node.children().map(|c| (c, depth + 1)));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Url {
        Url::parse("https://example.com/news/story.html").unwrap()
    }

    #[test]
    fn whitespace_collapses_as_lines_of_words() {
        let joined = |text: &str| {
            text.lines()
                .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join("\n")
        };
        for text in [
            "",
            "\n\n",
            "  one  ",
            "a\tb \u{a0} c\r\n\r\n  d\u{2003}e  \n",
            "\n x \n\n y\n",
            "\u{3000}全角\u{3000}space\u{3000}",
        ] {
            assert_eq!(collapse_whitespace(text), joined(text), "{text:?}");
        }
    }

    #[test]
    fn navigation_footer_and_ads_are_dropped() {
        let body = "Rivers rise after a week of heavy rain across the northern valleys. ".repeat(6);
        let html = format!(
            "<html><head><title> The  Story </title></head><body>\
             <nav><a href='/'>Home</a> <a href='/news/'>News</a></nav>\
             <header><h1>Site Name</h1></header>\
             <div class='ad-slot'>Buy cheap watches now</div>\
             <article><h1>Flood warning</h1><p>{body}</p><p>{body}</p></article>\
             <ul class='links'><li><a href='/a'>One link</a></li><li><a href='/b'>Two link</a></li></ul>\
             <footer>Copyright Example Corp</footer></body></html>"
        );
        let out = extract_html(&html, Some(&base()), &UrlRules::default());
        assert_eq!(out.title.as_deref(), Some("The Story"));
        assert!(out.main_text.contains("Rivers rise"), "{}", out.main_text);
        for junk in ["Home", "Site Name", "watches", "Copyright", "One link"] {
            assert!(!out.main_text.contains(junk), "{junk} in {}", out.main_text);
        }
        assert!(
            out.main_text
                .lines()
                .all(|l| !l.is_empty() && !l.contains("  ")),
            "{:?}",
            out.main_text
        );
    }

    #[test]
    fn links_are_absolute_normalised_and_unique() {
        let html = "<base href='/root/'><a href='a.html#x'>a</a><a href='A.HTML'>b</a>\
                    <a href='a.html'>c</a><a href='mailto:x@y.z'>m</a>\
                    <a href='HTTPS://Example.com:443/x?utm_source=t'>d</a>";
        let out = extract_html(html, Some(&base()), &UrlRules::default());
        assert_eq!(
            out.links,
            vec![
                "https://example.com/root/a.html",
                "https://example.com/root/A.HTML",
                "https://example.com/x",
            ]
        );
    }

    #[test]
    fn canonical_link_is_found_and_resolved() {
        let html = "<head><link rel='Canonical' href='/news/story.html?sid=9'></head><p>x</p>";
        let out = extract_html(html, Some(&base()), &UrlRules::default());
        assert_eq!(
            out.canonical.as_deref(),
            Some("https://example.com/news/story.html")
        );
    }

    #[test]
    fn short_and_odd_documents_still_give_their_text() {
        for (html, want) in [
            ("<p>Just a line of text.</p>", "Just a line of text."),
            ("plain words, no tags", "plain words, no tags"),
            (
                "<html><body><div>one</div><div>two</div></body></html>",
                "one",
            ),
        ] {
            let out = extract_html(html, None, &UrlRules::default());
            assert!(out.main_text.contains(want), "{html}: {:?}", out.main_text);
        }
        assert_eq!(extract_html("", None, &UrlRules::default()).main_text, "");
    }

    #[test]
    fn plain_text_keeps_everything() {
        let out = extract_plain("  one  two\n\n three ");
        assert_eq!(out.main_text, "one two\nthree");
        assert!(out.links.is_empty());
    }

    #[test]
    fn a_page_nested_deep_does_not_overflow_the_stack() {
        // 3,000 levels on a 256 KiB stack: a recursive walk needs far more (found by fuzzing).
        let depth = 3_000;
        let html = format!(
            "{}<p>deep words here</p>{}",
            "<div><b>".repeat(depth),
            "</b></div>".repeat(depth)
        );
        let out = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || extract_html(&html, Some(&base()), &UrlRules::default()))
            .unwrap()
            .join()
            .expect("no stack overflow");
        assert!(
            out.main_text.contains("deep words here"),
            "{}",
            out.main_text
        );
    }

    #[test]
    fn a_page_just_within_the_readable_depth_fits_a_worker_thread_stack() {
        // dom_smoothie recurses; the deepest document it is given must fit tokio's 2 MiB.
        let levels = MAX_READABLE_DEPTH / 2 - 4;
        let html = format!(
            "<html><body>{}<p>{}</p>{}</body></html>",
            "<div><b>".repeat(levels),
            "nested words of an article. ".repeat(40),
            "</b></div>".repeat(levels)
        );
        let doc = Html::parse_document(&html);
        assert!(!depth_exceeds(&doc, MAX_READABLE_DEPTH));
        let out = std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(move || extract_html(&html, None, &UrlRules::default()))
            .unwrap()
            .join()
            .expect("no stack overflow");
        assert!(out.main_text.contains("nested words"), "{}", out.main_text);
    }
}
