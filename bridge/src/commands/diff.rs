//! `otc-bridge diff OLD NEW`: how the tools changed between two versions, classified as patch,
//! minor or major by the rules of `otc_mappings::change`, exiting 1 when anything is major — a CI
//! gate for teams that publish tools.
//!
//! Each side is a lockfile (`otc-bridge lock`), an export (`otc-bridge export`, a `GET /tools`
//! body), an OpenAPI document, or an otc-bridge configuration (its sources are listed; those
//! that run a process or contact a URL only with `--start-sources`). Tools
//! are compared by `Toolkit.Tool`, the highest version of each, so a side's own version labels
//! do not matter: the contracts do.
#![allow(clippy::print_stdout)] // The changes are the product.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use otc_bridge::{Config, FileConfig, Lockfile, Overrides, SourceFlag, SourceKind, host_import};
use otc_mappings::change::{self, Class};
use otc_mappings::otc::{ToolDefinition, ToolVersion};
use otc_mappings::{MappedTool, Target};
use serde_json::Value;

use super::inspect::list_config;
use crate::cli::DiffArgs;

pub(crate) async fn diff(args: &DiffArgs) -> anyhow::Result<ExitCode> {
    super::init_logging("warn");
    let old = side(&args.old, args.start_sources).await?;
    let new = side(&args.new, args.start_sources).await?;
    let changes = change::classify_tools(&old, &new);
    let mut worst: Option<Class> = None;
    for tool in &changes {
        let class = tool.change.class();
        worst = worst.max(class);
        println!("{} {}", class.map_or("unchanged", Class::as_str), tool.tool);
        for reason in tool.change.reasons() {
            println!("  {}: {}", reason.class.as_str(), reason.message);
        }
    }
    let unchanged = old.keys().filter(|k| new.contains_key(*k)).count()
        - changes
            .iter()
            .filter(|c| old.contains_key(&c.tool) && new.contains_key(&c.tool))
            .count();
    println!(
        "{} changed ({}), {unchanged} unchanged",
        changes.len(),
        match worst {
            Some(class) => format!("at most {}", class.as_str()),
            None => "nothing".to_owned(),
        }
    );
    Ok(if worst == Some(Class::Major) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// One side's tools: `Toolkit.Tool` → the canonical form of its highest version. Without
/// `start_sources` only files are read: a configuration whose sources would start a process or
/// contact a URL is refused before anything starts (`diff` gates pull requests, whose files
/// are not to be trusted).
async fn side(path: &str, start_sources: bool) -> anyhow::Result<BTreeMap<String, Value>> {
    // A side may be a whole catalog (a lockfile, an export): the largest files the bridge reads.
    let text =
        otc_adapters::file::read_text(Path::new(path), otc_adapters::file::MAX_CATALOG_BYTES)
            .with_context(|| format!("cannot read {path}"))?;
    let value =
        otc_mappings::text::parse_value(&text).map_err(|e| anyhow::anyhow!("{path}: {e}"))?;
    if value.get("lockfile").is_some() {
        let lock = Lockfile::parse(&text).map_err(|e| anyhow::anyhow!("{path}: {e}"))?;
        return Ok(highest(lock.definitions().into_iter().filter_map(
            |(id, definition)| {
                let (name, version) = id.rsplit_once('@')?;
                Some((name.to_owned(), version.parse().ok()?, definition))
            },
        )));
    }
    if let Some(Value::Array(tools)) = value.get("tools").or_else(|| value.get("items")) {
        let mut out = Vec::new();
        for tool in tools {
            let definition: ToolDefinition = serde_json::from_value(tool.clone())
                .with_context(|| format!("{path}: not an export of tool definitions"))?;
            out.push(canonical_of(definition));
        }
        return Ok(highest(out));
    }
    let file = if value.get("openapi").is_some() || value.get("swagger").is_some() {
        let overrides = Overrides {
            sources: vec![SourceFlag {
                kind: SourceKind::OpenApi,
                target: path.to_owned(),
                base_url: Some("http://127.0.0.1:9/".to_owned()),
                toolkit: None,
                version: None,
                oauth: false,
                resources: false,
                prompts: false,
            }],
            ..Overrides::default()
        };
        Config::resolve(FileConfig::default(), overrides)?
    } else if value.get("sources").is_some() || host_import::detect(&value).is_some() {
        let mut file = FileConfig::load(Path::new(path))?;
        file.lock = None;
        let config = Config::resolve(file, Overrides::default())?;
        if !start_sources
            && let Some(reach) = config.sources.iter().find_map(|s| s.reaches_beyond_files())
        {
            anyhow::bail!(
                "{path}: {reach}; `diff` starts no process and contacts no URL unless given --start-sources"
            );
        }
        super::warn_config(&config);
        config
    } else {
        anyhow::bail!(
            "{path} is neither a lockfile, an export, an OpenAPI document nor an otc-bridge configuration"
        );
    };
    let listed = list_config(file).await?;
    // What translation noted is for `check`; here only a source that could not be listed counts.
    if let Some(failed) = listed.reports.iter().find(|r| r.error.is_some()) {
        anyhow::bail!(
            "{path}: source {} failed: {}",
            failed.name,
            failed.error.as_deref().unwrap_or_default()
        );
    }
    Ok(highest(listed.catalog.entries().iter().map(|e| {
        let id = &e.definition().id;
        (
            id.name(),
            e.definition().version,
            change::canonical(&e.tool),
        )
    })))
}

/// An exported definition's canonical form. An export does not say whether a tool is
/// destructive; both sides of such a diff read it the same way.
fn canonical_of(definition: ToolDefinition) -> (String, ToolVersion, Value) {
    let name = definition.id.name();
    let version = definition.version;
    let tool = MappedTool {
        target: Target::Named { name: name.clone() },
        definition: std::sync::Arc::new(definition),
        destructive: false,
        label: None,
        hidden_inputs: Vec::new(),
    };
    (name, version, change::canonical(&tool))
}

/// The highest version of each name.
fn highest(
    tools: impl IntoIterator<Item = (String, ToolVersion, Value)>,
) -> BTreeMap<String, Value> {
    let mut best: BTreeMap<String, (ToolVersion, Value)> = BTreeMap::new();
    for (name, version, definition) in tools {
        match best.get(&name) {
            Some((kept, _)) if *kept >= version => {}
            _ => {
                best.insert(name, (version, definition));
            }
        }
    }
    best.into_iter().map(|(k, (_, v))| (k, v)).collect()
}
