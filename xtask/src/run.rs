//! `cargo xtask run`: builds Tether and serves it in a local VS Code (code-server on 127.0.0.1)
//! with a demo workspace open, until Ctrl-C.
//!
//! Everything lives under `target/run/`: VS Code's user data and extensions, its XDG folders, and
//! the demo workspace. A second run reinstalls the freshly built extension but keeps the
//! workspace's files and the person's settings, so whatever they tried stays where they left it.

use std::fs;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Map, Value};

use crate::build;
use crate::cmd::Cmd;
use crate::project::Project;

const DEFAULT_PORT: u16 = 8080;
const HEALTHZ_TIMEOUT: Duration = Duration::from_secs(90);

/// Files of the demo workspace, written only when missing: the demo agent reads README.md and
/// edits notes.md.
const DEMO_WORKSPACE_FILES: &[(&str, &str)] = &[
    (
        "README.md",
        "# Tether demo workspace\n\nClick the Tether icon in the activity bar, type a prompt and \
         press Enter. The Demo agent streams an answer, reads this file, and asks before it edits \
         notes.md.\n",
    ),
    ("notes.md", "# Notes\n\n- Try the Tether sidebar.\n"),
];

/// The folders of one local VS Code under target/run/.
struct RunDirs {
    root: PathBuf,
}

impl RunDirs {
    fn user_data(&self) -> PathBuf {
        self.root.join("user-data")
    }
    fn extensions(&self) -> PathBuf {
        self.root.join("extensions")
    }
    fn workspace(&self) -> PathBuf {
        self.root.join("workspace")
    }
    fn settings(&self) -> PathBuf {
        self.user_data().join("User/settings.json")
    }
    fn config(&self) -> PathBuf {
        self.root.join("code-server.yaml")
    }
}

pub fn run(project: &Project, options: build::Options) -> anyhow::Result<()> {
    let built = build::run(project, options)?;
    let dirs = RunDirs { root: project.target_dir().join("run") };
    install_extension(project, &dirs, &built.vsix)?;
    write_demo_workspace(&dirs.workspace())?;
    write_user_settings(&dirs.settings())?;

    let port = choose_port()?;
    fs::write(dirs.config(), format!("bind-addr: 127.0.0.1:{port}\nauth: none\ncert: false\n"))
        .context("writing code-server's config")?;
    let mut code_server = code_server(project, &dirs)
        .args(["--auth", "none", "--bind-addr"])
        .arg(format!("127.0.0.1:{port}"))
        .args(["--disable-telemetry", "--disable-update-check", "--disable-workspace-trust", "--config"])
        .arg(dirs.config())
        .arg(dirs.workspace())
        .spawn()?;
    wait_for_healthz(port, &mut code_server)?;
    println!("Tether is running: http://127.0.0.1:{port}/?folder={}", dirs.workspace().display());
    println!("Press Ctrl-C to stop.");
    // Ctrl-C reaches code-server too (same foreground process group); it shuts down its own
    // children, and tetherd exits by itself once no window is connected.
    let status = code_server.wait().context("waiting for code-server")?;
    if !status.success() {
        bail!("code-server exited: {status}");
    }
    Ok(())
}

/// code-server under Node 24, with its state kept inside target/run/.
fn code_server(project: &Project, dirs: &RunDirs) -> Cmd {
    let tools = &project.tools;
    Cmd::new(tools.node())
        .arg(tools.code_server_entry())
        .path_prepend(tools.node_bin_dir())
        .env("XDG_CONFIG_HOME", dirs.root.join("xdg-config"))
        .env("XDG_DATA_HOME", dirs.root.join("xdg-data"))
        .env("XDG_CACHE_HOME", dirs.root.join("xdg-cache"))
        .arg("--extensions-dir")
        .arg(dirs.extensions())
        .arg("--user-data-dir")
        .arg(dirs.user_data())
}

fn install_extension(project: &Project, dirs: &RunDirs, vsix: &Path) -> anyhow::Result<()> {
    code_server(project, dirs)
        .arg("--install-extension")
        .arg(vsix)
        // The version number does not change between builds; --force replaces it anyway.
        .arg("--force")
        .run()
}

fn write_demo_workspace(workspace: &Path) -> anyhow::Result<()> {
    fs::create_dir_all(workspace).with_context(|| format!("creating {}", workspace.display()))?;
    for (name, content) in DEMO_WORKSPACE_FILES {
        let file = workspace.join(name);
        if !file.exists() {
            fs::write(&file, content).with_context(|| format!("writing {}", file.display()))?;
        }
    }
    Ok(())
}

