//! The refresher: discovery, the frontier of due URLs, polite fetching, and recording observations.
//!
//! (Being built: the API below is the contract other modules code against.)

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;

use crate::clock::SharedClock;

/// Which revisit policy the refresher uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PolicyChoice {
    /// Learned change rates, age-optimal plan.
    #[default]
    Learned,
    /// Uniform within each site's budget, sitemap changefreq as a hint (the baseline).
    Uniform,
}

/// Everything one refresher run needs.
pub struct RunOptions {
    /// Schedule files or folders of them.
    pub schedules: Vec<PathBuf>,
    /// The SQLite database file (created and migrated on first use).
    pub db_path: PathBuf,
    /// One full pass (discover, fetch everything due, exit) instead of running continuously.
    pub once: bool,
    /// The clock: system time, or a virtual clock for the demo and tests.
    pub clock: SharedClock,
    /// Host names mapped to loopback addresses (demo and tests); empty for the real web.
    pub resolve: Vec<(String, SocketAddr)>,
    /// The revisit policy.
    pub policy: PolicyChoice,
}

/// What a run did, for progress lines and the demo's report.
#[derive(Debug, Clone, Default)]
pub struct RunSummary {
    /// Requests sent (all hosts, including robots.txt, sitemaps and feeds).
    pub requests: u64,
    /// Checks of pages recorded as observations.
    pub checks: u64,
    /// Checks that saw a change.
    pub changes: u64,
    /// Errors recorded.
    pub errors: u64,
}

/// Runs the refresher until `shutdown` resolves (or one pass when `once`), committing as it goes.
pub async fn run(
    options: RunOptions,
    shutdown: impl Future<Output = ()> + Send,
) -> anyhow::Result<RunSummary> {
    let _ = (options, shutdown);
    anyhow::bail!("the refresher is not built yet")
}
