//! One contract suite, run against the in-memory twin and against real Redis
//! (`TRAWL_TEST_REDIS_URL`, default `redis://127.0.0.1:6379/`). Each Redis case uses its own key
//! prefix and deletes its keys at the end.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use trawl_store::{Cache, Entry, LockGuard, MemoryStore, RedisStore, Store, Turn};

fn redis_url() -> String {
    std::env::var("TRAWL_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".into())
}

fn unique_prefix() -> String {
    format!(
        "test-{}-{}",
        std::process::id(),
        uuid::Uuid::now_v7().simple()
    )
}

async fn redis_at(prefix: &str) -> RedisStore {
    RedisStore::connect(&redis_url(), prefix, Duration::from_secs(5))
        .await
        .expect("Redis must run for the contract tests (scripts/services-up)")
}

async fn redis() -> Arc<dyn Store> {
    Arc::new(redis_at(&unique_prefix()).await)
}

fn memory() -> Arc<dyn Store> {
    Arc::new(MemoryStore::new())
}

async fn cache_round_trip_and_expiry(store: Arc<dyn Store>) {
    assert_eq!(
        store
            .cache_get(Cache::Robots, "https://a.test")
            .await
            .unwrap(),
        None
    );
    store
        .cache_put(
            Cache::Robots,
            "https://a.test",
            b"rules",
            Duration::from_secs(60),
        )
        .await
        .unwrap();
    store
        .cache_put(
            Cache::Relevance,
            "https://a.test",
            b"other",
            Duration::from_millis(200),
        )
        .await
        .unwrap();
    assert_eq!(
        store
            .cache_get(Cache::Robots, "https://a.test")
            .await
            .unwrap()
            .unwrap(),
        b"rules"
    );
    assert_eq!(
        store
            .cache_get(Cache::Relevance, "https://a.test")
            .await
            .unwrap()
            .unwrap(),
        b"other"
    );
    let mut expired = false;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if store
            .cache_get(Cache::Relevance, "https://a.test")
            .await
            .unwrap()
            .is_none()
        {
            expired = true;
            break;
        }
    }
    assert!(expired, "a cache entry outlived its TTL");
    store.delete_all().await.unwrap();
}

/// A lock is exclusive until released or expired, and only its holder releases it: a holder
/// that outlived its lease cannot release the lock someone else has taken since.
async fn several_cache_entries_come_back_in_order(store: Arc<dyn Store>) {
    let ttl = Duration::from_secs(60);
    (store.cache_put(Cache::HostLevel, "m.test", b"2", ttl))
        .await
        .unwrap();
    (store.cache_put(Cache::HostBackoff, "n.test", b"5000", ttl))
        .await
        .unwrap();
    let entries = [
        (Cache::HostBackoff, "m.test"),
        (Cache::HostLevel, "m.test"),
        (Cache::HostBackoff, "n.test"),
    ];
    let found = store.cache_get_many(&entries).await.unwrap();
    assert_eq!(found, [None, Some(b"2".to_vec()), Some(b"5000".to_vec())]);
    let one = store.cache_get_many(&entries[1..2]).await.unwrap();
    assert_eq!(one, [Some(b"2".to_vec())]);
    store.delete_all().await.unwrap();
}

async fn locks_are_exclusive_until_released(store: Arc<dyn Store>) {
    let name = "robots:a.test";
    let first = store.try_lock(name, Duration::from_secs(30)).await.unwrap();
    let first = first.expect("a free lock is taken");
    assert!(store
        .try_lock(name, Duration::from_secs(30))
        .await
        .unwrap()
        .is_none());
    store.unlock(&first).await.unwrap();
    let late = (store
        .try_lock(name, Duration::from_millis(100))
        .await
        .unwrap())
    .expect("a released lock is free");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let next = store.try_lock(name, Duration::from_secs(5)).await.unwrap();
    let next = next.expect("an expired lock is free");
    // The late holder finishes and releases: the next holder keeps the lock.
    store.unlock(&late).await.unwrap();
    assert!(store
        .try_lock(name, Duration::from_secs(5))
        .await
        .unwrap()
        .is_none());
    store.unlock(&next).await.unwrap();
    assert!(store
        .try_lock(name, Duration::from_secs(5))
        .await
        .unwrap()
        .is_some());
    store.delete_all().await.unwrap();
}

