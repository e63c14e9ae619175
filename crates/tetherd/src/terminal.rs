//! Terminals: commands an agent asked to run (ACP `terminal/*`), each in a PTY of its own that
//! tetherd owns, with its output streamed to the hosts and retained for `terminal/output`.
//!
//! Each terminal has one thread and two tasks (and on Windows a reader thread: see [`pty_io`] for
//! how each platform reads and writes its PTY):
//! - the pump task reads the PTY as output comes, decodes it as UTF-8 incrementally, keeps it in
//!   the [`RetainedOutput`] and publishes it as `terminal/data` ([`output`]): output that trickles
//!   at once, a flood gathered for a moment into one notification. It reads only while the
//!   [`Fanout`] has room, so that a host that falls behind slows the command down through its PTY
//!   instead of growing tetherd. Once the command has exited, it reads on until the PTY is
//!   closed, or quiet for a moment if a background job keeps it open; only then is the exit known
//!   to everyone (`terminal/output`, `terminal/exited`, `terminal/wait_for_exit`), so that it
//!   always comes after the last output;
//! - the input task writes what the person types to the PTY, waiting while the command does not
//!   read its input;
//! - the exit thread waits for the command (`waitpid` on Unix, which gives the real signal).
//!
//! The command and everything it starts are one [`ProcessTree`] (a process group on Unix, the
//! command leading a new session on its PTY; a Job Object on Windows), and a kill reaches all of
//! it. A process that escapes the kill and keeps the PTY open does not keep the terminal alive:
//! the pump stops reading once it has been quiet for a moment after the command's exit. (On
//! Windows this is how every terminal's output ends: ConPTY keeps its pipe open until the
//! terminal is released.)
//!
//! Everything a terminal holds is bounded, each with its policy:
//! - output: the pump holds at most one notification being gathered, about
//!   [`COALESCE_MAX_BYTES`], and waits for room in the [`Fanout`] (backpressure down to the
//!   command through its PTY); `terminal/output` keeps the newest `outputByteLimit` bytes (at most
//!   `MAX_TERMINAL_OUTPUT_LIMIT`), dropping the oldest and saying it truncated;
//! - input: at most [`INPUT_QUEUE`] pieces and [`INPUT_QUEUE_BYTES`] wait for a command that does
//!   not read them (one piece always fits an empty queue); beyond that, input is dropped with a
//!   warning, as a terminal does when its input buffer is full;
//! - terminals: an agent has at most [`MAX_TERMINALS_PER_AGENT`] live at once (each is a PTY, a
//!   thread and two tasks); `terminal/create` beyond that fails with an error saying so.
//!
//! A terminal belongs to its agent: when the agent ends (killed, exited, or tetherd shutting
//! down) its terminals are killed and freed, see [`TerminalRegistry::end_agent`].

mod output;
mod pty_io;
mod retained;
mod utf8_stream;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsString;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};
use tether_core::jsonrpc::encode_notification;
use tether_core::sidecar::{
    AgentId, DEFAULT_TERMINAL_OUTPUT_LIMIT, MAX_TERMINAL_OUTPUT_LIMIT, TerminalCreateParams, TerminalCreateResult,
    TerminalExitStatus, TerminalExited, TerminalId, TerminalInput, TerminalOutputResult, TerminalResize, method,
};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinSet;
use tokio::time::Instant;

use self::output::OutputLines;
use self::pty_io::{PtyReader, PtyWriter};
use self::retained::RetainedOutput;
use crate::agent::{QUIET_AFTER_EXIT, TOKEN_ENV};
use crate::fanout::Fanout;
use crate::process_tree::ProcessTree;

/// How much is read from a PTY at once (it hands out at most 4 KiB).
const READ_CHUNK_BYTES: usize = 16 * 1024;

/// The most output one `terminal/data` carries, in bytes read from the PTY. The pump gathers a
/// flood into one notification up to this size: a flood costs a few large lines rather than many
/// small ones, while a line of it never holds up the host's socket for long.
const COALESCE_MAX_BYTES: usize = 256 * 1024;

/// This much output at once says the command is printing faster than it is read (a PTY read
/// returns at most 4 KiB), so more is on its way. So does output that comes within
/// [`FLOOD_WAIT`] of the previous notification: a reader that keeps up with a fast command gets
/// its output a few lines at a time, and a notification per read would cost more than the
/// command's printing. Output after a quiet moment is never held back.
const FLOOD_READ_BYTES: usize = 1024;

