//! The pool's tests: spacing, back-off, the politeness key, the stop flag, restored state.

use super::*;
use crate::clock::VirtualClock;

fn pool(speed: f64) -> HostPool {
    HostPool::new(Arc::new(VirtualClock::new(1_000_000, speed)))
}

#[test]
fn origins_normalise() {
    let url = Url::parse("HTTP://Example.COM:80/a?b").expect("valid url");
    assert_eq!(origin_of(&url), "http://example.com");
    let url = Url::parse("https://example.com:8443/").expect("valid url");
    assert_eq!(origin_of(&url), "https://example.com:8443");
}

#[test]
fn one_politeness_host_per_server_name_and_port_whatever_the_scheme() {
    for same in [
        "http://Example.COM/a",
        "https://example.com/b",
        "http://example.com:80/",
        "https://example.com:443/",
        "http://example.com:443/",
    ] {
        assert_eq!(key_of(same), "example.com", "{same}");
    }
    assert_eq!(key_of("https://example.com:8443/x"), "example.com:8443");
    assert_eq!(key_of("http://127.0.0.1:8080"), "127.0.0.1:8080");
    assert_eq!(key_of("http://[::1]:9000/"), "[::1]:9000");
    assert_eq!(key_of("example.com:8443"), "example.com:8443");
}

#[tokio::test(start_paused = true)]
async fn http_and_https_of_one_server_share_the_gap() {
    let pool = pool(1.0);
    pool.configure(
        "http://a.test",
        HostConfig {
            min_interval: Duration::from_secs(5),
            concurrency: 1,
        },
    );
    let clock = Arc::clone(pool.clock());
    drop(pool.acquire("http://a.test").await);
    let ended = clock.now_ms();
    drop(pool.acquire("https://a.test").await);
    assert!(
        clock.now_ms() >= ended + 5_000,
        "https went before http's gap"
    );
}

#[tokio::test(start_paused = true)]
async fn a_long_closure_is_refused_and_a_stop_ends_every_wait() {
    let stop = Stop::new();
    let pool = Arc::new(
        pool(1.0)
            .with_stop(stop.clone())
            .with_patience(CLOSED_HOST_PATIENCE),
    );
    let origin = "http://a.test";
    pool.configure(
        origin,
        HostConfig {
            min_interval: Duration::from_secs(600),
            concurrency: 1,
        },
    );
    let t0 = pool.clock().now_ms();
    pool.record(
        origin,
        &Signal::Throttled {
            retry_after: Some(Duration::from_secs(3600)),
        },
    );
    let refused = pool.try_acquire(origin).await.map(|_| ());
    assert!(
        matches!(refused, Err(NotNow::Closed { until_ms }) if until_ms >= t0 + 3_600_000),
        "{refused:?}"
    );
    assert!(pool.closed_beyond_patience(origin).is_some());
    assert_eq!(pool.closed_hosts(t0).len(), 1);
    // Another host, waiting out a ten-minute gap, returns as soon as the stop is set.
    let other = "http://b.test";
    pool.configure(
        other,
        HostConfig {
            min_interval: Duration::from_secs(600),
            concurrency: 1,
        },
    );
    drop(pool.try_acquire(other).await.expect("first request goes"));
    let waiter = tokio::spawn({
        let pool = Arc::clone(&pool);
        async move { pool.try_acquire(other).await.map(|_| ()) }
    });
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(!waiter.is_finished(), "it waits for the gap");
    stop.stop();
    assert_eq!(waiter.await.expect("no panic"), Err(NotNow::Stopping));
    assert!(pool.clock().now_ms() < t0 + 600_000);
}

