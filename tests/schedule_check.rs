//! `freshet check` run as a user runs it: the built binary on the shipped examples and on good
//! and broken fixtures (tests/fixtures/schedule/).

use std::path::Path;
use std::process::{Command, Output};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Runs `freshet check ARGS` in the crate root; returns (exit code, stdout lines).
fn check(args: &[&str]) -> (i32, Vec<String>) {
    let Output { status, stdout, .. } = Command::new(env!("CARGO_BIN_EXE_freshet"))
        .arg("check")
        .args(args)
        .current_dir(ROOT)
        .output()
        .expect("run freshet");
    let lines = String::from_utf8(stdout)
        .expect("utf-8 output")
        .lines()
        .map(str::to_owned)
        .collect();
    (status.code().expect("exit code"), lines)
}

fn fixture(name: &str) -> String {
    format!("tests/fixtures/schedule/{name}")
}

#[test]
fn the_shipped_examples_pass_with_the_default_path() {
    assert!(Path::new(ROOT).join("schedules").is_dir());
    let (code, lines) = check(&[]);
    assert_eq!(lines, ["2 sites in 2 files OK"]);
    assert_eq!(code, 0);
}

#[test]
fn good_fixtures_pass() {
    let (code, lines) = check(&[&fixture("good")]);
    // Two of them share a host at different rates: valid, and said as a note.
    assert_eq!(
        lines,
        [
            "note: tests/fixtures/schedule/good/blog.toml:2: host_rate: sites `blog` (30/min), \
             `blog-archive` (1/s) share blog.example.net: one politeness gate serves it, at the \
             slowest of their rates (30/min) for all of them",
            "3 sites in 2 files OK"
        ]
    );
    assert_eq!(code, 0);
}

#[test]
fn verbose_lists_each_site_with_its_defaults() {
    let (code, lines) = check(&["--verbose", &fixture("good/blog.toml")]);
    assert_eq!(code, 0);
    assert_eq!(
        lines.len(),
        4,
        "two sites, the note of their shared host, the summary: {lines:#?}"
    );
    assert!(
        lines[0].starts_with("blog (tests/fixtures/schedule/good/blog.toml:2): 0 sitemaps, 1 feed")
    );
    assert!(
        lines[0].contains("10000 requests/day, host 30/min"),
        "{lines:#?}"
    );
    assert!(lines[1].starts_with("blog-archive ("), "{lines:#?}");
    assert!(lines[2].starts_with("note: "), "{lines:#?}");
    assert_eq!(lines[3], "2 sites in 1 file OK");
}

#[test]
fn broken_fixtures_report_every_problem_with_file_line_and_key() {
    let (code, lines) = check(&[&fixture("broken")]);
    assert_eq!(code, 1);
    let many = fixture("broken/many.toml");
    let expected = [
        format!("{many}:3: sitemaps: `ftp://"),
        format!("{many}:4: include: bad regex"),
        format!("{many}:5: weight: must be a number above zero"),
        format!("{many}:6: requests_per_day: must be a number above zero"),
        format!("{many}:7: host_rate: `fast` is not a rate"),
        format!("{many}:8: rediscover: cron expression `every six hours` has 3 fields"),
        format!("{many}:9: colour: unknown key"),
        format!("{many}:14: method: `post` is not a method"),
        format!("{many}:15: window: cron expression `0 1 * * 9`: day of week 9 is out of range"),
        format!("{many}:15: window: a window needs window_length"),
        format!("{}:2: TOML syntax", fixture("broken/syntax.toml")),
    ];
    assert_eq!(lines.len(), expected.len() + 1, "{lines:#?}");
    for (line, prefix) in lines.iter().zip(&expected) {
        assert!(
            line.starts_with(prefix.as_str()),
            "{line:?} should start with {prefix:?}"
        );
    }
    assert_eq!(lines.last().unwrap(), "11 problems in 2 files");
}

#[test]
fn a_duplicate_name_across_files_names_both_places() {
    let (code, lines) = check(&[&fixture("duplicate")]);
    assert_eq!(code, 1);
    assert_eq!(
        lines,
        [
            format!(
                "{}:4: name: site name `same` is already used at {}:2",
                fixture("duplicate/b.toml"),
                fixture("duplicate/a.toml")
            ),
            "1 problem in 1 file".to_owned(),
        ]
    );
}

#[test]
fn a_missing_path_is_a_problem() {
    let (code, lines) = check(&["tests/fixtures/schedule/no-such.toml"]);
    assert_eq!(code, 1);
    assert_eq!(
        lines[0],
        "tests/fixtures/schedule/no-such.toml: no such file or folder"
    );
}

#[test]
fn good_and_broken_together_fail() {
    let (code, lines) = check(&[&fixture("good"), &fixture("broken/syntax.toml")]);
    assert_eq!(code, 1);
    assert_eq!(lines.last().unwrap(), "1 problem in 1 file");
}
