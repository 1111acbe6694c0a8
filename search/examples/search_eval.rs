//! Quality and latency of the tool-search index (`otc_search`) on a real catalog: loads
//! every document of an OpenAPI corpus manifest the way `otc-bridge tools --openapi DOC …` does
//! (one source per document, the bridge's own ids), keeps the highest version of each tool (what
//! the MCP layer indexes), builds the index and runs an evaluation set through it.
//!
//! ```sh
//! cargo run --release -p otc-bridge --example search_eval -- \
//!     --manifest ../shared/corpus/openapi/manifest.json \
//!     --queries ../shared/search/dev-queries.json [--scale 10000] [--misses] [--half odd|even]
//!     [--query TEXT [--explain TOOLKIT.TOOL]…] [--dump FILE] [--ranks FILE]
//! ```
//!
//! `--ranks FILE` writes each query's top 50 hits with their scores as JSON lines (for
//! bench/search/embedding, which fuses them with an embedding model's ranking).
//!
//! `bench/search/run.sh` is the entry point; it passes the shared corpus and query set.

#![allow(clippy::print_stdout)] // The report on stdout is this example's product.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use otc_bridge::config::sources::{Source, SourceFlag, SourceKind, make_names_unique};
use otc_bridge::lifecycle::start::start_sources;
use otc_mappings::MappedTool;
use otc_mappings::otc::{Dialect, ToolId};
use otc_search::SearchIndex;
use serde::Deserialize;

/// Where calls would go; nothing is called (the sources are only listed), as in bench/catalog.py.
const LOOPBACK_BASE_URL: &str = "http://127.0.0.1:9/";
/// Hits asked for per query (hit@5 needs 5).
const LIMIT: usize = 5;
/// Timed runs of the whole query set (latency figures are over all of them).
const ROUNDS: usize = 20;

#[derive(Deserialize)]
struct Manifest {
    documents: Vec<ManifestDocument>,
}

#[derive(Deserialize)]
struct ManifestDocument {
    file: String,
}

#[derive(Deserialize)]
struct QuerySet {
    queries: Vec<Query>,
}

#[derive(Deserialize)]
struct Query {
    query: String,
    expect: Vec<String>,
    kind: String,
    #[serde(default)]
    style: Option<String>,
}

struct Args {
    manifest: PathBuf,
    queries: PathBuf,
    scale: Option<usize>,
    misses: bool,
    /// Rank this one request and print the top ten with scores, instead of the query set.
    query: Option<String>,
    /// With `--query`: why these tools (`Toolkit.Tool`) rank as they do.
    explain: Vec<String>,
    /// Only the queries at odd (1, 3, …) or even (0, 2, …) positions of the set: a change that
    /// helps one half and hurts the other fits sentences rather than language.
    half: Option<usize>,
    /// Write one line per indexed tool (id, method and path, description) to this file, to
    /// read what the index sees.
    dump: Option<PathBuf>,
    ranks: Option<PathBuf>,
}

fn parse_args() -> anyhow::Result<Args> {
    let mut manifest = None;
    let mut queries = None;
    let mut scale = None;
    let mut misses = false;
    let mut query = None;
    let mut explain = Vec::new();
    let mut half = None;
    let mut dump = None;
    let mut ranks = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--manifest" => manifest = args.next().map(PathBuf::from),
            "--queries" => queries = args.next().map(PathBuf::from),
            "--scale" => scale = Some(args.next().context("--scale N")?.parse()?),
            "--misses" => misses = true,
            "--query" => query = Some(args.next().context("--query TEXT")?),
            "--explain" => explain.push(args.next().context("--explain TOOLKIT.TOOL")?),
            "--dump" => dump = Some(args.next().context("--dump FILE")?.into()),
            "--ranks" => ranks = Some(args.next().context("--ranks FILE")?.into()),
            "--half" => {
                half = Some(match args.next().as_deref() {
                    Some("even") => 0,
                    Some("odd") => 1,
                    _ => anyhow::bail!("--half odd|even"),
                })
            }
            other => anyhow::bail!("unknown argument {other}"),
        }
    }
    Ok(Args {
        manifest: manifest.context("--manifest PATH is required")?,
        queries: queries.context("--queries PATH is required")?,
        scale,
        misses,
        query,
        explain,
        half,
        dump,
        ranks,
    })
}

