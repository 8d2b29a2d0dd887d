//! `freshet bench`.

/// Arguments of `freshet bench`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `freshet bench`; returns the exit code.
pub async fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("freshet bench is not built yet")
}
