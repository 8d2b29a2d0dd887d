//! Shared set-up for the fetch integration tests: a recording server, a fetcher resolving the
//! test hosts to it, and a host pool without intervals (politeness has its own tests).
//!
//! Declare `recording_server` next to it in the test crate:
//! `#[path = "support/recording_server.rs"] mod recording_server;`
//! `#[path = "support/fetch_setup.rs"] mod fetch_setup;`
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use freshet::clock::{SharedClock, SystemClock};
use freshet::fetch::{FetchConfig, FetchOutcome, FetchRequest, Fetcher};
use freshet::politeness::{HostConfig, HostPool};
use url::Url;

use super::recording_server::{RecordingServer, loopback_networks};

pub const HOSTS: [&str; 2] = ["a.test", "b.test"];

/// A server, a fetcher that resolves the test hosts to it, and a pool without intervals.
pub async fn setup(config: FetchConfig) -> (RecordingServer, Fetcher, HostPool, SharedClock) {
    let server = RecordingServer::start().await;
    let fetcher = Fetcher::new(FetchConfig {
        resolve: server.resolve(&HOSTS),
        allow_networks: loopback_networks(),
        ..config
    })
    .expect("client builds");
    let clock: SharedClock = Arc::new(SystemClock);
    let pool = HostPool::new(Arc::clone(&clock)).with_defaults(HostConfig {
        min_interval: Duration::ZERO,
        concurrency: 4,
    });
    (server, fetcher, pool, clock)
}

pub async fn get(
    fetcher: &Fetcher,
    pool: &HostPool,
    clock: &SharedClock,
    url: Url,
) -> FetchOutcome {
    fetcher
        .fetch(&FetchRequest::get(url), pool, clock.as_ref())
        .await
}