/// A lock guard lets its lock go however its holder stops: by releasing it, by dropping it
/// (an early return), or by a panic unwinding.
async fn lock_guards_release_on_every_path(store: Arc<dyn Store>) {
    let name = "robots:b.test";
    let ttl = Duration::from_secs(30);
    let held = trawl_store::lock(&store, name, ttl).await.unwrap();
    let held = held.expect("a free lock is taken");
    assert!(trawl_store::lock(&store, name, ttl)
        .await
        .unwrap()
        .is_none());
    held.release().await.unwrap();
    let held = trawl_store::lock(&store, name, ttl).await.unwrap();
    drop(held.expect("a released lock is free"));
    let held = retaken(&store, name).await;
    let holder = tokio::spawn(async move {
        let _held = held;
        panic!("the holder fails");
    });
    assert!(holder.await.unwrap_err().is_panic());
    retaken(&store, name).await.release().await.unwrap();
    store.delete_all().await.unwrap();
}

/// The lock `name`, once a dropped guard's release (in the background) has freed it.
async fn retaken(store: &Arc<dyn Store>, name: &str) -> LockGuard {
    for _ in 0..200 {
        let guard = trawl_store::lock(store, name, Duration::from_secs(30)).await;
        if let Some(guard) = guard.unwrap() {
            return guard;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("a dropped guard left {name} locked");
}

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

async fn fanin_counts_each_outcome_once(store: Arc<dyn Store>) {
    let job = uuid::Uuid::now_v7().to_string();
    let ttl = Duration::from_secs(60);
    assert!(store.fanin_open(&job, 3, b"meta-1", ttl).await.unwrap());
    assert!(
        !store.fanin_open(&job, 5, b"meta-2", ttl).await.unwrap(),
        "re-open must not reset"
    );
    assert_eq!(
        store.fanin_meta(&job).await.unwrap().unwrap(),
        (3, b"meta-1".to_vec())
    );

    let a = store.fanin_record(&job, 0, b"analysed", ttl).await.unwrap();
    assert!(a.newly_recorded && a.received == 1 && !a.complete());
    let again = store.fanin_record(&job, 0, b"failed", ttl).await.unwrap();
    assert!(
        !again.newly_recorded && again.received == 1,
        "a redelivery double-counted"
    );
    store
        .fanin_record(&job, 1, b"irrelevant", ttl)
        .await
        .unwrap();
    let last = store
        .fanin_record(&job, 2, b"too_large", ttl)
        .await
        .unwrap();
    assert!(last.complete() && last.expected == 3);

    let outcomes = store.fanin_outcomes(&job).await.unwrap();
    assert_eq!(outcomes.len(), 3);
    assert_eq!(outcomes[&0], b"analysed", "the first outcome must stick");
    store.delete_all().await.unwrap();
}

async fn fanin_extends_once_per_parent_within_the_cap(store: Arc<dyn Store>) {
    let job = uuid::Uuid::now_v7().to_string();
    let ttl = Duration::from_secs(60);
    assert_eq!(
        store.fanin_extend(&job, 0, b"[]", 3, 5).await.unwrap(),
        None
    );
    store.fanin_open(&job, 2, b"meta", ttl).await.unwrap();
    let a = store
        .fanin_extend(&job, 0, b"a-list", 3, 5)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (a.first, a.granted, a.sources.as_slice()),
        (2, 3, &b"a-list"[..])
    );
    // A redelivery gets the same numbers and the first call's list.
    let again = store
        .fanin_extend(&job, 0, b"other", 9, 5)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(again, a);
    // The job's cap cuts the next parent's share.
    let b = store
        .fanin_extend(&job, 1, b"b-list", 4, 5)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((b.first, b.granted), (5, 2));
    assert_eq!(store.fanin_meta(&job).await.unwrap().unwrap().0, 7);
    let all = store.fanin_extensions(&job).await.unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[&1], b);
    // The job completes only with the crawled sources' outcomes too.
    for idx in 0..6 {
        let f = store.fanin_record(&job, idx, b"o", ttl).await.unwrap();
        assert!(!f.complete(), "complete after {idx}");
    }
    assert!(store
        .fanin_record(&job, 6, b"o", ttl)
        .await
        .unwrap()
        .complete());
    store.delete_all().await.unwrap();
}

