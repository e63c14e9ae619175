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

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use agent_client_protocol_schema::v1 as acp;
use serde::Serialize;
use serde_json::value::RawValue;

use crate::jsonrpc::{self, Message, Outgoing, RequestId, RpcError};
use crate::permissions::{
    AuditEvent, AuditRecord, AuditedToolCall, ChangedBy, DecidedBy, Mode, PermissionPolicy, RequestFacts, RequestPath,
    RuleDecision, RuleError, RuleId, RuleOrigin, RuleScope, RuleSpec, RuleView, Verdict, command_of, resolve_path,
};
use crate::review::preview_lines;
use crate::webview::{PromptAttachment, PromptCapabilitiesView};

mod auth;
mod fs;
mod links;
mod prompt_content;
mod replay;
mod session_state;
mod terminal;
use crate::sidecar::{BadLineKind, method};
use crate::thread::{
    ChunkKind, Entry, EntryIndex, Location, NoticeLevel, NoticeView, PermissionKey, PermissionOptionView,
    PermissionOutcome, PermissionView, PlanEntryView, Thread, ToolCallView, ToolContent, ToolStatus, TurnState,
    UserMessage,
};
pub use auth::{SecretEnv, SignIn, methods_for_profile, parse_auth_methods};
pub use prompt_content::{MAX_EMBEDDED_FILE_BYTES, MAX_IMAGE_BYTES};
pub use replay::LogReplay;
pub use terminal::TerminalCall;

/// The step budget for the diff of a tool call's card: tool calls are updated often, so a huge
/// diff degrades sooner than a review's.
const PREVIEW_BUDGET: tether_diff::Budget = tether_diff::Budget { max_steps: 200_000 };

/// How many approved commands wait for their `terminal/create` at most (see
/// [`AcpClient::remember_approved_command`]).
const MAX_APPROVED_COMMANDS: usize = 64;

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

/// A `session/request_permission` the person has not answered yet.
#[derive(Debug, Clone)]
struct PendingPermission {
    request_id: RequestId,
    tool_call: EntryIndex,
    /// The tool call's status before the request, restored once the request is answered (the
    /// agent reports the real outcome with its next update).
    status_before: ToolStatus,
    /// Set when Tether asks on its own behalf, for a request of the agent's that proceeds or
    /// fails by the answer.
    gate: Option<Gate>,
    /// The tool call's paths are being resolved: the rules and the mode cannot decide it yet
    /// (the person can).
    resolving: bool,
}

/// A request of the agent's held behind a card of Tether's own: the agent never sent a
/// permission request for it.
#[derive(Debug, Clone)]
enum Gate {
    /// `fs/read_text_file` of a file outside the workspace.
    Read(fs::ReadGate),
    /// `terminal/create` of a command no permission request approved.
    Run(terminal::RunGate),
}

/// How the agent lets a client switch its mode, when it does.
#[derive(Debug, Clone)]
enum AgentModes {
    /// `modes` in the `session/new` answer, switched with `session/set_mode`.
    SessionModes { current: String, available: Vec<(String, String)> },
    /// A select config option of category `mode`, switched with `session/set_config_option`.
    ConfigOption { config_id: String, current: String, available: Vec<(String, String)> },
}

impl AgentModes {
    fn current(&self) -> &str {
        match self {
            AgentModes::SessionModes { current, .. } | AgentModes::ConfigOption { current, .. } => current,
        }
    }

    fn set_current(&mut self, id: String) {
        match self {
            AgentModes::SessionModes { current, .. } | AgentModes::ConfigOption { current, .. } => *current = id,
        }
    }

    fn available(&self) -> &[(String, String)] {
        match self {
            AgentModes::SessionModes { available, .. } | AgentModes::ConfigOption { available, .. } => available,
        }
    }

    /// The agent's mode that means `mode`, matched on its id first, then its name.
    fn matching(&self, mode: Mode) -> Option<&str> {
        let available = self.available();
        available
            .iter()
            .find(|(id, _)| Mode::from_agent_mode(id) == Some(mode))
            .or_else(|| available.iter().find(|(_, name)| Mode::from_agent_mode(name) == Some(mode)))
            .map(|(id, _)| id.as_str())
    }

    /// The Tether mode the agent's mode `id` stands for.
    fn meaning(&self, id: &str) -> Option<Mode> {
        let name = self.available().iter().find(|(known, _)| known == id).map(|(_, name)| name.as_str());
        Mode::from_agent_mode(id).or_else(|| name.and_then(Mode::from_agent_mode))
    }

    fn current_name(&self) -> String {
        let current = self.current();
        self.available()
            .iter()
            .find(|(id, _)| id == current)
            .map_or_else(|| current.to_owned(), |(_, name)| name.clone())
    }
}

#[derive(Debug)]
pub struct AcpClient {
    info: ClientInfo,
    cwd: String,
    phase: Phase,
    rpc: Outgoing<RequestKind>,
    session_id: Option<acp::SessionId>,
    agent_info: Option<String>,
    thread: Thread,
    prompt_in_flight: Option<RequestId>,
    permissions: BTreeMap<PermissionKey, PendingPermission>,
    next_permission_key: PermissionKey,
    policy: PermissionPolicy,
    agent_modes: Option<AgentModes>,
    /// Mode switches sent to the agent and not yet answered. While any is in flight, a mode the
    /// agent reports is not followed: it may be the answer to an older switch.
    mode_switches_in_flight: u32,
    files: fs::Files,
    links: links::Links,
    terminals: terminal::Terminals,
    /// The commands of execute tool calls whose permission request was answered with an allow
    /// option in this turn and that no `terminal/create` has run yet (see
    /// [`AcpClient::take_approved_command`]).
    approved_commands: VecDeque<String>,
    /// The time of the input being handled.
    now: u64,
    /// Folding a session's log: the policy decides nothing (the log says what was decided).
    replaying: bool,
    /// The agent's session to resume instead of creating one (the thread already shows it).
    resume: Option<String>,
    /// While replaying: the agent's requests for files and terminals the log has not answered
    /// (yet), by id, as the agent sent them.
    unanswered: BTreeMap<RequestId, String>,
    /// The session being resumed is not in Tether's record (it comes from the agent's own list),
    /// so the history the agent replays while loading it is shown.
    show_resumed_history: bool,
    /// The agent offers `session/list` (`sessionCapabilities.list` in its `initialize` answer).
    can_list_sessions: bool,
    /// The agent offers `session/load` and `session/resume`.
    can_load: bool,
    can_resume: bool,
    controls: session_state::SessionControls,
    auth: auth::Authentication,
    outgoing: VecDeque<String>,
    events: VecDeque<AcpEvent>,
    /// The agent's requests not answered yet, by id; answers leave through
    /// [`AcpClient::push_outgoing`], which takes them out.
    agent_requests_waiting: BTreeSet<RequestId>,
    /// Requests beyond [`MAX_AGENT_REQUESTS_WAITING`] are being refused, and the thread has said
    /// so; it says so again for a later flood once every waiting request has been answered.
    refusing_requests: bool,
    /// The engine's mode and config switches that timed out: an answer that still comes is
    /// late, not an answer to a request never sent. One per switch the person made.
    timed_out: BTreeSet<RequestId>,
}

impl AcpClient {
    /// A client for an agent started in `cwd` (also the workspace root that rule paths are
    /// relative to), deciding permission requests by `policy`. Permission keys start at
    /// `first_permission_key`, so a host that replaces its client never reuses a key a stale
    /// webview might still send.
    pub fn new(
        info: ClientInfo,
        cwd: impl Into<String>,
        first_permission_key: PermissionKey,
        policy: PermissionPolicy,
    ) -> Self {
        AcpClient {
            info,
            cwd: cwd.into(),
            phase: Phase::New,
            rpc: Outgoing::new(),
            session_id: None,
            agent_info: None,
            thread: Thread::default(),
            prompt_in_flight: None,
            permissions: BTreeMap::new(),
            next_permission_key: first_permission_key,
            policy,
            agent_modes: None,
            mode_switches_in_flight: 0,
            files: fs::Files::new(first_permission_key),
            links: links::Links::new(first_permission_key),
            terminals: terminal::Terminals::default(),
            approved_commands: VecDeque::new(),
            now: 0,
            replaying: false,
            resume: None,
            unanswered: BTreeMap::new(),
            show_resumed_history: false,
            can_list_sessions: false,
            can_load: false,
            can_resume: false,
            controls: session_state::SessionControls::default(),
            auth: auth::Authentication::default(),
            outgoing: VecDeque::new(),
            events: VecDeque::new(),
            agent_requests_waiting: BTreeSet::new(),
            refusing_requests: false,
            timed_out: BTreeSet::new(),
        }
    }

    pub fn thread(&self) -> &Thread {
        &self.thread
    }

    pub fn thread_mut(&mut self) -> &mut Thread {
        &mut self.thread
    }

    pub fn agent_info(&self) -> Option<&str> {
        self.agent_info.as_deref()
    }

    pub fn is_ready(&self) -> bool {
        self.phase == Phase::Ready
    }