#[tokio::test(start_paused = true)]
async fn a_restored_host_keeps_its_gap_and_closure() {
    let pool = pool(1.0);
    let clock = Arc::clone(pool.clock());
    let now = clock.now_ms();
    pool.restore(&[
        SavedHost {
            key: "a.test".into(),
            min_interval_ms: 3_000,
            last_start_ms: Some(now - 500),
            last_end_ms: Some(now - 400),
            backoff_level: 0,
            backoff_until_ms: 0,
            retry_after_until_ms: None,
        },
        SavedHost {
            key: "b.test".into(),
            min_interval_ms: 1_000,
            last_start_ms: Some(now - 10_000),
            last_end_ms: Some(now - 9_000),
            backoff_level: 1,
            backoff_until_ms: now + 3_600_000,
            retry_after_until_ms: Some(now + 3_600_000),
        },
    ]);
    // A config from this run's schedule (1 s) does not undo the saved 3 s gap.
    pool.configure(
        "http://a.test",
        HostConfig {
            min_interval: Duration::from_secs(1),
            concurrency: 1,
        },
    );
    assert_eq!(pool.next_allowed_ms("http://a.test"), now + 2_600);
    assert_eq!(pool.next_allowed_ms("https://b.test"), now + 3_600_000);
    drop(pool.acquire("http://a.test").await);
    assert!(clock.now_ms() >= now + 2_600);
}

#[test]
fn crawl_delay_longer_wins() {
    let base = HostConfig {
        min_interval: Duration::from_secs(2),
        concurrency: 1,
    };
    let slower = base.clone().with_crawl_delay(Some(Duration::from_secs(5)));
    assert_eq!(slower.min_interval, Duration::from_secs(5));
    let same = base.clone().with_crawl_delay(Some(Duration::from_secs(1)));
    assert_eq!(same.min_interval, Duration::from_secs(2));
    assert_eq!(base.clone().with_crawl_delay(None), base);
}

#[test]
fn statuses_map_to_signals() {
    let ra = Some(Duration::from_secs(3));
    assert_eq!(
        Signal::from_status(429, ra),
        Signal::Throttled { retry_after: ra }
    );
    assert_eq!(
        Signal::from_status(503, None),
        Signal::Throttled { retry_after: None }
    );
    assert_eq!(Signal::from_status(500, ra), Signal::ServerError);
    assert_eq!(Signal::from_status(404, ra), Signal::Ok);
    assert_eq!(Signal::from_status(304, None), Signal::Ok);
}

#[tokio::test(start_paused = true)]
async fn permits_are_spaced_by_the_interval_in_clock_time() {
    let pool = pool(100.0);
    let origin = "http://a.test";
    pool.configure(
        origin,
        HostConfig {
            min_interval: Duration::from_secs(10),
            concurrency: 1,
        },
    );
    let clock = Arc::clone(pool.clock());
    let mut starts = Vec::new();
    for _ in 0..4 {
        let permit = pool.acquire(origin).await;
        starts.push(clock.now_ms());
        drop(permit);
    }
    for pair in starts.windows(2) {
        assert!(pair[1] - pair[0] >= 10_000, "{starts:?}");
    }
    assert!(pool.next_allowed_ms(origin) >= starts[3] + 10_000);
}

#[tokio::test(start_paused = true)]
async fn the_gap_counts_from_the_end_of_a_request() {
    let pool = pool(1.0);
    let origin = "http://a.test";
    pool.configure(
        origin,
        HostConfig {
            min_interval: Duration::from_millis(200),
            concurrency: 1,
        },
    );
    let clock = Arc::clone(pool.clock());
    let first = pool.acquire(origin).await;
    tokio::time::advance(Duration::from_millis(500)).await;
    let ended = clock.now_ms();
    drop(first);
    let _second = pool.acquire(origin).await;
    assert!(clock.now_ms() >= ended + 200);
}

