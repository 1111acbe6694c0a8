//! The cache of read-only calls (issue 27, DESIGN.md §15): the answers of tools a source opts in
//! (`cache: {ttl_secs, public}`, never a destructive tool), kept in memory or in the Redis that
//! `state:` names, so replicas share them.
//!
//! - **Key.** The tool (its served id and version, what the source calls upstream, its results
//!   projection: [`CacheRule::namespace`], hashed once per catalog), the input as sent upstream
//!   in canonical form, and, unless the data is declared `public`, the caller's scope and the
//!   call's `context` (tokens, user id): two callers, or one caller for two users, never share
//!   an entry.
//! - **Lifetime.** What the upstream's `Cache-Control`/`Expires` say when they say anything
//!   (`no-store`: not kept; `private`: not shared), else the rule's `ttl`. An answer with an
//!   `ETag` or `Last-Modified` is kept past its lifetime (up to [`STALE_KEPT`]) to be revalidated
//!   with `If-None-Match`/`If-Modified-Since`: a 304 makes it fresh again without a body.
//! - **Bounds.** Memory: `cache.max_bytes` in all and `cache.max_entries` entries (each entry
//!   weighs at least `max_bytes / max_entries`), least valuable first (quick_cache's policy);
//!   both stores: no entry over `cache.max_entry_bytes`. Redis: every key expires; its own
//!   `maxmemory` policy bounds the rest.
//! - **Failures.** A store that cannot be read is a miss and one that cannot be written is
//!   skipped (logged): the cache never fails a call.

mod memory;
mod redis;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use otc_adapters::Validators;
use otc_mappings::otc::CallContext;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

/// How long an answer that can be revalidated is kept past its lifetime.
pub(crate) const STALE_KEPT: Duration = Duration::from_secs(3600);

/// `cache:` at the top of the configuration file: the store's bounds (what each source keeps is
/// its own `cache:`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CacheStoreConfig {
    /// At most this many answers in memory.
    pub max_entries: usize,
    /// At most this many bytes of answers in memory.
    pub max_bytes: usize,
    /// No answer larger than this (as JSON) is kept, in memory or in Redis.
    pub max_entry_bytes: usize,
}

impl Default for CacheStoreConfig {
    fn default() -> Self {
        Self {
            max_entries: 10_000,
            max_bytes: 64 * 1024 * 1024,
            max_entry_bytes: 1024 * 1024,
        }
    }
}

/// How one tool's answers are kept, compiled from its source's (or override's) `cache:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CacheRule {
    /// How long an answer stays fresh when the upstream says nothing.
    pub(crate) ttl: Duration,
    /// One entry serves every caller.
    pub(crate) public: bool,
    /// What the tool's entries are told apart from other tools' by (see the module's docs).
    pub(crate) namespace: [u8; 32],
}

/// What a caller asked of the cache (its `Cache-Control` request header).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Directive {
    /// Answer from the cache when fresh.
    #[default]
    Use,
    /// `no-cache`: ask the upstream, and keep its answer.
    Refresh,
    /// `no-store`: ask the upstream, keep nothing.
    Bypass,
}

impl Directive {
    /// The directive of a `Cache-Control` request header.
    pub(crate) fn from_headers(headers: &http::HeaderMap) -> Self {
        let mut directive = Self::Use;
        for value in headers.get_all(http::header::CACHE_CONTROL) {
            let Ok(text) = value.to_str() else { continue };
            for part in text.split(',') {
                let name = part.split('=').next().unwrap_or_default().trim();
                if name.eq_ignore_ascii_case("no-store") {
                    return Self::Bypass;
                }
                let max_age_zero =
                    name.eq_ignore_ascii_case("max-age") && part.trim().ends_with("=0");
                if name.eq_ignore_ascii_case("no-cache") || max_age_zero {
                    directive = Self::Refresh;
                }
            }
        }
        directive
    }
}

/// An entry's key: a digest, so that neither input nor credentials are stored in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Key(pub(crate) [u8; 32]);

