//! The in-memory idempotency store (the default): one process, bounded in entries and bytes,
//! the oldest answers forgotten first, every answer forgotten after the window.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use otc_mappings::otc::CallToolResponse;
use tokio::sync::watch;

use super::{Claim, Fingerprint, Key};

type Shared = Arc<Mutex<Inner>>;

#[derive(Debug)]
pub(super) struct MemoryStore {
    inner: Shared,
}

#[derive(Debug)]
struct Inner {
    window: Duration,
    max_entries: usize,
    max_bytes: usize,
    slots: HashMap<Key, Slot>,
    /// Stored answers, oldest first (an entry whose slot changed since is skipped).
    order: VecDeque<(Instant, Key)>,
    bytes: usize,
}

#[derive(Debug)]
enum Slot {
    /// The first call is running; repeats wait on `done`.
    Pending {
        fingerprint: Fingerprint,
        done: watch::Sender<Option<Arc<CallToolResponse>>>,
    },
    Done {
        fingerprint: Fingerprint,
        response: Arc<CallToolResponse>,
        at: Instant,
        bytes: usize,
    },
}

impl MemoryStore {
    pub(super) fn new(window: Duration, max_entries: usize, max_bytes: usize) -> Self {
        Self {
            inner: Arc::new(Mutex::new(Inner {
                window,
                max_entries: max_entries.max(1),
                max_bytes,
                slots: HashMap::new(),
                order: VecDeque::new(),
                bytes: 0,
            })),
        }
    }

    pub(super) async fn claim(&self, key: Key, fingerprint: Fingerprint) -> Claim {
        loop {
            let mut done = {
                let mut inner = lock(&self.inner);
                inner.expire();
                match inner.slots.get(&key) {
                    None => {
                        let (done, _) = watch::channel(None);
                        inner.slots.insert(key, Slot::Pending { fingerprint, done });
                        return Claim::Run(super::Ticket::Memory(Ticket {
                            inner: Arc::clone(&self.inner),
                            key,
                            fingerprint,
                            finished: false,
                        }));
                    }
                    Some(
                        Slot::Pending { fingerprint: f, .. } | Slot::Done { fingerprint: f, .. },
                    ) if *f != fingerprint => {
                        return Claim::Mismatch;
                    }
                    Some(Slot::Done { response, .. }) => {
                        return Claim::Replay((**response).clone());
                    }
                    Some(Slot::Pending { done, .. }) => done.subscribe(),
                }
            };
            // The first call is in flight: its answer, or (when it was refused or abandoned)
            // another claim.
            if let Ok(answer) = done.wait_for(Option::is_some).await
                && let Some(response) = answer.as_ref()
            {
                return Claim::Replay((**response).clone());
            }
        }
    }
}

fn lock(inner: &Shared) -> MutexGuard<'_, Inner> {
    inner.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Inner {
    /// Forgets answers older than the window.
    fn expire(&mut self) {
        let now = Instant::now();
        while let Some(&(at, key)) = self.order.front() {
            if now.duration_since(at) < self.window {
                break;
            }
            self.order.pop_front();
            self.forget_done(&key, at);
        }
    }

    /// Forgets the answer stored for `key` at `at` (not a newer one).
    fn forget_done(&mut self, key: &Key, at: Instant) {
        if let Some(Slot::Done {
            at: stored, bytes, ..
        }) = self.slots.get(key)
            && *stored == at
        {
            self.bytes -= *bytes;
            self.slots.remove(key);
        }
    }

    /// Forgets the oldest answers until the bounds hold.
    fn shrink(&mut self) {
        while self.slots.len() > self.max_entries || self.bytes > self.max_bytes {
            let Some((at, key)) = self.order.pop_front() else {
                break;
            };
            self.forget_done(&key, at);
        }
    }
}

/// The first call's claim: stores its answer, or releases the key for a repeat to run.
#[derive(Debug)]
pub(super) struct Ticket {
    inner: Shared,
    key: Key,
    fingerprint: Fingerprint,
    finished: bool,
}

