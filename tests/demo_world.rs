//! The demo world over real HTTP on loopback: routing by Host, validators and 304, pages changing
//! at their change times on the clock, the gzip sitemap, the feed, redirects, the lying host, and
//! the request log. Time is a hand-set clock, so nothing here depends on how fast the machine is.

use std::io::Read;
use std::sync::Arc;

use freshet::clock::{MS_PER_DAY, ManualClock, SharedClock};
use freshet::demo::outcome::{self, Judge};
use freshet::demo::render::{FEED_ITEMS, http_date};
use freshet::demo::{DemoServer, World, WorldConfig, truth};
use reqwest::StatusCode;
use reqwest::header::{ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED, LOCATION};

struct Setup {
    world: Arc<World>,
    clock: Arc<ManualClock>,
    server: DemoServer,
    client: reqwest::Client,
}

impl Setup {
    async fn new() -> Setup {
        let world = Arc::new(World::generate(&WorldConfig::default()));
        let clock = Arc::new(ManualClock::new(world.config.origin_ms));
        let shared: SharedClock = clock.clone();
        let server = freshet::demo::start(world.clone(), shared).await.unwrap();
        let mut builder = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none());
        for (host, addr) in server.resolve() {
            builder = builder.resolve(&host, addr);
        }
        let client = builder.build().unwrap();
        Setup {
            world,
            clock,
            server,
            client,
        }
    }

    fn url(&self, host: &str, path: &str) -> String {
        format!("{}{path}", self.server.base_url(host))
    }

    async fn get(&self, host: &str, path: &str) -> reqwest::Response {
        self.client.get(self.url(host, path)).send().await.unwrap()
    }

    fn set_time(&self, ms: i64) {
        self.clock.set(ms);
    }
}

