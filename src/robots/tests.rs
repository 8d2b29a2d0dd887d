//! Unit tests of the robots.txt reader and matcher.

use super::*;

const FOOBOT: &str = "user-agent: FooBot\ndisallow: /\nallow: /x/\n\nuser-agent: *\ndisallow: /private\ncrawl-delay: 2.5\nsitemap: https://a.example/s.xml\n";

#[test]
fn specific_group_beats_global() {
    let r = Robots::parse(FOOBOT.as_bytes(), "FooBot");
    assert_eq!(r.group_match(), GroupMatch::Specific);
    assert!(!r.is_allowed("https://a.example/y"));
    assert!(r.is_allowed("https://a.example/x/1"));
    assert_eq!(r.crawl_delay(), None);
    let other = Robots::parse(FOOBOT.as_bytes(), "freshet/0.1");
    assert_eq!(other.group_match(), GroupMatch::Global);
    assert!(other.is_allowed("https://a.example/y"));
    assert!(!other.is_allowed("https://a.example/private/1"));
    assert_eq!(other.crawl_delay(), Some(Duration::from_millis(2500)));
    assert_eq!(other.sitemaps(), ["https://a.example/s.xml"]);
}

#[test]
fn longest_match_and_allow_on_tie() {
    let r = Robots::parse(
        b"User-agent: *\nAllow: /page\nDisallow: /*.html\n",
        "freshet",
    );
    assert!(!r.is_allowed("/page.html"));
    let tie = Robots::parse(b"User-agent: *\nDisallow: /a\nAllow: /a\n", "freshet");
    assert!(tie.is_allowed("/a"));
}

#[test]
fn robots_txt_itself_is_always_allowed() {
    let r = Robots::parse(b"User-agent: *\nDisallow: /\n", "freshet");
    assert!(r.is_allowed("http://h/robots.txt"));
    assert!(!r.is_allowed("http://h/"));
}

#[test]
fn statuses_map_to_blanket_rules() {
    let body = b"User-agent: *\nDisallow: /\n";
    assert!(!rules_for_status(200, body, "freshet").is_allowed("/a"));
    assert!(rules_for_status(404, body, "freshet").is_allowed("/a"));
    let unavailable = rules_for_status(503, body, "freshet");
    assert!(!unavailable.is_allowed("/a") && unavailable.retry_soon());
    assert!(!rules_for_status(429, body, "freshet").is_allowed("/a"));
    assert!(!rules_for_status(0, b"", "freshet").is_allowed("/a"));
    assert!(!rules_for_status(301, b"", "freshet").is_allowed("/a"));
}

#[test]
fn only_the_first_500_kib_are_read() {
    let mut body = b"User-agent: *\n".to_vec();
    while body.len() < MAX_ROBOTS_BYTES {
        body.extend_from_slice(b"# filler filler filler filler filler filler\n");
    }
    body.extend_from_slice(b"Disallow: /late\n");
    assert!(Robots::parse(&body, "freshet").is_allowed("/late"));
}

#[test]
fn utf16_bom_cr_line_ends_and_html_breaks() {
    let text = "User-agent: *\rDisallow: /a<br>\rCrawl-delay: 3<BR>\r";
    let mut utf16 = vec![0xFF, 0xFE];
    for unit in text.encode_utf16() {
        utf16.extend_from_slice(&unit.to_le_bytes());
    }
    let r = Robots::parse(&utf16, "freshet");
    assert!(!r.is_allowed("/a/b"));
    assert_eq!(r.crawl_delay(), Some(Duration::from_secs(3)));
}

#[test]
fn binary_junk_does_not_panic() {
    let junk: Vec<u8> = (0..5000u32).map(|i| (i * 7919 % 251) as u8).collect();
    let r = Robots::parse(&junk, "freshet");
    let _ = r.is_allowed("/x");
}

#[test]
fn crawl_delay_applies_to_agents_named_before_it() {
    let txt = b"User-agent: a\nCrawl-delay: 10\nUser-agent: b\nDisallow: /p\n";
    assert_eq!(
        Robots::parse(txt, "a").crawl_delay(),
        Some(Duration::from_secs(10))
    );
    let b = Robots::parse(txt, "b");
    assert_eq!(b.crawl_delay(), None);
    assert!(!b.is_allowed("/p"));
    assert!(!Robots::parse(txt, "a").is_allowed("/p"));
}

