//! Unit tests of the sitemap parser.

use std::io::Write;

use chrono::TimeZone;

use super::*;

fn ctx(url: &str) -> SitemapContext {
    SitemapContext::new(
        Url::parse(url).unwrap(),
        Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap(),
    )
}

fn run(xml: &str, url: &str) -> SitemapDoc {
    parse(xml.as_bytes(), &ctx(url))
}

const URLSET: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url>
    <loc>http://a.example/dir/p?x=1&amp;y=2</loc>
    <lastmod>2025-06-01T10:00:00+02:00</lastmod>
    <changefreq>Weekly</changefreq>
    <priority>0.8</priority>
    <image:image><image:loc>http://cdn.example/i.jpg</image:loc></image:image>
  </url>
  <url><loc><![CDATA[http://a.example/dir/q]]></loc><lastmod>2030-01-01</lastmod>
       <changefreq>sometimes</changefreq><priority>7</priority></url>
  <url><loc>http://a.example/other/r</loc></url>
  <url><loc>http://evil.example/dir/s</loc></url>
  <url><loc>ftp://a.example/dir/t</loc></url>
</urlset>"#;

#[test]
fn reads_urlset_fields_and_refuses_what_it_must() {
    let doc = run(URLSET, "http://a.example/dir/sitemap.xml");
    assert_eq!(doc.kind, SitemapKind::Urlset);
    let locs: Vec<&str> = doc.urls.iter().map(|u| u.loc.as_str()).collect();
    assert_eq!(
        locs,
        ["http://a.example/dir/p?x=1&y=2", "http://a.example/dir/q"]
    );
    let p = &doc.urls[0];
    assert_eq!(
        p.lastmod,
        Some(Utc.with_ymd_and_hms(2025, 6, 1, 8, 0, 0).unwrap())
    );
    assert_eq!(p.changefreq, Some(ChangeFreq::Weekly));
    assert_eq!(p.priority, Some(0.8));
    let q = &doc.urls[1];
    assert_eq!((q.lastmod, q.changefreq, q.priority), (None, None, None));
    let has = |f: &dyn Fn(&SitemapError) -> bool| doc.errors.iter().any(f);
    assert!(has(&|e| matches!(e, SitemapError::FutureLastmod { .. })));
    assert!(has(&|e| matches!(e, SitemapError::BadChangefreq { .. })));
    assert!(has(&|e| matches!(e, SitemapError::BadPriority { .. })));
    assert!(has(
        &|e| matches!(e, SitemapError::OutsideDirectory { loc, .. } if loc == "http://a.example/other/r")
    ));
    assert!(has(
        &|e| matches!(e, SitemapError::ForeignHost { loc } if loc == "http://evil.example/dir/s")
    ));
    assert!(has(&|e| matches!(e, SitemapError::BadUrl { .. })));
}

#[test]
fn cross_submission_lifts_host_and_directory_rules() {
    let mut c = ctx("http://a.example/dir/sitemap.xml");
    c.cross_submitted_hosts = vec!["evil.example".into(), "a.example".into()];
    let doc = parse(URLSET.as_bytes(), &c);
    assert_eq!(doc.urls.len(), 4);
    let mut lenient = ctx("http://a.example/dir/sitemap.xml");
    lenient.restrict_to_directory = false;
    assert_eq!(parse(URLSET.as_bytes(), &lenient).urls.len(), 3);
}

#[test]
fn index_with_bare_text_and_repeated_locs() {
    let xml = "<sitemapindex><sitemap>\n http://a.example/s1.xml \n</sitemap>\
        <sitemap><loc>http://a.example/s2.xml</loc><lastmod>2024-01-01</lastmod>\
        <loc>http://a.example/s3.xml</loc></sitemap></sitemapindex>";
    let doc = run(xml, "http://a.example/sitemap_index.xml");
    assert_eq!(doc.kind, SitemapKind::Index);
    let locs: Vec<(&str, bool)> = doc
        .sitemaps
        .iter()
        .map(|s| (s.loc.as_str(), s.lastmod.is_some()))
        .collect();
    assert_eq!(
        locs,
        [
            ("http://a.example/s1.xml", false),
            ("http://a.example/s2.xml", true),
            ("http://a.example/s3.xml", false)
        ]
    );
}

#[test]
fn text_sitemap_and_junk() {
    let doc = parse(
        &b"\xEF\xBB\xBFhttp://a.example/1\r\n\r\nhttp://a.example/2"[..],
        &ctx("http://a.example/sitemap.txt"),
    );
    assert_eq!(doc.kind, SitemapKind::Text);
    assert_eq!(doc.urls.len(), 2);
    let junk: Vec<u8> = (0..20_000u32).map(|i| (i * 31 % 251) as u8 | 1).collect();
    let doc = parse(&junk[..], &ctx("http://a.example/sitemap.txt"));
    assert!(doc.urls.is_empty());
    assert!(matches!(
        doc.errors[..],
        [SitemapError::UnknownFormat { .. }]
    ));
}

#[test]
fn huge_lines_are_cut_not_loaded() {
    let mut text = "http://a.example/1\n".to_string();
    text.push_str(&"x".repeat(1_000_000));
    text.push_str("\nhttp://a.example/2\n");
    let doc = parse(text.as_bytes(), &ctx("http://a.example/sitemap.txt"));
    let locs: Vec<&str> = doc.urls.iter().map(|u| u.loc.as_str()).collect();
    assert_eq!(locs, ["http://a.example/1", "http://a.example/2"]);
    assert_eq!(doc.errors.len(), 1, "the long line is one bad URL");
}

#[test]
fn truncated_xml_keeps_what_was_read() {
    let xml = "<urlset><url><loc>http://a.example/1</loc></url><url><loc>http://a.exa";
    let doc = run(xml, "http://a.example/sitemap.xml");
    assert_eq!(doc.urls.len(), 1);
    assert!(
        doc.errors
            .iter()
            .any(|e| matches!(e, SitemapError::MalformedXml { .. }))
    );
    let broken = "<urlset><url><loc>http://a.example/1</loc></url></oops></urlset>";
    let doc = run(broken, "http://a.example/sitemap.xml");
    assert_eq!(doc.urls.len(), 1);
    assert!(matches!(
        doc.errors.last(),
        Some(SitemapError::MalformedXml { byte, .. }) if *byte > 0
    ));
}

#[test]
fn html_and_empty_documents_are_not_sitemaps() {
    let doc = run(
        "<!DOCTYPE html><html><body>hi</body></html>",
        "http://a.example/s.xml",
    );
    assert_eq!(doc.kind, SitemapKind::Unknown);
    assert!(
        doc.errors
            .iter()
            .any(|e| matches!(e, SitemapError::UnknownFormat { .. }))
    );
    let doc = run("  \n ", "http://a.example/s.xml");
    assert!(matches!(
        doc.errors[..],
        [SitemapError::UnknownFormat { .. }]
    ));
}

#[test]
fn url_limit_stops_reading() {
    let mut xml = String::from("<urlset>");
    for i in 0..10 {
        xml.push_str(&format!("<url><loc>http://a.example/{i}</loc></url>"));
    }
    xml.push_str("</urlset>");
    let mut c = ctx("http://a.example/sitemap.xml");
    c.limits.max_urls = 3;
    let doc = parse(xml.as_bytes(), &c);
    assert_eq!(doc.urls.len(), 3);
    assert_eq!(doc.errors, [SitemapError::TooManyUrls { limit: 3 }]);
}

#[test]
fn streaming_hands_over_what_parse_keeps_and_counts_the_limit_alike() {
    let c = ctx("http://a.example/dir/sitemap.xml");
    let kept = parse(URLSET.as_bytes(), &c);
    let mut streamed = Vec::new();
    let doc = parse_each(URLSET.as_bytes(), &c, &mut |u| streamed.push(u));
    assert_eq!(streamed, kept.urls);
    assert!(doc.urls.is_empty());
    assert_eq!(doc.errors, kept.errors);

    let mut xml = String::from("<urlset>");
    for i in 0..10 {
        xml.push_str(&format!("<url><loc>http://a.example/{i}</loc></url>"));
    }
    xml.push_str("</urlset>");
    let mut c = ctx("http://a.example/sitemap.xml");
    c.limits.max_urls = 3;
    let mut count = 0;
    let doc = parse_each(xml.as_bytes(), &c, &mut |_| count += 1);
    assert_eq!(count, 3);
    assert_eq!(doc.errors, [SitemapError::TooManyUrls { limit: 3 }]);
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

#[test]
fn gzip_is_detected_and_capped() {
    let xml = "<urlset><url><loc>http://a.example/1</loc></url></urlset>";
    let doc = parse(
        &gzip(xml.as_bytes())[..],
        &ctx("http://a.example/sitemap.xml"),
    );
    assert_eq!(doc.urls.len(), 1);
    // A bomb: a tiny file that inflates to 20 MB of white space inside <urlset>.
    let mut big = b"<urlset><url><loc>http://a.example/1</loc></url>".to_vec();
    big.resize(20_000_000, b' ');
    let bomb = gzip(&big);
    assert!(bomb.len() < 100_000);
    let mut c = ctx("http://a.example/sitemap.xml");
    c.limits.max_bytes = 1_000_000;
    let doc = parse(&bomb[..], &c);
    assert_eq!(doc.urls.len(), 1);
    assert!(doc.errors.contains(&SitemapError::TooLarge {
        limit_bytes: 1_000_000
    }));
    assert!(matches!(
        decompress(&bomb, 1_000_000),
        Err(DecompressError::TooLarge { limit: 1_000_000 })
    ));
    assert_eq!(decompress(&gzip(b"abc"), 10).unwrap(), b"abc");
    assert_eq!(decompress(b"plain", 10).unwrap(), b"plain");
    assert!(matches!(
        decompress(&[0x1f, 0x8b, 1, 2, 3], 10),
        Err(DecompressError::Gzip(_))
    ));
}

#[test]
fn rss_and_atom_as_sitemaps() {
    let rss = r#"<rss version="2.0"><channel><pubDate>Thu, 05 Jan 2017 12:34:50 GMT</pubDate>
        <item><link>http://a.example/1</link><pubDate>Thu, 05 Jan 2017 13:34:51 +0100</pubDate></item>
        <item><guid isPermaLink="false">http://a.example/2</guid></item>
        <item><link>http://a.example/3</link><pubDate>05 Jan 17 13:34:55</pubDate></item>
        </channel></rss>"#;
    let doc = run(rss, "http://a.example/feed");
    assert_eq!(doc.kind, SitemapKind::Rss);
    assert_eq!(doc.urls.len(), 3);
    assert!(doc.lastmod.is_some());
    assert!(doc.urls[0].lastmod.is_some());
    assert_eq!(doc.urls[2].lastmod, None, "a zone-less pubDate is refused");
    let atom = r#"<feed xmlns="http://www.w3.org/2005/Atom"><updated>2024-01-01T00:00:00Z</updated>
        <entry><link rel="edit" href="/edit/1"/><link href="/posts/1"/>
        <published>2023-12-01T00:00:00Z</published></entry></feed>"#;
    let doc = run(atom, "http://a.example/atom.xml");
    assert_eq!(doc.kind, SitemapKind::Atom);
    assert_eq!(doc.urls[0].loc, "http://a.example/posts/1");
    assert_eq!(
        doc.urls[0].lastmod,
        Some(Utc.with_ymd_and_hms(2023, 12, 1, 0, 0, 0).unwrap())
    );
}

#[test]
fn doctype_entities_are_never_expanded() {
    let xml = r#"<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
        <urlset><url><loc>http://a.example/&xxe;</loc></url></urlset>"#;
    let doc = run(xml, "http://a.example/sitemap.xml");
    assert_eq!(doc.urls[0].loc, "http://a.example/");
    assert!(doc.errors.contains(&SitemapError::Doctype));
    assert!(
        doc.errors
            .contains(&SitemapError::UnknownEntity { name: "xxe".into() })
    );
}

#[test]
fn changefreq_rates() {
    assert_eq!(ChangeFreq::Hourly.per_day(), 24.0);
    assert_eq!(ChangeFreq::Daily.per_day(), 1.0);
    assert!((ChangeFreq::Weekly.per_day() - 1.0 / 7.0).abs() < 1e-12);
    assert!((ChangeFreq::Monthly.per_day() - 1.0 / 30.0).abs() < 1e-12);
    assert!((ChangeFreq::Yearly.per_day() - 1.0 / 365.0).abs() < 1e-12);
    assert!(ChangeFreq::Always.per_day() > 100.0);
    assert!(ChangeFreq::Never.per_day() > 0.0 && ChangeFreq::Never.per_day() < 1.0 / 365.0);
}

/// A urlset of `n` entries after a comment of `pad` bytes; each entry's text is
/// `priority(i)` and its loc has an entity, a CDATA section and a comment in it.
fn windowed_urlset(pad: usize, n: usize, priority: impl Fn(usize) -> String) -> String {
    let mut xml = format!("<urlset><!--{}-->\n", "x".repeat(pad));
    for i in 0..n {
        xml.push_str(&format!(
            "  <url>\n    <loc>http://a.example/p?i={i}&amp;<![CDATA[j=<{i}>]]><!-- c -->&#x6B;=1</loc>\n    \
             <lastmod>2024-01-02</lastmod>\n    <priority>{}</priority>\n  </url>\n",
            priority(i)
        ));
    }
    xml.push_str("</urlset>\n");
    xml
}

#[test]
fn events_across_windows_read_as_in_one_piece() {
    // Wherever the window's end falls (each pad moves it by one byte), every entry is whole.
    for pad in 0..40 {
        let xml = windowed_urlset(pad, 1500, |i| format!("0.{}", i % 10));
        assert!(xml.len() > 2 * decode::WINDOW);
        let doc = run(&xml, "http://a.example/sitemap.xml");
        assert_eq!(doc.errors, [], "pad {pad}");
        assert_eq!(doc.urls.len(), 1500, "pad {pad}");
        for (i, url) in doc.urls.iter().enumerate() {
            assert_eq!(url.loc, format!("http://a.example/p?i={i}&j=%3C{i}%3Ek=1"));
            assert_eq!(url.priority, Some((i % 10) as f32 / 10.0));
            assert!(url.lastmod.is_some());
        }
    }
}

#[test]
fn a_byte_order_mark_where_a_window_starts_stays_text() {
    // A <priority> whose text starts with U+FEFF (not white space, so not a number) straddling
    // the end of the first window: the reader restarts at that text and must keep the mark.
    let priority = |_| "\u{FEFF}0.5".to_string();
    let straddles = |xml: &str| {
        xml.match_indices("<priority>").any(|(at, tag)| {
            let text = at + tag.len();
            text < decode::WINDOW && text + "\u{FEFF}0.5".len() > decode::WINDOW
        })
    };
    let xml = (0..200)
        .map(|pad| windowed_urlset(pad, 700, priority))
        .find(|xml| straddles(xml))
        .expect("some pad puts a priority across the window's end");
    let doc = run(&xml, "http://a.example/sitemap.xml");
    assert_eq!(doc.urls.len(), 700);
    assert!(doc.urls.iter().all(|u| u.priority.is_none()));
    assert_eq!(doc.errors.len() + doc.errors_dropped, 700);
}

#[test]
fn end_tags_are_checked_across_windows() {
    let mut xml = windowed_urlset(0, 1000, |_| "0.5".into());
    xml.truncate(xml.len() - "</urlset>\n".len());
    let at = xml.len() as u64;
    xml.push_str("<url><loc>http://a.example/last</loc></bad></urlset>");
    let doc = run(&xml, "http://a.example/sitemap.xml");
    assert_eq!(doc.urls.len(), 1001, "the open entry is kept");
    let bad = at + "<url><loc>http://a.example/last</loc>".len() as u64;
    assert_eq!(
        doc.errors,
        [SitemapError::MalformedXml {
            byte: bad,
            message: "ill-formed document: expected `</url>`, but `</bad>` was found".into(),
        }]
    );
    let doc = run("<urlset></urlset></extra>", "http://a.example/sitemap.xml");
    assert_eq!(
        doc.errors,
        [SitemapError::MalformedXml {
            byte: 17,
            message: "ill-formed document: close tag `</extra>` does not match any open tag".into(),
        }]
    );
}

#[test]
fn white_space_before_an_entrys_own_text_counts_against_its_limit() {
    // 60,000 bytes of white space, then a URL: the URL fits the 64 KiB limit only when short.
    let index = |ws: &str, between: &str, path: &str| {
        format!(
            "<sitemapindex><sitemap>{ws}{between}http://a.example/{path}</sitemap></sitemapindex>"
        )
    };
    let ws = " \n".repeat(30_000);
    for between in ["", "<!-- -->"] {
        let doc = run(
            &index(&ws, between, "s.xml"),
            "http://a.example/sitemap.xml",
        );
        assert_eq!(doc.sitemaps.len(), 1, "{between:?}");
        let long = "x".repeat(6_000);
        let doc = run(&index(&ws, between, &long), "http://a.example/sitemap.xml");
        assert_eq!(doc.errors, [SitemapError::MissingLoc], "{between:?}");
    }
}

#[test]
fn the_problem_that_stopped_the_reading_is_kept_past_the_cap_on_problems() {
    // An adversarial file: 50,001 URLs each with a bad priority. The URL cap's problem came
    // after a thousand priority problems and was dropped with the rest, so nothing said the
    // sitemap was cut.
    let mut xml = String::from(r#"<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">"#);
    for i in 0..=MAX_URLS {
        xml.push_str(&format!(
            "<url><loc>http://a.example/p{i}</loc><priority>7</priority></url>"
        ));
    }
    xml.push_str("</urlset>");
    let doc = run(&xml, "http://a.example/sitemap.xml");
    assert_eq!(doc.urls.len(), MAX_URLS);
    assert_eq!(doc.errors.len(), MAX_ERRORS + 1);
    assert_eq!(
        doc.errors.last(),
        Some(&SitemapError::TooManyUrls { limit: MAX_URLS })
    );
    assert_eq!(doc.errors_dropped, MAX_URLS - MAX_ERRORS);
}
