//! Agent process supervision: starting agents, feeding their stdin, forwarding what they print,
//! killing them, and reaping every one of them.
//!
//! Each agent runs in its own process group, so that a kill reaches the helpers it started (an
//! ACP adapter is often a Node wrapper around the real CLI). One supervisor task per agent owns
//! the [`Child`]: it waits for the exit, escalates a kill from SIGTERM to SIGKILL, makes sure
//! everything the agent printed has been forwarded, and only then reports `agent/exited`.
//!
//! The registry also remembers each agent's session folder (see [`crate::session`]), for longer
//! than the agent itself: the host still audits what happened to a session after its agent died.
//! Everything on the agent's wire goes through the session's event log (see
//! [`crate::event_log`]) before it reaches the agent or a host, and what the agent says reaches
//! the hosts with its `seq` in that log.
//!
//! What waits for an agent is bounded, each queue with its policy:
//! - its stdin queue (messages from the hosts it has not read yet) holds at most
//!   [`STDIN_QUEUE_BUDGET_BYTES`]; one message always fits an empty queue, so none is too big to
//!   send. A message that finds no room is refused (it is neither written nor logged as sent),
//!   and the agent is ended with a clear error on its stderr: an agent that leaves that much of
//!   its input unread has stopped reading it, and every request in it would wait for ever;
//! - its stdout is framed by a [`LineFramer`] bounded by `--max-line-bytes` (a longer line is
//!   dropped as it streams in and reported as `agent/badLine`, the session goes on), and each
//!   line waits for room in the [`Fanout`] before the next is read, so a host that falls behind
//!   slows the agent down through its stdout pipe (backpressure);
//! - its stderr is passed on in lines of at most 16 KiB, with the same backpressure.
//!
//! An agent may continue an earlier session's folder (`sessionDir`, when the person reopens a
//! session). Its lines go to the same event log after the earlier agents' ones; only one agent
//! at a time may have the folder, and one writer of this tetherd numbers its lines, shared with
//! the earlier agents of the folder (whose audit records may still come in after they died).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use serde_json::value::RawValue;
use tether_core::framing::{FrameError, LineFramer};
use tether_core::jsonrpc::encode_notification;
use tether_core::sidecar::{
    AgentBadLine, AgentExited, AgentId, AgentLogFailed, AgentMessage, AgentStderr, BadLineKind, SessionMeta,
    SpawnParams, SpawnResult, method, preview_of,
};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, TryAcquireError, mpsc, watch};
use tokio::time::Instant;

use crate::event_log::EventLog;
use crate::fanout::Fanout;
use crate::process_tree::ProcessTree;
use crate::session::{self, SessionFolder};
use crate::terminal::TerminalRegistry;
use crate::utc::UtcTime;

/// The environment variable carrying the hello token. Agents never see it: it would let any
/// agent (or anything an agent runs) drive tetherd.
pub const TOKEN_ENV: &str = "TETHER_TOKEN";

/// Once an agent has exited, how long its stdout and stderr may stay silent before they are
/// considered finished. A helper the agent left running may hold the pipes open for ever; this
/// bounds how long `agent/exited` waits for it without cutting off output that is still flowing.
/// Terminals wait the same way for their PTY after the command has exited.
pub const QUIET_AFTER_EXIT: Duration = Duration::from_secs(1);

/// Stderr is text for people: a line longer than this is passed on in pieces of this size.
const STDERR_LINE_MAX_BYTES: usize = 16 * 1024;

/// How much is read from an agent's pipe at once.
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// How many bytes of messages may wait for an agent that is not reading its stdin (on top of
/// what the pipe itself holds). Far more than any agent leaves unread while it works: the
/// hosts send it prompts, answers and the files it asked for.
pub const STDIN_QUEUE_BUDGET_BYTES: usize = 32 * 1024 * 1024;

/// Every queued message is charged this much on top of its length, so that a flood of tiny
/// messages is bounded too.
const PER_MESSAGE_OVERHEAD_BYTES: usize = 64;

/// `agent/spawn` failed; the message says why in words a person can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnFailed(pub String);

/// The request named an agent that does not exist (never spawned, or already reaped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownAgent(pub AgentId);

/// Why an agent has no session folder to write to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoSessionDir {
    /// tetherd never spawned an agent with this id.
    UnknownAgent,
    /// The agent was spawned without `tetherDir`, or its folder could not be created.
    NotCreated,
}

/// What the registry keeps about a live agent.
#[derive(Debug, Clone)]
struct AgentHandle {
    name: String,
    stdin: StdinQueue,
    kill_requested: Arc<Notify>,
    reaped: watch::Receiver<bool>,
    /// Set once the agent's exit is in its session's log, before the hosts hear of it: from
    /// then on the session folder is free for another agent, so that a host that restarts the
    /// session as soon as it hears of the exit is not refused.
    exit_logged: bool,
}

