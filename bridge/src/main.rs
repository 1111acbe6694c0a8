//! The `otc-bridge` binary: parse the flags, build the runtime, dispatch to a command.
//!
//! The command line ([`cli`]), the commands ([`commands`]) and the built-in demo ([`demo`]) live
//! here, not in the library: they are how a person runs the bridge, while the library is what
//! the server and the tests need. `anyhow` is used only in the binary, for start-up failures
//! printed with their causes (STYLE.md §2.3).

use std::process::ExitCode;

use clap::{ArgMatches, CommandFactory, FromArgMatches};

mod alloc;
mod cli;
mod commands;
mod demo;

use cli::{Cli, Command};

fn main() -> ExitCode {
    settle_search_threads();
    let matches = Cli::command().get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(err) => err.exit(),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // Documents are translated on blocking threads; one that idles exits soon after, and
        // the allocator returns what it held then (the peak of translating, not what is served).
        .thread_keep_alive(std::time::Duration::from_millis(200))
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("error: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    alloc::enter(match cli.command {
        None | Some(Command::Demo(_) | Command::Mcp(_)) => alloc::Phase::Starting,
        Some(_) => alloc::Phase::OneShot,
    });
    let sub = sub_matches(&matches);
    let result = runtime.block_on(async {
        match cli.command {
            None => commands::serve::serve(cli.serve, &matches).await,
            Some(Command::Tools(args)) => commands::inspect::tools(&args, sub).await,
            Some(Command::Check(args)) => commands::inspect::check(&args, sub).await,
            Some(Command::Export(args)) => commands::export::export(&args, sub).await,
            Some(Command::Import(args)) => commands::import::import(&args),
            Some(Command::Lock(args)) => commands::lock::lock(&args, sub).await,
            Some(Command::Diff(args)) => commands::diff::diff(&args).await,
            Some(Command::Login(args)) => commands::login::login(&args, sub).await,
            Some(Command::Mcp(args)) => commands::mcp::mcp(&args, sub).await,
            Some(Command::Audit(args)) => commands::audit::audit(&args.command),
            Some(Command::Policy(args)) => {
                commands::policy::policy(&args.command, sub_matches(sub)).await
            }
            Some(Command::Demo(args)) => commands::demo::demo(&args).await,
            Some(Command::DemoMcpServer) => demo::mcp_server::serve_stdio()
                .await
                .map(|()| ExitCode::SUCCESS),
        }
    });
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// The matches of the subcommand, where the source flags of `tools`, `check` and `export` are.
fn sub_matches(matches: &ArgMatches) -> &ArgMatches {
    matches.subcommand().map_or(matches, |(_, m)| m)
}

/// Applies [`otc_search::threads_setting`] (the search model's thread count, counted once).
#[allow(unsafe_code, clippy::disallowed_methods)] // Sound here: see the SAFETY note.
fn settle_search_threads() {
    if let Some((name, value)) = otc_search::threads_setting() {
        // SAFETY: called first in `main`, before the runtime or anything else starts a thread,
        // so nothing reads or writes the environment meanwhile.
        unsafe { std::env::set_var(name, value) };
    }
}
