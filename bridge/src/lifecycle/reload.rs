//! Reload without a restart (issue 13, DESIGN §11): SIGHUP or a watched config file re-reads the
//! configuration and applies only the difference in sources.
//!
//! - A source configured exactly as before keeps running untouched: same adapter, same MCP
//!   child (same pid), same sessions; its calls never notice.
//! - A new source, and the new version of a changed one, are started first. Only when every one
//!   of them is ready is the catalog swapped, in one step; a configuration that does not load, or
//!   a source that does not start, changes nothing (the new ones are stopped) and says why.
//! - A removed source, and the old version of a changed one, leave the catalog at the swap; they
//!   are stopped once the calls that started before it have finished (each call holds the
//!   catalog it started with), or after the drain deadline.
//!
//! Here only sources are reloaded; the command that serves swaps authentication, policies and
//! rate limits in one step once the sources are ([`crate::server::AppState::set_rules`]). The
//! listener and `limits:` (body size, call timeout) need a restart.
//!
//! Reading the changed configuration never runs on the async runtime ([`OffRuntime`]): a file is
//! read and parsed on a blocking thread, waited for at most [`READ_DEADLINE`], while `/health`
//! and calls are answered (issue 25: a FIFO, or a file slow to parse, held them before).

use std::sync::Arc;
use std::time::Duration;

use otc_adapters::{Adapter, BuildContext};
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

use crate::catalog::registry::{Catalog, SharedCatalog, SourceTools};
use crate::config::Config;
use crate::config::sources::Source;
use crate::lifecycle::start::{spawn_refresher, start_sources};

/// How long reading and resolving a changed configuration may take before the reload gives up.
/// Every bound of reading is far below it (a configuration is at most 16 MiB and its text is
/// refused early when hostile); it is for what no bound covers, a disk or network file system
/// that stops answering.
pub const READ_DEADLINE: Duration = Duration::from_secs(10);

/// Why a read off the runtime gave no result.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OffRuntimeError {
    /// The deadline passed; the read goes on, alone, on its thread.
    #[error("reading took longer than {} s", .0.as_secs_f64())]
    Deadline(Duration),
    /// A read that passed its deadline is still running: a thread is not started per attempt.
    #[error("an earlier read that passed its deadline is still running")]
    Busy,
    /// The read panicked.
    #[error("reading failed: {0}")]
    Failed(String),
}

/// Runs blocking reads (a configuration file: its I/O and its parse) on a blocking thread, one
/// at a time, each waited for at most a deadline. A read cannot be cancelled: one that passes its
/// deadline keeps the only permit until it ends, so a read that never ends holds one thread, not
/// one per SIGHUP.
#[derive(Debug)]
pub struct OffRuntime {
    permit: Arc<Semaphore>,
    deadline: Duration,
}

impl OffRuntime {
    /// Reads waited for at most `deadline`.
    pub fn new(deadline: Duration) -> Self {
        Self {
            permit: Arc::new(Semaphore::new(1)),
            deadline,
        }
    }

    /// Runs `read` on a blocking thread; its result, or why there is none.
    pub async fn run<T: Send + 'static>(
        &self,
        read: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, OffRuntimeError> {
        let permit = Arc::clone(&self.permit)
            .try_acquire_owned()
            .map_err(|_| OffRuntimeError::Busy)?;
        let task = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            read()
        });
        match tokio::time::timeout(self.deadline, task).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(join)) => Err(OffRuntimeError::Failed(join.to_string())),
            Err(_) => Err(OffRuntimeError::Deadline(self.deadline)),
        }
    }
}

/// One source as it runs.
struct Running {
    source: Source,
    adapter: Arc<dyn Adapter>,
    refresher: Option<JoinHandle<()>>,
}

/// Why a reload changed nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReloadError {
    /// New or changed sources did not start; all of them are stopped again.
    #[error("{}", not_started(.failures))]
    NotStarted {
        /// Each source that did not start, and why (its cause chain).
        failures: Vec<(String, String)>,
    },
}

/// The words of [`ReloadError::NotStarted`].
fn not_started(failures: &[(String, String)]) -> String {
    let each: Vec<String> = failures
        .iter()
        .map(|(name, why)| format!("{name}: {why}"))
        .collect();
    format!(
        "{} did not start, so nothing changed: {}",
        if failures.len() == 1 {
            "a source"
        } else {
            "some sources"
        },
        each.join("; ")
    )
}

/// What a reload changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Reloaded {
    /// Sources started (new ones).
    pub added: Vec<String>,
    /// Sources replaced by their new configuration.
    pub changed: Vec<String>,
    /// Sources stopped.
    pub removed: Vec<String>,
    /// Sources left running as they were.
    pub unchanged: Vec<String>,
}

/// Applies new configurations to a running catalog.
pub struct Reloader {
    catalog: SharedCatalog,
    build: BuildContext,
    running: Vec<Running>,
    drain: Duration,
}

impl std::fmt::Debug for Reloader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reloader")
            .field("sources", &self.running.len())
            .finish_non_exhaustive()
    }
}

impl Reloader {
    /// Takes over the sources serving `catalog` (started from `sources`), and keeps their tool
    /// lists fresh. `drain` is how long a stopped source's calls may still take.
    pub fn new(
        catalog: SharedCatalog,
        build: BuildContext,
        sources: &[Source],
        drain: Duration,
    ) -> Self {
        let current = catalog.current();
        let running = current
            .sources()
            .iter()
            .filter_map(|tools| {
                let source = sources
                    .iter()
                    .find(|s| s.name == tools.adapter.name())?
                    .clone();
                Some(Running {
                    source,
                    adapter: Arc::clone(&tools.adapter),
                    refresher: spawn_refresher(&catalog, tools),
                })
            })
            .collect();
        Self {
            catalog,
            build,
            running,
            drain,
        }
    }

