//! `cargo xtask setup`: installs whatever the build and the tests need and is missing, and
//! nothing else.
//!
//! Every step first probes for what it would install and skips when it is there, so a second
//! run takes seconds. It runs unattended (CI=true, no stdin): apt-get gets `-y` and a
//! noninteractive frontend, npm never prompts. Steps, in order: the wasm32 Rust target,
//! wasm-bindgen-cli at exactly the version Cargo.lock pins, Debian packages (Chromium, the
//! Kerberos headers code-server's native module builds against), Node 24 and code-server in the
//! tools cache, the real ACP agents the end-to-end tests run (also in the tools cache), and the
//! npm dependencies of extension/, webview/ and tests/.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use anyhow::{Context, bail};

use crate::cmd::Cmd;
use crate::project::{CODE_SERVER_VERSION, NODE_VERSION, Project, REAL_AGENT_PACKAGES, node_package_name};

const WASM_TARGET: &str = "wasm32-unknown-unknown";

/// Debian packages the pipeline needs: Chromium for the end-to-end tests, what node-gyp needs to
/// build code-server's `kerberos` module, and GNU `diff` and `patch`, which tether-diff's tests
/// check its patches against (`diffutils` is essential on Debian, `patch` is not).
const DEBIAN_PACKAGES: &[&str] = &["chromium", "libkrb5-dev", "python3", "make", "g++", "diffutils", "patch"];

/// The file `setup` writes into a `node_modules` after installing it, so later runs can tell an
/// install that matches package-lock.json from one that predates it.
const NPM_STAMP: &str = ".tether-setup-stamp";

/// The tools `setup` guarantees, for the commands that run them.
#[derive(Debug, Clone)]
pub struct Tools {
    /// wasm-bindgen-cli at the version of the `wasm-bindgen` crate.
    pub wasm_bindgen: PathBuf,
}

pub fn run(project: &Project) -> anyhow::Result<Tools> {
    let started = Instant::now();
    ensure_rust_target(WASM_TARGET)?;
    for target in CHECKED_TARGETS {
        ensure_rust_target(target)?;
    }
    ensure_rust_components()?;
    let wasm_bindgen = ensure_wasm_bindgen(project)?;
    ensure_debian_packages()?;
    ensure_node(project)?;
    ensure_code_server(project)?;
    ensure_real_agents(project)?;
    for package in project.npm_packages() {
        ensure_npm_dependencies(&package)?;
    }
    eprintln!("setup: everything is in place ({:.1} s)", started.elapsed().as_secs_f64());
    Ok(Tools { wasm_bindgen })
}

/// The targets `cargo xtask test` type-checks and lints tetherd for, which this machine cannot
/// build packages for: their standard library is enough for `cargo clippy --target`.
pub const CHECKED_TARGETS: [&str; 2] = ["aarch64-apple-darwin", "x86_64-pc-windows-msvc"];

fn ensure_rust_target(target: &str) -> anyhow::Result<()> {
    // The active toolchain's sysroot holds one folder per installed target; asking rustc rather
    // than rustup also respects a toolchain chosen by RUSTUP_TOOLCHAIN or an override.
    let sysroot = Cmd::new("rustc")
        .args(["--print", "sysroot"])
        .probe()
        .context("`rustc --print sysroot` failed: is a Rust toolchain installed (rustup)?")?;
    if Path::new(&sysroot).join("lib/rustlib").join(target).exists() {
        eprintln!("setup: Rust target {target} is installed");
        return Ok(());
    }
    Cmd::new("rustup").args(["target", "add", target]).run()
}

/// rustfmt and clippy, which `cargo xtask test` runs before the tests: a minimal rustup profile
/// leaves them out.
fn ensure_rust_components() -> anyhow::Result<()> {
    let missing: Vec<&str> = [("rustfmt", "fmt"), ("clippy", "clippy")]
        .into_iter()
        .filter(|(_, subcommand)| Cmd::new("cargo").args([subcommand, "--version"]).probe().is_none())
        .map(|(component, _)| component)
        .collect();
    if missing.is_empty() {
        eprintln!("setup: rustfmt and clippy are installed");
        return Ok(());
    }
    Cmd::new("rustup").args(["component", "add"]).args(missing).run()
}

