//! Tests of reading and validating schedule files: one per rule, plus the design's example.

use std::path::Path;
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::*;

const DESIGN_EXAMPLE: &str = r#"
[[site]]
name = "example-news"
sitemaps = ["https://example.com/sitemap.xml"]   # robots.txt Sitemap: lines are found too
feeds = ["https://example.com/rss"]
include = ['^https://example\.com/news/']
exclude = ['\?replytocom=']
weight = 1.0                        # importance relative to other sites
requests_per_day = 50000            # this site's share of the fetch budget
host_rate = "1/s"                   # politeness: at most one request per second per host
rediscover = "0 0 */6 * * *"        # re-read sitemaps every six hours
"#;

fn at(text: &str) -> DateTime<Utc> {
    text.parse().unwrap()
}

fn one_site(text: &str) -> Site {
    let mut sites = parse_str(Path::new("t.toml"), text).unwrap_or_else(|errors| {
        panic!("unexpected problems: {errors:#?}");
    });
    assert_eq!(sites.len(), 1);
    sites.remove(0)
}

fn problems(text: &str) -> Vec<ScheduleError> {
    match parse_str(Path::new("t.toml"), text) {
        Ok(sites) => panic!("expected problems, got {} sites", sites.len()),
        Err(errors) => errors,
    }
}

/// The single problem of `text`, as `line: key: message`, for compact asserts.
fn only_problem(text: &str) -> ScheduleError {
    let mut all = problems(text);
    assert_eq!(all.len(), 1, "expected one problem: {all:#?}");
    all.remove(0)
}

/// A valid site with `extra` lines appended (the extra lines start at line 4).
fn site_with(extra: &str) -> String {
    format!("[[site]]\nname = \"s\"\nseeds = [\"https://example.org/\"]\n{extra}\n")
}

#[test]
fn the_design_example_is_valid_and_means_what_it_says() {
    let site = one_site(DESIGN_EXAMPLE);
    assert_eq!(site.name, "example-news");
    assert_eq!(site.sitemaps[0].as_str(), "https://example.com/sitemap.xml");
    assert_eq!(site.feeds[0].as_str(), "https://example.com/rss");
    assert_eq!(site.weight, 1.0);
    assert_eq!(site.requests_per_day, 50_000.0);
    assert_eq!(site.host_rate.min_interval(), Duration::from_secs(1));
    assert_eq!(
        site.next_rediscover(at("2026-11-21T07:00:00Z")),
        Some(at("2026-11-21T12:00:00Z"))
    );
    assert!(site.matches("https://example.com/news/a-story"));
    assert!(!site.matches("https://example.com/about"));
    assert!(!site.matches("https://example.com/news/a-story?replytocom=12"));
    assert_eq!(site.line, 2);
    assert_eq!(site.source, Path::new("t.toml"));
}

#[test]
fn a_minimal_site_gets_the_defaults() {
    let site = one_site("[[site]]\nname = \"m\"\nfeeds = \"https://example.org/feed\"\n");
    assert_eq!(site.feeds.len(), 1, "a single string is a one-element list");
    assert!(site.include.is_empty() && site.matches("https://anything.example/"));
    assert_eq!(site.weight, defaults::WEIGHT);
    assert_eq!(site.requests_per_day, defaults::REQUESTS_PER_DAY);
    assert_eq!(site.host_rate, HostRate::parse("1/s").unwrap());
    assert_eq!(defaults::HOST_RATE, HostRate::parse("1/s").unwrap());
    assert_eq!(site.method, Method::Get);
    assert_eq!(site.change_signal, ChangeSignal::Content);
    assert_eq!(site.max_body, defaults::MAX_BODY);
    assert_eq!(site.timeout, Duration::from_secs(30));
    assert_eq!(site.concurrency, defaults::CONCURRENCY);
    assert!(site.window.is_none() && site.fetch_allowed(at("2026-11-21T03:00:00Z")));
    assert!(site.user_agent.is_none() && site.drop_params.is_empty());
    assert_eq!(
        site.next_rediscover(at("2026-11-21T19:00:00Z")),
        Some(at("2026-11-22T00:00:00Z"))
    );
}

