//! `freshet run`: the refresher, continuously (Ctrl-C / SIGTERM finish the checks in flight,
//! commit and exit 0) or one full pass with `--once`.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use crate::clock::SystemClock;
use crate::refresher::{self, PolicyChoice, RunOptions, Watch};

/// Arguments of `freshet run`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Schedule files or folders of them.
    #[arg(long, default_value = "schedules")]
    pub schedules: Vec<PathBuf>,
    /// The database: a SQLite file, or a postgres:// URL that several workers may share
    /// (created and migrated on first use).
    #[arg(long, default_value = "freshet.db")]
    pub db: PathBuf,
    /// One full pass (discover, fetch everything due, exit) instead of running continuously.
    #[arg(long)]
    pub once: bool,
    /// How revisit rates are chosen.
    #[arg(long, value_enum, default_value_t = PolicyChoice::Learned)]
    pub policy: PolicyChoice,
    /// Serve Prometheus metrics at http://ADDR/metrics while running (e.g. 127.0.0.1:9464;
    /// exactly the address given is bound; port 0 picks a free port, printed on stderr).
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<SocketAddr>,
    /// No live status line, even on a terminal (it is never drawn when stderr is not one:
    /// then the log lines are all there is, as with FRESHET_LOG).
    #[arg(long)]
    pub no_status: bool,
    /// With a postgres:// database: this worker's name in the host leases (default: the
    /// machine's name and the process id; each process adds a token of its own).
    #[arg(long, value_name = "NAME")]
    pub worker: Option<String>,
    /// With a postgres:// database: how long a host lease lasts unless renewed, so how long a
    /// killed worker's hosts wait before another worker takes them (default 30, and never less
    /// than twice the longest request timeout of the schedules and a second).
    #[arg(long, allow_negative_numbers = true, value_name = "SECONDS")]
    pub lease_seconds: Option<f64>,
}

/// Runs `freshet run`; returns the exit code.
/// `shutdown` is [`shutdown_signal`], installed when the process started, so that a SIGTERM at
/// any moment (parsing arguments, opening the database, the first discovery pass) is a clean
/// shutdown, not a kill.
pub async fn run(
    args: Args,
    shutdown: impl Future<Output = i32> + Send + 'static,
) -> anyhow::Result<u8> {
    let options = RunOptions {
        schedules: args.schedules,
        db_path: args.db.clone(),
        once: args.once,
        clock: Arc::new(SystemClock),
        resolve: Vec::new(),
        policy: args.policy,
        worker: refresher::WorkerOptions {
            name: args.worker,
            lease: args
                .lease_seconds
                .map(|s| std::time::Duration::from_secs_f64(s.clamp(0.03, 86_400.0))),
            round_every: None,
        },
        run_lock: None,
    };
    let watch = Watch {
        metrics: match args.metrics {
            Some(addr) => {
                let listener = crate::metrics::bind(addr).await?;
                eprintln!(
                    "freshet: metrics at http://{}/metrics",
                    listener.local_addr()?
                );
                Some(listener)
            }
            None => None,
        },
        status: !args.no_status && std::io::stderr().is_terminal(),
    };
    let shutdown = async move {
        shutdown.await;
    };
    let summary = refresher::run_watched(options, watch, shutdown).await?;
    for (host, until) in &summary.skipped_hosts {
        eprintln!(
            "freshet: skipped {host}: closed (back-off or Retry-After) until {}, longer than the pass",
            crate::clock::ms_to_rfc3339(*until)
        );
    }
    if let Some(left) = summary.left {
        // Said, not only logged: a pass that sent nothing looked like one with nothing to do.
        let why = if summary.skipped_hosts.is_empty() {
            "the sites' budgets (requests_per_day) allow no more requests for now"
        } else {
            "the sites' budgets, or the hosts skipped above"
        };
        let next = left.next_at_ms.map_or(String::new(), |at| {
            format!("; the next could go at {}", crate::clock::ms_to_rfc3339(at))
        });
        eprintln!(
            "freshet: {} URLs due were left for a later pass: {why}{next}",
            left.urls
        );
    }
    if summary.held_no_host {
        // Said, not only counted: "0 requests" alone looked like a pass with nothing to do.
        eprintln!(
            "freshet: this worker held no host: other workers on this database hold them all, \
             and it sends nothing to a host another worker holds"
        );
    }
    if summary.cut_short {
        eprintln!(
            "freshet: the pass was cut short by a signal: what it did not reach is still due"
        );
    }
    let skipped = summary.schedule_problems;
    if skipped.files > 0 {
        eprintln!(
            "freshet: {} skipped for {} (recorded in the errors table; `freshet check` lists them): \
             nothing from {} was applied",
            count(skipped.files, "schedule file"),
            count(skipped.problems, "problem"),
            if skipped.files == 1 { "it" } else { "them" },
        );
    }
    eprintln!(
        "freshet: {}, {}, {} seen, {}, {} skipped; database {}",
        count(summary.requests, "request"),
        count(summary.checks, "check"),
        count(summary.changes, "change"),
        count(summary.errors, "error"),
        count(summary.skipped_hosts.len() as u64, "host"),
        args.db.display()
    );
    // A pass that left a schedule file out did not do what it was asked: a cron job must see it.
    Ok(u8::from(args.once && skipped.files > 0))
}

/// `n thing` or `n things`.
fn count(n: u64, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

/// Resolves on Ctrl-C or SIGTERM, to the signal's number. The handlers are installed when this
/// is called, not when the future is first polled.
pub fn shutdown_signal() -> impl Future<Output = i32> + Send + 'static {
    const SIGINT: i32 = 2;
    const SIGTERM: i32 = 15;
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let term = signal(SignalKind::terminate());
        let int = signal(SignalKind::interrupt());
        async move {
            match (term, int) {
                (Ok(mut term), Ok(mut int)) => {
                    tokio::select! {
                        _ = term.recv() => SIGTERM,
                        _ = int.recv() => SIGINT,
                    }
                }
                (Ok(mut term), Err(_)) => {
                    let _ = term.recv().await;
                    SIGTERM
                }
                (Err(_), _) => {
                    let _ = tokio::signal::ctrl_c().await;
                    SIGINT
                }
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
            SIGINT
        }
    }
}
