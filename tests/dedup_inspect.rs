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
    assert_eq!(
        groups_json(&groups),
        serde_json::json!({"groups": [["news-article-a.html", "news-article-b.html"]]})
    );
    assert!(groups[0].max_distance <= 3);
}

#[test]
fn distance_zero_separates_the_versions_and_a_looser_one_keeps_distinct_pages_apart() {
    let files = fingerprints(2);
    assert!(group(&files, 0).is_empty(), "the date lines differ");
    let loose = group(&files, 12);
    assert_eq!(loose.len(), 1, "{loose:?}");
    assert_eq!(loose[0].files.len(), 2);
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
