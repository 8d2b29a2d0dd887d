//! What the demo's hosts serve, as text (pure): pages, robots.txt, sitemaps and feeds at a time t.
//!
//! Every body is a function of the [`World`], the host, the time and the base URL the client used
//! (`http://name:port`), so two requests at the same time get the same bytes and an ETag (a hash
//! of the body) is stable. Page bodies depend only on (page, version): a page "changes" exactly at
//! its change times. A mirror's pages have the same article as the original; only the header says
//! which host served them. A noise-only page (see [`super::world`]) also carries noise that
//! depends on the time: an "updated N minutes ago" line in its header, an ad block, a CSRF token
//! in its subscription form and a "readers online" counter in its footer, all outside its article,
//! where a main-text extractor leaves them.

use std::fmt::Write as _;
use std::io::Write as _;

use flate2::Compression;
use flate2::write::GzEncoder;

use super::world::{FeedFormat, Host, Page, World};
use crate::clock::ms_to_datetime;

/// Items a feed lists: the latest changes of the pages it announces.
pub const FEED_ITEMS: usize = 20;

const LOREM: [&str; 32] = [
    "the",
    "council",
    "announced",
    "a",
    "new",
    "plan",
    "for",
    "harbour",
    "repairs",
    "after",
    "storms",
    "residents",
    "gathered",
    "near",
    "old",
    "station",
    "market",
    "traders",
    "reported",
    "quiet",
    "week",
    "while",
    "volunteers",
    "cleared",
    "river",
    "paths",
    "library",
    "opened",
    "late",
    "evening",
    "ferry",
    "timetable",
];

/// The HTML of `page` as served by `host` at version `version`, at `now_ms` (which only a
/// noise-only page's noise depends on).
pub fn page_html(
    world: &World,
    host: &Host,
    base: &str,
    page: &Page,
    version: usize,
    now_ms: i64,
) -> String {
    let mut rng = SplitMix(page.id as u64 ^ ((version as u64) << 32) ^ 0x9e37_79b9);
    let updated = match version {
        0 => page.created_ms,
        v => page.changes[v - 1],
    };
    let mut html = String::with_capacity(4096);
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{title} | {host}</title></head>\n<body>\n<header><nav>\
         <a href=\"{base}/\">{host}</a> | <a href=\"{base}/feed.xml\">Feed</a>",
        title = page.title,
        host = host.name,
    );
    if let Some(private) = &host.private_path {
        let _ = write!(html, " | <a href=\"{base}{private}\">Drafts</a>");
    }
    if let Some(original) = host.mirror_of {
        let _ = write!(html, " | mirror of {}", world.hosts[original].name);
    }
    html.push_str("</nav>");
    let noise = page.noise_at(now_ms);
    if noise.is_some() {
        let minutes = (now_ms - updated).max(0) / 60_000;
        let _ = write!(html, "<p class=\"ago\">Updated {minutes} minutes ago</p>");
    }
    let _ = write!(
        html,
        "</header>\n<main><article>\n<h1>{}</h1>\n<p class=\"updated\">Version {version}, \
         updated {}</p>\n",
        page.title,
        ms_to_datetime(updated).format("%Y-%m-%d %H:%M UTC"),
    );
    for _ in 0..3 + rng.below(3) {
        html.push_str("<p>");
        let words = 40 + rng.below(40);
        for w in 0..words {
            if w > 0 {
                html.push(' ');
            }
            html.push_str(LOREM[rng.below(LOREM.len())]);
        }
        html.push_str(".</p>\n");
    }
    html.push_str("</article>\n<aside><h2>Related</h2><ul>\n");
    link_items(&mut html, world, base, &page.links);
    external_link(&mut html, world, host, base, page.id);
    html.push_str("</ul></aside>");
    if let Some(epoch) = noise {
        noise_blocks(&mut html, page, epoch);
    }
    let _ = write!(
        html,
        "</main>\n<footer><p>&copy; 2026 {} &middot; a freshet demo host</p>",
        host.name
    );
    if let Some(epoch) = noise {
        let mut rng = SplitMix(page.id as u64 ^ epoch.rotate_left(17) ^ 0xc0ffee);
        let _ = write!(html, "<p>{} readers online</p>", 50 + rng.below(950));
    }
    html.push_str("</footer>\n</body></html>\n");
    html
}

/// A noise-only page's ad block and subscription form (with its CSRF token) for noise `epoch`.
fn noise_blocks(html: &mut String, page: &Page, epoch: u64) {
    let mut rng = SplitMix(page.id as u64 ^ epoch.rotate_left(29) ^ 0xad5);
    html.push_str("\n<aside class=\"ad\"><p>Sponsored:");
    for _ in 0..8 {
        html.push(' ');
        html.push_str(LOREM[rng.below(LOREM.len())]);
    }
    let _ = write!(
        html,
        "</p></aside>\n<form action=\"/subscribe\" method=\"post\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{:016x}\">\
         <input type=\"email\" name=\"email\"><button>Subscribe</button></form>\n",
        rng.next()
    );
}