/// During a flood, how long the pump gathers output (reading it as it comes, so that the command
/// never waits for room in its PTY) before it sends a notification. Each notification costs
/// tetherd an encode and a socket write and the host a parse, so a flood sent in large pieces goes
/// through faster and leaves more of the machine to the command; 2 ms is far below a frame
/// (16 ms), so nobody sees the wait, and output that trickles (prompts, progress lines) never
/// waits at all.
const FLOOD_WAIT: Duration = Duration::from_millis(2);

/// How many pieces of input may wait for a command that does not read them. Beyond that, input
/// is dropped (with a warning) rather than queued without bound.
const INPUT_QUEUE: usize = 256;

/// How many bytes of input may wait for a command that does not read them (see [`INPUT_QUEUE`]).
const INPUT_QUEUE_BYTES: usize = 1024 * 1024;

/// How many terminals one agent may have live (created and not released) at once. Agents
/// release the terminals they are done with; this only stops one that never does.
pub const MAX_TERMINALS_PER_AGENT: usize = 64;

/// The terminal type commands see unless the request sets `TERM`.
const DEFAULT_TERM: &str = "xterm-256color";

/// Why a terminal request failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TerminalError {
    /// No terminal with this id (never created, or released).
    UnknownTerminal(TerminalId),
    /// `terminal/create` named an agent that is not running.
    UnknownAgent(AgentId),
    /// The request cannot be right whatever the system is like.
    InvalidParams(String),
    /// The command could not be started; the message says why, for a person.
    Failed(String),
}

impl std::fmt::Display for TerminalError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::UnknownTerminal(terminal_id) => {
                write!(formatter, "no terminal with id {terminal_id} (never created, or released)")
            }
            Self::UnknownAgent(agent_id) => {
                write!(formatter, "no agent with id {agent_id} (never spawned, or already exited)")
            }
            Self::InvalidParams(message) | Self::Failed(message) => formatter.write_str(message),
        }
    }
}

/// The live terminals, and whether new ones may start.
#[derive(Default)]
struct Terminals {
    live: HashMap<TerminalId, Arc<Terminal>>,
    /// Agents whose terminals have been ended for good. An agent that is ending may still be
    /// asked for a terminal; checked under the same lock as the insert, this set makes sure such
    /// a terminal is either refused or ended with the others, never left behind.
    ended_agents: HashSet<AgentId>,
    /// Set at shutdown: no new terminal may start once the old ones are being killed.
    closed: bool,
}

/// The terminals of one tetherd.
pub struct TerminalRegistry {
    next_id: AtomicU64,
    terminals: Mutex<Terminals>,
    fanout: Arc<Fanout>,
    /// How long a killed command has between SIGTERM and SIGKILL.
    kill_grace: Duration,
}

impl std::fmt::Debug for TerminalRegistry {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("TerminalRegistry")
            .field("live", &self.lock().live.len())
            .field("kill_grace", &self.kill_grace)
            .finish_non_exhaustive()
    }
}

impl TerminalRegistry {
    pub fn new(fanout: Arc<Fanout>, kill_grace: Duration) -> Self {
        Self { next_id: AtomicU64::new(1), terminals: Mutex::default(), fanout, kill_grace }
    }

    fn lock(&self) -> MutexGuard<'_, Terminals> {
        // Every critical section leaves the maps consistent (one insert or remove, or setting
        // `closed`), so a poisoned lock still holds usable state.
        self.terminals.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn get(&self, terminal_id: TerminalId) -> Result<Arc<Terminal>, TerminalError> {
        self.lock().live.get(&terminal_id).cloned().ok_or(TerminalError::UnknownTerminal(terminal_id))
    }

    /// Starts a command in a new PTY. The caller has checked that the agent is running; must run
    /// inside the tokio runtime.
    pub fn create(&self, params: TerminalCreateParams) -> Result<TerminalCreateResult, TerminalError> {
        if params.shell && !params.args.is_empty() {
            return Err(TerminalError::InvalidParams(
                "a shell command line takes no args: put them in the command".to_owned(),
            ));
        }
        if !Path::new(&params.cwd).is_dir() {
            return Err(TerminalError::Failed(format!(
                "cannot start {:?}: the working directory {:?} does not exist or is not a directory",
                params.command, params.cwd
            )));
        }
        let command = command_for(&params)?;
        let limit = params.output_byte_limit.unwrap_or(DEFAULT_TERMINAL_OUTPUT_LIMIT).min(MAX_TERMINAL_OUTPUT_LIMIT);
        // The cap is far below `usize::MAX` on every platform tetherd runs on.
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);

