//! The ACP client engine for one agent connection: the handshake, one session, prompt turns,
//! cancellation and permission requests, with `session/update` folded into a [`Thread`].
//!
//! It is a state machine in the quinn-proto style: agent lines go in through
//! [`AcpClient::handle_message`], the person's intents through [`AcpClient::prompt`],
//! [`AcpClient::cancel`] and [`AcpClient::answer_permission`]; lines for the agent come out of
//! [`AcpClient::poll_outgoing`], lifecycle events out of [`AcpClient::poll_event`], and the thread's
//! patches out of [`AcpClient::thread_mut`]. Time is a parameter, used only for request deadlines.
//!
//! Everything the agent sends is untrusted: a line that is not JSON-RPC, a response to a request
//! never made, a request for a method this client does not offer or an update for another session
//! is answered or reported (a notice in the thread, an event for the log), never a panic, and the
//! session goes on.
//!
//! Permission requests are first put to the session's [`PermissionPolicy`]: a rule or the mode may
//! answer at once (the tool call then shows one line saying which), otherwise the request waits for
//! the person. Whenever the policy changes (a rule added, an "always" chosen, the mode switched),
//! every request still waiting is put to it again, so an "always allow" also answers the requests
//! already pending that it matches. Every decision is raised as an [`AuditRecord`] for the log.
//!
//! The mode is Tether's own and applied here, client side; it is also sent to the agent when the
//! agent offers a mode that means the same (`session/set_mode`, or a config option of category
//! `mode`), and a mode the agent reports by itself is followed, but never sent back: echoing it
//! would let the two sides bounce a change back and forth for ever.
//!
//! `fs/*` is served in the `fs` module (reads through the host, writes reviewed), `terminal/*` in
//! the `terminal` module (run by tetherd, mirrored into VS Code terminals and the chat).
//!
//! What the engine keeps for the agent is bounded. The agent's requests waiting for an answer
//! (permission cards, file reads, terminal calls) are at most [`MAX_AGENT_REQUESTS_WAITING`]: one
//! beyond that is answered at once with an error saying why, and the thread says once that
//! requests are being refused, so a flood of requests costs a bounded amount of memory and the
//! session goes on. The engine's own requests have deadlines, except the prompt (a turn may take
//! as long as it likes, and only one runs at a time) and `authenticate` (a sign-in waits for the
//! person): `initialize`, `session/new`, `session/list` after [`HANDSHAKE_TIMEOUT_MS`], mode and
//! config switches after [`CONTROL_TIMEOUT_MS`], each then settled with a clear error. The
//! queues of lines and events for the host ([`AcpClient::poll_outgoing`],
//! [`AcpClient::poll_event`]) are drained by the host after every input, so they hold what one
//! input caused.
//!
//! The session state beside the thread (slash commands, config options, the title, context usage)
//! and the updates that are not conversation (notices, compaction) are kept in the
//! `session_state` module.

mod auth;
mod cards;
mod fs;
mod handshake;
mod links;
mod mcp_servers;
mod modes;
mod prompt_content;
mod replay;
mod session_state;
mod terminal;
mod turn;
mod updates;
mod wire;

pub use auth::{SecretEnv, SignIn, methods_for_profile, parse_auth_methods};
pub use mcp_servers::MCP_STATUS_NOTIFICATION;
pub use prompt_content::{MAX_EMBEDDED_FILE_BYTES, MAX_IMAGE_BYTES};
pub(crate) use prompt_content::{parse_file_uri, selection_label};
pub use replay::LogReplay;
pub use terminal::TerminalCall;
pub use updates::tool_call_view;
pub(crate) use wire::text_chunk;

use std::collections::{BTreeMap, VecDeque};

use agent_client_protocol_schema::v1 as acp;
use serde::Serialize;

