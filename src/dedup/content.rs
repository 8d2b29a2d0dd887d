//! A fetched page's content as everything that judges content sees it: the main text extracted
//! once ([`extract_page`]) and its content fingerprint ([`content_fp`]). The dedup engine files
//! pages by it, and the refresher's change detection compares it between checks, so "the same
//! content" means one thing throughout freshet. Pure.
//!
//! - An HTML body (by `Content-Type`, or a body starting with `<` when there is none): decoded,
//!   then [`extract::extract_html`] with the final URL (normalised) as base.
//! - Any other text body: [`extract::extract_plain`] of the decoded text.
//! - Anything else has no text: its bytes are its content.
//!
//! The fingerprint is [`content_fingerprint`] of the main text (case folded, whitespace
//! collapsed), or xxh3 of the body bytes when there is no main text.

use url::Url;
use xxhash_rust::xxh3::xxh3_64;

use super::charset;
use super::extract::{self, Extracted};
use super::fingerprint::content_fingerprint;
use super::page::FetchedPage;
use super::urlnorm::{UrlRules, normalize};

/// The main text, links, title and canonical of `page` (empty for a body without text).
pub fn extract_page(page: &FetchedPage, rules: &UrlRules) -> Extracted {
    let content_type = page.content_type.as_deref().unwrap_or("");
    let looks_html = content_type.contains("html")
        || (content_type.is_empty()
            && page
                .body
                .iter()
                .find(|b| !b.is_ascii_whitespace())
                .is_some_and(|&b| b == b'<'));
    let is_text = looks_html || content_type.is_empty() || content_type.starts_with("text/");
    if !is_text {
        return Extracted::default();
    }
    let decoded = charset::decode(&page.body, page.content_type.as_deref());
    if looks_html {
        let base: Option<Url> = normalize(&page.final_url, None, rules).ok();
        extract::extract_html(&decoded.text, base.as_ref(), rules)
    } else {
        extract::extract_plain(&decoded.text)
    }
}

/// The content fingerprint of a page whose extraction gave `extracted` from `body`.
pub fn content_fp(extracted: &Extracted, body: &[u8]) -> u64 {
    if extracted.main_text.is_empty() {
        // Binary or empty: the bytes themselves are the content.
        xxh3_64(body)
    } else {
        content_fingerprint(&extracted.main_text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(body: &str) -> FetchedPage {
        FetchedPage::html("http://a.test/story", body)
    }

    fn article(noise: &str) -> String {
        format!(
            "<html><head><title>Story</title></head><body>\
             <header><p>Updated {noise} minutes ago</p></header>\
             <aside class=\"ad\"><p>Buy {noise} things now</p></aside>\
             <article><h1>Story</h1><p>The council met on Tuesday and agreed the new budget \
             for the river bridge, which opens next spring after two years of work.</p></article>\
             <form><input type=\"hidden\" name=\"csrf\" value=\"tok{noise}\"></form>\
             <footer><p>{noise} readers online</p></footer></body></html>"
        )
    }

    #[test]
    fn noise_outside_the_main_text_keeps_the_content_fingerprint() {
        let rules = UrlRules::default();
        let (a, b) = (page(&article("3")), page(&article("17")));
        let (ea, eb) = (extract_page(&a, &rules), extract_page(&b, &rules));
        assert!(ea.main_text.contains("river bridge"), "{}", ea.main_text);
        assert_ne!(a.body, b.body);
        assert_eq!(content_fp(&ea, &a.body), content_fp(&eb, &b.body));
        let edited = page(&article("3").replace("next spring", "next autumn"));
        let ee = extract_page(&edited, &rules);
        assert_ne!(content_fp(&ea, &a.body), content_fp(&ee, &edited.body));
    }

    #[test]
    fn bodies_without_text_are_their_bytes() {
        let mut pdf = page("%PDF-1.4 binary");
        pdf.content_type = Some("application/pdf".into());
        let e = extract_page(&pdf, &UrlRules::default());
        assert!(e.main_text.is_empty());
        assert_eq!(content_fp(&e, &pdf.body), xxh3_64(&pdf.body));
        let mut text = page("line one\n  line   two\n");
        text.content_type = Some("text/plain".into());
        let e = extract_page(&text, &UrlRules::default());
        assert_eq!(e.main_text, "line one\nline two");
    }
}
