//! `freshet demo`'s living synthetic web: virtual hosts on loopback whose pages change as Poisson
//! processes with known rates, served over real HTTP on the freshet clock, and the truth to judge
//! the refresher by.
//!
//! # Layout
//! - [`world`]: the hosts, pages and every page's change times, generated from a seed (pure).
//! - [`render`]: pages, robots.txt, sitemaps and feeds as served at a time t (pure).
//! - [`server`]: the axum server on `127.0.0.1:0`, routing by `Host`, logging every request.
//! - [`truth`]: true time-averaged age of a copy, the uniform baseline, rate comparison (pure).
//! - [`schedule`]: the schedule file (TOML) that points the refresher at the world.
//! - [`outcome`]: the demo's report from the world and the server's request log.
//! - [`noise`]: the noise-only pages' share of requests and learnt rates.
//! - [`calibration`]: freshet's beliefs about its copies at the end against the truth (pure).
//! - [`copies`]: the truth of every copy freshet holds, each URL its own (pure).
//! - [`session`]: one run: world, server, schedule, a refresher for a while, the judgement.
//!
//! The world is usable without the refresher: start [`server::start`] on a
//! [`crate::clock::VirtualClock`], fetch with any client that resolves [`server::DemoServer::resolve`],
//! and judge the fetches with [`outcome::evaluate`].

pub mod calibration;
pub mod copies;
pub mod noise;
pub mod outcome;
pub mod render;
pub mod schedule;
pub mod server;
pub mod session;
pub mod truth;
pub mod world;

pub use server::{DemoServer, RequestLog, RequestRecord, start};
pub use world::{World, WorldConfig};