fn header(resp: &reqwest::Response, name: reqwest::header::HeaderName) -> String {
    resp.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn answers_per_host_header() {
    let s = Setup::new().await;
    assert!(s.server.addr.ip().is_loopback());
    let news = s
        .get("news.freshet.test", "/robots.txt")
        .await
        .text()
        .await
        .unwrap();
    assert!(news.contains("Disallow: /private/"));
    assert!(news.contains("Crawl-delay: 120"));
    assert!(news.contains(&format!(
        "Sitemap: {}",
        s.url("news.freshet.test", "/sitemap.xml")
    )));
    let blog = s
        .get("blog.freshet.test", "/robots.txt")
        .await
        .text()
        .await
        .unwrap();
    assert!(!blog.contains("Crawl-delay"));
    let (_, host) = s.world.host("blog.freshet.test").unwrap();
    let path = &s.world.pages[host.pages[0]].path;
    assert_eq!(s.get("blog.freshet.test", path).await.status(), 200);
    assert_eq!(s.get("news.freshet.test", path).await.status(), 404);

    let unknown = reqwest::Client::builder()
        .no_proxy()
        .resolve("nowhere.test", s.server.addr)
        .build()
        .unwrap();
    let url = format!("http://nowhere.test:{}/", s.server.addr.port());
    assert_eq!(unknown.get(url).send().await.unwrap().status(), 404);
}

#[tokio::test]
async fn conditional_requests_and_changes_on_the_clock() {
    let s = Setup::new().await;
    let (_, host) = s.world.host("news.freshet.test").unwrap();
    let origin = s.world.config.origin_ms;
    let page = host
        .pages
        .iter()
        .map(|&id| &s.world.pages[id])
        .find(|p| p.changes.iter().any(|&c| c > origin + 1000))
        .unwrap();
    let next = *page.changes.iter().find(|&&c| c > origin + 1000).unwrap();

    s.set_time(next - 1);
    let first = s.get("news.freshet.test", &page.path).await;
    assert_eq!(first.status(), 200);
    let etag = header(&first, ETAG);
    let last_modified = header(&first, LAST_MODIFIED);
    assert_eq!(last_modified, http_date(page.last_change_at(next - 1)));
    let before = first.text().await.unwrap();

    let url = s.url("news.freshet.test", &page.path);
    let by_etag = s.client.get(&url).header(IF_NONE_MATCH, &etag).send();
    assert_eq!(by_etag.await.unwrap().status(), StatusCode::NOT_MODIFIED);
    let by_date = s.client.get(&url).header(IF_MODIFIED_SINCE, &last_modified);
    let by_date = by_date.send().await.unwrap();
    assert_eq!(by_date.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(header(&by_date, ETAG), etag);

    // The change time passes on the clock: the same validators now get the new version.
    s.set_time(next);
    let changed = s.client.get(&url).header(IF_NONE_MATCH, &etag).send();
    let changed = changed.await.unwrap();
    assert_eq!(changed.status(), 200);
    assert_ne!(header(&changed, ETAG), etag);
    assert_eq!(header(&changed, LAST_MODIFIED), http_date(next));
    assert_ne!(changed.text().await.unwrap(), before);
    let by_date = s.client.get(&url).header(IF_MODIFIED_SINCE, &last_modified);
    assert_eq!(by_date.send().await.unwrap().status(), 200);

    let head = s.client.head(&url).send().await.unwrap();
    assert_eq!(head.status(), 200);
    assert!(!header(&head, ETAG).is_empty());
    assert!(head.bytes().await.unwrap().is_empty());
}

#[tokio::test]
async fn the_liar_says_now_and_ignores_if_modified_since() {
    let s = Setup::new().await;
    let (_, shop) = s.world.host("shop.freshet.test").unwrap();
    let path = &s.world.pages[shop.pages[0]].path;
    let now = s.world.config.origin_ms + 5_000_000;
    s.set_time(now);
    let resp = s.get("shop.freshet.test", path).await;
    assert_eq!(header(&resp, LAST_MODIFIED), http_date(now));
    let etag = header(&resp, ETAG);
    let url = s.url("shop.freshet.test", path);
    let since = s.client.get(&url).header(IF_MODIFIED_SINCE, http_date(now));
    assert_eq!(since.send().await.unwrap().status(), 200);
    let by_etag = s.client.get(&url).header(IF_NONE_MATCH, etag);
    assert_eq!(by_etag.send().await.unwrap().status(), 304);
}

#[tokio::test]
async fn sitemap_index_points_at_a_gzip_urlset() {
    let s = Setup::new().await;
    let index = s
        .get("news.freshet.test", "/sitemap.xml")
        .await
        .text()
        .await
        .unwrap();
    let child = s.url("news.freshet.test", "/sitemap-pages.xml.gz");
    assert!(index.contains("<sitemapindex") && index.contains(&child));

    let gz = s
        .client
        .get(&child)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let mut xml = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut xml)
        .expect("gzip decompresses");
    let locs = locs(&xml);
    let (_, news) = s.world.host("news.freshet.test").unwrap();
    assert_eq!(
        locs.len(),
        news.pages.len() + 1,
        "pages and the private one"
    );
    let first = &s.world.pages[news.pages[0]];
    assert_eq!(locs[0], s.url("news.freshet.test", &first.path));
    assert!(locs.contains(&s.url("news.freshet.test", "/private/drafts")));
    let lastmod = freshet::clock::ms_to_rfc3339(first.last_change_at(s.world.config.origin_ms));
    assert!(xml.contains(&format!("<lastmod>{lastmod}</lastmod>")));
}

/// The `<loc>` texts of a urlset, read with quick-xml (so the XML must be well formed).
fn locs(xml: &str) -> Vec<String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(xml);
    let (mut out, mut in_loc) = (Vec::new(), false);
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(e) => in_loc = e.local_name().as_ref() == "loc",
            Event::Text(t) if in_loc => out.push(t.into_inner().into_owned()),
            Event::End(_) => in_loc = false,
            Event::Eof => return out,
            _ => {}
        }
    }
}

#[tokio::test]
async fn feeds_announce_exact_change_times() {
    let s = Setup::new().await;
    let now = s.world.config.origin_ms + (MS_PER_DAY as i64) / 2;
    s.set_time(now);
    for name in ["news.freshet.test", "blog.freshet.test"] {
        let body = s.get(name, "/feed.xml").await.bytes().await.unwrap();
        let feed = feed_rs::parser::parse(&body[..]).expect("feed parses");
        assert_eq!(feed.entries.len(), FEED_ITEMS, "{name}");
        for entry in &feed.entries {
            let link = &entry.links[0].href;
            let page = &s.world.pages[s.world.page_for_url(link).expect("a page URL")];
            let at = entry
                .published
                .or(entry.updated)
                .unwrap()
                .timestamp_millis();
            assert!(page.in_feed && at <= now);
            assert!(page.changes.contains(&at), "{link} at {at}");
        }
    }
}

