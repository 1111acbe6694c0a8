//! `otc-bridge import FILE`: an MCP host's configuration (`mcpServers` of Claude Desktop, Claude
//! Code, Cursor or Windsurf; VS Code's `servers`) printed as the native YAML it is read as, for
//! those who want to grow it into a full configuration (issue 13). `--config FILE` reads the same
//! file directly; both go through [`otc_bridge::host_import::read`], so they serve the same.
#![allow(clippy::print_stdout)] // The YAML on stdout is this command's product.

use std::process::ExitCode;

use anyhow::Context as _;
use otc_bridge::host_import;

use crate::cli::ImportArgs;

/// Prints the YAML on stdout; what was not imported also goes to stderr, where a person who
/// redirected stdout to a file still sees it.
pub(crate) fn import(args: &ImportArgs) -> anyhow::Result<ExitCode> {
    let path = &args.file;
    let text = otc_adapters::file::read_text(path, otc_adapters::file::MAX_CONFIG_BYTES)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let imported = host_import::read(&text, path)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
        .with_context(|| {
            format!(
                "{} is not an MCP host configuration: no top-level `mcpServers` (Claude Desktop, Claude Code, Cursor, Windsurf) or `servers` (VS Code)",
                path.display()
            )
        })?;
    let written = imported
        .to_yaml(path)
        .map_err(|e| anyhow::anyhow!("cannot write YAML: {e}"))?;
    for warning in &imported.warnings {
        eprintln!("warning: {}: {warning}", path.display());
    }
    if !written.variables.is_empty() {
        eprintln!(
            "The values of these variables are not written to the YAML; export each before serving it:"
        );
        for line in &written.variables {
            eprintln!("  {line}");
        }
    }
    print!("{}", written.text);
    Ok(ExitCode::SUCCESS)
}
