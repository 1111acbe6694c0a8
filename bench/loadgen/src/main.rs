//! `otc-loadgen`: a closed-loop load generator for the benchmarks in `bench/`.
//!
//! `--concurrency N` clients each send one `POST` with the given body, wait for the whole
//! response, and send the next, for `--duration-secs` after `--warmup-secs`. Connections are kept
//! alive (one per client), so the numbers measure the server, not TCP set-up. A response whose
//! status is not `--expect-status`, or whose body lacks `--expect` when given, is an error.
//!
//! ```text
//! otc-loadgen --url http://127.0.0.1:8080/tools/call --body '{"request":{…}}' \
//!     --concurrency 8 --duration-secs 5 --label bridge
//! bridge c=8 calls=41230 rps=8246 p50_us=912 p90_us=1301 p99_us=2210 max_us=6012 errors=0
//! ```
//!
//! With `--mcp-stdio CMD` instead of `--url`, the load goes to an MCP server over its own pipe,
//! `--body` being the `params` of each `tools/call` ([`pipe`]): the limit a bridge in front of it
//! is measured against.

mod pipe;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Args {
    url: String,
    mcp_stdio: Option<String>,
    body: String,
    headers: Vec<(String, String)>,
    concurrency: usize,
    duration: Duration,
    warmup: Duration,
    expect_status: u16,
    expect: Option<String>,
    label: String,
}

/// The command line's flags (without the program's name).
fn parse(argv: impl IntoIterator<Item = String>) -> Result<Args, String> {
    let mut args = Args {
        url: String::new(),
        mcp_stdio: None,
        body: String::new(),
        headers: Vec::new(),
        concurrency: 1,
        duration: Duration::from_secs(5),
        warmup: Duration::from_secs(1),
        expect_status: 200,
        expect: None,
        label: "run".to_owned(),
    };
    let mut it = argv.into_iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--url" => args.url = value()?,
            "--mcp-stdio" => args.mcp_stdio = Some(value()?),
            "--body" => args.body = value()?,
            "--header" => {
                let v = value()?;
                let (k, v) = v.split_once(':').ok_or("--header takes NAME:VALUE")?;
                args.headers
                    .push((k.trim().to_owned(), v.trim().to_owned()));
            }
            "--concurrency" => args.concurrency = number(&value()?)?.max(1),
            "--duration-secs" => args.duration = Duration::from_secs(number(&value()?)? as u64),
            "--warmup-secs" => args.warmup = Duration::from_secs(number(&value()?)? as u64),
            "--expect-status" => args.expect_status = number(&value()?)? as u16,
            "--expect" => args.expect = Some(value()?),
            "--label" => args.label = value()?,
            other => return Err(format!("unknown flag {other}")),
        }
    }
    if args.url.is_empty() == args.mcp_stdio.is_none() {
        return Err("one of --url and --mcp-stdio is required".to_owned());
    }
    if args.mcp_stdio.is_some() && !args.headers.is_empty() {
        // A pipe has no headers: refused rather than dropped without a word.
        return Err("--header applies to --url only, not to --mcp-stdio".to_owned());
    }
    Ok(args)
}

fn number(s: &str) -> Result<usize, String> {
    s.parse().map_err(|_| format!("`{s}` is not a number"))
}

/// What one client saw.
#[derive(Default)]
struct Tally {
    latencies_us: Vec<u32>,
    errors: u64,
    first_error: Option<String>,
}

impl Tally {
    /// Records the outcome of a request sent at `sent` and answered now.
    fn record(&mut self, sent: Instant, outcome: Result<(), String>) {
        match outcome {
            Ok(()) => {
                let us = sent.elapsed().as_micros();
                self.latencies_us
                    .push(u32::try_from(us).unwrap_or(u32::MAX));
            }
            Err(e) => {
                self.errors += 1;
                self.first_error.get_or_insert(e);
            }
        }
    }
}

