//! The discrete-event loop that runs one policy against a world and measures it.
//!
//! Time advances in ticks of an hour. Each tick adds budget credit (globally `budget × pages` per
//! day, per host its limit), lets the policy act (poll feeds, re-plan), then fetches every page due
//! before the tick ends, earliest first, while credit lasts; a page whose host is out of credit
//! waits for the next tick. Age and freshness are integrated exactly between fetches from the
//! page's change times, over the measured window after the warm-up.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::world::World;

/// Ticks per simulated day.
pub const TICKS_PER_DAY: f64 = 24.0;
/// Unspent credit is kept for at most this many days (a crawler does not save up a week).
const CREDIT_HORIZON_DAYS: f64 = 0.25;

/// What one fetch showed the policy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Observation {
    /// Whether the content differs from the previous fetch (by this policy).
    pub changed: bool,
    /// The Last-Modified header, in days, if the host sends one.
    pub last_modified: Option<f64>,
}

/// A revisit policy under simulation.
pub trait Strategy {
    /// The name shown in results.
    fn name(&self) -> &str;
    /// Each page's first due time (`f64::INFINITY`: never). Every page starts with a copy taken at 0.
    fn start(&mut self, world: &World) -> Vec<f64>;
    /// A fetch of `page` at `t` showed `obs`; returns the page's next due time.
    fn on_fetch(&mut self, world: &World, page: usize, t: f64, obs: Observation) -> f64;
    /// Called at the start of every tick: may spend credit (feed polls) and reschedule pages.
    fn on_tick(&mut self, _world: &World, _t: f64, _ctx: &mut TickCtx) {}
}

/// What a policy may do at a tick.
#[derive(Debug)]
pub struct TickCtx<'a> {
    global: &'a mut f64,
    hosts: &'a mut [f64],
    spent: u64,
    reschedule: Vec<(usize, f64)>,
}

impl TickCtx<'_> {
    /// Spends one fetch of `host`'s and the global credit, if both have one.
    pub fn try_spend(&mut self, host: usize) -> bool {
        if *self.global >= 1.0 && self.hosts[host] >= 1.0 {
            *self.global -= 1.0;
            self.hosts[host] -= 1.0;
            self.spent += 1;
            true
        } else {
            false
        }
    }

    /// Makes `page` due at `due` instead of whenever it was.
    pub fn reschedule(&mut self, page: usize, due: f64) {
        self.reschedule.push((page, due));
    }
}

/// A policy's measured result.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PolicyResult {
    /// Time-averaged age in days over pages and the measured window.
    pub mean_age_days: f64,
    /// Fraction of page-time the copy was current.
    pub freshness: f64,
    /// Fetches (including feed polls) in the measured window.
    pub fetches: u64,
}

#[derive(Debug, PartialEq)]
struct Due {
    at: f64,
    page: usize,
    version: u32,
}

impl Eq for Due {}
impl Ord for Due {
    fn cmp(&self, other: &Self) -> Ordering {
        // Earliest first (BinaryHeap is a max-heap); ties by page for determinism.
        other
            .at
            .total_cmp(&self.at)
            .then(other.page.cmp(&self.page))
    }
}
impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Exact age and freshness integrals of one page's copy taken at `copy` and held until `t`,
/// clipped to `[warmup, ∞)`.
fn integrate(next_change: f64, copy: f64, t: f64, warmup: f64) -> (f64, f64) {
    let lo = copy.max(warmup);
    if t <= lo {
        return (0.0, 0.0);
    }
    let fresh = (t.min(next_change) - lo).max(0.0);
    let age = if next_change >= t {
        0.0
    } else {
        let a = lo.max(next_change) - next_change;
        let b = t - next_change;
        (b * b - a * a) / 2.0
    };
    (age, fresh)
}

