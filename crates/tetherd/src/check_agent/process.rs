//! The agent under check as a process: started in a process group of its own, fed lines on
//! stdin, its stdout cut into lines (numbered, so a finding can say which one offended), its
//! stderr counted with the last lines kept, and the whole group killed at the end so that the
//! check leaves nothing running behind it.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tether_core::framing::{DEFAULT_MAX_LINE_BYTES, FrameError, LineFramer};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::process_tree::ProcessTree;

/// How many of the agent's last stderr lines the report shows.
const STDERR_TAIL_LINES: usize = 5;

/// How many bytes of stdout are read at a time.
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// One thing read from the agent's stdout.
#[derive(Debug)]
pub enum Output {
    /// A line, numbered from 1 among the non-blank lines of stdout (the framer skips blank ones).
    Line { number: u64, text: String },
    /// A line that could not be read as text (too long, or not UTF-8).
    BadLine { number: u64, error: FrameError },
    /// Stdout is finished: the agent closed it, usually by exiting.
    Closed,
}

/// What the agent printed on stderr: how many lines, and the last few.
#[derive(Debug, Default, Clone)]
pub struct StderrSummary {
    pub line_count: u64,
    pub last_lines: VecDeque<String>,
}

/// What is known once the agent has been stopped.
#[derive(Debug)]
pub struct Stopped {
    /// False if some process of the agent's group survived even SIGKILL.
    pub all_gone: bool,
    pub stderr: StderrSummary,
}

/// A running agent.
pub struct AgentProcess {
    child: Child,
    /// The agent and every process it started.
    tree: ProcessTree,
    /// `None` once the agent has stopped reading (a write failed), so later writes are skipped.
    stdin: Option<ChildStdin>,
    output: mpsc::UnboundedReceiver<Output>,
    stderr: Arc<Mutex<StderrSummary>>,
    /// The task reading stderr, which ends once every process holding the pipe is gone.
    stderr_reader: Option<tokio::task::JoinHandle<()>>,
}

/// How long, once the agent is dead, to wait for the last of its stderr (a process outside its
/// group could still hold the pipe open).
const STDERR_DRAIN: Duration = Duration::from_secs(1);

impl AgentProcess {
    /// Starts `program` with `args` in the current directory (so relative paths in the command
    /// line work as the person typed them), with all three pipes connected.
    pub fn spawn(program: &OsString, args: &[OsString]) -> io::Result<AgentProcess> {
        AgentProcess::spawn_in(program, args, None)
    }

    /// As [`AgentProcess::spawn`], working in `cwd` when given (a program named by a relative
    /// path is still found from the current directory, as the person typed it).
    pub fn spawn_in(program: &OsString, args: &[OsString], cwd: Option<&std::path::Path>) -> io::Result<AgentProcess> {
        let path = std::path::Path::new(program);
        let program = match cwd {
            Some(_) if path.is_relative() && path.components().count() > 1 => std::env::current_dir()?.join(path),
            _ => path.to_path_buf(),
        };
        // On Windows the program is found as a shell finds it (PATHEXT: npm's `.cmd` launchers),
        // as for the agents tetherd spawns (see `launcher.rs`).
        #[cfg(windows)]
        let launch = {
            let args: Vec<String> = args.iter().map(|arg| arg.to_string_lossy().into_owned()).collect();
            crate::launcher::resolve_here(&program.to_string_lossy(), &args, &std::collections::BTreeMap::new())
                .map_err(|not_found| io::Error::new(io::ErrorKind::NotFound, not_found.to_string()))?
        };
        #[cfg(windows)]
        let (program, args) = (std::path::PathBuf::from(&launch.program), launch.args.as_slice());
        let mut command = Command::new(program);
        if let Some(cwd) = cwd {
            command.current_dir(cwd);
        }
        command.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
        ProcessTree::prepare(&mut command);
        let mut child = command.spawn()?;
        let tree = ProcessTree::of_child(&mut child)?;
        let stdin = child.stdin.take();
        let (sender, output) = mpsc::unbounded_channel();
        if let Some(stdout) = child.stdout.take() {
            tokio::spawn(read_stdout(stdout, sender));
        }
        let stderr = Arc::new(Mutex::new(StderrSummary::default()));
        let stderr_reader = child.stderr.take().map(|pipe| tokio::spawn(read_stderr(pipe, Arc::clone(&stderr))));
        Ok(AgentProcess { child, tree, stdin, output, stderr, stderr_reader })
    }