/// The home page of `host`: a link to every page it serves (stable: titles never change).
pub fn home_html(world: &World, host: &Host, base: &str) -> String {
    let mut html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{0}</title></head>\
         \n<body><h1>{0}</h1><ul>\n",
        host.name
    );
    link_items(&mut html, world, base, &host.pages);
    html.push_str("</ul></body></html>\n");
    html
}

/// Appends one `<li>` link per page to `html`.
fn link_items(html: &mut String, world: &World, base: &str, pages: &[usize]) {
    for &id in pages {
        let page = &world.pages[id];
        let _ = writeln!(
            html,
            "<li><a href=\"{base}{}\">{}</a></li>",
            page.path, page.title
        );
    }
}

/// On hosts other than the mirrored one and its mirror, a link to one page of the mirrored host
/// (its own URL, not the mirror's): the rest of the web links to the original, which is what
/// tells it from its mirror when choosing canonicals (`dedup::score`).
fn external_link(html: &mut String, world: &World, host: &Host, base: &str, page_id: usize) {
    let Some(original) = world.hosts.iter().find_map(|h| h.mirror_of) else {
        return;
    };
    let original = &world.hosts[original];
    if host.name == original.name || host.mirror_of.is_some() || original.pages.is_empty() {
        return;
    }
    let target = &world.pages[original.pages[page_id % original.pages.len()]];
    let original_base = base.replacen(&host.name, &original.name, 1);
    let _ = writeln!(
        html,
        "<li><a href=\"{original_base}{}\">{}</a></li>",
        target.path, target.title
    );
}

/// The page behind a robots.txt `Disallow`: it exists, but a polite client never sees it.
pub fn private_html(host: &Host) -> String {
    format!(
        "<!DOCTYPE html><html><head><title>Drafts</title></head><body><p>Private drafts of {}.\
         </p></body></html>\n",
        host.name
    )
}

/// robots.txt of `host`: a `Sitemap:` line always, `Disallow` and `Crawl-delay` where set.
pub fn robots_txt(host: &Host, base: &str) -> String {
    let mut text = String::from("User-agent: *\n");
    match host.disallowed_prefix() {
        Some(prefix) => {
            let _ = writeln!(text, "Disallow: {prefix}");
        }
        None => text.push_str("Disallow:\n"),
    }
    if let Some(delay) = host.crawl_delay_s {
        let _ = writeln!(text, "Crawl-delay: {delay}");
    }
    let _ = write!(text, "\nSitemap: {base}/sitemap.xml\n");
    text
}

/// The sitemap index at `/sitemap.xml`, pointing at the gzip child.
pub fn sitemap_index(base: &str, lastmod_ms: i64) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n\
         <sitemap><loc>{base}/sitemap-pages.xml.gz</loc><lastmod>{}</lastmod></sitemap>\n\
         </sitemapindex>\n",
        w3c(lastmod_ms)
    )
}

/// The urlset of `host` at `now_ms` (uncompressed): honest lastmod, or a stale one on the liar.
/// The private page is listed too: a sitemap may name what robots.txt forbids.
pub fn sitemap_urlset(world: &World, host: &Host, base: &str, now_ms: i64) -> String {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for &id in &host.pages {
        let page = &world.pages[id];
        let lastmod = if host.lies {
            // Stale: the first change ever, however often the page has changed since.
            page.changes
                .first()
                .copied()
                .filter(|&c| c <= now_ms)
                .unwrap_or(page.created_ms)
        } else {
            page.last_change_at(now_ms)
        };
        let _ = writeln!(
            xml,
            "<url><loc>{base}{}</loc><lastmod>{}</lastmod><changefreq>{}</changefreq>\
             <priority>{:.1}</priority></url>",
            page.path,
            w3c(lastmod),
            page.changefreq.as_str(),
            page.priority
        );
    }
    if let Some(private) = &host.private_path {
        let _ = writeln!(xml, "<url><loc>{base}{private}</loc></url>");
    }
    xml.push_str("</urlset>\n");
    xml
}

/// `text` gzip-compressed (a `.gz` sitemap child).
pub fn gzip(text: &str) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    // Writing into a Vec cannot fail.
    let _ = encoder.write_all(text.as_bytes());
    encoder.finish().unwrap_or_default()
}

/// The latest change of any page `host` serves, at or before `now_ms` (a sitemap's or feed's
/// honest Last-Modified).
pub fn latest_change(world: &World, host: &Host, now_ms: i64) -> i64 {
    host.pages
        .iter()
        .map(|&id| world.pages[id].last_change_at(now_ms))
        .max()
        .unwrap_or(world.config.origin_ms)
}

