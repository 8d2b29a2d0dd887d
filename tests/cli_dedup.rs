//! The built binary on a database written through the store's API (no network): `freshet export
//! warc` read back record by record, `freshet report duplicates` as CSV and table, and `freshet
//! explain` for a page, a URL only the dedup engine knows, and an unknown URL.

use std::collections::HashMap;
use std::path::Path;
use std::process::Output;

use freshet::dedup::{DedupConfig, DedupEngine, FetchedPage, Hop};
use freshet::store::Store;
use freshet::store::dedup::DedupWrite;
use freshet::store::discovered::Discovered;
use freshet::store::documents::DocumentWrite;
use freshet::store::sites::SiteRecord;

const PRIMARY: &str = "https://www.gazette.example/pages/bakery";
const MIRROR: &str = "http://mirror.gazette.example/pages/bakery";
const COUNCIL: &str = "https://www.gazette.example/pages/council";

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/dedup/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

async fn freshet(args: &[&str]) -> Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_freshet"))
        .args(args)
        .output()
        .await
        .expect("run the freshet binary")
}

/// A database with two sites' worth of pages filed by the engine as the refresher would.
async fn build_db(db: &Path) {
    let store = Store::open(db).await.unwrap();
    let site = SiteRecord {
        name: "gazette",
        weight: 1.0,
        requests_per_day: 100.0,
        source_file: None,
    };
    let site_id = store.upsert_site(&site, 0).await.unwrap();
    let mut found = Vec::new();
    for url in [PRIMARY, MIRROR, COUNCIL] {
        let origin = url::Url::parse(url).unwrap().origin().ascii_serialization();
        found.push(Discovered {
            url: url.to_string(),
            site_id,
            host_id: store.host_id(&origin).await.unwrap(),
            kind: "page",
            discovered_from: Some("seed".into()),
            lastmod_ms: None,
            lastmod_believed: true,
            changefreq: None,
            priority: None,
        });
    }
    store.upsert_discovered(&found, 1_000).await.unwrap();

    let mut engine = DedupEngine::new(DedupConfig::default());
    let pages = [
        (MIRROR, "template-bakery.html"),
        (PRIMARY, "template-bakery.html"),
        (COUNCIL, "template-council.html"),
    ];
    for (i, (url, file)) in pages.into_iter().enumerate() {
        let body = fixture(file);
        let out = engine
            .observe(FetchedPage::html(url, body.clone()))
            .unwrap();
        let document = out.is_canonical.then(|| {
            DocumentWrite::new(
                out.url.clone(),
                2_000 + i as i64,
                Some("text/html; charset=utf-8".into()),
                out.content_fp,
                &body,
            )
            .unwrap()
        });
        let changes = engine.take_changes();
        let weights = changes
            .touched
            .iter()
            .map(|u| (u.clone(), engine.planner_weight(u)))
            .collect();
        let drop_documents = changes
            .touched
            .iter()
            .filter(|u| !engine.is_canonical(u))
            .cloned()
            .collect();
        let write = DedupWrite {
            changes,
            weights,
            document,
            drop_documents,
        };
        store
            .save_dedup(std::sync::Arc::new(write), 2_000)
            .await
            .unwrap();
    }
    let cycle: Vec<Hop> = [
        "https://www.gazette.example/x",
        "https://www.gazette.example/y",
    ]
    .iter()
    .map(|u| Hop {
        url: u.to_string(),
        status: 301,
    })
    .collect();
    engine
        .observe_redirects(&cycle[0].url, &cycle, &cycle[0].url)
        .unwrap();
    let write = DedupWrite {
        changes: engine.take_changes(),
        ..Default::default()
    };
    store
        .save_dedup(std::sync::Arc::new(write), 3_000)
        .await
        .unwrap();
    store.close().await;
}

/// One parsed WARC record: its named fields and its block.
struct Record {
    fields: HashMap<String, String>,
    block: Vec<u8>,
}

