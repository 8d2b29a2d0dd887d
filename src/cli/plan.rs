//! `freshet plan`.

/// Arguments of `freshet plan`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `freshet plan`; returns the exit code.
pub async fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("freshet plan is not built yet")
}
