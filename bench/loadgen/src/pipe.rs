//! `--mcp-stdio CMD`: the MCP server alone, over its own pipe, as fast as it answers.
//!
//! What a bridge in front of an MCP server can at best reach (issue 23: the bridge's calls/s
//! against this limit). The server is spawned with `sh -c CMD`, initialised, and then sent
//! `tools/call` requests whose `params` are `--body`, pipelined: `--concurrency` requests are
//! outstanding at any time, and each answer sends the next. An answer that is a JSON-RPC error,
//! or lacks `--expect`, is an error. Latency is from writing a request to reading its answer.

use std::collections::HashMap;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{ChildStdin, Command};
use tokio::sync::mpsc;

use crate::{Args, Tally};

/// How long the server may take to answer `initialize`.
const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs the pipelined load against `command`; the tally of the measured answers.
pub(crate) async fn run(command: &str, args: &Args) -> Result<Tally, String> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start `{command}`: {e}"))?;
    let stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut lines = BufReader::with_capacity(1 << 16, stdout).lines();
    let mut writer = BufWriter::new(stdin);

    let initialize = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"otc-loadgen","version":"0"}}}"#;
    send(&mut writer, initialize).await?;
    let answered = tokio::time::timeout(INITIALIZE_TIMEOUT, async {
        while let Some(line) = lines.next_line().await.map_err(|e| e.to_string())? {
            if line.contains(r#""id":"init""#) {
                return Ok(());
            }
        }
        Err("the server closed its output before answering `initialize`".to_owned())
    })
    .await
    .map_err(|_| "no answer to `initialize`".to_owned())?;
    answered?;
    send(
        &mut writer,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await?;

    // The writer sends a request for each id it is given; the reader gives it the next id as
    // each answer arrives, so the window stays full.
    let (next, mut ids) = mpsc::unbounded_channel::<u64>();
    let params = args.body.clone();
    let writing = tokio::spawn(async move {
        while let Some(id) = ids.recv().await {
            let line =
                format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}}}"#);
            writer
                .write_all(line.as_bytes())
                .await
                .map_err(|e| e.to_string())?;
            writer.write_all(b"\n").await.map_err(|e| e.to_string())?;
            // Flush only when no other request is waiting: requests go out in batches, as a
            // pipelining client's would.
            if ids.is_empty() {
                writer.flush().await.map_err(|e| e.to_string())?;
            }
        }
        Ok::<_, String>(())
    });

    let start = Instant::now();
    let measure_from = start + args.warmup;
    let end = measure_from + args.duration;
    let mut sent_at = HashMap::with_capacity(args.concurrency);
    let mut next_id = 0;
    let mut send_next = |sent_at: &mut HashMap<u64, Instant>| {
        sent_at.insert(next_id, Instant::now());
        next_id += 1;
        next.send(next_id - 1).map_err(|_| "the writer stopped")
    };
    for _ in 0..args.concurrency {
        send_next(&mut sent_at)?;
    }
    let mut tally = Tally::default();
    while !sent_at.is_empty() {
        let line = match lines.next_line().await {
            Ok(Some(line)) => line,
            Ok(None) => return Err("the server closed its output".to_owned()),
            Err(e) => return Err(e.to_string()),
        };
        let Some(sent) = answer_id(&line).and_then(|id| sent_at.remove(&id)) else {
            continue; // a notification or a log line
        };
        if sent >= measure_from {
            let outcome = if line.contains(r#""error":{"#) || line.contains(r#""isError":true"#) {
                Err(format!("error answer: {}", crate::cut(&line)))
            } else {
                match &args.expect {
                    Some(needle) if !line.contains(needle.as_str()) => {
                        Err(format!("unexpected answer: {}", crate::cut(&line)))
                    }
                    _ => Ok(()),
                }
            };
            tally.record(sent, outcome);
        }
        if Instant::now() < end {
            send_next(&mut sent_at)?;
        }
    }
    drop(next);
    writing.await.map_err(|e| e.to_string())??;
    Ok(tally)
}

async fn send(writer: &mut BufWriter<ChildStdin>, line: &str) -> Result<(), String> {
    writer
        .write_all(line.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    writer.write_all(b"\n").await.map_err(|e| e.to_string())?;
    writer.flush().await.map_err(|e| e.to_string())
}

/// The numeric `id` of an answer line; `None` for a notification or anything else.
fn answer_id(line: &str) -> Option<u64> {
    serde_json::from_str::<serde_json::Value>(line)
        .ok()?
        .get("id")?
        .as_u64()
}