#[test]
fn relative_sitemaps_resolve_against_the_robots_url() {
    let r = Robots::parse(
        b"Sitemap: /s.xml\nSitemap: https://b.example/t.xml\nSitemap: ftp://x/y\n",
        "freshet",
    );
    let base = url::Url::parse("https://a.example/robots.txt").unwrap();
    let urls: Vec<String> = r
        .sitemap_urls(&base)
        .iter()
        .map(|u| u.to_string())
        .collect();
    assert_eq!(urls, ["https://a.example/s.xml", "https://b.example/t.xml"]);
}

#[test]
fn disallowed_by_names_the_deciding_rule() {
    let robots = Robots::parse(
        b"User-agent: *\nDisallow: /private/\nAllow: /private/ok\n",
        "freshet",
    );
    assert_eq!(
        robots.disallowed_by("http://h/private/x").as_deref(),
        Some("Disallow: /private/")
    );
    assert_eq!(robots.disallowed_by("http://h/private/ok"), None);
    assert_eq!(robots.disallowed_by("http://h/public"), None);
    assert!(
        Robots::disallow_all()
            .disallowed_by("http://h/x")
            .is_some_and(|why| why.contains("could not be read"))
    );
}

#[test]
fn a_file_past_500_kib_keeps_its_first_rules() {
    // What the refresher hands over for a 10 MB file: 500 KiB and one byte, cut mid-line.
    let mut body = b"User-agent: *\nDisallow: /private/\n".to_vec();
    while body.len() <= MAX_ROBOTS_BYTES {
        body.extend_from_slice(b"# filler filler filler filler filler filler filler\n");
    }
    body.truncate(MAX_ROBOTS_BYTES + 1);
    body.extend_from_slice(b"Disallow: /late/"); // never reached: past the limit
    let robots = rules_for_status(200, &body, "freshet");
    assert!(!robots.is_allowed("http://h/private/a"));
    assert!(robots.is_allowed("http://h/late/x"));
}

#[test]
fn an_escaped_letter_does_not_get_past_a_disallow() {
    // A server serves `/%70rivate/x` as `/private/x` (RFC 9309 §2.2.2 decodes escaped
    // unreserved characters before comparing); an adversary's redirect to it was followed.
    let r = Robots::parse(b"User-agent: *\nDisallow: /private/\n", "freshet");
    assert!(!r.is_allowed("http://h/%70rivate/x"));
    assert!(!r.is_allowed("http://h/priv%61te/x"));
    let why = r.disallowed_by("http://h/%70rivate/x").expect("disallowed");
    assert!(why.contains("/private/x"), "{why}");
    // An escaped `/`, which nginx decodes before it finds the file, is a `/` too; escapes of
    // other reserved or non-ASCII octets stay what they are.
    let slash = Robots::parse(b"User-agent: *\nDisallow: /a/b\n", "freshet");
    assert!(!slash.is_allowed("http://h/a%2Fb"));
    assert!(!slash.is_allowed("http://h/a%2fb/c"));
    assert!(slash.is_allowed("http://h/a%3Fb"));
    // A rule written with escapes keeps out the plain path too.
    let escaped = Robots::parse(b"User-agent: *\nDisallow: /%62az\n", "freshet");
    assert!(!escaped.is_allowed("http://h/baz"));
    assert!(!escaped.is_allowed("http://h/%62az"));
    // An Allow is honoured only where it allows both readings (Google's rows: `Allow:
    // /foo/bar/%62%61%7A` under `Disallow: /` lets that URL through, not `/foo/bar/baz`).
    let allow = Robots::parse(
        b"User-agent: *\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n",
        "freshet",
    );
    assert!(allow.is_allowed("http://h/foo/bar/%62%61%7A"));
    assert!(!allow.is_allowed("http://h/foo/bar/baz"));
}

#[test]
fn decoding_as_served_keeps_every_other_escape() {
    use super::matcher::decode_as_served;
    assert_eq!(decode_as_served("/%70%2d%7e%5F"), "/p-~_");
    assert_eq!(decode_as_served("/a%2fb%20c"), "/a/b%20c");
    assert_eq!(decode_as_served("/%E3%83%84/ü"), "/%E3%83%84/ü");
    assert_eq!(decode_as_served("/%7"), "/%7");
    assert_eq!(decode_as_served("/%zz%"), "/%zz%");
    assert!(matches!(
        decode_as_served("/plain"),
        std::borrow::Cow::Borrowed(_)
    ));
}
