//! A real `redis-server` on loopback (Debian's package, unpacked by scripts/install-redis.sh):
//! the state replicas share (idempotency, rate limits).

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, Command};

use crate::http::free_port;

/// A running `redis-server`, killed when dropped.
#[derive(Debug)]
pub struct RedisServer {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
}

impl RedisServer {
    /// Starts one without persistence on a free port and waits until it accepts connections.
    pub async fn start() -> Self {
        let corpus = otc_fixtures::corpus_dir().expect("OTC_CORPUS_DIR: run scripts/test.sh");
        let server = corpus.join("redis/bin/redis-server");
        assert!(server.is_file(), "run scripts/install-redis.sh");
        let port = free_port();
        let mut child = Command::new(&server)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--loglevel", "notice"])
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let ready = async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if line.contains("Ready to accept connections") {
                    return;
                }
            }
            panic!("redis-server stopped before it was ready");
        };
        tokio::time::timeout(Duration::from_secs(30), ready)
            .await
            .expect("redis-server was not ready within 30 s");
        // Its log is not read any more: drained, so the pipe never fills.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Self { child, port }
    }

    /// `redis://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Kills it (Redis going away mid-run).
    pub async fn kill(&mut self) {
        let _ = self.child.kill().await;
    }
}