/// The feed of `host` at `now_ms`: the last [`FEED_ITEMS`] changes of its announced pages, newest
/// first, each with its exact change time.
pub fn feed_xml(world: &World, host: &Host, base: &str, now_ms: i64) -> String {
    let items = feed_items(world, host, now_ms);
    let updated = items.first().map_or(world.config.origin_ms, |i| i.0);
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    match host.feed {
        FeedFormat::Rss => {
            let _ = writeln!(
                xml,
                "<rss version=\"2.0\"><channel><title>{name}</title><link>{base}/</link>\
                 <description>Latest changes on {name}</description><lastBuildDate>{}</lastBuildDate>",
                http_date(updated),
                name = host.name
            );
            for (at, page, version) in &items {
                let _ = writeln!(
                    xml,
                    "<item><title>{}</title><link>{base}{}</link><guid isPermaLink=\"false\">\
                     {base}{}#v{version}</guid><pubDate>{}</pubDate></item>",
                    page.title,
                    page.path,
                    page.path,
                    http_date(*at)
                );
            }
            xml.push_str("</channel></rss>\n");
        }
        FeedFormat::Atom => {
            let _ = writeln!(
                xml,
                "<feed xmlns=\"http://www.w3.org/2005/Atom\"><title>{name}</title>\
                 <id>{base}/</id><link href=\"{base}/\"/><updated>{}</updated>",
                w3c(updated),
                name = host.name
            );
            for (at, page, version) in &items {
                let _ = writeln!(
                    xml,
                    "<entry><title>{}</title><link href=\"{base}{}\"/><id>{base}{}#v{version}</id>\
                     <updated>{}</updated></entry>",
                    page.title,
                    page.path,
                    page.path,
                    w3c(*at)
                );
            }
            xml.push_str("</feed>\n");
        }
    }
    xml
}

/// (change time, page, version it started) of the latest announced changes, newest first.
fn feed_items<'w>(world: &'w World, host: &Host, now_ms: i64) -> Vec<(i64, &'w Page, usize)> {
    let mut items: Vec<(i64, &Page, usize)> = Vec::new();
    for &id in &host.pages {
        let page = &world.pages[id];
        if !page.in_feed {
            continue;
        }
        let seen = page.version_at(now_ms);
        for v in seen.saturating_sub(FEED_ITEMS)..seen {
            items.push((page.changes[v], page, v + 1));
        }
    }
    items.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.id.cmp(&b.1.id)));
    items.truncate(FEED_ITEMS);
    items
}

/// An HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`).
pub fn http_date(ms: i64) -> String {
    ms_to_datetime(ms)
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string()
}

/// Parses an HTTP date to Unix milliseconds.
pub fn parse_http_date(text: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc2822(text.trim())
        .ok()
        .map(|d| d.timestamp_millis())
}

/// A W3C datetime (what sitemaps and Atom use), second precision, UTC.
fn w3c(ms: i64) -> String {
    crate::clock::ms_to_rfc3339(ms)
}