impl Key {
    /// The key of a call to the tool of `rule` with the upstream `input`, by the caller of
    /// `scope` with `context` (both ignored when the rule is public).
    pub(crate) fn new(
        rule: &CacheRule,
        scope: &str,
        input: &Map<String, Value>,
        context: Option<&CallContext>,
    ) -> Self {
        let mut hash = Sha256::new();
        hash.update(rule.namespace);
        otc_mappings::change::write_sorted_object(input, &mut |bytes| hash.update(bytes));
        hash.update([0]);
        if !rule.public {
            hash.update(b"caller\0");
            hash.update(scope.as_bytes());
            hash.update([0]);
            // No context and an empty one are the same call.
            let context = context
                .and_then(|context| serde_json::to_value(context).ok())
                .unwrap_or_else(|| Value::Object(Map::new()));
            otc_mappings::change::write_sorted(&context, &mut |bytes| hash.update(bytes));
        }
        Self(hash.finalize().into())
    }
}

/// A kept answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Kept {
    /// The value as served (projected).
    pub(crate) value: Value,
    /// Until when it is fresh (milliseconds since the Unix epoch).
    pub(crate) fresh_until_ms: u64,
    /// What to revalidate it with.
    #[serde(default)]
    pub(crate) validators: Validators,
}

impl Kept {
    /// Whether it is still fresh.
    pub(crate) fn is_fresh(&self) -> bool {
        now_ms() < self.fresh_until_ms
    }

    /// How long to keep it: while fresh, and past that for revalidation when it can be.
    fn keep_for(&self) -> Duration {
        let fresh = Duration::from_millis(self.fresh_until_ms.saturating_sub(now_ms()));
        if self.validators.is_empty() {
            fresh
        } else {
            fresh + STALE_KEPT
        }
    }
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

/// The time `ttl` from now, in milliseconds since the Unix epoch.
pub(crate) fn from_now_ms(ttl: Duration) -> u64 {
    now_ms().saturating_add(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX))
}

/// The cache: in memory or in Redis.
#[derive(Debug)]
pub struct ResultCache {
    store: Store,
    max_entry_bytes: usize,
}

#[derive(Debug)]
enum Store {
    /// Made when the first answer is kept: a bridge whose sources keep nothing (or not yet:
    /// a reload may add a source's `cache`) holds no memory for it.
    Memory(std::sync::OnceLock<memory::MemoryStore>, CacheStoreConfig),
    Redis(redis::RedisStore),
}

impl ResultCache {
    /// A cache in memory, bounded by `config`.
    pub fn in_memory(config: &CacheStoreConfig) -> Self {
        Self {
            store: Store::Memory(std::sync::OnceLock::new(), config.clone()),
            max_entry_bytes: config.max_entry_bytes,
        }
    }

    /// A cache in the Redis at `url`, shared by every replica that names it; Redis must be
    /// reachable now.
    pub async fn in_redis(
        url: &str,
        config: &CacheStoreConfig,
    ) -> Result<Self, crate::idempotency::StoreError> {
        Ok(Self {
            store: Store::Redis(redis::RedisStore::connect(url).await?),
            max_entry_bytes: config.max_entry_bytes,
        })
    }

    /// The cache `state` calls for: Redis when it names one, else memory.
    pub async fn for_state(
        state: Option<&str>,
        config: &CacheStoreConfig,
    ) -> Result<Arc<Self>, crate::idempotency::StoreError> {
        Ok(Arc::new(match state.filter(|s| s.starts_with("redis")) {
            Some(url) => Self::in_redis(url, config).await?,
            None => Self::in_memory(config),
        }))
    }

    /// Where answers are kept and how many, in words (for the catalog page).
    pub(crate) fn describe(&self) -> String {
        match &self.store {
            Store::Memory(store, config) => {
                let (entries, bytes) = store.get().map_or((0, 0), memory::MemoryStore::size);
                format!(
                    "in memory: {entries} answers, {} KiB of at most {} KiB",
                    bytes / 1024,
                    config.max_bytes / 1024
                )
            }
            Store::Redis(_) => "in Redis, shared by every replica".to_owned(),
        }
    }

    /// The answer kept under `key`, fresh or not; `None` when there is none (or the store
    /// cannot be read, which is logged).
    pub(crate) async fn get(&self, key: &Key) -> Option<Arc<Kept>> {
        match &self.store {
            Store::Memory(store, _) => store.get()?.get(key),
            Store::Redis(store) => store.get(key).await,
        }
    }

