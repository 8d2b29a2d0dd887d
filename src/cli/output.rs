//! Standard output for every command, through one writer: a reader that goes away (`freshet
//! report age | head`) ends the process quietly with status 0, as `cat` and `grep` do, instead of
//! a panic in `print!`, a panicking tokio worker, or `error: Broken pipe`.
//!
//! Commands print with [`out!`](crate::out) / [`outln!`](crate::outln), or write to
//! [`stdout()`]; nothing in the commands calls `print!` or `std::io::stdout()` directly.

use std::io::{self, Write};

/// Standard output (or its lock), with a closed pipe mapped to a quiet exit (see the module
/// docs). Other write errors are returned to the caller.
pub struct QuietStdout<W = io::Stdout>(W);

/// The process's standard output, as a [`QuietStdout`].
pub fn stdout() -> QuietStdout {
    QuietStdout(io::stdout())
}

impl QuietStdout {
    /// The locked standard output, closed pipe still a quiet exit.
    pub fn lock(&self) -> QuietStdout<io::StdoutLock<'static>> {
        QuietStdout(self.0.lock())
    }
}

/// Ends the process with status 0 and nothing on stderr when `err` says the reader is gone;
/// otherwise gives `err` back.
pub fn quiet_on_closed_pipe(err: io::Error) -> io::Error {
    if err.kind() == io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    err
}

impl<W: Write> Write for QuietStdout<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf).map_err(quiet_on_closed_pipe)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush().map_err(quiet_on_closed_pipe)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all(buf).map_err(quiet_on_closed_pipe)
    }
}

/// Writes formatted text to standard output: what `print!` does, with a closed pipe a quiet exit
/// and any other write error a message on stderr and status 2 (`print!` would panic).
pub fn print(args: std::fmt::Arguments<'_>) {
    let mut out = stdout();
    if let Err(err) = out.write_fmt(args).and_then(|()| out.flush()) {
        eprintln!("error: writing to standard output: {err}");
        std::process::exit(2);
    }
}

/// `print!` through [`print`].
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::cli::output::print(format_args!($($arg)*)) };
}

/// `println!` through [`print`].
#[macro_export]
macro_rules! outln {
    () => { $crate::cli::output::print(format_args!("\n")) };
    ($($arg:tt)*) => {{
        $crate::cli::output::print(format_args!($($arg)*));
        $crate::cli::output::print(format_args!("\n"));
    }};
}
