//! `cargo xtask fuzz`: runs the fuzz targets of `crates/tether-fuzz` with cargo-fuzz (libFuzzer)
//! on the nightly toolchain, installing both first when they are missing.
//!
//! Each target starts from a corpus seeded from the project's own recorded data (the agent lines
//! of the engine's scripts, the session logs of the replay tests, ...), written under
//! `target/fuzz/corpus/`, plus the inputs that once crashed it, kept in
//! `crates/tether-fuzz/regressions/<target>/` and run again every time. A crash leaves its input
//! in `target/fuzz/artifacts/<target>/`: fix the bug, then copy the input into the regressions.
//!
//! `cargo xtask test` runs every target for a fixed number of runs with a fixed seed, so CI is
//! deterministic and short; `--seconds N` is for looking harder.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, bail};

use crate::cmd::Cmd;
use crate::project::Project;

/// The fuzz targets, as `crates/tether-fuzz/fuzz_targets/<name>.rs` names them.
pub const TARGETS: [&str; 8] =
    ["framing", "jsonrpc", "acp_engine", "claude_cli", "host_inputs", "replay", "glob", "patch"];

/// The cargo-fuzz release the targets are run with.
const CARGO_FUZZ_VERSION: &str = "0.13.2";

/// How many inputs each target runs in `cargo xtask test` (after its corpus): enough to reach past
/// the seeds, few enough that all targets take seconds once built.
const TEST_RUNS: u64 = 20_000;

/// How long one input may take before libFuzzer calls it a hang, in seconds.
const INPUT_TIMEOUT_SECONDS: u64 = 10;

/// How long a run goes on.
#[derive(Debug, Clone, Copy)]
pub enum Limit {
    /// This many inputs, from a fixed seed: the same inputs every time.
    Runs(u64),
    Seconds(u64),
}

pub fn run(project: &Project, only: Option<&str>, limit: Limit) -> anyhow::Result<()> {
    let targets: Vec<&str> = match only {
        Some(name) if TARGETS.contains(&name) => vec![name],
        Some(name) => bail!("there is no fuzz target {name:?}; the targets are {}", TARGETS.join(", ")),
        None => TARGETS.to_vec(),
    };
    let crashed = run_targets(project, &targets, limit)?;
    if !crashed.is_empty() {
        bail!("fuzz targets that failed: {} (inputs in target/fuzz/artifacts/)", crashed.join(", "));
    }
    Ok(())
}

/// What `cargo xtask test` runs: every target for [`TEST_RUNS`] inputs, as many side by side as
/// the machine has cores (each libFuzzer run uses one), each one's output kept in a file and
/// printed when it ends, so that the log reads one target at a time. Returns whether none failed.
pub fn run_for_tests(project: &Project) -> anyhow::Result<bool> {
    ensure_tools()?;
    let fuzz_dir = fuzz_dir(project);
    let mut commands = Vec::new();
    for target in TARGETS {
        commands.push((target, fuzz_command(project, target, Limit::Runs(TEST_RUNS))?));
    }
    // All targets built at once first: the runs' own builds are then no-ops, and cargo's lock on
    // the build folder does not make the runs wait for each other.
    let build = Cmd::new("cargo")
        .args(["+nightly", "fuzz", "build", "--sanitizer", "none", "--fuzz-dir"])
        .arg(&fuzz_dir)
        .dir(&project.root)
        .status()?;
    if !build.success() {
        // A failed stage, not an error: the test command goes on with the suites after this one.
        eprintln!("fuzz: the fuzz targets did not build");
        return Ok(false);
    }
    let logs = project.target_dir().join("fuzz/logs");
    fs::create_dir_all(&logs).with_context(|| format!("creating {}", logs.display()))?;
    let side_by_side = std::thread::available_parallelism().map_or(1, usize::from);
    let queue = Mutex::new(commands.into_iter());
    let crashed = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..side_by_side)
            .map(|_| {
                scope.spawn(|| -> anyhow::Result<()> {
                    loop {
                        // The lock is held only to take the next target, not while it runs.
                        let next = queue.lock().expect("no worker panics holding the queue").next();
                        let Some((target, command)) = next else { return Ok(()) };
                        let log = logs.join(format!("{target}.log"));
                        let status = command.spawn_logged(&log)?.wait().context("waiting for cargo fuzz")?;
                        // The exit status decides; a log that cannot be read only leaves the
                        // summary empty (a crash's input is in its artifacts folder all the same).
                        let output = fs::read_to_string(&log).unwrap_or_default();
                        if status.success() {
                            // libFuzzer's own summary: how many inputs ran, in how long.
                            let done = output.lines().rev().find(|line| line.starts_with("Done ")).unwrap_or("");
                            eprintln!("fuzz: {target} passed ({done})");
                        } else {
                            eprintln!("fuzz: {target} failed; its output ({}):\n{output}", log.display());
                            eprintln!("fuzz: {target}'s input is in target/fuzz/artifacts/{target}/");
                            crashed.lock().expect("no worker panics holding the list").push(target);
                        }
                    }
                })
            })
            .collect();
        workers.into_iter().try_for_each(|worker| worker.join().expect("a fuzz worker panicked"))
    })?;
    Ok(crashed.into_inner().expect("the workers are done").is_empty())
}

