//! Locks: `p:lock:<name>` holds the holder's token, with the lock's TTL; only that token
//! deletes it.

use std::sync::LazyLock;
use std::time::Duration;

use ::redis::Script;
use async_trait::async_trait;

use super::{backend, ms, RedisStore};
use crate::{Lease, Locks, StoreError};

const UNLOCK_LUA: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
";
static UNLOCK: LazyLock<Script> = LazyLock::new(|| Script::new(UNLOCK_LUA));

#[async_trait]
impl Locks for RedisStore {
    async fn try_lock(&self, name: &str, ttl: Duration) -> Result<Option<Lease>, StoreError> {
        let lease = Lease::new(name);
        let reply: Option<String> = ::redis::cmd("SET")
            .arg(self.key(&["lock", name]))
            .arg(&lease.token)
            .arg("NX")
            .arg("PX")
            .arg(ms(ttl))
            .query_async(&mut self.con())
            .await
            .map_err(backend)?;
        Ok(reply.map(|_| lease))
    }

    async fn unlock(&self, lease: &Lease) -> Result<(), StoreError> {
        UNLOCK
            .key(self.key(&["lock", &lease.name]))
            .arg(&lease.token)
            .invoke_async::<()>(&mut self.con())
            .await
            .map_err(backend)
    }
}
