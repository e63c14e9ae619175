//! `cargo xtask build`: everything from sources to `target/tether.vsix`.
//!
//! The extension folder is assembled in the layout the packaged extension has (see the README):
//! `dist/extension.js` from the extension's own esbuild, `dist/wasm/` from wasm-bindgen and
//! wasm-opt, `dist/webview/` from the webview's build, `bin/` with tetherd and the scripted demo
//! agent. The extension's bundle is built first, so a build script that empties `dist/` cannot
//! remove what the later steps put there.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::cmd::{Cmd, Running};
use crate::project::Project;
use crate::setup::{self, Tools};

/// The native binaries shipped in the extension's `bin/`: the sidecar, and the scripted agent
/// the built-in "Demo" profile runs.
pub const SHIPPED_BINARIES: &[&str] = &["tetherd", "tether-test-agent"];
const WASM_TARGET: &str = "wasm32-unknown-unknown";

#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Build the native binaries with the release profile.
    pub release: bool,
}

/// What a build produced, for the commands that continue from it.
#[derive(Debug)]
pub struct Built {
    pub vsix: PathBuf,
}

pub fn run(project: &Project, options: Options) -> anyhow::Result<Built> {
    let tools = setup::run(project)?;
    let shared = start_shared_parts(project, &tools)?;
    build_native_binaries(project, options)?;
    let wasm = shared.finish()?;
    copy_native_binaries(project, options)?;
    let vsix = project.vsix();
    package(project, None, &vsix)?;
    eprintln!("build: WASM engine {}", wasm.describe());
    eprintln!("build: {} ({})", relative(project, &vsix), size_of(&vsix)?);
    Ok(Built { vsix })
}

fn build_native_binaries(project: &Project, options: Options) -> anyhow::Result<()> {
    let mut cargo = Cmd::new("cargo").arg("build").dir(&project.root);
    for binary in SHIPPED_BINARIES {
        cargo = cargo.args(["-p", binary]);
    }
    if options.release {
        cargo = cargo.arg("--release");
    }
    cargo.run()
}

/// Builds what every platform's package holds alike, in the extension's `dist/`: the extension's
/// bundle, the WASM engine and the webview. Returns with the engine's wasm-opt still running, to
/// be finished once the native binaries are built: wasm-opt (binaryen's own, compiled to WASM)
/// works on one core for about a minute while cargo keeps both busy most of the time, so the
/// gain is what cargo leaves idle: on two cores the release binaries (250 s) and wasm-opt (55 s)
/// took 274 s side by side against 305 s one after the other (clean, Nov 2026).
pub fn start_shared_parts(project: &Project, tools: &Tools) -> anyhow::Result<WasmInProgress> {
    build_extension_bundle(project)?;
    let wasm = start_wasm_engine(project, tools, &project.extension_dir().join("dist/wasm"), WasmProfile::Shipped)?;
    build_webview(project)?;
    Ok(wasm)
}

fn build_extension_bundle(project: &Project) -> anyhow::Result<()> {
    let extension = project.extension_dir();
    require_npm_package(&extension, "the VS Code extension host")?;
    Cmd::new("npm").args(["run", "build"]).dir(&extension).run()?;
    require_output(&extension.join("dist/extension.js"), "extension/'s `npm run build`")
}

/// Sizes of the WASM engine at each step, printed at the end of the build.
pub struct WasmSizes {
    compiled: u64,
    bound: u64,
    optimized: u64,
}

impl WasmSizes {
    pub fn describe(&self) -> String {
        format!(
            "{} compiled, {} after wasm-bindgen, {} after wasm-opt",
            kib(self.compiled),
            kib(self.bound),
            kib(self.optimized)
        )
    }
}

/// Compiles the WASM engine and writes the Node package wasm-bindgen makes of it, optimized by
/// wasm-opt, into `out_dir` (emptied first).
pub fn build_wasm_engine(project: &Project, tools: &Tools, out_dir: &Path) -> anyhow::Result<WasmSizes> {
    build_wasm_engine_with(project, tools, out_dir, WasmProfile::Shipped)
}