        let pair = native_pty_system()
            .openpty(PtySize { rows: params.rows, cols: params.cols, pixel_width: 0, pixel_height: 0 })
            .map_err(|error| TerminalError::Failed(format!("cannot open a PTY: {error:#}")))?;
        let terminal_id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (pty_reader, pty_writer) = pty_io::open(&*pair.master, terminal_id)
            .map_err(|error| TerminalError::Failed(format!("cannot set up the PTY: {error}")))?;

        // The thread and the tasks are started before the command, so that nothing can fail
        // after it runs (the tasks wait for it: the pump for output, the input task for input).
        let (input_sender, input) = mpsc::channel(INPUT_QUEUE);
        let input_queued = Arc::new(AtomicUsize::new(0));
        let (reapable_sender, reapable_receiver) = std::sync::mpsc::channel::<pty_io::Reapable>();
        let (exit_sender, exit) = oneshot::channel();
        spawn_thread(terminal_id, "exit", move || {
            // Nothing to reap means the command did not start, and there is nothing to wait for.
            if let Ok(reapable) = reapable_receiver.recv() {
                // The pump only stops listening once the terminal is being dropped.
                let _unheard = exit_sender.send(pty_io::wait_for_exit(reapable));
            }
        })?;
        tokio::spawn(write_input(terminal_id, pty_writer, input, input_queued.clone()));

        // The lock is held from the checks to the insert, so that a terminal is either refused
        // or seen by `end_agent` and `kill_all`, never started behind their backs.
        let mut terminals = self.lock();
        if terminals.closed {
            return Err(TerminalError::Failed("tetherd is shutting down".to_owned()));
        }
        if terminals.ended_agents.contains(&params.agent_id) {
            return Err(TerminalError::UnknownAgent(params.agent_id));
        }
        let live = terminals.live.values().filter(|terminal| terminal.agent_id == params.agent_id).count();
        if live >= MAX_TERMINALS_PER_AGENT {
            return Err(TerminalError::Failed(format!(
                "cannot start {:?}: the agent already has {live} terminals, the most it may have at once; \
                 release one first",
                params.command
            )));
        }
        // Before the spawn: the command's time then covers all of its life.
        let started = Instant::now();
        let child = pair.slave.spawn_command(command).map_err(|error| {
            TerminalError::Failed(format!("cannot start {:?}: {}", params.command, one_line(&error)))
        })?;
        // The command holds the PTY's other side now; keeping ours open would keep the PTY from
        // ever reporting its end.
        drop(pair.slave);
        let Some(pid) = child.process_id() else {
            return Err(TerminalError::Failed(format!("{:?} started without a process id", params.command)));
        };
        let (tree, reapable) = process_tree_of(child, pid, &params.command)?;
        if reapable_sender.send(reapable).is_err() {
            tracing::error!(terminal_id, pid, "the exit thread is gone; the command will not be reaped");
        }

        let (finished_sender, finished) = watch::channel(None);
        let terminal = Arc::new(Terminal {
            id: terminal_id,
            agent_id: params.agent_id,
            tree,
            command: params.command.clone(),
            output: Mutex::new(Output { retained: RetainedOutput::new(limit), exit_status: None }),
            master: Mutex::new(pair.master),
            input: input_sender,
            input_queued,
            started,
            exited: AtomicBool::new(false),
            kill_requested: AtomicBool::new(false),
            group_gone: watch::Sender::new(false),
            finished,
        });
        terminals.live.insert(terminal_id, terminal.clone());
        drop(terminals);
        tracing::info!(terminal_id, agent_id = params.agent_id, pid, command = %params.command,
            args = ?params.args, shell = params.shell, cwd = %params.cwd, "terminal command started");

