//! One host's politeness state: its governor limiter, concurrency permits, last contact, back-off.
//!
//! A request to a host passes three gates, in this order:
//! 1. a concurrency permit (a FIFO tokio semaphore, default one in flight);
//! 2. the quiet gap: not before the host's back-off closure ends, and not before
//!    `last_end + interval` (the interval stretched while backing off), counted from the end of the
//!    previous request so that, one request in flight, the server never sees two requests closer
//!    than the interval whatever the network delays;
//! 3. the governor limiter (one cell per `min_interval` on the freshet clock), which bounds the
//!    start rate when more than one request may be in flight.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use governor::middleware::NoOpMiddleware;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::backoff::{Backoff, BackoffPolicy, duration_ms_ceil};
use super::governor_clock::{ClockInstant, GovernorClock};
use super::saved::{Journal, SavedHost};
use super::{HostConfig, HostStatus, Signal};
use crate::clock::{self, SharedClock};

/// A direct (unkeyed) governor limiter on the freshet clock.
type Limiter = RateLimiter<NotKeyed, InMemoryState, GovernorClock, NoOpMiddleware<ClockInstant>>;

/// One origin's politeness state, shared by every task that contacts it.
#[derive(Debug)]
pub(crate) struct Host {
    /// The politeness key (server name and port, see [`super::host_key`]), for logs.
    origin: String,
    /// The pool's back-off policy.
    policy: Arc<BackoffPolicy>,
    /// Concurrency permits. FIFO, so waiting tasks are served in arrival order.
    semaphore: Arc<Semaphore>,
    /// Everything else. A std mutex: nothing async happens while it is held.
    state: Mutex<HostState>,
}

/// The mutable part of a [`Host`].
#[derive(Debug)]
struct HostState {
    /// Interval and concurrency currently in force.
    config: HostConfig,
    /// The start-rate limiter; `None` when the interval is zero (no limit).
    limiter: Option<Limiter>,
    /// Clock time the latest request started (Unix ms).
    last_start_ms: Option<i64>,
    /// Clock time the latest request ended, i.e. its permit was dropped (Unix ms).
    last_end_ms: Option<i64>,
    /// Requests holding a permit right now.
    in_flight: u32,
    /// Permits to destroy on release because concurrency was lowered while they were out.
    permit_debt: u32,
    /// Back-off level and closure.
    backoff: Backoff,
    /// Not before this clock time (Unix ms): the gap after the last request of an earlier run,
    /// at the interval then in force ([`Host::restore`]), which a config set since may not know.
    restored_gate_ms: i64,
    /// Until when the latest Retry-After asked us to stay away (Unix ms), for the journal.
    retry_after_until_ms: Option<i64>,
    /// Requests starting before this clock time (Unix ms) are covered by a start already
    /// committed to the journal ([`super::saved`]); `i64::MIN` when none is.
    reserved_until_ms: i64,
    /// The interval grew since the last reservation committed: the next request commits one
    /// with it, covered or not.
    interval_unsaved: bool,
    /// The reservation's end at which a deferred save of the latest request's end is
    /// scheduled ([`HostPermit`]'s drop); `i64::MIN` when none is.
    end_save_at_ms: i64,
}

/// When to write a request's end to the journal.
pub(super) enum EndSave {
    /// Now, in the background: the end is past the committed reservation.
    Now(SavedHost),
    /// Once the clock reaches this reservation's end (while it lasts, a restart counts the
    /// host as in flight whatever end is saved), as [`Host::deferred_end`] decides then. Call [`Host::end_save_scheduled`] once it is scheduled.
    At(i64),
    /// A save at the reservation's end is already scheduled.
    Scheduled,
}

/// What the gate says to a task holding a concurrency permit.
enum Gate {
    /// Go: the request has been counted as started.
    Open,
    /// Come back at this clock time (Unix ms).
    WaitUntil(i64),
}

impl Host {
    /// A host with `config`, never contacted yet.
    pub(crate) fn new(
        origin: String,
        config: HostConfig,
        policy: Arc<BackoffPolicy>,
        clock: &SharedClock,
    ) -> Self {
        let config = config.normalised();
        Self {
            origin,
            policy,
            semaphore: Arc::new(Semaphore::new(config.concurrency as usize)),
            state: Mutex::new(HostState {
                limiter: limiter_for(config.min_interval, clock),
                config,
                last_start_ms: None,
                last_end_ms: None,
                in_flight: 0,
                permit_debt: 0,
                backoff: Backoff::default(),
                restored_gate_ms: 0,
                retry_after_until_ms: None,
                reserved_until_ms: i64::MIN,
                end_save_at_ms: i64::MIN,
                interval_unsaved: false,
            }),
        }
    }

