//! The link to tetherd: starting it, the hello, every request and its answer, the
//! notifications it sends (agent output, exits, terminals), and starting it again when it is
//! lost.
//!
//! tetherd is the window's, not a session's: one link serves whichever session is live, and an
//! answer carries the generation of the session that asked, so that one for a session that has
//! since ended finds nothing.

use std::collections::VecDeque;

use agent_client_protocol_schema::v1 as acp;
use serde::Serialize;
use serde_json::value::RawValue;

use crate::acp::capitalize;
use crate::framing::{self, LineFramer};
use crate::host::session_io::{SNAPSHOT_TIMEOUT_MS, TERMINAL_TIMEOUT_MS};
use crate::host_api::{HostAction, LogLevel};
use crate::jsonrpc::{self, Message, Outgoing, Pending, RequestId, RpcError};
use crate::sidecar::{
    AgentBadLine, AgentExited, AgentId, AgentLogFailed, AgentMessage, AgentRef, AgentStderr, HelloParams,
    McpToolCalled, SIDECAR_PROTOCOL_VERSION, SessionListResult, SessionReadResult, SpawnResult, TerminalData,
    TerminalExited, TerminalId, TetherdStopping, method,
};
use crate::thread::{NoticeLevel, NoticeView, TurnState};
use crate::webview::{SessionKey, SessionStatus};

use super::history::ListPurpose;
use super::{HostEngine, LostPrompt};

/// How long tetherd may take to answer `hello` or `agent/spawn`.
pub(super) const SIDECAR_TIMEOUT_MS: u64 = 15_000;

/// Lines from tetherd embed a whole agent line, so they may be a little longer than the agent's.
pub(super) const SIDECAR_MAX_LINE_BYTES: usize = framing::DEFAULT_MAX_LINE_BYTES + 1024 * 1024;

/// How many times tetherd is started again by itself after it was lost, within
/// [`SIDECAR_RESTART_WINDOW_MS`]; a tetherd lost more often than that crashes for a reason a
/// restart does not cure, and the person is asked instead.
pub const MAX_AUTOMATIC_SIDECAR_RESTARTS: usize = 3;
pub const SIDECAR_RESTART_WINDOW_MS: u64 = 5 * 60_000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum SidecarRequest {
    Hello,
    /// Spawning the agent of session `generation`.
    Spawn {
        generation: u64,
    },
    /// Spawning the Claude CLI numbered `process` of session `generation`.
    SpawnCli {
        generation: u64,
        process: u64,
    },
    Kill,
    /// Stopping the agent of session `generation` so that it can be started again to sign in.
    KillToSignIn {
        generation: u64,
    },
    /// Stopping the agent of session `generation` because the person asked (it hung).
    Stop {
        generation: u64,
    },
    /// A snapshot of the workspace's folder number `folder` before a turn of session
    /// `generation`.
    Snapshot {
        generation: u64,
        folder: usize,
    },
    /// What changed in that folder since that snapshot.
    Scan {
        generation: u64,
        folder: usize,
    },
    /// A terminal request of session `generation`'s client, its call number `call`.
    Terminal {
        generation: u64,
        call: u64,
    },
    /// The workspace's sessions, for `purpose`.
    SessionList {
        purpose: ListPurpose,
    },
    /// A piece of the log being read by load `load`.
    SessionRead {
        load: u64,
    },
    /// A rename or a delete in the history; the history is listed again after it.
    SessionChange,
}

/// What to do once tetherd has accepted the hello.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum AfterHello {
    /// Reopen sessions (see [`ListPurpose::Reopen`]): at start, and to go on with the sessions
    /// whose tetherd was lost.
    Reopen { dirs: Vec<String> },
    /// Start a new session (the person asked for one while tetherd was not connected).
    NewSession,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SidecarState {
    Disconnected,
    /// `StartSidecar` asked of the host; waiting for it to connect or fail.
    Starting,
    /// Connected, `hello` sent.
    Greeting,
    Ready,
}

/// The connection to tetherd and what is under way on it.
#[derive(Debug)]
pub(super) struct TetherdLink {
    pub(super) state: SidecarState,
    framer: LineFramer,
    rpc: Outgoing<SidecarRequest>,
    /// What to do once tetherd has accepted the hello.
    pub(super) after_hello: AfterHello,
    /// tetherd said it is stopping on purpose (`tetherd/stopping`), and why: its connection
    /// closing next is no loss to make up for.
    stopping: Option<String>,
    /// When tetherd was last started again by itself after a loss, oldest first, within
    /// [`SIDECAR_RESTART_WINDOW_MS`].
    automatic_restarts: VecDeque<u64>,
}

impl SidecarRequest {
    /// The generation of the agent the request was made for, when it was made for one.
    pub(super) fn generation(&self) -> Option<u64> {
        match self {
            SidecarRequest::Spawn { generation }
            | SidecarRequest::SpawnCli { generation, .. }
            | SidecarRequest::KillToSignIn { generation }
            | SidecarRequest::Stop { generation }
            | SidecarRequest::Snapshot { generation, .. }
            | SidecarRequest::Scan { generation, .. }
            | SidecarRequest::Terminal { generation, .. } => Some(*generation),
            SidecarRequest::Hello
            | SidecarRequest::Kill
            | SidecarRequest::SessionList { .. }
            | SidecarRequest::SessionRead { .. }
            | SidecarRequest::SessionChange => None,
        }
    }
}