        let output = OutputLines::new(terminal.clone());
        let pump =
            Pump { terminal, fanout: self.fanout.clone(), pty: pty_reader, output, exit, finished: finished_sender };
        tokio::spawn(pump.run());
        Ok(TerminalCreateResult { terminal_id, pid })
    }

    /// The retained output, and the exit status once the command has exited.
    pub fn output(&self, terminal_id: TerminalId) -> Result<TerminalOutputResult, TerminalError> {
        let terminal = self.get(terminal_id)?;
        let output = terminal.lock_output();
        tracing::debug!(terminal_id, "terminal output requested");
        Ok(TerminalOutputResult {
            output: output.retained.text(),
            truncated: output.retained.truncated(),
            exit_status: output.exit_status.clone(),
        })
    }

    /// Waits until the command has exited and its output has all been read.
    pub async fn wait_for_exit(&self, terminal_id: TerminalId) -> Result<TerminalExitStatus, TerminalError> {
        let terminal = self.get(terminal_id)?;
        tracing::debug!(terminal_id, "waiting for a terminal command's exit");
        terminal.wait_until_finished().await.ok_or(TerminalError::UnknownTerminal(terminal_id))
    }

    /// Kills the command's process group: SIGTERM now, SIGKILL after the grace period for
    /// whatever is left. Returns once SIGTERM has been sent; the exit is reported as usual.
    pub fn kill(&self, terminal_id: TerminalId) -> Result<(), TerminalError> {
        self.get(terminal_id)?.kill(self.kill_grace);
        Ok(())
    }

    /// Kills the command if it still runs, waits until it is gone, and frees the terminal.
    pub async fn release(&self, terminal_id: TerminalId) -> Result<(), TerminalError> {
        let terminal = self.get(terminal_id)?;
        tracing::debug!(terminal_id, "releasing a terminal");
        terminal.kill(self.kill_grace);
        let mut group_gone = terminal.group_gone.subscribe();
        // Waiting cannot fail (the sender lives in the terminal, which is held here), and the
        // answer is dropped at once: holding it would block the kill task's update.
        drop(group_gone.wait_for(|gone| *gone).await);
        terminal.wait_until_finished().await;
        self.lock().live.remove(&terminal_id);
        tracing::debug!(terminal_id, "terminal released");
        Ok(())
    }

    /// Writes what the person typed to the command. Dropped once the command has exited.
    pub fn input(&self, input: TerminalInput) -> Result<(), TerminalError> {
        let terminal = self.get(input.terminal_id)?;
        if terminal.exited.load(Ordering::Acquire) {
            tracing::debug!(terminal_id = input.terminal_id, "input dropped: the command has exited");
            return Ok(());
        }
        let len = input.data.len();
        let queued = terminal.input_queued.load(Ordering::Acquire);
        if queued > 0 && queued + len > INPUT_QUEUE_BYTES {
            tracing::warn!(
                terminal_id = input.terminal_id,
                len,
                queued,
                "input dropped: the command is not reading what was typed before"
            );
            return Ok(());
        }
        // Counted before it is queued, so that the input thread never takes off more than was added.
        terminal.input_queued.fetch_add(len, Ordering::AcqRel);
        if let Err(error) = terminal.input.try_send(input.data) {
            terminal.input_queued.fetch_sub(len, Ordering::AcqRel);
            tracing::warn!(terminal_id = input.terminal_id, %error,
                "input dropped: the command is not reading what was typed before");
        }
        Ok(())
    }

    /// Tells the command its terminal has a new size (it gets SIGWINCH).
    pub fn resize(&self, resize: TerminalResize) -> Result<(), TerminalError> {
        let terminal = self.get(resize.terminal_id)?;
        let size = PtySize { rows: resize.rows, cols: resize.cols, pixel_width: 0, pixel_height: 0 };
        let master = terminal.master.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match master.resize(size) {
            Ok(()) => tracing::debug!(
                terminal_id = resize.terminal_id,
                cols = resize.cols,
                rows = resize.rows,
                "terminal resized"
            ),
            Err(error) => tracing::warn!(
                terminal_id = resize.terminal_id,
                error = format!("{error:#}"),
                "could not resize the terminal"
            ),
        }
        Ok(())
    }

    /// Kills and frees every terminal of an agent that has ended, and refuses it new ones.
    /// Returns once every command of them is gone.
    pub async fn end_agent(self: &Arc<Self>, agent_id: AgentId) {
        let ids: Vec<TerminalId> = {
            let mut terminals = self.lock();
            terminals.ended_agents.insert(agent_id);
            terminals
                .live
                .values()
                .filter(|terminal| terminal.agent_id == agent_id)
                .map(|terminal| terminal.id)
                .collect()
        };
        if !ids.is_empty() {
            tracing::info!(agent_id, terminals = ids.len(), "the agent has ended; killing its terminals");
        }
        self.release_all(ids).await;
    }

    /// Refuses new terminals and kills and frees every live one, returning once all commands are
    /// gone.
    pub async fn kill_all(self: &Arc<Self>) {
        let ids: Vec<TerminalId> = {
            let mut terminals = self.lock();
            terminals.closed = true;
            terminals.live.keys().copied().collect()
        };
        self.release_all(ids).await;
    }

    async fn release_all(self: &Arc<Self>, ids: Vec<TerminalId>) {
        let mut releases = JoinSet::new();
        for terminal_id in ids {
            let registry = self.clone();
            // A terminal released meanwhile by its host is already what we want.
            releases.spawn(async move { registry.release(terminal_id).await.is_ok() });
        }
        while releases.join_next().await.is_some() {}
    }
}

