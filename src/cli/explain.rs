//! `freshet explain`.

/// Arguments of `freshet explain`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `freshet explain`; returns the exit code.
pub async fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("freshet explain is not built yet")
}