/// How the WASM engine is compiled and optimised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WasmProfile {
    /// As it ships: the size-tuned `wasm-release` profile (root Cargo.toml) and `wasm-opt -Oz`.
    Shipped,
    /// Built for speed, as before the size-tuned profile: `--release` and `wasm-opt -O`. Only the
    /// footprint benchmark builds it, as the anchor of the shipped engine's size and activation.
    Speed,
}

/// Compiles the engine with `profile`, runs wasm-bindgen (Node.js output) into `out_dir`, and
/// optimises the result in place with wasm-opt.
pub fn build_wasm_engine_with(
    project: &Project,
    tools: &Tools,
    out_dir: &Path,
    profile: WasmProfile,
) -> anyhow::Result<WasmSizes> {
    start_wasm_engine(project, tools, out_dir, profile)?.finish()
}

/// The WASM engine compiled and bound by wasm-bindgen, with wasm-opt optimising it in place.
pub struct WasmInProgress {
    optimizer: Running,
    optimized: PathBuf,
    compiled: u64,
    bound: u64,
}

impl WasmInProgress {
    /// Waits for wasm-opt; returns the engine's sizes.
    pub fn finish(self) -> anyhow::Result<WasmSizes> {
        self.optimizer.finish()?;
        require_output(&self.optimized, "wasm-opt")?;
        Ok(WasmSizes { compiled: self.compiled, bound: self.bound, optimized: file_size(&self.optimized)? })
    }
}

/// [`build_wasm_engine_with`] up to starting wasm-opt, which it does not wait for.
fn start_wasm_engine(
    project: &Project,
    tools: &Tools,
    out_dir: &Path,
    profile: WasmProfile,
) -> anyhow::Result<WasmInProgress> {
    let (cargo_profile, profile_dir, wasm_opt_level) = match profile {
        WasmProfile::Shipped => ("wasm-release", "wasm-release", "-Oz"),
        WasmProfile::Speed => ("release", "release", "-O"),
    };
    Cmd::new("cargo")
        .args(["build", "-p", "tether-wasm", "--target", WASM_TARGET, "--profile", cargo_profile])
        .dir(&project.root)
        .run()?;
    let compiled = project.target_dir().join(WASM_TARGET).join(profile_dir).join("tether_wasm.wasm");
    require_output(&compiled, "cargo build -p tether-wasm")?;

    recreate_dir(out_dir)?;
    Cmd::new(&tools.wasm_bindgen).args(["--target", "nodejs", "--out-dir"]).arg(out_dir).arg(&compiled).run()?;
    let bound = out_dir.join("tether_wasm_bg.wasm");
    require_output(&bound, "wasm-bindgen")?;
    let bound_size = file_size(&bound)?;

    let wasm_opt = project.npm_bin("wasm-opt").context(
        "wasm-opt not found: add the npm package `binaryen` to extension/'s devDependencies \
         (then `cargo xtask setup` installs it)",
    )?;
    let optimizer = Cmd::new(wasm_opt)
        .arg(wasm_opt_level)
        .args(["--strip-debug", "--strip-producers"])
        .arg(&bound)
        .arg("-o")
        .arg(&bound)
        .start()?;
    Ok(WasmInProgress { optimizer, optimized: bound, compiled: file_size(&compiled)?, bound: bound_size })
}

fn build_webview(project: &Project) -> anyhow::Result<()> {
    let webview = project.webview_dir();
    require_npm_package(&webview, "the chat webview")?;
    Cmd::new("npm").args(["run", "build"]).dir(&webview).run()?;
    let built = webview.join("dist");
    for output in ["main.js", "main.css"] {
        require_output(&built.join(output), "webview/'s `npm run build`")?;
    }
    let shipped = project.extension_dir().join("dist/webview");
    recreate_dir(&shipped)?;
    eprintln!("build: copying the files of webview/dist/ to extension/dist/webview/");
    copy_files(&built, &shipped)
}

