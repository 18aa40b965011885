//! API tokens: kept until revoked.

use std::sync::Arc;

use trawl_store::Store;

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

both! {
    tokens_are_kept_until_revoked,
}