/// Settings that keep the window uncluttered (NOTES: VS Code's own chat panel otherwise takes
/// the width, and terminal text is drawn on a canvas).
fn default_settings() -> Map<String, Value> {
    let mut settings = Map::new();
    settings.insert("terminal.integrated.gpuAcceleration".into(), "off".into());
    settings.insert("chat.disableAIFeatures".into(), true.into());
    settings.insert("workbench.secondarySideBar.defaultVisibility".into(), "hidden".into());
    settings.insert("workbench.startupEditor".into(), "none".into());
    settings.insert("security.workspace.trust.enabled".into(), false.into());
    settings.insert("telemetry.telemetryLevel".into(), "off".into());
    settings.insert("update.mode".into(), "none".into());
    settings
}

/// Writes the default settings, keeping every setting the person already has: only keys that
/// are absent are added.
fn write_user_settings(path: &Path) -> anyhow::Result<()> {
    let existing = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(error) => return Err(error).with_context(|| format!("reading {}", path.display())),
    };
    let Some(merged) = merge_settings(&existing, default_settings()) else {
        // VS Code accepts comments and trailing commas in settings.json; serde_json does not.
        // Rather than lose the person's file, leave it exactly as it is.
        eprintln!("run: {} is not plain JSON; leaving it unchanged", path.display());
        return Ok(());
    };
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    fs::write(path, merged).with_context(|| format!("writing {}", path.display()))
}

/// Adds `defaults` missing from the settings text; `None` when the text is not a JSON object.
fn merge_settings(existing: &str, defaults: Map<String, Value>) -> Option<String> {
    let mut settings = if existing.trim().is_empty() {
        Map::new()
    } else {
        match serde_json::from_str(existing).ok()? {
            Value::Object(object) => object,
            _ => return None,
        }
    };
    for (key, value) in defaults {
        settings.entry(key).or_insert(value);
    }
    let text = serde_json::to_string_pretty(&Value::Object(settings)).expect("a JSON object always serializes");
    Some(text + "\n")
}

/// TETHER_PORT (default 8080) when it is free, else any free port.
fn choose_port() -> anyhow::Result<u16> {
    let wanted = match std::env::var("TETHER_PORT") {
        Ok(value) => value.parse::<u16>().with_context(|| format!("TETHER_PORT={value:?} is not a port number"))?,
        Err(_) => DEFAULT_PORT,
    };
    if TcpListener::bind((Ipv4Addr::LOCALHOST, wanted)).is_ok() {
        return Ok(wanted);
    }
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).context("finding a free port")?;
    let port = listener.local_addr()?.port();
    eprintln!("run: port {wanted} is taken; using {port}");
    Ok(port)
}

fn wait_for_healthz(port: u16, code_server: &mut Child) -> anyhow::Result<()> {
    let started = Instant::now();
    while started.elapsed() < HEALTHZ_TIMEOUT {
        if let Some(status) = code_server.try_wait()? {
            bail!("code-server exited before it was ready: {status}");
        }
        if healthz_ok(port) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    bail!("code-server did not answer http://127.0.0.1:{port}/healthz within {} s", HEALTHZ_TIMEOUT.as_secs())
}

fn healthz_ok(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect((Ipv4Addr::LOCALHOST, port)) else {
        return false;
    };
    let request = "GET /healthz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut response = String::new();
    // A partial read still shows the status line, which is all we look at.
    if stream.read_to_string(&mut response).is_err() && response.is_empty() {
        return false;
    }
    response.starts_with("HTTP/1.1 200") || response.starts_with("HTTP/1.0 200")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_merge_keeps_what_the_person_set() {
        let existing = r#"{ "chat.disableAIFeatures": false, "editor.fontSize": 18 }"#;
        let merged = merge_settings(existing, default_settings()).expect("plain JSON merges");
        let merged: Value = serde_json::from_str(&merged).expect("merge writes JSON");
        assert_eq!(merged["chat.disableAIFeatures"], false);
        assert_eq!(merged["editor.fontSize"], 18);
        assert_eq!(merged["terminal.integrated.gpuAcceleration"], "off");
    }

    #[test]
    fn settings_with_comments_are_left_alone() {
        let existing = "{\n  // my font\n  \"editor.fontSize\": 18\n}";
        assert_eq!(merge_settings(existing, default_settings()), None);
    }

    #[test]
    fn missing_settings_get_the_defaults() {
        let merged = merge_settings("", default_settings()).expect("empty text merges");
        assert!(merged.contains("\"workbench.secondarySideBar.defaultVisibility\": \"hidden\""));
    }
}
