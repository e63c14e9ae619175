//! `cargo xtask bench [NAME]`: the benchmarks that compare Tether's hot paths with what VS Code
//! users get elsewhere (or with the targets). Without a name every one runs, in the order
//! below.
//!
//! - diff: tether-diff as the host runs it (WASM under Node 24) against npm's `diff` package
//!   (jsdiff), on large inputs (a 20,000-line rewrite, a 1 MB one-line file, ...). Only the WASM
//!   engine is built, into `target/bench/wasm/` rather than `extension/dist/wasm/`, so a
//!   benchmark never changes what a concurrent `build` packages. jsdiff takes minutes on some inputs; to measure tether-diff
//!   alone while working on it, run the script by hand with `--quick`.
//! - terminal: a command's output through tetherd's PTY and socket to a host-side reader, against
//!   the same command in node-pty, for throughput and line latency. tetherd is built in
//!   release, and the node-pty is the one code-server ships, built for the same Node 24.
//!
//! - streaming: an agent's reply of 20,000 chunks at 2,000 a second through a real tetherd and
//!   the extension's own host code driving the WASM engine (Node 24, no browser), against the
//!   ACP SDK's `ClientSideConnection`: latency added from the agent's write to the post out of
//!   the host, and host CPU per 1,000 chunks. `--stages` on the script says where a burst's time
//!   goes instead.
//! - streaming-e2e: bursts of 5,000 and 20,000 chunks and 5,000 at 2,000 a second in code-server
//!   and Chromium with the packaged extension (built in release): the agent's last write to the
//!   last chunk visible, long tasks, and keydown latency while typing in an editor meanwhile.
//!
//! - footprint: what Tether costs before anything happens: the WASM engine's size, activation
//!   (loading the engine's module to a constructed engine, in fresh Node processes) against the
//!   same engine built for speed and against loading the ACP SDK, and tetherd's idle memory.
//!
//! - thread: a reopened session of 10,000 entries (prompts, replies with code, tool calls with
//!   diffs and terminals) in the chat webview in headless Chromium, against the same session cut
//!   to 100 entries: time to first paint and to interactive, scroll frame times, memory, entries
//!   in the DOM, and what the page spends while idle. The script bundles the webview itself, as
//!   it ships, with a fake host (webview/dev/bench-host.ts), into `target/bench/webview/`.
//!
//! Every script also writes its figures as JSON into `target/bench/results/`; once all have run,
//! they are gathered into one report, `target/bench/report/report.md` with a chart beside it
//! (see bench_report.rs). A benchmark run alone rewrites only its own results, so the report
//! keeps the others' latest figures.
//!
//! The measuring is done by the scripts in `tests/bench/`: they live in tests/ because that
//! package declares jsdiff, so Node resolves it from there. A benchmark prints its figures and
//! targets; it is not a test and does not fail on timing, only when something could not run.

use clap::ValueEnum;

use crate::bench_report;
use crate::build;
use crate::cmd::Cmd;
use crate::project::Project;
use crate::setup;

/// The scripts that measure, relative to the tests/ package.
const DIFF_SCRIPT: &str = "bench/diff.bench.mjs";
const TERMINAL_SCRIPT: &str = "bench/terminal.bench.mjs";
const FOOTPRINT_SCRIPT: &str = "bench/footprint.bench.mjs";
const STREAMING_SCRIPT: &str = "bench/streaming.bench.mjs";
const STREAMING_E2E_SCRIPT: &str = "bench/streaming-e2e.bench.mjs";
const THREAD_SCRIPT: &str = "bench/thread.bench.mjs";

/// Where the scripts find the results folder (see bench_report.rs).
const RESULTS_ENV: &str = "TETHER_BENCH_RESULTS";

/// One benchmark, as named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Benchmark {
    /// tether-diff (WASM) against jsdiff on large generated files.
    Diff,
    /// Terminal output through tetherd against node-pty: throughput and latency.
    Terminal,
    /// The engine's size and activation time, tetherd's idle memory.
    Footprint,
    /// An agent's streamed reply through tetherd and the engine host to the chat view's posts,
    /// against the ACP SDK's client: added latency and host CPU.
    Streaming,
    /// Streamed replies end to end in code-server and Chromium: the last chunk's latency, long
    /// tasks and typing latency, against the target.
    StreamingE2e,
    /// A 10,000-entry session opened in the webview in Chromium, against a 100-entry one: first
    /// paint, interactive, scroll frame times, memory, idle CPU.
    Thread,
}

/// Runs `only` that benchmark, or every one when `None`.
pub fn run(project: &Project, only: Option<Benchmark>) -> anyhow::Result<()> {
    let tools = setup::run(project)?;
    let chosen = match only {
        Some(benchmark) => vec![benchmark],
        None => Benchmark::value_variants().to_vec(),
    };
    for benchmark in chosen {
        match benchmark {
            Benchmark::Diff => diff(project, &tools)?,
            Benchmark::Terminal => terminal(project)?,
            Benchmark::Footprint => footprint(project, &tools)?,
            Benchmark::Streaming => streaming(project, &tools)?,
            Benchmark::StreamingE2e => streaming_e2e(project)?,
            Benchmark::Thread => thread(project)?,
        }
    }
    let report_dir = project.target_dir().join("bench/report");
    if let Some(report) = bench_report::write(&results_dir(project), &report_dir)? {
        eprintln!("bench: the report, every figure beside its anchor: {}", report.display());
    }
    Ok(())
}

