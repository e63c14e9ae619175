//! `cargo xtask test`: builds everything, then checks the Rust code's formatting and lints
//! (rustfmt, clippy with warnings as errors, also for macOS), runs every Rust test, a short fixed run of every
//! fuzz target, the TypeScript type checks and unit tests of the webview and the extension host,
//! and the end-to-end suite (code-server + Chromium) on the package a person installs, and fails
//! if any of them failed.
//!
//! Every suite runs even when an earlier one fails, so one run reports everything; each prints its
//! own summary (nextest's or cargo's, and node's test runner's).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::build;
use crate::cmd::Cmd;
use crate::fuzz;
use crate::package;
use crate::project::Project;
use crate::setup;

#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Run the end-to-end suite (`--no-e2e` turns it off for quick runs).
    pub end_to_end: bool,
}

pub fn run(project: &Project, options: Options) -> anyhow::Result<()> {
    let mut stages = Stages::default();
    // The end-to-end suite runs on this machine's release package (`cargo xtask package` of its
    // platform: release binaries, stripped), the one a person installs, so nothing else is built
    // for it: the Rust tests build their own debug binaries. A quick run without the suite builds
    // the debug package, which is faster to compile and enough for the type checks.
    let vsix = if options.end_to_end {
        stages.time("build: this platform's release package", || host_package(project))?
    } else {
        stages.time("build (debug)", || build::run(project, build::Options { release: false }))?.vsix
    };
    let mut failed: Vec<String> = Vec::new();
    let host = package::host_triple()?;
    if !stages.time("formatting and lints", || run_rust_checks(project, &host))? {
        failed.push("Rust formatting or lints".to_owned());
    }
    if !stages.time("Rust tests", || run_rust_tests(project, &host))? {
        failed.push("Rust tests".to_owned());
    }
    if !stages.time("fuzz targets", || fuzz::run_for_tests(project))? {
        failed.push("fuzz targets".to_owned());
    }
    for package in TYPESCRIPT_PACKAGES {
        if !stages
            .time(&format!("{package}/ type checks and unit tests"), || run_typescript_checks(project, package))?
        {
            failed.push(format!("{package}/ type checks or unit tests"));
        }
    }
    if options.end_to_end {
        if !stages.time("end-to-end suite", || run_end_to_end_tests(project, &vsix))? {
            failed.push("end-to-end tests".to_owned());
        }
    } else {
        eprintln!("test: skipping the end-to-end suite (--no-e2e)");
    }
    stages.report();
    if !failed.is_empty() {
        bail!("failed: {}", failed.join(", "));
    }
    eprintln!("test: everything passed");
    Ok(())
}

/// How long each stage of the run took, printed at the end: CI has a time budget, and this is
/// where to look when a run grows.
#[derive(Default)]
struct Stages(Vec<(String, Duration)>);

impl Stages {
    fn time<T>(&mut self, name: &str, stage: impl FnOnce() -> T) -> T {
        let started = Instant::now();
        let result = stage();
        self.0.push((name.to_owned(), started.elapsed()));
        result
    }

    fn report(&self) {
        let total: Duration = self.0.iter().map(|(_, took)| *took).sum();
        eprintln!("test: time per stage ({} s in all)", total.as_secs());
        for (name, took) in &self.0 {
            eprintln!("test:   {:>5} s  {name}", took.as_secs());
        }
    }
}

