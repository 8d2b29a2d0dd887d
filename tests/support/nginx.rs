//! nginx from the system's packages as a test web server: started as the test user on a
//! loopback port with a temporary prefix, serving files a test writes under `html/`, logging
//! every request with `$msec` and `$request_time` so the test reads what the server saw.
//!
//! Use it from a test file with `#[path = "support/nginx.rs"] mod nginx;`. When nginx is not
//! installed, [`Nginx::binary_or_skip`] says the test skipped and gives `None`, or fails it
//! under `FRESHET_REQUIRE_NGINX=1` (`.ci/run` installs nginx and sets it).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A running nginx; killed on drop.
pub struct Nginx {
    child: tokio::process::Child,
    /// Its prefix (configuration, logs, `html/`).
    pub prefix: PathBuf,
    /// The loopback port it listens on.
    pub port: u16,
}

/// One access-log line.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// When the request started, Unix ms (nginx's end time minus its request time).
    pub start_ms: i64,
    /// The method.
    pub method: String,
    /// The path.
    pub uri: String,
    /// The status sent.
    pub status: u16,
}

impl Nginx {
    /// The nginx binary, if installed: in the usual system folders or on `PATH` (where
    /// `.ci/run` looks before installing it).
    pub fn binary() -> Option<PathBuf> {
        let path = std::env::var_os("PATH").unwrap_or_default();
        ["/usr/sbin", "/usr/local/sbin", "/usr/bin"]
            .iter()
            .map(PathBuf::from)
            .chain(std::env::split_paths(&path))
            .map(|dir| dir.join("nginx"))
            .find(|p| p.is_file())
    }

    /// The nginx binary, or None after printing SKIPPED; with `FRESHET_REQUIRE_NGINX=1` (set by
    /// `.ci/run`, which installs nginx) a missing nginx fails the test instead.
    pub fn binary_or_skip() -> Option<PathBuf> {
        let found = Self::binary();
        if found.is_none() {
            let required = std::env::var("FRESHET_REQUIRE_NGINX").is_ok_and(|v| v == "1");
            assert!(
                !required,
                "FRESHET_REQUIRE_NGINX=1 but no nginx in /usr/sbin, /usr/local/sbin or /usr/bin"
            );
            eprintln!(
                "SKIPPED: nginx is not installed (apt-get install nginx-light); nothing checked"
            );
        }
        found
    }

    /// The folder of the files it serves under `prefix`, created.
    pub fn html(prefix: &Path) -> PathBuf {
        let html = prefix.join("html");
        std::fs::create_dir_all(&html).expect("create html/");
        html
    }

    /// Starts `binary` on a free loopback port with its prefix at `prefix` (whose `html/` the
    /// test fills, before or after) and waits until it accepts connections.
    pub async fn start(binary: &Path, prefix: &Path) -> Self {
        Self::start_with(binary, prefix, "").await
    }

    /// [`Nginx::start`] with `directives` added to its `server` block (`location`s that
    /// redirect or answer 429, say).
    pub async fn start_with(binary: &Path, prefix: &Path, directives: &str) -> Self {
        Self::html(prefix);
        std::fs::create_dir_all(prefix.join("tmp")).unwrap();
        std::fs::create_dir_all(prefix.join("conf")).unwrap();
        let port = free_port();
        let p = prefix.display();
        let conf = format!(
            "daemon off;\nmaster_process off;\nworker_processes 1;\npid {p}/nginx.pid;\n\
             error_log {p}/error.log;\nevents {{ worker_connections 256; }}\n\
             http {{\n\
               log_format timed '$msec $request_time $request_method $uri $status';\n\
               access_log {p}/access.log timed;\n\
               client_body_temp_path {p}/tmp/body;\n proxy_temp_path {p}/tmp/proxy;\n\
               fastcgi_temp_path {p}/tmp/fastcgi;\n uwsgi_temp_path {p}/tmp/uwsgi;\n\
               scgi_temp_path {p}/tmp/scgi;\n\
               types {{ text/html html; text/plain txt; application/xml xml; }}\n\
               server {{ listen 127.0.0.1:{port}; root {p}/html; {directives} }}\n\
             }}\n"
        );
        std::fs::write(prefix.join("conf/nginx.conf"), conf).unwrap();
        let child = tokio::process::Command::new(binary)
            .arg("-p")
            .arg(prefix)
            .arg("-c")
            .arg(prefix.join("conf/nginx.conf"))
            .arg("-e")
            .arg(prefix.join("error.log"))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start nginx");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "nginx did not start: {}",
                std::fs::read_to_string(prefix.join("error.log")).unwrap_or_default()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Self {
            child,
            prefix: prefix.to_path_buf(),
            port,
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request logged so far, in log order.
    pub fn access_log(&self) -> Vec<Request> {
        parse_log(&std::fs::read_to_string(self.prefix.join("access.log")).unwrap_or_default())
    }

    /// Stops the server.
    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

/// A loopback port free a moment ago.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("address").port()
}

/// Parses lines of the `timed` log format.
pub fn parse_log(text: &str) -> Vec<Request> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let end_s: f64 = fields.next()?.parse().ok()?;
            let took_s: f64 = fields.next()?.parse().ok()?;
            let method = fields.next()?.to_string();
            let uri = fields.next()?.to_string();
            let status = fields.next()?.parse().ok()?;
            Some(Request {
                start_ms: ((end_s - took_s) * 1000.0).round() as i64,
                method,
                uri,
                status,
            })
        })
        .collect()
}
