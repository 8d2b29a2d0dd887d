//! `freshet report`.

/// Subcommands of `freshet report`.
#[derive(Debug, clap::Subcommand)]
pub enum Command {}

/// Runs `freshet report`; returns the exit code.
pub async fn run(command: Command) -> anyhow::Result<u8> {
    match command {}
}
