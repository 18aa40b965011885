//! Batches: progress counts each job once, a batch closes when its last job ends, ended batches
//! expire, counters add up, and each owner's batches page newest first.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use trawl_store::Store;

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
    store.delete_all().await.unwrap();
}

async fn a_batch_closes_when_its_last_job_ends(store: Arc<dyn Store>) {
    let none = BTreeMap::new();
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

both! {
    batch_progress_counts_each_job_once,
    a_batch_closes_when_its_last_job_ends,
    ended_batches_expire_and_open_ones_stay,
    batch_counters_add_up,
    owner_batches_page_newest_first,
}