/// Runs `targets` one after the other, their output shown as it comes, and returns those that
/// found a failure.
fn run_targets(project: &Project, targets: &[&str], limit: Limit) -> anyhow::Result<Vec<String>> {
    ensure_tools()?;
    let mut crashed = Vec::new();
    for target in targets {
        if !fuzz_command(project, target, limit)?.status()?.success() {
            crashed.push((*target).to_owned());
        }
    }
    Ok(crashed)
}

/// `cargo fuzz run` of `target` for `limit`, from its seeded corpus (written here) and its
/// regressions, crashes kept in `target/fuzz/artifacts/<target>/`.
fn fuzz_command(project: &Project, target: &str, limit: Limit) -> anyhow::Result<Cmd> {
    let fuzz_dir = fuzz_dir(project);
    let corpus = seed_corpus(project, target)?;
    let artifacts = project.target_dir().join("fuzz/artifacts").join(target);
    fs::create_dir_all(&artifacts).with_context(|| format!("creating {}", artifacts.display()))?;
    let regressions = fuzz_dir.join("regressions").join(target);
    let mut command = Cmd::new("cargo")
        .args(["+nightly", "fuzz", "run", "--fuzz-dir"])
        .arg(&fuzz_dir)
        // The code under test has no unsafe code of its own: the address sanitizer would only
        // slow the build and the runs down. Panics, overflows (debug assertions are on) and
        // hangs are what the targets look for.
        .args(["--sanitizer", "none", target])
        .arg(&corpus);
    if regressions.is_dir() {
        command = command.arg(&regressions);
    }
    let mut artifact_prefix = artifacts.into_os_string();
    artifact_prefix.push("/");
    let mut libfuzzer_args = vec![
        format!("-timeout={INPUT_TIMEOUT_SECONDS}"),
        format!("-artifact_prefix={}", artifact_prefix.to_string_lossy()),
        "-print_final_stats=1".to_owned(),
    ];
    match limit {
        Limit::Runs(runs) => libfuzzer_args.extend([format!("-runs={runs}"), "-seed=1".to_owned()]),
        Limit::Seconds(seconds) => libfuzzer_args.push(format!("-max_total_time={seconds}")),
    }
    Ok(command.arg("--").args(&libfuzzer_args).dir(&project.root))
}

fn fuzz_dir(project: &Project) -> PathBuf {
    project.root.join("crates/tether-fuzz")
}

/// Installs the nightly toolchain and cargo-fuzz when they are missing (fast when present).
fn ensure_tools() -> anyhow::Result<()> {
    let toolchains = Cmd::new("rustup").args(["toolchain", "list"]).probe().unwrap_or_default();
    if toolchains.lines().any(|line| line.starts_with("nightly")) {
        eprintln!("fuzz: the nightly toolchain is installed");
    } else {
        Cmd::new("rustup").args(["toolchain", "install", "nightly", "--profile", "minimal"]).run()?;
    }
    let expected = format!("cargo-fuzz {CARGO_FUZZ_VERSION}");
    if Cmd::new("cargo").args(["fuzz", "--version"]).probe().is_some_and(|found| found.trim() == expected) {
        eprintln!("fuzz: {expected} is installed");
        return Ok(());
    }
    Cmd::new("cargo").args(["install", "cargo-fuzz", "--version", CARGO_FUZZ_VERSION]).run()
}

