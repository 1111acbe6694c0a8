//! Where a served catalog's memory goes: builds the catalog of the OpenAPI documents named on the
//! command line exactly as `otc-bridge` does (adapter, listing, compiled entries, catalog) under
//! dhat's heap profiler, and prints the bytes each part keeps live, the peak, and what a list
//! body costs.
//!
//! ```sh
//! cargo run --release -p otc-bridge --example memory -- DOC.json [DOC.yaml …]
//! ```
//!
//! Each figure is the change in live heap bytes across one step. Allocation is slow under dhat (it records a backtrace per block): expect about ten
//! times the usual start-up time.

#![allow(clippy::print_stdout)]

use std::sync::Arc;

use otc_adapters::openapi::{OpenApiAdapter, OpenApiConfig};
use otc_adapters::{Adapter, BuildContext};
use otc_bridge::{Catalog, SourceTools};
use otc_mappings::Target;
use otc_mappings::otc::Dialect;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

fn live() -> u64 {
    dhat::HeapStats::get().curr_bytes as u64
}

fn mb(bytes: u64) -> String {
    format!("{:8.1} MB", bytes as f64 / 1e6)
}

fn main() -> anyhow::Result<()> {
    let _profiler = dhat::Profiler::builder().testing().build();
    let documents: Vec<String> = std::env::args().skip(1).collect();
    anyhow::ensure!(!documents.is_empty(), "usage: memory DOC [DOC …]");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let start = live();
    // 0. The first document alone: its text, and its parsed tree (what translation starts from).
    let text = std::fs::read_to_string(&documents[0])?;
    let before = live();
    let tree: serde_json::Value = if documents[0].ends_with(".json") {
        serde_json::from_str(&text)?
    } else {
        serde_yaml::from_str(&text)?
    };
    let tree_bytes = live() - before;
    drop(tree);
    println!(
        "{}: text {}, parsed tree {}",
        documents[0],
        mb(text.len() as u64),
        mb(tree_bytes)
    );
    drop(text);

    // 1. Adapters: each document loaded, translated and its plans compiled (the document itself
    //    is dropped inside `build` unless something keeps it).
    let adapters: Vec<Arc<dyn Adapter>> = runtime.block_on(async {
        let mut adapters: Vec<Arc<dyn Adapter>> = Vec::new();
        // One context for every source, as the bridge has: they share one HTTP client.
        let cx = BuildContext::default();
        for (n, spec) in documents.iter().enumerate() {
            let mut config = OpenApiConfig::new(spec.clone());
            config.base_url = Some("http://127.0.0.1:9/".to_owned());
            match OpenApiAdapter::build(&format!("s{n}"), &config, &cx).await {
                Ok(adapter) => adapters.push(Arc::new(adapter)),
                Err(err) => eprintln!("{spec}: {err}"),
            }
        }
        adapters
    });
    let peak_translating = dhat::HeapStats::get().max_bytes as u64;
    let after_adapters = live();

    // 2. What the adapters hand the bridge: one copy of every definition (plans are shared).
    let listed: Vec<_> = runtime.block_on(async {
        let mut listed = Vec::new();
        for adapter in &adapters {
            listed.push(adapter.list_tools().await.map_err(anyhow::Error::from)?);
        }
        Ok::<_, anyhow::Error>(listed)
    })?;
    let after_listing = live();

    // 2a. The parts of a definition: distinct schema texts (shared ones counted once).
    let mut seen = std::collections::HashSet::new();
    let mut schema_text = 0u64;
    for tool in listed.iter().flat_map(|m| &m.tools) {
        let def = &tool.definition;
        for schema in std::iter::once(&def.input_schema).chain(&def.output_schema) {
            if seen.insert(schema.as_str().as_ptr()) {
                schema_text += schema.len() as u64;
            }
        }
    }
    let before = live();
    let plans: Vec<_> = listed
        .iter()
        .flat_map(|m| &m.tools)
        .filter_map(|t| match &t.target {
            Target::Http(plan) => Some((**plan).clone()),
            Target::Named { .. } | Target::Mcp { .. } => None,
        })
        .collect();
    let request_plans = live() - before;
    drop(plans);

    // 3. Entries: the policy applied (validators are compiled on first call).
    let before = live();
    let sources: Vec<SourceTools> = adapters
        .iter()
        .zip(listed)
        .map(|(adapter, mapped)| {
            let mut diagnostics = mapped.diagnostics;
            SourceTools::compile(
                Arc::clone(adapter),
                Arc::default(),
                mapped.tools,
                &mut diagnostics,
            )
        })
        .collect();
    let entries = live() - before;

    // 4. The catalog: the index (list bodies are written per request).
    let before = live();
    let catalog = Catalog::new(sources);
    let catalog_bytes = live() - before;
    let before = live();
    let list_bytes: Vec<(Dialect, usize, usize)> =
        [Dialect::Otc, Dialect::OxpMain, Dialect::OxpFlat]
            .into_iter()
            .map(|d| {
                (
                    d,
                    catalog.list_body(d).len(),
                    catalog.list_body_gzip(d).len(),
                )
            })
            .collect();
    let gzip_kept = live() - before;
    let serving = live() - start;

    // 5. Validators: every tool called once (the cache keeps what fits).
    let before = live();
    let entries_all: Vec<_> = catalog
        .sources()
        .iter()
        .flat_map(|s| s.entries.clone())
        .collect();
    let mut slowest = std::time::Duration::ZERO;
    let began = std::time::Instant::now();
    for entry in &entries_all {
        let one = std::time::Instant::now();
        let _ = catalog.validator(entry);
        slowest = slowest.max(one.elapsed());
    }
    let compile_all = began.elapsed();
    let validators = live() - before;

    println!(
        "documents: {}, tools served: {}",
        adapters.len(),
        catalog.len()
    );
    for (dialect, len, gz) in &list_bytes {
        println!(
            "GET /tools body ({dialect:?}): {} (gzip {})",
            mb(*len as u64),
            mb(*gz as u64)
        );
    }
    println!(
        "peak while translating:             {}",
        mb(peak_translating)
    );
    println!(
        "live after building the adapters:   {}",
        mb(after_adapters - start)
    );
    println!("  distinct schema text:             {}", mb(schema_text));
    println!("  request plans (deep copy):        {}", mb(request_plans));
    println!(
        "the bridge's copy of definitions:   {}",
        mb(after_listing - after_adapters)
    );
    println!("entries:                            {}", mb(entries));
    println!("catalog index:                      {}", mb(catalog_bytes));
    println!("gzip list bodies kept (3 dialects): {}", mb(gzip_kept));
    println!("total live while serving:           {}", mb(serving));
    println!(
        "validators after calling every tool once: {} (compiling all {:.0} ms under dhat, slowest {:.1} ms)",
        mb(validators),
        compile_all.as_secs_f64() * 1e3,
        slowest.as_secs_f64() * 1e3
    );
    drop(catalog);
    Ok(())
}