    /// The agent has exited (or never will answer again): only a new agent can go on.
    pub fn is_closed(&self) -> bool {
        self.phase == Phase::Closed
    }

    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_ref().map(|id| &*id.0)
    }

    pub fn policy(&self) -> &PermissionPolicy {
        &self.policy
    }

    /// The name of the agent's own current mode, when it has modes.
    pub fn agent_mode(&self) -> Option<String> {
        self.agent_modes.as_ref().map(AgentModes::current_name)
    }

    /// The agent's own modes (id, name), and the id of the current one, when it has modes.
    pub fn agent_mode_choices(&self) -> (Vec<(String, String)>, Option<String>) {
        match &self.agent_modes {
            Some(modes) => (modes.available().to_vec(), Some(modes.current().to_owned())),
            None => (Vec::new(), None),
        }
    }

    /// The person picked the agent's own mode `id`. One that means one of Tether's modes switches
    /// Tether's mode too (and the agent with it), so the two never disagree; any other (Claude's
    /// "Don't Ask") is sent to the agent as it is and leaves Tether's mode alone.
    pub fn set_agent_mode(&mut self, id: &str, now: u64) -> Result<(), IntentError> {
        self.now = now;
        let Some(modes) = &self.agent_modes else { return Err(IntentError::NotReady) };
        if !modes.available().iter().any(|(known, _)| known == id) {
            return Err(IntentError::UnknownOption(id.to_owned()));
        }
        if self.phase != Phase::Ready {
            return Err(IntentError::NotReady);
        }
        match modes.meaning(id) {
            Some(mode) if mode != self.policy.mode() => {
                self.switch_mode(mode);
                // The agent may have two modes of one meaning: the one picked is the one asked.
                self.switch_agent_mode(id.to_owned());
            }
            _ => self.switch_agent_mode(id.to_owned()),
        }
        Ok(())
    }

    /// The person chose a mode in the header: applied now (requests waiting are put to it again)
    /// and sent to the agent when it has a mode that means the same.
    pub fn set_mode(&mut self, mode: Mode, now: u64) {
        self.now = now;
        self.switch_mode(mode);
    }

    /// Applies `mode` (see [`AcpClient::set_mode`]) at the time of the input being handled.
    fn switch_mode(&mut self, mode: Mode) {
        let from = self.policy.mode();
        if from == mode {
            return;
        }
        self.policy.set_mode(mode);
        self.audit(AuditEvent::ModeChanged { from, to: mode, by: ChangedBy::Person });
        self.events.push_back(AcpEvent::PolicyChanged);
        self.send_mode_to_agent();
        self.reevaluate_waiting();
    }

    /// Adds a rule from the rules panel (or the settings, for the workspace scope).
    pub fn add_rule(&mut self, spec: RuleSpec, scope: RuleScope) -> Result<RuleView, IntentError> {
        let rule = self.policy.add_rule(spec, scope, RuleOrigin::Added)?;
        self.audit(AuditEvent::RuleAdded { rule: rule.clone() });
        self.events.push_back(AcpEvent::PolicyChanged);
        self.reevaluate_waiting();
        Ok(rule)
    }

    pub fn remove_rule(&mut self, id: RuleId) -> Result<RuleView, IntentError> {
        let rule = self.policy.remove_rule(id).ok_or(IntentError::UnknownRule)?;
        self.audit(AuditEvent::RuleRemoved { rule: rule.clone() });
        self.events.push_back(AcpEvent::PolicyChanged);
        Ok(rule)
    }

    /// Removes every rule of `scope`.
    pub fn clear_rules(&mut self, scope: RuleScope) {
        let removed: Vec<RuleView> = self.policy.rules().into_iter().filter(|rule| rule.scope == scope).collect();
        self.policy.clear(scope);
        for rule in removed {
            self.audit(AuditEvent::RuleRemoved { rule });
        }
        self.events.push_back(AcpEvent::PolicyChanged);
    }

    /// Saves a session rule to the workspace.
    pub fn keep_rule_for_workspace(&mut self, id: RuleId) -> Result<RuleView, IntentError> {
        let rule = self.policy.keep_for_workspace(id).ok_or(IntentError::UnknownRule)?;
        self.audit(AuditEvent::RuleKept { rule: rule.clone() });
        self.events.push_back(AcpEvent::PolicyChanged);
        Ok(rule)
    }

    /// The workspace rules as the settings now say.
    pub fn set_workspace_rules(&mut self, specs: Vec<RuleSpec>) {
        self.policy.set_workspace_rules(specs);
        self.events.push_back(AcpEvent::PolicyChanged);
        self.reevaluate_waiting();
    }

    /// Asks for the agent's session `agent_session_id` to be resumed, once the agent is
    /// initialized, instead of a new one: with `session/load` when the agent offers it, else
    /// `session/resume`, else (or when that fails) a new session, with a notice saying that the
    /// conversation shown is Tether's record and the agent starts afresh. Call before `start`.
    pub fn resume_session(&mut self, agent_session_id: String) {
        self.resume = Some(agent_session_id);
    }

    /// Like [`AcpClient::resume_session`], for a session Tether has no record of (one from the
    /// agent's own list): the history the agent replays while loading it is shown.
    pub fn resume_agent_session(&mut self, agent_session_id: String) {
        self.resume = Some(agent_session_id);
        self.show_resumed_history = true;
    }

    /// Asks the agent for its sessions of this workspace when it offers `session/list`; the
    /// answer comes as [`AcpEvent::AgentSessions`]. Returns whether it was asked.
    pub fn list_agent_sessions(&mut self, now: u64) -> bool {
        if !self.can_list_sessions || matches!(self.phase, Phase::New | Phase::Initializing | Phase::Closed) {
            return false;
        }
        let params = acp::ListSessionsRequest::new().cwd(std::path::PathBuf::from(&self.cwd));
        self.send_request("session/list", &params, RequestKind::ListSessions, Some(now + HANDSHAKE_TIMEOUT_MS));
        true
    }

    /// Makes the client ready for a new agent process that goes on with this thread: Restart
    /// after the agent exited, or a session reopened from its log. What the earlier agent left
    /// unfinished is closed first, as if it had exited (its turn fails, its questions are
    /// cancelled, its commands are marked lost). The thread, the policy and the request ids
    /// (which keep counting, so that a log never holds two requests with one id) stay. The
    /// agent's session is resumed: call `start` next.
    pub fn prepare_new_agent(&mut self, now: u64) {
        if self.phase != Phase::Closed {
            self.handle_exited("was no longer running when Tether came back", false, "");
        }
        self.terminals_lost("its agent is gone", now);
        self.unanswered.clear();
        self.agent_modes = None;
        self.mode_switches_in_flight = 0;
        self.controls.forget_agent();
        self.events.push_back(AcpEvent::ControlsChanged);
        self.resume = self.session_id.as_ref().map(|id| id.0.to_string());
        self.phase = Phase::New;
    }

    /// Sends `initialize`; `session/new` follows when it succeeds.
    pub fn start(&mut self, now: u64) {
        if self.phase != Phase::New {
            return;
        }
        // `_meta.terminal_output` (Claude's adapter) and `terminal_output_delta` (Codex's) ask an
        // agent that runs commands itself to stream their output on its tool calls.
        // `_meta["terminal-auth"]` asks Claude's adapter for a login run in a terminal (see `auth`).
        let mut meta = serde_json::Map::new();
        meta.insert("terminal-auth".to_owned(), serde_json::Value::Bool(true));
        meta.insert("terminal_output".to_owned(), serde_json::Value::Bool(true));
        meta.insert("terminal_output_delta".to_owned(), serde_json::Value::Bool(true));
        // Notices and compaction are shown in the thread, boolean options as checkboxes.
        let session = acp::ClientSessionCapabilities::new()
            .notices(acp::NoticeCapabilities::new())
            .compaction(acp::CompactionCapabilities::new())
            .config_options(
                acp::SessionConfigOptionsCapabilities::new().boolean(acp::BooleanConfigOptionCapabilities::new()),
            );
        let capabilities = acp::ClientCapabilities::new()
            .fs(acp::FileSystemCapabilities::new().read_text_file(true).write_text_file(true))
            .terminal(true)
            // The host runs a terminal login in a VS Code terminal with the agent's own command.
            .auth(acp::AuthCapabilities::new().terminal(true))
            .session(session)
            .meta(meta);
        let params = acp::InitializeRequest::new(agent_client_protocol_schema::ProtocolVersion::V1)
            .client_capabilities(capabilities)
            .client_info(acp::Implementation::new(self.info.name.clone(), self.info.version.clone()));
        self.send_request("initialize", &params, RequestKind::Initialize, Some(now + HANDSHAKE_TIMEOUT_MS));
        self.phase = Phase::Initializing;
    }

    /// Sends the person's prompt and starts a turn: its text, then what it attaches (see
    /// [`prompt_content`]). The prompt waits for the turn's snapshot and for the mentioned files
    /// it embeds to be read.
    pub fn prompt(&mut self, text: &str, attachments: &[PromptAttachment], _now: u64) -> Result<(), IntentError> {
        if self.phase == Phase::SigningIn {
            // The person dismissed the sign-in (or a login did not finish): this prompt waits for
            // the sign-in it asks for again.
            return self.hold_prompt_for_sign_in(text, attachments);
        }
        let Some(session_id) = self.session_id.clone().filter(|_| self.phase == Phase::Ready) else {
            return Err(IntentError::NotReady);
        };
        if self.prompt_in_flight.is_some() {
            return Err(IntentError::TurnRunning);
        }
        if self.files.held_prompt.is_some() {
            return Err(IntentError::TurnRunning);
        }
        let (blocks, reads) = prompt_content::prompt_blocks(text, attachments, self.controls.view.prompt, &self.cwd)?;
        self.start_turn_files();
        self.remember_prompt(text, attachments);
        self.thread.push(Entry::User(prompt_content::user_message(&blocks, &self.cwd)));
        self.thread.set_turn(TurnState::Running);
        self.files.prompt_serial += 1;
        let serial = self.files.prompt_serial;
        self.files.held_prompt = Some(prompt_content::HeldPrompt {
            serial,
            session_id,
            blocks,
            // The prompt leaves once the workspace is snapshotted, so that every edit the agent
            // makes by itself can be found and reverted.
            snapshot_pending: self.wants_snapshot(),
            reads_pending: reads.len(),
            notices: Vec::new(),
        });
        if self.wants_snapshot() {
            self.events.push_back(AcpEvent::TakeSnapshot);
        }
        for (block, path) in reads {
            self.resolve_then(vec![path.clone()], links::Waiting::Mention { prompt: serial, block, path });
        }
        self.send_held_prompt_if_ready();
        Ok(())
    }

    /// Sends the held prompt once nothing it waits for is missing.
    fn send_held_prompt_if_ready(&mut self) {
        if !self.files.held_prompt.as_ref().is_some_and(prompt_content::HeldPrompt::ready) {
            return;
        }
        let Some(held) = self.files.held_prompt.take() else { return };
        let (request, notices) = held.into_request();
        // A turn has no deadline: agents legitimately work for many minutes.
        let id = self.send_request("session/prompt", &request, RequestKind::Prompt, None);
        self.prompt_in_flight = Some(id);
        for text in notices {
            self.notice(NoticeLevel::Warning, text.clone());
            // The wire does not say why a file went as a link; the log must.
            self.audit(AuditEvent::Notice { level: NoticeLevel::Warning, text });
        }
    }

    /// A file the held prompt mentions was resolved: it is read from where it leads, unless that
    /// is outside the workspace. The person picked the file from the workspace's list, but not
    /// its target: a link out of the workspace goes as a link (the agent's read of it then asks),
    /// never with the content of a file the person did not see.
    fn mention_resolved(&mut self, prompt: u64, block: usize, path: String) {
        let target = self.target(&path);
        if !target.is_outside() {
            self.read_mention(prompt, block, path, target.leads_to);
            return;
        }
        let shown = target.shown(&self.cwd);
        self.mention_done(
            prompt,
            block,
            Err(format!("{shown} was sent as a link, not its content: it leads outside the workspace.")),
        );
    }

    /// A file the held prompt mentions was read (or could not be).
    fn on_mention_read(&mut self, prompt: u64, block: usize, path: &str, read: Result<Option<String>, String>) {
        let shown = crate::mentions::display_path(path, &self.cwd);
        self.mention_done(prompt, block, prompt_content::embed_file(path, &shown, read));
    }

    /// A mentioned file's block is settled: embedded, or left a link for the reason given (shown
    /// once the prompt has gone).
    fn mention_done(&mut self, prompt: u64, block: usize, embedded: Result<acp::ContentBlock, String>) {
        let Some(held) = self.files.held_prompt.as_mut().filter(|held| held.serial == prompt) else {
            // The prompt was cancelled before its files were read.
            return;
        };
        held.reads_pending -= 1;
        match embedded {
            Ok(embedded) => {
                if let Some(slot) = held.blocks.get_mut(block) {
                    *slot = embedded;
                }
            }
            Err(why) => held.notices.push(why),
        }
        self.send_held_prompt_if_ready();
    }

    /// Asks the agent to stop the running turn. The turn ends when the agent answers the prompt
    /// (with stop reason `cancelled`); every permission request still waiting is answered
    /// `cancelled` now, as ACP requires.
    pub fn cancel(&mut self, _now: u64) {
        if let Some(held) = self.files.held_prompt.take() {
            // The prompt never left: the turn ends here, and only the log's record tells a
            // replay that it was asked.
            self.thread.set_turn(TurnState::ended(acp::StopReason::Cancelled));
            let (request, _) = held.into_request();
            self.audit(AuditEvent::PromptCancelled {
                prompt: serde_json::to_value(&request.prompt).unwrap_or_default(),
            });
            return;
        }
        let (Some(session_id), Some(_)) = (self.session_id.clone(), &self.prompt_in_flight) else {
            return;
        };
        self.send_notification("session/cancel", &acp::CancelNotification::new(session_id));
        self.cancel_waiting("the person cancelled the turn");
        self.settle_waiting_writes("The turn was cancelled");
    }

    /// The person chose `option_id` on the permission request `key`.
    pub fn answer_permission(&mut self, key: PermissionKey, option_id: &str) -> Result<(), IntentError> {
        let pending = self.permissions.get(&key).ok_or(IntentError::UnknownPermission)?;
        let pending = pending.clone();
        let offered = self
            .thread
            .tool_call(pending.tool_call)
            .and_then(|call| call.permission.as_ref())
            .and_then(|permission| permission.options.iter().find(|option| option.id == option_id))
            .cloned();
        let Some(option) = offered else {
            return Err(IntentError::UnknownOption(option_id.to_owned()));
        };
        let facts = self.facts_of(pending.tool_call);
        if let Some(facts) = &facts {
            self.audit(AuditEvent::Answered { tool_call: facts.clone(), option: option.clone() });
        }
        self.resolve_permission(key, PermissionOutcome::Selected { option_id: option_id.to_owned() }, None);
        // An "always" choice is remembered as a session rule, which then answers every request
        // still waiting that it matches.
        let decision = match option.kind.as_str() {
            "allow_always" => Some(RuleDecision::Allow),
            "reject_always" => Some(RuleDecision::Deny),
            _ => None,
        };
        if let (Some(decision), Some(facts)) = (decision, facts) {
            let spec = RuleSpec::from_choice(decision, &facts.facts);
            let origin = RuleOrigin::Chosen { option: option.name.clone(), tool_title: facts.facts.title.clone() };
            match self.policy.add_rule(spec, RuleScope::Session, origin) {
                Ok(rule) => {
                    self.audit(AuditEvent::RuleAdded { rule });
                    self.events.push_back(AcpEvent::PolicyChanged);
                    self.reevaluate_waiting();
                }
                // Cannot happen for a rule built from a request (it always has a kind), but a
                // rule that cannot be made only means the next request asks again.
                Err(error) => self.events.push_back(AcpEvent::ProtocolProblem {
                    message: format!("could not remember the choice as a rule: {error}"),
                }),
            }
        }
        Ok(())
    }

    /// One complete line from the agent's stdout that tetherd found to be JSON.
    pub fn handle_message(&mut self, line: &str, now: u64) {
        self.now = now;
        let message = match jsonrpc::parse_message(line) {
            Ok(message) => message,
            Err(error) => {
                let rpc_error = error.to_rpc_error();
                self.push_outgoing(jsonrpc::encode_error(&error.response_id(), &rpc_error));
                self.problem(format!("the agent sent an invalid message: {error}"), Some(line));
                return;
            }
        };
        match message {
            Message::Response { id, result } => self.handle_response(id, result, now),
            Message::Request { id, method, params } => self.handle_request(id, &method, params),
            Message::Notification { method, params } => self.handle_notification(&method, params),
        }
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
        self.problem(
            format!("the agent printed {what} ({len} bytes); it was skipped"),
            Some(&format!("{error}\n\n{preview}")),
        );
    }

    /// The agent process ended. `stderr_tail` is what it last printed on stderr.
    pub fn handle_exited(&mut self, description: &str, killed: bool, stderr_tail: &str) {
        if self.phase == Phase::Closed && killed {
            return;
        }
        let how = if killed { "was stopped" } else { description };
        let turn_end = TurnState::Failed { message: format!("the agent {how} during the turn") };
        let (level, text) = if killed {
            // Stopped on purpose (a new session, Tether closing): how the process ended is noise.
            (NoticeLevel::Info, "The agent was stopped.".to_owned())
        } else {
            (NoticeLevel::Error, format!("The agent {description}."))
        };
        let detail = (!stderr_tail.is_empty()).then(|| stderr_tail.to_owned());
        // Stopped while it waited for a sign-in, it is being started again to sign in (or the
        // person left the session): what the sign-in comes to follows, and "stopped" reads as a
        // failure.
        let notice = (!(killed && self.phase == Phase::SigningIn)).then_some(NoticeView { level, text, detail });
        self.close(description, turn_end, notice, true);
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
        let was_running = self.prompt_in_flight.take().is_some() || self.files.held_prompt.take().is_some();
        self.settle_waiting_writes(&format!("The agent {description}"));
        for (_, pending) in std::mem::take(&mut self.permissions) {
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
        for (_, pending) in self.rpc.drain() {
            if report_handshake && matches!(pending.tag, RequestKind::Initialize | RequestKind::NewSession) {
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
        self.agent_requests_waiting.clear();
        self.refusing_requests = false;
        self.phase = Phase::Closed;
    }

    /// Expires requests whose deadline has passed. A handshake step that expires fails the
    /// session (there is none without it); a mode or config switch is settled as refused, and
    /// the session goes on.
    pub fn handle_timeout(&mut self, now: u64) {
        self.now = now;
        for (id, pending) in self.rpc.expire(now) {
            match pending.tag {
                RequestKind::SetAgentMode => {
                    self.timed_out.insert(id);
                    self.mode_switches_in_flight = self.mode_switches_in_flight.saturating_sub(1);
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
                    self.timed_out.insert(id);
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
        self.rpc.next_deadline()
    }

    /// The next line to write to the agent's stdin (without its newline).
    pub fn poll_outgoing(&mut self) -> Option<String> {
        self.outgoing.pop_front()
    }

    pub fn poll_event(&mut self) -> Option<AcpEvent> {
        self.events.pop_front()
    }

    pub fn permissions_waiting(&self) -> u32 {
        self.permissions.len() as u32
    }

    fn handle_response(&mut self, id: RequestId, result: Result<&RawValue, RpcError>, now: u64) {
        let Some(pending) = self.rpc.take(&id) else {
            if !self.timed_out.remove(&id) {
                self.problem(format!("the agent answered a request Tether never sent (id {id})"), None);
            }
            return;
        };
        match (pending.tag, result) {
            (RequestKind::Initialize, Ok(result)) => self.on_initialized(result, now),
            (RequestKind::ResumeSession, result) => self.on_session_resumed(result, now),
            (RequestKind::ListSessions, result) => {
                let sessions = result.map_err(|error| describe_error(&error)).and_then(|raw| {
                    serde_json::from_str::<acp::ListSessionsResponse>(raw.get())
                        .map_err(|error| format!("the agent's answer to session/list is malformed: {error}"))
                });
                let sessions = sessions.map(|response| {
                    response
                        .sessions
                        .into_iter()
                        .map(|info| AgentSession {
                            session_id: info.session_id.0.to_string(),
                            title: info.title,
                            updated_at: info.updated_at,
                        })
                        .collect()
                });
                self.events.push_back(AcpEvent::AgentSessions(sessions));
            }
            (RequestKind::Unknown, _) => {}
            (RequestKind::SetConfigOption, result) => {
                self.on_config_option_set(&id, result.map_err(|error| describe_error(&error)));
            }
            (RequestKind::NewSession, Ok(result)) => self.on_session_created(result, now),
            (RequestKind::Authenticate, result) => self.on_authenticated(result.map(|_| ()), now),
            (RequestKind::NewSession, Err(error)) if auth::is_auth_required(&error) => {
                self.on_auth_required(&error, false);
            }
            (RequestKind::Prompt, Ok(result)) => {
                self.prompt_in_flight = None;
                match serde_json::from_str::<acp::PromptResponse>(result.get()) {
                    Ok(response) => {
                        self.thread.set_turn(TurnState::ended(response.stop_reason));
                    }
                    Err(error) => {
                        self.thread.set_turn(TurnState::Failed {
                            message: format!("the agent's answer to the prompt is malformed: {error}"),
                        });
                    }
                }
                self.clear_stale_permissions();
                self.end_turn_files();
            }
            (RequestKind::SetAgentMode, result) => {
                self.mode_switches_in_flight = self.mode_switches_in_flight.saturating_sub(1);
                if let Err(error) = result {
                    self.problem(
                        format!(
                            "the agent refused to switch its own mode ({}); Tether still applies {} mode itself",
                            describe_error(&error),
                            self.policy.mode()
                        ),
                        None,
                    );
                }
            }
            (RequestKind::Initialize | RequestKind::NewSession, Err(error)) => {
                self.fail(format!("{} failed: {}", pending.method, describe_error(&error)));
            }
            (RequestKind::Prompt, Err(error)) => {
                self.prompt_in_flight = None;
                if auth::is_auth_required(&error) {
                    self.on_auth_required(&error, true);
                } else {
                    self.thread.set_turn(TurnState::Failed { message: describe_error(&error) });
                }
                self.clear_stale_permissions();
                self.end_turn_files();
            }
        }
    }

    fn on_initialized(&mut self, result: &RawValue, now: u64) {
        let response = match serde_json::from_str::<acp::InitializeResponse>(result.get()) {
            Ok(response) => response,
            Err(error) => return self.fail(format!("the agent's answer to initialize is malformed: {error}")),
        };
        if response.protocol_version != agent_client_protocol_schema::ProtocolVersion::V1 {
            return self.fail(format!(
                "the agent speaks ACP version {}; Tether speaks version {PROTOCOL_VERSION}",
                response.protocol_version
            ));
        }
        self.agent_info = response.agent_info.map(|info| {
            let name = info.title.unwrap_or(info.name);
            format!("{name} {}", info.version)
        });
        self.events.push_back(AcpEvent::Initialized { agent: self.agent_info.clone() });
        let capabilities = serde_json::from_str::<serde_json::Value>(result.get()).unwrap_or_default();
        let session_capabilities = &capabilities["agentCapabilities"]["sessionCapabilities"];
        self.can_resume = !session_capabilities["resume"].is_null();
        self.can_load = response.agent_capabilities.load_session;
        self.can_list_sessions = !session_capabilities["list"].is_null();
        let prompt = &response.agent_capabilities.prompt_capabilities;
        self.controls.view.prompt =
            PromptCapabilitiesView { image: prompt.image, embedded_context: prompt.embedded_context };
        self.events.push_back(AcpEvent::ControlsChanged);
        self.on_auth_methods(&capabilities);
        if self.sign_in_on_initialize() {
            // The session is opened once the agent has accepted the sign-in.
            return;
        }
        self.open_session(now);
    }

    /// Resumes the agent's session when asked to, else creates one.
    fn open_session(&mut self, now: u64) {
        match self.resume.clone() {
            Some(target) if self.can_load => {
                let params = acp::LoadSessionRequest::new(target, self.cwd.clone()).mcp_servers(Vec::new());
                self.send_request(
                    "session/load",
                    &params,
                    RequestKind::ResumeSession,
                    Some(now + HANDSHAKE_TIMEOUT_MS),
                );
                self.phase = Phase::ResumingSession;
            }
            Some(target) if self.can_resume => {
                let params = acp::ResumeSessionRequest::new(target, self.cwd.clone());
                self.send_request(
                    "session/resume",
                    &params,
                    RequestKind::ResumeSession,
                    Some(now + HANDSHAKE_TIMEOUT_MS),
                );
                self.phase = Phase::ResumingSession;
            }
            Some(_) => {
                self.resume = None;
                let text = "This agent cannot resume an earlier session: it starts a new one. The conversation above \
                            is Tether's record; the agent does not remember it.";
                self.notice(NoticeLevel::Info, text.to_owned());
                // The wire does not say why a new session was started; the log must.
                self.audit(AuditEvent::Notice { level: NoticeLevel::Info, text: text.to_owned() });
                self.new_session(now);
            }
            None => self.new_session(now),
        }
    }

    fn new_session(&mut self, now: u64) {
        let params = acp::NewSessionRequest::new(self.cwd.clone()).mcp_servers(Vec::new());
        self.send_request("session/new", &params, RequestKind::NewSession, Some(now + HANDSHAKE_TIMEOUT_MS));
        self.phase = Phase::CreatingSession;
    }

    fn notice(&mut self, level: NoticeLevel, text: String) {
        self.thread.push(Entry::Notice(NoticeView { level, text, detail: None }));
    }

    /// The agent answered `session/load` or `session/resume`.
    fn on_session_resumed(&mut self, result: Result<&RawValue, RpcError>, now: u64) {
        let Some(target) = self.resume.take() else { return };
        self.show_resumed_history = false;
        match result {
            Ok(result) => {
                // Both answers carry the session's modes and config options like `session/new`.
                let response: serde_json::Value = serde_json::from_str(result.get()).unwrap_or_default();
                let modes = serde_json::from_value::<acp::SessionModeState>(response["modes"].clone()).ok();
                let options =
                    serde_json::from_value::<Vec<acp::SessionConfigOption>>(response["configOptions"].clone()).ok();
                self.session_id = Some(acp::SessionId::new(target.clone()));
                self.phase = Phase::Ready;
                self.agent_modes = agent_modes(modes, options.as_deref());
                self.on_config_options(options.as_deref().unwrap_or_default());
                self.on_legacy_models(&response["models"]);
                self.notice(NoticeLevel::Info, "The agent resumed this session.".to_owned());
                self.events.push_back(AcpEvent::SessionReady { session_id: target });
                if self.agent_modes.is_some() {
                    self.events.push_back(AcpEvent::PolicyChanged);
                    self.send_mode_to_agent();
                }
                self.after_session_ready(now);
            }
            Err(error) => {
                self.notice(
                    NoticeLevel::Warning,
                    format!(
                        "The agent could not resume the earlier session ({}): it starts a new one. The conversation \
                         above is Tether's record; the agent does not remember it.",
                        describe_error(&error)
                    ),
                );
                self.new_session(now);
            }
        }
    }

    fn on_session_created(&mut self, result: &RawValue, now: u64) {
        match serde_json::from_str::<acp::NewSessionResponse>(result.get()) {
            Ok(response) => {
                let session_id = response.session_id.0.to_string();
                self.session_id = Some(response.session_id);
                self.phase = Phase::Ready;
                self.agent_modes = agent_modes(response.modes, response.config_options.as_deref());
                self.on_config_options(response.config_options.as_deref().unwrap_or_default());
                let raw: serde_json::Value = serde_json::from_str(result.get()).unwrap_or_default();
                self.on_legacy_models(&raw["models"]);
                self.events.push_back(AcpEvent::SessionReady { session_id });
                if self.agent_modes.is_some() {
                    self.events.push_back(AcpEvent::PolicyChanged);
                    // A mode chosen before the session existed (or the default from settings)
                    // reaches the agent now.
                    self.send_mode_to_agent();
                }
                self.after_session_ready(now);
            }
            Err(error) => self.fail(format!("the agent's answer to session/new is malformed: {error}")),
        }
    }

    fn handle_request(&mut self, id: RequestId, method: &str, params: Option<&RawValue>) {
        // A log being folded holds what was answered then; nothing is refused now.
        if !self.replaying && self.agent_requests_waiting.len() >= MAX_AGENT_REQUESTS_WAITING {
            self.refuse_over_limit(&id, method);
            return;
        }
        self.agent_requests_waiting.insert(id.clone());
        match method {
            "session/request_permission" => match jsonrpc::parse_params::<acp::RequestPermissionRequest>(params) {
                Ok(request) => self.on_permission_request(id, request),
                Err(error) => {
                    self.problem(format!("the agent sent an invalid permission request: {}", error.message), None);
                    self.push_outgoing(jsonrpc::encode_error(&id, &error));
                }
            },
            "fs/read_text_file" => match jsonrpc::parse_params::<acp::ReadTextFileRequest>(params) {
                Ok(request) => self.on_read_request(id, request),
                Err(error) => self.push_outgoing(jsonrpc::encode_error(&id, &error)),
            },
            "fs/write_text_file" => match jsonrpc::parse_params::<acp::WriteTextFileRequest>(params) {
                Ok(request) => self.on_write_request(id, request),
                Err(error) => self.push_outgoing(jsonrpc::encode_error(&id, &error)),
            },
            "terminal/create" => match jsonrpc::parse_params::<acp::CreateTerminalRequest>(params) {
                Ok(request) => self.on_create_terminal(id, request),
                Err(error) => self.push_outgoing(jsonrpc::encode_error(&id, &error)),
            },
            "terminal/output" => match jsonrpc::parse_params::<acp::TerminalOutputRequest>(params) {
                Ok(request) => {
                    self.on_terminal_request(id, method::TERMINAL_OUTPUT, &request.session_id, &request.terminal_id)
                }
                Err(error) => self.push_outgoing(jsonrpc::encode_error(&id, &error)),
            },
            "terminal/wait_for_exit" => match jsonrpc::parse_params::<acp::WaitForTerminalExitRequest>(params) {
                Ok(request) => self.on_terminal_request(
                    id,
                    method::TERMINAL_WAIT_FOR_EXIT,
                    &request.session_id,
                    &request.terminal_id,
                ),
                Err(error) => self.push_outgoing(jsonrpc::encode_error(&id, &error)),
            },
            "terminal/kill" => match jsonrpc::parse_params::<acp::KillTerminalRequest>(params) {
                Ok(request) => {
                    self.on_terminal_request(id, method::TERMINAL_KILL, &request.session_id, &request.terminal_id)
                }
                Err(error) => self.push_outgoing(jsonrpc::encode_error(&id, &error)),
            },
            "terminal/release" => match jsonrpc::parse_params::<acp::ReleaseTerminalRequest>(params) {
                Ok(request) => {
                    self.on_terminal_request(id, method::TERMINAL_RELEASE, &request.session_id, &request.terminal_id)
                }
                Err(error) => self.push_outgoing(jsonrpc::encode_error(&id, &error)),
            },
            _ => {
                let error = RpcError::method_not_found()
                    .data(serde_json::Value::String(format!("Tether does not offer {method}")));
                self.push_outgoing(jsonrpc::encode_error(&id, &error));
                self.events.push_back(AcpEvent::ProtocolProblem {
                    message: format!("the agent called {method}, which Tether does not offer"),
                });
            }
        }
    }

    /// Answers a request of the agent's that finds [`MAX_AGENT_REQUESTS_WAITING`] already
    /// waiting: an error now, rather than one more thing to hold.
    fn refuse_over_limit(&mut self, id: &RequestId, method: &str) {
        let error = RpcError::internal_error().data(serde_json::Value::String(format!(
            "Tether already has {MAX_AGENT_REQUESTS_WAITING} requests of this agent waiting for an answer; \
             this {method} is refused, send it again once some are answered"
        )));
        self.push_outgoing(jsonrpc::encode_error(id, &error));
        if !self.refusing_requests {
            self.refusing_requests = true;
            self.problem(
                format!(
                    "the agent sent more than {MAX_AGENT_REQUESTS_WAITING} requests that wait for an answer; \
                     the ones beyond are refused with an error until those are answered"
                ),
                None,
            );
        }
    }

    /// Queues a line for the agent. An answer to one of the agent's requests stops it waiting.
    fn push_outgoing(&mut self, line: String) {
        if !self.agent_requests_waiting.is_empty()
            && let Some(id) = jsonrpc::response_id(&line)
        {
            self.answered_agent_request(&id);
        }
        self.outgoing.push_back(line);
    }

    fn answered_agent_request(&mut self, id: &RequestId) {
        self.agent_requests_waiting.remove(id);
        if self.agent_requests_waiting.is_empty() {
            self.refusing_requests = false;
        }
    }

    fn handle_notification(&mut self, method: &str, params: Option<&RawValue>) {
        match method {
            "session/update" => match jsonrpc::parse_params::<acp::SessionNotification>(params) {
                Ok(notification) => {
                    if self.phase == Phase::ResumingSession
                        && self.resume.as_deref() == Some(&*notification.session_id.0)
                    {
                        // The agent replays the session's history: the thread has it already,
                        // unless the session is one Tether has no record of. The session's state
                        // (commands, options, title, usage) is taken either way.
                        if self.show_resumed_history {
                            self.on_session_update(notification.update);
                            return;
                        }
                        match notification.update {
                            update @ (acp::SessionUpdate::AvailableCommandsUpdate(_)
                            | acp::SessionUpdate::SessionInfoUpdate(_)
                            | acp::SessionUpdate::UsageUpdate(_)) => {
                                self.on_session_state_update(update);
                            }
                            acp::SessionUpdate::ConfigOptionUpdate(update) => {
                                self.on_config_options(&update.config_options);
                            }
                            _ => {}
                        }
                        return;
                    }
                    if self.session_id.as_ref() != Some(&notification.session_id) {
                        self.events.push_back(AcpEvent::ProtocolProblem {
                            message: format!("an update for unknown session {} was ignored", notification.session_id.0),
                        });
                        return;
                    }
                    self.on_session_update(notification.update);
                }
                Err(error) => {
                    self.problem(format!("the agent sent an invalid session/update: {}", error.message), None)
                }
            },
            "$/cancel_request" => {
                #[derive(serde::Deserialize)]
                #[serde(rename_all = "camelCase")]
                struct CancelRequest {
                    request_id: RequestId,
                }
                if let Ok(cancel) = jsonrpc::parse_params::<CancelRequest>(params) {
                    let key = self
                        .permissions
                        .iter()
                        .find(|(_, pending)| pending.request_id == cancel.request_id)
                        .map(|(key, _)| *key);
                    if let Some(key) = key {
                        self.withdraw_permission(key);
                    }
                }
            }
            // Other notifications (extensions, newer protocol features) are legal to ignore.
            _ => {}
        }
    }

    fn on_session_update(&mut self, update: acp::SessionUpdate) {
        let Some(update) = self.on_session_state_update(update) else { return };
        match update {
            acp::SessionUpdate::UserMessageChunk(chunk) => {
                let mut message = match self.thread.entries().last() {
                    // Agents replaying history stream the user's message in chunks too.
                    Some(Entry::User(message)) => message.clone(),
                    _ => UserMessage::text(""),
                };
                match prompt_content::attachment_of(&chunk.content, &self.cwd) {
                    Some(attachment) => message.attachments.push(attachment),
                    None => message.text.push_str(&content_text(&chunk.content)),
                }
                match self.thread.entries().last() {
                    Some(Entry::User(_)) => {
                        let index = (self.thread.entries().len() - 1) as EntryIndex;
                        self.thread.replace(index, Entry::User(message));
                    }
                    _ => {
                        self.thread.push(Entry::User(message));
                    }
                }
            }
            acp::SessionUpdate::AgentMessageChunk(chunk) => {
                self.thread.append_agent_text(ChunkKind::Text, &content_text(&chunk.content));
            }
            acp::SessionUpdate::AgentThoughtChunk(chunk) => {
                self.thread.append_agent_text(ChunkKind::Thought, &content_text(&chunk.content));
            }
            acp::SessionUpdate::ToolCall(call) => {
                let meta = call.meta.clone();
                let id = call.tool_call_id.0.to_string();
                let before = self.first_location(&id);
                let view = tool_call_view(call);
                match self.thread.find_tool_call(&view.id) {
                    // A repeated tool_call for a known id replaces it, keeping a pending permission.
                    Some(index) => self.thread.update_tool_call(index, |existing| {
                        let permission = existing.permission.take();
                        *existing = ToolCallView { permission, ..view };
                    }),
                    None => {
                        let index = self.thread.push(Entry::ToolCall(view));
                        self.after_tool_call(index);
                    }
                }
                if let Some(index) = self.thread.find_tool_call(&id) {
                    self.link_terminals(index);
                }
                self.on_terminal_meta(&id, meta.as_ref());
                self.follow_location(&id, before);
            }
            acp::SessionUpdate::ToolCallUpdate(update) => {
                let meta = update.meta.clone();
                let id = update.tool_call_id.0.to_string();
                let before = self.first_location(&id);
                let index = self.upsert_tool_call(update, |_| {});
                self.after_tool_call(index);
                self.link_terminals(index);
                self.on_terminal_meta(&id, meta.as_ref());
                self.follow_location(&id, before);
            }
            acp::SessionUpdate::Plan(plan) => {
                let entries = plan
                    .entries
                    .into_iter()
                    .map(|entry| PlanEntryView {
                        content: entry.content,
                        priority: wire_name(&entry.priority),
                        status: wire_name(&entry.status),
                    })
                    .collect();
                self.thread.set_plan(entries);
            }
            acp::SessionUpdate::CurrentModeUpdate(update) => {
                self.on_agent_mode(update.current_mode_id.0.to_string(), false);
            }
            acp::SessionUpdate::ConfigOptionUpdate(update) => {
                self.on_config_options(&update.config_options);
                let config_id = match &self.agent_modes {
                    Some(AgentModes::ConfigOption { config_id, .. }) => Some(config_id.clone()),
                    _ => None,
                };
                let current = update.config_options.iter().find_map(|option| {
                    let acp::SessionConfigKind::Select(select) = &option.kind else { return None };
                    let is_ours = match &config_id {
                        Some(id) => *option.id.0 == **id,
                        None => option.category == Some(acp::SessionConfigOptionCategory::Mode),
                    };
                    is_ours.then(|| select.current_value.0.to_string())
                });
                if config_id.is_none() && !matches!(self.agent_modes, Some(AgentModes::SessionModes { .. })) {
                    self.agent_modes = agent_modes(None, Some(&update.config_options));
                }
                if let Some(current) = current {
                    self.on_agent_mode(current, true);
                }
            }
            // Session state, notices and compaction were taken by `on_session_state_update`; what
            // is left are kinds of a newer protocol (or unstable ones), legal to ignore.
            _ => {}
        }
    }

    fn first_location(&self, tool_call: &str) -> Option<Location> {
        let index = self.thread.find_tool_call(tool_call)?;
        self.thread.tool_call(index)?.locations.first().cloned()
    }

    /// Tells the host where a tool call now points, when that changed and is inside the
    /// workspace (the agent is not trusted to make the editor open just any file).
    fn follow_location(&mut self, tool_call: &str, before: Option<Location>) {
        let Some(now) = self.first_location(tool_call) else { return };
        if before.as_ref() == Some(&now) {
            return;
        }
        // By the text of the path: see `links` for why following does not resolve it.
        if let RequestPath::Inside(_) = resolve_path(&self.cwd, &now.path) {
            self.events.push_back(AcpEvent::ToolLocation { path: now.path, line: now.line });
        }
    }

    /// Applies a `tool_call_update`, creating the tool call when the agent never announced it
    /// (forgiving, as Zed is: the person still sees what the agent is doing). `also` makes a
    /// further change in the same patch (attaching a permission request).
    fn upsert_tool_call(&mut self, update: acp::ToolCallUpdate, also: impl FnOnce(&mut ToolCallView)) -> EntryIndex {
        let id = update.tool_call_id.0.to_string();
        let existing = self.thread.find_tool_call(&id);
        let mut call =
            existing.and_then(|index| self.thread.tool_call(index).cloned()).unwrap_or_else(|| ToolCallView {
                id,
                title: "Tool call".to_owned(),
                kind: "other".to_owned(),
                status: ToolStatus::Pending,
                content: Vec::new(),
                locations: Vec::new(),
                raw_input: None,
                command: None,
                raw_output: None,
                permission: None,
            });
        let fields = update.fields;
        if let Some(status) = fields.status.map(tool_status) {
            // While the person is being asked, the card keeps saying so; the status the agent
            // reports meanwhile is the one shown once the question is answered.
            match existing.and_then(|index| self.permissions.values_mut().find(|pending| pending.tool_call == index)) {
                Some(pending) => pending.status_before = status,
                None => call.status = status,
            }
        }
        if let Some(title) = fields.title {
            call.title = title;
        }
        if let Some(kind) = fields.kind {
            call.kind = wire_name(&kind);
        }
        if let Some(content) = fields.content {
            call.content = content.iter().map(tool_content).collect();
        }
        if let Some(locations) = fields.locations {
            call.locations = locations.iter().map(location).collect();
        }
        if let Some(raw_input) = fields.raw_input {
            call.command = command_of(&raw_input);
            call.raw_input = Some(raw_input);
        }
        if let Some(raw_output) = fields.raw_output {
            call.raw_output = Some(raw_output);
        }
        also(&mut call);
        match existing {
            Some(index) => {
                self.thread.replace(index, Entry::ToolCall(call));
                index
            }
            None => self.thread.push(Entry::ToolCall(call)),
        }
    }

    fn on_permission_request(&mut self, id: RequestId, request: acp::RequestPermissionRequest) {
        if self.session_id.as_ref() != Some(&request.session_id) {
            let error = RpcError::invalid_params()
                .data(serde_json::Value::String(format!("unknown session {}", request.session_id.0)));
            self.push_outgoing(jsonrpc::encode_error(&id, &error));
            return;
        }
        let key = self.next_permission_key;
        self.next_permission_key += 1;
        let options: Vec<PermissionOptionView> = request
            .options
            .iter()
            .map(|option| PermissionOptionView {
                id: option.option_id.0.to_string(),
                name: option.name.clone(),
                kind: wire_name(&option.kind),
            })
            .collect();
        let mut status_before = ToolStatus::Pending;
        let index = self.upsert_tool_call(request.tool_call, |call| {
            status_before = call.status;
            call.status = ToolStatus::WaitingForConfirmation;
            call.permission = Some(PermissionView {
                key,
                options: options.clone(),
                outcome: None,
                links: Vec::new(),
                from_tether: false,
            });
        });
        let pending =
            PendingPermission { request_id: id, tool_call: index, status_before, gate: None, resolving: true };
        self.permissions.insert(key, pending);
        if self.replaying {
            // The log says how it was answered.
            return;
        }
        // The rules and the mode decide on where the tool call's paths really lead.
        let paths = self.paths_to_decide(key);
        self.resolve_then(paths, links::Waiting::Decide { key });
    }

    /// The paths of the tool call a waiting permission request is about, as the agent named them.
    fn paths_to_decide(&self, key: PermissionKey) -> Vec<String> {
        let Some(call) = self.permissions.get(&key).and_then(|pending| self.thread.tool_call(pending.tool_call)) else {
            return Vec::new();
        };
        crate::permissions::paths_of_tool_call(call).into_iter().map(str::to_owned).collect()
    }

    /// The paths of a permission request were resolved: the card shows where links lead, and the
    /// rules and the mode decide it now, unless the person already did.
    fn decide_resolved(&mut self, key: PermissionKey) {
        let Some(pending) = self.permissions.get_mut(&key) else { return };
        pending.resolving = false;
        let index = pending.tool_call;
        let links: Vec<String> = match self.thread.tool_call(index) {
            Some(call) => crate::permissions::paths_of_tool_call(call)
                .into_iter()
                .map(|path| self.target(path))
                .filter(links::Target::is_link)
                .map(|target| {
                    let shown = target.shown(&self.cwd);
                    if target.is_outside() { format!("{shown} (outside the workspace)") } else { shown }
                })
                .collect(),
            None => Vec::new(),
        };
        if !links.is_empty() {
            self.thread.update_tool_call(index, |call| {
                if let Some(permission) = &mut call.permission {
                    permission.links = links;
                }
            });
        }
        let options = self.thread.tool_call(index).and_then(|call| call.permission.as_ref()).map(|p| p.options.clone());
        if !self.decide_by_policy(key) {
            if let Some(tool_call) = self.facts_of(index) {
                self.audit(AuditEvent::Asked { tool_call, options: options.unwrap_or_default() });
            }
            self.emit_permission_count();
        }
    }

    /// Puts a waiting request to the policy and answers it when a rule or the mode decides.
    /// Returns whether it was answered.
    fn decide_by_policy(&mut self, key: PermissionKey) -> bool {
        let Some(pending) = self.permissions.get(&key) else { return false };
        if pending.resolving {
            return false;
        }
        let index = pending.tool_call;
        let Some(tool_call) = self.facts_of(index) else { return false };
        let (allowed, by, reason) = match self.policy.decide(&tool_call.facts) {
            Verdict::Ask => return false,
            Verdict::Allow { by } => (true, by, None),
            Verdict::Reject { by, reason } => (false, by, Some(reason)),
        };
        let options = self.thread.tool_call(index).and_then(|call| call.permission.as_ref()).map(|p| p.options.clone());
        let preferred: [&str; 2] =
            if allowed { ["allow_once", "allow_always"] } else { ["reject_once", "reject_always"] };
        // A decision the agent gave no option for cannot be sent: the person is asked instead.
        let Some(option) =
            preferred.iter().find_map(|kind| options.iter().flatten().find(|option| option.kind == *kind)).cloned()
        else {
            return false;
        };
        if let DecidedBy::Rule { id, .. } = &by {
            self.policy.record_fired(*id);
            self.events.push_back(AcpEvent::PolicyChanged);
        }
        self.audit(AuditEvent::Decided {
            tool_call,
            option: option.clone(),
            allowed,
            by: by.clone(),
            reason: reason.clone(),
        });
        let outcome = PermissionOutcome::Auto { option_id: option.id, allowed, by: by.clone(), reason: reason.clone() };
        let told = reason.unwrap_or_else(|| format!("Approved by the person's {by}"));
        self.resolve_permission(key, outcome, Some(told));
        true
    }

    /// Puts every waiting request to the policy again, after it changed.
    fn reevaluate_waiting(&mut self) {
        let keys: Vec<PermissionKey> = self.permissions.keys().copied().collect();
        for key in keys {
            self.decide_by_policy(key);
        }
    }

    /// Answers every waiting request `cancelled`, as ACP requires when a turn is cancelled.
    fn cancel_waiting(&mut self, why: &str) {
        let keys: Vec<PermissionKey> = self.permissions.keys().copied().collect();
        for key in keys {
            if let Some(tool_call) = self.permissions.get(&key).and_then(|pending| self.facts_of(pending.tool_call)) {
                self.audit(AuditEvent::Cancelled { tool_call, why: why.to_owned() });
            }
            self.resolve_permission(key, PermissionOutcome::Cancelled, None);
        }
    }

    /// The tool call at `index` as an audit record names it.
    fn facts_of(&self, index: EntryIndex) -> Option<AuditedToolCall> {
        let call = self.thread.tool_call(index)?;
        Some(AuditedToolCall { id: call.id.clone(), facts: RequestFacts::of_tool_call(call, |path| self.place(path)) })
    }

    fn audit(&mut self, event: AuditEvent) {
        self.events.push_back(AcpEvent::Audit(Box::new(AuditRecord { event, mode: self.policy.mode() })));
    }

    /// Sends Tether's mode to the agent, when the agent has a mode that means the same and is not
    /// in it already.
    fn send_mode_to_agent(&mut self) {
        if self.replaying {
            // What was sent is in the log (`session/set_mode`), read back with its effects.
            return;
        }
        let Some(modes) = &self.agent_modes else { return };
        let Some(target) = modes.matching(self.policy.mode()).map(str::to_owned) else { return };
        self.switch_agent_mode(target);
    }

    /// Asks the agent to switch to its mode `target` (unless it is in it), the way it offers.
    fn switch_agent_mode(&mut self, target: String) {
        let (Some(session_id), Some(modes)) = (self.session_id.clone(), &self.agent_modes) else { return };
        if modes.current() == target {
            return;
        }
        match modes {
            AgentModes::SessionModes { .. } => {
                let params = acp::SetSessionModeRequest::new(session_id, target.clone());
                let deadline = Some(self.now + CONTROL_TIMEOUT_MS);
                self.send_request("session/set_mode", &params, RequestKind::SetAgentMode, deadline);
            }
            AgentModes::ConfigOption { config_id, .. } => {
                let config_id = config_id.clone();
                let params = acp::SetSessionConfigOptionRequest::new(
                    session_id,
                    config_id.clone(),
                    acp::SessionConfigValueId::new(target.clone()),
                );
                let deadline = Some(self.now + CONTROL_TIMEOUT_MS);
                self.send_request("session/set_config_option", &params, RequestKind::SetAgentMode, deadline);
                self.show_mode_option(&config_id, &target);
            }
        }
        self.mode_switches_in_flight += 1;
        if let Some(modes) = &mut self.agent_modes {
            modes.set_current(target);
        }
        self.events.push_back(AcpEvent::PolicyChanged);
    }

    /// The agent reports its current mode. Tether follows it when it means one of Tether's modes,
    /// unless a switch Tether asked for is still unanswered (the report may be about an older
    /// switch). Following never sends the mode back.
    fn on_agent_mode(&mut self, id: String, from_config_option: bool) {
        let Some(modes) = &mut self.agent_modes else {
            self.problem(format!("the agent reported mode {id:?} but never said it has modes"), None);
            return;
        };
        if from_config_option != matches!(modes, AgentModes::ConfigOption { .. }) {
            return;
        }
        modes.set_current(id.clone());
        let meaning = modes.meaning(&id);
        self.events.push_back(AcpEvent::PolicyChanged);
        let from = self.policy.mode();
        if let Some(mode) = meaning
            && mode != from
            && self.mode_switches_in_flight == 0
        {
            self.policy.set_mode(mode);
            self.audit(AuditEvent::ModeChanged { from, to: mode, by: ChangedBy::Agent });
            self.thread.push(Entry::Notice(NoticeView {
                level: NoticeLevel::Info,
                text: format!("The agent switched to its {id:?} mode; Tether's mode follows: {mode}."),
                detail: None,
            }));
            self.reevaluate_waiting();
        }
    }

    /// Answers a waiting permission request and shows the outcome on its tool call. `reason` is
    /// sent in the response's `_meta.tether.reason`: the only place ACP leaves for telling the
    /// agent why a client decided as it did.
    fn resolve_permission(&mut self, key: PermissionKey, outcome: PermissionOutcome, reason: Option<String>) {
        let Some(pending) = self.permissions.remove(&key) else { return };
        let allowed = self.outcome_allows(pending.tool_call, &outcome);
        if let Some(gate) = pending.gate.clone() {
            // Tether's own question: the request goes ahead or fails; the agent never saw a
            // permission request.
            self.show_outcome(&pending, outcome);
            match gate {
                Gate::Read(gate) => self.on_read_allowed(gate, allowed, pending.request_id, pending.tool_call),
                Gate::Run(gate) => self.on_run_allowed(gate, allowed, pending.request_id, pending.tool_call),
            }
            return;
        }
        if allowed {
            self.remember_approved_command(pending.tool_call);
        }
        let acp_outcome = match &outcome {
            PermissionOutcome::Selected { option_id } | PermissionOutcome::Auto { option_id, .. } => {
                acp::RequestPermissionOutcome::Selected(acp::SelectedPermissionOutcome::new(option_id.clone()))
            }
            PermissionOutcome::Cancelled | PermissionOutcome::Withdrawn => acp::RequestPermissionOutcome::Cancelled,
        };
        let mut response = acp::RequestPermissionResponse::new(acp_outcome);
        if let Some(reason) = reason {
            let mut meta = serde_json::Map::new();
            meta.insert("tether".to_owned(), serde_json::json!({ "reason": reason }));
            response = response.meta(meta);
        }
        self.push_outgoing(jsonrpc::encode_result(&pending.request_id, &response));
        self.show_outcome(&pending, outcome);
    }

    /// The agent withdrew its request (`$/cancel_request`): it is answered "request cancelled"
    /// and the card says so.
    fn withdraw_permission(&mut self, key: PermissionKey) {
        let Some(pending) = self.permissions.remove(&key) else { return };
        if let Some(tool_call) = self.facts_of(pending.tool_call) {
            self.audit(AuditEvent::Withdrawn { tool_call });
        }
        let error = RpcError::new(-32800, "Request cancelled");
        self.push_outgoing(jsonrpc::encode_error(&pending.request_id, &error));
        self.show_outcome(&pending, PermissionOutcome::Withdrawn);
    }

    /// Shows `call`, a card of Tether's own asking with permission key `key`, and holds the agent's
    /// `request` behind it: the policy may answer at once, else the person does, and
    /// [`AcpClient::resolve_permission`] then lets `gate` go ahead or fail.
    fn hold_behind_card(&mut self, request: RequestId, key: PermissionKey, call: ToolCallView, gate: Gate) {
        let options = call.permission.as_ref().map(|permission| permission.options.clone()).unwrap_or_default();
        let index = self.thread.push(Entry::ToolCall(call));
        let pending = PendingPermission {
            request_id: request,
            tool_call: index,
            status_before: ToolStatus::Pending,
            gate: Some(gate),
            // Tether's own cards name paths already resolved.
            resolving: false,
        };
        self.permissions.insert(key, pending);
        if !self.decide_by_policy(key) {
            if let Some(tool_call) = self.facts_of(index) {
                self.audit(AuditEvent::Asked { tool_call, options });
            }
            self.emit_permission_count();
        }
    }

    /// Whether `outcome` lets the tool call at `index` go ahead: an allow option chosen by the
    /// person, or approved by a rule or the mode.
    fn outcome_allows(&self, index: EntryIndex, outcome: &PermissionOutcome) -> bool {
        match outcome {
            PermissionOutcome::Auto { allowed, .. } => *allowed,
            PermissionOutcome::Selected { option_id } => self
                .thread
                .tool_call(index)
                .and_then(|call| call.permission.as_ref())
                .and_then(|permission| permission.options.iter().find(|option| &option.id == option_id))
                .is_some_and(|option| option.kind.starts_with("allow")),
            PermissionOutcome::Cancelled | PermissionOutcome::Withdrawn => false,
        }
    }

    /// An execute tool call was approved: its command may run once through `terminal/create`
    /// without another question, until the turn ends.
    fn remember_approved_command(&mut self, index: EntryIndex) {
        let Some(call) = self.thread.tool_call(index) else { return };
        if call.kind != "execute" {
            return;
        }
        let Some(command) = call.command.clone() else { return };
        if self.approved_commands.len() >= MAX_APPROVED_COMMANDS {
            // An agent that asks for far more commands than it runs loses the oldest approvals;
            // running one of those asks again, which is the safe side.
            self.approved_commands.pop_front();
        }
        self.approved_commands.push_back(command);
    }

    /// Uses up one approval of `command` (see [`AcpClient::remember_approved_command`]); false
    /// when there is none.
    fn take_approved_command(&mut self, command: &str) -> bool {
        match self.approved_commands.iter().position(|approved| approved == command) {
            Some(position) => {
                self.approved_commands.remove(position);
                true
            }
            None => false,
        }
    }

    fn show_outcome(&mut self, pending: &PendingPermission, outcome: PermissionOutcome) {
        self.thread.update_tool_call(pending.tool_call, |call| {
            call.status = pending.status_before;
            if let Some(permission) = &mut call.permission {
                permission.outcome = Some(outcome);
            }
        });
        self.emit_permission_count();
    }

    /// When a turn ends, a permission request the agent left unanswered can no longer matter to
    /// it; it is answered cancelled so that nothing stays pending silently.
    fn clear_stale_permissions(&mut self) {
        self.cancel_waiting("the turn ended before an answer");
        // An approval is for this turn's command: a later turn that runs it without asking is
        // asked about it.
        self.approved_commands.clear();
    }

    /// The view's badge: permission requests and writes waiting for the person.
    fn emit_permission_count(&mut self) {
        self.events
            .push_back(AcpEvent::PermissionsWaiting { count: self.permissions_waiting() + self.reviews_waiting() });
    }

    fn send_request(
        &mut self,
        method: &str,
        params: &impl Serialize,
        kind: RequestKind,
        deadline: Option<u64>,
    ) -> RequestId {
        if self.replaying {
            // The requests the engine made are read back from the log, ids and all; one it would
            // make now was either made then (and is in the log) or never.
            return RequestId::Null;
        }
        let (id, line) = self.rpc.request(method, params, kind, deadline);
        self.push_outgoing(line);
        id
    }

    /// Answers a request whose parameters Tether cannot act on: invalid params, saying why.
    fn refuse(&mut self, id: &RequestId, problem: String) {
        let error = RpcError::invalid_params().data(serde_json::Value::String(problem));
        self.push_outgoing(jsonrpc::encode_error(id, &error));
    }

    fn send_notification(&mut self, method: &str, params: &impl Serialize) {
        self.push_outgoing(jsonrpc::encode_notification(method, params));
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

/// The card of Tether's own for a request the agent made without asking first: a tool call waiting
/// for the person, with the options `allow` (once), `allow_always` and `reject` named `names`.
fn own_card(key: PermissionKey, id: String, title: String, kind: &str, names: [&str; 3]) -> ToolCallView {
    let [allow, always, reject] = names;
    let option = |id: &str, name: &str, kind: &str| PermissionOptionView {
        id: id.to_owned(),
        name: name.to_owned(),
        kind: kind.to_owned(),
    };
    let options = vec![
        option("allow", allow, "allow_once"),
        option("allow_always", always, "allow_always"),
        option("reject", reject, "reject_once"),
    ];
    ToolCallView {
        id,
        title,
        kind: kind.to_owned(),
        status: ToolStatus::WaitingForConfirmation,
        content: Vec::new(),
        locations: Vec::new(),
        raw_input: None,
        command: None,
        raw_output: None,
        permission: Some(PermissionView { key, options, outcome: None, links: Vec::new(), from_tether: true }),
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
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        _ => "unknown".to_owned(),
    }
}

fn describe_error(error: &RpcError) -> String {
    let code: i32 = error.code.into();
    match &error.data {
        Some(serde_json::Value::String(data)) => format!("{} ({data}) [{code}]", error.message),
        Some(data) => format!("{} ({data}) [{code}]", error.message),
        None => format!("{} [{code}]", error.message),
    }
}

fn tool_status(status: acp::ToolCallStatus) -> ToolStatus {
    match status {
        acp::ToolCallStatus::Pending => ToolStatus::Pending,
        acp::ToolCallStatus::InProgress => ToolStatus::InProgress,
        acp::ToolCallStatus::Completed => ToolStatus::Completed,
        acp::ToolCallStatus::Failed => ToolStatus::Failed,
        // A status from a newer protocol: shown as still running rather than guessed.
        _ => ToolStatus::InProgress,
    }
}

/// The thread's view of a tool call the agent announced.
pub fn tool_call_view(call: acp::ToolCall) -> ToolCallView {
    ToolCallView {
        id: call.tool_call_id.0.to_string(),
        title: call.title,
        kind: wire_name(&call.kind),
        status: tool_status(call.status),
        content: call.content.iter().map(tool_content).collect(),
        locations: call.locations.iter().map(location).collect(),
        command: call.raw_input.as_ref().and_then(command_of),
        raw_input: call.raw_input,
        raw_output: call.raw_output,
        permission: None,
    }
}

fn tool_content(content: &acp::ToolCallContent) -> ToolContent {
    match content {
        acp::ToolCallContent::Content(content) => ToolContent::Text { text: content_text(&content.content) },
        acp::ToolCallContent::Diff(diff) => {
            let (lines, preview, hidden_lines) =
                preview_lines(diff.old_text.as_deref().unwrap_or(""), &diff.new_text, &PREVIEW_BUDGET);
            let stats = preview.stats();
            ToolContent::Diff {
                path: diff.path.to_string_lossy().into_owned(),
                old_text: diff.old_text.clone(),
                new_text: diff.new_text.clone(),
                added: stats.added as u32,
                removed: stats.removed as u32,
                lines,
                hidden_lines,
            }
        }
        acp::ToolCallContent::Terminal(terminal) => {
            ToolContent::Terminal { terminal_id: terminal.terminal_id.0.to_string() }
        }
        _ => ToolContent::Text { text: "(content of a kind this version of Tether does not show)".to_owned() },
    }
}

fn location(location: &acp::ToolCallLocation) -> Location {
    Location { path: location.path.to_string_lossy().into_owned(), line: location.line }
}

/// The text of a content block; other kinds are named so the person knows something was there.
fn content_text(block: &acp::ContentBlock) -> String {
    match block {
        acp::ContentBlock::Text(text) => text.text.clone(),
        acp::ContentBlock::Image(_) => "[image]".to_owned(),
        acp::ContentBlock::Audio(_) => "[audio]".to_owned(),
        acp::ContentBlock::ResourceLink(link) => format!("[{}]({})", link.name, link.uri),
        acp::ContentBlock::Resource(resource) => match &resource.resource {
            acp::EmbeddedResourceResource::TextResourceContents(text) => text.text.clone(),
            _ => "[embedded resource]".to_owned(),
        },
        _ => "[content]".to_owned(),
    }
}

/// How the agent lets Tether switch its mode, from the `session/new` answer: its session modes,
/// else a select config option of category `mode`.
fn agent_modes(
    modes: Option<acp::SessionModeState>,
    options: Option<&[acp::SessionConfigOption]>,
) -> Option<AgentModes> {
    if let Some(modes) = modes {
        let available = modes.available_modes.iter().map(|mode| (mode.id.0.to_string(), mode.name.clone())).collect();
        return Some(AgentModes::SessionModes { current: modes.current_mode_id.0.to_string(), available });
    }
    options?.iter().find_map(|option| {
        let acp::SessionConfigKind::Select(select) = &option.kind else { return None };
        if option.category != Some(acp::SessionConfigOptionCategory::Mode) {
            return None;
        }
        let available = match &select.options {
            acp::SessionConfigSelectOptions::Ungrouped(options) => {
                options.iter().map(|option| (option.value.0.to_string(), option.name.clone())).collect()
            }
            acp::SessionConfigSelectOptions::Grouped(groups) => groups
                .iter()
                .flat_map(|group| group.options.iter())
                .map(|option| (option.value.0.to_string(), option.name.clone()))
                .collect(),
            _ => Vec::new(),
        };
        Some(AgentModes::ConfigOption {
            config_id: option.id.0.to_string(),
            current: select.current_value.0.to_string(),
            available,
        })
    })
}