impl TetherdLink {
    pub(super) fn new() -> Self {
        TetherdLink {
            state: SidecarState::Disconnected,
            framer: LineFramer::new(SIDECAR_MAX_LINE_BYTES),
            rpc: Outgoing::new(),
            after_hello: AfterHello::Reopen { dirs: Vec::new() },
            stopping: None,
            automatic_restarts: VecDeque::new(),
        }
    }

    pub(super) fn is_ready(&self) -> bool {
        self.state == SidecarState::Ready
    }

    /// A request line to write, answered within `deadline` (or never expiring).
    pub(super) fn request(
        &mut self,
        method: &str,
        params: &impl Serialize,
        tag: SidecarRequest,
        deadline: Option<u64>,
    ) -> String {
        self.rpc.request(method, params, tag, deadline).1
    }

    /// The request an answer is for, if it is one of ours still waiting.
    pub(super) fn take(&mut self, id: &RequestId) -> Option<Pending<SidecarRequest>> {
        self.rpc.take(id)
    }

    /// The requests whose deadline has passed at `now`.
    pub(super) fn expire(&mut self, now: u64) -> Vec<(RequestId, Pending<SidecarRequest>)> {
        self.rpc.expire(now)
    }

    pub(super) fn next_deadline(&self) -> Option<u64> {
        self.rpc.next_deadline()
    }

    /// A new connection: nothing of the last one's is waiting any more.
    fn connected(&mut self) {
        self.framer = LineFramer::new(SIDECAR_MAX_LINE_BYTES);
        self.stopping = None;
    }

    /// The connection closed: whether it was running (its hello accepted), and why tetherd said
    /// it was stopping, if it did.
    fn closed(&mut self) -> (bool, Option<String>) {
        let was_ready = self.is_ready();
        self.state = SidecarState::Disconnected;
        self.rpc.drain();
        (was_ready, self.stopping.take())
    }

    /// Whether tetherd, lost at `now`, may be started again by itself: at most
    /// [`MAX_AUTOMATIC_SIDECAR_RESTARTS`] times within [`SIDECAR_RESTART_WINDOW_MS`]. A yes counts.
    fn may_restart_automatically(&mut self, now: u64) -> bool {
        let restarts = &mut self.automatic_restarts;
        while restarts.front().is_some_and(|&at| at + SIDECAR_RESTART_WINDOW_MS <= now) {
            restarts.pop_front();
        }
        if restarts.len() < MAX_AUTOMATIC_SIDECAR_RESTARTS {
            restarts.push_back(now);
            true
        } else {
            false
        }
    }
}

impl HostEngine {
    /// Every request tetherd has not answered by its deadline gets its failure, as if tetherd
    /// had answered with it.
    pub(super) fn expire_tetherd_requests(&mut self, now: u64) {
        for (_, pending) in self.tetherd.expire(now) {
            match pending.tag.generation().and_then(|generation| self.key_of_generation(generation)) {
                Some(key) => {
                    self.with_session(key, |engine| engine.on_sidecar_request_expired(pending, now));
                }
                None => self.on_sidecar_request_expired(pending, now),
            }
        }
    }

    /// Request `pending` got no answer by its deadline: it fails as if tetherd had said so.
    fn on_sidecar_request_expired(&mut self, pending: Pending<SidecarRequest>, now: u64) {
        {
            match pending.tag {
                SidecarRequest::Snapshot { generation, .. } | SidecarRequest::Scan { generation, .. } => {
                    let message =
                        format!("tetherd did not answer {} within {} s", pending.method, SNAPSHOT_TIMEOUT_MS / 1000);
                    self.on_snapshot_answer(pending.tag, generation, Err(message));
                }
                SidecarRequest::Terminal { generation, call } => {
                    let message =
                        format!("tetherd did not answer {} within {} s", pending.method, TERMINAL_TIMEOUT_MS / 1000);
                    self.log(LogLevel::Warn, message.clone());
                    if let Some(slot) = self.session.as_mut().filter(|slot| slot.generation == generation) {
                        let error = RpcError::internal_error().data(serde_json::Value::String(message));
                        slot.client.handle_terminal_answer(call, Err(error), now);
                    }
                }
                SidecarRequest::SessionList { purpose } => {
                    let message = format!("tetherd did not answer within {} s", SIDECAR_TIMEOUT_MS / 1000);
                    self.on_sessions_listed(purpose, Err(message), now);
                }
                SidecarRequest::SessionRead { load } => {
                    let message = format!("tetherd did not answer within {} s", SIDECAR_TIMEOUT_MS / 1000);
                    self.on_session_read(load, Err(message), now);
                }
                SidecarRequest::Stop { generation } => {
                    let message =
                        format!("tetherd did not answer {} within {} s", pending.method, SIDECAR_TIMEOUT_MS / 1000);
                    self.on_agent_stopped(generation, Err(message));
                }
                SidecarRequest::SpawnCli { generation, process } => {
                    let message =
                        format!("tetherd did not answer {} within {} s", pending.method, SIDECAR_TIMEOUT_MS / 1000);
                    self.on_cli_spawned(generation, process, Err(message));
                }
                _ => {
                    let message =
                        format!("tetherd did not answer {} within {} s", pending.method, SIDECAR_TIMEOUT_MS / 1000);
                    self.log(LogLevel::Error, message.clone());
                    self.set_status(SessionStatus::Failed { message: capitalize(&message) });
                }
            }
        }
    }