fn parse_warc(mut data: &[u8]) -> Vec<Record> {
    let mut records = Vec::new();
    while !data.is_empty() {
        let end = data
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("end of the record's header");
        let head = std::str::from_utf8(&data[..end]).expect("UTF-8 header");
        let mut lines = head.split("\r\n");
        assert_eq!(lines.next(), Some("WARC/1.1"));
        let fields: HashMap<String, String> = lines
            .map(|l| {
                let (k, v) = l.split_once(": ").expect("name: value");
                (k.to_string(), v.to_string())
            })
            .collect();
        let length: usize = fields["Content-Length"].parse().unwrap();
        let block = data[end + 4..end + 4 + length].to_vec();
        assert_eq!(&data[end + 4 + length..end + 8 + length], b"\r\n\r\n");
        data = &data[end + 8 + length..];
        records.push(Record { fields, block });
    }
    records
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_warc_report_duplicates_and_explain() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    build_db(&db).await;
    let db_arg = db.display().to_string();

    let warc = dir.path().join("out.warc");
    let out = freshet(&[
        "export",
        "warc",
        "--out",
        warc.to_str().unwrap(),
        "--db",
        &db_arg,
    ])
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let records = parse_warc(&std::fs::read(&warc).unwrap());
    assert_eq!(records.len(), 3, "warcinfo + the two canonical pages");
    assert_eq!(records[0].fields["WARC-Type"], "warcinfo");
    assert!(String::from_utf8_lossy(&records[0].block).contains("software: freshet/"));
    let info_id = &records[0].fields["WARC-Record-ID"];
    let mut targets = Vec::new();
    for r in &records[1..] {
        assert_eq!(r.fields["WARC-Type"], "response");
        assert_eq!(
            r.fields["Content-Type"],
            "application/http;msgtype=response"
        );
        assert_eq!(&r.fields["WARC-Warcinfo-ID"], info_id);
        let id = &r.fields["WARC-Record-ID"];
        assert!(
            id.starts_with("<urn:uuid:") && id.ends_with('>') && id.len() == 47,
            "{id}"
        );
        assert_ne!(id, info_id);
        assert!(r.fields["WARC-Date"].starts_with("1970-01-01T00:00:02"));
        let split = r.block.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let http = std::str::from_utf8(&r.block[..split]).unwrap();
        assert!(http.starts_with("HTTP/1.1 200 OK\r\n"), "{http}");
        assert!(http.contains("Content-Type: text/html; charset=utf-8"));
        let body = &r.block[split + 4..];
        assert!(http.contains(&format!("Content-Length: {}", body.len())));
        let target = r.fields["WARC-Target-URI"].clone();
        let file = if target == PRIMARY {
            "template-bakery.html"
        } else {
            "template-council.html"
        };
        assert_eq!(body, fixture(file).as_slice(), "{target}");
        targets.push(target);
    }
    targets.sort();
    assert_eq!(targets, vec![PRIMARY.to_string(), COUNCIL.to_string()]);

    let out = freshet(&["report", "duplicates", "--db", &db_arg, "--format", "csv"]).await;
    assert!(out.status.success());
    let csv = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "kind,canonical,size,members");
    assert_eq!(lines[1], format!("content,{PRIMARY},2,{PRIMARY} {MIRROR}"));
    // The permanent redirect x -> y: y is canonical, x its member.
    assert_eq!(
        lines[2],
        "permanent-redirect,https://www.gazette.example/y,2,\
         https://www.gazette.example/y https://www.gazette.example/x",
        "{csv}"
    );
    assert!(lines[3].starts_with("redirect-cycle,,3,"), "{csv}");
    assert_eq!(lines.len(), 4, "{csv}");
    let out = freshet(&["report", "duplicates", "--db", &db_arg]).await;
    assert!(String::from_utf8_lossy(&out.stdout).contains("redirect-cycle"));

    let out = freshet(&["explain", MIRROR, "--db", &db_arg]).await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(
        text.contains("site gazette") && text.contains("is not canonical"),
        "{text}"
    );
    assert!(text.contains("weight 0.1"), "{text}");
    let out = freshet(&["explain", "https://www.gazette.example/x", "--db", &db_arg]).await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("known only to the dedup engine"), "{text}");
    assert!(
        text.contains("permanently redirects to https://www.gazette.example/y"),
        "{text}"
    );
    let out = freshet(&["explain", "https://unknown.example/", "--db", &db_arg]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not know"));

    let missing = dir.path().join("missing.db").display().to_string();
    let out = freshet(&[
        "export",
        "warc",
        "--out",
        warc.to_str().unwrap(),
        "--db",
        &missing,
    ])
    .await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no database"));
}

/// `--out` naming the database (by its path, through a symlink) or any SQLite database is
/// refused before anything is written: both commands once replaced the database with their
/// output and reported success.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_output_over_a_database_is_refused_and_the_database_kept() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    build_db(&db).await;
    let other = dir.path().join("other.db");
    std::fs::copy(&db, &other).unwrap();
    let link = dir.path().join("link.db");
    std::os::unix::fs::symlink(&db, &link).unwrap();
    let before = std::fs::read(&db).unwrap();
    let db_arg = db.display().to_string();
    let wal = dir.path().join("f.db-wal");
    for (out, says) in [
        (&db, "is the database"),
        (&link, "is the database"),
        (&wal, "is the database"),
        (&other, "is a SQLite database"),
    ] {
        let out_arg = out.display().to_string();
        for command in [
            &["export", "warc", "--out", &out_arg, "--db", &db_arg][..],
            &["report", "html", "--out", &out_arg, "--db", &db_arg][..],
        ] {
            let output = freshet(command).await;
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(2), "{command:?}: {stderr}");
            assert!(stderr.contains(says), "{command:?}: {stderr}");
        }
    }
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "the database is as it was"
    );
    let store = Store::open_existing(&db).await.unwrap();
    assert!(!store.documents().await.unwrap().is_empty());
    store.close().await;
    // Standard output (a pipe here) is written, not first read from: that waited forever.
    let piped = freshet(&["export", "warc", "--out", "/dev/stdout", "--db", &db_arg]).await;
    assert!(
        piped.status.success(),
        "{}",
        String::from_utf8_lossy(&piped.stderr)
    );
    assert!(
        piped.stdout.starts_with(b"WARC/1.1"),
        "a WARC on standard output"
    );
    assert_eq!(parse_warc(&piped.stdout).len(), 3, "the WARC alone");
}
