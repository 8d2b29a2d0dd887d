//! The hand-written main-text extractor, kept as the fallback of [`super::extract_html`] for
//! documents the adopted extractor (dom_smoothie) cannot read: pages it finds no article in,
//! documents nested too deep for it.
//!
//! Two passes:
//! 1. **DOM heuristics.** Elements that are boilerplate by nature (`nav`, `aside`, `script`,
//!    page-level `header` and `footer`, ...) or by name (`class`, `id` or `role` words such as
//!    `menu`, `sidebar`, `ad`, `cookie`, `share`) are skipped whole, unless they hold the page's
//!    content: an element that contains an `article`, `main` or `h1`, or at least
//!    [`CONTENT_PARAGRAPHS`] paragraphs, is a wrapper (`<div class="and-w-sidebar">`,
//!    `<form id="aspnetForm">` around a whole page), not boilerplate. Blocks whose words are
//!    mostly link text (link density above one half) are skipped too: they are link lists.
//! 2. **Document slope** (Body Text Extraction, Finn, Kushmerick and Smyth, "Fact or fiction:
//!    content classification for digital libraries", 2001; refined by Pinto et al., "QuASM", 2002).
//!    The remaining document is a sequence of tokens, tags and words. The main text is the window
//!    [i, j] that maximises tags outside it plus words inside it, i.e. the maximum-sum run where a
//!    word counts +1 and a tag -1 (Kadane's algorithm, linear time): the flat, text-dense part of
//!    the cumulative-tag curve.
//!
//! Short pages (under [`MIN_SLOPE_WORDS`] words after pass 1) keep all their remaining text: the
//! slope has nothing to choose between.

use scraper::{ElementRef, Html, Node};

/// Below this many words the document-slope window is not applied.
pub const MIN_SLOPE_WORDS: usize = 40;

/// A block whose link words exceed this share of its words is a link list.
const MAX_LINK_DENSITY: f64 = 0.5;

/// A boilerplate-looking element with at least this many `<p>` inside is a page wrapper.
pub const CONTENT_PARAGRAPHS: usize = 5;

/// Elements skipped with everything inside them.
const SKIP_TAGS: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "iframe", "nav", "aside", "button", "select",
    "textarea", "menu", "object", "embed", "canvas", "head",
];

/// Elements that end a text block.
const BLOCK_TAGS: &[&str] = &[
    "p",
    "div",
    "li",
    "ul",
    "ol",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "td",
    "th",
    "tr",
    "table",
    "section",
    "article",
    "main",
    "blockquote",
    "pre",
    "dd",
    "dt",
    "dl",
    "br",
    "hr",
    "figure",
    "figcaption",
    "header",
    "footer",
    "body",
    "address",
];

/// `class` / `id` words that mark boilerplate.
const BOILERPLATE_WORDS: &[&str] = &[
    "nav",
    "navbar",
    "navigation",
    "menu",
    "footer",
    "sidebar",
    "breadcrumb",
    "breadcrumbs",
    "ad",
    "ads",
    "advert",
    "advertisement",
    "adslot",
    "banner",
    "cookie",
    "cookies",
    "consent",
    "share",
    "sharing",
    "social",
    "comments",
    "related",
    "promo",
    "sponsor",
    "sponsored",
    "newsletter",
    "popup",
    "subscribe",
    "masthead",
    "toolbar",
    "skip",
    "pagination",
];

/// ARIA roles that mark boilerplate.
const BOILERPLATE_ROLES: &[&str] = &[
    "navigation",
    "banner",
    "contentinfo",
    "complementary",
    "search",
    "menu",
    "menubar",
    "dialog",
];

#[derive(Debug, Clone, Copy, PartialEq)]
enum Token {
    Tag,
    /// A word; the index is into the word list.
    Word(usize),
}

/// The main text of a parsed document: blocks separated by newlines, words by single spaces.
pub fn main_text(doc: &Html) -> String {
    let mut walker = Walker::default();
    walker.walk(doc.root_element(), false, false);
    walker.flush();
    walker.main_text()
}

/// Whether a boilerplate-looking element holds the page's content (see the module docs).
fn holds_content(element: &ElementRef) -> bool {
    let mut paragraphs = 0;
    for node in element.descendants() {
        if let Some(e) = node.value().as_element() {
            match e.name() {
                "article" | "main" | "h1" => return true,
                "p" => {
                    paragraphs += 1;
                    if paragraphs >= CONTENT_PARAGRAPHS {
                        return true;
                    }
                }
                _ => {}
            }
        }
    }
    false
}