/// The live agents, and whether new ones may start.
#[derive(Debug, Default)]
struct Agents {
    live: HashMap<AgentId, AgentHandle>,
    /// The session folder of every agent that has one, live or reaped. Kept after the agent is
    /// reaped because the host audits the end of a session after the exit ("cancelled: the agent
    /// died"); one path and one open file per agent started is little to keep for a tetherd's
    /// lifetime.
    sessions: HashMap<AgentId, SessionFolder>,
    /// Set at shutdown: no new agent may start once the old ones are being killed.
    closed: bool,
}

impl Agents {
    /// See [`AgentRegistry::live_session_dirs`]. An agent whose exit is logged no longer counts.
    fn live_session_dirs(&self) -> Vec<(AgentId, PathBuf)> {
        self.live
            .iter()
            .filter(|(_, handle)| !handle.exit_logged)
            .filter_map(|(agent_id, _)| Some((*agent_id, self.sessions.get(agent_id)?.dir.clone())))
            .collect()
    }

    /// The session folder `dir` (resolved) for a new agent to continue, unless a running agent
    /// has it. The event log's writer is the one an earlier agent of this tetherd had for the
    /// folder, when there is one that still writes: two writers would number the same lines.
    ///
    /// Reopening a log reads its last line and may cut a partial one off; that is done under the
    /// registry's lock (a short read and write), so that no other agent can take the folder
    /// meanwhile.
    fn continue_session(&self, dir: PathBuf) -> Result<SessionFolder, SpawnFailed> {
        let is_dir = |other: &Path| std::fs::canonicalize(other).is_ok_and(|other| other == dir);
        if let Some((agent_id, _)) = self.live_session_dirs().iter().find(|(_, live_dir)| is_dir(live_dir)) {
            return Err(SpawnFailed(format!(
                "cannot continue the session {}: its agent (id {agent_id}) is still running",
                dir.display()
            )));
        }
        let earlier = self.sessions.values().find(|session| !session.events.is_stopped() && is_dir(&session.dir));
        match earlier {
            Some(earlier) => Ok(SessionFolder { dir, events: earlier.events.clone() }),
            None => session::reopen(dir.clone())
                .map_err(|error| SpawnFailed(format!("cannot continue the session {}: {error:#}", dir.display()))),
        }
    }
}

/// The agents of one tetherd.
#[derive(Debug)]
pub struct AgentRegistry {
    next_id: AtomicU64,
    agents: Mutex<Agents>,
    fanout: Arc<Fanout>,
    max_line_bytes: usize,
    kill_grace: Duration,
    /// The commands agents run in terminals; they end with their agent.
    terminals: Arc<TerminalRegistry>,
}

impl AgentRegistry {
    pub fn new(
        fanout: Arc<Fanout>,
        max_line_bytes: usize,
        kill_grace: Duration,
        terminals: Arc<TerminalRegistry>,
    ) -> Self {
        Self { next_id: AtomicU64::new(1), agents: Mutex::default(), fanout, max_line_bytes, kill_grace, terminals }
    }

    fn lock(&self) -> MutexGuard<'_, Agents> {
        // Every critical section leaves the map consistent (one insert, one remove or setting
        // `closed`), so a poisoned lock still holds usable state.
        self.agents.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts an agent and its supervisor. Must run inside the tokio runtime. `more_env` is
    /// asked, with the agent's id, for variables to add to its environment before it starts
    /// (its MCP token: whatever the id opens must be in place before the agent can use it).
    pub fn spawn(
        self: &Arc<Self>,
        params: SpawnParams,
        more_env: impl FnOnce(AgentId) -> BTreeMap<String, String>,
    ) -> Result<SpawnResult, SpawnFailed> {
        let cwd = Path::new(&params.cwd);
        if !cwd.is_dir() {
            return Err(SpawnFailed(format!(
                "cannot start {:?}: the working directory {:?} does not exist or is not a directory",
                params.command, params.cwd
            )));
        }
        // Checked before anything starts: an agent for a session it may not continue must not run.
        let continued_dir = match (&params.session_dir, &params.tether_dir) {
            (None, _) => None,
            (Some(dir), None) => {
                return Err(SpawnFailed(format!("cannot continue the session {dir}: sessionDir needs tetherDir")));
            }
            (Some(dir), Some(tether_dir)) => Some(
                session::existing(Path::new(tether_dir), dir)
                    .map_err(|error| SpawnFailed(format!("cannot continue the session {dir}: {error:#}")))?,
            ),
        };
        let launch = crate::launcher::resolve_here(&params.command, &params.args, &params.env)
            .map_err(|not_found| SpawnFailed(format!("cannot start {:?}: {not_found}", params.command)))?;
        let mut command = Command::new(&launch.program);
        command
            .args(&launch.args)
            .current_dir(cwd)
            .env_remove(TOKEN_ENV)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, value) in &params.env {
            if value.is_empty() {
                command.env_remove(key);
            } else {
                command.env(key, value);
            }
        }
        ProcessTree::prepare(&mut command);
        // Taken before the process starts, so that `more_env` can name it; an id a failed spawn
        // took is never used again, like any other.
        let agent_id = self.next_id.fetch_add(1, Ordering::Relaxed);
        command.envs(more_env(agent_id));
        // The lock is held from the check of `closed` to the insert, so that an agent is either
        // refused or seen by `kill_all`, never started behind its back during shutdown.
        let mut agents = self.lock();
        if agents.closed {
            return Err(SpawnFailed("tetherd is shutting down".to_owned()));
        }
        // Under the same lock as the insert below, so that two spawns for one folder cannot both
        // take it.
        let continued = continued_dir.map(|dir| agents.continue_session(dir)).transpose()?;
        let mut child = command.spawn().map_err(|error| SpawnFailed(spawn_error(&params.command, &error)))?;
        let tree = ProcessTree::of_child(&mut child)
            .map_err(|error| SpawnFailed(format!("cannot start {:?}: {error}", params.command)))?;
        let pid = tree.pid();
        #[cfg(unix)]
        crate::orphans::track(pid);
        let stdin = child.stdin.take().expect("stdin was configured as piped");
        let stdout = child.stdout.take().expect("stdout was configured as piped");
        let stderr = child.stderr.take().expect("stderr was configured as piped");

