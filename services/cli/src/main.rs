//! `trawl`: the user's command. Its subcommands and their output are a contract (docs/design.md).

use std::path::PathBuf;

use clap::{CommandFactory, Parser, Subcommand};
use trawl_cli::extract;

mod batch;
mod cache;
mod remote;
mod robots;
mod run;
mod serve;
mod worker;

#[derive(Parser)]
#[command(
    name = "trawl",
    version,
    about = "Research questions in, cited reports out.",
    after_help = "Exit status: 0 done; 1 error; 2 usage error; 3 finished without a cited answer \
                  (`run`) or with failed jobs (`status --wait`)."
)]
struct Cli {
    /// Config file (TOML); without one, ./trawl.toml, else $XDG_CONFIG_HOME/trawl/trawl.toml
    /// (~/.config/trawl/trawl.toml), if there. Variables TRAWL__SECTION__KEY override it.
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Answer one question with every stage in this process; the report goes to stdout.
    Run(run::RunArgs),
    /// Enqueue a batch file (one question per line, or JSONL {"query": …}); prints the batch id.
    Submit(batch::SubmitArgs),
    /// Show a batch's progress; with --wait, a progress bar until it is done.
    Status(batch::StatusArgs),
    /// Copy a batch's reports and work products to DIR/<job>/.
    Results(batch::ResultsArgs),
    /// Cancel a batch: its pending jobs stop and are marked cancelled.
    Cancel(batch::CancelArgs),
    /// Run one stage's worker (search, fetch, fetch-browser, clean or synthesize).
    Worker(worker::WorkerArgs),
    /// Drain the worker or API on this machine: it stops taking work and this returns once it
    /// has settled what it held (the Kubernetes preStop hook).
    Drain(worker::DrainArgs),
    /// Extract a page's main content as markdown (FILE, URL, or - for stdin).
    Extract(extract::ExtractArgs),
    /// robots.txt tools.
    Robots(robots::RobotsArgs),
    /// The fleet's page cache: what it holds, and emptying it.
    Cache(cache::CacheArgs),
    /// Serve the HTTP API in front of the fleet (api.addr; documented at /openapi.json).
    Serve(serve::ServeArgs),
    /// Serve trawl's research, search and extract tools to agents over MCP (stdio, or
    /// streamable HTTP with --http).
    Mcp(trawl_cli::mcp::McpArgs),
    /// Manage the API's tokens.
    Token(serve::TokenArgs),
    /// Export the fleet's queue depths and batch progress as Prometheus metrics (one per fleet).
    Monitor(trawl_cli::monitor::MonitorArgs),
    /// The effective configuration: defaults, then --config, then TRAWL__SECTION__KEY variables.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Print the completion script for SHELL, e.g. `trawl completions bash >
    /// ~/.local/share/bash-completion/completions/trawl`.
    Completions { shell: clap_complete::Shell },
}

#[derive(Subcommand)]
enum ConfigCommand {
    /// Print it as TOML, every key with its value, passwords in URLs as `***`.
    Show,
    /// Check it: every problem is named at once, and the exit status is 1 if there is one.
    Check,
    /// Print every key with what it does and its default (trawl.example.toml).
    Example,
}

/// The exit status of a command that finished without what was asked for: `trawl run` without a
/// cited answer, `trawl status --wait` with failed jobs. 1 is an error and 2 clap's usage error,
/// so a script can tell the three apart.
const UNANSWERED: u8 = 3;

fn main() -> std::process::ExitCode {
    dispatch(Cli::parse()).unwrap_or_else(|e| {
        eprintln!("error: {e:#}");
        std::process::ExitCode::FAILURE
    })
}

fn dispatch(cli: Cli) -> anyhow::Result<std::process::ExitCode> {
    // Neither needs (nor should fail on) the configuration in effect.
    match cli.command {
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "trawl", &mut std::io::stdout());
            return Ok(std::process::ExitCode::SUCCESS);
        }
        Command::Config(ConfigCommand::Example) => {
            print!("{}", trawl_config::example());
            return Ok(std::process::ExitCode::SUCCESS);
        }
        _ => {}
    }
    let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    let file = (cli.config.clone())
        .or_else(|| trawl_config::Config::discover(&std::env::current_dir().ok()?, &env));
    // Loaded first: `trawl worker` sizes its runtime by it.
    let config = trawl_config::Config::load(file.as_deref(), &env)?;
    // A long-running worker keeps its blocking-thread pool bounded (the workers' own binaries
    // do the same): an unbounded pool grows threads, and memory, under load and never shrinks.
    let runtime = match cli.command {
        Command::Worker(_) => trawl_pipeline::serve::worker_runtime(&config),
        _ => tokio::runtime::Runtime::new(),
    }
    .expect("starting the async runtime");
    runtime.block_on(async move {
        match cli.command {
            Command::Run(args) => run::run(config, &env, args).await,
            Command::Submit(args) => batch::submit(config, args).await,
            Command::Status(args) => batch::status(config, args).await,
            Command::Results(args) => batch::results(config, args).await,
            Command::Cancel(args) => batch::cancel(config, args).await,
            Command::Worker(args) => worker::run(config, args).await,
            Command::Drain(args) => worker::drain(config, args).await,
            Command::Extract(args) => extract::run(config, args).await,
            Command::Robots(args) => robots::run(config, args).await,
            Command::Cache(args) => cache::run(config, args).await,
            Command::Serve(args) => serve::serve(config, args).await,
            Command::Mcp(args) => trawl_cli::mcp::run(config, args).await,
            Command::Token(args) => serve::token(config, args).await,
            Command::Monitor(args) => trawl_cli::monitor::run(config, args).await,
            // Loading the configuration checked it: a problem has already ended the command.
            Command::Config(ConfigCommand::Show) => {
                if let Some(file) = &file {
                    println!("# read from {}, then the TRAWL__ variables", file.display());
                }
                print!("{}", config.show());
                Ok(std::process::ExitCode::SUCCESS)
            }
            Command::Completions { .. } | Command::Config(ConfigCommand::Example) => {
                unreachable!("answered before the configuration was loaded")
            }
            Command::Config(ConfigCommand::Check) => {
                match &file {
                    Some(file) => eprintln!("config: {} is valid", file.display()),
                    None => eprintln!("config: valid (no file: defaults and TRAWL__ variables)"),
                }
                Ok(std::process::ExitCode::SUCCESS)
            }
        }
    })
}
