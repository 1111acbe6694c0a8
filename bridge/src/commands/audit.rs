//! `otc-bridge audit verify`: checks an audit trail's hash chain offline (DESIGN.md §14).
#![allow(clippy::print_stdout)] // What this command prints on stdout is its product.

use std::process::ExitCode;

use crate::cli::AuditCommand;

/// `audit verify FILE… [--key-env VAR]`.
pub(crate) fn audit(command: &AuditCommand) -> anyhow::Result<ExitCode> {
    let AuditCommand::Verify { files, key_env } = command;
    let key = match key_env {
        Some(var) => match std::env::var(var) {
            Ok(key) if !key.is_empty() => Some(key.into_bytes()),
            _ => anyhow::bail!("--key-env: environment variable {var} is not set (or empty)"),
        },
        None => None,
    };
    match otc_bridge::verify_audit(files, key.as_deref()) {
        Ok(lines) => {
            println!("ok: {lines} lines in {} files, chained", files.len());
            Ok(ExitCode::SUCCESS)
        }
        Err(broken) => {
            println!("broken: {broken}");
            Ok(ExitCode::FAILURE)
        }
    }
}
