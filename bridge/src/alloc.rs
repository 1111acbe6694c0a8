//! The binary's allocator: jemalloc, because it gives memory freed after start-up back to the
//! system (glibc's malloc kept ~110 MB of GitHub's freed translation resident; mimalloc between
//! 66 and 160 MB), with how long freed pages are kept for reuse (jemalloc's dirty decay) set for
//! what the process is doing:
//!
//! - a **one-shot command** (`tools`, `check`, `export`): returned at once, so translating peaks
//!   at what is live (`otc-bridge tools` on GitHub's description: 108 MB peak RSS, 132 MB when
//!   pages are kept a second);
//! - a **server starting**: 20 ms, so the documents' translations reuse each other's pages
//!   instead of faulting in fresh ones (returned at once, the 63 corpus documents took 3.3 s
//!   instead of 2.0 s, most of it in the kernel);
//! - a **server serving**: one second, so a call's buffers are reused by the next call (returned at
//!   once, they cost about 10 % of the MCP echo throughput, bench/mcp/run.sh).
//!
//! Always `MADV_DONTNEED` (`muzzy_decay_ms` 0), never `MADV_FREE`, whose pages count in RSS until
//! the kernel wants them; jemalloc's own thread does the deferred returns, so no call pays for
//! them. Set through `mallctl` at run time, so the binary behaves the same however it was built.

use tikv_jemalloc_ctl::{Access, AsName};

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// What the process is doing, for how long freed pages are kept (see the module docs).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Phase {
    OneShot,
    Starting,
    Serving,
}

/// Tunes the allocator for `phase`.
pub(crate) fn enter(phase: Phase) {
    if let Err(err) = tikv_jemalloc_ctl::background_thread::write(true) {
        tracing::debug!(%err, "jemalloc: no background thread");
    }
    if let Phase::Serving = phase {
        // Through 0 first: jemalloc returns every page kept so far when the delay becomes 0, so
        // the server is ready at the size of what it serves, not a second later.
        set_decay(0);
    }
    set_decay(match phase {
        Phase::OneShot => 0,
        Phase::Starting => 20,
        Phase::Serving => 1000,
    });
}

/// Sets the dirty decay of every arena there is, and of those created later; muzzy decay 0.
fn set_decay(dirty_ms: isize) {
    let mut settings = vec![
        ("arenas.dirty_decay_ms\0".to_owned(), dirty_ms),
        ("arenas.muzzy_decay_ms\0".to_owned(), 0),
    ];
    let arenas = tikv_jemalloc_ctl::arenas::narenas::read().unwrap_or(0);
    for arena in 0..arenas {
        settings.push((format!("arena.{arena}.dirty_decay_ms\0"), dirty_ms));
        settings.push((format!("arena.{arena}.muzzy_decay_ms\0"), 0));
    }
    for (name, value) in settings {
        // An arena index that was never initialised answers an error: nothing to set there.
        let _ = name.as_bytes().name().write(value);
    }
}
