//! Hostile local input through the built binary: a feed with a second XML declaration (which
//! made quick-xml panic inside feed-rs), and schedule paths that are not files to read whole
//! (`/dev/zero`, a FIFO, a file past the 1 MiB cap). Each must end promptly with a clear error
//! naming the file, and never with a panic on stderr.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn freshet(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_freshet"))
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run freshet")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_feed_with_a_second_xml_declaration_is_a_clean_error() {
    let dir = tempfile::tempdir().unwrap();
    for encoding in ["UTF-16", "ISO-8859-1"] {
        let path = dir.path().join(format!("feed-{encoding}.xml"));
        std::fs::write(
            &path,
            format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rss version=\"2.0\"><channel>\
                 <title>T</title><item><link>http://a.test/1</link></item>\n\
                 <?xml version=\"1.0\" encoding=\"{encoding}\"?>\n\
                 <item><link>http://a.test/2</link></item></channel></rss>\n"
            ),
        )
        .unwrap();
        let out = freshet(&["inspect", "feed", path.to_str().unwrap()]);
        let err = stderr(&out);
        assert!(!out.status.success(), "{encoding}: accepted");
        assert!(!err.contains("panicked"), "{encoding}: {err}");
        assert!(
            err.contains("an XML declaration (or a NUL) at byte") && err.lines().count() == 1,
            "{encoding}: {err}"
        );
    }
}

/// feed-rs 3.0.0 sliced an author's name one byte beside the e-mail it found, which panics when
/// that character is multi-byte; freshet builds a patched copy (vendor/README.md).
#[test]
fn an_author_with_a_multibyte_character_beside_the_email_parses() {
    let dir = tempfile::tempdir().unwrap();
    for author in [
        "Ann —ann@a.test",
        "ann@a.test— Ann",
        "«ann@a.test»",
        "é ann@a.test",
    ] {
        let path = dir.path().join("feed.xml");
        std::fs::write(
            &path,
            format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rss version=\"2.0\"><channel>\
                 <title>T</title><managingEditor>{author}</managingEditor><item>\
                 <link>http://a.test/1</link><author>{author}</author></item></channel></rss>\n"
            ),
        )
        .unwrap();
        let out = freshet(&["inspect", "feed", path.to_str().unwrap()]);
        let err = stderr(&out);
        assert!(!err.contains("panicked"), "{author}: {err}");
        assert!(out.status.success(), "{author}: {err}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("http://a.test/1"),
            "{author}"
        );
    }
}

#[test]
fn check_refuses_a_device_with_the_file_named() {
    let out = freshet(&["check", "/dev/zero"]);
    assert!(!out.status.success());
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(all.contains("/dev/zero: not a regular file"), "{all}");
}

#[test]
fn check_refuses_a_schedule_past_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.toml");
    let mut text = String::from("# padding\n");
    while text.len() <= 1024 * 1024 {
        text.push_str("# a comment line that makes the file large enough to pass the cap\n");
    }
    std::fs::write(&path, text).unwrap();
    let out = freshet(&["check", path.to_str().unwrap()]);
    assert!(!out.status.success());
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(all.contains("huge.toml"), "{all}");
    assert!(all.contains("1048576-byte (1 MiB) cap"), "{all}");
}

#[test]
fn check_refuses_a_fifo_instead_of_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.toml");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("mkfifo unavailable; skipped");
        return;
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_freshet"))
        .args(["check", fifo.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Not a timing assertion: a blocked open never ends; the deadline is only how long to wait
    // before calling it blocked, far beyond any loaded machine's start-up time.
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("freshet check blocked on a FIFO");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success());
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(all.contains("pipe.toml: not a regular file"), "{all}");
}