/// Counts what is written (the `GET /tools` body's size without holding it).
struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn main() -> anyhow::Result<()> {
    let args = parse_args()?;
    let manifest: Manifest = serde_json::from_str(&std::fs::read_to_string(&args.manifest)?)?;
    let corpus = args.manifest.parent().unwrap_or(Path::new("."));
    let mut query_set: QuerySet = serde_json::from_str(&std::fs::read_to_string(&args.queries)?)?;
    if let Some(parity) = args.half {
        let mut position = 0;
        query_set.queries.retain(|_| {
            position += 1;
            (position - 1) % 2 == parity
        });
    }

    // One `--openapi DOC --base-url LOOPBACK` source per document, names made unique, listed
    // for inspection: exactly what `otc-bridge tools` serves.
    let mut sources: Vec<Source> = manifest
        .documents
        .iter()
        .map(|doc| {
            Source::from_flag(&SourceFlag {
                kind: SourceKind::OpenApi,
                target: corpus.join(&doc.file).to_string_lossy().into_owned(),
                base_url: Some(LOOPBACK_BASE_URL.to_owned()),
                toolkit: None,
                version: None,
                oauth: false,
            })
            .for_inspection()
        })
        .collect();
    make_names_unique(&mut sources);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let started = Instant::now();
    let (_adapters, catalog, reports) =
        runtime.block_on(start_sources(&sources, &Default::default(), |_| {}));
    for report in reports.iter().filter(|r| r.error.is_some()) {
        println!("source {} failed: {:?}", report.name, report.error);
    }
    let mut list = Counter(0);
    catalog.write_list(Dialect::Otc, &mut list)?;
    println!(
        "catalog: {} documents, {} tools served, GET /tools {} bytes, loaded in {:.1} s",
        manifest.documents.len(),
        catalog.len(),
        list.0,
        started.elapsed().as_secs_f64()
    );

    // The highest version of each tool, in catalog order: what the MCP layer indexes.
    let tools: Vec<MappedTool> = catalog.latest().iter().map(|e| (*e.tool).clone()).collect();
    if let Some(path) = &args.dump {
        use std::io::Write as _;
        let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
        for t in &tools {
            let op = match &t.target {
                otc_mappings::Target::Http(plan) => format!("{} {}", plan.method, plan.path),
                otc_mappings::Target::Named { .. } => String::new(),
            };
            let d = &t.definition;
            writeln!(
                out,
                "{}.{}\t{}\t{}",
                d.id.toolkit,
                d.id.tool,
                op,
                d.description
                    .replace('\n', " ")
                    .chars()
                    .take(300)
                    .collect::<String>()
            )?;
        }
    }
    if let Some(path) = &args.ranks {
        use std::io::Write as _;
        let index = SearchIndex::build(&tools);
        let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
        for q in &query_set.queries {
            let hits: Vec<(String, f32)> = index
                .search(&q.query, 50, None)
                .iter()
                .map(|h| {
                    let id = &tools[h.position].definition.id;
                    (format!("{}.{}", id.toolkit, id.tool), h.score)
                })
                .collect();
            writeln!(
                out,
                "{}",
                serde_json::json!({"query": q.query, "hits": hits})
            )?;
        }
    }
    if let Some(query) = &args.query {
        for hit in catalog.search_index().search(query, 10, None) {
            let id = &tools[hit.position].definition.id;
            println!("{:8.3}  {}.{}", hit.score, id.toolkit, id.tool);
        }
        for wanted in &args.explain {
            for (position, tool) in tools.iter().enumerate() {
                let id = &tool.definition.id;
                if format!("{}.{}", id.toolkit, id.tool) == *wanted {
                    let why = catalog.search_index().explain(query, position);
                    println!("{wanted}:\n{why}");
                }
            }
        }
        return Ok(());
    }
    evaluate(&tools, &query_set.queries, list.0, args.misses);

    if let Some(scale) = args.scale {
        let scaled = synthetic(&tools, scale);
        println!(
            "\nscaled catalog: {} tools (the corpus tools plus renamed copies, see `synthetic`)",
            scaled.len()
        );
        evaluate(&scaled, &query_set.queries, 0, false);
    }
    Ok(())
}