/// A tiny deterministic generator for page text (splitmix64): the body must be a pure function of
/// (page, version), independent of the world's generator.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::world::{MIRROR_HOST, WorldConfig};

    fn world() -> World {
        World::generate(&WorldConfig::default())
    }

    #[test]
    fn page_body_depends_on_version_only() {
        let w = world();
        let host = &w.hosts[0];
        let page = &w.pages[host.pages[0]];
        let a = page_html(&w, host, "http://x", page, 3, 0);
        assert_eq!(a, page_html(&w, host, "http://x", page, 3, 1_000_000));
        assert_ne!(a, page_html(&w, host, "http://x", page, 4, 0));
        assert!(a.contains("<h1>") && a.contains("<footer>") && a.contains("/private/drafts"));
    }

    #[test]
    fn noise_pages_change_their_bytes_but_not_their_content() {
        use crate::dedup::FetchedPage;
        use crate::dedup::content::{content_fp, extract_page};
        let w = world();
        let (_, live) = w.host(crate::demo::world::NOISE_HOST).unwrap();
        let page = live
            .pages
            .iter()
            .map(|&p| &w.pages[p])
            .find(|p| !p.changes.is_empty())
            .expect("a noise-only page with an edit");
        let period = page.noise_period_ms.expect("a noise-only page");
        let fp = |version: usize, at: i64| {
            let html = page_html(&w, live, "http://l", page, version, at);
            let fetched = FetchedPage::html(&format!("http://l{}", page.path), html.clone());
            let extracted = extract_page(&fetched, &Default::default());
            (html, content_fp(&extracted, &fetched.body))
        };
        let t = page.changes[0] + 1;
        let v = page.version_at(t);
        let (a, fa) = fp(v, t);
        let (b, fb) = fp(v, t + period);
        let (c, _) = fp(v, t + 60_000);
        assert!(a.contains("class=\"ad\"") && a.contains("csrf") && a.contains("minutes ago"));
        assert!(a != b && a != c, "the noise changes the bytes");
        assert_eq!(fa, fb, "but not the main content");
        let (_, fc) = fp(v - 1, t);
        assert_ne!(fa, fc, "a new version changes the content");
        // Pages of other hosts carry no noise.
        assert!(
            w.hosts[0]
                .pages
                .iter()
                .all(|&p| w.pages[p].noise_at(t).is_none())
        );
    }

    #[test]
    fn mirror_article_equals_original() {
        let w = world();
        let (_, mirror) = w.host(MIRROR_HOST).unwrap();
        let (_, docs) = w.host("docs.freshet.test").unwrap();
        let page = &w.pages[docs.pages[0]];
        let article = |html: String| {
            let start = html.find("<article>").unwrap();
            let end = html.find("</article>").unwrap();
            html[start..end].to_string()
        };
        let m = page_html(&w, mirror, "http://m", page, 2, 0);
        let d = page_html(&w, docs, "http://d", page, 2, 0);
        assert_ne!(m, d);
        assert_eq!(article(m), article(d));
    }

    /// Other hosts link to the original docs pages, never to the mirror: what tells the
    /// original from its mirror when canonicals are chosen.
    #[test]
    fn other_hosts_link_to_the_original_not_the_mirror() {
        let w = world();
        let news = &w.hosts[0];
        let html = page_html(
            &w,
            news,
            "http://news.freshet.test:9",
            &w.pages[news.pages[0]],
            1,
            0,
        );
        assert!(
            html.contains("href=\"http://docs.freshet.test:9/"),
            "{html}"
        );
        assert!(!html.contains("mirror.freshet.test"));
        for name in ["docs.freshet.test", MIRROR_HOST] {
            let (_, host) = w.host(name).unwrap();
            let base = format!("http://{name}:9");
            let html = page_html(&w, host, &base, &w.pages[host.pages[0]], 1, 0);
            let other = if name == MIRROR_HOST {
                "docs.freshet.test"
            } else {
                MIRROR_HOST
            };
            assert!(
                !html.contains(&format!("href=\"http://{other}")),
                "{name}: {html}"
            );
        }
    }

    #[test]
    fn robots_of_news_disallows_private_with_delay() {
        let w = world();
        let text = robots_txt(&w.hosts[0], "http://news.freshet.test:1");
        assert!(text.contains("Disallow: /private/\n"));
        assert!(text.contains("Crawl-delay: 120\n"));
        assert!(text.contains("Sitemap: http://news.freshet.test:1/sitemap.xml"));
        assert!(robots_txt(&w.hosts[1], "http://b").contains("Disallow:\n"));
    }

    #[test]
    fn feed_lists_latest_announced_changes_newest_first() {
        let w = world();
        let host = &w.hosts[0];
        let now = w.config.origin_ms;
        let items = feed_items(&w, host, now);
        assert_eq!(items.len(), FEED_ITEMS);
        assert!(items.windows(2).all(|p| p[0].0 >= p[1].0));
        assert!(
            items
                .iter()
                .all(|(t, p, v)| *t <= now && p.in_feed && p.changes[v - 1] == *t)
        );
        let newest = host
            .pages
            .iter()
            .map(|&id| &w.pages[id])
            .filter(|p| p.in_feed)
            .map(|p| p.last_change_at(now))
            .max()
            .unwrap();
        assert_eq!(items[0].0, newest);
        assert!(feed_xml(&w, host, "http://n", now).contains("<pubDate>"));
        assert!(feed_xml(&w, &w.hosts[1], "http://b", now).contains("<updated>"));
    }

    #[test]
    fn liar_sitemap_lastmod_is_stale() {
        let w = world();
        let (_, shop) = w.host("shop.freshet.test").unwrap();
        let now = w.config.origin_ms;
        let xml = sitemap_urlset(&w, shop, "http://s", now);
        let page = shop
            .pages
            .iter()
            .map(|&id| &w.pages[id])
            .find(|p| p.version_at(now) > 1)
            .unwrap();
        assert!(!xml.contains(&w3c(page.last_change_at(now))));
        assert!(xml.contains(&w3c(page.changes[0])));
    }

    #[test]
    fn http_dates_round_trip() {
        let ms = 1_767_225_600_000;
        assert_eq!(http_date(ms), "Thu, 01 Jan 2026 00:00:00 GMT");
        assert_eq!(parse_http_date(&http_date(ms)), Some(ms));
        assert_eq!(parse_http_date("yesterday"), None);
    }
}
