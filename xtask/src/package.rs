//! `cargo xtask package [--target T | --all]`: one platform-specific `.vsix` per target, the way
//! the Marketplace and Open VSX take them (`vsce package --target`, as rust-analyzer ships).
//!
//! Every package holds the same extension bundle, WASM engine and webview, built once, and the
//! release binaries of its own platform (tetherd and the demo agent), stripped of their symbols.
//! Each lands in `target/package/tether-<target>.vsix`, and its size is printed.
//!
//! Not every target can be built on every machine. From Linux on x64: linux-x64 natively,
//! linux-arm64 with Debian's cross linker (`gcc-aarch64-linux-gnu`), and win32-x64 with MinGW-w64
//! (`gcc-mingw-w64-x86-64`, Rust's `x86_64-pc-windows-gnu`, whose programs need nothing installed
//! on Windows 10 and later); the cross linkers are installed when missing. macOS needs Apple's SDK
//! to link, which no Linux machine has, and Windows on arm64 Microsoft's linker or llvm-mingw,
//! which Debian does not package. `--all` builds what it can and says why it skipped the rest;
//! `--target` of one that cannot be built fails with the reason.

use std::path::PathBuf;

use anyhow::bail;

use crate::build;
use crate::cmd::Cmd;
use crate::project::Project;
use crate::setup;

/// A platform VS Code installs extensions for, and how its binaries are built.
#[derive(Debug, Clone, Copy)]
pub struct Platform {
    /// VS Code's name for it (`vsce package --target`).
    pub name: &'static str,
    /// Rust's target triple.
    pub triple: &'static str,
    /// What the binaries' names end in.
    pub exe_suffix: &'static str,
    /// How this machine builds for it.
    build: Builder,
}