        let (stdin_queue, stdin_receiver) = StdinQueue::new();
        let input_stalled = stdin_queue.stalled.clone();
        let kill_requested = Arc::new(Notify::new());
        let (reaped_sender, reaped) = watch::channel(false);
        agents.live.insert(
            agent_id,
            AgentHandle {
                name: params.name.clone(),
                stdin: stdin_queue,
                kill_requested: kill_requested.clone(),
                reaped,
                exit_logged: false,
            },
        );
        if let Some(session) = &continued {
            agents.sessions.insert(agent_id, session.clone());
        }
        drop(agents);
        tracing::info!(agent = %params.name, agent_id, pid, command = %params.command, "agent started");
        // Before the forwarders start, so that no host can hear of the agent before its folder
        // is known.
        let session = match continued {
            Some(session) => {
                tracing::info!(agent = %params.name, agent_id, dir = %session.dir.display(), "session folder continued");
                Some(session)
            }
            None => {
                params.tether_dir.as_deref().and_then(|tether_dir| self.open_session(agent_id, &params, tether_dir))
            }
        };
        // `create` and `existing` return UTF-8 paths, so nothing is lost here.
        let session_dir = session.as_ref().map(|session| session.dir.to_string_lossy().into_owned());

        tokio::spawn(write_stdin(agent_id, params.name.clone(), stdin, stdin_receiver));
        let supervisor = Supervisor {
            registry: self.clone(),
            agent_id,
            name: params.name,
            tree,
            kill_requested,
            input_stalled,
            reaped: reaped_sender,
            events: session.map(|session| session.events),
        };
        tokio::spawn(supervisor.run(child, stdout, stderr));
        // The MCP offer is the connection's to add: it knows the MCP server.
        Ok(SpawnResult { agent_id, pid, session_dir, mcp: None })
    }

    /// Creates the agent's session folder under `tether_dir` and remembers it.
    ///
    /// Failing here does not fail the spawn: the agent is already running, and a person who
    /// asked for an agent should get it even when, say, the workspace is read-only. They lose the
    /// session's logs, which the log line says and the host sees from the `null` folder.
    fn open_session(&self, agent_id: AgentId, params: &SpawnParams, tether_dir: &str) -> Option<SessionFolder> {
        let name = &params.name;
        let now = UtcTime::from_system_time(SystemTime::now());
        let meta = SessionMeta { agent: params.name.clone(), created: now.rfc3339_millis(), title: None };
        match session::create(Path::new(tether_dir), agent_id, now, &meta) {
            Ok(session) => {
                tracing::info!(agent = %name, agent_id, dir = %session.dir.display(), "session folder created");
                self.lock().sessions.insert(agent_id, session.clone());
                Some(session)
            }
            Err(error) => {
                tracing::warn!(agent = %name, agent_id, tether_dir, error = format!("{error:#}"),
                    "no session folder for this agent; it runs without an event log or an audit log");
                None
            }
        }
    }

    /// The session folder of an agent, whether it still runs or not.
    pub fn session_folder(&self, agent_id: AgentId) -> Result<SessionFolder, NoSessionDir> {
        let agents = self.lock();
        match agents.sessions.get(&agent_id) {
            Some(session) => Ok(session.clone()),
            // Ids are handed out in order from 1 and only to agents that started.
            None if (1..self.next_id.load(Ordering::Relaxed)).contains(&agent_id) => Err(NoSessionDir::NotCreated),
            None => Err(NoSessionDir::UnknownAgent),
        }
    }

    /// The session folders of the running agents, with their ids: a session whose agent still
    /// runs shows as live in the history and cannot be deleted or continued by another agent.
    pub fn live_session_dirs(&self) -> Vec<(AgentId, PathBuf)> {
        self.lock().live_session_dirs()
    }

    /// Whether the agent is running (spawned, and not yet reaped).
    pub fn is_live(&self, agent_id: AgentId) -> bool {
        self.lock().live.contains_key(&agent_id)
    }

    /// Records one message in the session's event log and queues it for the agent's stdin.
    ///
    /// A message that finds the queue full is refused, and the agent ended (see the module
    /// documentation); a refused message is not in the log, since the agent never gets it.
    pub fn send(&self, agent_id: AgentId, message: &str) -> Result<(), UnknownAgent> {
        let agents = self.lock();
        let handle = agents.live.get(&agent_id).ok_or(UnknownAgent(agent_id))?;
        let room = match handle.stdin.reserve(message) {
            Ok(room) => room,
            Err(TryAcquireError::Closed) => {
                tracing::warn!(agent = %handle.name, agent_id, "message dropped: the agent's stdin is closed");
                return Ok(());
            }
            Err(TryAcquireError::NoPermits) => {
                tracing::warn!(agent = %handle.name, agent_id, len = message.len(),
                    "message refused: the agent is not reading its stdin");
                handle.stdin.stalled.notify_one();
                return Ok(());
            }
        };
        // Under the registry's lock, so that the log has the messages in the order they are
        // queued even when two hosts send to the agent at once.
        if let Some(session) = agents.sessions.get(&agent_id)
            && !session.events.sent(message)
        {
            // The session must not go on unrecorded; the agent is being ended (see
            // `Supervisor::run`), and this message would be the first the log does not have.
            tracing::warn!(agent = %handle.name, agent_id, "message dropped: the session's event log has stopped");
            return Ok(());
        }
        if handle.stdin.sender.send(StdinItem::Line(message.to_owned(), room)).is_err() {
            tracing::warn!(agent = %handle.name, agent_id, "message dropped: the agent's stdin is closed");
        }
        Ok(())
    }

    /// Closes the agent's stdin once the messages queued before have been written: an agent
    /// that reads until the end of its input (the Claude CLI) then finishes and exits. Messages
    /// sent after are dropped.
    pub fn close_input(&self, agent_id: AgentId) -> Result<(), UnknownAgent> {
        let agents = self.lock();
        let handle = agents.live.get(&agent_id).ok_or(UnknownAgent(agent_id))?;
        if handle.stdin.sender.send(StdinItem::Close).is_err() {
            tracing::debug!(agent = %handle.name, agent_id, "the agent's stdin was closed already");
        }
        Ok(())
    }

    /// Kills the agent's process group (SIGTERM, then SIGKILL after the grace) and returns once
    /// it has been reaped and `agent/exited` has been published.
    pub async fn kill(&self, agent_id: AgentId) -> Result<(), UnknownAgent> {
        let (kill_requested, mut reaped) = {
            let agents = self.lock();
            let handle = agents.live.get(&agent_id).ok_or(UnknownAgent(agent_id))?;
            (handle.kill_requested.clone(), handle.reaped.clone())
        };
        kill_requested.notify_one();
        // An error means the supervisor is gone, which it only is after reaping.
        let _reaped = reaped.wait_for(|reaped| *reaped).await;
        Ok(())
    }

    /// Refuses new agents and kills every live one, returning once all have been reaped.
    pub async fn kill_all(self: &Arc<Self>) {
        let ids: Vec<AgentId> = {
            let mut agents = self.lock();
            agents.closed = true;
            agents.live.keys().copied().collect()
        };
        let mut kills = tokio::task::JoinSet::new();
        for agent_id in ids {
            let registry = self.clone();
            // An agent that was reaped meanwhile is already what we want.
            kills.spawn(async move { registry.kill(agent_id).await.is_ok() });
        }
        while kills.join_next().await.is_some() {}
    }
}

