//! freshet keeps local copies of websites fresh.
//!
//! People declare sites in schedule files; freshet discovers their URLs from sitemaps, feeds and
//! robots.txt, learns how often each URL changes (a Poisson rate), revisits every URL at the rate
//! that minimises the expected age of the copy within a fetch budget, never hits a host harder than
//! its limit, routes what it fetches through a duplicate and canonical-page engine, and answers
//! "how stale is my copy, where, and why" from SQLite.
//!
//! # Layout
//! - [`clock`]: the one source of time, real or virtual.
//! - [`schedule`]: schedule files (TOML) read and validated into typed [`schedule::Site`]s.
//! - [`robots`]: robots.txt rules per RFC 9309 (pure).
//! - [`discover`]: sitemap, feed and date parsers (pure).
//! - [`estimate`]: change-rate posteriors from observations and hints (pure).
//! - [`plan`]: revisit rates that minimise age under budget and host limits (pure).
//! - [`dedup`]: URL normalisation, content extraction, fingerprints, simhash and the
//!   canonical-page engine (pure parts).
//! - [`fetch`]: one HTTP check: conditional GET / HEAD, manual redirects, caps, charset.
//! - [`politeness`]: per-host rate limits, concurrency, back-off.
//! - [`store`]: the SQLite database: schema, observations, summaries, reports.
//! - [`scheduler`]: every revisit decision (estimates, plan, feeds, budget, frontier), pure and
//!   shared by `run`, `simulate` and `demo`.
//! - [`refresher`]: the daemon: the scheduler with the real fetcher, discovery and the store.
//! - [`report`]: table / JSON / CSV output of reports.
//! - [`report_html`]: `freshet report html`, one self-contained page of plots and tables.
//! - [`metrics`]: what a run exposes to Prometheus (`run --metrics`) and to the live status line.
//! - [`simulate`]: a deterministic discrete-event world for comparing policies.
//! - [`demo`]: a living synthetic web on loopback for `freshet demo`.
//! - [`warc`]: a WARC 1.1 writer for `freshet export warc`.
//! - [`localfile`]: reading a user-named local file: regular files only, capped.
//! - [`cli`]: the command-line interface (one file per command).

pub mod cli;
pub mod clock;
pub mod dedup;
pub mod demo;
pub mod discover;
pub mod estimate;
pub mod fetch;
pub mod localfile;
pub mod metrics;
pub mod plan;
pub mod politeness;
pub mod refresher;
pub mod report;
pub mod report_html;
pub mod robots;
pub mod schedule;
pub mod scheduler;
pub mod simulate;
pub mod store;
pub mod warc;
