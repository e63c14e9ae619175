//! tetherd, Tether's sidecar: the native process that owns agent processes, the commands they
//! run in terminals (see [`terminal`]) and the session folders in the workspace's `.tether`
//! folder (see [`session`]), and talks to the VS Code host over a local socket (see
//! `tether_core::sidecar` for the wire). It owns them because it outlives the window: a command
//! keeps running and what the host asked it to record is on disk even if the window reloads.
//!
//! The host starts `tetherd serve --socket <path>` with a random token in `TETHER_TOKEN`, waits
//! for the one line tetherd prints on stdout once it listens, and connects. tetherd keeps running
//! across window reloads and exits on its own once no host has been connected for the grace
//! period.

mod agent;
mod check_agent;
mod connection;
mod event_log;
mod fanout;
mod history;
#[cfg(windows)]
mod job_object;
mod launcher;
mod mcp;
#[cfg(unix)]
mod orphans;
#[cfg(unix)]
mod process_group;
mod process_tree;
mod server;
mod session;
mod snapshot;
mod socket_dir;
mod terminal;
mod utc;

#[cfg(not(any(unix, windows)))]
compile_error!("tetherd runs on Unix and Windows: it needs PTYs and process groups or Job Objects");

use std::fs::OpenOptions;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{Context as _, bail};
use clap::{Parser, Subcommand};
use tether_core::framing::DEFAULT_MAX_LINE_BYTES;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, fmt};

/// The environment variable that sets the log filter (`tracing` syntax, e.g. `debug` or
/// `tetherd=debug`).
const LOG_ENV: &str = "TETHER_LOG";

#[derive(Debug, Parser)]
#[command(name = "tetherd", version, about = "Tether's sidecar: runs coding agents for the VS Code extension")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Listen on a local socket for the host (the token comes from TETHER_TOKEN).
    Serve(ServeArgs),
    /// Check that an ACP agent follows the protocol: runs it through initialize, session/new, a
    /// prompt and a cancelled prompt, and reports every problem (exit code 1 if any).
    CheckAgent(check_agent::CheckAgentArgs),
    /// Tether's MCP server for an agent, on stdio: started by the agent from its `mcpServers`,
    /// it connects back to the tetherd that offered it (TETHER_MCP_SOCKET, TETHER_MCP_TOKEN).
    Mcp,
}

#[derive(Debug, clap::Args)]
struct ServeArgs {
    /// Path of the Unix domain socket to listen on; its directory is created with mode 0700.
    #[arg(long, value_name = "PATH")]
    socket: PathBuf,
    /// Exit (killing all agents) after this many seconds without a connected host.
    #[arg(long, default_value_t = 30)]
    grace_seconds: u64,
    /// Also append the log to this file.
    #[arg(long, value_name = "PATH")]
    log_file: Option<PathBuf>,
    /// The longest line accepted from an agent's stdout, in bytes.
    #[arg(long, default_value_t = DEFAULT_MAX_LINE_BYTES, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    max_line_bytes: usize,
    /// How long a killed agent or terminal command has between SIGTERM and SIGKILL, in milliseconds.
    #[arg(long, default_value_t = 2000)]
    kill_grace_ms: u64,
    /// How long an agent's MCP tool waits for VS Code's answer (the selection, a language
    /// server...), in milliseconds.
    #[arg(long, default_value_t = u64::try_from(mcp::editor::EDITOR_TIMEOUT.as_millis()).unwrap_or(u64::MAX))]
    editor_timeout_ms: u64,
}

fn main() -> anyhow::Result<ExitCode> {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => serve(args).map(|()| ExitCode::SUCCESS),
        Command::CheckAgent(args) => check_agent::run(args),
        Command::Mcp => mcp::bridge::run(),
    }
}

fn serve(args: ServeArgs) -> anyhow::Result<()> {
    init_logging(args.log_file.as_deref())?;
    let token = match std::env::var(agent::TOKEN_ENV) {
        Ok(token) if !token.is_empty() => token,
        _ => bail!(
            "{} must be set to the token hosts present in hello (a random string chosen by the host)",
            agent::TOKEN_ENV
        ),
    };
    let config = server::Config {
        socket: args.socket,
        token,
        grace: Duration::from_secs(args.grace_seconds),
        max_line_bytes: args.max_line_bytes,
        kill_grace: Duration::from_millis(args.kill_grace_ms),
        editor_timeout: Duration::from_millis(args.editor_timeout_ms),
    };
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(server::run(config))
}

/// Logs to stderr, and also to `log_file` when given (appending, without colours).
fn init_logging(log_file: Option<&std::path::Path>) -> anyhow::Result<()> {
    let filter = EnvFilter::try_from_env(LOG_ENV).unwrap_or_else(|_| EnvFilter::new("info"));
    let file_layer = match log_file {
        None => None,
        Some(path) => {
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .with_context(|| format!("cannot open the log file {}", path.display()))?;
            Some(fmt::layer().with_ansi(false).with_writer(Mutex::new(file)))
        }
    };
    tracing_subscriber::registry()
        .with(filter)
        .with(fmt::layer().with_writer(std::io::stderr))
        .with(file_layer)
        .try_init()
        .context("cannot set up logging")
}