fn results_dir(project: &Project) -> std::path::PathBuf {
    project.target_dir().join("bench/results")
}

fn diff(project: &Project, tools: &setup::Tools) -> anyhow::Result<()> {
    let wasm_dir = project.target_dir().join("bench/wasm");
    let sizes = build::build_wasm_engine(project, tools, &wasm_dir)?;
    eprintln!("bench: WASM engine {}", sizes.describe());
    Cmd::new(project.tools.node())
        .arg(DIFF_SCRIPT)
        .arg(wasm_dir.join("tether_wasm.js"))
        .dir(project.tests_dir())
        .env(RESULTS_ENV, results_dir(project))
        .run()
}

fn terminal(project: &Project) -> anyhow::Result<()> {
    Cmd::new("cargo").args(["build", "--release", "-p", "tetherd"]).dir(&project.root).run()?;
    let tetherd = project.target_dir().join("release/tetherd");
    let node_pty = project.tools.code_server_package().join("lib/vscode/node_modules/node-pty");
    Cmd::new(project.tools.node())
        .arg(TERMINAL_SCRIPT)
        .arg(tetherd)
        .arg(node_pty)
        .dir(project.tests_dir())
        .env(RESULTS_ENV, results_dir(project))
        .run()
}

/// The engine as it ships, and the same engine built for speed (the release profile, as it was
/// built before the size-tuned profile) as the anchor of its size and activation time.
fn footprint(project: &Project, tools: &setup::Tools) -> anyhow::Result<()> {
    let shipped = project.target_dir().join("bench/wasm");
    let sizes = build::build_wasm_engine(project, tools, &shipped)?;
    eprintln!("bench: WASM engine {}", sizes.describe());
    let for_speed = project.target_dir().join("bench/wasm-speed");
    let sizes = build::build_wasm_engine_with(project, tools, &for_speed, build::WasmProfile::Speed)?;
    eprintln!("bench: WASM engine built for speed {}", sizes.describe());
    Cmd::new("cargo").args(["build", "--release", "-p", "tetherd"]).dir(&project.root).run()?;
    Cmd::new(project.tools.node())
        .arg(FOOTPRINT_SCRIPT)
        .arg(&shipped)
        .arg(&for_speed)
        .arg(project.target_dir().join("release/tetherd"))
        .dir(project.tests_dir())
        .env(RESULTS_ENV, results_dir(project))
        .run()
}

/// The engine as it ships, a release tetherd and the scripted agent (release too: a burst goes
/// as fast as it can write), and the extension's host code, which the script bundles itself
/// from extension/src with the esbuild the extension builds with.
fn streaming(project: &Project, tools: &setup::Tools) -> anyhow::Result<()> {
    let wasm_dir = project.target_dir().join("bench/wasm");
    let sizes = build::build_wasm_engine(project, tools, &wasm_dir)?;
    eprintln!("bench: WASM engine {}", sizes.describe());
    Cmd::new("cargo")
        .args(["build", "--release", "-p", "tetherd", "-p", "tether-test-agent"])
        .dir(&project.root)
        .run()?;
    let release = project.target_dir().join("release");
    Cmd::new(project.tools.node())
        .arg(STREAMING_SCRIPT)
        .arg(release.join("tetherd"))
        .arg(release.join("tether-test-agent"))
        .arg(wasm_dir.join("tether_wasm.js"))
        .dir(project.tests_dir())
        .env(RESULTS_ENV, results_dir(project))
        .run()
}

/// The packaged extension, built with release binaries as a person gets it, in the end-to-end
/// harness's code-server and Chromium.
fn streaming_e2e(project: &Project) -> anyhow::Result<()> {
    let built = build::run(project, build::Options { release: true })?;
    Cmd::new(project.tools.node())
        .arg(STREAMING_E2E_SCRIPT)
        .dir(project.tests_dir())
        .env("TETHER_TOOLS_DIR", &project.tools.root)
        .env("TETHER_VSIX", &built.vsix)
        .env(RESULTS_ENV, results_dir(project))
        .run()
}

/// The webview as it ships, bundled by the script with the webview's own esbuild into a folder of
/// the bench's (not webview/dist/, which a concurrent `build` may be packaging).
fn thread(project: &Project) -> anyhow::Result<()> {
    let webview = project.webview_dir();
    if !webview.join("node_modules").exists() {
        anyhow::bail!("{}/node_modules is missing: run `cargo xtask setup`", webview.display());
    }
    Cmd::new(project.tools.node())
        .arg(THREAD_SCRIPT)
        .arg(project.target_dir().join("bench/webview"))
        .dir(project.tests_dir())
        .env(RESULTS_ENV, results_dir(project))
        .run()
}
