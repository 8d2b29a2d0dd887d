//! The dedup engine's behaviours on the fixtures in tests/fixtures/dedup/ (pure level: pages are
//! handed to the engine as the fetcher would; the HTTP end-to-end test serves the same files).

use freshet::dedup::{
    ClassKind, DedupConfig, DedupEngine, DedupState, FetchedPage, Hop, RedirectError,
};

fn fixture(name: &str) -> Vec<u8> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/dedup/");
    std::fs::read(format!("{path}{name}")).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn engine() -> DedupEngine {
    DedupEngine::new(DedupConfig::default())
}

fn with_priority(url: &str, body: Vec<u8>, priority: f64) -> FetchedPage {
    FetchedPage {
        sitemap_priority: Some(priority),
        ..FetchedPage::html(url, body)
    }
}

fn redirected(url: &str, chain: &[(&str, u16)], final_url: &str, body: Vec<u8>) -> FetchedPage {
    FetchedPage {
        url: url.to_string(),
        final_url: final_url.to_string(),
        redirect_chain: chain
            .iter()
            .map(|(u, s)| Hop {
                url: u.to_string(),
                status: *s,
            })
            .collect(),
        ..FetchedPage::html(url, body)
    }
}

const PRIMARY: &str = "https://www.gazette.example";
const MIRROR: &str = "http://mirror.gazette.example:8080";

#[test]
fn mirror_host_gives_one_class_per_page_with_the_better_url_canonical() {
    let mut e = engine();
    let pages = ["template-bakery.html", "template-council.html"];
    let path = |p: &str| format!("/pages/{p}");
    // The mirror is seen first: the primary must still win on score (https, sitemap priority).
    for p in pages {
        e.observe(FetchedPage::html(
            &format!("{MIRROR}{}", path(p)),
            fixture(p),
        ))
        .unwrap();
    }
    for p in pages {
        let out = e
            .observe(with_priority(
                &format!("{PRIMARY}{}", path(p)),
                fixture(p),
                0.8,
            ))
            .unwrap();
        assert!(out.is_canonical, "{}", out.reason);
        assert_eq!(out.canonical.as_deref(), Some(out.url.as_str()));
    }
    let classes = e.classes();
    assert_eq!(classes.len(), 2, "{classes:#?}");
    for p in pages {
        let primary = format!("{PRIMARY}{}", path(p));
        let mirror = format!("{MIRROR}{}", path(p));
        let class = classes.iter().find(|c| c.contains(&primary)).unwrap();
        assert_eq!(class.id.kind, ClassKind::Content);
        assert_eq!(class.members.len(), 2);
        let canonical = class.canonical.as_deref();
        assert!(canonical == Some(primary.as_str()), "{class:#?}");
        assert!(class.contains(&mirror));
        assert!(!e.is_canonical(&mirror));
        assert_eq!(e.planner_weight(&mirror), 0.1);
        assert_eq!(e.planner_weight(&primary), 1.0);
        assert!(e.explain(&mirror).contains("is not canonical"));
    }
}

#[test]
fn permanent_chain_is_compressed_and_links_are_rewritten() {
    let mut e = engine();
    let (a, b, c) = (
        "https://gazette.example/a",
        "https://gazette.example/b",
        "https://gazette.example/c",
    );
    let out = e
        .observe(redirected(
            a,
            &[(a, 301), (b, 308)],
            c,
            fixture("template-bakery.html"),
        ))
        .unwrap();
    assert_eq!(out.url, c, "content is filed under the final target");
    assert!(out.is_canonical);
    let table = e.permanent_redirects();
    assert_eq!(table.final_target(a), Some(c));
    assert_eq!(table.final_target(b), Some(c));
    assert_eq!(table.compressed().len(), 2);
    assert_eq!(e.rewrite_link(a).as_deref(), Some(c));
    assert_eq!(
        e.rewrite_link("https://GAZETTE.example:443/a#top")
            .as_deref(),
        Some(c)
    );
    assert_eq!(e.planner_weight(a), DedupConfig::default().redirect_weight);
    assert!(!e.is_canonical(a));

    let linking = format!("<p>see <a href='{a}'>this</a> and <a href='/b'>that</a></p>");
    let out = e
        .observe(FetchedPage::html(
            "https://gazette.example/index.html",
            linking,
        ))
        .unwrap();
    assert_eq!(out.links, vec![c.to_string()], "both rewritten to c, once");
    // The links count as in-links of c only.
    assert_eq!(e.url_record(c).map(|r| r.url.as_str()), Some(c));
    assert!(e.explain(c).contains("1 in-link(s)"), "{}", e.explain(c));
}