    /// Locks the state; a poisoned lock (a panic elsewhere) still holds valid data.
    fn state(&self) -> MutexGuard<'_, HostState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Replaces interval and concurrency. Requests already in flight finish under the old
    /// concurrency. The new interval applies at once: the quiet gap counts it from the last
    /// request's end, and if a request started less than the new interval ago, the new
    /// limiter's first cell is spent so the next start waits a full interval from now.
    pub(crate) fn configure(&self, config: HostConfig, clock: &SharedClock) {
        let config = config.normalised();
        let mut state = self.state();
        if config.min_interval > state.config.min_interval {
            // The next request commits the longer interval, covered or not (a reservation
            // being committed now carries the shorter one).
            state.interval_unsaved = true;
        }
        if state.config.min_interval != config.min_interval {
            state.limiter = limiter_for(config.min_interval, clock);
            // A fresh limiter would allow a request at once; if one started less than an
            // interval ago, spend the first cell so the next waits a full interval from now.
            let now = clock.now_ms();
            let recent = state.last_start_ms.is_some_and(|start| {
                now < start.saturating_add(duration_ms_ceil(config.min_interval))
            });
            if let (true, Some(limiter)) = (recent, state.limiter.as_ref()) {
                let _ = limiter.check();
            }
        }
        let (old, new) = (state.config.concurrency, config.concurrency);
        if new > old {
            let mut extra = new - old;
            let repaid = extra.min(state.permit_debt);
            state.permit_debt -= repaid;
            extra -= repaid;
            self.semaphore.add_permits(extra as usize);
        } else if new < old {
            let surplus = (old - new) as usize;
            let forgotten = self.semaphore.forget_permits(surplus);
            state.permit_debt += u32::try_from(surplus - forgotten).unwrap_or(u32::MAX);
        }
        state.config = config;
    }

    /// Waits for a permit and the gates, then counts the request as started. With
    /// `patience_ms`, gives up (with the closure's end) instead of waiting for a back-off or
    /// Retry-After closure that ends more than `patience_ms` from now. Dropping the future
    /// while it waits leaves the host as it was.
    pub(crate) async fn acquire(
        self: &Arc<Self>,
        clock: &SharedClock,
        patience_ms: Option<i64>,
    ) -> Result<HostPermit, i64> {
        // The semaphore is never closed, so this only fails if that invariant breaks; the
        // request then goes ahead under the time gates alone rather than failing.
        let permit = self.semaphore.clone().acquire_owned().await.ok();
        let started_ms = loop {
            let now = clock.now_ms();
            let gate = self.state().try_start(&self.policy, now);
            match gate {
                Gate::Open => break now,
                Gate::WaitUntil(at_ms) => {
                    let closed = self.closed_until_ms();
                    if patience_ms.is_some_and(|patience| closed > now.saturating_add(patience)) {
                        return Err(closed);
                    }
                    clock::sleep_until(clock.as_ref(), at_ms.max(now + 1)).await
                }
            }
        };
        Ok(HostPermit {
            host: Arc::clone(self),
            started_ms,
            permit,
            clock: Arc::clone(clock),
            journal: None,
        })
    }

    /// Applies what a response said about the host.
    pub(crate) fn record(&self, signal: &Signal, now_ms: i64) {
        let policy = self.policy.as_ref();
        let mut state = self.state();
        match signal {
            Signal::Ok => state.backoff.succeed(),
            Signal::Throttled { retry_after } => {
                state
                    .backoff
                    .fail(policy, now_ms, *retry_after, rand::random());
                if let Some(asked) = retry_after {
                    let until = now_ms.saturating_add(duration_ms_ceil(*asked));
                    state.retry_after_until_ms = Some(until);
                }
            }
            Signal::Timeout | Signal::ServerError => {
                state.backoff.fail(policy, now_ms, None, rand::random());
            }
        }
        if !matches!(signal, Signal::Ok) {
            tracing::warn!(
                origin = %self.origin,
                signal = ?signal,
                level = state.backoff.level,
                until_ms = state.backoff.until_ms,
                "backing off"
            );
        }
    }

    /// The earliest clock time (≥ `now_ms`) at which a new request could start.
    pub(crate) fn next_allowed_ms(&self, now_ms: i64) -> i64 {
        let state = self.state();
        let interval = state.gap_ms(&self.policy);
        let mut at = now_ms
            .max(state.backoff.until_ms)
            .max(state.restored_gate_ms);
        if let Some(end) = state.last_end_ms {
            at = at.max(end.saturating_add(interval));
        }
        if let Some(start) = state.last_start_ms {
            at = at.max(start.saturating_add(duration_ms_ceil(state.config.min_interval)));
        }
        if state.in_flight >= state.config.concurrency {
            // Busy: the request in flight must end, and the quiet gap follow it.
            at = at.max(now_ms.saturating_add(interval));
        }
        at
    }