use crate::jsonrpc::{self, RequestId, RpcError};
use crate::permissions::{
    AuditEvent, AuditRecord, DecidedBy, PermissionPolicy, RequestFacts, RuleError, RuleId, Verdict,
};
use crate::sidecar::BadLineKind;
use crate::thread::{
    Entry, EntryIndex, Location, NoticeLevel, NoticeView, PermissionKey, PermissionOutcome, Thread, ToolCallView,
    ToolContent, ToolStatus, TurnState, UserMessage,
};
use crate::workspace_path::Workspace;

use modes::AgentModes;

/// The step budget for the diff of a tool call's card: tool calls are updated often, so a huge
/// diff degrades sooner than a review's.
const PREVIEW_BUDGET: tether_diff::Budget = tether_diff::Budget { max_steps: 200_000 };

/// How many approved commands wait for their `terminal/create` at most (see
/// [`AcpClient::remember_approved_command`]).
const MAX_APPROVED_COMMANDS: usize = 64;

/// How an agent that did not outlive Tether's reach reads in the thread ("The agent was no longer
/// running when Tether came back."): a session going on with a new agent, and a log holding a
/// later agent with no exit of the one before it.
pub(crate) const GONE_WHEN_BACK: &str = "was no longer running when Tether came back";

/// The ACP protocol version this client speaks.
pub const PROTOCOL_VERSION: u16 = 1;

/// How long `initialize` and `session/new` may take. Real agents are slow to start (Gemini CLI
/// takes 4-11 s to answer `initialize` on two cores), so this only catches an agent that hangs.
pub const HANDSHAKE_TIMEOUT_MS: u64 = 120_000;

/// How long the agent may take to answer a mode or config switch. The agent only records a
/// choice, so this only catches an agent that never answers.
pub const CONTROL_TIMEOUT_MS: u64 = 30_000;

/// The most requests of the agent's that may wait for an answer at once (see the module
/// documentation). Far more than an agent has in flight while it works: each is a card for the
/// person, a file being read or a command being run.
pub const MAX_AGENT_REQUESTS_WAITING: usize = 256;

/// Who this client is, for `clientInfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientInfo {
    pub name: String,
    pub version: String,
}

/// Something the host engine should react to (update the header, log, set the badge).
#[derive(Debug, Clone, PartialEq)]
pub enum AcpEvent {
    /// The agent answered `initialize`; `agent` is its name and version when it gave them.
    Initialized { agent: Option<String> },
    /// `session/new` succeeded: prompts can be sent.
    SessionReady { session_id: String },
    /// The handshake failed: this connection cannot be used for prompts.
    Failed { message: String },
    /// The agent answered "authentication required": the person must choose one of `methods`
    /// (answered with [`AcpClient::sign_in`]).
    AuthRequired { methods: Vec<crate::host_api::AuthMethodView> },
    /// The agent did something wrong that the session survives; for the log.
    ProtocolProblem { message: String },
    /// The number of permission requests waiting for the person changed.
    PermissionsWaiting { count: u32 },
    /// The mode, the rules (or how often one fired) or the agent's own mode changed: the header
    /// and the rules panel need redrawing.
    PolicyChanged,
    /// A decision for the session's audit log.
    Audit(Box<AuditRecord>),
    /// Something for the host to do with files: read, edit, show a review.
    Host(Box<crate::host_api::HostAction>),
    /// Snapshot the workspace before the held prompt is sent; answer with `handle_snapshot`.
    TakeSnapshot,
    /// Compare the workspace with the snapshot `base`; answer with `handle_scan`.
    ScanChanges { base: String },
    /// The changes bar or the reviews waiting changed.
    ChangesChanged,
    /// Something for tetherd about a terminal; answer requests with `handle_terminal_answer`.
    Terminal(TerminalCall),
    /// The session's title, slash commands, config options or usage changed
    /// ([`AcpClient::controls`]): the header and the composer need redrawing.
    ControlsChanged,
    /// A tool call points at a new place in a workspace file (its first `locations` entry): where
    /// "Follow the agent" goes.
    ToolLocation { path: String, line: Option<u32> },
    /// The agent answered `session/list` (see [`AcpClient::list_agent_sessions`]): its sessions
    /// for this workspace, or why it could not list them.
    AgentSessions(Result<Vec<AgentSession>, String>),
}

