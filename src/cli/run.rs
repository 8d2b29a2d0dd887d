//! `freshet run`.

/// Arguments of `freshet run`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `freshet run`; returns the exit code.
pub async fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("freshet run is not built yet")
}
