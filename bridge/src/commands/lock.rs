//! `otc-bridge lock`: pin every served tool id to its contract in a lockfile, or check that the
//! sources still match one (DESIGN.md §9).
//!
//! Without a lockfile, one is written. With one, the sources are listed against it as `bump`
//! would serve them (an unchanged tool keeps its locked version, a changed one moves to the next
//! version of its change); when that differs from the file, the changes are printed and the file
//! is rewritten only with `--update`, so the lock in version control stays the reviewed state.
#![allow(clippy::print_stdout)] // What was written or found is reported on stdout.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::ArgMatches;
use otc_bridge::{Config, FileConfig, Lockfile, OnChange};

use super::inspect::{list_config, print_problems};
use crate::cli::LockArgs;

pub(crate) async fn lock(args: &LockArgs, matches: &ArgMatches) -> anyhow::Result<ExitCode> {
    super::init_logging("warn");
    let mut file = match &args.inspect.config {
        Some(path) => FileConfig::load(path)?,
        None => FileConfig::default(),
    };
    // The lockfile here is the one written; the configuration's own `lock` is not applied.
    file.lock = None;
    let overrides = args.inspect.overrides(matches)?;
    let mut config = Config::resolve(file, overrides)?;
    super::warn_config(&config);
    let existing = match args.lock.exists() {
        true => Some(Arc::new(Lockfile::load(&args.lock)?)),
        false => None,
    };
    let against = existing.clone().unwrap_or_default();
    for source in &mut config.sources {
        source.pin_with(&against, OnChange::Bump);
    }
    let listed = list_config(config).await?;
    if print_problems(&listed.reports) {
        eprintln!(
            "not writing {}: every source must list for a lock",
            args.lock.display()
        );
        return Ok(ExitCode::FAILURE);
    }
    let catalog = &listed.catalog;
    let now = Lockfile::of(catalog.entries().iter().map(|e| (&*e.tool, e.upstream)));

    let mut changes: Vec<String> = catalog.drifted().map(|(_, d)| d.message()).collect();
    if let Some(existing) = &existing {
        changes.extend(
            existing
                .removed_in(&now)
                .map(|id| format!("`{id}` is no longer served upstream")),
        );
        if **existing == now {
            println!(
                "{} is up to date ({} tools)",
                args.lock.display(),
                now.len()
            );
            return Ok(ExitCode::SUCCESS);
        }
        for change in &changes {
            println!("{change}");
        }
        if !args.update {
            println!(
                "{} does not match the sources; review the changes above, then run `otc-bridge lock --update`",
                args.lock.display()
            );
            return Ok(ExitCode::FAILURE);
        }
    }
    std::fs::write(&args.lock, now.to_text())
        .with_context(|| format!("cannot write {}", args.lock.display()))?;
    println!("wrote {} ({} tools)", args.lock.display(), now.len());
    Ok(ExitCode::SUCCESS)
}
