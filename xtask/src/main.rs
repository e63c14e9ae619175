//! `cargo xtask`: the one entry point that sets up tools, builds, packages, runs and tests Tether.
//!
//! Every command is a plain sequence of external commands (cargo, wasm-bindgen, npm, code-server),
//! each echoed before it runs, so a failing step can be copied and rerun by hand. One module per
//! command; [`cmd`] is the runner they share and [`project`] knows where everything lives.

mod bench;
mod bench_report;
mod build;
mod cmd;
mod codegen;
mod fuzz;
mod package;
mod project;
mod run;
mod setup;
mod test;

use clap::{Args, Parser, Subcommand};

use crate::project::Project;

#[derive(Parser)]
#[command(name = "cargo xtask", about = "Build, run and test Tether.")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Install what is missing: the wasm32 target, wasm-bindgen-cli, Debian packages, Node 24,
    /// code-server and the npm dependencies. Fast when everything is present.
    Setup,
    /// Build the sidecar, the WASM engine, the webview and the extension, and package
    /// target/tether.vsix.
    Build(BuildArgs),
    /// Package the extension for each platform VS Code runs on (`vsce package --target`), with
    /// release binaries: `target/package/tether-<target>.vsix`, sizes printed.
    Package(PackageArgs),
    /// Build, then serve a local VS Code (code-server on 127.0.0.1) with Tether installed and a demo
    /// workspace open, until Ctrl-C.
    Run(BuildArgs),
    /// Build, then run every Rust test, and the end-to-end suite on this platform's release package.
    Test(TestArgs),
    /// Regenerate the TypeScript wire types from the Rust types.
    Codegen,
    /// Run the benchmarks, each figure beside its anchor (tether-diff in WASM against npm's `diff`,
    /// terminal output through tetherd against node-pty, the engine's size and activation, ...),
    /// and gather them into one report under target/bench/report/. Prints figures; never fails
    /// on timing.
    Bench(BenchArgs),
    /// Fuzz the parsers and engines with cargo-fuzz (libFuzzer, nightly; both installed when
    /// missing): one target, or all of them one after the other.
    Fuzz(FuzzArgs),
}

#[derive(Args, Clone)]
struct FuzzArgs {
    /// Run only this target (framing, jsonrpc, acp_engine, host_inputs, replay, glob, patch).
    #[arg(value_name = "TARGET")]
    target: Option<String>,
    /// Run each target for this many seconds.
    #[arg(long, conflicts_with = "runs")]
    seconds: Option<u64>,
    /// Run each target for this many inputs, from a fixed seed (the default: 100,000).
    #[arg(long)]
    runs: Option<u64>,
}

#[derive(Args, Clone, Copy)]
struct BuildArgs {
    /// Build tetherd and the test agent in release mode (the WASM engine is always release).
    #[arg(long)]
    release: bool,
}

#[derive(Args, Clone)]
#[group(required = true, multiple = false)]
struct PackageArgs {
    /// One platform, by VS Code's name: linux-x64, linux-arm64, darwin-x64, darwin-arm64,
    /// win32-x64, win32-arm64.
    #[arg(long, value_name = "T")]
    target: Option<String>,
    /// Every platform this machine can build for (the others are listed, with why).
    #[arg(long)]
    all: bool,
}

#[derive(Args, Clone, Copy)]
struct TestArgs {
    /// Skip the end-to-end suite (code-server + Chromium) for a quick run.
    #[arg(long)]
    no_e2e: bool,
}

#[derive(Args, Clone, Copy)]
struct BenchArgs {
    /// Run only this benchmark (all of them when left out).
    #[arg(value_enum, value_name = "BENCHMARK")]
    only: Option<bench::Benchmark>,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let project = Project::locate()?;
    match cli.command {
        Command::Setup => setup::run(&project).map(drop),
        Command::Build(args) => build::run(&project, args.into()).map(drop),
        Command::Package(args) => {
            let selection = match args.target {
                Some(target) => package::Selection::One(target),
                None => package::Selection::All,
            };
            package::run(&project, selection).map(drop)
        }
        Command::Run(args) => run::run(&project, args.into()),
        Command::Test(args) => test::run(&project, test::Options { end_to_end: !args.no_e2e }),
        Command::Codegen => codegen::run(&project),
        Command::Bench(args) => bench::run(&project, args.only),
        Command::Fuzz(args) => {
            let limit = match (args.seconds, args.runs) {
                (Some(seconds), _) => fuzz::Limit::Seconds(seconds),
                (None, runs) => fuzz::Limit::Runs(runs.unwrap_or(100_000)),
            };
            fuzz::run(&project, args.target.as_deref(), limit)
        }
    }
}

impl From<BuildArgs> for build::Options {
    fn from(args: BuildArgs) -> Self {
        build::Options { release: args.release }
    }
}