#[test]
fn every_key_is_read() {
    let site = one_site(&site_with(
        r#"sitemaps = ["https://example.org/sitemap.xml#frag"]
exclude = ["/private/"]
weight = 3
requests_per_day = 1200.5
host_rate = "0.5/s"
rediscover = "30 4 * * *"
window = ["0 1 * * 1-5", "0 0 9 * * Sat"]
window_length = "5h"
user_agent = "freshet (+https://example.org/bot)"
method = "HEAD"
change_signal = "Bytes"
max_body = "2MiB"
timeout = "1m30s"
concurrency = 2
drop_params = ["sessionid", "utm_*"]"#,
    ));
    assert_eq!(site.sitemaps[0].as_str(), "https://example.org/sitemap.xml");
    assert_eq!(site.weight, 3.0);
    assert_eq!(site.requests_per_day, 1200.5);
    assert_eq!(site.host_rate.min_interval(), Duration::from_secs(2));
    assert_eq!(
        site.next_rediscover(at("2026-11-21T00:00:00Z")),
        Some(at("2026-11-21T04:30:00Z"))
    );
    let window = site.window.as_ref().unwrap();
    assert_eq!(
        (window.starts.len(), window.length),
        (2, Duration::from_secs(5 * 3600))
    );
    assert_eq!(
        site.user_agent.as_deref(),
        Some("freshet (+https://example.org/bot)")
    );
    assert_eq!(site.method, Method::Head);
    assert_eq!(site.change_signal, ChangeSignal::Bytes);
    assert_eq!(site.max_body, 2 * 1024 * 1024);
    assert_eq!(site.timeout, Duration::from_secs(90));
    assert_eq!(site.concurrency.get(), 2);
    assert!(site.drops_param("utm_source") && site.drops_param("sessionid"));
    assert!(!site.drops_param("id"));
}

#[test]
fn windows_open_at_cron_times_for_their_length() {
    // 2026-11-23 is a Monday; the window opens 01:00 on weekdays for five hours.
    let site = one_site(&site_with(
        "window = \"0 1 * * 1-5\"\nwindow_length = \"5h\"",
    ));
    assert!(!site.fetch_allowed(at("2026-11-23T00:59:59Z")));
    assert!(site.fetch_allowed(at("2026-11-23T01:00:00Z")));
    assert!(site.fetch_allowed(at("2026-11-23T05:59:59Z")));
    assert!(
        !site.fetch_allowed(at("2026-11-23T06:00:00Z")),
        "the end is open"
    );
    assert!(
        !site.fetch_allowed(at("2026-11-22T03:00:00Z")),
        "Sunday is not a weekday"
    );
    let window = site.window.as_ref().unwrap();
    assert_eq!(
        window.next_open(at("2026-11-21T12:00:00Z")),
        Some(at("2026-11-23T01:00:00Z"))
    );
    let inside = at("2026-11-23T02:00:00Z");
    assert_eq!(window.next_open(inside), Some(inside));
    // Fetching resumes at the next opening, and is not held back inside the window.
    assert_eq!(
        site.fetch_resumes_ms(at("2026-11-21T12:00:00Z")),
        Some(at("2026-11-23T01:00:00Z").timestamp_millis())
    );
    assert_eq!(site.fetch_resumes_ms(inside), None);
}