async fn batch_progress_counts_each_job_once(store: Arc<dyn Store>) {
    let batch = uuid::Uuid::now_v7().to_string();
    let jobs: Vec<String> = (0..4).map(|i| format!("job-{i}")).collect();
    store.batch_create(&batch, &jobs).await.unwrap();
    let p = store.batch_progress(&batch).await.unwrap().unwrap();
    assert_eq!((p.total, p.finished, p.is_done()), (4, 0, false));
    assert!(store.batches_open().await.unwrap().contains(&batch));

    let outcomes: BTreeMap<String, u32> = [("analysed".to_owned(), 2), ("failed".to_owned(), 1)]
        .into_iter()
        .collect();
    let none = BTreeMap::new();
    assert!(store
        .batch_finish(&batch, "job-0", "done", &outcomes, KEEP)
        .await
        .unwrap());
    assert!(
        !store
            .batch_finish(&batch, "job-0", "done", &outcomes, KEEP)
            .await
            .unwrap(),
        "finished twice"
    );
    assert!(store
        .batch_finish(&batch, "job-1", "partial", &outcomes, KEEP)
        .await
        .unwrap());
    assert!(
        !store
            .batch_finish(&batch, "job-9", "done", &outcomes, KEEP)
            .await
            .unwrap(),
        "unknown job"
    );
    // Outcomes are counted with the job, once.
    let p = store.batch_progress(&batch).await.unwrap().unwrap();
    assert_eq!(p.outcomes.get("analysed"), Some(&4));
    assert_eq!(p.outcomes.get("failed"), Some(&2));
    assert_eq!(
        store
            .batch_job_status(&batch, "job-0")
            .await
            .unwrap()
            .as_deref(),
        Some("done")
    );
    assert_eq!(
        store
            .batch_job_status(&batch, "job-2")
            .await
            .unwrap()
            .as_deref(),
        Some("pending")
    );

    assert!(store.batch_cancel(&batch, KEEP).await.unwrap());
    assert!(!store.batches_open().await.unwrap().contains(&batch));
    let p = store.batch_progress(&batch).await.unwrap().unwrap();
    assert!(p.is_done() && p.cancelled);
    assert_eq!(p.by_status.get("done"), Some(&1));
    assert_eq!(p.by_status.get("partial"), Some(&1));
    assert_eq!(p.by_status.get("cancelled"), Some(&2));
    assert!(
        !store
            .batch_finish(&batch, "job-3", "done", &none, KEEP)
            .await
            .unwrap(),
        "finished after cancel"
    );
    assert_eq!(store.batch_jobs(&batch).await.unwrap().len(), 4);
    assert!(store
        .batch_progress("no-such-batch")
        .await
        .unwrap()
        .is_none());
    assert!(!store.batch_cancel("no-such-batch", KEEP).await.unwrap());

    // A batch closes when its last job ends.
    let single = uuid::Uuid::now_v7().to_string();
    store.batch_create(&single, &["only".into()]).await.unwrap();
    assert!(store.batches_open().await.unwrap().contains(&single));
    assert!(store
        .batch_finish(&single, "only", "done", &none, KEEP)
        .await
        .unwrap());
    assert!(!store.batches_open().await.unwrap().contains(&single));
    store.delete_all().await.unwrap();
}

/// How long an ended batch's record is kept in the tests that do not wait for it to go.
const KEEP: Duration = Duration::from_secs(600);