fn is_boilerplate(element: &ElementRef, inside_article: bool) -> bool {
    let el = element.value();
    let name = el.name();
    if SKIP_TAGS.contains(&name) {
        return true;
    }
    if matches!(name, "header" | "footer") && !inside_article {
        return true;
    }
    if matches!(name, "html" | "body" | "main" | "article") {
        return false;
    }
    if el
        .attr("role")
        .is_some_and(|role| BOILERPLATE_ROLES.contains(&role.trim().to_ascii_lowercase().as_str()))
        && !holds_content(element)
    {
        return true;
    }
    if el.attr("hidden").is_some() || el.attr("aria-hidden") == Some("true") {
        return true;
    }
    (is_boilerplate_name(el.attr("class"), el.attr("id")) || name == "form")
        && !holds_content(element)
}

/// Whether a `class` or `id` value holds a boilerplate word (`ad-slot`, `site-nav`, ...).
pub fn is_boilerplate_name(class: Option<&str>, id: Option<&str>) -> bool {
    class
        .into_iter()
        .chain(id)
        .flat_map(|v| v.split(|c: char| !c.is_ascii_alphanumeric()))
        .any(|word| BOILERPLATE_WORDS.contains(&word.to_ascii_lowercase().as_str()))
}

/// One step of [`Walker::walk`].
enum Step<'a> {
    /// Open an element (with whether it is inside a link, inside an article).
    Enter(ElementRef<'a>, bool, bool),
    /// A text node (inside a link or not).
    Text(&'a str, bool),
    /// A boilerplate element, skipped whole.
    Skipped,
    /// Close an element (a block or not).
    Exit(bool),
}

/// Walks the DOM into a token stream, one text block at a time.
#[derive(Default)]
struct Walker {
    tokens: Vec<Token>,
    words: Vec<String>,
    /// Block index of each word (blocks become lines of the main text).
    word_block: Vec<usize>,
    /// Text of the block being read, and how much of it is link text.
    pending: String,
    pending_link: String,
    /// Tags seen in the pending block.
    pending_tags: usize,
    blocks: usize,
}

impl Walker {
    /// Walks `root` in document order with an explicit stack, not recursion: a hostile page
    /// nested a hundred thousand deep must not overflow the thread's stack.
    fn walk(&mut self, root: ElementRef, in_link: bool, inside_article: bool) {
        let mut stack = vec![Step::Enter(root, in_link, inside_article)];
        while let Some(step) = stack.pop() {
            match step {
                Step::Enter(element, in_link, inside_article) => {
                    let name = element.value().name();
                    let is_block = BLOCK_TAGS.contains(&name);
                    let in_link = in_link || name == "a";
                    let inside_article = inside_article || matches!(name, "article" | "main");
                    if is_block {
                        self.flush();
                    }
                    // One tag token per element (not open and close): a heading of two words
                    // over one tag still rises on the slope.
                    self.pending_tags += 1;
                    // Inline elements do not split words ("<b>bold</b>er"); blocks do.
                    stack.push(Step::Exit(is_block));
                    let first_child = stack.len();
                    for child in element.children() {
                        match child.value() {
                            Node::Text(text) => stack.push(Step::Text(text, in_link)),
                            Node::Element(_) => {
                                if let Some(child) = ElementRef::wrap(child) {
                                    if is_boilerplate(&child, inside_article) {
                                        stack.push(Step::Skipped);
                                    } else {
                                        stack.push(Step::Enter(child, in_link, inside_article));
                                    }
                                }
                            }
                            _ => {}
                        }
                    }
                    stack[first_child..].reverse();
                }
                Step::Text(text, in_link) => {
                    self.pending.push_str(text);
                    if in_link {
                        self.pending_link.push_str(text);
                        self.pending_link.push(' ');
                    }
                }
                Step::Skipped => {
                    // A skipped element still breaks text and counts as markup.
                    self.pending.push(' ');
                    self.pending_tags += 1;
                }
                Step::Exit(is_block) => {
                    if is_block {
                        self.flush();
                    }
                }
            }
        }
    }

    /// Ends the pending block: emits its tags, then its words (or only tags for a link list).
    fn flush(&mut self) {
        let words: Vec<&str> = self.pending.split_whitespace().collect();
        let link_words = self.pending_link.split_whitespace().count();
        let is_link_list =
            !words.is_empty() && link_words as f64 / words.len() as f64 > MAX_LINK_DENSITY;
        self.tokens
            .extend(std::iter::repeat_n(Token::Tag, self.pending_tags));
        if is_link_list {
            self.tokens
                .extend(std::iter::repeat_n(Token::Tag, words.len()));
        } else if !words.is_empty() {
            for word in words {
                self.tokens.push(Token::Word(self.words.len()));
                self.words.push(word.to_string());
                self.word_block.push(self.blocks);
            }
            self.blocks += 1;
        }
        self.pending.clear();
        self.pending_link.clear();
        self.pending_tags = 0;
    }

    /// The words of the maximum-slope window, one line per block.
    fn main_text(&self) -> String {
        let (first, last) = if self.words.len() < MIN_SLOPE_WORDS {
            (0, self.words.len())
        } else {
            self.slope_window()
        };
        let mut out = String::new();
        let mut block = None;
        for i in first..last {
            if block.is_some() && block != Some(self.word_block[i]) {
                out.push('\n');
            } else if block.is_some() {
                out.push(' ');
            }
            out.push_str(&self.words[i]);
            block = Some(self.word_block[i]);
        }
        out
    }

    /// Word-index range [first, last) of the maximum-sum token run (word +1, tag -1).
    fn slope_window(&self) -> (usize, usize) {
        let (mut best, mut best_range) = (i64::MIN, (0, 0));
        let (mut sum, mut start) = (0i64, 0usize);
        for (i, token) in self.tokens.iter().enumerate() {
            if sum <= 0 {
                sum = 0;
                start = i;
            }
            sum += if matches!(token, Token::Word(_)) {
                1
            } else {
                -1
            };
            if sum > best {
                best = sum;
                best_range = (start, i + 1);
            }
        }
        let mut word_indices =
            self.tokens[best_range.0..best_range.1]
                .iter()
                .filter_map(|t| match t {
                    Token::Word(i) => Some(*i),
                    Token::Tag => None,
                });
        match word_indices.next() {
            Some(first) => (first, word_indices.next_back().unwrap_or(first) + 1),
            None => (0, 0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(html: &str) -> String {
        main_text(&Html::parse_document(html))
    }

    #[test]
    fn boilerplate_is_dropped_and_the_slope_keeps_the_article() {
        let body = "Rivers rise after a week of heavy rain across the northern valleys. ".repeat(6);
        let out = text(&format!(
            "<body><nav><a href='/'>Home</a></nav><div class='ad-slot'>Buy cheap watches now</div>\
             <article><h1>Flood warning</h1><p>{body}</p></article>\
             <ul class='links'><li><a href='/a'>One link</a></li><li><a href='/b'>Two link</a></li></ul>\
             <footer>Copyright Example Corp</footer></body>"
        ));
        assert!(out.starts_with("Flood warning\nRivers rise"), "{out}");
        for junk in ["Home", "watches", "Copyright", "One link"] {
            assert!(!out.contains(junk), "{junk} in {out}");
        }
    }

    /// Regression: a wrapper named like boilerplate, or a page-wide form, dropped the whole page.
    #[test]
    fn wrappers_named_like_boilerplate_and_page_wide_forms_keep_the_page() {
        let paragraphs =
            "<p>Storm clouds gathered over the harbour as the boats came in.</p>".repeat(6);
        for wrapper in [
            "<div class='and-w-sidebar'>",
            "<div class='non-ad-column'>",
            "<div class='has-section-nav'>",
            "<form id='aspnetForm' action='/'>",
        ] {
            let close = if wrapper.starts_with("<form") {
                "</form>"
            } else {
                "</div>"
            };
            let out = text(&format!(
                "<body>{wrapper}<div class='sidebar'>Popular: other things</div>{paragraphs}{close}</body>"
            ));
            assert!(out.contains("Storm clouds"), "{wrapper}: {out:?}");
            assert!(!out.contains("Popular"), "{wrapper}: {out:?}");
        }
        // A small form is still boilerplate.
        let out = text(&format!(
            "<body><form><p>Search the site</p></form>{paragraphs}</body>"
        ));
        assert!(!out.contains("Search the site"), "{out}");
    }

    #[test]
    fn slope_keeps_the_text_dense_region() {
        let mut html = String::from("<body>");
        for i in 0..30 {
            html.push_str(&format!("<div><span><b>x{i}</b></span></div>"));
        }
        html.push_str("<div>");
        html.push_str(&"main words of the article ".repeat(20));
        html.push_str("</div>");
        for i in 0..30 {
            html.push_str(&format!("<div><span><i>y{i}</i></span></div>"));
        }
        let out = text(&html);
        assert!(out.starts_with("main words"), "{out}");
        assert!(out.ends_with("article"), "{out}");
    }
}