/// Everything one agent's supervisor task needs.
struct Supervisor {
    registry: Arc<AgentRegistry>,
    agent_id: AgentId,
    name: String,
    /// The agent and every process it started.
    tree: ProcessTree,
    kill_requested: Arc<Notify>,
    /// Raised when a message found the agent's stdin queue full.
    input_stalled: Arc<Notify>,
    reaped: watch::Sender<bool>,
    /// The session's event log, when the agent has a session folder.
    events: Option<EventLog>,
}

impl Supervisor {
    async fn run(self, mut child: Child, stdout: ChildStdout, stderr: ChildStderr) {
        let (exited_sender, exited) = watch::channel(false);
        let stdout_forwarder =
            tokio::spawn(forward_stdout(self.forwarding(), stdout, self.registry.max_line_bytes, exited.clone()));
        let stderr_forwarder = tokio::spawn(forward_stderr(self.forwarding(), stderr, exited));

        // `killed` is a host's kill (the exit then reports it as asked for); `stalled` is
        // tetherd's own, for an agent that stopped reading its input, which is reported as a
        // failure with its reason on stderr.
        let mut killed = false;
        let mut stalled = false;
        // The session's event log stopped: the agent is ended, since nothing it does from then
        // on would be recorded. Reported like `stalled`, as a failure.
        let mut log_failed = false;
        let mut sigkill_at: Option<Instant> = None;
        let status = loop {
            tokio::select! {
                status = child.wait() => break status,
                () = self.kill_requested.notified(), if !killed => {
                    killed = true;
                    tracing::info!(agent = %self.name, agent_id = self.agent_id, "killing agent");
                    self.tree.terminate();
                    sigkill_at = Some(Instant::now() + self.registry.kill_grace);
                }
                () = self.input_stalled.notified(), if !killed && !stalled => {
                    stalled = true;
                    let reason = format!(
                        "tetherd: the agent left more than {} MiB of its input unread, so it has stopped \
                         reading; ending it",
                        STDIN_QUEUE_BUDGET_BYTES / (1024 * 1024)
                    );
                    tracing::warn!(agent = %self.name, agent_id = self.agent_id, "{reason}");
                    // Signalled first: publishing the reason may wait for room for a while (no
                    // host attached, a full backlog), and the agent's end must not wait with it.
                    self.tree.terminate();
                    sigkill_at = Some(Instant::now() + self.registry.kill_grace);
                    forward_stderr_line(&self.forwarding(), reason).await;
                }
                error = log_failure(self.events.as_ref()), if !killed && !stalled && !log_failed => {
                    log_failed = true;
                    tracing::error!(agent = %self.name, agent_id = self.agent_id, %error,
                        "the session's event log cannot be written; ending the agent");
                    // Signalled first, as for a stalled agent: telling the hosts may wait.
                    self.tree.terminate();
                    sigkill_at = Some(Instant::now() + self.registry.kill_grace);
                    let path = self.events.as_ref().map(|events| events.path().display().to_string());
                    let failed = AgentLogFailed { agent_id: self.agent_id, path: path.unwrap_or_default(), error };
                    self.registry.fanout.publish(encode_notification(method::AGENT_LOG_FAILED, &failed)).await;
                }
                () = sleep_until_if_set(sigkill_at) => {
                    tracing::warn!(agent = %self.name, agent_id = self.agent_id,
                        "agent still running after the kill grace; sending SIGKILL");
                    self.tree.kill();
                    sigkill_at = None;
                }
            }
        };
        // The pipes may now be closed by the agent's own exit; from here on the forwarders stop
        // as soon as they go quiet, in case a leftover helper holds them open.
        exited_sender.send_replace(true);
        if killed || stalled || log_failed {
            self.finish_group_kill(sigkill_at).await;
        }
        for forwarder in [stdout_forwarder, stderr_forwarder] {
            if let Err(error) = forwarder.await {
                tracing::error!(agent = %self.name, agent_id = self.agent_id, %error, "output forwarder failed");
            }
        }
        // Before `agent/exited`, so that a host hears of the agent's end (and `agent/kill` is
        // answered) only once nothing it ran is left.
        self.registry.terminals.end_agent(self.agent_id).await;

        let mut exited = exit_report(self.agent_id, status, killed);
        tracing::info!(agent = %self.name, agent_id = self.agent_id, code = ?exited.code,
            signal = ?exited.signal, killed, "agent exited");
        if let Some(events) = &self.events {
            exited.seq = events.exited(exited.code, exited.signal, exited.killed).await;
        }
        if let Some(handle) = self.registry.lock().live.get_mut(&self.agent_id) {
            handle.exit_logged = true;
        }
        self.registry.fanout.publish(encode_notification(method::AGENT_EXITED, &exited)).await;
        self.registry.lock().live.remove(&self.agent_id);
        self.reaped.send_replace(true);
    }

