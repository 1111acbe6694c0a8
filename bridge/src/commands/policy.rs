//! `otc-bridge policy explain` and `otc-bridge policy list`: what the configuration's policies
//! let one caller see and call, decided by the same evaluation the server runs (DESIGN.md §14).
#![allow(clippy::print_stdout)] // What these commands print on stdout is their product.

use std::process::ExitCode;

use anyhow::Context as _;
use clap::ArgMatches;
use otc_bridge::{Caller, Config, Effect, Verdict};
use serde_json::{Map, Value};

use super::inspect::list_once;
use crate::cli::{PolicyCommand, WhoArgs};

/// `policy explain` / `policy list`.
pub(crate) async fn policy(
    command: &PolicyCommand,
    matches: &ArgMatches,
) -> anyhow::Result<ExitCode> {
    match command {
        PolicyCommand::Explain(args) => explain(args, matches).await,
        PolicyCommand::List(args) => list(args, matches).await,
    }
}

/// `policy list --caller NAME`: the ids the caller may see, one per line.
async fn list(args: &WhoArgs, matches: &ArgMatches) -> anyhow::Result<ExitCode> {
    let listed = list_once(&args.inspect, matches).await?;
    let caller = caller(args, &listed.config)?;
    let policies = &listed.config.settings.policies;
    for entry in listed.catalog.entries() {
        if policies.sees(&caller, entry) {
            println!("{}", entry.definition().id);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `policy explain --caller NAME TOOL [--input JSON]`: the decision, the rule that made it,
/// and what every rule made of the call. Exits 1 when the call would not be allowed.
async fn explain(args: &crate::cli::ExplainArgs, matches: &ArgMatches) -> anyhow::Result<ExitCode> {
    let input: Option<Map<String, Value>> = match &args.input {
        Some(text) => {
            Some(serde_json::from_str(text).context("--input must be a JSON object of arguments")?)
        }
        None => None,
    };
    let listed = list_once(&args.who.inspect, matches).await?;
    let caller = caller(&args.who, &listed.config)?;
    let policies = &listed.config.settings.policies;
    println!("caller: {}{}", caller.name, groups_text(&caller));
    // Resolved as the standard says, among every version served: explaining why a tool is
    // hidden is the point here.
    let name = args.tool.split('@').next().unwrap_or_default();
    let id: otc_mappings::otc::ToolId = args.tool.parse()?;
    let otc_bridge::Resolution::Found(entry) = listed.catalog.resolve(name, id.version, None)
    else {
        anyhow::bail!("no tool '{}' is served", args.tool)
    };
    println!("tool: {}", entry.definition().id);
    if policies.is_empty() {
        println!("decision: allowed (there are no policies)");
        return Ok(ExitCode::SUCCESS);
    }
    let verdict = match &input {
        Some(input) => policies.decide(&caller, entry, input),
        None if policies.sees(&caller, entry) => Verdict::Allowed(None),
        None => Verdict::Hidden,
    };
    let (words, allowed) = match (&verdict, &input) {
        (Verdict::Hidden, _) => (
            "hidden: answered as if the tool did not exist".to_owned(),
            false,
        ),
        (Verdict::Allowed(_), None) => (
            "visible (pass --input to decide a call; conditions read it)".to_owned(),
            true,
        ),
        (Verdict::Allowed(rule), Some(_)) => (
            format!(
                "allowed by {}",
                rule.map_or("no rule", |r| policies.label(r))
            ),
            true,
        ),
        (Verdict::Refused(rule), Some(_)) => {
            let by = rule.map_or_else(
                || "no rule allows it".to_owned(),
                |r| format!("by {}", policies.label(r)),
            );
            let reason = policies
                .reason(*rule)
                .map(|r| format!(": {r}"))
                .unwrap_or_default();
            (format!("refused {by}{reason}"), false)
        }
        (Verdict::Refused(_), None) => ("refused".to_owned(), false),
    };
    println!("decision: {words}");
    println!("rules, in order:");
    for (i, rule) in policies
        .trace(&caller, entry, input.as_ref())
        .iter()
        .enumerate()
    {
        let effect = match rule.effect {
            Effect::Allow => "allow",
            Effect::Deny => "deny",
        };
        println!("  {}. {} ({effect}): {}", i + 1, rule.label, rule.outcome);
    }
    Ok(if allowed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The caller named by `--caller`: a named API key's or the stdio caller's groups when the
/// configuration gives that name, plus `--group`s and, with `--claims`, the claims and the
/// groups a token carrying them would give.
fn caller(args: &WhoArgs, config: &Config) -> anyhow::Result<Caller> {
    let mut groups: Vec<String> = config.caller_groups(&args.caller);
    groups.extend(args.groups.iter().cloned());
    let mut caller = Caller::named(args.caller.clone());
    if let Some(text) = &args.claims {
        let claims: Map<String, Value> =
            serde_json::from_str(text).context("--claims must be a JSON object")?;
        groups.extend(config.groups_in_claims(&claims));
        caller = caller.with_claims(claims);
    }
    groups.sort();
    groups.dedup();
    Ok(caller.with_groups(groups))
}

fn groups_text(caller: &Caller) -> String {
    if caller.groups.is_empty() {
        String::new()
    } else {
        format!(" (groups: {})", caller.groups.join(", "))
    }
}