#[tokio::test]
async fn redirects_chain_and_converge() {
    let s = Setup::new().await;
    let (_, news) = s.world.host("news.freshet.test").unwrap();
    let first = s.url("news.freshet.test", &s.world.pages[news.pages[0]].path);
    let second = s.url("news.freshet.test", &s.world.pages[news.pages[1]].path);
    let hop = s.get("news.freshet.test", "/old/front").await;
    assert_eq!(hop.status(), 301);
    assert_eq!(
        header(&hop, LOCATION),
        s.url("news.freshet.test", "/moved/front")
    );
    let hop = s.get("news.freshet.test", "/moved/front").await;
    assert_eq!(hop.status(), 301);
    assert_eq!(header(&hop, LOCATION), first);
    for path in ["/go/1", "/go/2"] {
        let hop = s.get("news.freshet.test", path).await;
        assert_eq!(hop.status(), 302);
        assert_eq!(header(&hop, LOCATION), second);
    }
}

#[tokio::test]
async fn mirror_serves_the_same_article() {
    let s = Setup::new().await;
    let (_, docs) = s.world.host("docs.freshet.test").unwrap();
    let path = &s.world.pages[docs.pages[2]].path;
    let a = s.get("docs.freshet.test", path).await.text().await.unwrap();
    let b = s
        .get("mirror.freshet.test", path)
        .await
        .text()
        .await
        .unwrap();
    let article = |html: &str| {
        html[html.find("<article>").unwrap()..html.find("</article>").unwrap()].to_string()
    };
    assert_ne!(a, b);
    assert_eq!(article(&a), article(&b));
}

#[tokio::test]
async fn the_log_sees_every_request_and_judges_fetches() {
    let s = Setup::new().await;
    let origin = s.world.config.origin_ms;
    let day = MS_PER_DAY as i64;
    let (_, blog) = s.world.host("blog.freshet.test").unwrap();
    for t in [origin + day / 4, origin + day] {
        s.set_time(t);
        for &id in &blog.pages {
            let resp = s.get("blog.freshet.test", &s.world.pages[id].path).await;
            assert_eq!(resp.status(), 200);
        }
    }
    s.set_time(origin + day + 5);
    assert_eq!(
        s.get("news.freshet.test", "/private/drafts").await.status(),
        200
    );

    let log = s.server.log.snapshot();
    assert_eq!(log.len(), 2 * blog.pages.len() + 1);
    let last = log.last().unwrap();
    assert_eq!(
        (
            last.at_ms,
            last.host.as_str(),
            last.path.as_str(),
            last.method.as_str(),
            last.status
        ),
        (
            origin + day + 5,
            "news.freshet.test",
            "/private/drafts",
            "GET",
            200
        )
    );

    let judge = Judge {
        from_ms: origin,
        to_ms: origin + 2 * day,
        seed: 3,
        budget_per_day: 50.0,
        host_interval_ms: 1000,
        gap_tolerance_ms: 0,
    };
    let result = outcome::evaluate(&s.world, &log, &judge);
    assert_eq!(result.politeness.disallowed_requests, 1);
    let row = result
        .sites
        .iter()
        .find(|r| r.site == "blog.freshet.test")
        .unwrap();
    assert_eq!(row.page_syncs, 2 * blog.pages.len() as u64);
    let expected: f64 = blog
        .pages
        .iter()
        .map(|&id| {
            let syncs = [origin + day / 4, origin + day];
            truth::mean_age_days(&s.world.pages[id].changes, &syncs, origin, origin + 2 * day)
        })
        .sum::<f64>()
        / blog.pages.len() as f64;
    assert!((row.true_mean_age_days - expected).abs() < 1e-12);
    assert!(row.true_mean_age_days > 0.0);
}