#[test]
fn permanent_cycle_is_an_error_not_a_crash() {
    let mut e = engine();
    let (x, y) = ("http://loop.example/x", "http://loop.example/y");
    let chain = [
        Hop {
            url: x.into(),
            status: 301,
        },
        Hop {
            url: y.into(),
            status: 301,
        },
    ];
    let errors = e.observe_redirects(x, &chain, x).unwrap();
    assert_eq!(
        errors,
        vec![RedirectError::Cycle {
            urls: vec![y.into(), x.into(), y.into()]
        }]
    );
    // Seen again: reported by the fetch, recorded once.
    e.observe_redirects(x, &chain, x).unwrap();
    assert_eq!(e.redirect_errors().len(), 1);
    assert!(e.redirect_errors()[0].to_string().contains("cycle"));
    // The table stays usable and acyclic.
    assert_eq!(e.rewrite_link(x).as_deref(), Some(y));
    assert_eq!(e.rewrite_link(y).as_deref(), Some(y));
    // A page whose chain loops (the fetcher gave up) is still observed.
    let out = e
        .observe(redirected(
            y,
            &[(y, 301), (x, 301)],
            y,
            fixture("template-council.html"),
        ))
        .unwrap();
    assert_eq!(out.errors.len(), 1);
}

#[test]
fn temporary_redirect_sources_sharing_a_target_form_one_class() {
    let mut e = engine();
    let target = "https://gazette.example/news/council-budget.html";
    let sources = [
        "https://gazette.example/latest",
        "https://gazette.example/top-story?from=home",
    ];
    for (s, status) in sources.iter().zip([302, 307]) {
        e.observe(redirected(
            s,
            &[(s, status)],
            target,
            fixture("template-council.html"),
        ))
        .unwrap();
    }
    let redirect: Vec<_> = e
        .classes()
        .into_iter()
        .filter(|c| c.id.kind == ClassKind::Redirect)
        .collect();
    assert_eq!(redirect.len(), 1, "{redirect:#?}");
    let members: Vec<&str> = redirect[0].members.iter().map(|m| m.url.as_str()).collect();
    assert_eq!(members.len(), 2);
    assert!(sources.iter().all(|s| members.contains(s)));
    // The shorter, parameter-free source is the redirect class's canonical...
    assert_eq!(redirect[0].canonical.as_deref(), Some(sources[0]));
    // ...and the target serves the content too: one content class with all three.
    let content = e.content_class(target).expect("target filed");
    assert_eq!(content.members.len(), 3);
    let canonical: Vec<&str> = [sources[0], sources[1], target]
        .into_iter()
        .filter(|u| e.is_canonical(u))
        .collect();
    assert_eq!(canonical.len(), 1, "exactly one canonical: {canonical:?}");
    assert!(!e.is_canonical(sources[1]));
    assert!(e.explain(sources[1]).contains("temporarily redirects"));
}