impl Ticket {
    /// Keeps `response` for repeats (`None`: the call was refused; a repeat runs again).
    pub(super) fn finish(mut self, response: Option<&CallToolResponse>) {
        self.finished = true;
        let mut inner = lock(&self.inner);
        let Some(Slot::Pending { done, .. }) = inner.slots.remove(&self.key) else {
            return;
        };
        let Some(response) = response else {
            return;
        };
        let bytes = serde_json::to_vec(response).map_or(usize::MAX, |b| b.len());
        let response = Arc::new(response.clone());
        // Repeats already waiting get it whether or not it can be kept.
        done.send_replace(Some(Arc::clone(&response)));
        if bytes > inner.max_bytes {
            return;
        }
        let at = Instant::now();
        inner.slots.insert(
            self.key,
            Slot::Done {
                fingerprint: self.fingerprint,
                response,
                at,
                bytes,
            },
        );
        inner.order.push_back((at, self.key));
        inner.bytes += bytes;
        inner.shrink();
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        // The call was abandoned (its client went away): a repeat may run it.
        if !self.finished {
            let mut inner = lock(&self.inner);
            if matches!(inner.slots.get(&self.key), Some(Slot::Pending { .. })) {
                inner.slots.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use otc_mappings::otc::CallOutcome;

    fn response(value: &str) -> CallToolResponse {
        CallToolResponse {
            call_id: "c".to_owned(),
            duration: None,
            outcome: CallOutcome::Value(Some(serde_json::Value::String(value.to_owned()))),
        }
    }

    async fn run(store: &MemoryStore, key: u8, value: &str) {
        match store.claim([key; 32], [0; 32]).await {
            Claim::Run(super::super::Ticket::Memory(ticket)) => {
                ticket.finish(Some(&response(value)));
            }
            _ => panic!("expected to run"),
        }
    }

    #[tokio::test]
    async fn answers_are_bounded_in_count_and_bytes_and_the_oldest_go_first() {
        let store = MemoryStore::new(Duration::from_secs(600), 3, 10_000);
        for key in 0..5 {
            run(&store, key, "v").await;
        }
        {
            let inner = lock(&store.inner);
            assert_eq!(inner.slots.len(), 3);
            assert!(!inner.slots.contains_key(&[0; 32]) && inner.slots.contains_key(&[4; 32]));
        }
        let small = MemoryStore::new(Duration::from_secs(600), 100, 200);
        for key in 0..10 {
            run(&small, key, "0123456789").await;
        }
        assert!(lock(&small.inner).bytes <= 200);
        // An answer over the byte bound is given to waiters but not kept.
        run(&small, 99, &"x".repeat(500)).await;
        assert!(!lock(&small.inner).slots.contains_key(&[99; 32]));
    }

    #[tokio::test]
    async fn answers_are_forgotten_after_the_window() {
        let store = MemoryStore::new(Duration::from_millis(50), 10, 10_000);
        run(&store, 1, "v").await;
        assert!(matches!(
            store.claim([1; 32], [0; 32]).await,
            Claim::Replay(_)
        ));
        tokio::time::sleep(Duration::from_millis(80)).await;
        assert!(matches!(store.claim([1; 32], [0; 32]).await, Claim::Run(_)));
    }

    #[tokio::test]
    async fn an_abandoned_or_refused_call_lets_a_repeat_run() {
        let store = MemoryStore::new(Duration::from_secs(600), 10, 10_000);
        let Claim::Run(ticket) = store.claim([1; 32], [0; 32]).await else {
            panic!()
        };
        drop(ticket);
        let Claim::Run(super::super::Ticket::Memory(ticket)) = store.claim([1; 32], [0; 32]).await
        else {
            panic!()
        };
        ticket.finish(None);
        let Claim::Run(_running) = store.claim([1; 32], [0; 32]).await else {
            panic!()
        };
        // While it runs, the same call_id with another input is refused.
        assert!(matches!(
            store.claim([1; 32], [9; 32]).await,
            Claim::Mismatch
        ));
    }
}
