//! `otc-bridge tools` (the definitions on stdout) and `otc-bridge check` (a conversion report):
//! start the sources for inspection, list them once, stop them, print.
#![allow(clippy::print_stdout)] // What these commands print on stdout is their product.

use std::borrow::Borrow;
use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::ArgMatches;
use otc_bridge::{Catalog, Config, Progress, Source, SourceReport, start_sources};
use otc_mappings::Severity;
use otc_mappings::otc::{Dialect, ListToolsBody, ToolDefinition};

use super::serve::stop_all;
use crate::cli::InspectArgs;

/// What listing the sources once gave.
pub(crate) struct Listed {
    /// The resolved configuration; its sources are marked for inspection.
    pub(crate) config: Config,
    /// The tools.
    pub(crate) catalog: Catalog,
    /// One report per source, in the order of `config.sources`.
    pub(crate) reports: Vec<SourceReport>,
}

/// Starts the sources of an inspecting command, lists them, and stops them again.
pub(crate) async fn list_once(args: &InspectArgs, matches: &ArgMatches) -> anyhow::Result<Listed> {
    super::init_logging("warn");
    let config = super::resolve(args.config.as_deref(), args.overrides(matches))?;
    super::warn_config(&config);
    list_config(config).await
}

/// Starts the sources of `config` for inspection, lists them, and stops them again.
pub(crate) async fn list_config(mut config: Config) -> anyhow::Result<Listed> {
    config.sources = config
        .sources
        .into_iter()
        .map(Source::for_inspection)
        .collect();
    if config.sources.is_empty() {
        anyhow::bail!(
            "no sources: pass --openapi FILE_OR_URL, --mcp COMMAND, --mcp-url URL or --config FILE"
        );
    }
    // stdout is the product here, so progress goes to stderr.
    let (adapters, catalog, reports) =
        start_sources(&config.sources, &config.build_context(), |progress| {
            if let Progress::Waiting { names, elapsed } = progress {
                eprintln!(
                    "waiting for {} ({:.0} s)",
                    names.join(", "),
                    elapsed.as_secs_f64()
                );
            }
        })
        .await;
    stop_all(&adapters).await;
    Ok(Listed {
        config,
        catalog,
        reports,
    })
}

/// Prints each failed source and each diagnostic on stderr; returns whether any source failed.
pub(crate) fn print_problems(reports: &[SourceReport]) -> bool {
    for report in reports {
        if let Some(error) = &report.error {
            eprintln!("error: {}: {error}", report.name);
        }
        for diagnostic in &report.diagnostics {
            eprintln!("{}: {diagnostic}", report.name);
        }
    }
    reports.iter().any(|r| r.error.is_some())
}

/// `tools`: the `GET /tools` body on stdout, problems on stderr.
pub(crate) async fn tools(args: &InspectArgs, matches: &ArgMatches) -> anyhow::Result<ExitCode> {
    let listed = list_once(args, matches).await?;
    let failed = print_problems(&listed.reports);
    print_tools(&listed.catalog, listed.config.dialect)?;
    Ok(exit_code(failed))
}

/// `check`: one block per source; fails when a source failed or anything was skipped.
pub(crate) async fn check(args: &InspectArgs, matches: &ArgMatches) -> anyhow::Result<ExitCode> {
    let mut listed = list_once(args, matches).await?;
    // A served bridge compiles each validator on the tool's first call; a check compiles them
    // all now, so a schema that would refuse every call is reported before anyone calls it.
    for source in listed.catalog.sources() {
        let problems = source.check_validators();
        if let Some(report) = listed
            .reports
            .iter_mut()
            .find(|r| r.name == source.adapter.name())
        {
            report.diagnostics.extend(problems);
        }
    }
    let failed = listed.reports.iter().any(|r| r.error.is_some());
    let skipped = print_check(&listed.config.sources, &listed.reports);
    Ok(exit_code(failed || skipped))
}

fn exit_code(failed: bool) -> ExitCode {
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Writes the `GET /tools` body of `tools` in `dialect` to `out`, pretty-printed, as it is
/// serialised (no JSON tree of the whole list: large documents make one costly).
pub(crate) fn write_pretty_list<T: Borrow<ToolDefinition>>(
    out: impl std::io::Write,
    dialect: Dialect,
    tools: &[T],
) -> Result<(), serde_json::Error> {
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, out);
    serde_json::to_writer_pretty(&mut out, &ListToolsBody { dialect, tools })?;
    out.write_all(b"\n")
        .and_then(|()| out.flush())
        .map_err(serde_json::Error::io)
}

fn print_tools(catalog: &Catalog, dialect: Dialect) -> anyhow::Result<()> {
    let tools: Vec<&ToolDefinition> = catalog.definitions().collect();
    match write_pretty_list(std::io::stdout().lock(), dialect, &tools) {
        // The reader stopped early (`| head`): not an error of ours.
        Err(err) if err.io_error_kind() != Some(std::io::ErrorKind::BrokenPipe) => {
            Err(err).context("writing the tools to stdout")
        }
        _ => Ok(()),
    }
}

/// Prints one block per source; returns whether anything was skipped.
fn print_check(sources: &[Source], reports: &[SourceReport]) -> bool {
    let mut any_skipped = false;
    for (source, report) in sources.iter().zip(reports) {
        println!("{} ({})", report.name, source.describe());
        if let Some(protocol) = &report.protocol {
            println!("  speaks {protocol}");
        }
        if let Some(error) = &report.error {
            println!("  FAILED: {error}");
            continue;
        }
        let skipped: Vec<_> = report
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Skipped)
            .collect();
        any_skipped |= !skipped.is_empty();
        println!(
            "  operations: {}   tools: {}   skipped: {}",
            report.tools + skipped.len(),
            report.tools,
            skipped.len()
        );
        for diagnostic in &report.diagnostics {
            println!("  {diagnostic}");
        }
    }
    any_skipped
}
