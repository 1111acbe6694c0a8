//! A bridge server on loopback, built from adapters, for end-to-end tests.

use std::sync::Arc;

use otc_adapters::Adapter;
use otc_bridge::{
    AppState, Authenticator, ConnectionLimits, ServerSettings, SharedCatalog, app, serve,
};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A running bridge. Dropping it stops the server.
#[derive(Debug)]
pub struct TestBridge {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl TestBridge {
    /// Starts a bridge serving `adapters` with `settings` and optional authentication, under the
    /// default connection limits.
    pub async fn start(
        adapters: Vec<Arc<dyn Adapter>>,
        settings: ServerSettings,
        auth: Option<Authenticator>,
    ) -> Self {
        Self::start_with_limits(adapters, settings, auth, ConnectionLimits::default()).await
    }

    /// Starts a bridge like [`TestBridge::start`], served by the bridge's own accept loop
    /// ([`otc_bridge::serve`]) under `limits`.
    pub async fn start_with_limits(
        adapters: Vec<Arc<dyn Adapter>>,
        settings: ServerSettings,
        auth: Option<Authenticator>,
        limits: ConnectionLimits,
    ) -> Self {
        let (catalog, reports) = otc_bridge::load_catalog(&adapters).await;
        for report in &reports {
            assert!(
                report.error.is_none(),
                "{}: {:?}",
                report.name,
                report.error
            );
            assert!(
                report.diagnostics.is_empty(),
                "{}: {:?}",
                report.name,
                report.diagnostics
            );
        }
        let state = AppState::new(SharedCatalog::new(catalog), settings, auth);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            serve(listener, app(state), limits, async {
                let _ = stopped.await;
            })
            .await
            .unwrap();
        });
        Self {
            url,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// The URL of `path`.
    pub fn at(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }

    /// Stops the server and waits for in-flight requests to finish (for at most the limits'
    /// `shutdown_timeout`).
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.unwrap();
        }
    }
}

impl Drop for TestBridge {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