async fn ended_batches_expire_and_open_ones_stay(store: Arc<dyn Store>) {
    let ttl = Duration::from_millis(300);
    let none = BTreeMap::new();
    let (ended, cancelled, open) = ("b-ended", "b-cancelled", "b-open");
    for batch in [ended, cancelled, open] {
        store
            .batch_create(batch, &["j1".into(), "j2".into()])
            .await
            .unwrap();
        store.batch_add(batch, "spent", 5).await.unwrap();
    }
    for job in ["j1", "j2"] {
        assert!(store
            .batch_finish(ended, job, "done", &none, ttl)
            .await
            .unwrap());
    }
    assert!(store
        .batch_finish(open, "j1", "done", &none, ttl)
        .await
        .unwrap());
    assert!(store.batch_cancel(cancelled, ttl).await.unwrap());
    assert!(store
        .batch_progress(ended)
        .await
        .unwrap()
        .unwrap()
        .is_done());
    tokio::time::sleep(Duration::from_millis(400)).await;
    for batch in [ended, cancelled] {
        assert!(
            store.batch_progress(batch).await.unwrap().is_none(),
            "{batch}"
        );
        assert!(store.batch_jobs(batch).await.unwrap().is_empty(), "{batch}");
        assert_eq!(
            store.batch_counter(batch, "spent").await.unwrap(),
            0,
            "{batch}"
        );
    }
    // A batch with a pending job keeps its record whatever the TTL of its ended jobs.
    let p = store.batch_progress(open).await.unwrap().unwrap();
    assert_eq!((p.total, p.finished), (2, 1));
    assert_eq!(store.batch_counter(open, "spent").await.unwrap(), 5);
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

async fn tokens_are_kept_until_revoked(store: Arc<dyn Store>) {
    store.token_put("h1", b"{\"id\":\"a\"}").await.unwrap();
    store.token_put("h2", b"{\"id\":\"b\"}").await.unwrap();
    assert_eq!(
        store.token_get("h1").await.unwrap().as_deref(),
        Some(&b"{\"id\":\"a\"}"[..])
    );
    assert_eq!(store.tokens().await.unwrap().len(), 2);
    assert!(store.token_delete("h1").await.unwrap());
    assert!(!store.token_delete("h1").await.unwrap());
    assert!(store.token_get("h1").await.unwrap().is_none());
    store.delete_all().await.unwrap();
}

/// An owner's batches list newest first (ids are UUIDv7), page by page from a cursor, and
/// another owner's never show.
async fn owner_batches_page_newest_first(store: Arc<dyn Store>) {
    let ids: Vec<String> = (0..5)
        .map(|_| {
            std::thread::sleep(Duration::from_millis(2));
            uuid::Uuid::now_v7().to_string()
        })
        .collect();
    for id in &ids {
        store.owner_batch_add("alice", id).await.unwrap();
    }
    store.owner_batch_add("bob", "b-only").await.unwrap();
    let newest: Vec<String> = ids.iter().rev().cloned().collect();
    let first = store.owner_batches("alice", None, 2).await.unwrap();
    assert_eq!(first, newest[..2]);
    let second = (store.owner_batches("alice", Some(&first[1]), 2).await).unwrap();
    assert_eq!(second, newest[2..4]);
    let last = (store.owner_batches("alice", Some(&second[1]), 2).await).unwrap();
    assert_eq!(last, newest[4..]);
    assert!((store.owner_batches("alice", Some(&last[0]), 2).await)
        .unwrap()
        .is_empty());
    assert_eq!(
        store.owner_batches("bob", None, 10).await.unwrap(),
        ["b-only"]
    );
    assert!(store
        .owner_batches("carol", None, 10)
        .await
        .unwrap()
        .is_empty());
    store.delete_all().await.unwrap();
}

async fn batch_counters_add_up(store: Arc<dyn Store>) {
    assert_eq!(store.batch_counter("b", "spent_micro").await.unwrap(), 0);
    assert_eq!(store.batch_add("b", "spent_micro", 40).await.unwrap(), 40);
    assert_eq!(store.batch_add("b", "spent_micro", 2).await.unwrap(), 42);
    assert_eq!(store.batch_counter("b", "spent_micro").await.unwrap(), 42);
    // A counter below zero sits in the batch's record beside its progress, which still reads.
    store.batch_create("c", &["j".into()]).await.unwrap();
    assert_eq!(store.batch_add("c", "adjust", -3).await.unwrap(), -3);
    assert_eq!(store.batch_progress("c").await.unwrap().unwrap().total, 1);
    store.delete_all().await.unwrap();
}

/// The budget is a hard cap: reservations racing from many tasks never take more than the
/// budget leaves, a batch without one reserves nothing, and settling moves a reservation into
/// what was spent.
async fn budget_reservations_keep_to_the_cap(store: Arc<dyn Store>) {
    use trawl_store::budget::{BUDGET, REFUSED, RESERVED, SPENT};
    assert_eq!(
        store.budget_reserve("free", 1_000_000).await.unwrap(),
        Some(0)
    );
    store.budget_settle("free", 0, 7).await.unwrap();
    assert_eq!(store.batch_counter("free", RESERVED).await.unwrap(), 0);
    assert_eq!(store.batch_counter("free", SPENT).await.unwrap(), 7);

    store.batch_add("b", BUDGET, 1000).await.unwrap();
    let tries = (0..50).map(|_| {
        let store = Arc::clone(&store);
        tokio::spawn(async move { store.budget_reserve("b", 30).await.unwrap() })
    });
    let mut granted = 0;
    for t in tries {
        match t.await.unwrap() {
            Some(30) => granted += 1,
            None => {}
            other => panic!("reserved {other:?}"),
        }
    }
    assert_eq!(granted, 33, "1000 holds 33 reservations of 30");
    assert_eq!(store.batch_counter("b", RESERVED).await.unwrap(), 990);
    assert_eq!(store.batch_counter("b", REFUSED).await.unwrap(), 17);
    assert_eq!(store.budget_reserve("b", 11).await.unwrap(), None);
    assert_eq!(store.budget_reserve("b", 10).await.unwrap(), Some(10));

    // Two calls end: one cost less than it reserved, one failed and cost nothing.
    store.budget_settle("b", 30, 12).await.unwrap();
    store.budget_settle("b", 30, 0).await.unwrap();
    assert_eq!(store.batch_counter("b", RESERVED).await.unwrap(), 940);
    assert_eq!(store.batch_counter("b", SPENT).await.unwrap(), 12);
    assert_eq!(store.budget_reserve("b", 48).await.unwrap(), Some(48));
    assert_eq!(store.budget_reserve("b", 1).await.unwrap(), None);
    store.delete_all().await.unwrap();
}

async fn job_counters_add_up(store: Arc<dyn Store>) {
    let ttl = Duration::from_secs(60);
    store
        .job_add("j", &[("ms.fetch".into(), 120), ("n.fetch".into(), 1)], ttl)
        .await
        .unwrap();
    store
        .job_add("j", &[("ms.fetch".into(), 30), ("n.fetch".into(), 1)], ttl)
        .await
        .unwrap();
    let c = store.job_counters("j").await.unwrap();
    assert_eq!((c["ms.fetch"], c["n.fetch"]), (150, 2));
    assert!(store.job_counters("other").await.unwrap().is_empty());
    store.delete_all().await.unwrap();
}

macro_rules! both {
    ($($name:ident),* $(,)?) => {
        mod memory_twin {
            $(#[tokio::test] async fn $name() { super::$name(super::memory()).await })*
        }
        mod redis_store {
            $(#[tokio::test] async fn $name() { super::$name(super::redis().await).await })*
        }
    };
}

both! {
    cache_round_trip_and_expiry,
    locks_are_exclusive_until_released,
    lock_guards_release_on_every_path,
    rate_limiter_spaces_requests,
    rate_reservations_book_successive_slots,
    rate_hold_pushes_the_next_slot_out,
    waiters_at_a_rate_limit_take_places_an_interval_apart,
    slots_cap_concurrency_and_free_on_release_or_expiry,
    a_hosts_next_request_goes_an_interval_after_the_last_ones_end,
    several_cache_entries_come_back_in_order,
    fanin_counts_each_outcome_once,
    fanin_extends_once_per_parent_within_the_cap,
    batch_progress_counts_each_job_once,
    job_counters_add_up,
    batch_counters_add_up,
    budget_reservations_keep_to_the_cap,
    tokens_are_kept_until_revoked,
    owner_batches_page_newest_first,
    window_counts_reset_after_the_window,
    window_additions_stay_within_their_limit,
    ended_batches_expire_and_open_ones_stay,
}

/// Two separate connections (as two worker processes would have) share one limiter.
#[tokio::test]
async fn redis_rate_limiter_is_shared_between_connections() {
    let prefix = unique_prefix();
    let a = redis_at(&prefix).await;
    let b = redis_at(&prefix).await;
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

/// Every key but a batch record (and the index of open batches) carries a TTL.
#[tokio::test]
async fn redis_keys_have_ttls_except_batch_records() {
    let prefix = unique_prefix();
    let store = redis_at(&prefix).await;
    let ttl = Duration::from_secs(60);
    store
        .cache_put(Cache::Content, "k", b"v", ttl)
        .await
        .unwrap();
    store.try_lock("l", ttl).await.unwrap();
    store.rate_acquire("h.test", ttl).await.unwrap();
    store.rate_hold("g.test", ttl).await.unwrap();
    store.slot_acquire("h.test", "t", 1, ttl).await.unwrap();
    store.fanin_open("j", 1, b"m", ttl).await.unwrap();
    store.fanin_record("j", 0, b"o", ttl).await.unwrap();
    store.batch_create("b", &["j".into()]).await.unwrap();
    store
        .job_add("j", &[("n.search".into(), 1)], ttl)
        .await
        .unwrap();

    let client = redis::Client::open(redis_url()).unwrap();
    let mut con = client.get_multiplexed_async_connection().await.unwrap();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{prefix}:*"))
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(keys.len(), 11, "{keys:?}");
    for key in keys {
        let ttl: i64 = redis::cmd("PTTL")
            .arg(&key)
            .query_async(&mut con)
            .await
            .unwrap();
        let is_batch = key.starts_with(&format!("{prefix}:batch:"))
            || *key == format!("{prefix}:batches:open");
        assert_eq!(ttl == -1, is_batch, "{key} has PTTL {ttl}");
    }
    store.delete_all().await.unwrap();
}