/// One terminal: its command, its PTY and what it printed.
struct Terminal {
    id: TerminalId,
    agent_id: AgentId,
    /// The command and every process it started.
    tree: ProcessTree,
    /// The program or command line that was asked for, for the log.
    command: String,
    output: Mutex<Output>,
    /// The PTY; kept for resizing, and so that it lives as long as the terminal.
    master: Mutex<Box<dyn MasterPty + Send>>,
    input: mpsc::Sender<String>,
    /// The bytes of input queued and not yet written to the PTY.
    input_queued: Arc<AtomicUsize>,
    /// When the command was started, to say how long it ran (see `TerminalExited::elapsed_ms`).
    started: Instant,
    /// Set once the command has exited (possibly before its last output has been read).
    exited: AtomicBool,
    kill_requested: AtomicBool,
    /// Set once a kill has ended the whole process group (or there was nothing left to kill).
    group_gone: watch::Sender<bool>,
    /// The exit status, once the command has exited and all its output has been read.
    finished: watch::Receiver<Option<TerminalExitStatus>>,
}

/// What `terminal/output` answers from.
struct Output {
    retained: RetainedOutput,
    exit_status: Option<TerminalExitStatus>,
}

impl Terminal {
    fn lock_output(&self) -> MutexGuard<'_, Output> {
        // The output is only ever appended to or given its exit status, each in one step, so a
        // poisoned lock still holds usable state.
        self.output.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The exit status, once the command has exited and all its output has been read; `None`
    /// when the pump ended without one (it does not, short of a panic).
    async fn wait_until_finished(&self) -> Option<TerminalExitStatus> {
        let mut finished = self.finished.clone();
        let status = finished.wait_for(Option::is_some).await.ok()?;
        status.clone()
    }

    /// Asks the command's process tree to end (SIGTERM), and kills it after `grace` if any of it
    /// is still there then. Killing a command that has ended, with nothing of its tree left, does
    /// nothing.
    fn kill(&self, grace: Duration) {
        let nothing_left = self.exited.load(Ordering::Acquire) && !self.tree.has_live_members();
        if nothing_left {
            tracing::debug!(terminal_id = self.id, "kill: the command has already exited");
            self.group_gone.send_replace(true);
            return;
        }
        if self.kill_requested.swap(true, Ordering::AcqRel) {
            tracing::debug!(terminal_id = self.id, "kill: already being killed");
            return;
        }
        tracing::info!(terminal_id = self.id, agent_id = self.agent_id, pid = self.tree.pid(), command = %self.command,
            "killing terminal command");
        self.tree.terminate();
        let (terminal_id, tree, group_gone) = (self.id, self.tree.clone(), self.group_gone.clone());
        tokio::spawn(async move {
            if tree.finish_kill(Some(Instant::now() + grace)).await.is_err() {
                tracing::warn!(
                    terminal_id,
                    pid = tree.pid(),
                    "processes of the terminal command's tree survive its kill"
                );
            }
            group_gone.send_replace(true);
        });
    }
}

/// The task that reads one terminal's output from its PTY and hands it to the hosts, and reports
/// the exit once the output is finished.
struct Pump {
    terminal: Arc<Terminal>,
    fanout: Arc<Fanout>,
    pty: PtyReader,
    output: OutputLines,
    exit: oneshot::Receiver<TerminalExitStatus>,
    finished: watch::Sender<Option<TerminalExitStatus>>,
}

impl Pump {
    async fn run(mut self) {
        let terminal_id = self.terminal.id;
        let mut buffer = vec![0; READ_CHUNK_BYTES];
        // Whether the PTY may still have output: until it is closed (every process holding it
        // has ended) or, after the exit, quiet for a moment.
        let mut open = true;
        let mut status: Option<TerminalExitStatus> = None;
        // How long the command ran: until its exit, not until its last output was read.
        let mut ran_for = None;
        while open || status.is_none() {
            tokio::select! {
                exited = &mut self.exit, if status.is_none() => {
                    status = Some(exited.unwrap_or_else(|_| {
                        tracing::error!(terminal_id, "the exit thread ended without an exit status");
                        TerminalExitStatus { exit_code: None, signal: None }
                    }));
                    self.terminal.exited.store(true, Ordering::Release);
                    ran_for = Some(self.terminal.started.elapsed());
                }
                () = read_output(&mut self.pty, &mut self.output, &mut buffer, &mut open), if open => {
                    // A flood is gathered for a moment, read as it comes, before it goes out.
                    if open && self.output.is_flood() {
                        let gathered = Instant::now() + FLOOD_WAIT;
                        while open && !self.output.is_full() {
                            tokio::select! {
                                () = read_output(&mut self.pty, &mut self.output, &mut buffer, &mut open) => {}
                                () = tokio::time::sleep_until(gathered) => break,
                            }
                        }
                    }
                    if let Some(line) = self.output.take_line() {
                        self.fanout.publish(line).await;
                        // The hosts' connections write the line before the PTY is read again
                        // (see `read_output` for why that read may wait).
                        tokio::task::yield_now().await;
                    }
                }
                // The command has exited: whatever still holds the PTY open (a background job)
                // has a moment of quiet to end its output, and no more.
                () = tokio::time::sleep(QUIET_AFTER_EXIT), if open && status.is_some() => open = false,
            }
        }
        // The end of the output, a character it left unfinished included, comes before the exit.
        if let Some(line) = self.output.finish() {
            self.fanout.publish(line).await;
        }
        let status = status.unwrap_or(TerminalExitStatus { exit_code: None, signal: None });
        let ran_for = ran_for.unwrap_or_else(|| self.terminal.started.elapsed());
        self.finish(status, ran_for).await;
    }

