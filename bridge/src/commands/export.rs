//! `otc-bridge export`: the definitions as files, deterministic (sorted by id, stable
//! formatting), for moving tools into OTC clients and for review in version control.
#![allow(clippy::print_stdout)] // What was written is reported on stdout.

use std::process::ExitCode;

use anyhow::Context as _;
use clap::ArgMatches;

use std::path::Path;

use otc_mappings::otc::ToolDefinition;

use super::inspect::{list_once, print_problems, write_pretty_list};
use crate::cli::ExportArgs;

/// Writes one file, or with `--split` one file per toolkit.
pub(crate) async fn export(args: &ExportArgs, matches: &ArgMatches) -> anyhow::Result<ExitCode> {
    let listed = list_once(&args.inspect, matches).await?;
    let failed = print_problems(&listed.reports);
    let dialect = listed.config.dialect;
    let mut tools: Vec<&ToolDefinition> = listed.catalog.definitions().collect();
    tools.sort_by(|a, b| {
        (&a.id.toolkit, &a.id.tool, a.version).cmp(&(&b.id.toolkit, &b.id.tool, b.version))
    });
    let write = |path: &Path, tools: &[&ToolDefinition]| {
        std::fs::File::create(path)
            .map_err(serde_json::Error::io)
            .and_then(|file| write_pretty_list(file, dialect, tools))
            .with_context(|| format!("cannot write {}", path.display()))
    };
    if args.split {
        std::fs::create_dir_all(&args.out)
            .with_context(|| format!("cannot create directory {}", args.out.display()))?;
        let mut toolkits: Vec<&str> = tools.iter().map(|t| t.id.toolkit.as_str()).collect();
        toolkits.dedup();
        for toolkit in toolkits {
            let subset: Vec<&ToolDefinition> = tools
                .iter()
                .filter(|t| t.id.toolkit == toolkit)
                .copied()
                .collect();
            let path = args.out.join(format!("{toolkit}.json"));
            write(&path, &subset)?;
            println!("wrote {} ({} tools)", path.display(), subset.len());
        }
    } else {
        if let Some(parent) = args.out.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create directory {}", parent.display()))?;
        }
        write(&args.out, &tools)?;
        println!("wrote {} ({} tools)", args.out.display(), tools.len());
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