    /// Applies `config`'s sources: see the module docs. `Err` says why nothing changed.
    pub async fn apply(&mut self, config: &Config) -> Result<Reloaded, ReloadError> {
        let wanted = &config.sources;
        let mut reloaded = Reloaded::default();
        let mut to_start = Vec::new();
        for source in wanted {
            match self.running.iter().find(|r| r.source.name == source.name) {
                Some(running) if running.source == *source => {
                    reloaded.unchanged.push(source.name.clone());
                }
                Some(_) => {
                    reloaded.changed.push(source.name.clone());
                    to_start.push(source.clone());
                }
                None => {
                    reloaded.added.push(source.name.clone());
                    to_start.push(source.clone());
                }
            }
        }
        reloaded.removed = self
            .running
            .iter()
            .filter(|r| !wanted.iter().any(|s| s.name == r.source.name))
            .map(|r| r.source.name.clone())
            .collect();

        // Start what is new; all of it, or nothing changes.
        let (adapters, started, reports) = start_sources(&to_start, &self.build, |_| {}).await;
        let failures: Vec<(String, String)> = reports
            .iter()
            .filter_map(|r| r.error.as_ref().map(|e| (r.name.clone(), e.clone())))
            .collect();
        if !failures.is_empty() {
            futures::future::join_all(adapters.iter().map(|a| a.shutdown())).await;
            return Err(ReloadError::NotStarted { failures });
        }

        // Which adapter serves each wanted source, in configuration order: running ones as they
        // are, new ones as just started.
        let mut running = Vec::new();
        let mut old = std::mem::take(&mut self.running);
        for source in wanted {
            if reloaded.unchanged.contains(&source.name) {
                if let Some(index) = old.iter().position(|r| r.source.name == source.name) {
                    running.push(old.remove(index));
                }
            } else if let Some(listed) = started
                .sources()
                .iter()
                .find(|t| t.adapter.name() == source.name)
            {
                running.push(Running {
                    source: source.clone(),
                    adapter: Arc::clone(&listed.adapter),
                    refresher: None,
                });
            }
        }
        // The new catalog, built from the catalog as it is at the swap (under the update's
        // lock): a running source's list refreshed meanwhile (an MCP `list_changed`) is kept.
        self.catalog.update(|current| {
            let tools = running
                .iter()
                .filter_map(|entry| {
                    current
                        .sources()
                        .iter()
                        .chain(started.sources())
                        .find(|t| Arc::ptr_eq(&t.adapter, &entry.adapter))
                        .cloned()
                })
                .collect::<Vec<SourceTools>>();
            Catalog::new(tools)
        });
        for duplicate in &self.catalog.current().duplicates {
            tracing::warn!(diagnostic = %duplicate, "Duplicate tool id.");
        }
        // New sources' lists are kept fresh from now on, against the new catalog.
        let now = self.catalog.current();
        for entry in &mut running {
            if entry.refresher.is_none()
                && let Some(listed) = now
                    .sources()
                    .iter()
                    .find(|t| Arc::ptr_eq(&t.adapter, &entry.adapter))
            {
                entry.refresher = spawn_refresher(&self.catalog, listed);
            }
        }
        self.running = running;
        drop(now);

        // What left the catalog stops once its calls are done.
        for gone in old {
            if let Some(refresher) = gone.refresher {
                refresher.abort();
            }
            let drain = self.drain;
            tokio::spawn(async move {
                let adapter = gone.adapter;
                // Its calls are counted by its policy, which every one of its entries shares.
                if !gone.source.policy().drained(drain).await {
                    tracing::warn!(source = %adapter.name(), "Stopping a source with calls still in flight (the reload's drain deadline passed).");
                }
                adapter.shutdown().await;
                tracing::info!(source = %adapter.name(), "Source stopped (reload).");
            });
        }
        Ok(reloaded)
    }

    /// Stops every source (at shutdown).
    pub async fn stop(&mut self) {
        for running in &mut self.running {
            if let Some(refresher) = running.refresher.take() {
                refresher.abort();
            }
        }
        futures::future::join_all(self.running.iter().map(|r| r.adapter.shutdown())).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn issue_25_a_read_past_its_deadline_is_given_up_and_holds_one_thread() {
        let reads = OffRuntime::new(Duration::from_millis(50));
        let (release, stuck) = std::sync::mpsc::channel::<()>();
        let err = reads.run(move || stuck.recv().is_ok()).await.unwrap_err();
        assert!(matches!(err, OffRuntimeError::Deadline(_)), "{err}");
        // While it is stuck, no other read starts.
        let err = reads.run(|| 1).await.unwrap_err();
        assert!(matches!(err, OffRuntimeError::Busy), "{err}");
        // Once it ends, reads run again.
        release.send(()).unwrap();
        let again = async {
            loop {
                match reads.run(|| 2).await {
                    Ok(value) => return value,
                    Err(OffRuntimeError::Busy) => tokio::task::yield_now().await,
                    Err(other) => panic!("{other}"),
                }
            }
        };
        assert_eq!(
            tokio::time::timeout(Duration::from_secs(10), again)
                .await
                .unwrap(),
            2
        );
    }
}