    /// What an output forwarder of this agent needs.
    fn forwarding(&self) -> Forwarding {
        Forwarding {
            agent_id: self.agent_id,
            name: self.name.clone(),
            fanout: self.registry.fanout.clone(),
            events: self.events.clone(),
        }
    }

    /// After a killed agent's leader has been reaped, makes sure the rest of its process group
    /// is gone too: they got SIGTERM with the leader and get SIGKILL when the grace runs out.
    async fn finish_group_kill(&self, sigkill_at: Option<Instant>) {
        if self.tree.finish_kill(sigkill_at).await.is_err() {
            tracing::warn!(agent = %self.name, agent_id = self.agent_id,
                "processes of the agent's group survive SIGKILL");
        }
    }
}

/// Waits until the session's event log stops, and says why; for ever when there is no log.
async fn log_failure(events: Option<&EventLog>) -> String {
    match events {
        Some(events) => events.failure().await,
        None => std::future::pending().await,
    }
}

/// Waits until `deadline`, or for ever when there is none.
async fn sleep_until_if_set(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

fn exit_report(agent_id: AgentId, status: std::io::Result<ExitStatus>, killed: bool) -> AgentExited {
    match status {
        Ok(status) => {
            #[cfg(unix)]
            let signal = std::os::unix::process::ExitStatusExt::signal(&status);
            #[cfg(not(unix))]
            let signal = None;
            AgentExited { agent_id, code: status.code(), signal, killed, seq: None }
        }
        Err(error) => {
            // Waiting fails only if the process was reaped behind tokio's back; it is gone
            // either way, and the host needs to hear that.
            tracing::error!(agent_id, %error, "could not read the agent's exit status");
            AgentExited { agent_id, code: None, signal: None, killed, seq: None }
        }
    }
}

/// Reads the next chunk of an agent's pipe. `Ok(0)` means the pipe is finished: at its end, or
/// quiet for [`QUIET_AFTER_EXIT`] after the agent exited.
async fn read_chunk(
    pipe: &mut (impl AsyncRead + Unpin),
    buffer: &mut [u8],
    exited: &mut watch::Receiver<bool>,
) -> std::io::Result<usize> {
    if !*exited.borrow() {
        tokio::select! {
            read = pipe.read(buffer) => return read,
            // Fall through to the bounded read below.
            _ = exited.wait_for(|exited| *exited) => {}
        }
    }
    match tokio::time::timeout(QUIET_AFTER_EXIT, pipe.read(buffer)).await {
        Ok(read) => read,
        Err(_elapsed) => Ok(0),
    }
}

/// What the output forwarders of one agent share: whom the lines are about, where they go.
struct Forwarding {
    agent_id: AgentId,
    name: String,
    fanout: Arc<Fanout>,
    /// The session's event log, which gets each line before the hosts do.
    events: Option<EventLog>,
}

/// Forwards every line of the agent's stdout, in order: JSON lines as `agent/message`, anything
/// else as `agent/badLine`. Messages go to the event log first; bad lines are not messages and
/// are left out of it.
async fn forward_stdout(
    forwarding: Forwarding,
    mut stdout: ChildStdout,
    max_line_bytes: usize,
    mut exited: watch::Receiver<bool>,
) {
    let mut framer = LineFramer::new(max_line_bytes);
    let mut buffer = vec![0; READ_CHUNK_BYTES];
    loop {
        let read = match read_chunk(&mut stdout, &mut buffer, &mut exited).await {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) => {
                tracing::warn!(agent = %forwarding.name, agent_id = forwarding.agent_id, %error,
                    "reading the agent's stdout failed");
                break;
            }
        };
        framer.push(&buffer[..read]);
        let lines = std::iter::from_fn(|| framer.next_line()).collect();
        forward_stdout_lines(&forwarding, lines).await;
    }
    let lines = std::iter::from_fn(|| framer.finish()).collect();
    forward_stdout_lines(&forwarding, lines).await;
}

