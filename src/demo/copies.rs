//! The truth of every copy freshet holds, so that its own estimate of their age is judged on the
//! copies it estimates (pure).
//!
//! freshet judges each page URL it holds a copy of, weighted by its planner weight
//! ([`crate::scheduler::Freshness`]): the world's pages, but also a mirror's copies of them,
//! redirect sources and each host's home page. Judged against the world's pages alone (each
//! synchronised by a fetch of any URL serving it), the estimate was compared with something it
//! does not describe: a mirror's fetch counted as refreshing the original's copy, and copies
//! freshet rarely checks (a mirror's, a redirect source's) as not there at all.
//!
//! Here each URL is its own copy, as for freshet: its changes are those of the content it serves
//! (a page's, wherever served; the page a redirect leads to; none for a home page, which lists
//! pages that never change), it is synchronised by the requests for that very URL that served it
//! (a page answered 200 or 304, a redirect its 3xx, which freshet followed), and it weighs what
//! freshet weighs it. A URL that serves none of these (a feed, a robots.txt-disallowed page) is
//! not a copy.

use std::collections::HashMap;

use url::Url;

use super::server::RequestRecord;
use super::world::{Host, World};

/// Most redirects followed to find what a URL serves.
const MAX_HOPS: usize = 5;

/// One copy freshet holds, as the world knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct CopyTruth {
    /// Its URL.
    pub url: String,
    /// When what it serves changed, ascending.
    pub changes: Vec<i64>,
    /// When a request for it served it, ascending.
    pub syncs: Vec<i64>,
    /// freshet's weight for it.
    pub weight: f64,
}

/// What a path serves, as content.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Served {
    /// A page of the world (by index), directly or through `hops` redirects.
    Page { page: usize, hops: usize },
    /// The host's home page, which never changes.
    Home,
}

/// What `path` on `host` serves, following the host's redirects.
fn served(host: &Host, path: &str) -> Option<Served> {
    // In the server's order: a redirect first, then the home page, then a page.
    let mut path = path;
    for hops in 0..=MAX_HOPS {
        if let Some(redirect) = host.redirect_at(path) {
            path = &redirect.to;
            continue;
        }
        if path == "/" {
            return (hops == 0).then_some(Served::Home);
        }
        return host.page_at(path).map(|page| Served::Page { page, hops });
    }
    None
}