/// Writes the seed inputs of `target` into its corpus folder under `target/fuzz/corpus/` (which
/// libFuzzer also grows with the inputs it finds) and returns the folder.
fn seed_corpus(project: &Project, target: &str) -> anyhow::Result<PathBuf> {
    let corpus = project.target_dir().join("fuzz/corpus").join(target);
    fs::create_dir_all(&corpus).with_context(|| format!("creating {}", corpus.display()))?;
    let test_data = project.root.join("crates/tether-core/test_data");
    let scripts = files_in(&test_data.join("acp"), "script")?;
    let agent_lines = |script: &str| -> Vec<String> {
        script.lines().filter_map(|line| line.strip_prefix("> agent ")).map(str::to_owned).collect()
    };
    let mut seeds: Vec<Vec<u8>> = Vec::new();
    match target {
        "framing" => {
            for script in &scripts {
                // The first byte chooses the line limit and the chunk size.
                let mut seed = vec![0xC7];
                seed.extend(agent_lines(script).join("\n").into_bytes());
                seeds.push(seed);
            }
        }
        "jsonrpc" => seeds.extend(scripts.iter().flat_map(|script| agent_lines(script)).map(String::into_bytes)),
        "acp_engine" => {
            seeds.extend(scripts.iter().map(|script| agent_lines(script).join("\n").into_bytes()));
        }
        "host_inputs" => {
            // Each recorded conversation's agent lines, with the host's own inputs between them:
            // the person's intents, commands, a file read's reply, the clock, a lost connection.
            let host_lines = [
                r#"W{"type":"ready"}"#,
                r#"W{"type":"prompt","text":"again"}"#,
                r#"W{"type":"cancel"}"#,
                r#"C{"type":"newSession"}"#,
                r#"C{"type":"restart"}"#,
                r#"C{"type":"showHistory"}"#,
                "F{\"read\":0,\"outcome\":{\"type\":\"data\",\"eof\":true,\"fromEditor\":false}}\0file text",
                "T",
                "Xtetherd closed the connection",
                "G",
            ];
            for script in &scripts {
                let agent: Vec<String> = agent_lines(script).iter().map(|line| format!("A{line}")).collect();
                let mut lines = Vec::new();
                for (index, line) in agent.iter().enumerate() {
                    lines.push(line.as_str());
                    lines.push(host_lines[index % host_lines.len()]);
                }
                seeds.push(lines.join("\n").into_bytes());
            }
        }
        "claude_cli" => {
            // The recorded transcripts' CLI lines, with the person's steps where the script has
            // them (a prompt; an exit).
            for script in files_in(&test_data.join("claude_cli"), "script")? {
                let lines: Vec<&str> = script
                    .lines()
                    .filter_map(|line| {
                        if let Some(cli) = line.strip_prefix("> cli ") {
                            Some(cli)
                        } else if line.starts_with("> prompt ") {
                            Some("#prompt")
                        } else if line.starts_with("> exit ") {
                            Some("#exit")
                        } else {
                            line.starts_with("> time ").then_some("#time")
                        }
                    })
                    .collect();
                seeds.push(lines.join("\n").into_bytes());
            }
        }
        "replay" => seeds.extend(files_in(&test_data.join("replay"), "log")?.into_iter().map(String::into_bytes)),
        "glob" => {
            for (pattern, text) in [
                ("npm run *", "npm run build -- --watch"),
                ("src/**/*.ts", "src/a/b/c.ts"),
                ("**/x", "x"),
                ("echo \\*", "echo *"),
                ("Read ?.md", "Read a.md"),
            ] {
                seeds.push(format!("{pattern}\0{text}").into_bytes());
            }
        }
        "patch" => {
            for (old, new) in [
                ("a\nb\nc\n", "a\nB\nc\nd\n"),
                ("one\ntwo\nthree", "zero\none\nthree\n"),
                ("", "new file\n"),
                ("x\r\ny\r\n", "x\r\nz\r\n"),
            ] {
                seeds.push(format!("\u{55}{old}\0{new}").into_bytes());
            }
        }
        other => bail!("no seeds for fuzz target {other:?}"),
    }
    for (index, seed) in seeds.iter().enumerate() {
        let file = corpus.join(format!("seed-{index}"));
        fs::write(&file, seed).with_context(|| format!("writing {}", file.display()))?;
    }
    Ok(corpus)
}

/// The text of every file in `dir` whose name ends in `.{extension}`, in name order.
fn files_in(dir: &Path, extension: &str) -> anyhow::Result<Vec<String>> {
    let mut paths: Vec<PathBuf> = fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|found| found == extension))
        .collect();
    paths.sort();
    paths.iter().map(|path| fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))).collect()
}