/// Forwards the lines one read of the agent's stdout brought in, in order, once the messages
/// among them are in the session's event log (all of them in one write: a burst of thousands of
/// small lines costs a write per read rather than one per line).
async fn forward_stdout_lines(forwarding: &Forwarding, lines: Vec<Result<String, FrameError>>) {
    let Forwarding { agent_id, name, fanout, events } = forwarding;
    if lines.is_empty() {
        return;
    }
    let read: Vec<_> = lines.into_iter().map(|line| read_stdout_line(*agent_id, name, line)).collect();
    let messages: Vec<&str> = read.iter().filter_map(|read| read.as_ref().ok().map(|message| message.get())).collect();
    // The `seq` numbers of the messages in the log, from the first one's, in order.
    let mut seqs = match events {
        Some(events) if !messages.is_empty() => match events.received_all(&messages).await {
            Some(first) => Some(first..),
            None => {
                // The log has stopped (and the agent is being ended): a message a host showed
                // would be one the session's log does not have. Bad lines are not in the log
                // anyway, and still go.
                tracing::warn!(agent = %name, agent_id, dropped = messages.len(),
                    "agent messages dropped: the session's event log has stopped");
                for bad_line in read.iter().filter(|read| read.is_err()) {
                    fanout.publish(stdout_notification(*agent_id, bad_line, None)).await;
                }
                return;
            }
        },
        _ => None,
    };
    for read in &read {
        let seq = match (read, seqs.as_mut()) {
            (Ok(_), Some(seqs)) => seqs.next(),
            _ => None,
        };
        fanout.publish(stdout_notification(*agent_id, read, seq)).await;
    }
}

/// Reads one line of an agent's stdout as a message, or says why it is not one.
fn read_stdout_line(
    agent_id: AgentId,
    name: &str,
    line: Result<String, FrameError>,
) -> Result<Box<RawValue>, AgentBadLine> {
    let bad_line = match line {
        Ok(text) => match serde_json::from_str::<&RawValue>(&text) {
            Ok(message) => return Ok(message.to_owned()),
            Err(error) => AgentBadLine {
                agent_id,
                kind: BadLineKind::InvalidJson,
                len: text.len() as u64,
                preview: preview_of(text.as_bytes()),
                error: format!("not JSON: {error}"),
            },
        },
        Err(error @ FrameError::TooLong { len, .. }) => AgentBadLine {
            agent_id,
            kind: BadLineKind::TooLong,
            len,
            // The framer drops an over-long line's bytes as they stream in, to keep memory
            // bounded, so there is nothing to show.
            preview: String::new(),
            error: error.to_string(),
        },
        Err(FrameError::InvalidUtf8 { len, preview, valid_up_to }) => AgentBadLine {
            agent_id,
            kind: BadLineKind::InvalidUtf8,
            len,
            preview,
            error: format!("not UTF-8 (the first {valid_up_to} bytes are)"),
        },
    };
    tracing::warn!(agent = %name, agent_id, kind = ?bad_line.kind, len = bad_line.len,
        error = %bad_line.error, "agent printed a line that is not a message");
    Err(bad_line)
}