    /// The socket to tetherd is open: say hello.
    pub fn handle_sidecar_connected(&mut self, now: u64) {
        self.now = now;
        self.tetherd.connected();
        let hello = HelloParams {
            token: self.config.token.clone(),
            protocol_version: SIDECAR_PROTOCOL_VERSION,
            client: format!("{} {}", self.config.client_name, self.config.client_version),
        };
        self.sidecar_request(method::HELLO, &hello, SidecarRequest::Hello, now);
        self.tetherd.state = SidecarState::Greeting;
        self.set_status(SessionStatus::starting("Connecting to tetherd"));
        self.finish(now);
    }

    /// Bytes from the tetherd socket, in any chunking.
    pub fn handle_sidecar_bytes(&mut self, bytes: &[u8], now: u64) {
        self.now = now;
        self.tetherd.framer.push(bytes);
        while let Some(line) = self.tetherd.framer.next_line() {
            match line {
                Ok(line) => self.handle_sidecar_line(&line, now),
                Err(error) => self.log(LogLevel::Error, format!("tetherd sent a line Tether cannot read: {error}")),
            }
        }
        self.finish(now);
    }

    /// The tetherd socket closed.
    ///
    /// A tetherd that was running (its hello accepted) and went away without saying it was
    /// stopping (`tetherd/stopping`: someone stopped it on purpose) is started again at once,
    /// and the session reopened from its log with a new agent that resumes the agent's session:
    /// the person chose this session, and a lost tetherd (killed, crashed) is no reason to stop
    /// it. A tetherd lost more than [`MAX_AUTOMATIC_SIDECAR_RESTARTS`] times within
    /// [`SIDECAR_RESTART_WINDOW_MS`], or one that never got as far as accepting the hello, is left
    /// for the person to restart, with what happened.
    pub fn handle_sidecar_closed(&mut self, reason: &str, now: u64) {
        self.now = now;
        let (was_ready, stopped_on_purpose) = self.tetherd.closed();
        self.editor_questions.forget();
        let message = format!("lost the connection to tetherd ({reason})");
        self.lost_prompt = self.session.as_ref().and_then(|slot| {
            let thread = slot.client.thread();
            let dir = slot.session_dir.clone().filter(|_| thread.turn() == &TurnState::Running)?;
            let text = thread.prompts().next_back()?.text.clone();
            Some(LostPrompt { dir, prompts: thread.prompts().count(), text })
        });
        // Every open session lost its agent.
        self.for_each_session(|engine| {
            if let Some(slot) = &mut engine.session {
                slot.client.terminals_lost("the connection to tetherd was lost", now);
                slot.client.handle_exited(&format!("is out of reach: Tether {message}"), false, "");
                // tetherd took a Claude CLI session's CLIs with it.
                if let Some(claude) = &mut slot.claude {
                    for (_, process) in std::mem::take(&mut slot.cli_processes) {
                        claude.handle_process_exited(Some(process), "is out of reach", "");
                    }
                    // What it would tell the client of that (the turn failed), the client has
                    // settled itself already, as its agent is out of reach.
                    while claude.poll_client_line().is_some() {}
                }
            }
            // The client's last words (cancelled requests, their audit records) are drained;
            // the records cannot reach tetherd now and are logged instead. The thread stays on
            // screen: a restart reopens the session from its log with a new tetherd.
            engine.drain_client();
            if let Some(slot) = &mut engine.session {
                slot.agent_id = None;
                // tetherd took the agent being stopped with it: there is nothing left to wait for.
                slot.stopping = false;
            }
        });
        self.history.load = None;
        self.history.held_agent_events = None;
        // Every session's agent went with tetherd, whichever tab the prompt was for.
        self.give_back_waiting_prompt(|_| true, &format!("Tether {message}"));
        self.log(LogLevel::Error, format!("Tether {message}"));
        if was_ready && stopped_on_purpose.is_none() && self.tetherd.may_restart_automatically(now) {
            self.log(LogLevel::Warn, "starting tetherd again to go on with the session".to_owned());
            self.interrupted_by = Some(format!("was interrupted: Tether {message}"));
            self.restart(now);
        } else {
            let (text, status) = if let Some(why) = stopped_on_purpose {
                (
                    format!("Tether {message}: tetherd was stopped ({why}). Restart to go on with the session."),
                    capitalize(&message),
                )
            } else if was_ready {
                let why = format!(
                    "tetherd was lost {} times within {} minutes, so Tether does not start it again by itself",
                    MAX_AUTOMATIC_SIDECAR_RESTARTS + 1,
                    SIDECAR_RESTART_WINDOW_MS / 60_000
                );
                // The header says why this loss, unlike the ones before it, was not recovered
                // from: the message above may have gone unseen.
                (
                    format!("Tether {message}. {why}. Restart to go on with the session."),
                    format!("{}; {why}", capitalize(&message)),
                )
            } else {
                (format!("Tether {message}. Restart to go on with the session."), capitalize(&message))
            };
            self.show(LogLevel::Error, text);
            self.set_status(SessionStatus::Failed { message: status });
        }
        self.finish(now);
    }