/// `tools` grown to `target` with copies whose toolkit is renamed (`Jira` → `JiraCopy1`): the
/// same vocabulary and length distribution as the corpus, with twice the postings per term,
/// which is the costly direction for latency. Hit rates on it are not meaningful (each expected
/// tool has a twin in another toolkit).
fn synthetic(tools: &[MappedTool], target: usize) -> Vec<MappedTool> {
    let mut out = tools.to_vec();
    let mut round = 1;
    while out.len() < target && !tools.is_empty() {
        for tool in tools {
            if out.len() >= target {
                break;
            }
            let mut copy = tool.clone();
            let def = &tool.definition;
            let toolkit = format!("{}Copy{round}", def.id.toolkit);
            copy.definition.name = format!("{toolkit}_{}", def.id.tool);
            copy.definition.id = ToolId::exact(toolkit, def.id.tool.clone(), def.version);
            out.push(copy);
        }
        round += 1;
    }
    out
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn evaluate(tools: &[MappedTool], queries: &[Query], list_bytes: usize, misses: bool) {
    let started = Instant::now();
    let index = SearchIndex::build(tools);
    let build = started.elapsed();
    let heap = index.heap_bytes();
    print!(
        "index: {} tools, built in {:.0} ms, heap {} bytes",
        tools.len(),
        build.as_secs_f64() * 1e3,
        heap
    );
    if list_bytes > 0 {
        print!(
            " ({:.1} % of the GET /tools JSON)",
            100.0 * heap as f64 / list_bytes as f64
        );
    }
    println!();

    let ids: Vec<String> = tools
        .iter()
        .map(|t| format!("{}.{}", t.definition.id.toolkit, t.definition.id.tool))
        .collect();
    let known: std::collections::HashSet<&str> = ids.iter().map(String::as_str).collect();
    let unservable = queries
        .iter()
        .filter(|q| q.kind == "match" && !q.expect.iter().any(|e| known.contains(e.as_str())))
        .count();
    if unservable > 0 {
        println!("{unservable} match queries expect only ids this catalog does not have");
    }
    let (mut matches, mut hit1, mut hit5, mut nones, mut empty) = (0, 0, 0, 0, 0);
    let mut by_style: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    for q in queries {
        let hits = index.search(&q.query, LIMIT, None);
        let found: Vec<&str> = hits.iter().map(|h| ids[h.position].as_str()).collect();
        if q.kind == "none" {
            nones += 1;
            if hits.is_empty() {
                empty += 1;
            } else if misses {
                println!(
                    "NONE-MISS {:?} -> {:?}",
                    q.query,
                    &found[..found.len().min(3)]
                );
            }
            continue;
        }
        matches += 1;
        let rank = found.iter().position(|id| q.expect.iter().any(|e| e == id));
        let style = by_style
            .entry(q.style.clone().unwrap_or_default())
            .or_default();
        style.0 += 1;
        if rank == Some(0) {
            hit1 += 1;
            style.1 += 1;
        }
        if rank.is_some() {
            hit5 += 1;
            style.2 += 1;
        }
        if misses && rank != Some(0) {
            println!(
                "MISS@{} {:?} expect {:?} -> {:?}",
                rank.map_or("-".to_owned(), |r| (r + 1).to_string()),
                q.query,
                q.expect,
                &found[..found.len().min(3)]
            );
        }
    }
    let pct = |n: usize, d: usize| 100.0 * n as f64 / d.max(1) as f64;
    println!(
        "quality: hit@1 {hit1}/{matches} ({:.1} %), hit@5 {hit5}/{matches} ({:.1} %), \
         none empty {empty}/{nones} ({:.1} %)",
        pct(hit1, matches),
        pct(hit5, matches),
        pct(empty, nones)
    );
    for (style, (n, h1, h5)) in &by_style {
        println!("  {style:<10} {n:>3} queries: hit@1 {h1:>3}, hit@5 {h5:>3}");
    }

    let mut latencies = Vec::with_capacity(queries.len() * ROUNDS);
    for _ in 0..ROUNDS {
        for q in queries {
            let started = Instant::now();
            let hits = index.search(&q.query, LIMIT, None);
            latencies.push(started.elapsed());
            std::hint::black_box(hits);
        }
    }
    latencies.sort();
    println!(
        "latency over {} searches: p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        latencies.len(),
        percentile(&latencies, 50.0).as_secs_f64() * 1e3,
        percentile(&latencies, 99.0).as_secs_f64() * 1e3,
        latencies.last().copied().unwrap_or_default().as_secs_f64() * 1e3
    );
}