/// The notification for one line of an agent's stdout, as [`read_stdout_line`] read it; `seq`
/// is the message's in the session's event log.
fn stdout_notification(agent_id: AgentId, read: &Result<Box<RawValue>, AgentBadLine>, seq: Option<u64>) -> String {
    match read {
        Ok(message) => encode_notification(method::AGENT_MESSAGE, &AgentMessage { agent_id, message, seq }),
        Err(bad_line) => encode_notification(method::AGENT_BAD_LINE, bad_line),
    }
}

/// Forwards the agent's stderr line by line, to the event log, tetherd's log and the hosts.
///
/// Stderr is diagnostics for people, not protocol, so the rules differ from stdout's on purpose:
/// bytes are decoded lossily rather than rejected, and an over-long line is passed on in pieces
/// rather than dropped, because a stack trace with a bad byte is still worth reading.
async fn forward_stderr(forwarding: Forwarding, mut stderr: ChildStderr, mut exited: watch::Receiver<bool>) {
    let mut buffer = vec![0; READ_CHUNK_BYTES];
    let mut splitter = StderrLines::default();
    loop {
        let read = match read_chunk(&mut stderr, &mut buffer, &mut exited).await {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) => {
                tracing::warn!(agent = %forwarding.name, agent_id = forwarding.agent_id, %error,
                    "reading the agent's stderr failed");
                break;
            }
        };
        for line in splitter.push(&buffer[..read]) {
            forward_stderr_line(&forwarding, line).await;
        }
    }
    if let Some(line) = splitter.finish() {
        forward_stderr_line(&forwarding, line).await;
    }
}

async fn forward_stderr_line(forwarding: &Forwarding, line: String) {
    let Forwarding { agent_id, name, fanout, events } = forwarding;
    tracing::info!(agent = %name, agent_id, "stderr: {line}");
    let seq = match events {
        Some(events) => match events.stderr(&line) {
            Some(seq) => Some(seq),
            // As for stdout: what the log does not have is not shown (tetherd's log has it).
            None => return,
        },
        None => None,
    };
    fanout.publish(encode_notification(method::AGENT_STDERR, &AgentStderr { agent_id: *agent_id, line, seq })).await;
}

/// Splits stderr bytes into lossily decoded lines of at most [`STDERR_LINE_MAX_BYTES`].
#[derive(Debug, Default)]
struct StderrLines {
    partial: Vec<u8>,
}

impl StderrLines {
    fn push(&mut self, mut bytes: &[u8]) -> Vec<String> {
        let mut lines = Vec::new();
        while let Some(newline) = bytes.iter().position(|&byte| byte == b'\n') {
            self.partial.extend_from_slice(&bytes[..newline]);
            lines.extend(self.take(self.partial.len()));
            bytes = &bytes[newline + 1..];
        }
        self.partial.extend_from_slice(bytes);
        while self.partial.len() >= STDERR_LINE_MAX_BYTES {
            lines.extend(self.take(char_boundary_before(&self.partial, STDERR_LINE_MAX_BYTES)));
        }
        lines
    }

    fn finish(&mut self) -> Option<String> {
        self.take(self.partial.len())
    }

    /// Takes the first `len` bytes as a line; blank lines are skipped.
    fn take(&mut self, len: usize) -> Option<String> {
        let bytes: Vec<u8> = self.partial.drain(..len).collect();
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(&bytes);
        let line = String::from_utf8_lossy(bytes).into_owned();
        (!line.trim().is_empty()).then_some(line)
    }
}

/// The largest cut point at or below `limit` that does not split a UTF-8 character (or `limit`
/// itself when the bytes there are not UTF-8 anyway).
fn char_boundary_before(bytes: &[u8], limit: usize) -> usize {
    let is_continuation = |index: usize| bytes.get(index).is_some_and(|byte| byte & 0b1100_0000 == 0b1000_0000);
    (limit.saturating_sub(3)..=limit).rev().find(|&cut| cut > 0 && !is_continuation(cut)).unwrap_or(limit)
}

/// What goes down an agent's stdin queue.
#[derive(Debug)]
enum StdinItem {
    /// A message, with its share of the budget, given back once it has been written.
    Line(String, OwnedSemaphorePermit),
    /// The end of the agent's input.
    Close,
}

/// One agent's stdin queue: messages in order, bounded in bytes (see the module documentation).
#[derive(Debug, Clone)]
struct StdinQueue {
    sender: mpsc::UnboundedSender<StdinItem>,
    budget: Arc<Semaphore>,
    /// Raised when a message found no room; the agent's supervisor then ends it.
    stalled: Arc<Notify>,
}

type StdinReceiver = mpsc::UnboundedReceiver<StdinItem>;

impl StdinQueue {
    fn new() -> (Self, StdinReceiver) {
        let (sender, receiver) = mpsc::unbounded_channel();
        let queue = Self {
            sender,
            budget: Arc::new(Semaphore::new(STDIN_QUEUE_BUDGET_BYTES)),
            stalled: Arc::new(Notify::new()),
        };
        (queue, receiver)
    }

