//! The `freshet` binary: parse the command line, start tracing, call the library, map the result
//! to an exit code.

use std::process::ExitCode;

use clap::Parser;
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> ExitCode {
    // Before anything else (the runtime is all that comes first): from here on a SIGTERM or
    // Ctrl-C is `run`'s clean shutdown, and the usual prompt exit for every other command.
    let shutdown = freshet::cli::run::shutdown_signal();
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_env("FRESHET_LOG").unwrap_or_else(|_| EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    // A socket per host: thousands of hosts need more descriptors than the usual soft limit.
    if let Some((before, after)) = freshet::fetch::open_files::raise_open_files_limit()
        && after != before
    {
        tracing::debug!(before, after, "open-file limit raised");
    }
    let cli = freshet::cli::Cli::parse();
    match freshet::cli::dispatch(cli, shutdown).await {
        Ok(code) => code,
        // A reader that went away is not an error (freshet::cli::output).
        Err(err)
            if err.chain().any(|e| {
                e.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}