#[test]
fn drop_params_strip_query_and_path_parameters() {
    let site = one_site(&site_with(
        "drop_params = [\"sid\", \"utm_*\", \"jsessionid\"]",
    ));
    let strip = |u: &str| site.strip_params(&url::Url::parse(u).unwrap()).to_string();
    assert_eq!(
        strip("https://e.org/a?id=1&sid=9&utm_source=x"),
        "https://e.org/a?id=1"
    );
    assert_eq!(strip("https://e.org/a?sid=9"), "https://e.org/a");
    assert_eq!(
        strip("https://e.org/a?q=a%20b&sid=1"),
        "https://e.org/a?q=a%20b"
    );
    assert_eq!(
        strip("https://e.org/a;jsessionid=AB12?x=1"),
        "https://e.org/a?x=1"
    );
    assert_eq!(strip("https://e.org/a?x=1"), "https://e.org/a?x=1");
}

#[test]
fn origins_of_all_sources() {
    let site = one_site(&site_with("feeds = [\"http://news.example.org:8080/rss\"]"));
    let origins: Vec<String> = site.origins().into_iter().collect();
    assert_eq!(
        origins,
        ["http://news.example.org:8080", "https://example.org"]
    );
}

#[test]
fn unknown_keys_are_named_with_their_line_and_a_hint() {
    let err = only_problem(&site_with("host_rat = \"1/s\""));
    assert_eq!((err.line, err.key.as_deref()), (4, Some("host_rat")));
    assert!(err.message.contains("did you mean `host_rate`"), "{err}");
    let err = only_problem(&site_with("robots = false"));
    assert!(err.message.contains("always obeyed"), "{err}");
    let err = only_problem(&format!("title = \"x\"\n{}", site_with("")));
    assert_eq!((err.line, err.key.as_deref()), (1, Some("title")));
    assert!(err.message.contains("only [[site]] tables"), "{err}");
    let err = only_problem(&format!("weight = 2\n{}", site_with("")));
    assert_eq!((err.line, err.key.as_deref()), (1, Some("weight")));
    assert!(err.message.contains("belongs in a [[site]] table"), "{err}");
    let err = only_problem("[site]\nname = \"a\"\nseeds = [\"https://e.org/\"]\n");
    assert_eq!((err.line, err.key.as_deref()), (1, Some("site")));
    assert!(err.message.contains("double brackets"), "{err}");
}

#[test]
fn wrong_types_are_named() {
    let err = only_problem(&site_with("weight = \"heavy\""));
    assert_eq!((err.line, err.key.as_deref()), (4, Some("weight")));
    assert!(err.message.contains("wrong type"), "{err}");
    let err = only_problem(&site_with("sitemaps = [1]"));
    assert_eq!(err.key.as_deref(), Some("sitemaps"));
    let err = only_problem(&site_with("feeds = { url = \"https://e.org/\" }"));
    assert!(
        err.message
            .ends_with("table, expected a string or an array of strings"),
        "{err}"
    );
    let err = only_problem(&site_with("max_body = 10485760"));
    assert!(
        err.message.ends_with("expected a string like \"10MB\""),
        "{err}"
    );
    let err = only_problem(&site_with("concurrency = 2.5"));
    assert!(err.message.contains("expected a whole number"), "{err}");
}

#[test]
fn toml_syntax_errors_carry_their_line() {
    let err = &problems("[[site]]\nname = \"a\"\nfeeds = [\"https://e.org/\"\n\nweight = \n")[0];
    assert!(err.message.starts_with("TOML syntax"), "{err}");
    assert!(err.line >= 3, "{err}");
    let err = &problems("[[site]]\nname = \"a\"\nname = \"b\"\n")[0];
    assert_eq!(err.line, 3, "{err}");
}

#[test]
fn bad_urls() {
    let all = problems(&site_with(
        "sitemaps = [\"ftp://example.org/s.xml\", \"not a url\", \"http://\"]\nfeeds = \"/rss\"",
    ));
    let messages: Vec<String> = all.iter().map(ToString::to_string).collect();
    assert_eq!(all.len(), 4, "{messages:#?}");
    assert!(
        messages[0].contains("t.toml:4: sitemaps: `ftp://"),
        "{messages:#?}"
    );
    assert!(
        messages[0].contains("not an http or https URL"),
        "{messages:#?}"
    );
    assert!(messages[1].contains("not a URL"), "{messages:#?}");
    assert!(messages[3].contains("t.toml:5: feeds:"), "{messages:#?}");
}