/// A session the agent keeps, from its `session/list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentSession {
    pub session_id: String,
    pub title: Option<String>,
    /// ISO 8601, as the agent said.
    pub updated_at: Option<String>,
}

/// Why the engine refused an intent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IntentError {
    #[error("the agent session is not ready yet")]
    NotReady,
    #[error("a turn is already running; cancel it or wait for it to end")]
    TurnRunning,
    #[error("that permission request is no longer waiting for an answer")]
    UnknownPermission,
    #[error("the agent did not offer the option {0:?}")]
    UnknownOption(String),
    #[error("that rule no longer exists")]
    UnknownRule,
    #[error("the rule cannot be used: {0}")]
    Rule(#[from] RuleError),
    #[error("that file change is no longer known")]
    UnknownChange,
    #[error("there is nothing left to decide on that change now")]
    NothingToDecide,
    #[error("that terminal is no longer known")]
    UnknownTerminal,
    #[error("the agent runs that command itself; cancel the turn to stop it")]
    NotOurTerminal,
    #[error("the agent offers no config option {0:?}")]
    UnknownConfigOption(String),
    #[error("the agent offers no such value for {option:?}")]
    UnknownConfigValue { option: String },
    #[error("the agent is not waiting for a sign-in")]
    NotSigningIn,
    #[error("the agent offers no sign-in method {0:?}")]
    UnknownAuthMethod(String),
    #[error("this agent does not accept images")]
    ImagesNotAccepted,
    #[error("{0:?} is not an image type")]
    NotAnImage(String),
    #[error("an image is larger than {max_mib} MiB")]
    ImageTooLarge { max_mib: usize },
    #[error("that prompt is not in this session's thread")]
    UnknownCheckpoint,
    #[error("that restore is no longer known")]
    UnknownRestore,
    #[error("nothing of that restore was written, so there is nothing to undo")]
    NothingToUndo,
}

/// What each request in flight was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RequestKind {
    Initialize,
    NewSession,
    Prompt,
    /// `session/set_mode` or `session/set_config_option` for the mode.
    SetAgentMode,
    /// `session/load` or `session/resume` of the session in `resume`.
    ResumeSession,
    /// `session/fork` of an earlier session, to go on from a checkpoint.
    ForkSession,
    /// `session/list`.
    ListSessions,
    /// `authenticate`, with the method the person chose.
    Authenticate,
    /// `session/set_config_option` for an option the person set (not the mode Tether sends).
    SetConfigOption,
    /// A request read back from a session's log that this version does not make: its answer is
    /// recognised and ignored.
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Phase {
    /// `start` has not been called.
    New,
    Initializing,
    CreatingSession,
    /// `session/load` or `session/resume` of an earlier agent session is in flight; the history
    /// the agent replays meanwhile is already in the thread (from Tether's own log), so its
    /// updates are not shown again.
    ResumingSession,
    /// The agent answered "authentication required": the person is being asked to sign in, or
    /// `authenticate` is in flight.
    SigningIn,
    Ready,
    /// The handshake failed or the agent exited; nothing more can be sent.
    Closed,
}

#[derive(Debug)]
pub struct AcpClient {
    info: ClientInfo,
    /// Every folder of the workspace: what is inside. The first is where the agent works.
    workspace: Workspace,
    phase: Phase,
    thread: Thread,
    /// The person's prompt, held or in flight.
    turn: turn::Turn,
    policy: PermissionPolicy,
    files: fs::Files,
    /// The restores to checkpoints the person asked for (see `fs/restore.rs`).
    restores: fs::Restores,
    links: links::Links,
    terminals: terminal::Terminals,
    /// The time of the input being handled.
    now: u64,
    /// Folding a session's log: the policy decides nothing (the log says what was decided).
    replaying: bool,
    /// While replaying: the agent's requests for files and terminals the log has not answered
    /// (yet), by id, as the agent sent them.
    unanswered: BTreeMap<RequestId, String>,
    /// While replaying: the session rules read back from the log, from the id the log gave each
    /// to the id the replaying policy did (its decisions in the log name the first).
    replayed_rule_ids: BTreeMap<RuleId, RuleId>,
    controls: session_state::SessionControls,
    /// The connection: requests in flight, lines for the agent, the agent's requests waiting.
    wire: wire::Wire,
    /// The agent's session and what the agent offers for sessions.
    session: handshake::AgentSessionState,
    /// Permission requests waiting for the person, and commands approved for a terminal.
    cards: cards::PermissionCards,
    /// The agent's own modes and the switches in flight.
    modes: modes::ModeState,
    auth: auth::Authentication,
    /// The MCP servers offered to the agent.
    mcp: mcp_servers::McpServers,
    events: VecDeque<AcpEvent>,
}