    /// Writes one message and its newline. A failure means the agent no longer reads its stdin
    /// (it has exited, or closed it): the message is lost, and the read side will show why.
    pub async fn send(&mut self, line: &str) {
        let Some(stdin) = self.stdin.as_mut() else { return };
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        if stdin.write_all(&bytes).await.is_err() || stdin.flush().await.is_err() {
            self.stdin = None;
        }
    }

    /// Closes the agent's stdin: an agent that reads its input to the end then finishes.
    pub fn close_input(&mut self) {
        drop(self.stdin.take());
    }

    /// The next thing from stdout, waiting for it.
    pub async fn next_output(&mut self) -> Output {
        self.output.recv().await.unwrap_or(Output::Closed)
    }

    /// The next thing from stdout if it has already been read, without waiting.
    pub fn output_already_read(&mut self) -> Option<Output> {
        match self.output.try_recv() {
            Ok(output) => Some(output),
            Err(mpsc::error::TryRecvError::Empty) => None,
            Err(mpsc::error::TryRecvError::Disconnected) => Some(Output::Closed),
        }
    }

    /// How the agent exited, once it has, waiting at most `bound` (its stdout can close a moment
    /// before the process is gone).
    pub async fn exit_status(&mut self, bound: Duration) -> Option<ExitStatus> {
        tokio::time::timeout(bound, self.child.wait()).await.ok().and_then(Result::ok)
    }

    /// Ends the agent and everything it started: closes its stdin, sends its process group
    /// SIGTERM, and SIGKILL after `grace` if anything is left. Then, with no process left to
    /// write more, what it printed on stderr.
    pub async fn stop(mut self, grace: Duration) -> Stopped {
        drop(self.stdin.take());
        self.tree.terminate();
        let all_gone = self.tree.finish_kill(Some(Instant::now() + grace)).await.is_ok();
        // The leader is our child: reap it so it does not linger as a zombie. Its exit status
        // does not matter any more, since the check is over.
        let _reaped = self.child.wait().await;
        if let Some(reader) = self.stderr_reader.take() {
            // Past the bound, or if the reader failed, the summary has what was read so far.
            let _drained = tokio::time::timeout(STDERR_DRAIN, reader).await;
        }
        let stderr = self.stderr.lock().unwrap_or_else(PoisonError::into_inner).clone();
        Stopped { all_gone, stderr }
    }
}

/// Cuts stdout into numbered lines and sends them on, until stdout ends.
async fn read_stdout(mut stdout: tokio::process::ChildStdout, sender: mpsc::UnboundedSender<Output>) {
    let mut framer = LineFramer::new(DEFAULT_MAX_LINE_BYTES);
    let mut buffer = vec![0; READ_CHUNK_BYTES];
    let mut number = 0;
    let mut numbered = |line: Result<String, FrameError>| {
        number += 1;
        match line {
            Ok(text) => Output::Line { number, text },
            Err(error) => Output::BadLine { number, error },
        }
    };
    loop {
        let read = match stdout.read(&mut buffer).await {
            // A read error ends stdout as surely as its end does: either way no more lines come.
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        framer.push(&buffer[..read]);
        while let Some(line) = framer.next_line() {
            if sender.send(numbered(line)).is_err() {
                // The check is over and no longer listens.
                return;
            }
        }
    }
    while let Some(line) = framer.finish() {
        if sender.send(numbered(line)).is_err() {
            return;
        }
    }
}

/// Counts stderr lines (decoded lossily: they are for people) and keeps the last few.
async fn read_stderr(stderr: tokio::process::ChildStderr, summary: Arc<Mutex<StderrSummary>>) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end();
        if text.trim().is_empty() {
            continue;
        }
        let mut summary = summary.lock().unwrap_or_else(PoisonError::into_inner);
        summary.line_count += 1;
        if summary.last_lines.len() == STDERR_TAIL_LINES {
            summary.last_lines.pop_front();
        }
        summary.last_lines.push_back(text.to_owned());
    }
}
