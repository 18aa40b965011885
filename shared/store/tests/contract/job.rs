//! Jobs: a job's fan-in counts each outcome once and grows with its crawls; its counters add
//! up.

use std::sync::Arc;
use std::time::Duration;

use trawl_store::Store;

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

both! {
    fanin_counts_each_outcome_once,
    fanin_extends_once_per_parent_within_the_cap,
    job_counters_add_up,
}
