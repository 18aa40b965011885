//! Rates: turns at a slot, booked or queued for, holds, concurrent slots, a host's requests
//! spaced from the last one's end, and fixed windows.

use std::sync::Arc;
use std::time::Duration;

use trawl_store::{Entry, Rates, Store, Turn};

async fn rate_limiter_spaces_requests(store: Arc<dyn Store>) {
    let interval = Duration::from_secs(2);
    assert_eq!(
        store.rate_acquire("a.test", interval).await.unwrap(),
        Duration::ZERO
    );
    let wait = store.rate_acquire("a.test", interval).await.unwrap();
    assert!(
        wait > Duration::from_millis(1000) && wait <= interval,
        "{wait:?}"
    );
    // Another host is independent.
    assert_eq!(
        store.rate_acquire("b.test", interval).await.unwrap(),
        Duration::ZERO
    );
    // Many concurrent callers: exactly one slot is handed out.
    let granted = futures_count(&store, "c.test", interval, 20).await;
    assert_eq!(granted, 1);
    store.delete_all().await.unwrap();
}

async fn futures_count(store: &Arc<dyn Store>, host: &str, interval: Duration, n: usize) -> usize {
    let tasks: Vec<_> = (0..n)
        .map(|_| {
            let store = Arc::clone(store);
            let host = host.to_owned();
            tokio::spawn(async move { store.rate_acquire(&host, interval).await.unwrap() })
        })
        .collect();
    let mut granted = 0;
    for t in tasks {
        if t.await.unwrap().is_zero() {
            granted += 1;
        }
    }
    granted
}

async fn rate_reservations_book_successive_slots(store: Arc<dyn Store>) {
    let (interval, within) = (Duration::from_millis(500), Duration::from_secs(2));
    // Five callers at once book five slots half a second apart; the sixth's would be 2.5 s
    // off, beyond what it waits, and takes nothing.
    let tasks: Vec<_> = (0..6)
        .map(|_| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                store
                    .rate_reserve("r.test", interval, within)
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut booked = Vec::new();
    let mut busy = Vec::new();
    for t in tasks {
        match t.await.unwrap() {
            Turn::Reserved(wait) => booked.push(wait),
            Turn::Busy(wait) => busy.push(wait),
        }
    }
    booked.sort();
    assert_eq!(booked.len(), 5, "{booked:?} {busy:?}");
    assert_eq!(booked[0], Duration::ZERO);
    for pair in booked.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(
            gap >= Duration::from_millis(450) && gap <= Duration::from_millis(550),
            "booked {booked:?}"
        );
    }
    assert!(busy.len() == 1 && busy[0] > within, "{busy:?}");
    // A plain acquire sees the bookings.
    let wait = store.rate_acquire("r.test", interval).await.unwrap();
    assert!(wait > within, "{wait:?}");
    store.delete_all().await.unwrap();
}

async fn waiters_at_a_rate_limit_take_places_an_interval_apart(store: Arc<dyn Store>) {
    let interval = Duration::from_millis(200);
    let mut waits = Vec::new();
    for _ in 0..5 {
        waits.push(store.rate_queue("q.test", interval).await.unwrap());
    }
    assert_eq!(waits[0], Duration::ZERO, "a free slot is taken at once");
    for (i, pair) in waits.windows(2).enumerate().skip(1) {
        let gap = pair[1] - pair[0];
        assert!(
            gap >= Duration::from_millis(190) && gap <= Duration::from_millis(210),
            "place {i}: {waits:?}"
        );
    }
    // A place is not the turn: the slot itself moved only for the first caller.
    let wait = store.rate_acquire("q.test", interval).await.unwrap();
    assert!(
        wait > Duration::from_millis(100) && wait <= interval,
        "{wait:?}"
    );
    store.delete_all().await.unwrap();
}

async fn rate_hold_pushes_the_next_slot_out(store: Arc<dyn Store>) {
    let interval = Duration::from_millis(10);
    store
        .rate_hold("held.test", Duration::from_secs(3))
        .await
        .unwrap();
    let wait = store.rate_acquire("held.test", interval).await.unwrap();
    assert!(wait > Duration::from_secs(2), "{wait:?}");
    // A shorter hold never pulls the slot nearer.
    store
        .rate_hold("held.test", Duration::from_millis(1))
        .await
        .unwrap();
    let wait = store.rate_acquire("held.test", interval).await.unwrap();
    assert!(wait > Duration::from_secs(2), "{wait:?}");
    store.delete_all().await.unwrap();
}