    /// Keeps `kept` under `key`, unless it is larger than an entry may be or has nothing left
    /// to live for.
    pub(crate) async fn put(&self, key: Key, kept: Kept) {
        let keep_for = kept.keep_for();
        if keep_for.is_zero() {
            return;
        }
        let Ok(bytes) = serde_json::to_vec(&kept) else {
            return;
        };
        if bytes.len() > self.max_entry_bytes {
            return;
        }
        match &self.store {
            Store::Memory(store, config) => store
                .get_or_init(|| memory::MemoryStore::new(config))
                .put(key, kept, bytes.len(), keep_for),
            Store::Redis(store) => store.put(&key, &bytes, keep_for).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(public: bool) -> CacheRule {
        CacheRule {
            ttl: Duration::from_secs(60),
            public,
            namespace: [7; 32],
        }
    }

    fn input(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn private_keys_differ_by_caller_and_context_public_ones_do_not() {
        let a = input(json!({"q": "x", "n": 1}));
        let b = input(json!({"n": 1, "q": "x"}));
        let private = rule(false);
        assert_eq!(
            Key::new(&private, "key:1", &a, None),
            Key::new(&private, "key:1", &b, None),
            "key order does not matter"
        );
        assert_ne!(
            Key::new(&private, "key:1", &a, None),
            Key::new(&private, "key:2", &a, None)
        );
        let context = CallContext {
            user_id: Some("alice".to_owned()),
            ..Default::default()
        };
        assert_ne!(
            Key::new(&private, "", &a, None),
            Key::new(&private, "", &a, Some(&context))
        );
        let public = rule(true);
        assert_eq!(
            Key::new(&public, "key:1", &a, Some(&context)),
            Key::new(&public, "key:2", &a, None)
        );
        assert_ne!(
            Key::new(&public, "", &a, None),
            Key::new(&private, "", &a, None)
        );
    }

    #[test]
    fn a_caller_can_ask_to_refresh_or_bypass() {
        let headers = |value: &'static str| {
            let mut h = http::HeaderMap::new();
            h.insert(
                http::header::CACHE_CONTROL,
                http::HeaderValue::from_static(value),
            );
            h
        };
        assert_eq!(
            Directive::from_headers(&http::HeaderMap::new()),
            Directive::Use
        );
        assert_eq!(
            Directive::from_headers(&headers("no-cache")),
            Directive::Refresh
        );
        assert_eq!(
            Directive::from_headers(&headers("max-age=0")),
            Directive::Refresh
        );
        assert_eq!(
            Directive::from_headers(&headers("No-Cache, no-store")),
            Directive::Bypass
        );
        assert_eq!(
            Directive::from_headers(&headers("max-age=10")),
            Directive::Use
        );
    }

    #[tokio::test]
    async fn memory_keeps_fresh_answers_and_drops_what_has_nothing_to_live_for() {
        let cache = ResultCache::in_memory(&CacheStoreConfig::default());
        let key = Key([1; 32]);
        let kept = Kept {
            value: json!({"a": 1}),
            fresh_until_ms: from_now_ms(Duration::from_secs(60)),
            validators: Validators::default(),
        };
        cache.put(key, kept.clone()).await;
        let got = cache.get(&key).await.unwrap();
        assert!(got.is_fresh());
        assert_eq!(got.value, kept.value);
        // Stale without validators: not kept.
        let other = Key([2; 32]);
        cache
            .put(
                other,
                Kept {
                    fresh_until_ms: now_ms().saturating_sub(1),
                    ..kept.clone()
                },
            )
            .await;
        assert!(cache.get(&other).await.is_none());
        // Stale with validators: kept, to revalidate.
        cache
            .put(
                other,
                Kept {
                    fresh_until_ms: now_ms().saturating_sub(1),
                    validators: Validators {
                        etag: Some("\"v\"".to_owned()),
                        last_modified: None,
                    },
                    ..kept
                },
            )
            .await;
        assert!(!cache.get(&other).await.unwrap().is_fresh());
    }

    #[tokio::test]
    async fn entries_over_the_entry_bound_are_not_kept() {
        let cache = ResultCache::in_memory(&CacheStoreConfig {
            max_entry_bytes: 64,
            ..CacheStoreConfig::default()
        });
        let key = Key([3; 32]);
        cache
            .put(
                key,
                Kept {
                    value: json!("x".repeat(100)),
                    fresh_until_ms: from_now_ms(Duration::from_secs(60)),
                    validators: Validators::default(),
                },
            )
            .await;
        assert!(cache.get(&key).await.is_none());
    }
}
