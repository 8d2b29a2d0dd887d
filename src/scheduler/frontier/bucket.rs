//! A site's token bucket (pure): it spreads the site's `requests_per_day` evenly, saves at
//! most a short stretch of it, and says when it will hold the next request and when it will be
//! full, the instants the frontier keys its hosts by.

use crate::clock::MS_PER_DAY;

/// A site's bucket holds this long a stretch of its budget (requests come evenly, not in bursts).
pub const BUCKET_SPAN_MS: f64 = 15.0 * 60_000.0;

/// A site's token bucket: `per_day` requests a day, at most `capacity` saved up.
#[derive(Debug, Clone, PartialEq)]
pub struct Bucket {
    /// Requests per day.
    pub per_day: f64,
    /// Most credit held.
    pub capacity: f64,
    /// Credit at `at_ms` (negative after requests charged beyond it).
    credit: f64,
    /// When `credit` was last brought up to date.
    pub(super) at_ms: i64,
    /// Requests charged less those given back since it was made (what a save compares).
    spent: f64,
}

impl Bucket {
    /// A full bucket for `per_day` requests a day holding `span_ms` of them (at least one).
    pub fn new(per_day: f64, span_ms: f64, now_ms: i64) -> Self {
        let capacity = Self::capacity_of(per_day, span_ms);
        Self {
            per_day: per_day.max(0.0),
            capacity,
            credit: capacity,
            at_ms: now_ms,
            spent: 0.0,
        }
    }

    /// Puts back the credit an earlier run left at `at_ms` (saved by [`Bucket::state`]),
    /// refilled at this bucket's rate since then and held to its capacity: a restart starts
    /// where the last run stopped, not with a full bucket.
    pub fn restore(&mut self, credit: f64, at_ms: i64, now_ms: i64) {
        if !credit.is_finite() {
            return;
        }
        self.credit = credit.min(self.capacity);
        self.at_ms = at_ms.min(now_ms);
        self.refill(now_ms);
    }

    /// The credit now and the instant it is taken at (what [`Bucket::restore`] takes back).
    pub fn state(&mut self, now_ms: i64) -> (f64, i64) {
        self.refill(now_ms);
        (self.credit, self.at_ms)
    }

    /// Requests charged less those given back since it was made.
    pub fn spent(&self) -> f64 {
        self.spent
    }

    fn refill(&mut self, now_ms: i64) {
        if now_ms > self.at_ms {
            let gained = self.per_day * (now_ms - self.at_ms) as f64 / MS_PER_DAY;
            self.credit = (self.credit + gained).min(self.capacity);
            self.at_ms = now_ms;
        }
    }

    /// Credit now.
    pub fn credit(&mut self, now_ms: i64) -> f64 {
        self.refill(now_ms);
        self.credit
    }

    /// Spends `n` requests (the credit may go negative: the next ones wait).
    pub fn charge(&mut self, now_ms: i64, n: f64) {
        self.refill(now_ms);
        self.credit -= n;
        self.spent += n;
    }

    /// Gives back `n` requests charged but not made (never beyond the bucket's capacity).
    pub fn refund(&mut self, now_ms: i64, n: f64) {
        self.refill(now_ms);
        self.credit = (self.credit + n).min(self.capacity);
        self.spent -= n;
    }

    /// When the credit reaches `level` (now if it has).
    pub fn time_of(&mut self, now_ms: i64, level: f64) -> i64 {
        self.refill(now_ms);
        let level = level.min(self.capacity);
        if self.credit >= level {
            return now_ms;
        }
        if self.per_day <= 0.0 {
            return i64::MAX;
        }
        let wait = (level - self.credit) / self.per_day * MS_PER_DAY;
        now_ms.saturating_add(wait.ceil().min(1e15) as i64)
    }

    /// Changes the rate to `per_day`, holding `span_ms` of it at most; answers the credit beyond
    /// that, which is taken out.
    pub fn set_rate(&mut self, per_day: f64, span_ms: f64, now_ms: i64) -> f64 {
        self.refill(now_ms);
        self.per_day = per_day.max(0.0);
        self.capacity = Self::capacity_of(per_day, span_ms);
        let beyond = (self.credit - self.capacity).max(0.0);
        self.credit -= beyond;
        beyond
    }

    /// The most credit a bucket of `per_day` requests a day holding `span_ms` of them holds.
    pub fn capacity_of(per_day: f64, span_ms: f64) -> f64 {
        (per_day.max(0.0) * span_ms / MS_PER_DAY).max(1.0)
    }

    /// Room for more credit now (its capacity less its credit).
    pub fn room(&mut self, now_ms: i64) -> f64 {
        self.refill(now_ms);
        (self.capacity - self.credit).max(0.0)
    }

    /// Adds `n` requests of credit handed over from elsewhere (never beyond the capacity;
    /// nothing is counted as spent or given back).
    pub fn grant(&mut self, now_ms: i64, n: f64) {
        self.refill(now_ms);
        if n > 0.0 {
            self.credit = (self.credit + n).min(self.capacity);
        }
    }

    /// Takes out all its credit (a debt stays), answering how much.
    pub fn take_credit(&mut self, now_ms: i64) -> f64 {
        self.refill(now_ms);
        let taken = self.credit.max(0.0);
        self.credit -= taken;
        taken
    }

    /// When one request may go.
    pub fn ready_at(&mut self, now_ms: i64) -> i64 {
        self.time_of(now_ms, 1.0)
    }

    /// When one request may go, as the bucket's last update promised it: what
    /// [`Bucket::ready_at`] answers at any instant from then until the credit changes but by
    /// its refill, or `i64::MIN` if it held one then: it holds nothing back, and the hosts
    /// waiting on it go by their own due times and gates (keying them at the update's instant
    /// ordered them by when each was last keyed, not by which head was due first).
    pub(super) fn ready_instant(&self) -> i64 {
        self.instant_of(1.0)
    }

    /// When the bucket is full, as its last update promised it (`i64::MIN` if it was then; as
    /// [`Bucket::ready_instant`]).
    pub(super) fn full_instant(&self) -> i64 {
        self.instant_of(self.capacity)
    }

    fn instant_of(&self, level: f64) -> i64 {
        if self.credit >= level.min(self.capacity) {
            return i64::MIN;
        }
        self.clone().time_of(self.at_ms, level)
    }

    /// When it holds a request and when it is full, as promised now.
    pub(super) fn promised(&self) -> (i64, i64) {
        (self.ready_instant(), self.full_instant())
    }

    /// When the bucket is full (from then on, credit is being thrown away).
    pub fn full_at(&mut self, now_ms: i64) -> i64 {
        self.time_of(now_ms, self.capacity)
    }
}