/// `cargo fmt --check`, clippy over every target of the workspace, and clippy over the native
/// binaries for the platforms this machine cannot build packages for (see
/// [`setup::CHECKED_TARGETS`]), so that their code cannot rot unseen; warnings denied. Returns
/// whether all passed.
///
/// Every cargo run of the lints and the tests names its target, this machine's `host` too. Cargo
/// keeps what it compiles to run on the build machine (proc-macros, build scripts and their
/// dependencies) apart between a run with `--target` and a run without, so naming the host as
/// well lets one compilation of them serve the three clippy runs and the test build: measured on a
/// clean clone (2 cores), 531 s for the four instead of 736 s, the macOS clippy 47 s instead of
/// 166 s and the test build 208 s instead of 333 s, for 42 s more in the first clippy run (the
/// crates both sides use are compiled for each side).
fn run_rust_checks(project: &Project, host: &str) -> anyhow::Result<bool> {
    let format = Cmd::new("cargo").args(["fmt", "--all", "--check"]).dir(&project.root).status()?;
    let lints = Cmd::new("cargo")
        .args(["clippy", "--workspace", "--all-targets", "--target", host, "--", "-D", "warnings"])
        .dir(&project.root)
        .status()?;
    let mut passed = format.success() && lints.success();
    for target in setup::CHECKED_TARGETS {
        let mut clippy = Cmd::new("cargo").args(["clippy", "--all-targets", "--target", target]);
        for binary in build::SHIPPED_BINARIES {
            clippy = clippy.args(["-p", binary]);
        }
        passed &= clippy.args(["--", "-D", "warnings"]).dir(&project.root).status()?.success();
    }
    Ok(passed)
}

/// Runs the workspace's tests with nextest when it is installed (its summary is easier to read),
/// else with `cargo test`, built for this machine's `host` named as a target (see
/// [`run_rust_checks`] for why). Returns whether they all passed.
///
/// The target is given as `CARGO_BUILD_TARGET` rather than `--target`: tetherd's tests run cargo
/// themselves to find the scripted agent's binary (`tether_test_agent` in their support module),
/// and that build must be the one the run made, or it compiles the workspace again.
fn run_rust_tests(project: &Project, host: &str) -> anyhow::Result<bool> {
    let cargo = || Cmd::new("cargo").env("CARGO_BUILD_TARGET", host).dir(&project.root);
    let has_nextest = Cmd::new("cargo").args(["nextest", "--version"]).probe().is_some();
    if !has_nextest {
        let status = cargo().args(["test", "--workspace", "--no-fail-fast"]).status()?;
        return Ok(status.success());
    }
    let tests = cargo().args(["nextest", "run", "--workspace", "--no-fail-fast"]).status()?;
    // nextest does not run doctests; cargo does, separately. The workspace has none today (its
    // examples are tests under `tests/`), and compiling every crate for rustdoc to find that out
    // cost CI over a minute, so the pass runs only once a doc comment holds a Rust block.
    let mut doc_examples = Vec::new();
    for members in ["crates", "xtask"] {
        doc_examples.extend(files_with_doc_examples(&project.root.join(members))?);
    }
    if doc_examples.is_empty() {
        eprintln!("test: no doc comment holds a Rust example: no doctests to run");
        return Ok(tests.success());
    }
    eprintln!(
        "test: doctests in {}",
        doc_examples.iter().map(|path| path.display().to_string()).collect::<Vec<_>>().join(", ")
    );
    let doctests = cargo().args(["test", "--workspace", "--doc"]).status()?;
    Ok(tests.success() && doctests.success())
}

/// The `.rs` files under `dir` whose doc comments hold a code block rustdoc would compile and run.
fn files_with_doc_examples(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            // Build outputs (a fuzz workspace's own target/) hold no sources of ours.
            if path.file_name().is_some_and(|name| name == "target") {
                continue;
            }
            found.extend(files_with_doc_examples(&path)?);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            let text = fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
            if has_doc_example(&text) {
                found.push(path);
            }
        }
    }
    Ok(found)
}

/// Whether a doc comment (`///` or `//!`) in `source` opens a code fence that rustdoc treats as
/// Rust: no language, `rust`, or only rustdoc's own attributes (`ignore`, `no_run`, ...). A fence
/// naming another language (`text`, `toml`) is not a doctest.
fn has_doc_example(source: &str) -> bool {
    let mut open = false;
    for line in source.lines() {
        let trimmed = line.trim_start();
        let Some(doc) = trimmed.strip_prefix("///").or_else(|| trimmed.strip_prefix("//!")) else { continue };
        let Some(info) = doc.trim_start().strip_prefix("```") else { continue };
        if open {
            open = false;
            continue;
        }
        open = true;
        let rust = info.split([',', ' ', '\t']).filter(|word| !word.is_empty()).all(|word| {
            matches!(
                word,
                "rust" | "ignore" | "should_panic" | "no_run" | "compile_fail" | "test_harness" | "standalone_crate"
            ) || word.starts_with("edition")
        });
        if rust {
            return true;
        }
    }
    false
}