    pub(super) fn start_sidecar(&mut self) {
        if !self.config.workspace_trusted {
            // Nothing starts in a workspace the person has not trusted: trusting it starts
            // tetherd (`WorkspaceTrusted`).
            self.tetherd.state = SidecarState::Disconnected;
            self.log(LogLevel::Info, "the workspace is not trusted: tetherd and the agent are not started".to_owned());
            return self.set_status(SessionStatus::Untrusted { message: UNTRUSTED_MESSAGE.to_owned() });
        }
        self.tetherd.state = SidecarState::Starting;
        self.set_status(SessionStatus::starting("Starting tetherd"));
        self.actions.push_back(HostAction::StartSidecar);
    }

    /// The person trusted the workspace: what was held back starts now (tetherd, then the last
    /// session or a new one).
    pub(super) fn workspace_trusted(&mut self) {
        if self.config.workspace_trusted {
            return;
        }
        self.config.workspace_trusted = true;
        self.log(LogLevel::Info, "the workspace is trusted now: starting tetherd".to_owned());
        if self.tetherd.state == SidecarState::Disconnected {
            self.start_sidecar();
        }
    }

    /// tetherd accepted the hello: reopen a session, or start one.
    pub(super) fn on_hello_accepted(&mut self, now: u64) {
        match std::mem::replace(&mut self.tetherd.after_hello, AfterHello::NewSession) {
            AfterHello::Reopen { dirs } if self.config.tether_dir.is_some() => {
                // Agent events that arrive before the engine knows which session it shows wait:
                // they may be the running agent's it is about to go on with.
                self.history.held_agent_events = Some(Vec::new());
                self.set_status(SessionStatus::starting("Looking for the last session"));
                self.list_sessions(ListPurpose::Reopen { dirs }, now);
            }
            AfterHello::Reopen { .. } | AfterHello::NewSession => self.start_session(now),
        }
    }

    pub(super) fn handle_sidecar_line(&mut self, line: &str, now: u64) {
        if let Some(chunk) = agent_text_chunk(line) {
            return self.route_agent_message(line, chunk, now);
        }
        if let Some(message) = agent_message(line) {
            return self.route_agent_message(line, AgentLine::from(&message), now);
        }
        let message = match jsonrpc::parse_message(line) {
            Ok(message) => message,
            Err(error) => {
                self.log(LogLevel::Error, format!("tetherd sent a message Tether cannot read: {error}"));
                return;
            }
        };
        match message {
            Message::Response { id, result } => self.handle_sidecar_response(&id, result, now),
            Message::Notification { method, .. }
                if (method.starts_with("agent/") || method.starts_with("terminal/"))
                    && let Some(held) = &mut self.history.held_agent_events =>
            {
                held.push(line.to_owned());
            }
            Message::Notification { method, params } => {
                // A notification about a session's agent or terminal is handled with that
                // session in focus (only worth finding out when there is more than one).
                let key = if self.parked.is_empty() { None } else { self.session_of_notification(params) };
                match key {
                    Some(key) => {
                        self.with_session(key, |engine| engine.handle_sidecar_notification(&method, params, now));
                    }
                    None => self.handle_sidecar_notification(&method, params, now),
                }
            }
            Message::Request { id, method, params } if method == method::EDITOR_QUERY => {
                self.on_editor_query(id, params)
            }
            Message::Request { id, method, .. } => {
                let error = RpcError::method_not_found();
                self.sidecar_write(jsonrpc::encode_error(&id, &error));
                self.log(LogLevel::Warn, format!("tetherd asked for {method}, which this host does not offer"));
            }
        }
    }

    /// An `agent/message` read by [`agent_text_chunk`] or [`agent_message`]: where the general
    /// path would have taken it, to a session held back while the workspace's sessions are read,
    /// or to its own session.
    fn route_agent_message(&mut self, line: &str, message: AgentLine<'_>, now: u64) {
        if let Some(held) = &mut self.history.held_agent_events {
            held.push(line.to_owned());
            return;
        }
        let key = if self.parked.is_empty() { None } else { self.key_of_agent(message.agent_id) };
        match key {
            Some(key) => {
                self.with_session(key, |engine| engine.on_agent_message(message, now));
            }
            None => self.on_agent_message(message, now),
        }
    }

    /// A line of an agent's stdout, for the session it serves (if it is still that session's and
    /// not already read from the log).
    fn on_agent_message(&mut self, message: AgentLine<'_>, now: u64) {
        if let Some(slot) = self.live_slot(message.agent_id, message.seq) {
            match (&mut slot.claude, message.text_chunk) {
                (Some(claude), _) => claude.handle_cli_line(message.message, now),
                (None, Some(chunk)) => slot.client.handle_text_chunk(chunk, now),
                (None, None) => slot.client.handle_message(message.message, now),
            }
        }
    }

    pub(super) fn handle_sidecar_response(&mut self, id: &RequestId, result: Result<&RawValue, RpcError>, now: u64) {
        let Some(pending) = self.tetherd.take(id) else {
            self.log(LogLevel::Warn, format!("tetherd answered a request Tether never sent (id {id})"));
            return;
        };
        // An answer about a session's agent is handled with that session in focus.
        match pending.tag.generation().and_then(|generation| self.key_of_generation(generation)) {
            Some(key) => {
                self.with_session(key, |engine| engine.on_sidecar_answer(pending.tag, result, now));
            }
            None => self.on_sidecar_answer(pending.tag, result, now),
        }
    }