#[derive(Debug, Clone, Copy)]
enum Builder {
    /// The machine's own target.
    Native,
    /// With a cross linker from a Debian package.
    CrossLinker { linker: &'static str, debian_package: &'static str },
    /// Not here, for this reason.
    Unavailable(&'static str),
}

pub const PLATFORMS: [Platform; 6] = [
    Platform { name: "linux-x64", triple: "x86_64-unknown-linux-gnu", exe_suffix: "", build: Builder::Native },
    Platform {
        name: "linux-arm64",
        triple: "aarch64-unknown-linux-gnu",
        exe_suffix: "",
        build: Builder::CrossLinker { linker: "aarch64-linux-gnu-gcc", debian_package: "gcc-aarch64-linux-gnu" },
    },
    Platform {
        name: "darwin-x64",
        triple: "x86_64-apple-darwin",
        exe_suffix: "",
        build: Builder::Unavailable(MACOS_NEEDS_SDK),
    },
    Platform {
        name: "darwin-arm64",
        triple: "aarch64-apple-darwin",
        exe_suffix: "",
        build: Builder::Unavailable(MACOS_NEEDS_SDK),
    },
    Platform {
        name: "win32-x64",
        triple: "x86_64-pc-windows-gnu",
        exe_suffix: ".exe",
        build: Builder::CrossLinker { linker: "x86_64-w64-mingw32-gcc", debian_package: "gcc-mingw-w64-x86-64" },
    },
    Platform {
        name: "win32-arm64",
        triple: "aarch64-pc-windows-msvc",
        exe_suffix: ".exe",
        build: Builder::Unavailable(WINDOWS_ARM_NEEDS_LINKER),
    },
];

const MACOS_NEEDS_SDK: &str = "linking for macOS needs Apple's SDK, which is only on a Mac";
const WINDOWS_ARM_NEEDS_LINKER: &str =
    "linking for Windows on arm64 needs Microsoft's linker or llvm-mingw, which Debian does not package";

/// Which packages to make.
#[derive(Debug, Clone)]
pub enum Selection {
    /// This one, or fail.
    One(String),
    /// Every platform this machine can build for.
    All,
    /// The platform of this machine (`cargo xtask test` installs and runs its package).
    Host,
}

/// Makes the packages `selection` asks for; returns each one's path.
pub fn run(project: &Project, selection: Selection) -> anyhow::Result<Vec<PathBuf>> {
    let host = host_triple()?;
    let wanted: Vec<Platform> = match &selection {
        Selection::One(name) => match PLATFORMS.iter().find(|platform| platform.name == name) {
            Some(platform) => vec![*platform],
            None => bail!(
                "unknown target {name:?}: one of {}",
                PLATFORMS.iter().map(|platform| platform.name).collect::<Vec<_>>().join(", ")
            ),
        },
        Selection::All => PLATFORMS.to_vec(),
        Selection::Host => match PLATFORMS.iter().find(|platform| platform.triple == host) {
            Some(platform) => vec![*platform],
            None => bail!("this machine ({host}) is not a platform Tether is packaged for"),
        },
    };
    let mut buildable = Vec::new();
    let mut skipped = Vec::new();
    for platform in wanted {
        match why_not_here(&platform, &host) {
            None => buildable.push(platform),
            Some(reason) if !matches!(selection, Selection::All) => {
                bail!("{} cannot be built on this machine: {reason}", platform.name)
            }
            Some(reason) => skipped.push((platform.name, reason)),
        }
    }
    // The machine's own platform last, so that `extension/bin/` ends with binaries that run
    // here: the end-to-end tests and `cargo xtask run` start the demo agent from there.
    buildable.sort_by_key(|platform| platform.triple == host);
    let tools = setup::run(project)?;
    // The engine's wasm-opt runs while the first platform's binaries compile.
    let mut wasm_in_progress = Some(build::start_shared_parts(project, &tools)?);
    let mut wasm = None;
    let out_dir = project.target_dir().join("package");
    std::fs::create_dir_all(&out_dir)?;
    let mut made: Vec<(PathBuf, &str)> = Vec::new();
    for platform in &buildable {
        build_binaries(project, platform, &host)?;
        if let Some(in_progress) = wasm_in_progress.take() {
            wasm = Some(in_progress.finish()?);
        }
        let built = project.target_dir().join(platform.triple).join("release");
        build::install_binaries(project, &built, platform.exe_suffix)?;
        let vsix = out_dir.join(format!("tether-{}.vsix", platform.name));
        build::package(project, Some(platform.name), &vsix)?;
        made.push((vsix, platform.name));
    }
    let wasm = match wasm_in_progress {
        Some(in_progress) => in_progress.finish()?,
        None => wasm.expect("the engine was finished before the first package"),
    };
    eprintln!("package: WASM engine {}", wasm.describe());
    for (vsix, name) in &made {
        eprintln!("package: {name:<13} {} ({})", build::relative(project, vsix), build::size_of(vsix)?);
    }
    for (name, reason) in &skipped {
        eprintln!("package: {name:<13} skipped: {reason}");
    }
    Ok(made.into_iter().map(|(vsix, _)| vsix).collect())
}

/// Why `platform` cannot be built on a machine whose own target is `host`, if it cannot.
fn why_not_here(platform: &Platform, host: &str) -> Option<String> {
    if platform.triple == host {
        return None;
    }
    match platform.build {
        Builder::Native => Some(format!("it is built on a {} machine, and this one is {host}", platform.triple)),
        Builder::CrossLinker { .. } if host != "x86_64-unknown-linux-gnu" => {
            Some(format!("its cross linker is set up for an x86_64 Linux machine, and this one is {host}"))
        }
        Builder::CrossLinker { .. } => None,
        Builder::Unavailable(reason) => Some(reason.to_owned()),
    }
}

/// Builds the shipped binaries for `platform` in release, stripped, into
/// `target/<triple>/release/`.
fn build_binaries(project: &Project, platform: &Platform, host: &str) -> anyhow::Result<()> {
    Cmd::new("rustup").args(["target", "add", platform.triple]).run()?;
    let mut cargo = Cmd::new("cargo")
        .args(["build", "--release", "--target", platform.triple])
        .dir(&project.root)
        // Symbols are for debugging a build, not for shipping one: without them tetherd is a
        // fifth smaller (14.7 → 11.4 MB on linux-x64, Nov 2026).
        .env("CARGO_PROFILE_RELEASE_STRIP", "symbols");
    for binary in build::SHIPPED_BINARIES {
        cargo = cargo.args(["-p", binary]);
    }
    if let Builder::CrossLinker { linker, debian_package } = platform.build
        && platform.triple != host
    {
        setup::ensure_debian_package(debian_package)?;
        let variable = format!("CARGO_TARGET_{}_LINKER", platform.triple.to_uppercase().replace('-', "_"));
        cargo = cargo.env(variable, linker);
    }
    cargo.run()
}

/// The target triple of the Rust toolchain on this machine.
pub fn host_triple() -> anyhow::Result<String> {
    let version = Cmd::new("rustc").arg("-vV").probe().ok_or_else(|| anyhow::anyhow!("`rustc -vV` failed"))?;
    match version.lines().find_map(|line| line.strip_prefix("host: ")) {
        Some(host) => Ok(host.trim().to_owned()),
        None => bail!("`rustc -vV` printed no host line"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The platforms a machine whose target is `host` can package.
    fn buildable_on(host: &str) -> Vec<&'static str> {
        PLATFORMS
            .iter()
            .filter(|platform| why_not_here(platform, host).is_none())
            .map(|platform| platform.name)
            .collect()
    }

    #[test]
    fn each_machine_packages_what_it_can_link() {
        assert_eq!(buildable_on("x86_64-unknown-linux-gnu"), ["linux-x64", "linux-arm64", "win32-x64"]);
        assert_eq!(buildable_on("aarch64-unknown-linux-gnu"), ["linux-arm64"]);
        // A Mac has its SDK, so it builds its own platform.
        assert_eq!(buildable_on("aarch64-apple-darwin"), ["darwin-arm64"]);
        let windows_arm = PLATFORMS.iter().find(|platform| platform.name == "win32-arm64").expect("listed");
        assert!(
            why_not_here(windows_arm, "x86_64-unknown-linux-gnu").is_some_and(|why| why.contains("llvm-mingw")),
            "{:?}",
            why_not_here(windows_arm, "x86_64-unknown-linux-gnu")
        );
    }
}
