//! The command runner every xtask command shares: builds a process, echoes it as a shell line,
//! runs it with stdin closed (CI has no terminal, and no step may wait for a keypress), and turns a
//! non-zero exit into an error that names the command.

use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};

use anyhow::{Context, bail};

/// One external command, described before it runs so it can be echoed exactly as it will run.
#[derive(Debug, Clone)]
pub struct Cmd {
    program: OsString,
    args: Vec<OsString>,
    dir: Option<PathBuf>,
    env: Vec<(OsString, OsString)>,
    path_prepend: Vec<PathBuf>,
}

impl Cmd {
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        Cmd {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            dir: None,
            env: Vec::new(),
            path_prepend: Vec::new(),
        }
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args.extend(args.into_iter().map(|arg| arg.as_ref().to_owned()));
        self
    }

    /// Runs the command in `dir` instead of the current directory.
    pub fn dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dir = Some(dir.into());
        self
    }

    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env.push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// Puts `dir` first on the child's `PATH` (used to run code-server under Node 24 without
    /// changing which `node` the rest of the build sees).
    pub fn path_prepend(mut self, dir: impl Into<PathBuf>) -> Self {
        self.path_prepend.push(dir.into());
        self
    }

    /// Echoes the command, runs it with inherited output, and fails if it exits non-zero.
    pub fn run(self) -> anyhow::Result<()> {
        let status = self.status()?;
        if !status.success() {
            bail!("command failed ({status}): {}", self.shell_line());
        }
        Ok(())
    }

    /// Echoes the command, runs it with inherited output and returns how it exited, for callers
    /// that want to keep going after a failure (the test command runs every suite first).
    pub fn status(&self) -> anyhow::Result<ExitStatus> {
        eprintln!("$ {}", self.shell_line());
        self.command().status().with_context(|| format!("could not start `{}`", self.program.to_string_lossy()))
    }

    /// Echoes the command and starts it without waiting (code-server in `cargo xtask run`).
    pub fn spawn(&self) -> anyhow::Result<Child> {
        eprintln!("$ {}", self.shell_line());
        self.command().spawn().with_context(|| format!("could not start `{}`", self.program.to_string_lossy()))
    }

    /// Echoes the command and starts it without waiting, to be waited for with
    /// [`Running::finish`] once what runs beside it is done.
    pub fn start(&self) -> anyhow::Result<Running> {
        let child = self.spawn()?;
        Ok(Running { child: Some(child), line: self.shell_line() })
    }

    /// Echoes the command and starts it without waiting, its stdout and stderr written to `log`:
    /// for commands run side by side, whose output would otherwise be interleaved.
    pub fn spawn_logged(&self, log: &Path) -> anyhow::Result<Child> {
        eprintln!("$ {} > {}", self.shell_line(), log.display());
        let stdout = File::create(log).with_context(|| format!("creating {}", log.display()))?;
        let stderr = stdout.try_clone().with_context(|| format!("sharing {}", log.display()))?;
        self.command()
            .stdout(stdout)
            .stderr(stderr)
            .spawn()
            .with_context(|| format!("could not start `{}`", self.program.to_string_lossy()))
    }

    /// Runs the command quietly and returns its trimmed stdout, or `None` when it cannot start
    /// or exits non-zero. Used for probes ("which version is installed?") that change nothing,
    /// so echoing them would only bury the commands that do.
    pub fn probe(&self) -> Option<String> {
        let output = self.command().stderr(Stdio::null()).stdout(Stdio::piped()).output().ok()?;
        if !output.status.success() {
            return None;
        }
        Some(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    }

    fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args).stdin(Stdio::null());
        if let Some(dir) = &self.dir {
            command.current_dir(dir);
        }
        for (key, value) in &self.env {
            command.env(key, value);
        }
        if !self.path_prepend.is_empty() {
            let inherited = std::env::var_os("PATH").unwrap_or_default();
            let dirs = self.path_prepend.iter().cloned().chain(std::env::split_paths(&inherited));
            // Joining fails only if a directory contains the separator itself; none of ours do,
            // and the inherited entries came out of split_paths.
            let joined = std::env::join_paths(dirs).expect("PATH entries contain no ':'");
            command.env("PATH", joined);
        }
        command
    }

    /// The command as a line one could paste into a shell (quoting is approximate: good enough
    /// for our own paths, which have no quotes in them).
    fn shell_line(&self) -> String {
        let mut line = String::new();
        if let Some(dir) = &self.dir {
            let shown = relative_to_cwd(dir);
            write!(line, "cd {} && ", quote(&shown)).expect("writing to a String cannot fail");
        }
        if !self.path_prepend.is_empty() {
            let dirs: Vec<String> = self.path_prepend.iter().map(|dir| dir.to_string_lossy().into_owned()).collect();
            write!(line, "PATH={}:$PATH ", dirs.join(":")).expect("writing to a String cannot fail");
        }
        for (key, value) in &self.env {
            write!(line, "{}={} ", key.to_string_lossy(), quote(&value.to_string_lossy()))
                .expect("writing to a String cannot fail");
        }
        line.push_str(&quote(&self.program.to_string_lossy()));
        for arg in &self.args {
            line.push(' ');
            line.push_str(&quote(&arg.to_string_lossy()));
        }
        line
    }
}

/// A command started by [`Cmd::start`]. Dropped before [`Running::finish`] (an error elsewhere
/// ended the command that started it), it is killed rather than left running on its own.
pub struct Running {
    child: Option<Child>,
    line: String,
}

impl Running {
    /// Waits for the command to end, and fails if it exits non-zero.
    pub fn finish(mut self) -> anyhow::Result<()> {
        let mut child = self.child.take().expect("a Running is finished once, as finish takes it");
        let status = child.wait().with_context(|| format!("waiting for `{}`", self.line))?;
        if !status.success() {
            bail!("command failed ({status}): {}", self.line);
        }
        Ok(())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            // Best effort on the way out of a failed build: the process may have ended already,
            // and there is no one left to tell if it cannot be killed.
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Shows a directory relative to the current one when it is below it, which keeps echoed
/// commands short.
fn relative_to_cwd(dir: &Path) -> String {
    let shown = std::env::current_dir()
        .ok()
        .and_then(|cwd| dir.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| dir.to_path_buf());
    if shown.as_os_str().is_empty() { ".".to_owned() } else { shown.to_string_lossy().into_owned() }
}

fn quote(word: &str) -> String {
    let plain = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:@,+%^".contains(c));
    if plain { word.to_owned() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoed_line_can_be_pasted_into_a_shell() {
        let cmd = Cmd::new("npm")
            .args(["run", "build"])
            .env("UPDATE_EXPECT", "1")
            .arg("it's")
            .path_prepend("/tools/node/bin");
        assert_eq!(cmd.shell_line(), "PATH=/tools/node/bin:$PATH UPDATE_EXPECT=1 npm run build 'it'\\''s'");
    }

    #[test]
    fn probe_returns_stdout_or_nothing() {
        assert_eq!(Cmd::new("sh").args(["-c", "echo ' 1.2.3 '"]).probe(), Some("1.2.3".to_owned()));
        assert_eq!(Cmd::new("sh").args(["-c", "exit 3"]).probe(), None);
        assert_eq!(Cmd::new("/nonexistent/program").probe(), None);
    }

    #[test]
    fn failing_command_names_itself_in_the_error() {
        let error = Cmd::new("sh").args(["-c", "exit 7"]).run().expect_err("exit 7 is a failure");
        let message = error.to_string();
        assert!(message.contains("sh -c 'exit 7'"), "{message}");
    }
}