#[test]
fn bad_regexes() {
    let err = only_problem(&site_with("include = ['^https://e\\.org/(news']"));
    assert_eq!((err.line, err.key.as_deref()), (4, Some("include")));
    assert!(err.message.contains("unclosed group"), "{err}");
    assert!(!err.message.contains('\n'));
    let err = only_problem(&site_with("exclude = ['[z-a]']"));
    assert_eq!(err.key.as_deref(), Some("exclude"));
}

#[test]
fn bad_cron_expressions() {
    let err = only_problem(&site_with("rediscover = \"every six hours\""));
    assert_eq!((err.line, err.key.as_deref()), (4, Some("rediscover")));
    assert!(err.message.contains("5 fields"), "{err}");
    let err = only_problem(&site_with("rediscover = \"0 25 * * *\""));
    assert!(err.message.contains("bad cron expression"), "{err}");
    let err = only_problem(&site_with("rediscover = \"0 0 * * 8\""));
    assert!(err.message.contains("0 or 7 = Sunday"), "{err}");
    let err = only_problem(&site_with(
        "window = [\"0 1 * * *\", \"nope\"]\nwindow_length = \"2h\"",
    ));
    assert_eq!((err.line, err.key.as_deref()), (4, Some("window")));
}

#[test]
fn a_bad_change_signal_says_what_is_expected() {
    let err = only_problem(&site_with("change_signal = \"html\""));
    assert_eq!((err.line, err.key.as_deref()), (4, Some("change_signal")));
    assert!(
        err.message.contains("`html` is not a change signal")
            && err.message.contains("\"content\"")
            && err.message.contains("\"bytes\""),
        "{err}"
    );
}

#[test]
fn bad_rates_and_quantities() {
    for (extra, key) in [
        ("host_rate = \"fast\"", "host_rate"),
        ("host_rate = \"0/s\"", "host_rate"),
        ("host_rate = \"2/fortnight\"", "host_rate"),
        ("max_body = \"10\"", "max_body"),
        ("max_body = \"0MB\"", "max_body"),
        ("timeout = \"0s\"", "timeout"),
        ("timeout = \"soon\"", "timeout"),
        ("concurrency = 0", "concurrency"),
        ("concurrency = 1000", "concurrency"),
        ("method = \"post\"", "method"),
        ("change_signal = \"html\"", "change_signal"),
        ("user_agent = \"\"", "user_agent"),
        ("user_agent = \"bøt\"", "user_agent"),
        ("drop_params = [\"*\"]", "drop_params"),
        ("drop_params = [\"a=b\"]", "drop_params"),
        ("drop_params = [\"ut*m\"]", "drop_params"),
        ("allow_networks = [\"intranet\"]", "allow_networks"),
        ("allow_networks = [\"10.0.0.1/8\"]", "allow_networks"),
        ("allow_networks = [\"10.0.0.0/33\"]", "allow_networks"),
        ("allow_networks = [\"::1/200\"]", "allow_networks"),
    ] {
        let err = only_problem(&site_with(extra));
        assert_eq!(
            (err.line, err.key.as_deref()),
            (4, Some(key)),
            "{extra}: {err}"
        );
    }
}

#[test]
fn weight_and_budget_must_be_positive() {
    for extra in [
        "weight = 0",
        "weight = -1.5",
        "weight = nan",
        "weight = inf",
    ] {
        let err = only_problem(&site_with(extra));
        assert_eq!(err.key.as_deref(), Some("weight"), "{extra}");
        assert!(err.message.contains("above zero"), "{err}");
    }
    for extra in ["requests_per_day = 0", "requests_per_day = -10"] {
        let err = only_problem(&site_with(extra));
        assert_eq!(err.key.as_deref(), Some("requests_per_day"), "{extra}");
    }
}