impl AcpClient {
    /// A client for an agent started in `cwd` (also the workspace's folder that rule paths are
    /// relative to, until [`AcpClient::set_workspace_folders`] adds others), deciding permission requests by `policy`. Permission keys start at
    /// `first_permission_key`, so a host that replaces its client never reuses a key a stale
    /// webview might still send.
    pub fn new(
        info: ClientInfo,
        cwd: impl Into<String>,
        first_permission_key: PermissionKey,
        policy: PermissionPolicy,
    ) -> Self {
        let cwd = cwd.into();
        // The rules' paths match as the workspace's file names do.
        let policy = policy.fold_case(crate::workspace_path::PathStyle::of(&cwd).folds_case());
        AcpClient {
            info,
            workspace: Workspace::single(cwd),
            phase: Phase::New,
            thread: Thread::default(),
            turn: turn::Turn::default(),
            policy,
            files: fs::Files::new(first_permission_key),
            restores: fs::Restores::default(),
            links: links::Links::new(first_permission_key),
            terminals: terminal::Terminals::default(),
            now: 0,
            replaying: false,
            unanswered: BTreeMap::new(),
            replayed_rule_ids: BTreeMap::new(),
            controls: session_state::SessionControls::default(),
            wire: wire::Wire::default(),
            session: handshake::AgentSessionState::default(),
            cards: cards::PermissionCards::new(first_permission_key),
            modes: modes::ModeState::default(),
            auth: auth::Authentication::default(),
            mcp: mcp_servers::McpServers::default(),
            events: VecDeque::new(),
        }
    }

    /// The workspace's other folders (absolute), which are inside as the first is: paths in them
    /// are named with their folder's name first (see [`Workspace`]).
    pub fn set_workspace_folders(&mut self, others: impl IntoIterator<Item = String>) {
        self.workspace = Workspace::new(self.cwd().to_owned(), others);
    }

    /// Where the agent works: the workspace's first folder.
    fn cwd(&self) -> &str {
        self.workspace.first()
    }

    pub fn thread(&self) -> &Thread {
        &self.thread
    }

    pub fn thread_mut(&mut self) -> &mut Thread {
        &mut self.thread
    }

    pub fn agent_info(&self) -> Option<&str> {
        self.session.agent_info.as_deref()
    }

    /// What the agent said it can do when it was initialized, in the person's words ("images",
    /// "resumes sessions", ...); empty before then.
    pub fn abilities(&self) -> &[&'static str] {
        &self.session.abilities
    }

    pub fn is_ready(&self) -> bool {
        self.phase == Phase::Ready
    }

    /// The handshake is under way (or about to be): the session will be ready, or fail, without
    /// the person doing anything. Signing in is not starting: that waits for the person.
    pub fn is_starting(&self) -> bool {
        matches!(self.phase, Phase::New | Phase::Initializing | Phase::CreatingSession | Phase::ResumingSession)
    }

    /// The agent has exited (or never will answer again): only a new agent can go on.
    pub fn is_closed(&self) -> bool {
        self.phase == Phase::Closed
    }

    pub fn session_id(&self) -> Option<&str> {
        self.session.id.as_ref().map(|id| &*id.0)
    }