fn ensure_wasm_bindgen(project: &Project) -> anyhow::Result<PathBuf> {
    let version = required_wasm_bindgen_version(&project.root)?;
    let expected = format!("wasm-bindgen {version}");
    let candidates = [PathBuf::from("wasm-bindgen"), cargo_bin_dir().join("wasm-bindgen")];
    for candidate in &candidates {
        if Cmd::new(candidate).arg("--version").probe().as_deref() == Some(expected.as_str()) {
            eprintln!("setup: {expected} is installed");
            return Ok(candidate.clone());
        }
    }
    // No --locked: cargo resolves the CLI's dependencies afresh, as the install verified on this
    // project's machines was done. Only the CLI's own version has to match the crate.
    Cmd::new("cargo").args(["install", "wasm-bindgen-cli", "--version", &version]).run()?;
    let installed = cargo_bin_dir().join("wasm-bindgen");
    match Cmd::new(&installed).arg("--version").probe() {
        Some(found) if found == expected => Ok(installed),
        found => bail!("installed wasm-bindgen-cli {version}, but {} reports {found:?}", installed.display()),
    }
}

/// The version of the `wasm-bindgen` crate the WASM engine links: the CLI must match it exactly,
/// or the generated glue refuses to load the module.
fn required_wasm_bindgen_version(root: &Path) -> anyhow::Result<String> {
    let lock_path = root.join("Cargo.lock");
    if let Ok(lock) = fs::read_to_string(&lock_path)
        && let Some(version) = locked_version(&lock, "wasm-bindgen")
    {
        return Ok(version);
    }
    let manifest = fs::read_to_string(root.join("Cargo.toml")).context("reading Cargo.toml")?;
    manifest
        .lines()
        .find_map(|line| {
            let value = line.trim().strip_prefix("wasm-bindgen")?.trim_start();
            let value = value.strip_prefix('=')?.trim();
            let version = value.trim_matches('"').trim_start_matches('=');
            Some(version.to_owned())
        })
        .context("neither Cargo.lock nor Cargo.toml pins a wasm-bindgen version")
}

/// Finds `version = "…"` in the `[[package]]` entry named `name` of a Cargo.lock.
fn locked_version(lock: &str, name: &str) -> Option<String> {
    let name_line = format!("name = \"{name}\"");
    let mut lines = lock.lines();
    lines.find(|line| line.trim() == name_line)?;
    let version_line = lines.next()?.trim();
    let version = version_line.strip_prefix("version = \"")?.strip_suffix('"')?;
    Some(version.to_owned())
}

fn cargo_bin_dir() -> PathBuf {
    match std::env::var_os("CARGO_HOME") {
        Some(home) => PathBuf::from(home).join("bin"),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cargo/bin"),
    }
}

fn ensure_debian_packages() -> anyhow::Result<()> {
    let mut wanted: Vec<&str> = DEBIAN_PACKAGES.to_vec();
    // npm is a prerequisite, but a fresh Debian lacks it and apt has it: cheaper to install it
    // than to stop and explain.
    if Cmd::new("npm").arg("--version").probe().is_none() {
        wanted.extend(["nodejs", "npm"]);
    }
    if Cmd::new("dpkg-query").arg("--version").probe().is_none() {
        if Path::new("/usr/bin/chromium").exists() && !wanted.contains(&"npm") {
            eprintln!("setup: not a Debian system; assuming its packages are provided");
            return Ok(());
        }
        bail!(
            "this is not a Debian system: install the equivalents of {} (Chromium at \
             /usr/bin/chromium) with your package manager",
            wanted.join(", ")
        );
    }
    let missing: Vec<&str> = wanted.into_iter().filter(|package| !debian_package_installed(package)).collect();
    if missing.is_empty() {
        eprintln!("setup: Debian packages are installed ({})", DEBIAN_PACKAGES.join(", "));
        return Ok(());
    }
    apt_install(&missing)
}