    fn on_sidecar_answer(&mut self, tag: SidecarRequest, result: Result<&RawValue, RpcError>, now: u64) {
        match (tag, result) {
            (SidecarRequest::Hello, Ok(_)) => {
                self.tetherd.state = SidecarState::Ready;
                self.log(LogLevel::Info, "connected to tetherd".to_owned());
                self.on_hello_accepted(now);
            }
            (SidecarRequest::Hello, Err(error)) => {
                let message = format!("tetherd refused the connection: {}", error.message);
                self.log(LogLevel::Error, message.clone());
                self.show(LogLevel::Error, format!("Tether: {message}."));
                self.set_status(SessionStatus::Failed { message: capitalize(&message) });
            }
            (SidecarRequest::Spawn { generation }, Ok(result)) => {
                let spawned = serde_json::from_str::<SpawnResult>(result.get());
                match (spawned, &mut self.session) {
                    (Ok(spawned), Some(slot)) if slot.generation == generation => {
                        slot.agent_id = Some(spawned.agent_id);
                        // A continued folder keeps the name the history gave it (tetherd answers
                        // with the resolved path, which differs when the path has a symlink).
                        if slot.session_dir.is_none() {
                            slot.session_dir = spawned.session_dir;
                        }
                        let unsent = std::mem::take(&mut slot.unsent_audit);
                        slot.client.set_tether_mcp(spawned.mcp);
                        slot.client.start(now);
                        for record in unsent {
                            self.send_audit(spawned.agent_id, &record);
                        }
                        self.refresh_permissions_view();
                        self.log(LogLevel::Info, format!("agent started (pid {})", spawned.pid));
                        self.set_status(SessionStatus::starting("Initializing the agent"));
                    }
                    (Ok(spawned), _) => {
                        // The person started another session meanwhile: this agent is not wanted.
                        let agent_ref = AgentRef { agent_id: spawned.agent_id };
                        self.sidecar_request(method::AGENT_KILL, &agent_ref, SidecarRequest::Kill, now);
                    }
                    (Err(error), _) => {
                        self.log(LogLevel::Error, format!("tetherd's answer to agent/spawn is malformed: {error}"))
                    }
                }
            }
            (SidecarRequest::SpawnCli { generation, process }, result) => {
                let result = parse_result::<SpawnResult>(result, method::AGENT_SPAWN);
                self.on_cli_spawned(generation, process, result);
            }
            (SidecarRequest::Spawn { generation }, Err(error)) => {
                if self.session.as_ref().is_some_and(|slot| slot.generation == generation) {
                    let name = self.view.header.agent.clone();
                    let message = format!("Could not start the agent {name:?}: {}", error.message);
                    self.drop_waiting_prompt("the agent could not be started");
                    let missing = self.session.as_ref().is_some_and(|slot| self.is_missing_builtin(&slot.profile));
                    let (level, text, status) = if missing {
                        // A built-in agent the host did not find: nothing went wrong that Restart
                        // would mend, and the host offers the install (a toast of its own), so
                        // this is said on the card and in the header, whose Install button
                        // brings the offer back, rather than in an error toast.
                        self.log(LogLevel::Warn, format!("Tether: {message}"));
                        let text = format!(
                            "{name} is not installed on this machine. Choose Install {name}… above to install it into Tether's own storage, or pick another agent."
                        );
                        (NoticeLevel::Warning, text, format!("{name} is not installed"))
                    } else {
                        self.show(LogLevel::Error, format!("Tether: {message}"));
                        (NoticeLevel::Error, message.clone(), message.clone())
                    };
                    if let Some(slot) = &mut self.session {
                        // Closed like an agent that exited: Restart (or the next prompt) tries
                        // again, with the command as the settings then have it. Under "More":
                        // the command, after the start's error where the card's text is not it.
                        let command = format!("{} {}", slot.profile.command, slot.profile.args.join(" "));
                        let detail = if missing { format!("{message}\n{command}") } else { command };
                        slot.client.handle_start_failed(NoticeView { level, text, detail: Some(detail) });
                    }
                    self.set_status(SessionStatus::Failed { message: status });
                }
            }
            (tag @ (SidecarRequest::Snapshot { generation, .. } | SidecarRequest::Scan { generation, .. }), result) => {
                let result = result.map(|raw| raw.get().to_owned()).map_err(|error| error.message);
                self.on_snapshot_answer(tag, generation, result);
            }
            (SidecarRequest::Terminal { generation, call }, result) => {
                if let Some(slot) = self.session.as_mut().filter(|slot| slot.generation == generation) {
                    slot.client.handle_terminal_answer(call, result, now);
                }
            }
            (SidecarRequest::SessionList { purpose }, result) => {
                let listed = parse_result::<SessionListResult>(result, method::SESSION_LIST);
                self.on_sessions_listed(purpose, listed, now);
            }
            (SidecarRequest::SessionRead { load }, result) => {
                let piece = parse_result::<SessionReadResult>(result, method::SESSION_READ);
                self.on_session_read(load, piece, now);
            }
            (SidecarRequest::SessionChange, Ok(_)) => self.list_sessions(ListPurpose::History, now),
            (SidecarRequest::SessionChange, Err(error)) => {
                self.show(LogLevel::Error, format!("Tether: {}", error.message));
            }
            (SidecarRequest::KillToSignIn { generation }, result) => {
                if let Err(error) = result {
                    // An agent tetherd no longer knows has exited already: it can be replaced.
                    self.log(LogLevel::Info, format!("stopping the agent to sign in: {}", error.message));
                }
                if self.session.as_ref().is_some_and(|slot| slot.generation == generation) {
                    self.restart_agent(now);
                }
            }
            (SidecarRequest::Stop { generation }, result) => {
                self.on_agent_stopped(generation, result.map(|_| ()).map_err(|error| error.message));
            }
            (SidecarRequest::Kill, Ok(_)) => {}
            (SidecarRequest::Kill, Err(error)) => {
                self.log(LogLevel::Warn, format!("tetherd could not stop an agent: {}", error.message));
            }
        }
    }