#[test]
fn same_article_with_other_date_line_and_ads_is_one_near_group_and_templates_are_not() {
    let mut e = engine();
    let urls = [
        (
            "https://gazette.example/news/flood.html",
            "news-article-a.html",
        ),
        (
            "https://gazette.example/news/flood-updated.html",
            "news-article-b.html",
        ),
        (
            "https://gazette.example/business/bakery.html",
            "template-bakery.html",
        ),
        (
            "https://gazette.example/news/council.html",
            "template-council.html",
        ),
    ];
    let outcomes: Vec<_> = urls
        .iter()
        .map(|(u, f)| e.observe(FetchedPage::html(u, fixture(f))).unwrap())
        .collect();
    assert_ne!(
        outcomes[0].content_fp, outcomes[1].content_fp,
        "date lines differ"
    );
    assert!(!outcomes[0].main_text.contains("holiday deals"));
    assert!(!outcomes[1].main_text.contains("insurance"));
    assert!(!outcomes[2].main_text.contains("Most read"));
    let near: Vec<_> = e
        .classes()
        .into_iter()
        .filter(|c| c.id.kind == ClassKind::Near)
        .collect();
    assert_eq!(near.len(), 1, "{near:#?}");
    let members: Vec<&str> = near[0].members.iter().map(|m| m.url.as_str()).collect();
    assert_eq!(members.len(), 2);
    assert!(members.contains(&urls[0].0) && members.contains(&urls[1].0));
    // A verified near group decides canonicals like an exact class: one of the two is the
    // canonical, the other gets the duplicate's planner weight.
    assert!(e.is_canonical(urls[0].0) != e.is_canonical(urls[1].0));
    let copy = if e.is_canonical(urls[0].0) {
        urls[1].0
    } else {
        urls[0].0
    };
    assert_eq!(e.planner_weight(copy), e.config().duplicate_weight);
    assert!(e.is_canonical(urls[2].0) && e.is_canonical(urls[3].0));
    assert!(e.classes().iter().all(|c| c.id.kind != ClassKind::Content));
}

#[test]
fn near_groups_decide_canonicals_when_configured() {
    let mut e = DedupEngine::new(DedupConfig {
        near_joins_content: true,
        ..DedupConfig::default()
    });
    let a = "https://gazette.example/news/flood.html";
    let b = "https://gazette.example/news/flood.html?page=1&view=full";
    e.observe(FetchedPage::html(b, fixture("news-article-b.html")))
        .unwrap();
    e.observe(with_priority(a, fixture("news-article-a.html"), 1.0))
        .unwrap();
    assert!(e.is_canonical(a), "{}", e.explain(a));
    assert!(!e.is_canonical(b));
    assert_eq!(e.planner_weight(b), 0.1);
}

#[test]
fn canonical_moves_only_when_the_score_change_beats_both_margins() {
    let mut e = engine();
    let body = fixture("template-bakery.html");
    let (p1, p2) = (
        "https://gazette.example/bakery-1.html",
        "https://gazette.example/bakery-2.html",
    );
    e.observe(with_priority(p1, body.clone(), 0.5)).unwrap();
    e.observe(with_priority(p2, body.clone(), 0.5)).unwrap();
    assert!(e.is_canonical(p1));
    // +0.1 priority is +0.4 score: below the additive margin of 0.5.
    let out = e.observe(with_priority(p2, body.clone(), 0.6)).unwrap();
    assert!(!out.is_canonical);
    assert_eq!(out.canonical.as_deref(), Some(p1));
    assert!(out.reason.contains("kept"), "{}", out.reason);
    // +0.5 priority is +2.0 score: beats +0.5 and x1.1.
    let out = e.observe(with_priority(p2, body, 1.0)).unwrap();
    assert!(out.is_canonical, "{}", out.reason);
    assert!(out.reason.contains("replaced"), "{}", out.reason);
    assert!(!e.is_canonical(p1));
}

#[test]
fn classes_keep_at_most_k_members() {
    let mut e = engine();
    let body = fixture("template-council.html");
    for i in 0..7 {
        let url = format!("https://gazette.example/council-{i}.html");
        e.observe(FetchedPage::html(&url, body.clone())).unwrap();
    }
    let classes = e.classes();
    assert_eq!(classes.len(), 1);
    assert_eq!(classes[0].members.len(), 4);
    let dropped = "https://gazette.example/council-6.html";
    assert!(!e.is_canonical(dropped));
    assert!(
        e.explain(dropped).contains("not kept"),
        "{}",
        e.explain(dropped)
    );
}