/// The copies behind `urls` (page URLs and freshet's weights), synchronised by the requests in
/// `log`; URLs that serve nothing of the world are left out.
pub fn copies(world: &World, log: &[RequestRecord], urls: &[(String, f64)]) -> Vec<CopyTruth> {
    let mut answers: HashMap<(&str, &str), Vec<(i64, u16)>> = HashMap::new();
    // A redirect's target fetched as the redirect's next hop refreshed the redirect source's
    // copy, not the target URL's own: per host, the redirect target its next hop is expected
    // at. The fetcher follows at once, but another request to the host (a sitemap's, robots')
    // may come between: the hop is the next request for that path, whenever it comes.
    let mut hop_to: HashMap<&str, &str> = HashMap::new();
    for record in log.iter().filter(|r| r.method == "GET") {
        let (host, path) = (record.host.as_str(), record.path.as_str());
        let is_hop = hop_to.get(host) == Some(&path);
        if is_hop {
            hop_to.remove(host);
        }
        if (300..400).contains(&record.status)
            && let Some((_, h)) = world.host(host)
            && let Some(redirect) = h.redirect_at(path)
        {
            hop_to.insert(host, redirect.to.as_str());
        }
        if is_hop {
            continue;
        }
        answers
            .entry((host, path))
            .or_default()
            .push((record.at_ms, record.status));
    }
    let mut out = Vec::new();
    for (url, weight) in urls {
        let Ok(parsed) = Url::parse(url) else {
            continue;
        };
        let Some(name) = parsed.host_str() else {
            continue;
        };
        let name = name.to_ascii_lowercase();
        let Some((_, host)) = world.host(&name) else {
            continue;
        };
        let path = parsed.path();
        let Some(what) = served(host, path) else {
            continue;
        };
        let (changes, redirected) = match what {
            Served::Page { page, hops } => (world.pages[page].changes.clone(), hops > 0),
            Served::Home => (Vec::new(), false),
        };
        let mut times: Vec<i64> = answers
            .get(&(name.as_str(), path))
            .into_iter()
            .flatten()
            .filter(|(_, status)| {
                if redirected {
                    (300..400).contains(status)
                } else {
                    matches!(status, 200 | 304)
                }
            })
            .map(|(at, _)| *at)
            .collect();
        times.sort_unstable();
        out.push(CopyTruth {
            url: url.clone(),
            changes,
            syncs: times,
            weight: *weight,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::world::{MIRROR_HOST, WorldConfig};

    #[test]
    fn each_url_is_its_own_copy_of_what_it_serves() {
        let world = World::generate(&WorldConfig::default());
        let news = &world.hosts[0];
        let docs = &world.hosts[2];
        let (first, second) = (news.pages[0], news.pages[1]);
        let doc = docs.pages[0];
        let (doc_path, second_path) = (&world.pages[doc].path, &world.pages[second].path);
        let first_path = &world.pages[first].path;
        let log = vec![
            RequestRecord::get(10, &docs.name, doc_path, 200),
            RequestRecord::get(20, MIRROR_HOST, doc_path, 200),
            RequestRecord::get(30, &docs.name, doc_path, 304),
            RequestRecord::get(40, &news.name, "/go/1", 302),
            RequestRecord::get(41, &news.name, second_path, 200),
            RequestRecord::get(42, &news.name, second_path, 304),
            RequestRecord::get(50, &news.name, "/old/front", 301),
            RequestRecord::get(51, &news.name, "/moved/front", 301),
            RequestRecord::get(52, &news.name, first_path, 200),
            RequestRecord::get(60, &news.name, "/", 200),
            RequestRecord::get(70, &news.name, "/feed.xml", 200),
            RequestRecord::get(80, &docs.name, doc_path, 503),
            RequestRecord {
                method: "HEAD".to_string(),
                ..RequestRecord::get(90, &docs.name, doc_path, 200)
            },
        ];
        let url = |host: &str, path: &str| (format!("http://{host}:8080{path}"), 1.0);
        let urls = vec![
            url(&docs.name, doc_path),
            url(MIRROR_HOST, doc_path),
            url(&news.name, "/go/1"),
            (url(&news.name, second_path).0, 0.5),
            url(&news.name, "/old/front"),
            url(&news.name, "/"),
            url(&news.name, "/feed.xml"),
            url(&news.name, "/nowhere"),
            url(&news.name, first_path),
        ];
        let copies = copies(&world, &log, &urls);
        let by_url = |i: usize| copies.iter().find(|c| c.url == urls[i].0);
        // The original and its mirror: the same changes, each synced by its own requests only.
        let original = by_url(0).expect("a page");
        assert_eq!(original.changes, world.pages[doc].changes);
        assert_eq!(original.syncs, vec![10, 30]);
        let mirror = by_url(1).expect("the mirror's copy");
        assert_eq!(mirror.changes, world.pages[doc].changes);
        assert_eq!(mirror.syncs, vec![20]);
        // A redirect source follows its target's changes, synced by its redirects; the target
        // by its own fetches only (not the redirect's next hop, at 41), at its own weight.
        let go = by_url(2).expect("a redirect source");
        assert_eq!(go.changes, world.pages[second].changes);
        assert_eq!(go.syncs, vec![40]);
        let target = by_url(3).expect("a page");
        assert_eq!((target.syncs.clone(), target.weight), (vec![42], 0.5));
        // Two hops lead to the first page.
        let old = by_url(4).expect("a redirect chain");
        assert_eq!(
            (old.changes.clone(), old.syncs.clone()),
            (world.pages[first].changes.clone(), vec![50])
        );
        // The home page never changes; a feed and a missing page are no copies.
        let home = by_url(5).expect("the home page");
        assert!(home.changes.is_empty());
        assert_eq!(home.syncs, vec![60]);
        // The first page was reached only as the chain's last hop: a copy with no sync.
        assert_eq!(by_url(8).expect("a page").syncs, Vec::<i64>::new());
        assert_eq!(copies.len(), 7);
    }
}