    /// A snapshot for reports and tests.
    pub(crate) fn status(&self) -> HostStatus {
        let state = self.state();
        HostStatus {
            config: state.config.clone(),
            in_flight: state.in_flight,
            backoff_level: state.backoff.level,
            backoff_until_ms: state.backoff.until_ms,
            last_start_ms: state.last_start_ms,
            last_end_ms: state.last_end_ms,
        }
    }

    /// Until when the host is closed by back-off or Retry-After (Unix ms; in the past when
    /// open). The ordinary gap between requests is not a closure.
    pub(crate) fn closed_until_ms(&self) -> i64 {
        self.state().backoff.until_ms
    }

    /// What to persist of this host (see [`super::saved`]).
    pub(crate) fn snapshot(&self) -> SavedHost {
        self.saved_of(&self.state())
    }

    /// [`Host::snapshot`] of a locked state.
    fn saved_of(&self, state: &HostState) -> SavedHost {
        SavedHost {
            key: self.origin.clone(),
            min_interval_ms: duration_ms_ceil(state.config.min_interval),
            last_start_ms: state.last_start_ms,
            last_end_ms: state.last_end_ms,
            backoff_level: state.backoff.level,
            backoff_until_ms: state.backoff.until_ms,
            retry_after_until_ms: state.retry_after_until_ms,
        }
    }

    /// What to commit before a request that started at `started_ms` may be sent: `None` when a
    /// reservation already committed covers it, else this host's state with its latest start
    /// moved to the end of a new reservation, `reserve_ms` after `started_ms` (see
    /// [`super::saved`]). A host whose interval is `reserve_ms` or longer gets no reservation
    /// ahead (its own start): none of its next requests could use it, and a restart would
    /// only wait longer.
    pub(crate) fn reservation_for(&self, started_ms: i64, reserve_ms: i64) -> Option<SavedHost> {
        let state = self.state();
        if started_ms < state.reserved_until_ms && !state.interval_unsaved {
            return None;
        }
        let ahead = if duration_ms_ceil(state.config.min_interval) < reserve_ms {
            reserve_ms
        } else {
            0
        };
        let mut saved = self.saved_of(&state);
        saved.last_start_ms = Some(started_ms.saturating_add(ahead));
        Some(saved)
    }

    /// Notes that `saved` (from [`Host::reservation_for`]) is committed.
    pub(crate) fn reserved(&self, saved: &SavedHost) {
        let mut state = self.state();
        if let Some(until) = saved.last_start_ms {
            state.reserved_until_ms = state.reserved_until_ms.max(until);
        }
        if saved.min_interval_ms >= duration_ms_ceil(state.config.min_interval) {
            state.interval_unsaved = false;
        }
    }

    /// How to save the end of a request that just ended at `ended_ms` ([`EndSave`]).
    pub(super) fn end_save(&self, ended_ms: i64) -> EndSave {
        let state = self.state();
        let reserved = state.reserved_until_ms;
        if ended_ms >= reserved {
            return EndSave::Now(self.saved_of(&state));
        }
        if state.end_save_at_ms == reserved {
            return EndSave::Scheduled;
        }
        EndSave::At(reserved)
    }

    /// Notes that a save at the end of the reservation ending at `at_ms` is scheduled.
    pub(super) fn end_save_scheduled(&self, at_ms: i64) {
        let mut state = self.state();
        state.end_save_at_ms = state.end_save_at_ms.max(at_ms);
    }

    /// What to save once the reservation ending at `at_ms` is over ([`EndSave::At`]): while it
    /// is still the host's reservation and no request is in flight, the host's state with its
    /// last end at `at_ms` or later, so that a restart reads the reservation as ended. `None`
    /// when a later reservation replaced it (its requests' ends are saved in their turn), or
    /// when a request is in flight (its end saves itself, or schedules this save again). The reservation is then used up: a request
    /// counted as started after this (whatever its clock reading, which may have been taken
    /// before the reservation's end, or before a step back of the system clock) commits a
    /// reservation of its own before it is sent.
    pub(super) fn deferred_end(&self, at_ms: i64) -> Option<SavedHost> {
        let mut state = self.state();
        if state.reserved_until_ms != at_ms {
            return None;
        }
        if state.in_flight > 0 {
            // Its end, if inside the reservation, schedules this save again.
            state.end_save_at_ms = i64::MIN;
            return None;
        }
        state.reserved_until_ms = i64::MIN;
        let mut saved = self.saved_of(&state);
        saved.last_end_ms = Some(state.last_end_ms.map_or(at_ms, |end| end.max(at_ms)));
        Some(saved)
    }