    /// Makes the exit known: in `terminal/output`, to the hosts, then to those waiting for it.
    async fn finish(self, status: TerminalExitStatus, ran_for: Duration) {
        let terminal = &self.terminal;
        let killed = terminal.kill_requested.load(Ordering::Acquire);
        terminal.lock_output().exit_status = Some(status.clone());
        tracing::info!(terminal_id = terminal.id, agent_id = terminal.agent_id, pid = terminal.tree.pid(),
            command = %terminal.command, exit_code = ?status.exit_code, signal = ?status.signal, killed,
            "terminal command exited");
        let elapsed_ms = Some(u64::try_from(ran_for.as_millis()).unwrap_or(u64::MAX));
        let exited = TerminalExited { terminal_id: terminal.id, status: status.clone(), killed, elapsed_ms };
        self.fanout.publish(encode_notification(method::TERMINAL_EXITED, &exited)).await;
        self.finished.send_replace(Some(status));
    }
}

/// The command line to run for `params`, with its directory and environment.
fn command_for(params: &TerminalCreateParams) -> Result<CommandBuilder, TerminalError> {
    #[cfg(unix)]
    let mut command = unix_command(params)?;
    #[cfg(windows)]
    let mut command = CommandBuilder::from_argv(windows_argv(params, || {
        crate::launcher::resolve_here(&params.command, &params.args, &params.env)
    })?);
    command.cwd(&params.cwd);
    set_environment(&mut command, &params.env);
    Ok(command)
}

/// A command line runs in bash when it is installed, else in sh; a program is looked for on
/// `PATH` first, so that a missing one fails `terminal/create` rather than printing an error.
#[cfg(unix)]
fn unix_command(params: &TerminalCreateParams) -> Result<CommandBuilder, TerminalError> {
    let path = params.env.get("PATH").map(OsString::from).or_else(|| std::env::var_os("PATH"));
    if params.shell {
        let shell = if find_on_path("bash", path.as_deref()) { "bash" } else { "sh" };
        let mut command = CommandBuilder::new(shell);
        command.args(["-c", &params.command]);
        return Ok(command);
    }
    if !params.command.contains('/') && !find_on_path(&params.command, path.as_deref()) {
        return Err(TerminalError::Failed(format!("cannot start {:?}: no such program on PATH", params.command)));
    }
    let mut command = CommandBuilder::new(&params.command);
    command.args(&params.args);
    Ok(command)
}

/// The program and arguments on Windows: a command line runs in `cmd.exe` (`/d`: no AutoRun
/// commands; `/s /c`: the rest is the command, as typed); a program is found as a shell finds it
/// (`resolve`: PATH and PATHEXT, see `launcher.rs`), and a batch file (npm's `.cmd` launchers) is
/// run by `cmd.exe`, since a console cannot start one itself.
///
/// portable-pty quotes each argument for a program's C runtime; `cmd.exe` reads its line by its
/// own rules, so a command line holding double quotes may reach it changed.
#[cfg_attr(not(windows), allow(dead_code, reason = "Windows only; its rules are tested everywhere"))]
fn windows_argv(
    params: &TerminalCreateParams,
    resolve: impl FnOnce() -> Result<crate::launcher::Launch, crate::launcher::NotFound>,
) -> Result<Vec<OsString>, TerminalError> {
    const CMD: &str = "cmd.exe";
    if params.shell {
        return Ok([CMD, "/d", "/s", "/c", &params.command].map(OsString::from).into());
    }
    let launch = resolve()
        .map_err(|not_found| TerminalError::Failed(format!("cannot start {:?}: {not_found}", params.command)))?;
    let extension = Path::new(&launch.program).extension().map(|extension| extension.to_ascii_lowercase());
    let mut argv: Vec<OsString> = Vec::new();
    if extension.as_ref().is_some_and(|extension| extension == "cmd" || extension == "bat") {
        argv.extend([CMD, "/d", "/c"].map(OsString::from));
    }
    argv.push(launch.program);
    argv.extend(launch.args);
    Ok(argv)
}