    /// Makes the client ready for a new agent process that goes on with this thread: Restart
    /// after the agent exited, or a session reopened from its log. What the earlier agent left
    /// unfinished is closed first, as if it had exited (its turn fails, its questions are
    /// cancelled, its commands are marked lost). The thread, the policy and the request ids
    /// (which keep counting, so that a log never holds two requests with one id) stay. The
    /// agent's session is resumed: call `start` next.
    pub fn prepare_new_agent(&mut self, now: u64) {
        if self.phase != Phase::Closed {
            self.handle_exited(GONE_WHEN_BACK, false, "");
        }
        self.terminals_lost("its agent is gone", now);
        self.drop_unanswered(GONE_WHEN_BACK);
        self.modes.agent = None;
        self.modes.switches_in_flight = 0;
        self.controls.forget_agent();
        self.events.push_back(AcpEvent::ControlsChanged);
        self.session.resume = self.session.id.as_ref().map(|id| id.0.to_string());
        self.phase = Phase::New;
    }

    /// A line from the agent's stdout that could not be forwarded as JSON (tetherd's
    /// `agent/badLine`). JSON-RPC answers a message it cannot parse with a parse error (id null),
    /// so the agent learns something was lost rather than waiting forever; the person sees it.
    pub fn handle_bad_line(&mut self, kind: BadLineKind, len: u64, preview: &str, error: &str) {
        let rpc_error = match kind {
            BadLineKind::TooLong => RpcError::parse_error()
                .data(serde_json::Value::String(format!("line of {len} bytes is over the limit"))),
            BadLineKind::InvalidUtf8 | BadLineKind::InvalidJson => {
                RpcError::parse_error().data(serde_json::Value::String(error.to_owned()))
            }
        };
        self.push_outgoing(jsonrpc::encode_error(&RequestId::Null, &rpc_error));
        let what = match kind {
            BadLineKind::TooLong => "a line too long to read",
            BadLineKind::InvalidUtf8 => "a line that is not UTF-8",
            BadLineKind::InvalidJson => "a line that is not JSON",
        };
        let message = format!("the agent printed {what} ({len} bytes); it was skipped");
        // tetherd logs messages, and this line was none: the notice is logged instead, so that
        // the session read back (after a reload, a restart) still says what was skipped.
        let detail = format!("{error}\n\n{preview}");
        self.audit(AuditEvent::Notice {
            level: NoticeLevel::Warning,
            text: capitalize(&message),
            detail: Some(detail.clone()),
        });
        self.problem(message, Some(&detail));
    }

    /// The agent process ended. `stderr_tail` is what it last printed on stderr.
    pub fn handle_exited(&mut self, description: &str, killed: bool, stderr_tail: &str) {
        if self.phase == Phase::Closed && killed {
            return;
        }
        let detail = (!stderr_tail.is_empty()).then(|| stderr_tail.to_owned());
        let (turn_end, notice) = if killed {
            // Stopped on purpose (its tab closed, a new session, Tether closing): a turn it was
            // in was stopped, not failed, and how the process ended is noise. Stopped while idle
            // it interrupted nothing, and a reopened session would otherwise gather a "stopped"
            // notice each time its tab was closed. Stopped while it waited for a sign-in, it is
            // started again to sign in (or the person left): what that comes to follows.
            let turn_running = self.thread.turn() == &TurnState::Running;
            let text = "The agent was stopped during its turn.".to_owned();
            let notice = (turn_running && self.phase != Phase::SigningIn).then_some(NoticeView {
                level: NoticeLevel::Info,
                text,
                detail,
            });
            (TurnState::ended(acp::StopReason::Cancelled), notice)
        } else {
            let turn_end = TurnState::Failed { message: format!("the agent {description} during the turn") };
            let notice = NoticeView { level: NoticeLevel::Error, text: format!("The agent {description}."), detail };
            (turn_end, Some(notice))
        };
        self.close(description, turn_end, notice, true);
    }

