//! The `freshet` binary: parse the command line, start tracing, call the library, map the result
//! to an exit code.

use std::process::ExitCode;

use clap::Parser;
use tracing_subscriber::EnvFilter;

/// The allocator: mimalloc, unless built with the `system-allocator` feature (for heap
/// profilers that hook the system's malloc, such as heaptrack).
#[cfg(not(feature = "system-allocator"))]
mod allocator {
    /// mimalloc rather than glibc's malloc: on `freshet bench --only run --pages 1000000` (one run
    /// each, idle machine) glibc gave 537 bytes per URL, 2,531 checks/s and 0.58 ms of CPU per check,
    /// 465 bytes and 2,251 checks/s with `MALLOC_ARENA_MAX=2`; mimalloc 505 bytes, 3,109 checks/s and
    /// 0.47 ms, and 435 bytes, 3,072 checks/s and 0.47 ms when it returns freed memory at once.
    #[global_allocator]
    static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

    /// `mi_option_purge_delay` in mimalloc 3's `mi_option_e` (the binding names no constant for it).
    const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    /// mimalloc 3's own default for it, ms (freed memory goes back to the system a while later).
    const MI_DEFAULT_PURGE_DELAY_MS: std::ffi::c_long = 1_000;

    /// Freed memory goes back to the system at once instead of after a delay, so the resident peak is
    /// what is live (a discovery pass frees much of what it held). A `MIMALLOC_PURGE_DELAY` in the
    /// environment still wins (unless it is mimalloc's default, 1,000 ms, which cannot be told from
    /// no setting), and another mimalloc than version 3 keeps its defaults.
    pub fn return_freed_memory_at_once() {
        // SAFETY: plain calls into mimalloc's option table, made before any other thread exists (its
        // option calls are not thread safe); the option is set only where it is the one expected.
        unsafe {
            if libmimalloc_sys::mi_version() / 10_000 == 3
                && libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY)
                    == MI_DEFAULT_PURGE_DELAY_MS
            {
                libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0);
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn the_purge_delay_is_the_option_mimalloc_3_defaults_to_a_second() {
            // Guards the option's number: mimalloc 3 numbers its options in an enum the binding
            // does not name, and the one at 15 must be the purge delay (1,000 ms by default).
            // SAFETY: reads mimalloc's option table (no other test touches it).
            let (version, delay) = unsafe {
                (
                    libmimalloc_sys::mi_version(),
                    libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY),
                )
            };
            assert_eq!(version / 10_000, 3, "mimalloc {version}");
            if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
                assert_eq!(delay, MI_DEFAULT_PURGE_DELAY_MS);
            }
        }
    }
}

#[cfg(feature = "system-allocator")]
mod allocator {
    /// The system's allocator has nothing to set.
    pub fn return_freed_memory_at_once() {}
}

fn main() -> ExitCode {
    allocator::return_freed_memory_at_once();
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(run()),
        Err(err) => {
            eprintln!("error: cannot start the async runtime: {err}");
            ExitCode::from(2)
        }
    }
}

async fn run() -> ExitCode {
    // Before anything else (the allocator's setting and the runtime are all that come first):
    // from here on a SIGTERM or Ctrl-C is `run`'s clean shutdown, and the usual prompt exit for
    // every other command.
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