    /// Takes up what an earlier run left (see [`SavedHost::gate_ms`]): its back-off, and a gate
    /// at the interval then in force after its last request.
    pub(crate) fn restore(&self, saved: &SavedHost, now_ms: i64) {
        let mut state = self.state();
        state.backoff.level = state.backoff.level.max(saved.backoff_level);
        state.backoff.until_ms = state.backoff.until_ms.max(saved.backoff_until_ms);
        state.restored_gate_ms = state.restored_gate_ms.max(saved.gate_ms(now_ms));
        state.last_end_ms = state.last_end_ms.max(saved.ended_ms(now_ms));
        state.retry_after_until_ms = state.retry_after_until_ms.max(saved.retry_after_until_ms);
    }

    /// Marks a request as ended (its permit was dropped).
    fn release(&self, now_ms: i64, permit: Option<OwnedSemaphorePermit>) {
        let mut state = self.state();
        state.in_flight = state.in_flight.saturating_sub(1);
        state.last_end_ms = Some(state.last_end_ms.map_or(now_ms, |end| end.max(now_ms)));
        if let Some(permit) = permit
            && state.permit_debt > 0
        {
            state.permit_debt -= 1;
            permit.forget();
        }
    }
}

impl HostState {
    /// Opens the gate if every time condition holds at `now_ms`.
    fn try_start(&mut self, policy: &BackoffPolicy, now_ms: i64) -> Gate {
        let mut ready = self.backoff.until_ms.max(self.restored_gate_ms);
        if let Some(end) = self.last_end_ms {
            ready = ready.max(end.saturating_add(self.gap_ms(policy)));
        }
        if now_ms < ready {
            return Gate::WaitUntil(ready);
        }
        if let Some(limiter) = &self.limiter
            && let Err(not_until) = limiter.check()
        {
            return Gate::WaitUntil(not_until.earliest_possible().as_ms_ceil());
        }
        self.last_start_ms = Some(now_ms);
        self.in_flight += 1;
        Gate::Open
    }

    /// The quiet gap after a request ends: the interval, stretched while backing off.
    fn gap_ms(&self, policy: &BackoffPolicy) -> i64 {
        duration_ms_ceil(self.backoff.stretch(policy, self.config.min_interval))
    }
}

/// A governor limiter allowing one request per `interval` on `clock`; `None` for zero.
fn limiter_for(interval: Duration, clock: &SharedClock) -> Option<Limiter> {
    let quota = Quota::with_period(interval)?;
    Some(RateLimiter::direct_with_clock(
        quota,
        GovernorClock::new(Arc::clone(clock)),
    ))
}

/// The right to contact one host now. Dropping it ends the request: the host's quiet gap starts
/// then, and the concurrency permit goes back.
#[derive(Debug)]
pub struct HostPermit {
    /// The host this permit belongs to.
    host: Arc<Host>,
    /// When the request was counted as started (clock time, Unix ms).
    started_ms: i64,
    /// The concurrency permit (`None` only if the semaphore was closed, which never happens).
    permit: Option<OwnedSemaphorePermit>,
    /// Clock that stamps the end of the request.
    clock: SharedClock,
    /// Where the end of the request is written, when the pool persists its state.
    pub(super) journal: Option<Journal>,
}

impl HostPermit {
    /// The politeness host this permit is for ([`super::host_key`]).
    pub fn origin(&self) -> &str {
        &self.host.origin
    }

    /// The host, for the pool's journal.
    pub(super) fn host(&self) -> &Arc<Host> {
        &self.host
    }

    /// When the request was counted as started (clock time, Unix ms).
    pub(super) fn started_ms(&self) -> i64 {
        self.started_ms
    }
}

impl Drop for HostPermit {
    fn drop(&mut self) {
        // `now_ms` truncates; rounding the end up keeps the quiet gap a full interval in real
        // time, not one millisecond less.
        let ended_ms = self.clock.now_ms().saturating_add(1);
        self.host.release(ended_ms, self.permit.take());
        if let Some(journal) = self.journal.take() {
            match self.host.end_save(ended_ms) {
                EndSave::Now(saved) => journal.save_later(saved),
                EndSave::At(at_ms) => {
                    let host = Arc::clone(&self.host);
                    if journal.save_at(at_ms, move || host.deferred_end(at_ms)) {
                        self.host.end_save_scheduled(at_ms);
                    }
                }
                EndSave::Scheduled => {}
            }
        }
    }
}