async fn slots_cap_concurrency_and_free_on_release_or_expiry(store: Arc<dyn Store>) {
    let lease = Duration::from_secs(30);
    assert!(store.slot_acquire("h", "a", 2, lease).await.unwrap());
    assert!(store.slot_acquire("h", "b", 2, lease).await.unwrap());
    assert!(!store.slot_acquire("h", "c", 2, lease).await.unwrap());
    // A holder renewing its own slot is not refused.
    assert!(store.slot_acquire("h", "a", 2, lease).await.unwrap());
    assert_eq!(store.slot_holders("h").await.unwrap(), ["a", "b"]);
    store.slot_release("h", "a").await.unwrap();
    assert!(store.slot_acquire("h", "c", 2, lease).await.unwrap());
    assert_eq!(store.slot_holders("h").await.unwrap(), ["b", "c"]);
    assert!(store.slot_holders("none").await.unwrap().is_empty());
    // A crashed holder's lease runs out.
    let short = Duration::from_millis(200);
    assert!(store.slot_acquire("x", "dead", 1, short).await.unwrap());
    assert!(!store.slot_acquire("x", "live", 1, short).await.unwrap());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(store.slot_holders("x").await.unwrap().is_empty());
    assert!(store.slot_acquire("x", "live", 1, short).await.unwrap());
    store.delete_all().await.unwrap();
}

async fn a_hosts_next_request_goes_an_interval_after_the_last_ones_end(store: Arc<dyn Store>) {
    let (lease, interval) = (Duration::from_secs(30), Duration::from_millis(300));
    let within = Duration::from_secs(1);
    let ms = Duration::from_millis;
    let enter = |token: &'static str, limit, within| {
        let store = Arc::clone(&store);
        async move {
            (store.host_enter("h.test", token, limit, lease, interval, within))
                .await
                .unwrap()
        }
    };
    assert_eq!(enter("a", 1, within).await, Entry::Go(Duration::ZERO));
    assert_eq!(enter("b", 1, within).await, Entry::Full);
    // "a" takes 150 ms: the next send counts its interval from a's end, not a's send.
    tokio::time::sleep(ms(150)).await;
    store.host_leave("h.test", "a", interval).await.unwrap();
    let Entry::Go(wait) = enter("b", 1, within).await else {
        panic!("b gets the free slot");
    };
    assert!(wait > ms(250) && wait <= interval, "{wait:?}");
    assert_eq!(store.slot_holders("host:h.test").await.unwrap(), ["b"]);
    // The next turn booked after a's end comes no sooner either.
    let Turn::Reserved(turn) = store.rate_reserve("h.test", ms(10), within).await.unwrap() else {
        panic!("a turn within a second is booked");
    };
    assert!(turn > ms(250), "{turn:?}");
    // A second slot is free, but the host's next send (after b's) is beyond what "c" waits
    // for: it takes nothing.
    match enter("c", 2, ms(100)).await {
        Entry::Later(wait) => assert!(wait > ms(500), "{wait:?}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(store.slot_holders("host:h.test").await.unwrap(), ["b"]);
    store.delete_all().await.unwrap();
}

async fn window_counts_reset_after_the_window(store: Arc<dyn Store>) {
    let window = Duration::from_millis(300);
    for n in 1..=3 {
        assert_eq!(store.window_count("w", window).await.unwrap(), n);
    }
    assert_eq!(store.window_count("other", window).await.unwrap(), 1);
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(store.window_count("w", window).await.unwrap(), 1);
    store.delete_all().await.unwrap();
}

async fn window_additions_stay_within_their_limit(store: Arc<dyn Store>) {
    let window = Duration::from_millis(400);
    assert_eq!(store.window_add("q", 6, 10, window).await.unwrap(), Some(6));
    // Over the limit: refused whole, nothing taken.
    assert_eq!(store.window_add("q", 5, 10, window).await.unwrap(), None);
    assert_eq!(
        store.window_add("q", 4, 10, window).await.unwrap(),
        Some(10)
    );
    // Given back (a submission that failed after taking its share), then taken again.
    assert_eq!(
        store.window_add("q", -4, 10, window).await.unwrap(),
        Some(6)
    );
    assert_eq!(
        store.window_add("q", -100, 10, window).await.unwrap(),
        Some(0)
    );
    assert_eq!(store.window_add("q", 3, 10, window).await.unwrap(), Some(3));
    assert_eq!(
        store.window_add("other", 10, 10, window).await.unwrap(),
        Some(10)
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        store.window_add("q", 10, 10, window).await.unwrap(),
        Some(10)
    );
    store.delete_all().await.unwrap();
}

/// Two separate connections (as two worker processes would have) share one limiter.
#[tokio::test]
async fn redis_rate_limiter_is_shared_between_connections() {
    let prefix = crate::unique_prefix();
    let a = crate::redis_at(&prefix).await;
    let b = crate::redis_at(&prefix).await;
    let interval = Duration::from_secs(5);
    assert!(a
        .rate_acquire("shared.test", interval)
        .await
        .unwrap()
        .is_zero());
    assert!(!b
        .rate_acquire("shared.test", interval)
        .await
        .unwrap()
        .is_zero());
    a.delete_all().await.unwrap();
}

both! {
    rate_limiter_spaces_requests,
    rate_reservations_book_successive_slots,
    waiters_at_a_rate_limit_take_places_an_interval_apart,
    rate_hold_pushes_the_next_slot_out,
    slots_cap_concurrency_and_free_on_release_or_expiry,
    a_hosts_next_request_goes_an_interval_after_the_last_ones_end,
    window_counts_reset_after_the_window,
    window_additions_stay_within_their_limit,
}