#[test]
fn window_and_window_length_need_each_other() {
    let err = only_problem(&site_with("window = \"0 1 * * *\""));
    assert_eq!(err.key.as_deref(), Some("window"));
    assert!(err.message.contains("window_length"), "{err}");
    let err = only_problem(&site_with("window_length = \"2h\""));
    assert_eq!(err.key.as_deref(), Some("window_length"));
    let err = only_problem(&site_with("window = []\nwindow_length = \"2h\""));
    assert!(err.message.contains("no cron"), "{err}");
}

#[test]
fn required_parts() {
    let err = only_problem("[[site]]\nseeds = [\"https://e.org/\"]\n");
    assert_eq!((err.line, err.key.as_deref()), (1, Some("name")));
    let err = only_problem("\n[[site]]\nname = \"n\"\n");
    assert_eq!((err.line, err.key.as_deref()), (2, None));
    assert!(err.message.contains("sitemaps, feeds or seeds"), "{err}");
    let err = only_problem("# nothing yet\n");
    assert!(err.message.contains("no [[site]]"), "{err}");
    let err = only_problem("[[site]]\nname = \"a b\"\nseeds = [\"https://e.org/\"]\n");
    assert_eq!(err.key.as_deref(), Some("name"));
}

#[test]
fn duplicate_names_in_one_file_name_both_lines() {
    let text = format!("{}{}", site_with(""), site_with(""));
    let err = only_problem(&text);
    assert_eq!((err.line, err.key.as_deref()), (6, Some("name")));
    assert!(err.message.contains("already used at t.toml:2"), "{err}");
}

#[test]
fn every_problem_is_reported_in_line_order() {
    let text = "[[site]]\nname = \"a\"\nsitemaps = [\"ftp://x/\"]\nweight = -1\nhost_rat = \"1/s\"\n\
                include = ['(']\n\n[[site]]\nnmae = \"b\"\nfeeds = \"https://e.org/rss\"\nrediscover = \"x\"\n";
    let lines: Vec<(usize, Option<String>)> = problems(text)
        .into_iter()
        .map(|err| (err.line, err.key))
        .collect();
    let key = |k: &str| Some(k.to_owned());
    assert_eq!(
        lines,
        [
            (3, key("sitemaps")),
            (4, key("weight")),
            (5, key("host_rat")),
            (6, key("include")),
            (8, key("name")),
            (9, key("nmae")),
            (11, key("rediscover")),
        ]
    );
}

#[test]
fn errors_display_as_file_line_key_message() {
    let err = ScheduleError {
        file: "schedules/news.toml".into(),
        line: 7,
        key: Some("host_rate".into()),
        message: "bad".into(),
    };
    assert_eq!(err.to_string(), "schedules/news.toml:7: host_rate: bad");
    let whole = ScheduleError {
        line: 0,
        key: None,
        ..err
    };
    assert_eq!(whole.to_string(), "schedules/news.toml: bad");
}

#[test]
fn load_reads_folders_sorted_and_applies_only_clean_files() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    write("b.toml", &site_with("").replace("\"s\"", "\"second\""));
    write("a.toml", &site_with("").replace("\"s\"", "\"first\""));
    write(
        "c.toml",
        &format!(
            "{}weight = 0\n",
            site_with("").replace("\"s\"", "\"third\"")
        ),
    );
    write("d.toml", &site_with("").replace("\"s\"", "\"first\""));
    write("notes.txt", "not a schedule");
    let loaded = load(&[dir.path().to_path_buf()]);
    let names: Vec<&str> = loaded.sites.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["first", "second"]);
    assert_eq!(loaded.files.len(), 4);
    let shown: Vec<String> = loaded.errors.iter().map(ToString::to_string).collect();
    assert_eq!(shown.len(), 2, "{shown:#?}");
    assert!(shown[0].ends_with("c.toml:5: weight: must be a number above zero, not 0"));
    assert!(shown[1].contains("d.toml:2: name: site name `first` is already used at "));
    assert!(shown[1].ends_with("a.toml:2"), "{shown:#?}");
}