    /// Room for `message` in the queue, if there is some now. `Closed` once the agent's stdin
    /// can no longer be written.
    fn reserve(&self, message: &str) -> Result<OwnedSemaphorePermit, TryAcquireError> {
        // A message larger than the whole budget takes all of it, so it fits an empty queue.
        let cost = (message.len() + PER_MESSAGE_OVERHEAD_BYTES).min(STDIN_QUEUE_BUDGET_BYTES);
        let cost = u32::try_from(cost).expect("the stdin budget fits in u32");
        self.budget.clone().try_acquire_many_owned(cost)
    }
}

/// Writes queued messages to the agent's stdin, each followed by a newline, in order.
async fn write_stdin(agent_id: AgentId, name: String, mut stdin: ChildStdin, mut messages: StdinReceiver) {
    while let Some(item) = messages.recv().await {
        let StdinItem::Line(message, room) = item else {
            // Returning drops stdin (the agent reads the end of its input) and the receiver (a
            // later send is refused as "stdin closed").
            tracing::debug!(agent = %name, agent_id, "closing the agent's stdin, as asked");
            return;
        };
        // Two writes rather than appending the newline, which could reallocate a large message.
        let written = match stdin.write_all(message.as_bytes()).await {
            Ok(()) => stdin.write_all(b"\n").await,
            Err(error) => Err(error),
        };
        drop(room);
        if let Err(error) = written {
            tracing::warn!(agent = %name, agent_id, %error, "message dropped: writing to the agent's stdin failed");
            // Returning drops the receiver, so that from now on a send is refused as "stdin
            // closed" rather than queued for nobody.
            let dropped = std::iter::from_fn(|| messages.try_recv().ok()).count();
            if dropped > 0 {
                tracing::warn!(agent = %name, agent_id, dropped, "messages dropped: the agent's stdin is closed");
            }
            return;
        }
    }
}

/// Why `command` could not be started, in the person's words: the OS's "No such file or
/// directory (os error 2)" says neither which of the program or a folder is missing nor where
/// the program was looked for.
fn spawn_error(command: &str, error: &std::io::Error) -> String {
    let has_folder = command.contains(['/', '\\']);
    let why = match error.kind() {
        std::io::ErrorKind::NotFound if has_folder => "there is no such file".to_owned(),
        std::io::ErrorKind::NotFound => "no program of that name is on PATH".to_owned(),
        std::io::ErrorKind::PermissionDenied => "it is not executable (permission denied)".to_owned(),
        _ => error.to_string(),
    };
    format!("cannot start {command:?}: {why}")
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    #[test]
    fn stdout_lines_become_messages_or_bad_lines() {
        let events = [
            Ok(r#"{"jsonrpc":"2.0", "method":"x","params":{"s":"\u00e9é"}}"#.to_owned()),
            Ok("Debugger attached.".to_owned()),
            Err(FrameError::TooLong { len: 70, max: 64 }),
            Err(FrameError::InvalidUtf8 { len: 3, preview: "a".to_owned(), valid_up_to: 1 }),
        ]
        .into_iter()
        .zip([Some(12), None, None, None])
        .map(|(line, seq)| stdout_notification(7, &read_stdout_line(7, "test", line), seq))
        .collect::<Vec<_>>()
        .join("\n");
        expect![[r#"
            {"jsonrpc":"2.0","method":"agent/message","params":{"agentId":7,"message":{"jsonrpc":"2.0", "method":"x","params":{"s":"\u00e9é"}},"seq":12}}
            {"jsonrpc":"2.0","method":"agent/badLine","params":{"agentId":7,"kind":"invalidJson","len":18,"preview":"Debugger attached.","error":"not JSON: expected value at line 1 column 1"}}
            {"jsonrpc":"2.0","method":"agent/badLine","params":{"agentId":7,"kind":"tooLong","len":70,"preview":"","error":"a line of 70 bytes is longer than the maximum of 64 bytes and was dropped"}}
            {"jsonrpc":"2.0","method":"agent/badLine","params":{"agentId":7,"kind":"invalidUtf8","len":3,"preview":"a","error":"not UTF-8 (the first 1 bytes are)"}}"#]]
        .assert_eq(&events);
    }

    #[test]
    fn stderr_is_split_into_lossy_lines_and_long_lines_into_pieces() {
        let mut splitter = StderrLines::default();
        let mut lines = splitter.push(b"warn: one\r\n\nbad \xff byte\npart");
        lines.extend(splitter.push(b"ial\n"));
        assert_eq!(lines, ["warn: one", "bad \u{FFFD} byte", "partial"]);

        let long = "é".repeat(STDERR_LINE_MAX_BYTES);
        let pieces = splitter.push(long.as_bytes());
        assert!(pieces.iter().all(|piece| piece.len() <= STDERR_LINE_MAX_BYTES && !piece.contains('\u{FFFD}')));
        let rest = splitter.finish().unwrap_or_default();
        assert_eq!(pieces.concat() + &rest, long);
    }
}
