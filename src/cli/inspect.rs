//! `freshet inspect`.

/// Subcommands of `freshet inspect`.
#[derive(Debug, clap::Subcommand)]
pub enum Command {}

/// Runs `freshet inspect`; returns the exit code.
pub async fn run(command: Command) -> anyhow::Result<u8> {
    match command {}
}