/// Installs Debian's `package` when it is missing (`cargo xtask package` asks for a cross linker
/// this way, only when it builds for that platform).
pub fn ensure_debian_package(package: &str) -> anyhow::Result<()> {
    if debian_package_installed(package) {
        eprintln!("setup: Debian package {package} is installed");
        return Ok(());
    }
    apt_install(&[package])
}

fn apt_install(missing: &[&str]) -> anyhow::Result<()> {
    let as_root = |program: &str| -> Cmd {
        if Cmd::new("id").arg("-u").probe().as_deref() == Some("0") {
            Cmd::new(program)
        } else {
            // sudo without a terminal must not wait for a password that cannot come.
            Cmd::new("sudo").args(["-n", program])
        }
    };
    as_root("apt-get").arg("update").run().context("apt-get update failed (setup needs root or password-less sudo)")?;
    as_root("apt-get").env("DEBIAN_FRONTEND", "noninteractive").args(["install", "-y"]).args(missing).run()
}

fn debian_package_installed(package: &str) -> bool {
    Cmd::new("dpkg-query")
        .args(["-W", "-f=${Status}", package])
        .probe()
        .is_some_and(|status| status == "install ok installed")
}

fn ensure_node(project: &Project) -> anyhow::Result<()> {
    let tools = &project.tools;
    let expected = format!("v{NODE_VERSION}");
    if Cmd::new(tools.node()).arg("--version").probe().as_deref() == Some(expected.as_str()) {
        eprintln!("setup: Node {NODE_VERSION} is in {}", tools.node_prefix().display());
        return Ok(());
    }
    let prefix = tools.node_prefix();
    fs::create_dir_all(&prefix).with_context(|| format!("creating {}", prefix.display()))?;
    Cmd::new("npm")
        .args(["install", "--no-fund", "--no-audit", "--prefix"])
        .arg(&prefix)
        .arg(format!("{}@{NODE_VERSION}", node_package_name()))
        .run()?;
    match Cmd::new(tools.node()).arg("--version").probe() {
        Some(found) if found == expected => Ok(()),
        found => bail!("installed Node {NODE_VERSION}, but {} reports {found:?}", tools.node().display()),
    }
}

fn ensure_code_server(project: &Project) -> anyhow::Result<()> {
    let tools = &project.tools;
    if code_server_version(project).as_deref() == Some(CODE_SERVER_VERSION) {
        eprintln!("setup: code-server {CODE_SERVER_VERSION} is in {}", tools.code_server_prefix().display());
        return Ok(());
    }
    let prefix = tools.code_server_prefix();
    fs::create_dir_all(&prefix).with_context(|| format!("creating {}", prefix.display()))?;
    // Node 24 goes first on PATH only here and when code-server runs: its postinstall builds
    // native modules for the Node that will run it. npm_config_nodedir overrides a user npmrc
    // that may point node-gyp at another Node's headers.
    Cmd::new("npm")
        .args(["install", "--no-fund", "--no-audit", "--prefix"])
        .arg(&prefix)
        .arg(format!("code-server@{CODE_SERVER_VERSION}"))
        .path_prepend(tools.node_bin_dir())
        .env("npm_config_nodedir", tools.node_package())
        .run()?;
    match code_server_version(project) {
        Some(found) if found == CODE_SERVER_VERSION => Ok(()),
        found => bail!("installed code-server {CODE_SERVER_VERSION}, but it reports {found:?}"),
    }
}

fn ensure_real_agents(project: &Project) -> anyhow::Result<()> {
    let prefix = project.tools.agents_prefix();
    let missing: Vec<String> = REAL_AGENT_PACKAGES
        .iter()
        .filter(|(name, version)| installed_package_version(&prefix, name).as_deref() != Some(*version))
        .map(|(name, version)| format!("{name}@{version}"))
        .collect();
    if missing.is_empty() {
        eprintln!("setup: the real agents are in {}", prefix.display());
        return Ok(());
    }
    fs::create_dir_all(&prefix).with_context(|| format!("creating {}", prefix.display()))?;
    // Exact versions in the prefix's package.json, so a later install of another agent (which
    // resolves the whole prefix again) cannot move a pinned one within its caret range.
    Cmd::new("npm")
        .args(["install", "--no-fund", "--no-audit", "--save-exact", "--prefix"])
        .arg(&prefix)
        .args(&missing)
        .run()?;
    for (name, version) in REAL_AGENT_PACKAGES {
        let found = installed_package_version(&prefix, name);
        if found.as_deref() != Some(*version) {
            bail!("installed {name}@{version} into {}, but found {found:?} there", prefix.display());
        }
    }
    Ok(())
}