async fn client(
    http: reqwest::Client,
    args: Arc<Args>,
    measure_from: Instant,
    end: Instant,
) -> Tally {
    let mut tally = Tally::default();
    loop {
        let sent = Instant::now();
        if sent >= end {
            return tally;
        }
        let mut request = http
            .post(&args.url)
            .header("content-type", "application/json")
            .body(args.body.clone());
        for (k, v) in &args.headers {
            request = request.header(k, v);
        }
        let outcome = match request.send().await {
            Ok(response) => {
                let status = response.status().as_u16();
                match response.text().await {
                    Ok(body) if status != args.expect_status => {
                        Err(format!("HTTP {status}: {}", cut(&body)))
                    }
                    Ok(body) => match &args.expect {
                        Some(needle) if !body.contains(needle.as_str()) => {
                            Err(format!("unexpected body: {}", cut(&body)))
                        }
                        _ => Ok(()),
                    },
                    Err(e) => Err(e.to_string()),
                }
            }
            Err(e) => Err(e.to_string()),
        };
        if sent >= measure_from {
            tally.record(sent, outcome);
        }
    }
}

fn cut(s: &str) -> &str {
    let mut end = s.len().min(200);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn percentile(sorted: &[u32], p: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(args) => Arc::new(args),
        Err(message) => {
            eprintln!("otc-loadgen: {message}");
            return ExitCode::FAILURE;
        }
    };
    let tallies = match &args.mcp_stdio {
        Some(command) => pipe::run(command, &args).await.map(|tally| vec![tally]),
        None => http(&args).await,
    };
    let tallies = match tallies {
        Ok(tallies) => tallies,
        Err(e) => {
            eprintln!("otc-loadgen: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut all = Vec::new();
    let mut errors = 0;
    let mut first_error = None;
    for tally in tallies {
        all.extend(tally.latencies_us);
        errors += tally.errors;
        first_error = first_error.or(tally.first_error);
    }
    all.sort_unstable();
    let rps = all.len() as f64 / args.duration.as_secs_f64();
    report(&format!(
        "{} c={} calls={} rps={:.0} p50_us={} p90_us={} p99_us={} max_us={} errors={}",
        args.label,
        args.concurrency,
        all.len(),
        rps,
        percentile(&all, 50.0),
        percentile(&all, 90.0),
        percentile(&all, 99.0),
        all.last().copied().unwrap_or(0),
        errors
    ));
    if let Some(e) = first_error {
        eprintln!("otc-loadgen: first error: {e}");
    }
    if all.is_empty() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// `--concurrency` keep-alive clients POSTing `--body` to `--url`; what each saw.
async fn http(args: &Arc<Args>) -> Result<Vec<Tally>, String> {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(args.concurrency)
        .tcp_nodelay(true)
        .build()
        .map_err(|e| e.to_string())?;
    let start = Instant::now();
    let measure_from = start + args.warmup;
    let end = measure_from + args.duration;
    let tasks: Vec<_> = (0..args.concurrency)
        .map(|_| tokio::spawn(client(http.clone(), Arc::clone(args), measure_from, end)))
        .collect();
    let mut tallies = Vec::new();
    for task in tasks {
        if let Ok(tally) = task.await {
            tallies.push(tally);
        }
    }
    Ok(tallies)
}

/// The result line is the product: it goes to stdout.
#[allow(clippy::print_stdout)]
fn report(line: &str) {
    println!("{line}");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &[&str]) -> Result<Args, String> {
        parse(line.iter().map(|s| (*s).to_owned()))
    }

    #[test]
    fn a_header_is_refused_over_a_pipe_and_taken_over_http() {
        let refused = args(&["--mcp-stdio", "server", "--header", "x-api-key:k"]);
        assert!(refused.is_err_and(|e| e.contains("--url only")));
        let taken = args(&["--url", "http://127.0.0.1:1/", "--header", "x-api-key:k"]).unwrap();
        assert_eq!(taken.headers, [("x-api-key".to_owned(), "k".to_owned())]);
        assert!(args(&["--header", "x:y"]).is_err());
    }
}
