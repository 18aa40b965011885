//! Budgets: reservations keep to the cap.

use std::sync::Arc;

use trawl_store::Store;

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

both! {
    budget_reservations_keep_to_the_cap,
}