    /// The open session a notification from tetherd is about: the one of the agent or the
    /// terminal it names.
    fn session_of_notification(&self, params: Option<&RawValue>) -> Option<SessionKey> {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Subject {
            agent_id: Option<AgentId>,
            terminal_id: Option<TerminalId>,
        }
        let subject = serde_json::from_str::<Subject>(params?.get()).ok()?;
        match (subject.agent_id, subject.terminal_id) {
            (Some(agent_id), _) => self.key_of_agent(agent_id),
            (None, Some(terminal)) => self.key_of_sidecar_terminal(terminal),
            (None, None) => None,
        }
    }

    pub(super) fn handle_sidecar_notification(&mut self, method: &str, params: Option<&RawValue>, now: u64) {
        let params = params.map_or("null", RawValue::get);
        match method {
            method::AGENT_MESSAGE => match serde_json::from_str::<AgentMessage<'_>>(params) {
                Ok(message) => self.on_agent_message(AgentLine::from(&message), now),
                Err(error) => self.log(LogLevel::Error, format!("tetherd sent a malformed agent/message: {error}")),
            },
            method::MCP_TOOL_CALLED => match serde_json::from_str::<McpToolCalled>(params) {
                Ok(called) => {
                    if let Some(slot) = self.agent_slot(called.agent_id) {
                        slot.client.show_mcp_tool_call(&called.tool, called.arguments, &called.summary, called.ok);
                    }
                }
                Err(error) => self.log(LogLevel::Error, format!("tetherd sent a malformed mcp/toolCalled: {error}")),
            },
            method::AGENT_BAD_LINE => match serde_json::from_str::<AgentBadLine>(params) {
                Ok(bad) => {
                    if let Some(slot) = self.agent_slot(bad.agent_id) {
                        match &mut slot.claude {
                            Some(claude) => claude.handle_bad_line(bad.kind, bad.len, &bad.preview, &bad.error),
                            None => slot.client.handle_bad_line(bad.kind, bad.len, &bad.preview, &bad.error),
                        }
                    }
                }
                Err(error) => self.log(LogLevel::Error, format!("tetherd sent a malformed agent/badLine: {error}")),
            },
            method::AGENT_STDERR => match serde_json::from_str::<AgentStderr>(params) {
                Ok(stderr) => {
                    let mut name = None;
                    if let Some(slot) = self.live_slot(stderr.agent_id, stderr.seq) {
                        slot.keep_stderr(&stderr.line);
                        name = Some(slot.profile.name.clone());
                        // A starting agent's header shows what it said last (`Session::last_stderr_text`).
                        if matches!(self.view.header.status, SessionStatus::Starting { .. }) {
                            self.view.header_changed();
                        }
                    }
                    let name = name.unwrap_or_else(|| format!("agent {}", stderr.agent_id));
                    self.log(LogLevel::Info, format!("[{name}] {}", stderr.line));
                }
                Err(error) => self.log(LogLevel::Error, format!("tetherd sent a malformed agent/stderr: {error}")),
            },
            method::TETHERD_STOPPING => match serde_json::from_str::<TetherdStopping>(params) {
                Ok(stopping) => {
                    self.log(LogLevel::Info, format!("tetherd is stopping ({})", stopping.reason));
                    self.tetherd.stopping = Some(stopping.reason);
                }
                Err(error) => self.log(LogLevel::Error, format!("tetherd sent a malformed tetherd/stopping: {error}")),
            },
            method::AGENT_LOG_FAILED => match serde_json::from_str::<AgentLogFailed>(params) {
                Ok(failed) => self.on_agent_log_failed(failed),
                Err(error) => self.log(LogLevel::Error, format!("tetherd sent a malformed agent/logFailed: {error}")),
            },
            method::AGENT_EXITED => match serde_json::from_str::<AgentExited>(params) {
                Ok(exited) => self.on_agent_exited(exited),
                Err(error) => self.log(LogLevel::Error, format!("tetherd sent a malformed agent/exited: {error}")),
            },
            // A terminal's id is unique in tetherd, so only the session that created it knows it;
            // output of an earlier session's terminal finds nothing and is dropped.
            method::TERMINAL_DATA => match serde_json::from_str::<TerminalData>(params) {
                Ok(data) => {
                    if let Some(slot) = &mut self.session {
                        slot.client.handle_terminal_data(data.terminal_id, &data.data, now);
                    }
                }
                Err(error) => self.log(LogLevel::Error, format!("tetherd sent a malformed terminal/data: {error}")),
            },
            method::TERMINAL_EXITED => match serde_json::from_str::<TerminalExited>(params) {
                Ok(exited) => {
                    if let Some(slot) = &mut self.session {
                        slot.client.handle_terminal_exited(exited, now);
                    }
                }
                Err(error) => self.log(LogLevel::Error, format!("tetherd sent a malformed terminal/exited: {error}")),
            },
            _ => self.log(LogLevel::Debug, format!("ignored a notification from tetherd: {method}")),
        }
    }

    pub(super) fn send_audit(&mut self, agent_id: AgentId, record: &str) {
        if !self.tetherd.is_ready() {
            return self.log(LogLevel::Info, format!("audit (tetherd is not connected): {record}"));
        }
        // The record is JSON the engine encoded itself: embedded as it is.
        let line = format!(
            r#"{{"jsonrpc":"2.0","method":"{}","params":{{"agentId":{agent_id},"record":{record}}}}}"#,
            method::SESSION_AUDIT
        );
        self.sidecar_write(line);
    }

    /// Sends a request to tetherd that must be answered within [`SIDECAR_TIMEOUT_MS`] of `now`.
    pub(super) fn sidecar_request(&mut self, method: &str, params: &impl Serialize, tag: SidecarRequest, now: u64) {
        let line = self.tetherd.request(method, params, tag, Some(now + SIDECAR_TIMEOUT_MS));
        self.sidecar_write(line);
    }

    /// Sends a request to tetherd that must be answered within `timeout_ms` of the input being
    /// handled.
    pub(super) fn sidecar_request_within(
        &mut self,
        method: &str,
        params: &impl Serialize,
        tag: SidecarRequest,
        timeout_ms: u64,
    ) {
        let line = self.tetherd.request(method, params, tag, Some(self.now + timeout_ms));
        self.sidecar_write(line);
    }

    pub(super) fn sidecar_write(&mut self, mut line: String) {
        line.push('\n');
        self.actions.push_back(HostAction::SidecarWrite { data: line });
    }
}