/// tetherd's own environment (which the builder starts from) without the hello token, with
/// [`DEFAULT_TERM`], and with what the request adds.
fn set_environment(command: &mut CommandBuilder, env: &BTreeMap<String, String>) {
    command.env_remove(TOKEN_ENV);
    command.env("TERM", DEFAULT_TERM);
    for (key, value) in env {
        command.env(key, value);
    }
}

/// Whether an executable file `program` is in one of the folders of `path`.
#[cfg(unix)]
fn find_on_path(program: &str, path: Option<&std::ffi::OsStr>) -> bool {
    let Some(path) = path else {
        return false;
    };
    std::env::split_paths(path).any(|folder| is_executable_file(&folder.join(program)))
}

#[cfg(unix)]
fn is_executable_file(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
}

/// An error and its causes on one line, for a message to the host.
fn one_line(error: &anyhow::Error) -> String {
    format!("{error:#}").lines().map(str::trim).filter(|line| !line.is_empty()).collect::<Vec<_>>().join(" ")
}

/// Starts one of a terminal's threads.
fn spawn_thread(
    terminal_id: TerminalId,
    role: &str,
    body: impl FnOnce() + Send + 'static,
) -> Result<(), TerminalError> {
    std::thread::Builder::new()
        .name(format!("terminal-{terminal_id}-{role}"))
        .spawn(body)
        .map(drop)
        .map_err(|error| TerminalError::Failed(format!("cannot start a thread for the terminal: {error}")))
}

/// The input task: writes each piece of input to the PTY, in order, until the terminal is
/// dropped or the PTY is gone.
async fn write_input(
    terminal_id: TerminalId,
    mut pty: PtyWriter,
    mut input: mpsc::Receiver<String>,
    queued: Arc<AtomicUsize>,
) {
    while let Some(data) = input.recv().await {
        // Waits whenever the PTY is full, that is while the command does not read its input.
        let written = pty.write_all(data.as_bytes()).await;
        queued.fetch_sub(data.len(), Ordering::AcqRel);
        if let Err(error) = written {
            tracing::debug!(terminal_id, %error, "input dropped: the terminal is gone");
            return;
        }
    }
}

/// Waits for output, then reads all there is into `output` (up to a full notification), or only
/// the first read when it is not part of a flood. Clears `open` once the PTY is closed: every
/// process holding it has ended (the kernel says so with EIO), or it failed.
///
/// Output that is not part of a flood goes out before the PTY is read again: the read that finds
/// the PTY empty first waits for the kernel to finish passing on what the command wrote (it
/// flushes the PTY's buffer work, which the read itself has often preempted), and that wait would
/// hold up a lone line. The next call finds the PTY still ready and reads on, once the line has
/// been written to the hosts.
async fn read_output(pty: &mut PtyReader, output: &mut OutputLines, buffer: &mut [u8], open: &mut bool) {
    if let Err(error) = pty.readable().await {
        tracing::debug!(%error, "waiting for the terminal's output failed; its output ends here");
        *open = false;
        return;
    }
    while !output.is_full() {
        match pty.try_read(buffer) {
            Ok(0) => *open = false,
            Ok(read) => {
                output.add(&buffer[..read]);
                if output.is_flood() {
                    continue;
                }
            }
            // Read to its end for now; the reactor says when there is more.
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => {
                if !pty_io::is_hangup(&error) {
                    tracing::debug!(%error, "reading the terminal failed; its output ends here");
                }
                *open = false;
            }
        }
        return;
    }
}

/// The command's process tree, and what the exit thread waits on. On Unix the command leads its
/// own session, so its pid is its group; the exit thread reaps it by pid, to read its signal.
#[cfg(unix)]
fn process_tree_of(
    child: Box<dyn portable_pty::Child + Send + Sync>,
    pid: u32,
    _command: &str,
) -> Result<(ProcessTree, pty_io::Reapable), TerminalError> {
    crate::orphans::track(pid);
    drop(child);
    Ok((ProcessTree::led_by(pid), pid))
}