/// The version in the `package.json` of package `name` under `<prefix>/node_modules`, if any.
fn installed_package_version(prefix: &Path, name: &str) -> Option<String> {
    let manifest = fs::read_to_string(prefix.join("node_modules").join(name).join("package.json")).ok()?;
    let manifest: serde_json::Value = serde_json::from_str(&manifest).ok()?;
    manifest["version"].as_str().map(str::to_owned)
}

/// The installed code-server's version, if its install completed: the package's version, counted
/// only when the postinstall step (which installs VS Code's own modules) has left its output. Read
/// from files rather than by running `code-server --version`, which writes a config file into the
/// person's ~/.config as a side effect.
fn code_server_version(project: &Project) -> Option<String> {
    let package = project.tools.code_server_package();
    if !package.join("lib/vscode/node_modules").is_dir() || !project.tools.code_server_entry().exists() {
        return None;
    }
    installed_package_version(&project.tools.code_server_prefix(), "code-server")
}

fn ensure_npm_dependencies(package: &Path) -> anyhow::Result<()> {
    let name = package.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let manifest = package.join("package.json");
    if !manifest.exists() {
        eprintln!("setup: {name}/package.json does not exist yet; skipping its npm install");
        return Ok(());
    }
    let lock = package.join("package-lock.json");
    let stamp = package.join("node_modules").join(NPM_STAMP);
    if let Some(stamped) = modified(&stamp) {
        let inputs_older =
            [&manifest, &lock].into_iter().filter_map(|input| modified(input)).all(|input| input <= stamped);
        if inputs_older {
            eprintln!("setup: {name}/node_modules is up to date");
            return Ok(());
        }
    }
    let install = if lock.exists() { "ci" } else { "install" };
    Cmd::new("npm")
        .args([install, "--no-fund", "--no-audit"])
        .dir(package)
        // Playwright must never fetch browsers: the tests use the system's Chromium.
        .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
        .run()?;
    fs::write(&stamp, "written by `cargo xtask setup` after a successful npm install\n")
        .with_context(|| format!("writing {}", stamp.display()))
}

fn modified(path: &Path) -> Option<SystemTime> {
    fs::metadata(path).and_then(|meta| meta.modified()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wasm_bindgen_version_comes_from_the_lock_entry_of_that_exact_crate() {
        let lock = r#"
[[package]]
name = "wasm-bindgen-backend"
version = "0.2.99"

[[package]]
name = "wasm-bindgen"
version = "0.2.130"
source = "registry+https://github.com/rust-lang/crates.io-index"
"#;
        assert_eq!(locked_version(lock, "wasm-bindgen").as_deref(), Some("0.2.130"));
        assert_eq!(locked_version(lock, "wasm-bindgen-cli"), None);
    }

    #[test]
    fn wasm_bindgen_version_falls_back_to_the_manifest_pin() {
        let root = std::env::temp_dir().join(format!("xtask-pin-{}", std::process::id()));
        fs::create_dir_all(&root).expect("temp dir is writable");
        fs::write(
            root.join("Cargo.toml"),
            "[workspace.dependencies]\nwasm-bindgen-futures = \"0.4\"\nwasm-bindgen = \"=0.2.130\"\n",
        )
        .expect("temp dir is writable");
        let version = required_wasm_bindgen_version(&root);
        fs::remove_dir_all(&root).expect("temp dir is removable");
        assert_eq!(version.expect("the manifest pins it"), "0.2.130");
    }
}
