//! `freshet demo`.

/// Arguments of `freshet demo`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `freshet demo`; returns the exit code.
pub async fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("freshet demo is not built yet")
}
