//! Results cut to the MCP edge's byte budget, kept whole so the caller can read the rest with
//! `read_result` (DESIGN.md §15).
//!
//! Kept per caller (its name and credential scope: a handle another caller guesses finds
//! nothing), for [`KEPT_FOR`], at most [`PER_CALLER_RESULTS`] results and
//! [`PER_CALLER_BYTES`] bytes per caller and [`TOTAL_BYTES`] in all: past a bound the oldest
//! go first. A result bigger than a caller's share is not kept (its cut says so).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::access::Caller;

/// How long a kept result can be read.
pub(crate) const KEPT_FOR: Duration = Duration::from_secs(10 * 60);
/// Results kept per caller.
pub(crate) const PER_CALLER_RESULTS: usize = 16;
/// Bytes kept per caller.
pub(crate) const PER_CALLER_BYTES: usize = 32 << 20;
/// Bytes kept for every caller together.
pub(crate) const TOTAL_BYTES: usize = 256 << 20;

/// The kept results.
#[derive(Debug, Default)]
pub(crate) struct KeptResults {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Per caller key, oldest first.
    by_caller: HashMap<String, VecDeque<Kept>>,
    bytes: usize,
}

#[derive(Debug)]
struct Kept {
    handle: String,
    at: Instant,
    /// The text in the allocation it came in: an `Arc<str>` would copy it, and for a moment
    /// hold a large result twice.
    text: Arc<String>,
}

impl KeptResults {
    /// Keeps `text` for `caller`; its handle, or `None` when it is bigger than a caller's share.
    pub(crate) fn keep(&self, caller: &Caller, text: String) -> Option<String> {
        if text.len() > PER_CALLER_BYTES {
            return None;
        }
        let handle = uuid::Uuid::new_v4().simple().to_string();
        let now = Instant::now();
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.expire(now);
        inner.bytes += text.len();
        let kept = inner.by_caller.entry(key(caller)).or_default();
        kept.push_back(Kept {
            handle: handle.clone(),
            at: now,
            text: Arc::new(text),
        });
        let mut freed = 0;
        while kept.len() > PER_CALLER_RESULTS
            || kept.iter().map(|k| k.text.len()).sum::<usize>() > PER_CALLER_BYTES
        {
            freed += kept.pop_front().map_or(0, |k| k.text.len());
        }
        inner.bytes -= freed;
        while inner.bytes > TOTAL_BYTES && inner.evict_oldest() {}
        Some(handle)
    }

    /// The whole text kept under `handle` for `caller`, if it is still there.
    pub(crate) fn get(&self, caller: &Caller, handle: &str) -> Option<Arc<String>> {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.expire(Instant::now());
        inner
            .by_caller
            .get(&key(caller))?
            .iter()
            .find(|k| k.handle == handle)
            .map(|k| Arc::clone(&k.text))
    }
}

impl Inner {
    /// Drops what was kept longer than [`KEPT_FOR`].
    fn expire(&mut self, now: Instant) {
        let mut freed = 0;
        self.by_caller.retain(|_, kept| {
            while kept
                .front()
                .is_some_and(|k| now.duration_since(k.at) > KEPT_FOR)
            {
                freed += kept.pop_front().map_or(0, |k| k.text.len());
            }
            !kept.is_empty()
        });
        self.bytes -= freed;
    }

    /// Drops the oldest result of any caller; whether there was one.
    fn evict_oldest(&mut self) -> bool {
        let oldest = self
            .by_caller
            .iter()
            .filter_map(|(caller, kept)| kept.front().map(|k| (k.at, caller.clone())))
            .min();
        let Some((_, caller)) = oldest else {
            return false;
        };
        if let Some(kept) = self.by_caller.get_mut(&caller) {
            self.bytes -= kept.pop_front().map_or(0, |k| k.text.len());
            if kept.is_empty() {
                self.by_caller.remove(&caller);
            }
        }
        true
    }
}

/// Whose results they are: the caller's name and credential scope (two keys sharing a name
/// never share results).
fn key(caller: &Caller) -> String {
    format!("{}\u{0}{}", caller.name, caller.scope)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_kept_per_caller_and_bounded() {
        let kept = KeptResults::default();
        let ann = Caller::named("ann");
        let bob = Caller::named("bob");
        let handle = kept.keep(&ann, "[1,2,3]".to_owned()).unwrap();
        assert_eq!(
            kept.get(&ann, &handle).as_deref().map(String::as_str),
            Some("[1,2,3]")
        );
        assert_eq!(kept.get(&bob, &handle), None, "another caller read it");
        assert_eq!(kept.get(&ann, "nope"), None);
        // The oldest go first past the per-caller count.
        let handles: Vec<String> = (0..PER_CALLER_RESULTS)
            .map(|i| kept.keep(&ann, i.to_string()).unwrap())
            .collect();
        assert_eq!(kept.get(&ann, &handle), None);
        assert_eq!(
            kept.get(&ann, &handles[0]).as_deref().map(String::as_str),
            Some("0")
        );
        // Too big for a caller's share: not kept.
        assert_eq!(kept.keep(&bob, "x".repeat(PER_CALLER_BYTES + 1)), None);
        let inner = kept.inner.lock().unwrap();
        let counted: usize = inner
            .by_caller
            .values()
            .flat_map(|k| k.iter().map(|k| k.text.len()))
            .sum();
        assert_eq!(inner.bytes, counted);
    }
}
