//! `freshet inspect duplicates` at the library level: the fixtures group as the engine groups them,
//! and the distance and shingle options change the answer the way a user tuning them expects.

use freshet::dedup::inspect::{fingerprint_file, group, groups_json};

const FILES: [&str; 4] = [
    "news-article-a.html",
    "news-article-b.html",
    "template-bakery.html",
    "template-council.html",
];

fn fingerprints(shingle: usize) -> Vec<freshet::dedup::inspect::FileFingerprint> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/dedup/");
    FILES
        .iter()
        .map(|f| {
            let bytes = std::fs::read(format!("{dir}{f}")).unwrap();
            fingerprint_file(f, &bytes, shingle)
        })
        .collect()
}

#[test]
fn fixtures_give_one_group_the_two_article_versions() {
    let groups = group(&fingerprints(2), 3);
    let json = groups_json(&groups);
    assert_eq!(
        json["groups"],
        serde_json::json!([["news-article-a.html", "news-article-b.html"]])
    );
    let pair = &json["pairs"][0];
    assert_eq!(pair["a"], "news-article-a.html");
    assert_eq!(pair["b"], "news-article-b.html");
    let r = pair["resemblance"].as_f64().unwrap();
    assert!((0.5..1.0).contains(&r), "date lines differ, so not 1: {r}");
}

/// The simhash distance only widens the candidates: whatever it is, the versions (which
/// differ in their date line) are found through the LSH bands and verified, and distinct
/// pages of the template are never grouped.
#[test]
fn any_distance_groups_the_versions_and_keeps_distinct_pages_apart() {
    let files = fingerprints(2);
    for k in [0, 3, 12] {
        let groups = group(&files, k);
        assert_eq!(groups.len(), 1, "k = {k}: {groups:?}");
        assert_eq!(groups[0].files.len(), 2, "k = {k}: {groups:?}");
    }
}

#[test]
fn template_text_is_not_what_is_compared() {
    let files = fingerprints(2);
    // Main text only: the shared header, menu, sidebar and footer are not in the word counts.
    for f in &files {
        assert!(f.words < 600, "{} has {} words", f.name, f.words);
    }
    assert_ne!(files[2].content_fp, files[3].content_fp);
}
