//! `tether-test-agent`: a scripted agent that speaks ACP v1 on stdio.
//!
//! It is a real process, so tests exercise the same pipes, framing and timing a real agent
//! does, and it is what the built-in "Demo" profile runs, so a newcomer without API keys sees
//! a complete turn: streamed text, a plan, tool calls and a permission request.
//!
//! ```text
//! tether-test-agent [--scenario NAME|PATH] [--log FILE] [--record-stdout FILE] [--state-dir DIR]
//!                   [--pid-file FILE]
//! ```

mod agent;
mod history;
mod mcp_client;
mod scenario;
mod transport;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

/// A scripted ACP agent for tests and demos. It reads JSON-RPC from stdin and answers on
/// stdout, one message per line.
#[derive(Debug, Parser)]
#[command(version, about, long_about = None)]
struct Arguments {
    /// A built-in scenario name (demo, stream-many, slow-stream, permission-twice,
    /// die-mid-turn, malformed, fs-and-terminal, permissions) or the path of a scenario .toml file.
    #[arg(long, value_name = "NAME|PATH", default_value = scenario::DEFAULT_SCENARIO)]
    scenario: String,

    /// Append a trace of every line received (and what was made of it) to this file.
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,

    /// Append a copy of every line written on stdout to this file, byte for byte: the agent's
    /// own record of what it sent, for a test to compare with what the client got.
    #[arg(long, value_name = "FILE")]
    record_stdout: Option<PathBuf>,

    /// Store every session in this folder and offer `session/load`, so that a restarted agent
    /// can resume a session as real agents do. A fork (`session/fork`, offered by scenarios with
    /// `fork = true`) of a stored session starts with a copy of its updates.
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,

    /// Write this process's id to this file at start, so that a test can check the process is
    /// gone after a client stopped it.
    #[arg(long, value_name = "FILE")]
    pid_file: Option<PathBuf>,
}

fn main() -> ExitCode {
    let arguments = Arguments::parse();
    if let Some(path) = &arguments.pid_file
        && let Err(error) = std::fs::write(path, std::process::id().to_string())
    {
        eprintln!("tether-test-agent: cannot write the pid file {}: {error}", path.display());
        return ExitCode::from(2);
    }
    let scenario = match scenario::load(&arguments.scenario) {
        Ok(scenario) => scenario,
        Err(error) => {
            eprintln!("tether-test-agent: {error}");
            return ExitCode::from(2);
        }
    };
    match run(scenario, &arguments) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("tether-test-agent: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(scenario: scenario::Scenario, arguments: &Arguments) -> anyhow::Result<()> {
    let mut trace = match &arguments.log {
        Some(path) => {
            transport::Trace::append_to(path).with_context(|| format!("cannot open the log file {}", path.display()))?
        }
        None => transport::Trace::disabled(),
    };
    trace.note(&format!("started: {}", scenario.description));
    let input = transport::spawn_reader(std::io::stdin());
    let output = match &arguments.record_stdout {
        Some(path) => transport::Output::recording_to(path)
            .with_context(|| format!("cannot open the record file {}", path.display()))?,
        None => transport::Output::new(),
    };
    let history = match &arguments.state_dir {
        Some(dir) => Some(
            history::History::open(dir).with_context(|| format!("cannot use {} to store sessions", dir.display()))?,
        ),
        None => None,
    };
    agent::Agent::new(scenario, output, trace, history).run(&input).context("stdio failed")
}