#[test]
fn content_change_moves_a_url_between_classes() {
    let mut e = engine();
    let (a, b) = ("https://gazette.example/x", "https://gazette.example/y");
    e.observe(FetchedPage::html(a, fixture("template-bakery.html")))
        .unwrap();
    e.observe(FetchedPage::html(b, fixture("template-bakery.html")))
        .unwrap();
    assert_eq!(e.classes().len(), 1);
    e.observe(FetchedPage::html(a, fixture("template-council.html")))
        .unwrap();
    assert!(e.classes().is_empty(), "{:#?}", e.classes());
    assert!(e.is_canonical(a) && e.is_canonical(b));
}

#[test]
fn state_saves_and_loads_as_plain_data() {
    let mut e = engine();
    e.observe(redirected(
        "https://gazette.example/old",
        &[("https://gazette.example/old", 301)],
        "https://gazette.example/new",
        fixture("news-article-a.html"),
    ))
    .unwrap();
    e.observe(FetchedPage::html(
        "https://gazette.example/copy",
        fixture("news-article-b.html"),
    ))
    .unwrap();
    e.observe_redirects(
        "http://loop.example/x",
        &[
            Hop {
                url: "http://loop.example/x".into(),
                status: 301,
            },
            Hop {
                url: "http://loop.example/y".into(),
                status: 301,
            },
        ],
        "http://loop.example/x",
    )
    .unwrap();
    let state = e.state();
    let json = serde_json::to_string(&state).unwrap();
    let loaded: DedupState = serde_json::from_str(&json).unwrap();
    let mut again = DedupEngine::from_state(DedupConfig::default(), loaded);
    assert_eq!(again.state(), state);
    assert_eq!(again.classes(), e.classes());
    assert_eq!(again.redirect_errors().len(), 1);
    // The rebuilt near index finds a third version of the article.
    let third = String::from_utf8(fixture("news-article-b.html"))
        .unwrap()
        .replace("07:40", "09:15");
    again
        .observe(FetchedPage::html("https://gazette.example/third", third))
        .unwrap();
    let near: Vec<_> = again
        .classes()
        .into_iter()
        .filter(|c| c.id.kind == ClassKind::Near)
        .collect();
    assert_eq!(near.len(), 1, "{near:#?}");
    assert_eq!(near[0].members.len(), 3, "{near:#?}");
    assert_eq!(
        again.rewrite_link("https://gazette.example/old").as_deref(),
        Some("https://gazette.example/new")
    );
}

#[test]
fn bad_input_is_an_error_or_data_never_a_panic() {
    let mut e = engine();
    assert!(
        e.observe(FetchedPage::html("not a url", "<p>x</p>"))
            .is_err()
    );
    let binary = FetchedPage {
        content_type: Some("image/png".into()),
        ..FetchedPage::html(
            "https://gazette.example/logo.png",
            vec![0x89, b'P', b'N', b'G', 0, 1],
        )
    };
    let out = e.observe(binary).unwrap();
    assert_eq!(out.simhash, 0);
    assert!(out.main_text.is_empty());
    let garbage = FetchedPage::html(
        "https://gazette.example/g",
        vec![0xff, 0xfe, 0x00, b'<', 0xc3],
    );
    assert!(e.observe(garbage).is_ok());
    assert_eq!(e.planner_weight("https://unknown.example/"), 1.0);
}