/// Runs one policy over the world and measures it after `warmup` days.
pub fn run(world: &World, strategy: &mut dyn Strategy, warmup: f64) -> PolicyResult {
    let n = world.pages.len();
    let days = world.config.days;
    let tick = 1.0 / TICKS_PER_DAY;
    let global_per_tick = world.config.budget * n as f64 * tick;
    let global_cap = (global_per_tick * CREDIT_HORIZON_DAYS * TICKS_PER_DAY).max(1.0);
    let mut global = 0.0;
    let mut host_credit = vec![0.0; world.hosts.len()];
    let mut version = vec![0u32; n];
    let mut copy_time = vec![0.0f64; n];
    let (mut age_sum, mut fresh_sum, mut fetches) = (0.0, 0.0, 0u64);
    let mut heap: BinaryHeap<Due> = strategy
        .start(world)
        .into_iter()
        .enumerate()
        .filter(|(_, at)| at.is_finite())
        .map(|(page, at)| Due {
            at,
            page,
            version: 0,
        })
        .collect();
    let ticks = (days * TICKS_PER_DAY).ceil() as usize;
    let mut deferred = Vec::new();
    for k in 0..ticks {
        let (t0, t1) = (k as f64 * tick, ((k + 1) as f64 * tick).min(days));
        global = (global + global_per_tick).min(global_cap);
        for (credit, host) in host_credit.iter_mut().zip(&world.hosts) {
            let per_tick = host.limit_per_day * tick;
            *credit =
                (*credit + per_tick).min((per_tick * CREDIT_HORIZON_DAYS * TICKS_PER_DAY).max(1.0));
        }
        let mut ctx = TickCtx {
            global: &mut global,
            hosts: &mut host_credit,
            spent: 0,
            reschedule: Vec::new(),
        };
        strategy.on_tick(world, t0, &mut ctx);
        if t0 >= warmup {
            fetches += ctx.spent;
        }
        for (page, at) in std::mem::take(&mut ctx.reschedule) {
            version[page] = version[page].wrapping_add(1);
            if at.is_finite() {
                heap.push(Due {
                    at,
                    page,
                    version: version[page],
                });
            }
        }
        while global >= 1.0 {
            let Some(top) = heap.peek() else { break };
            if top.at >= t1 {
                break;
            }
            let Due {
                at,
                page,
                version: v,
            } = heap.pop().expect("peeked");
            if v != version[page] {
                continue;
            }
            let host = world.pages[page].host;
            if host_credit[host] < 1.0 {
                deferred.push(page);
                continue;
            }
            global -= 1.0;
            host_credit[host] -= 1.0;
            let t = at.max(t0);
            let p = &world.pages[page];
            let next_change = p.next_change_after(copy_time[page]);
            let (a, f) = integrate(next_change, copy_time[page], t, warmup);
            age_sum += a;
            fresh_sum += f;
            if t >= warmup {
                fetches += 1;
            }
            let obs = Observation {
                changed: next_change <= t,
                last_modified: world.last_modified(page, t),
            };
            copy_time[page] = t;
            let next = strategy.on_fetch(world, page, t, obs);
            version[page] = version[page].wrapping_add(1);
            if next.is_finite() {
                heap.push(Due {
                    at: next.max(t),
                    page,
                    version: version[page],
                });
            }
        }
        for page in deferred.drain(..) {
            heap.push(Due {
                at: t1,
                page,
                version: version[page],
            });
        }
    }
    for (page, p) in world.pages.iter().enumerate() {
        let (a, f) = integrate(
            p.next_change_after(copy_time[page]),
            copy_time[page],
            days,
            warmup,
        );
        age_sum += a;
        fresh_sum += f;
    }
    let page_days = n as f64 * (days - warmup).max(f64::MIN_POSITIVE);
    PolicyResult {
        mean_age_days: age_sum / page_days,
        freshness: fresh_sum / page_days,
        fetches,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integrals_are_exact() {
        // Copy at 0, change at 1, fetched at 3: stale for 2 days, age integral 2²/2.
        assert_eq!(integrate(1.0, 0.0, 3.0, 0.0), (2.0, 1.0));
        // Measured only from 2: age from 1 to 3 over [2, 3] = (2² - 1²)/2.
        assert_eq!(integrate(1.0, 0.0, 3.0, 2.0), (1.5, 0.0));
        assert_eq!(integrate(f64::INFINITY, 0.0, 3.0, 0.0), (0.0, 3.0));
    }
}
