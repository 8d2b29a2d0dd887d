//! `freshet export`.

/// Subcommands of `freshet export`.
#[derive(Debug, clap::Subcommand)]
pub enum Command {}

/// Runs `freshet export`; returns the exit code.
pub async fn run(command: Command) -> anyhow::Result<u8> {
    match command {}
}