/// The command's process tree, and what the exit thread waits on. On Windows the command is put
/// in a Job Object of its own; a command that cannot be is ended, since it could not be killed.
#[cfg(windows)]
fn process_tree_of(
    mut child: Box<dyn portable_pty::Child + Send + Sync>,
    pid: u32,
    command: &str,
) -> Result<(ProcessTree, pty_io::Reapable), TerminalError> {
    let adopted = child
        .as_raw_handle()
        .ok_or_else(|| std::io::Error::other("the command has no process handle"))
        .and_then(|handle| ProcessTree::adopt(pid, handle));
    match adopted {
        Ok(tree) => Ok((tree, child)),
        Err(error) => {
            if let Err(kill_error) = child.kill() {
                tracing::error!(pid, %kill_error, "could not end a command that has no job");
            }
            Err(TerminalError::Failed(format!("cannot start {command:?}: cannot put it in a job of its own: {error}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_command_line_is_run_by_bash_when_it_is_installed_else_by_sh() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let params = |path: &Path| TerminalCreateParams {
            agent_id: 1,
            command: "echo $0".to_owned(),
            args: Vec::new(),
            shell: true,
            env: BTreeMap::from([("PATH".to_owned(), path.to_string_lossy().into_owned())]),
            cwd: "/".to_owned(),
            output_byte_limit: None,
            cols: 80,
            rows: 24,
        };
        let argv = |path: &Path| command_for(&params(path)).map(|command| command.get_argv().clone());
        assert_eq!(argv(dir.path()), Ok(vec!["sh".into(), "-c".into(), "echo $0".into()]));

        let bash = dir.path().join("bash");
        std::fs::write(&bash, "").expect("a fake bash");
        assert_eq!(argv(dir.path()), Ok(vec!["sh".into(), "-c".into(), "echo $0".into()]), "not executable");
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&bash, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        assert_eq!(argv(dir.path()), Ok(vec!["bash".into(), "-c".into(), "echo $0".into()]));
    }

    /// What a terminal runs on Windows, found among `files` (the launcher's rules, tested here on
    /// any platform), as one line.
    fn on_windows(command: &str, args: &[&str], shell: bool, files: &[&str]) -> String {
        let params = TerminalCreateParams {
            agent_id: 1,
            command: command.to_owned(),
            args: args.iter().map(|arg| (*arg).to_owned()).collect(),
            shell,
            env: BTreeMap::new(),
            cwd: r"C:\work".to_owned(),
            output_byte_limit: None,
            cols: 80,
            rows: 24,
        };
        let is_file = |candidate: &str| files.iter().any(|file| file.eq_ignore_ascii_case(candidate));
        let search = crate::launcher::Search {
            windows: true,
            path: Some(r"C:\Windows\system32;C:\Users\me\AppData\Roaming\npm"),
            pathext: None,
            is_file: &is_file,
        };
        match windows_argv(&params, || crate::launcher::resolve(command, &params.args, &search)) {
            Ok(argv) => argv.iter().map(|arg| arg.to_string_lossy()).collect::<Vec<_>>().join(" | "),
            Err(error) => format!("error: {error}"),
        }
    }

    #[test]
    fn windows_terminals_run_command_lines_in_cmd_and_npm_launchers_through_it() {
        let npm = r"C:\Users\me\AppData\Roaming\npm";
        let git = r"C:\Windows\system32\git.exe";
        let tsc = format!(r"{npm}\tsc.cmd");
        let files = [git, tsc.as_str()];
        expect_test::expect![[r#"
            cmd.exe | /d | /s | /c | npm test && echo "done"
            C:\Windows\system32\git.exe | status | --short
            cmd.exe | /d | /c | C:\Users\me\AppData\Roaming\npm\tsc.cmd | --noEmit | -p | my project
            error: cannot start "cargo": "cargo" was not found (looked for C:\Windows\system32\cargo.com and 9 more on PATH)"#]]
        .assert_eq(
            &[
                on_windows(r#"npm test && echo "done""#, &[], true, &files),
                on_windows("git", &["status", "--short"], false, &files),
                on_windows("tsc", &["--noEmit", "-p", "my project"], false, &files),
                on_windows("cargo", &["build"], false, &files),
            ]
            .join("\n"),
        );
    }

    #[test]
    fn the_environment_has_no_token_and_a_term_the_request_may_override() {
        let mut command = CommandBuilder::new("env");
        command.env(TOKEN_ENV, "secret");
        set_environment(&mut command, &BTreeMap::new());
        assert_eq!(command.get_env(TOKEN_ENV), None);
        assert_eq!(command.get_env("TERM"), Some(std::ffi::OsStr::new(DEFAULT_TERM)));

        set_environment(&mut command, &BTreeMap::from([("TERM".to_owned(), "dumb".to_owned())]));
        assert_eq!(command.get_env("TERM"), Some(std::ffi::OsStr::new("dumb")));
    }
}