/// The demo's shape: a docs host and its mirror serve the same pages, each listed by its own
/// host's sitemap with the same priority, each linking to its own host's pages; the mirror's
/// URL is fetched first (so it starts as canonical). Pages of another host link to the docs
/// pages: the original must end up canonical, whatever the order of fetches.
#[test]
fn the_original_wins_over_its_mirror() {
    let article = |host: &str, n: usize| {
        // Three distinct guides (not near-duplicates of each other).
        let topics = [
            "Install the package from the archive, unpack it into the home folder and run \
             the setup script once as an administrator before the first start.",
            "Backups are taken every night at two; keep seven daily copies, four weekly ones \
             and restore them with the recover command when a disk fails.",
            "The proxy forwards requests by host name; add a route per upstream, set its \
             timeout in seconds and reload the configuration without a restart.",
        ];
        let paragraphs: String = (0..4)
            .map(|p| format!("<p>{} Step {p}.</p>", topics[n]))
            .collect();
        let links: String = (0..3)
            .map(|m| format!("<li><a href='http://{host}/guide/{m}'>Guide {m}</a></li>"))
            .collect();
        format!(
            "<html><head><title>Guide {n}</title></head><body><nav><a href='/'>{host}</a></nav>\
             <main><article><h1>Guide {n}</h1>{paragraphs}</article></main>\
             <aside><ul>{links}</ul></aside></body></html>"
        )
        .into_bytes()
    };
    let listed = |url: &str, body: Vec<u8>| with_priority(url, body, 0.6);
    for mirror_first in [true, false] {
        let mut e = engine();
        let fetch = |e: &mut DedupEngine, host: &str| {
            for n in 0..3 {
                e.observe(listed(
                    &format!("http://{host}/guide/{n}"),
                    article(host, n),
                ))
                .unwrap();
            }
        };
        let (first, second) = if mirror_first {
            ("mirror.freshet.test", "docs.freshet.test")
        } else {
            ("docs.freshet.test", "mirror.freshet.test")
        };
        fetch(&mut e, first);
        fetch(&mut e, second);
        // A news page links to one docs page (the rest of the web links to the original).
        let news: String = (0..3)
            .map(|n| format!("<a href='http://docs.freshet.test/guide/{n}'>docs</a> "))
            .collect();
        e.observe(FetchedPage::html(
            "http://news.freshet.test/today",
            format!(
                "<html><body><article><p>{}</p><p>{news}</p></article></body></html>",
                "Today the river rose and the council met to discuss the bridge. ".repeat(5)
            )
            .into_bytes(),
        ))
        .unwrap();
        for n in 0..3 {
            let docs = format!("http://docs.freshet.test/guide/{n}");
            let mirror = format!("http://mirror.freshet.test/guide/{n}");
            assert!(e.is_canonical(&docs), "{}", e.explain(&docs));
            assert!(!e.is_canonical(&mirror), "{}", e.explain(&mirror));
            assert_eq!(e.planner_weight(&mirror), e.config().duplicate_weight);
            assert!(
                e.explain(&docs).contains("(1 from other hosts)"),
                "{}",
                e.explain(&docs)
            );
        }
        // And after a save and load the decision and its evidence hold.
        let e2 = DedupEngine::from_state(DedupConfig::default(), e.state());
        assert!(e2.is_canonical("http://docs.freshet.test/guide/0"));
        assert_eq!(
            e2.score("http://docs.freshet.test/guide/0"),
            e.score("http://docs.freshet.test/guide/0")
        );
    }
}

#[test]
fn a_page_refetched_unchanged_after_its_sketch_was_dropped_is_found_again() {
    // Migration 0013 dropped every stored sketch: the engine loads a page without one, the
    // page is fetched again unchanged, and a near copy found later must still be matched to it.
    let a = "https://gazette.example/news/flood.html";
    let b = "https://gazette.example/news/flood-updated.html";
    let mut e = engine();
    e.observe(FetchedPage::html(a, fixture("news-article-a.html")))
        .unwrap();
    let mut state = e.state();
    for record in &mut state.urls {
        record.sketch = None;
    }
    let mut e = DedupEngine::from_state(DedupConfig::default(), state);
    e.observe(FetchedPage::html(a, fixture("news-article-a.html")))
        .unwrap();
    e.observe(FetchedPage::html(b, fixture("news-article-b.html")))
        .unwrap();
    let near: Vec<_> = e
        .classes()
        .into_iter()
        .filter(|c| c.id.kind == ClassKind::Near)
        .collect();
    assert_eq!(near.len(), 1, "{near:#?}");
    assert_eq!(near[0].members.len(), 2);
}

