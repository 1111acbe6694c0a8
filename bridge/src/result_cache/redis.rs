//! The cache in Redis (`state: redis://…`), shared by every replica: one key per entry under
//! `otc-bridge:cache:`, holding the kept answer's JSON and expiring when it has nothing left to
//! live for (its lifetime, plus the time it is kept for revalidation). Every request has the
//! connection's deadline; a failure is a miss or a skipped write, logged, never a failed call.

use std::sync::Arc;
use std::time::Duration;

use redis::AsyncCommands as _;
use redis::aio::ConnectionManager;

use super::{Kept, Key};
use crate::idempotency::StoreError;

const PREFIX: &str = "otc-bridge:cache:";

pub(super) struct RedisStore {
    connection: ConnectionManager,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore").finish_non_exhaustive()
    }
}

fn redis_key(key: &Key) -> String {
    let mut text = String::with_capacity(PREFIX.len() + 64);
    text.push_str(PREFIX);
    otc_mappings::hex::push_hex(&mut text, &key.0);
    text
}

impl RedisStore {
    pub(super) async fn connect(url: &str) -> Result<Self, StoreError> {
        Ok(Self {
            connection: crate::idempotency::connect_redis(url).await?,
        })
    }

    pub(super) async fn get(&self, key: &Key) -> Option<Arc<Kept>> {
        let mut connection = self.connection.clone();
        let bytes: Option<Vec<u8>> = match connection.get(redis_key(key)).await {
            Ok(bytes) => bytes,
            Err(error) => {
                tracing::warn!(%error, "The result cache in Redis cannot be read; calling the upstream.");
                return None;
            }
        };
        // What does not parse is no entry this bridge wrote: a miss.
        serde_json::from_slice(&bytes?).ok().map(Arc::new)
    }

    pub(super) async fn put(&self, key: &Key, bytes: &[u8], keep_for: Duration) {
        let mut connection = self.connection.clone();
        let ms = u64::try_from(keep_for.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        let result: redis::RedisResult<()> = redis::cmd("SET")
            .arg(redis_key(key))
            .arg(bytes)
            .arg("PX")
            .arg(ms)
            .query_async(&mut connection)
            .await;
        if let Err(error) = result {
            tracing::warn!(%error, "The result cache in Redis cannot be written; the answer is not kept.");
        }
    }
}
