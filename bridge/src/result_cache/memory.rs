//! The cache in memory: quick_cache's bounded map (S3-FIFO: entries read once go first), each
//! entry weighing its JSON size but at least `max_bytes / max_entries`, so that both bounds
//! hold; an entry past its time is dropped when it is next read.

use std::sync::Arc;
use std::time::{Duration, Instant};

use quick_cache::Weighter;
use quick_cache::sync::Cache;

use super::{CacheStoreConfig, Kept, Key};

#[derive(Debug)]
struct Held {
    kept: Arc<Kept>,
    weight: u64,
    until: Instant,
}

/// An entry weighs what was computed when it was kept.
#[derive(Debug, Clone)]
struct ByWeight;

impl Weighter<Key, Arc<Held>> for ByWeight {
    fn weight(&self, _key: &Key, held: &Arc<Held>) -> u64 {
        held.weight
    }
}

pub(super) struct MemoryStore {
    entries: Cache<Key, Arc<Held>, ByWeight>,
    min_weight: u64,
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryStore")
            .field("entries", &self.entries.len())
            .field("bytes", &self.entries.weight())
            .finish()
    }
}

impl MemoryStore {
    pub(super) fn new(config: &CacheStoreConfig) -> Self {
        let entries = config.max_entries.max(1);
        let bytes = u64::try_from(config.max_bytes).unwrap_or(u64::MAX).max(1);
        let min_weight = (bytes / u64::try_from(entries).unwrap_or(u64::MAX)).max(1);
        Self {
            entries: Cache::with_weighter(entries, bytes, ByWeight),
            min_weight,
        }
    }

    /// How many entries are kept, and their weight in bytes.
    pub(super) fn size(&self) -> (usize, u64) {
        (self.entries.len(), self.entries.weight())
    }

    pub(super) fn get(&self, key: &Key) -> Option<Arc<Kept>> {
        let held = self.entries.get(key)?;
        if Instant::now() >= held.until {
            self.entries.remove(key);
            return None;
        }
        Some(Arc::clone(&held.kept))
    }

    pub(super) fn put(&self, key: Key, kept: Kept, bytes: usize, keep_for: Duration) {
        let weight = u64::try_from(bytes)
            .unwrap_or(u64::MAX)
            .max(self.min_weight);
        let until = Instant::now() + keep_for;
        self.entries.insert(
            key,
            Arc::new(Held {
                kept: Arc::new(kept),
                weight,
                until,
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kept() -> Kept {
        Kept {
            value: json!(1),
            fresh_until_ms: super::super::from_now_ms(Duration::from_secs(60)),
            validators: Default::default(),
        }
    }

    #[test]
    fn at_most_max_entries_are_kept() {
        let store = MemoryStore::new(&CacheStoreConfig {
            max_entries: 10,
            max_bytes: 1 << 20,
            max_entry_bytes: 1 << 20,
        });
        for i in 0..100u8 {
            store.put(Key([i; 32]), kept(), 10, Duration::from_secs(60));
        }
        assert!(store.entries.len() <= 10, "{} entries", store.entries.len());
    }

    #[test]
    fn at_most_max_bytes_are_kept() {
        let store = MemoryStore::new(&CacheStoreConfig {
            max_entries: 1000,
            max_bytes: 10_000,
            max_entry_bytes: 1 << 20,
        });
        for i in 0..100u8 {
            store.put(Key([i; 32]), kept(), 1000, Duration::from_secs(60));
        }
        assert!(store.entries.weight() <= 10_000);
    }

    #[test]
    fn an_entry_past_its_time_is_gone() {
        let store = MemoryStore::new(&CacheStoreConfig::default());
        store.put(Key([1; 32]), kept(), 10, Duration::ZERO);
        assert!(store.get(&Key([1; 32])).is_none());
    }
}
