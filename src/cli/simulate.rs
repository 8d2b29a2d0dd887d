//! `freshet simulate`.

/// Arguments of `freshet simulate`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `freshet simulate`; returns the exit code.
pub async fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("freshet simulate is not built yet")
}