/// A result of tetherd's, read as `T`, or why it cannot be.
fn parse_result<T: serde::de::DeserializeOwned>(
    result: Result<&RawValue, RpcError>,
    method: &str,
) -> Result<T, String> {
    match result {
        Ok(raw) => serde_json::from_str(raw.get())
            .map_err(|error| format!("tetherd's answer to {method} is malformed: {error}")),
        Err(error) => Err(error.message),
    }
}

/// What the chat says while the workspace is not trusted.
const UNTRUSTED_MESSAGE: &str = "This workspace is not trusted, so Tether starts nothing in it: no tetherd, no agent. \
     Trust the workspace to start the session.";

/// An agent's line as tetherd forwarded it (`agent/message`), for the session it serves.
struct AgentLine<'a> {
    agent_id: AgentId,
    /// The agent's line, as it wrote it.
    message: &'a str,
    seq: Option<u64>,
    /// The line read as the text chunk it is, when [`agent_text_chunk`] read it.
    text_chunk: Option<acp::SessionNotification>,
}

impl<'a> From<&AgentMessage<'a>> for AgentLine<'a> {
    fn from(message: &AgentMessage<'a>) -> Self {
        AgentLine { agent_id: message.agent_id, message: message.message.get(), seq: message.seq, text_chunk: None }
    }
}

/// The `agent/message` of a streamed text chunk, read in one pass when the line is exactly what
/// tetherd writes for one: `{"jsonrpc":"2.0","method":"agent/message","params":{"agentId":N,
/// "message":M,"seq":S}}` (or without `seq`), whose `M` [`text_chunk`] reads; `None` for any other
/// line, which [`agent_message`] or the general path takes.
///
/// A streaming reply is thousands of these, and reading the envelope with serde, even with `M`
/// as raw JSON, costs about as much as reading `M` itself, only to find where it ends. Here the
/// envelope is matched as text around `M`, and `M` is read once, by [`text_chunk`], which takes
/// nothing but a complete JSON value of the chunk's exact shape. So a line taken here is a JSON
/// line with those members and no other, and reads exactly as the general path reads it.
fn agent_text_chunk(line: &str) -> Option<AgentLine<'_>> {
    const PREFIX: &str = r#"{"jsonrpc":"2.0","method":"agent/message","params":{"agentId":"#;
    const MESSAGE: &str = r#","message":"#;
    const SEQ: &str = r#","seq":"#;
    let rest = line.strip_prefix(PREFIX)?;
    let digits = rest.find(|character: char| !character.is_ascii_digit())?;
    let agent_id = json_u64(&rest[..digits])?;
    let rest = rest[digits..].strip_prefix(MESSAGE)?.strip_suffix("}}")?;
    // `M` is a JSON value, which cannot end in `,"seq":<digits>`: a suffix like that is the seq.
    let seq_digits = rest.len() - rest.trim_end_matches(|character: char| character.is_ascii_digit()).len();
    let (message, seq) = match rest[..rest.len() - seq_digits].strip_suffix(SEQ) {
        Some(message) if seq_digits > 0 => (message, Some(json_u64(&rest[rest.len() - seq_digits..])?)),
        _ => (rest, None),
    };
    // No space around `M`, which serde_json would allow and the general path leave out of it.
    if !(message.starts_with('{') && message.ends_with('}')) {
        return None;
    }
    let chunk = crate::acp::text_chunk(message)?;
    Some(AgentLine { agent_id, message, seq, text_chunk: Some(chunk) })
}

