//! `cargo xtask bench`: tether-diff as the host runs it (WASM under Node 24) against npm's `diff`
//! package (jsdiff), on the large inputs issue 4 names.
//!
//! Only the WASM engine is built, into `target/bench/wasm/` rather than `extension/dist/wasm/`,
//! so a benchmark never changes what a concurrent `build` packages. The measuring is done by
//! `tests/bench/diff.bench.mjs`: it lives in tests/ because that package declares jsdiff, so Node
//! resolves it from there. The benchmark prints its figures and targets; it is not a test and does
//! not fail on timing, only when something could not run. jsdiff takes minutes on some inputs;
//! to measure tether-diff alone while working on it, run the script by hand with `--quick`.

use crate::build;
use crate::cmd::Cmd;
use crate::project::Project;
use crate::setup;

/// The script that measures, relative to the tests/ package.
const SCRIPT: &str = "bench/diff.bench.mjs";

pub fn run(project: &Project) -> anyhow::Result<()> {
    let tools = setup::run(project)?;
    let wasm_dir = project.target_dir().join("bench/wasm");
    let sizes = build::build_wasm_engine(project, &tools, &wasm_dir)?;
    eprintln!("bench: WASM engine {}", sizes.describe());
    Cmd::new(project.tools.node()).arg(SCRIPT).arg(wasm_dir.join("tether_wasm.js")).dir(project.tests_dir()).run()
}