    /// The agent went with a tetherd that was lost (`why`, as the thread is to say it). tetherd
    /// logged no exit for it, so the reason is recorded: a replay of the log ends what the agent
    /// left open with these words too.
    pub fn handle_lost(&mut self, why: &str) {
        if self.phase == Phase::Closed {
            return;
        }
        self.audit(AuditEvent::AgentLost { why: why.to_owned() });
        self.handle_exited(why, false, "");
    }

    /// Tether is killing the agent because the person asked (it hung while starting, or did not
    /// end a cancelled turn): a running turn ends `cancelled`, what waits for the agent is
    /// settled now, and `notice` says what happened.
    pub fn handle_stopped(&mut self, notice: &str) {
        if self.phase == Phase::Closed {
            return;
        }
        let turn_end = TurnState::ended(acp::StopReason::Cancelled);
        let notice = NoticeView { level: NoticeLevel::Warning, text: notice.to_owned(), detail: None };
        // The handshake did not fail: the person ended it, and the notice says so.
        self.close("was stopped by Tether", turn_end, Some(notice), false);
    }

    /// The agent's process could not be started (`notice` says why): the session is over before
    /// it began, as for an agent that exited, so the host offers to start it again.
    pub fn handle_start_failed(&mut self, notice: NoticeView) {
        if self.phase == Phase::Closed {
            return;
        }
        let turn_end = TurnState::Failed { message: "the agent could not be started".to_owned() };
        // The host reports the failure itself (the header's status says it). Each prompt sent
        // meanwhile tries again: the same failure again adds no second card under the first.
        let repeated = matches!(self.thread.entries().last(), Some(Entry::Notice(last)) if last.text == notice.text);
        self.close("could not be started", turn_end, (!repeated).then_some(notice), false);
    }

    /// tetherd could not write the session's log and is ending the agent, since the session must
    /// not go on unrecorded: a running turn fails, what waits for the agent is settled now (a
    /// card is no longer answerable), and `notice` says which log and why.
    pub fn handle_log_failed(&mut self, notice: &str) {
        if self.phase == Phase::Closed {
            return;
        }
        let turn_end = TurnState::Failed {
            message: "the session's log could not be written, so Tether stopped the agent".to_owned(),
        };
        let notice = NoticeView { level: NoticeLevel::Error, text: notice.to_owned(), detail: None };
        self.close("was stopped: the session's log could not be written", turn_end, Some(notice), true);
    }

    /// The agent is gone (`description` says how): every request waiting on it is settled, a
    /// running turn ends as `turn_end`, and `notice` (if any) goes in the thread.
    /// `report_handshake` raises `Failed` when the handshake was still in flight.
    fn close(&mut self, description: &str, turn_end: TurnState, notice: Option<NoticeView>, report_handshake: bool) {
        let was_running = self.turn.in_flight.take().is_some() || self.turn.held.take().is_some();
        self.settle_waiting_writes(&format!("The agent {description}"));
        for (_, pending) in std::mem::take(&mut self.cards.waiting) {
            // Nobody is left to answer: the request is shown as cancelled.
            if let Some(tool_call) = self.facts_of(pending.tool_call) {
                self.audit(AuditEvent::Cancelled { tool_call, why: format!("the agent {description}") });
            }
            self.thread.update_tool_call(pending.tool_call, |call| {
                call.status = pending.status_before;
                if let Some(permission) = &mut call.permission {
                    permission.outcome = Some(PermissionOutcome::Cancelled);
                }
            });
        }
        self.emit_permission_count();
        // Nothing will finish what the agent left running: its cards say it was stopped rather
        // than going on showing it as starting or running.
        let unfinished: Vec<EntryIndex> = (0..self.thread.entries().len() as EntryIndex)
            .filter(|index| {
                self.thread.tool_call(*index).is_some_and(|call| {
                    matches!(
                        call.status,
                        ToolStatus::Pending | ToolStatus::InProgress | ToolStatus::WaitingForConfirmation
                    )
                })
            })
            .collect();
        for index in unfinished {
            self.thread.update_tool_call(index, |call| call.status = ToolStatus::Cancelled);
        }
        for (_, pending) in self.wire.rpc.drain() {
            if report_handshake
                && matches!(pending.tag, RequestKind::Initialize | RequestKind::NewSession | RequestKind::ForkSession)
            {
                self.events.push_back(AcpEvent::Failed { message: format!("the agent {description}") });
            }
        }
        if was_running {
            self.thread.set_turn(turn_end);
        }
        if let Some(notice) = notice {
            self.thread.push(Entry::Notice(notice));
        }
        // Nobody is left to answer them to.
        self.wire.requests_waiting.clear();
        self.wire.refusing = false;
        self.phase = Phase::Closed;
    }