fn copy_native_binaries(project: &Project, options: Options) -> anyhow::Result<()> {
    let profile = if options.release { "release" } else { "debug" };
    install_binaries(project, &project.target_dir().join(profile), "")
}

/// Puts the shipped binaries built in `from` (their names ending in `exe_suffix`) in the
/// extension's `bin/`, and nothing else: a package holds one platform's binaries.
pub fn install_binaries(project: &Project, from: &Path, exe_suffix: &str) -> anyhow::Result<()> {
    let to = project.extension_dir().join("bin");
    recreate_dir(&to)?;
    for binary in SHIPPED_BINARIES {
        let name = format!("{binary}{exe_suffix}");
        let source = from.join(&name);
        require_output(&source, "cargo build")?;
        // fs::copy keeps the executable bit.
        fs::copy(&source, to.join(&name))
            .with_context(|| format!("copying {} into extension/bin/", source.display()))?;
    }
    eprintln!("build: copied {} from {} to extension/bin/", SHIPPED_BINARIES.join(" and "), relative(project, from));
    Ok(())
}

/// Packages the extension folder as it is into `vsix`: for one platform (`vsce package
/// --target`, a VS Code platform name such as `linux-x64`), or for any platform when `target` is
/// `None`.
pub fn package(project: &Project, target: Option<&str>, vsix: &Path) -> anyhow::Result<()> {
    let vsce = project.npm_bin("vsce").context(
        "vsce not found: add the npm package `@vscode/vsce` to extension/'s devDependencies \
         (then `cargo xtask setup` installs it)",
    )?;
    let mut command =
        Cmd::new(vsce).args(["package", "--no-dependencies", "--allow-missing-repository", "--skip-license"]);
    if let Some(target) = target {
        command = command.args(["--target", target]);
    }
    command.arg("-o").arg(vsix).dir(project.extension_dir()).run()?;
    require_output(vsix, "vsce package")
}

fn require_npm_package(dir: &Path, what: &str) -> anyhow::Result<()> {
    if !dir.join("package.json").exists() {
        bail!("{}/package.json is missing: {what} is not in this checkout yet", dir.display());
    }
    if !dir.join("node_modules").exists() {
        bail!("{}/node_modules is missing: run `cargo xtask setup`", dir.display());
    }
    Ok(())
}

fn require_output(path: &Path, producer: &str) -> anyhow::Result<()> {
    if !path.exists() {
        bail!("{producer} did not produce {}", path.display());
    }
    Ok(())
}

fn recreate_dir(dir: &Path) -> anyhow::Result<()> {
    if dir.exists() {
        fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))
}

/// Copies the files directly in `from` (the bundle, its stylesheet, source maps). Subfolders are
/// left out: they hold the webview's own test and preview builds, which the extension does not
/// ship.
fn copy_files(from: &Path, to: &Path) -> anyhow::Result<()> {
    for entry in fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            fs::copy(entry.path(), to.join(entry.file_name()))
                .with_context(|| format!("copying {}", entry.path().display()))?;
        }
    }
    Ok(())
}

fn file_size(path: &Path) -> anyhow::Result<u64> {
    Ok(fs::metadata(path).with_context(|| format!("reading the size of {}", path.display()))?.len())
}

pub fn size_of(path: &Path) -> anyhow::Result<String> {
    file_size(path).map(kib)
}

fn kib(bytes: u64) -> String {
    // Shown to one decimal: a float is exact enough for any file this build writes.
    let kib = bytes as f64 / 1024.0;
    format!("{kib:.1} KiB")
}

pub fn relative(project: &Project, path: &Path) -> String {
    path.strip_prefix(&project.root).unwrap_or(path).display().to_string()
}