/// The `Content-Type` of [`FetchedPage::html`].
const HTML: Option<&str> = Some("text/html; charset=utf-8");

/// An article page whose text is `words`.
fn article(words: &str) -> Vec<u8> {
    let body = format!("{words} ").repeat(12);
    format!("<html><head><title>t</title></head><body><article><h1>Story</h1><p>{body}</p><p>{body}</p></article></body></html>")
        .into_bytes()
}

#[test]
fn a_page_is_filed_again_unextracted_only_while_the_engine_holds_what_it_was_filed_with() {
    let mut e = engine();
    let (page, source, target) = (
        "https://a.example/page",
        "https://a.example/old",
        "https://a.example/new",
    );
    let out = e
        .observe(FetchedPage::html(page, fixture("template-bakery.html")))
        .unwrap();
    assert!(
        e.can_refile_same_bytes(page, HTML, out.content_fp),
        "the copy just filed"
    );
    assert!(
        e.can_refile_same_bytes("https://A.example:443/page", HTML, out.content_fp),
        "by its normalised URL"
    );
    assert!(
        !e.can_refile_same_bytes(page, HTML, out.content_fp ^ 1),
        "another content"
    );
    assert!(
        !e.can_refile_same_bytes("https://a.example/never", HTML, out.content_fp),
        "a URL never filed"
    );
    assert!(
        !e.can_refile_same_bytes(page, Some("text/plain"), out.content_fp),
        "the same bytes served as another type are read otherwise"
    );
    let again = e
        .refile_same_bytes(page, HTML, out.content_fp, None)
        .unwrap();
    assert_eq!((again.url.as_str(), again.is_canonical), (page, true));
    assert_eq!(again.class, out.class);
    // A permanent redirect learned since: the page's links may now read otherwise.
    let moved = e
        .observe(redirected(
            source,
            &[(source, 301)],
            target,
            fixture("template-bakery.html"),
        ))
        .unwrap();
    assert!(!e.can_refile_same_bytes(page, HTML, out.content_fp));
    assert!(
        e.refile_same_bytes(page, HTML, out.content_fp, None)
            .is_none()
    );
    assert!(
        !e.can_refile_same_bytes(source, HTML, moved.content_fp),
        "a redirect's source"
    );
    // Filed whole again, it may be filed unextracted again.
    e.observe(FetchedPage::html(page, fixture("template-bakery.html")))
        .unwrap();
    assert!(e.can_refile_same_bytes(page, HTML, out.content_fp));
}

#[test]
fn a_page_filed_again_unextracted_takes_the_place_a_full_class_opened() {
    let mut e = engine();
    let max = DedupConfig::default().max_members;
    let urls: Vec<String> = (0..max + 2)
        .map(|i| format!("https://a.example/p{i}"))
        .collect();
    let mut fp = 0;
    for url in &urls {
        fp = e
            .observe(FetchedPage::html(url, article("coming soon to this shop")))
            .unwrap()
            .content_fp;
    }
    let left_out: Vec<&String> = urls.iter().filter(|u| !e.is_canonical(u)).collect();
    assert_eq!(left_out.len(), max + 1, "one canonical among them");
    // Every page but the last gets content of its own: the shared content's class is left to
    // the last, which was pushed out of it when it was full, or kept as its only member.
    for (i, url) in urls[..urls.len() - 1].iter().enumerate() {
        e.observe(FetchedPage::html(
            url,
            article(&format!("product {i} in stock now")),
        ))
        .unwrap();
    }
    let last = urls.last().unwrap();
    assert!(
        !e.is_canonical(last),
        "pushed out of the full class, it holds no place of its own yet"
    );
    let out = e
        .refile_same_bytes(last, HTML, fp, None)
        .expect("filed again");
    assert!(out.is_canonical, "{}", out.reason);
    assert!(e.is_canonical(last));
}