    /// Expires requests whose deadline has passed. A handshake step that expires fails the
    /// session (there is none without it); a mode or config switch is settled as refused, and
    /// the session goes on.
    pub fn handle_timeout(&mut self, now: u64) {
        self.now = now;
        self.thread.set_now(now);
        for (id, pending) in self.wire.rpc.expire(now) {
            match pending.tag {
                RequestKind::SetAgentMode => {
                    self.wire.timed_out.insert(id);
                    self.modes.switches_in_flight = self.modes.switches_in_flight.saturating_sub(1);
                    let message = format!(
                        "the agent did not answer {} within {} s; Tether still applies {} mode itself",
                        pending.method,
                        CONTROL_TIMEOUT_MS / 1000,
                        self.policy.mode()
                    );
                    self.problem(message, None);
                }
                RequestKind::SetConfigOption => {
                    let message =
                        format!("the agent did not answer {} within {} s", pending.method, CONTROL_TIMEOUT_MS / 1000);
                    self.on_config_option_set(&id, Err(message));
                    self.wire.timed_out.insert(id);
                }
                _ => {
                    let message =
                        format!("the agent did not answer {} within {} s", pending.method, HANDSHAKE_TIMEOUT_MS / 1000);
                    self.fail(message);
                }
            }
        }
    }

    pub fn poll_timeout(&self) -> Option<u64> {
        self.wire.rpc.next_deadline()
    }

    /// The next line to write to the agent's stdin (without its newline).
    pub fn poll_outgoing(&mut self) -> Option<String> {
        self.wire.outgoing.pop_front()
    }

    pub fn poll_event(&mut self) -> Option<AcpEvent> {
        self.events.pop_front()
    }

    fn notice(&mut self, level: NoticeLevel, text: String) {
        self.thread.push(Entry::Notice(NoticeView { level, text, detail: None }));
    }

    fn fail(&mut self, message: String) {
        self.phase = Phase::Closed;
        self.thread.push(Entry::Notice(NoticeView {
            level: NoticeLevel::Error,
            text: format!("Could not start the agent session: {message}."),
            detail: None,
        }));
        self.events.push_back(AcpEvent::Failed { message });
    }

    /// A protocol problem the session survives: logged, and shown as a warning in the thread.
    fn problem(&mut self, message: String, detail: Option<&str>) {
        self.thread.push(Entry::Notice(NoticeView {
            level: NoticeLevel::Warning,
            text: capitalize(&message),
            detail: detail.map(str::to_owned),
        }));
        self.events.push_back(AcpEvent::ProtocolProblem { message });
    }
}

/// `text` with its first letter in upper case, for messages that start a sentence.
pub(crate) fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The name an ACP enum value has on the wire (`end_turn`, `in_progress`, `allow_once`, ...).
fn wire_name(value: &impl Serialize) -> String {
    match crate::json_value::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        _ => "unknown".to_owned(),
    }
}

fn describe_error(error: &RpcError) -> String {
    let code: i32 = error.code.into();
    // "Internal error" and its code say nothing a person can use; the words with it do.
    if error.code == RpcError::internal_error().code
        && let Some(serde_json::Value::String(data)) = &error.data
        && !data.trim().is_empty()
    {
        return data.clone();
    }
    match &error.data {
        Some(serde_json::Value::String(data)) => format!("{} ({data}) [{code}]", error.message),
        Some(data) => format!("{} ({data}) [{code}]", error.message),
        None => format!("{} [{code}]", error.message),
    }
}