/// The TypeScript packages with unit tests of their own. The build bundles them with esbuild,
/// which does not check types, so the checks run here.
const TYPESCRIPT_PACKAGES: [&str; 2] = ["webview", "extension"];

/// Type-checks one TypeScript package and runs its unit tests (`npm run typecheck`, `npm test`).
/// Returns whether both passed.
fn run_typescript_checks(project: &Project, package: &str) -> anyhow::Result<bool> {
    let dir = project.root.join(package);
    let typecheck = Cmd::new("npm").args(["run", "typecheck"]).dir(&dir).status()?;
    let tests = Cmd::new("npm").arg("test").dir(&dir).status()?;
    Ok(typecheck.success() && tests.success())
}

/// Makes this machine's platform package (`cargo xtask package --target` of it) and returns its
/// path.
fn host_package(project: &Project) -> anyhow::Result<PathBuf> {
    let made = package::run(project, package::Selection::Host)?;
    let [vsix] = made.as_slice() else {
        bail!("packaging this machine's platform made {} packages, not one", made.len());
    };
    Ok(vsix.clone())
}

/// Runs tests/e2e/*.test.mjs with node's test runner under Node 24 on the package `vsix`, two
/// files at a time. Each launch starts its own code-server and Chromium, and much of a launch is
/// VS Code starting and waiting on itself: one file at a time left the two cores idle a third of
/// the time (a launch's first 12 s used 15 of their 24 CPU-seconds), two at a time keeps them
/// busy (idle 1-24% in 10 s samples, mostly under 5%). The suite took 653-679 s in CI one at a time, 452 s two at a time on the
/// same package (Nov 2026); three would only share the same two cores more ways. Launches share
/// nothing but the installed-package cache, which tests/e2e/harness.mjs makes safe to fill from
/// two at once. Returns whether they all passed.
fn run_end_to_end_tests(project: &Project, vsix: &Path) -> anyhow::Result<bool> {
    let e2e_dir = project.tests_dir().join("e2e");
    let mut files: Vec<String> = fs::read_dir(&e2e_dir)
        .with_context(|| format!("reading {}", e2e_dir.display()))?
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".test.mjs"))
        .map(|name| format!("e2e/{name}"))
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("no end-to-end tests (*.test.mjs) in {}", e2e_dir.display());
    }
    let status = Cmd::new(project.tools.node())
        .args(["--test", "--test-concurrency=2"])
        .args(&files)
        .env("TETHER_TOOLS_DIR", &project.tools.root)
        .env("TETHER_VSIX", vsix)
        .dir(project.tests_dir())
        .status()?;
    Ok(status.success())
}

#[cfg(test)]
mod tests {
    use super::has_doc_example;

    #[test]
    fn only_fences_rustdoc_compiles_are_doc_examples() {
        assert!(has_doc_example("/// Adds.\n///\n/// ```\n/// assert_eq!(1 + 1, 2);\n/// ```\nfn add() {}\n"));
        assert!(has_doc_example("//! ```rust,no_run\n//! main();\n//! ```\n"));
        assert!(has_doc_example("    /// ```ignore\n    /// x\n    /// ```\n"));
        // Other languages, and fences outside doc comments, are not compiled by rustdoc.
        assert!(!has_doc_example("//! ```text\n//! a/b\n//! ```\n/// ```toml\n/// [x]\n/// ```\n"));
        assert!(!has_doc_example("// ```\n// not a doc comment\n// ```\nconst A: &str = \"```\";\n"));
        // The closing fence of a text block is not taken for an opening one.
        assert!(!has_doc_example("/// ```text\n/// ```\n/// ```json\n/// {}\n/// ```\n"));
    }
}
