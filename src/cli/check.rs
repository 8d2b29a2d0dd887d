//! `freshet check`.

/// Arguments of `freshet check`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `freshet check`; returns the exit code.
pub async fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("freshet check is not built yet")
}