#[test]
fn load_reports_missing_paths_and_empty_folders() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.toml");
    let loaded = load(&[dir.path().to_path_buf(), missing.clone()]);
    assert!(loaded.sites.is_empty());
    assert_eq!(loaded.errors.len(), 2);
    assert!(loaded.errors[0].message.contains("no *.toml"));
    assert_eq!(loaded.errors[1].file, missing);
}

#[test]
fn the_same_file_twice_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.toml");
    std::fs::write(&file, site_with("")).unwrap();
    let loaded = load(&[dir.path().to_path_buf(), file]);
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    assert_eq!(loaded.sites.len(), 1);
}

#[test]
fn allow_networks_reads_cidr_blocks() {
    let site = one_site(&site_with(
        "allow_networks = [\"127.0.0.0/8\", \"::1/128\", \"10.0.0.0/8\"]",
    ));
    let blocks: Vec<String> = site.allow_networks.iter().map(|c| c.to_string()).collect();
    assert_eq!(blocks, ["127.0.0.0/8", "::1/128", "10.0.0.0/8"]);
    assert!(one_site(&site_with("")).allow_networks.is_empty());
    let err = only_problem(&site_with("allow_networks = [\"10.0.0.1/8\"]"));
    assert!(err.message.contains("did you mean 10.0.0.0/8"), "{err}");
}

#[test]
fn absurd_budgets_weights_and_rates_are_refused_with_their_line() {
    let err = only_problem(&site_with("requests_per_day = 1.7e308"));
    assert_eq!(
        (err.line, err.key.as_deref()),
        (4, Some("requests_per_day"))
    );
    assert!(err.message.contains("at most 1e12"), "{err}");
    let err = only_problem(&site_with("requests_per_day = 5e-324"));
    assert!(err.message.contains("at least 1e-6"), "{err}");
    let err = only_problem(&site_with("weight = 1e300"));
    assert_eq!((err.line, err.key.as_deref()), (4, Some("weight")));
    assert!(err.message.contains("not 1e300 "), "said as written: {err}");
    let err = only_problem(&site_with("host_rate = \"1e-300/s\""));
    assert_eq!((err.line, err.key.as_deref()), (4, Some("host_rate")));
    assert!(err.message.contains("one request a year"), "{err}");
    assert_eq!(
        one_site(&site_with("requests_per_day = 1e9")).requests_per_day,
        1e9
    );
}

#[test]
fn a_window_or_rediscover_that_fired_only_in_the_past_is_named() {
    let site = one_site(&site_with(
        "window = \"0 0 0 1 1 * 2001\"\nwindow_length = \"1h\"\nrediscover = \"0 0 0 1 1 * 2002\"",
    ));
    let now = at("2026-12-03T00:00:00Z");
    let stopped = site.stopped_for_good(now);
    assert_eq!(stopped.len(), 2, "{stopped:?}");
    assert!(stopped[0].contains("window"), "{stopped:?}");
    assert!(stopped[1].contains("rediscover"), "{stopped:?}");
    // Before 2001 both still lie ahead.
    assert!(site.stopped_for_good(at("2000-06-01T00:00:00Z")).is_empty());
    assert!(one_site(&site_with("")).stopped_for_good(now).is_empty());
}

#[test]
fn a_url_listed_as_a_sitemap_and_as_a_feed_is_refused_with_its_line() {
    let err = only_problem(&site_with(
        "sitemaps = [\"https://example.org/news.xml\"]\nfeeds = [\"https://example.org/other.xml\",\n  \"https://example.org/news.xml#top\"]",
    ));
    assert_eq!((err.line, err.key.as_deref()), (6, Some("feeds")));
    assert!(err.message.contains("is in `sitemaps` too"), "{err}");
    assert!(
        err.message.contains("https://example.org/news.xml"),
        "{err}"
    );
}