#[tokio::test(start_paused = true)]
async fn throttling_closes_the_host_until_retry_after() {
    let pool = pool(1.0).with_backoff(BackoffPolicy {
        base: Duration::from_millis(100),
        jitter: 0.0,
        ..BackoffPolicy::default()
    });
    let origin = "http://a.test";
    pool.configure(
        origin,
        HostConfig {
            min_interval: Duration::ZERO,
            concurrency: 1,
        },
    );
    let clock = Arc::clone(pool.clock());
    let t0 = clock.now_ms();
    pool.record(
        origin,
        &Signal::Throttled {
            retry_after: Some(Duration::from_secs(3)),
        },
    );
    assert_eq!(pool.next_allowed_ms(origin), t0 + 3_000);
    let _permit = pool.acquire(origin).await;
    assert!(clock.now_ms() >= t0 + 3_000);
    let status = pool.status(origin).expect("known host");
    assert_eq!(status.backoff_level, 1);
    assert_eq!(status.in_flight, 1);
}

#[tokio::test(start_paused = true)]
async fn lowering_concurrency_takes_effect_as_permits_return() {
    let pool = pool(1.0);
    let origin = "http://a.test";
    let wide = HostConfig {
        min_interval: Duration::ZERO,
        concurrency: 3,
    };
    pool.configure(origin, wide.clone());
    let a = pool.acquire(origin).await;
    let b = pool.acquire(origin).await;
    pool.configure(
        origin,
        HostConfig {
            concurrency: 1,
            ..wide
        },
    );
    drop(a);
    // b is still out and concurrency is now 1: a third request must wait for b.
    let third = tokio::time::timeout(Duration::from_secs(1), pool.acquire(origin)).await;
    assert!(third.is_err(), "a second request ran while b was in flight");
    drop(b);
    let _c = pool.acquire(origin).await;
    assert_eq!(pool.status(origin).map(|s| s.in_flight), Some(1));
}

/// With leases, a permit is only for a host this worker holds, and a lease that ran out while
/// the request waited for its gap sends nothing.
#[tokio::test(start_paused = true)]
async fn a_host_held_elsewhere_gets_no_permit() {
    let held = HeldHosts::new(1_000);
    let pool = Arc::new(pool(1.0).with_held_hosts(held.clone()));
    let now = pool.clock().now_ms();
    let (mine, theirs) = ("http://a.test", "http://b.test");
    pool.configure(
        mine,
        HostConfig {
            min_interval: Duration::from_secs(10),
            concurrency: 1,
        },
    );
    held.hold("a.test", now + 30_000);
    assert_eq!(
        pool.try_acquire(theirs).await.map(|_| ()),
        Err(NotNow::NotHeld)
    );
    drop(
        pool.try_acquire(mine)
            .await
            .expect("held: the first request goes"),
    );
    // The lease is cut short while the next request waits out its 10 s gap.
    let waiter = tokio::spawn({
        let pool = Arc::clone(&pool);
        async move { pool.try_acquire(mine).await.map(|_| ()) }
    });
    tokio::time::sleep(Duration::from_secs(1)).await;
    held.hold("a.test", now + 5_000);
    assert_eq!(waiter.await.expect("no panic"), Err(NotNow::NotHeld));
}

#[test]
fn a_reservation_committed_with_a_shorter_interval_covers_nothing_once_it_grew() {
    let clock: SharedClock = Arc::new(crate::clock::ManualClock::new(1_000_000));
    let fast = HostConfig {
        min_interval: Duration::from_millis(100),
        concurrency: 1,
    };
    let host = Host::new("a.test".into(), fast.clone(), Arc::default(), &clock);
    let reservation = host
        .reservation_for(1_000_000, RESERVED_STARTS_MS)
        .expect("nothing covers the first request");
    // A Crawl-delay is learnt while the reservation is being committed.
    let slower = HostConfig {
        min_interval: Duration::from_millis(300),
        ..fast
    };
    host.configure(slower, &clock);
    host.reserved(&reservation);
    let next = host
        .reservation_for(1_000_400, RESERVED_STARTS_MS)
        .expect("the longer interval is committed, though the start is covered");
    assert_eq!(next.min_interval_ms, 300);
    host.reserved(&next);
    assert!(
        host.reservation_for(1_000_500, RESERVED_STARTS_MS)
            .is_none()
    );
}