/// A JSON number that is a `u64`, as serde_json reads one: digits without a leading zero.
fn json_u64(digits: &str) -> Option<u64> {
    let leading_zero = digits.len() > 1 && digits.starts_with('0');
    if digits.is_empty() || leading_zero || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// An `agent/message` notification, read in one pass when the line is exactly that (as tetherd
/// writes every one); `None` for any other line, which takes the general path.
///
/// An agent's lines are most of what tetherd sends, thousands for one streaming reply, and the
/// general path reads each twice: the JSON-RPC envelope with its params as raw JSON, then the
/// params. A line with any other member (an `id`, an `error`) is not taken here, so what this
/// reads is exactly what the general path would have.
fn agent_message(line: &str) -> Option<AgentMessage<'_>> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Line<'a> {
        jsonrpc: &'a str,
        method: &'a str,
        #[serde(borrow)]
        params: AgentMessage<'a>,
    }
    let Line { jsonrpc, method, params } = serde_json::from_str(line).ok()?;
    (jsonrpc == jsonrpc::JSONRPC_VERSION && method == method::AGENT_MESSAGE).then_some(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the general path reads from `line`: the `agent/message` params, if it is one.
    fn read_generally(line: &str) -> Option<(AgentId, String, Option<u64>)> {
        match jsonrpc::parse_message(line).ok()? {
            Message::Notification { method, params } if method == method::AGENT_MESSAGE => {
                let message = serde_json::from_str::<AgentMessage<'_>>(params?.get()).ok()?;
                Some((message.agent_id, message.message.get().to_owned(), message.seq))
            }
            _ => None,
        }
    }

    #[test]
    fn a_text_chunk_is_read_in_one_pass_as_the_general_path_reads_it() {
        let chunk = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a \"seq\":1}} é"}}}}"#;
        let envelope = |agent: &str, message: &str, tail: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"agent/message","params":{{"agentId":{agent},"message":{message}{tail}}}}}"#
            )
        };
        let taken = [
            envelope("7", chunk, r#","seq":12"#),
            envelope("0", chunk, ""),
            envelope("18446744073709551615", chunk, r#","seq":0"#),
        ];
        for line in &taken {
            let read = agent_text_chunk(line).map(|read| (read.agent_id, read.message.to_owned(), read.seq));
            assert!(read.is_some(), "not taken: {line}");
            assert_eq!(read, read_generally(line), "read differently: {line}");
        }
        // Lines the general path reads otherwise, or not at all, and lines that are not a text
        // chunk: left to `agent_message` and the general path.
        let thought = chunk.replace("agent_message_chunk", "agent_thought_chunk");
        let tool = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"x"}}}"#;
        let left = [
            envelope("07", chunk, r#","seq":12"#),
            envelope("7", chunk, r#","seq":012"#),
            envelope("7", chunk, r#","seq":-1"#),
            envelope("18446744073709551616", chunk, ""),
            envelope("7", chunk, r#","seq":12,"extra":1"#),
            envelope("7", chunk, r#","extra":1"#),
            envelope("7", &format!(" {chunk}"), ""),
            envelope("7", &format!("{chunk}}}"), ""),
            envelope("7", &chunk[..chunk.len() - 1], ""),
            envelope("7", tool, r#","seq":3"#),
            envelope("7", "5", r#","seq":3"#),
            format!("{} ", envelope("7", chunk, "")),
            envelope("7", chunk, "").replace(r#""agentId":7"#, r#""agentId": 7"#),
        ];
        for line in &left {
            assert!(agent_text_chunk(line).is_none(), "taken: {line}");
        }
        let read = agent_text_chunk(&envelope("7", &thought, "")).map(|read| read.message.to_owned());
        assert_eq!(read.as_deref(), Some(thought.as_str()), "a thought streams the same way");
    }

    #[test]
    fn an_agent_message_is_read_in_one_pass_as_the_general_path_reads_it() {
        let taken = [
            r#"{"jsonrpc":"2.0","method":"agent/message","params":{"agentId":7,"message":{"jsonrpc":"2.0","method":"x","params":{"s":"é\n"}},"seq":12}}"#,
            r#"{"params":{"message":{"a":[1,2,{"b":null}]},"agentId":1},"method":"agent/message","jsonrpc":"2.0"}"#,
        ];
        for line in taken {
            let read =
                agent_message(line).map(|message| (message.agent_id, message.message.get().to_owned(), message.seq));
            assert!(read.is_some(), "not taken: {line}");
            assert_eq!(read, read_generally(line), "read differently: {line}");
        }
        let left = [
            r#"{"jsonrpc":"2.0","id":1,"method":"agent/message","params":{"agentId":7,"message":{}}}"#,
            r#"{"jsonrpc":"2.0","method":"agent/stderr","params":{"agentId":7,"line":"x"}}"#,
            r#"{"jsonrpc":"2.0","method":"agent/message","params":null}"#,
            r#"{"jsonrpc":"2.0","method":"agent/message","params":{"agentId":7}}"#,
            r#"{"jsonrpc":"2.0","method":"agent/message","extra":1,"params":{"agentId":7,"message":{}}}"#,
            r#"{"method":"agent/message","params":{"agentId":7,"message":{}}}"#,
            r#"{"jsonrpc":"2.0","id":4,"result":{}}"#,
        ];
        for line in left {
            assert!(agent_message(line).is_none(), "taken: {line}");
        }
    }
}
