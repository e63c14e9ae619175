//! The host's whole brain: the tetherd connection, the agent of the current session, the chat
//! webview and VS Code's commands, as one state machine with no IO.
//!
//! The TypeScript host feeds it socket bytes, webview intents, commands and the time, and carries
//! out the [`HostAction`]s it polls; everything that decides what a message means lives here (see
//! ARCHITECTURE.md, "extension/": the host holds no protocol logic). One session is live at a time: "New Session" and "Select Agent" stop
//! the current agent and start another.
//!
//! The person's permission policy outlives sessions in the same window: a new session keeps the
//! mode and the workspace rules (session rules end with their session). Workspace rules come from
//! the settings and are written back through the host (`SaveWorkspaceRules`); a rule in the
//! settings that cannot be used is reported and kept as written, never dropped. Every decision is
//! sent to tetherd for the session's audit log.
//!
//! The webview gets a snapshot when it says `ready` and then patches, batched so that at most one
//! post leaves per [`FRAME_MS`] of the host's clock however fast the agent streams: the engine holds
//! patches back and asks for a timer (`poll_timeout`) instead of posting early.

use std::collections::VecDeque;

use serde::Serialize;
use serde_json::value::RawValue;

use crate::acp::{
    AcpClient, AcpEvent, AgentSession, ClientInfo, IntentError, LogReplay, SecretEnv, SignIn, TerminalCall, capitalize,
    methods_for_profile,
};
use crate::export::{ExportHeader, thread_markdown};
use crate::framing::{self, LineFramer};
use crate::host_api::{
    AgentProfile, AuthMethodKind, AuthMethodView, DEMO_PROFILE, EngineConfig, ExportFormat, FileReadReply, HistoryItem,
    HistorySource, HostAction, HostCommand, HostEvent, LogLevel, PermissionSettings,
};
use crate::intent::Intent;
use crate::jsonrpc::{self, Message, Outgoing, RequestId, RpcError};
use crate::mentions::{self, FindOutcome, MentionIndex};
use crate::permissions::{PermissionPolicy, RuleScope, RuleSpec};
use crate::session_log::{EVENTS_FILE, UNTITLED_SESSION, prompt_title, read_log};
use crate::sidecar::{
    AgentBadLine, AgentExited, AgentId, AgentLogFailed, AgentMessage, AgentRef, AgentStderr, HelloParams,
    SIDECAR_PROTOCOL_VERSION, SessionDirRef, SessionListParams, SessionListResult, SessionReadParams,
    SessionReadResult, SessionRenameParams, SessionSummary, SnapshotChangesParams, SnapshotChangesResult,
    SnapshotTakeParams, SnapshotTakeResult, SpawnParams, SpawnResult, TerminalCreateParams, TerminalData,
    TerminalExited, TerminalInput, TerminalRef, TerminalResize, TetherdStopping, method,
};
use crate::thread::{Entry, NoticeLevel, NoticeView, PermissionKey, ThreadPatch, TurnState};
use crate::webview::{
    AgentModeView, HostToWebview, MentionSuggestion, PermissionsView, PromptAttachment, ReviewIntent,
    SessionControlsView, SessionStatus, SessionView, TerminalIntent, ViewEvent, ViewSnapshot, WebviewToHost,
};

/// The shortest time between two posts to the webview: one animation frame at 60 Hz.
pub const FRAME_MS: u64 = 16;

/// How long a snapshot of the workspace may take (tetherd gives git 20 s) before the turn goes
/// ahead without one.
const SNAPSHOT_TIMEOUT_MS: u64 = 30_000;

/// The size of a command's PTY until its mirrored terminal reports its own: wide enough that
/// most output is not wrapped by the PTY before VS Code wraps it itself.
const TERMINAL_COLS: u16 = 120;
const TERMINAL_ROWS: u16 = 30;

/// How long tetherd may take to answer a terminal request other than `wait_for_exit` (a release
/// includes killing the command, SIGTERM then SIGKILL after its grace period).
const TERMINAL_TIMEOUT_MS: u64 = 30_000;

/// How long tetherd may take to answer `hello` or `agent/spawn`.
const SIDECAR_TIMEOUT_MS: u64 = 15_000;

/// How much of an agent's stderr is kept to explain a crash.
const STDERR_TAIL_LINES: usize = 40;
const STDERR_TAIL_BYTES: usize = 8 * 1024;

/// Lines from tetherd embed a whole agent line, so they may be a little longer than the agent's.
const SIDECAR_MAX_LINE_BYTES: usize = framing::DEFAULT_MAX_LINE_BYTES + 1024 * 1024;

/// How many times tetherd is started again by itself after it was lost, within
/// [`SIDECAR_RESTART_WINDOW_MS`]; a tetherd lost more often than that crashes for a reason a
/// restart does not cure, and the person is asked instead.
pub const MAX_AUTOMATIC_SIDECAR_RESTARTS: usize = 3;
pub const SIDECAR_RESTART_WINDOW_MS: u64 = 5 * 60_000;

#[derive(Debug, Clone, PartialEq, Eq)]
enum SidecarRequest {
    Hello,
    /// Spawning the agent of session `generation`.
    Spawn {
        generation: u64,
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
    /// A snapshot of the workspace before a turn of session `generation`.
    Snapshot {
        generation: u64,
    },
    /// What changed since that snapshot.
    Scan {
        generation: u64,
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

/// Why the sessions are listed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ListPurpose {
    /// tetherd has just accepted the hello: reopen the session in `dir`, or the workspace's last
    /// one when `dir` is absent (or no longer there).
    Reopen { dir: Option<String> },
    /// To show the history picker.
    History,
}

/// What to do once tetherd has accepted the hello.
#[derive(Debug, Clone, PartialEq, Eq)]
enum AfterHello {
    /// Reopen a session (see [`ListPurpose::Reopen`]): at start, and to restart a session whose
    /// tetherd was lost.
    Reopen { dir: Option<String> },
    /// Start a new session (the person asked for one while tetherd was not connected).
    NewSession,
}

/// A session's log being read from tetherd, piece by piece, and folded as it comes.
#[derive(Debug)]
struct LogLoad {
    id: u64,
    summary: SessionSummary,
    replay: LogReplay,
    purpose: LoadPurpose,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LoadPurpose {
    /// Show it in the chat and go on with it: with its agent, when that still runs, else with
    /// a new agent that resumes the agent's session.
    Open,
    /// Export it as Markdown.
    Export,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SidecarState {
    Disconnected,
    /// `StartSidecar` asked of the host; waiting for it to connect or fail.
    Starting,
    /// Connected, `hello` sent.
    Greeting,
    Ready,
}

/// The agent process of the current session and its ACP client.
#[derive(Debug)]
struct AgentSlot {
    generation: u64,
    profile: AgentProfile,
    /// Known once tetherd answered `agent/spawn`.
    agent_id: Option<AgentId>,
    client: AcpClient,
    stderr_tail: VecDeque<String>,
    /// The session folder tetherd created, holding the audit log.
    session_dir: Option<String>,
    /// Audit records made before tetherd said which agent this is; sent once it has.
    unsent_audit: Vec<String>,
    /// The `seq` of the last event of the session's log the thread was rebuilt from: the agent's
    /// events up to it are already in the thread.
    replayed_through: u64,
    /// The person cancelled the running turn and the agent has not ended it yet: Stop agent is
    /// offered.
    cancel_sent: bool,
    /// The person stopped the agent and tetherd has not said it is gone yet: Restart waits,
    /// since the session's log is the old agent's until then.
    stopping: bool,
    /// `profile` is one the person configured. False for a session whose agent is no longer
    /// configured: its transcript is shown, but nothing is ever started for it (the command a
    /// session's log recorded is never run).
    configured: bool,
    /// tetherd could not write the session's log and ended the agent (`agent/logFailed`): the
    /// thread and the header say so already, and the exit that follows adds nothing.
    log_failed: bool,
}

#[derive(Debug)]
pub struct HostEngine {
    config: EngineConfig,
    sidecar: SidecarState,
    framer: LineFramer,
    rpc: Outgoing<SidecarRequest>,
    agent: Option<AgentSlot>,
    /// Bumped for every new session, so that late messages about an older one are recognised.
    generation: u64,
    /// The profile the next session uses.
    selected_profile: Option<String>,
    session: SessionView,
    webview: WebviewOutbox,
    badge: u32,
    /// The policy while no agent session exists; a session starts from it and leaves its mode
    /// and workspace rules to it when it ends.
    idle_policy: PermissionPolicy,
    /// Rules in the settings the engine cannot use: shown with why, and saved back unchanged.
    unusable_rules: Vec<(serde_json::Value, String)>,
    /// The files open in editors, for the snapshot before each turn.
    open_documents: Vec<String>,
    /// The time of the input being handled, for deadlines of requests made while reacting to the
    /// client's events.
    now: u64,
    after_hello: AfterHello,
    /// The agent's events that arrived while the engine was finding out which session to show:
    /// they may belong to a running agent it is about to go on with, so they wait for it.
    held_agent_events: Option<Vec<String>>,
    /// The log being read, when a session is being opened or exported.
    load: Option<LogLoad>,
    next_load: u64,
    /// The sessions the history last listed, which the history's commands name.
    history: Vec<SessionSummary>,
    /// The sessions the agent last listed (`session/list`), when it offers that.
    agent_history: Vec<AgentSession>,
    /// The history picker was asked for and has not been shown yet.
    history_wanted: bool,
    /// The variables the person gave for agents (SecretStorage, through the host), added to the
    /// environment of their agents. Only in memory.
    secrets: SecretEnv,
    /// The session generation whose agent was already asked to sign in with the kept keys: an
    /// agent that refuses them is not asked again, the person is.
    signed_in_with_kept_keys: Option<u64>,
    /// The host's time when the current starting step began, for the header's "… 7 s".
    step_since: u64,
    /// The files and selection the composer's `@` list offers.
    mentions: MentionIndex,
    /// tetherd said it is stopping on purpose (`tetherd/stopping`), and why: its connection
    /// closing next is no loss to make up for.
    sidecar_stopping: Option<String>,
    /// When tetherd was last started again by itself after a loss, oldest first, within
    /// [`SIDECAR_RESTART_WINDOW_MS`].
    automatic_sidecar_restarts: VecDeque<u64>,
    /// Why the session being reopened after a lost tetherd was cut off: its agent's turn ends
    /// with this when the log has been folded.
    interrupted_by: Option<String>,
    /// A prompt the person sent while the agent was not running: it started the agent again and
    /// goes out once the session of that agent (`generation`) is ready.
    prompt_after_restart: Option<PromptAfterRestart>,
    actions: VecDeque<HostAction>,
}

#[derive(Debug)]
struct PromptAfterRestart {
    /// The session generation of the agent started for it; `None` when tetherd is being started
    /// again and the session it reopens is not known yet.
    generation: Option<u64>,
    text: String,
    attachments: Vec<PromptAttachment>,
}

/// What the webview has not been sent yet, and when it was last posted to.
#[derive(Debug, Default)]
struct WebviewOutbox {
    /// The webview said `ready` and has not gone away since: posts reach it.
    ready: bool,
    /// A mention "Tether: Mention Selection" made while no webview was ready, for the next one.
    mention_waiting: Option<MentionSuggestion>,
    last_post: Option<u64>,
    session_changed: bool,
    patches: Vec<ThreadPatch>,
}

impl HostEngine {
    pub fn new(config: EngineConfig) -> Self {
        let selected_profile = config.default_profile.clone();
        let idle_policy = PermissionPolicy::new(config.permissions.default_mode, 1);
        let mut engine = HostEngine {
            config,
            sidecar: SidecarState::Disconnected,
            framer: LineFramer::new(SIDECAR_MAX_LINE_BYTES),
            rpc: Outgoing::new(),
            agent: None,
            generation: 0,
            selected_profile,
            session: SessionView {
                agent: String::new(),
                agent_info: None,
                status: SessionStatus::starting("Starting tetherd"),
                profiles: Vec::new(),
                permissions: PermissionsView::default(),
                changes: Vec::new(),
                can_restart: false,
                can_sign_in: false,
                can_stop: false,
                follow_agent: false,
                controls: SessionControlsView::default(),
            },
            webview: WebviewOutbox::default(),
            badge: 0,
            idle_policy,
            unusable_rules: Vec::new(),
            open_documents: Vec::new(),
            now: 0,
            after_hello: AfterHello::Reopen { dir: None },
            held_agent_events: None,
            load: None,
            next_load: 0,
            history: Vec::new(),
            agent_history: Vec::new(),
            history_wanted: false,
            secrets: SecretEnv::default(),
            signed_in_with_kept_keys: None,
            step_since: 0,
            mentions: MentionIndex::default(),
            sidecar_stopping: None,
            automatic_sidecar_restarts: VecDeque::new(),
            interrupted_by: None,
            prompt_after_restart: None,
            actions: VecDeque::new(),
        };
        let settings = engine.config.permissions.clone();
        engine.configure_permissions(&settings);
        engine.session.profiles = engine.profiles().into_iter().map(|profile| profile.name).collect();
        engine.session.agent = engine.current_profile().map(|profile| profile.name).unwrap_or_default();
        engine.session.follow_agent = engine.config.follow_agent;
        engine.start_sidecar();
        engine
    }

    /// The socket to tetherd is open: say hello.
    pub fn handle_sidecar_connected(&mut self, now: u64) {
        self.now = now;
        self.framer = LineFramer::new(SIDECAR_MAX_LINE_BYTES);
        self.sidecar_stopping = None;
        let hello = HelloParams {
            token: self.config.token.clone(),
            protocol_version: SIDECAR_PROTOCOL_VERSION,
            client: format!("{} {}", self.config.client_name, self.config.client_version),
        };
        self.sidecar_request(method::HELLO, &hello, SidecarRequest::Hello, now);
        self.sidecar = SidecarState::Greeting;
        self.set_status(SessionStatus::starting("Connecting to tetherd"));
        self.finish(now);
    }

    /// Bytes from the tetherd socket, in any chunking.
    pub fn handle_sidecar_bytes(&mut self, bytes: &[u8], now: u64) {
        self.now = now;
        self.framer.push(bytes);
        while let Some(line) = self.framer.next_line() {
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
        let was_ready = self.sidecar == SidecarState::Ready;
        let stopped_on_purpose = self.sidecar_stopping.take();
        self.sidecar = SidecarState::Disconnected;
        self.rpc.drain();
        let message = format!("lost the connection to tetherd ({reason})");
        if let Some(slot) = &mut self.agent {
            slot.client.terminals_lost("the connection to tetherd was lost", now);
            slot.client.handle_exited(&format!("is out of reach: Tether {message}"), false, "");
        }
        // The client's last words (cancelled requests, their audit records) are drained; the
        // records cannot reach tetherd now and are logged instead. The thread stays on screen:
        // a restart reopens the session from its log with a new tetherd.
        self.drain_client();
        if let Some(slot) = &mut self.agent {
            slot.agent_id = None;
            // tetherd took the agent being stopped with it: there is nothing left to wait for.
            slot.stopping = false;
        }
        self.load = None;
        self.held_agent_events = None;
        self.drop_prompt_after_restart(&format!("Tether {message}"));
        self.log(LogLevel::Error, format!("Tether {message}"));
        let restarts = &mut self.automatic_sidecar_restarts;
        while restarts.front().is_some_and(|&at| at + SIDECAR_RESTART_WINDOW_MS <= now) {
            restarts.pop_front();
        }
        if was_ready && stopped_on_purpose.is_none() && restarts.len() < MAX_AUTOMATIC_SIDECAR_RESTARTS {
            restarts.push_back(now);
            self.log(LogLevel::Warn, "starting tetherd again to go on with the session".to_owned());
            self.interrupted_by = Some(format!("was interrupted: Tether {message}"));
            self.restart(now);
        } else {
            let text = if let Some(why) = stopped_on_purpose {
                format!("Tether {message}: tetherd was stopped ({why}). Restart to go on with the session.")
            } else if was_ready {
                format!(
                    "Tether {message}. tetherd was lost {} times within {} minutes, so Tether does not start it again by itself. Restart to go on with the session.",
                    MAX_AUTOMATIC_SIDECAR_RESTARTS + 1,
                    SIDECAR_RESTART_WINDOW_MS / 60_000
                )
            } else {
                format!("Tether {message}. Restart to go on with the session.")
            };
            self.show(LogLevel::Error, text);
            self.set_status(SessionStatus::Failed { message: capitalize(&message) });
        }
        self.finish(now);
    }

    /// A message from the chat view.
    pub fn handle_webview(&mut self, message: impl Into<WebviewToHost>, now: u64) {
        self.now = now;
        match message.into() {
            WebviewToHost::View(ViewEvent::Ready) => {
                self.webview.ready = true;
                self.post_snapshot(now);
                if let Some(mention) = self.webview.mention_waiting.take() {
                    self.post_now(HostToWebview::AddMention { mention });
                }
            }
            WebviewToHost::View(ViewEvent::FindMentions { query, fresh }) => {
                match self.mentions.find(&query, fresh, &self.config.workspace_root) {
                    FindOutcome::ListFiles => self.actions.push_back(HostAction::ListWorkspaceFiles),
                    FindOutcome::Wait => {}
                    FindOutcome::Answer(items) => self.post_now(HostToWebview::Mentions { query, items }),
                }
            }
            WebviewToHost::Intent(intent) => return self.handle_intent(intent, now),
        }
        self.refresh_permissions_view();
        self.finish(now);
    }

    /// A VS Code command or event.
    pub fn handle_command(&mut self, command: impl Into<HostCommand>, now: u64) {
        self.now = now;
        match command.into() {
            HostCommand::Intent(intent) => return self.handle_intent(intent, now),
            HostCommand::Event(event) => self.host_event(event),
        }
        self.refresh_permissions_view();
        self.finish(now);
    }

    /// Something the person asked for, from the chat view or from VS Code: the one place that
    /// decides what each intent does.
    pub fn handle_intent(&mut self, intent: Intent, now: u64) {
        self.now = now;
        match intent {
            Intent::Prompt { text, attachments } => self.prompt(&text, &attachments, now),
            Intent::Cancel => self.cancel(now),
            Intent::AnswerPermission { key, option_id } => self.answer_permission(key, &option_id, now),
            Intent::NewSession => self.start_session(now),
            Intent::SelectAgent { name } => self.select_agent(name, now),
            Intent::SetMode { mode } => match &mut self.agent {
                Some(slot) => slot.client.set_mode(mode, now),
                None => {
                    self.idle_policy.set_mode(mode);
                    self.refresh_permissions_view();
                }
            },
            Intent::SetConfigOption { config_id, value } => {
                let result = match &mut self.agent {
                    Some(slot) => slot.client.set_config_option(&config_id, value, now),
                    None => Err(IntentError::NotReady),
                };
                if let Err(error) = result {
                    self.show(LogLevel::Warn, format!("The option was not changed: {error}."));
                }
            }
            Intent::AddRule { spec, scope } => {
                let result = match &mut self.agent {
                    Some(slot) => slot.client.add_rule(spec, scope).map(|_| ()),
                    None => self
                        .idle_policy
                        .add_rule(spec, scope, crate::permissions::RuleOrigin::Added)
                        .map(|_| ())
                        .map_err(IntentError::from),
                };
                match result {
                    Ok(()) if scope == RuleScope::Workspace => self.save_workspace_rules(),
                    Ok(()) => {}
                    Err(error) => self.show(LogLevel::Warn, format!("The rule was not added: {error}.")),
                }
            }
            Intent::RemoveRule { id } => {
                let scope = self.policy().rules().into_iter().find(|rule| rule.id == id).map(|rule| rule.scope);
                let result = match &mut self.agent {
                    Some(slot) => slot.client.remove_rule(id).map(|_| ()),
                    None => self.idle_policy.remove_rule(id).map(|_| ()).ok_or(IntentError::UnknownRule),
                };
                match result {
                    Ok(()) if scope == Some(RuleScope::Workspace) => self.save_workspace_rules(),
                    Ok(()) => {}
                    Err(error) => self.show(LogLevel::Warn, format!("The rule was not removed: {error}.")),
                }
            }
            Intent::ClearRules { scope } => {
                match &mut self.agent {
                    Some(slot) => slot.client.clear_rules(scope),
                    None => {
                        self.idle_policy.clear(scope);
                    }
                }
                if scope == RuleScope::Workspace {
                    self.save_workspace_rules();
                }
            }
            Intent::KeepRuleForWorkspace { id } => {
                let result = match &mut self.agent {
                    Some(slot) => slot.client.keep_rule_for_workspace(id).map(|_| ()),
                    None => self.idle_policy.keep_for_workspace(id).map(|_| ()).ok_or(IntentError::UnknownRule),
                };
                match result {
                    Ok(()) => self.save_workspace_rules(),
                    Err(error) => self.show(LogLevel::Warn, format!("The rule was not saved: {error}.")),
                }
            }
            Intent::OpenAuditLog => match self.audit_log() {
                Some(path) => self.actions.push_back(HostAction::OpenFile { path }),
                None => self.show(
                    LogLevel::Info,
                    "This session has no audit log yet (it is kept once the agent has started, in a workspace folder)."
                        .to_owned(),
                ),
            },
            Intent::Review { intent } => self.review(intent, now),
            Intent::Terminal { intent } => self.terminal_intent(intent),
            Intent::ShowHistory => self.show_history(now),
            Intent::OpenSession { id } => self.open_history_session(&id, now),
            Intent::RenameSession { id, title } => self.rename_session(id, title, now),
            Intent::DeleteSession { id } => self.delete_session(id, now),
            Intent::ExportSession { id, format } => self.export_session(id, format, now),
            Intent::Restart => self.restart(now),
            Intent::StopAgent => self.stop_agent(now),
            Intent::SignIn => self.sign_in_again(),
            Intent::Authenticate { method_id, env } => self.authenticate(&method_id, env, now),
            Intent::SetAgentMode { id } => {
                let result = match &mut self.agent {
                    Some(slot) => slot.client.set_agent_mode(&id, now),
                    None => Err(IntentError::NotReady),
                };
                if let Err(error) = result {
                    self.show(LogLevel::Warn, format!("The agent's mode was not changed: {error}."));
                }
            }
            Intent::SetFollowAgent { on } => self.set_follow_agent(on),
            Intent::ToggleFollowAgent => self.set_follow_agent(!self.session.follow_agent),
            Intent::ManageTrust => self.actions.push_back(HostAction::ManageWorkspaceTrust),
            Intent::MentionSelection { selection } => {
                let mention = mentions::selection_suggestion(&selection, &self.config.workspace_root);
                if self.webview.ready {
                    self.post_now(HostToWebview::AddMention { mention });
                } else {
                    // The command shows the chat view too: the mention waits for it.
                    self.webview.mention_waiting = Some(mention);
                }
            }
        }
        self.refresh_permissions_view();
        self.finish(now);
    }

    fn host_event(&mut self, event: HostEvent) {
        let now = self.now;
        match event {
            HostEvent::Configure { profiles, default_profile, permissions } => {
                self.config.profiles = profiles;
                self.config.default_profile = default_profile;
                self.session.profiles = self.profiles().into_iter().map(|profile| profile.name).collect();
                self.webview.session_changed = true;
                self.configure_permissions(&permissions);
                self.config.permissions = permissions;
            }
            HostEvent::OpenDocuments { paths } => self.open_documents = paths,
            HostEvent::FileChanged { path } => {
                if let Some(slot) = &mut self.agent {
                    slot.client.handle_file_changed(&path);
                }
            }
            HostEvent::EditDone { edit, outcome } => {
                if let Some(slot) = &mut self.agent {
                    slot.client.handle_edit_done(edit, outcome);
                }
            }
            HostEvent::PathsResolved { resolve, root, paths } => {
                if let Some(slot) = &mut self.agent {
                    slot.client.handle_paths_resolved(resolve, root, paths, now);
                }
            }
            HostEvent::TerminalInput { terminal, data } => {
                if let Some(slot) = &mut self.agent {
                    slot.client.terminal_input(&terminal, data);
                }
            }
            HostEvent::TerminalResize { terminal, cols, rows } => {
                if let Some(slot) = &mut self.agent {
                    slot.client.terminal_resize(&terminal, cols, rows);
                }
            }
            HostEvent::TerminalClosed { terminal } => {
                if let Some(slot) = &mut self.agent {
                    slot.client.terminal_closed(&terminal);
                }
            }
            HostEvent::AgentSecrets { profile, env } => self.secrets.add(&profile, env),
            HostEvent::WorkspaceFiles { files, selection } => {
                if let Some((query, items)) = self.mentions.handle_files(files, selection, &self.config.workspace_root)
                {
                    self.post_now(HostToWebview::Mentions { query, items });
                }
            }
            HostEvent::WorkspaceTrusted => self.workspace_trusted(),
        }
    }

    fn terminal_intent(&mut self, intent: TerminalIntent) {
        let result = match &mut self.agent {
            Some(slot) => slot.client.terminal_intent(intent),
            None => Err(IntentError::UnknownTerminal),
        };
        if let Err(error) = result {
            self.show(LogLevel::Warn, format!("Tether: {error}."));
        }
    }

    /// The host's answer to a `ReadFile` action.
    pub fn handle_file_read(&mut self, reply: FileReadReply, data: &[u8], now: u64) {
        if let Some(slot) = &mut self.agent {
            slot.client.handle_file_read(reply, data, now);
        }
        self.finish(now);
    }

    /// The webview went away (its view was closed); posts stop until it says `ready` again.
    pub fn handle_webview_gone(&mut self) {
        self.webview = WebviewOutbox::default();
    }

    pub fn handle_timeout(&mut self, now: u64) {
        self.now = now;
        for (_, pending) in self.rpc.expire(now) {
            match pending.tag {
                SidecarRequest::Snapshot { generation } | SidecarRequest::Scan { generation } => {
                    let message =
                        format!("tetherd did not answer {} within {} s", pending.method, SNAPSHOT_TIMEOUT_MS / 1000);
                    self.on_snapshot_answer(pending.tag, generation, Err(message));
                }
                SidecarRequest::Terminal { generation, call } => {
                    let message =
                        format!("tetherd did not answer {} within {} s", pending.method, TERMINAL_TIMEOUT_MS / 1000);
                    self.log(LogLevel::Warn, message.clone());
                    if let Some(slot) = self.agent.as_mut().filter(|slot| slot.generation == generation) {
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
                _ => {
                    let message =
                        format!("tetherd did not answer {} within {} s", pending.method, SIDECAR_TIMEOUT_MS / 1000);
                    self.log(LogLevel::Error, message.clone());
                    self.set_status(SessionStatus::Failed { message: capitalize(&message) });
                }
            }
        }
        if let Some(slot) = &mut self.agent {
            slot.client.handle_timeout(now);
        }
        self.finish(now);
    }

    pub fn poll_action(&mut self) -> Option<HostAction> {
        self.actions.pop_front()
    }

    /// When `handle_timeout` must be called next.
    pub fn poll_timeout(&self) -> Option<u64> {
        let webview_due = self.frame_has_news().then(|| self.webview.last_post.map_or(0, |at| at + FRAME_MS));
        [self.rpc.next_deadline(), self.agent.as_ref().and_then(|slot| slot.client.poll_timeout()), webview_due]
            .into_iter()
            .flatten()
            .min()
    }

    /// Every profile the person can choose: the built-in Demo first (unless a setting redefines
    /// it), then the configured profiles in order (the host puts the built-in real agents
    /// first, then `tether.agents`, an entry of the same name replacing a built-in).
    pub fn profiles(&self) -> Vec<AgentProfile> {
        let mut profiles = Vec::new();
        if let Some(command) = &self.config.demo_agent_command
            && !self.config.profiles.iter().any(|profile| profile.name == DEMO_PROFILE)
        {
            profiles.push(AgentProfile {
                name: DEMO_PROFILE.to_owned(),
                command: command.clone(),
                args: vec!["--scenario".to_owned(), "demo".to_owned()],
                env: Default::default(),
                cwd: None,
            });
        }
        profiles.extend(self.config.profiles.iter().cloned());
        profiles
    }

    fn current_profile(&self) -> Option<AgentProfile> {
        let profiles = self.profiles();
        let selected =
            self.selected_profile.as_ref().and_then(|name| profiles.iter().find(|profile| &profile.name == name));
        selected.or(profiles.first()).cloned()
    }

    fn start_sidecar(&mut self) {
        if !self.config.workspace_trusted {
            // Nothing starts in a workspace the person has not trusted: trusting it starts
            // tetherd (`WorkspaceTrusted`).
            self.sidecar = SidecarState::Disconnected;
            self.log(LogLevel::Info, "the workspace is not trusted: tetherd and the agent are not started".to_owned());
            return self.set_status(SessionStatus::Untrusted { message: UNTRUSTED_MESSAGE.to_owned() });
        }
        self.sidecar = SidecarState::Starting;
        self.set_status(SessionStatus::starting("Starting tetherd"));
        self.actions.push_back(HostAction::StartSidecar);
    }

    /// The person trusted the workspace: what was held back starts now (tetherd, then the last
    /// session or a new one).
    fn workspace_trusted(&mut self) {
        if self.config.workspace_trusted {
            return;
        }
        self.config.workspace_trusted = true;
        self.log(LogLevel::Info, "the workspace is trusted now: starting tetherd".to_owned());
        if self.sidecar == SidecarState::Disconnected {
            self.start_sidecar();
        }
    }

    /// The person's profile named `name`, as the settings have it now.
    fn profile_named(&self, name: &str) -> Option<AgentProfile> {
        self.profiles().into_iter().find(|profile| profile.name == name)
    }

    fn select_agent(&mut self, name: String, now: u64) {
        if !self.profiles().iter().any(|profile| profile.name == name) {
            self.show(LogLevel::Error, format!("There is no agent named {name:?} in tether.agents."));
            return;
        }
        self.selected_profile = Some(name);
        self.start_session(now);
    }

    /// Stops the current agent (if any) and starts a new session with the selected profile.
    fn start_session(&mut self, now: u64) {
        match self.sidecar {
            SidecarState::Ready => {}
            // tetherd was lost (or never started): start it; the session follows its hello.
            SidecarState::Disconnected => {
                self.after_hello = AfterHello::NewSession;
                return self.start_sidecar();
            }
            // The session starts as soon as tetherd has accepted our hello.
            SidecarState::Starting | SidecarState::Greeting => {
                self.after_hello = AfterHello::NewSession;
                return;
            }
        }
        self.stop_session(now);
        self.interrupted_by = None;
        let Some(profile) = self.current_profile() else {
            self.session.agent = String::new();
            self.set_status(SessionStatus::Failed {
                message: "No agent is configured: add one to the tether.agents setting".to_owned(),
            });
            return;
        };
        self.generation += 1;
        let generation = self.generation;
        let client = self.new_client(generation);
        self.session.agent = profile.name.clone();
        self.session.agent_info = None;
        self.agent = Some(AgentSlot {
            generation,
            profile,
            agent_id: None,
            client,
            stderr_tail: VecDeque::new(),
            session_dir: None,
            unsent_audit: Vec::new(),
            replayed_through: 0,
            cancel_sent: false,
            stopping: false,
            configured: true,
            log_failed: false,
        });
        self.spawn_agent(now);
        self.refresh_permissions_view();
        self.post_snapshot(now);
    }

    /// A client for session `generation`, starting from the idle policy.
    fn new_client(&self, generation: u64) -> AcpClient {
        // Keys of different sessions never collide: a click on a stale card cannot answer a new
        // request. Rule ids, like permission keys, never repeat across sessions.
        let policy = self.idle_policy.for_new_session(self.idle_policy.mode(), generation << 32);
        let mut client =
            AcpClient::new(self.client_info(), self.config.workspace_root.clone(), generation << 32, policy);
        if self.snapshot_store().is_some() {
            client.enable_snapshots();
        }
        client
    }

    fn client_info(&self) -> ClientInfo {
        ClientInfo { name: self.config.client_name.clone(), version: self.config.client_version.clone() }
    }

    /// Stops the current session's agent (if any): requests it left waiting are settled (and
    /// audited as cancelled) before it goes, and its changes can no longer be decided on.
    fn stop_session(&mut self, now: u64) {
        if let Some(slot) = &mut self.agent {
            slot.client.handle_exited("was stopped: another session was started", true, "");
        }
        self.drain_client();
        if let Some(agent_id) = self.end_session() {
            self.sidecar_request(method::AGENT_KILL, &AgentRef { agent_id }, SidecarRequest::Kill, now);
        }
        self.load = None;
        self.actions.push_back(HostAction::ClearReviews);
        self.refresh_changes_view();
        self.set_badge(0);
    }

    /// Asks tetherd to start the current slot's agent: in the slot's session folder when it has
    /// one (the log goes on), else in a new one.
    fn spawn_agent(&mut self, now: u64) {
        let Some(slot) = &self.agent else { return };
        if !self.config.workspace_trusted || !slot.configured {
            // Neither reaches here today (tetherd is not started untrusted, and Restart refuses
            // an unconfigured agent); refusing here as well keeps it so.
            let text = format!(
                "not starting {:?}: the workspace is not trusted or the agent is not configured",
                slot.profile.name
            );
            return self.log(LogLevel::Error, text);
        }
        let profile = &slot.profile;
        // The person's keys go over the profile's variables; they are in no log and no setting.
        let mut env = profile.env.clone();
        env.extend(self.secrets.of(&profile.name).cloned().unwrap_or_default());
        let spawn = SpawnParams {
            name: profile.name.clone(),
            command: profile.command.clone(),
            args: profile.args.clone(),
            env,
            cwd: profile.cwd.clone().unwrap_or_else(|| self.config.workspace_root.clone()),
            tether_dir: self.config.tether_dir.clone(),
            session_dir: slot.session_dir.clone().filter(|_| self.config.tether_dir.is_some()),
        };
        let generation = slot.generation;
        self.log(
            LogLevel::Info,
            format!("starting agent {:?}: {} {}", profile.name, profile.command, profile.args.join(" ")),
        );
        self.sidecar_request(method::AGENT_SPAWN, &spawn, SidecarRequest::Spawn { generation }, now);
        self.set_status(SessionStatus::starting("Starting the agent"));
    }

    /// tetherd accepted the hello: reopen a session, or start one.
    fn on_hello_accepted(&mut self, now: u64) {
        match std::mem::replace(&mut self.after_hello, AfterHello::NewSession) {
            AfterHello::Reopen { dir } if self.config.tether_dir.is_some() => {
                // Agent events that arrive before the engine knows which session it shows wait:
                // they may be the running agent's it is about to go on with.
                self.held_agent_events = Some(Vec::new());
                self.set_status(SessionStatus::starting("Looking for the last session"));
                self.list_sessions(ListPurpose::Reopen { dir }, now);
            }
            AfterHello::Reopen { .. } | AfterHello::NewSession => self.start_session(now),
        }
    }

    fn list_sessions(&mut self, purpose: ListPurpose, now: u64) {
        let Some(tether_dir) = self.config.tether_dir.clone() else {
            return self.show(
                LogLevel::Info,
                "Tether keeps a history of sessions only when a workspace folder is open.".to_owned(),
            );
        };
        if !self.config.workspace_trusted {
            // tetherd keeps the history, and it does not run until the workspace is trusted.
            return self.show(LogLevel::Info, "Tether shows the history once the workspace is trusted.".to_owned());
        }
        if self.sidecar != SidecarState::Ready {
            return self.show(LogLevel::Warn, "Tether is not connected to tetherd; try again in a moment.".to_owned());
        }
        self.sidecar_request(
            method::SESSION_LIST,
            &SessionListParams { tether_dir },
            SidecarRequest::SessionList { purpose },
            now,
        );
    }

    fn on_sessions_listed(&mut self, purpose: ListPurpose, result: Result<SessionListResult, String>, now: u64) {
        match (purpose, result) {
            (ListPurpose::Reopen { dir }, Ok(listed)) => {
                let wanted = match &dir {
                    Some(dir) => listed.sessions.iter().find(|summary| &summary.dir == dir),
                    None => listed.sessions.first(),
                };
                // A session nobody has prompted in has nothing to show: a fresh one is as good,
                // unless its agent runs (then it is the one to go on with).
                match wanted.filter(|summary| summary.turns > 0 || summary.live_agent.is_some()) {
                    // Its agent is no longer one of the person's: the person's default agent
                    // starts instead, and the earlier session waits in the history.
                    Some(summary)
                        if summary.live_agent.is_none() && self.profile_named(&summary.meta.agent).is_none() =>
                    {
                        let text = format!(
                            "The earlier session {:?} used {:?}, which is not configured. It is in the history.",
                            summary.title, summary.meta.agent
                        );
                        self.release_held_agent_events(now);
                        self.start_session(now);
                        if let Some(slot) = &mut self.agent {
                            let notice = NoticeView { level: NoticeLevel::Warning, text, detail: None };
                            slot.client.thread_mut().push(Entry::Notice(notice));
                        }
                    }
                    Some(summary) => self.load_session(summary.clone(), LoadPurpose::Open, now),
                    None => {
                        self.release_held_agent_events(now);
                        self.start_session(now);
                    }
                }
                self.history = listed.sessions;
            }
            (ListPurpose::Reopen { .. }, Err(error)) => {
                self.log(LogLevel::Warn, format!("could not list the workspace's sessions: {error}"));
                self.release_held_agent_events(now);
                self.start_session(now);
            }
            (ListPurpose::History, Ok(listed)) => {
                self.history = listed.sessions;
                self.history_wanted = false;
                self.push_history();
            }
            (ListPurpose::History, Err(error)) => {
                self.show(LogLevel::Error, format!("Tether could not list the sessions: {error}"));
            }
        }
    }

    /// Starts reading a session's log from tetherd, to show it (`Open`) or to export it.
    fn load_session(&mut self, summary: SessionSummary, purpose: LoadPurpose, now: u64) {
        let Some(tether_dir) = self.config.tether_dir.clone() else { return };
        self.next_load += 1;
        if purpose == LoadPurpose::Open {
            self.stop_session(now);
            self.generation += 1;
            self.session.agent = summary.meta.agent.clone();
            self.session.agent_info = None;
            self.set_status(SessionStatus::starting("Reading the session"));
            self.post_snapshot(now);
        }
        let policy = self.idle_policy.for_new_session(self.idle_policy.mode(), self.generation << 32);
        let replay =
            LogReplay::new(self.client_info(), self.config.workspace_root.clone(), self.generation << 32, policy);
        let params = SessionReadParams { tether_dir, dir: summary.dir.clone(), offset: 0 };
        self.load = Some(LogLoad { id: self.next_load, summary, replay, purpose });
        self.sidecar_request(method::SESSION_READ, &params, SidecarRequest::SessionRead { load: self.next_load }, now);
    }

    fn on_session_read(&mut self, load_id: u64, result: Result<SessionReadResult, String>, now: u64) {
        let Some(load) = self.load.as_mut().filter(|load| load.id == load_id) else { return };
        let piece = match result {
            Ok(piece) => piece,
            Err(error) => {
                let load = self.load.take().expect("the load was found above");
                let message = format!("Tether could not read the session {:?}: {error}", load.summary.title);
                self.show(LogLevel::Error, message.clone());
                if load.purpose == LoadPurpose::Open {
                    self.release_held_agent_events(now);
                    self.set_status(SessionStatus::Failed { message });
                }
                return;
            }
        };
        load.replay.feed(&read_log(&piece.text));
        if !piece.eof {
            let params = SessionReadParams {
                tether_dir: self.config.tether_dir.clone().unwrap_or_default(),
                dir: load.summary.dir.clone(),
                offset: piece.next,
            };
            return self.sidecar_request(
                method::SESSION_READ,
                &params,
                SidecarRequest::SessionRead { load: load_id },
                now,
            );
        }
        let load = self.load.take().expect("the load was found above");
        match load.purpose {
            LoadPurpose::Open => self.open_loaded(load, now),
            LoadPurpose::Export => {
                let (client, _) = load.replay.finish();
                let summary = &load.summary;
                let action =
                    markdown_export(&summary.title, &summary.meta.agent, Some(summary.meta.created.clone()), &client);
                self.actions.push_back(action);
            }
        }
    }

    /// The log of the session to open has been folded: show it, and go on with its agent if it
    /// still runs (a window reload), else start it again and resume the agent's session.
    fn open_loaded(&mut self, load: LogLoad, now: u64) {
        let interrupted_by = self.interrupted_by.take();
        let replayed_through = load.replay.last_seq();
        let (mut client, problems) = load.replay.finish();
        if self.snapshot_store().is_some() {
            client.enable_snapshots();
        }
        for problem in problems {
            self.log(LogLevel::Warn, format!("{}: {problem}", load.summary.dir));
        }
        let meta = &load.summary.meta;
        // The profile as the settings have it now (the Demo agent's path changes with every
        // version of the extension). The log only names it: a profile the person no longer has
        // leaves the session to be read, never run from what the log recorded.
        let found = self.profile_named(&meta.agent);
        let configured = found.is_some();
        let profile = found.unwrap_or_else(|| AgentProfile {
            name: meta.agent.clone(),
            command: String::new(),
            args: Vec::new(),
            env: Default::default(),
            cwd: None,
        });
        self.session.agent = profile.name.clone();
        self.session.agent_info = client.agent_info().map(str::to_owned);
        let live = load.summary.live_agent;
        self.agent = Some(AgentSlot {
            generation: self.generation,
            profile,
            agent_id: live,
            client,
            stderr_tail: VecDeque::new(),
            session_dir: Some(load.summary.dir.clone()),
            unsent_audit: Vec::new(),
            // Only the agent taken over has events in the log already; a new one starts after it.
            replayed_through: if live.is_some() { replayed_through } else { 0 },
            cancel_sent: false,
            stopping: false,
            configured,
            log_failed: false,
        });
        self.log(LogLevel::Info, format!("reopened the session in {} ({} events)", load.summary.dir, replayed_through));
        match live {
            Some(agent_id) => {
                self.log(LogLevel::Info, format!("going on with its agent {agent_id}, still running"));
                let slot = self.agent.as_mut().expect("the slot was just made");
                slot.client.continue_live(now);
                let status = if slot.client.is_ready() {
                    SessionStatus::Ready
                } else if slot.client.is_closed() {
                    SessionStatus::Exited { message: "The agent has exited".to_owned() }
                } else {
                    SessionStatus::starting("Initializing the agent")
                };
                self.set_status(status);
                self.release_held_agent_events(now);
            }
            None if !configured => {
                self.release_held_agent_events(now);
                let name = &load.summary.meta.agent;
                let text = format!(
                    "This session used {name:?}, which is not configured, so Tether does not start it. Choose an agent in the header to go on in a new session."
                );
                let slot = self.agent.as_mut().expect("the slot was just made");
                // A turn the log left open ends here: no agent will ever answer it.
                if !slot.client.is_closed() {
                    slot.client.handle_exited("was no longer running when Tether came back", false, "");
                }
                self.drain_client();
                let slot = self.agent.as_mut().expect("the slot was just made");
                slot.client.thread_mut().push(Entry::Notice(NoticeView {
                    level: NoticeLevel::Warning,
                    text,
                    detail: None,
                }));
                self.set_status(SessionStatus::Failed {
                    message: format!("{name:?} is not configured: choose an agent"),
                });
            }
            None => {
                self.release_held_agent_events(now);
                if let Some(why) = interrupted_by {
                    // The log ends where tetherd was lost: what it left open (a running turn, a
                    // question) ends with why, rather than as if Tether had merely been away.
                    let slot = self.agent.as_mut().expect("the slot was just made");
                    if !slot.client.is_closed() {
                        slot.client.handle_exited(&why, false, "");
                    }
                }
                self.restart_agent(now);
            }
        }
        self.refresh_permissions_view();
        self.refresh_changes_view();
        self.post_snapshot(now);
    }

    /// tetherd answered the kill of a stopped agent (or did not in time): Restart may go ahead.
    fn on_agent_stopped(&mut self, generation: u64, result: Result<(), String>) {
        if let Err(error) = result {
            // An agent tetherd no longer knows has exited already; one it could not be heard
            // about is left to tetherd, which kills its agents when it exits.
            self.log(LogLevel::Warn, format!("stopping the agent: {error}"));
        }
        if let Some(slot) = self.agent.as_mut().filter(|slot| slot.generation == generation) {
            slot.stopping = false;
            self.set_status(SessionStatus::Exited { message: "The agent was stopped".to_owned() });
        }
    }

    /// Hands the agent events held while the session to show was being found to their session.
    fn release_held_agent_events(&mut self, now: u64) {
        for line in self.held_agent_events.take().unwrap_or_default() {
            self.handle_sidecar_line(&line, now);
        }
    }

    fn set_follow_agent(&mut self, on: bool) {
        if self.session.follow_agent != on {
            self.session.follow_agent = on;
            self.webview.session_changed = true;
        }
    }

    /// The agent needs the person to sign in. Keys given earlier for its profile are in its
    /// environment already: the agent is asked to use them first (once per agent process), and
    /// the person is asked only when it refuses or there are none.
    /// "Sign in" after the person dismissed the choice: the same choice again.
    fn sign_in_again(&mut self) {
        match &self.agent {
            Some(slot) if slot.client.awaits_sign_in_choice() => {
                let methods = slot.client.auth_methods().to_vec();
                self.ask_authentication(methods);
            }
            _ => self.show(LogLevel::Info, "The agent is not waiting for a sign-in.".to_owned()),
        }
    }

    fn ask_authentication(&mut self, methods: Vec<AuthMethodView>) {
        let Some(slot) = &mut self.agent else { return };
        if self.signed_in_with_kept_keys != Some(slot.generation)
            && let Some(kept) = self.secrets.of(&slot.profile.name)
            && let Some(method) = methods.iter().find(|method| match &method.kind {
                AuthMethodKind::EnvVar { vars } => {
                    vars.iter().any(|var| kept.contains_key(&var.name))
                        && vars.iter().all(|var| var.optional || kept.contains_key(&var.name))
                }
                _ => false,
            })
        {
            self.signed_in_with_kept_keys = Some(slot.generation);
            if let Ok(SignIn::Sent) = slot.client.sign_in(&method.id, false) {
                let text = format!("signing in to {:?} with the kept keys ({})", slot.profile.name, method.name);
                self.log(LogLevel::Info, text);
                return self.set_status(SessionStatus::starting("Signing in"));
            }
        }
        let Some(slot) = &self.agent else { return };
        let action = HostAction::AskAuthentication {
            agent: slot.profile.name.clone(),
            methods: methods_for_profile(&methods, &slot.profile),
        };
        self.actions.push_back(action);
        self.set_status(SessionStatus::starting("Sign in needed"));
    }

    /// The person chose how to sign in, giving `env` for an `envVar` method: kept for the
    /// profile (in memory) and the agent started again with it, or `authenticate` sent to the
    /// running agent.
    fn authenticate(&mut self, method_id: &str, env: std::collections::BTreeMap<String, String>, now: u64) {
        let Some(slot) = &mut self.agent else {
            return self.show(LogLevel::Info, "There is no agent session to sign in to.".to_owned());
        };
        let with_env = !env.is_empty();
        if with_env {
            self.secrets.add(&slot.profile.name, env);
        }
        match slot.client.sign_in(method_id, with_env) {
            Ok(SignIn::Sent) => self.set_status(SessionStatus::starting("Signing in")),
            Ok(SignIn::RestartAgent) => self.restart_to_sign_in(now),
            Err(error) => self.show(LogLevel::Warn, format!("Tether: {error}.")),
        }
    }

    /// Stops the current agent and, once tetherd says it is gone (its session log is free
    /// again), starts it anew in the same session (see `KillToSignIn`).
    fn restart_to_sign_in(&mut self, now: u64) {
        let Some(slot) = &mut self.agent else { return };
        slot.client.handle_exited("was stopped to sign in", true, "");
        let generation = slot.generation;
        let running = slot.agent_id.take();
        self.drain_client();
        self.set_status(SessionStatus::starting("Starting the agent again to sign in"));
        match running {
            Some(agent_id) if self.sidecar == SidecarState::Ready => self.sidecar_request(
                method::AGENT_KILL,
                &AgentRef { agent_id },
                SidecarRequest::KillToSignIn { generation },
                now,
            ),
            _ => self.restart_agent(now),
        }
    }

    /// Restart (the button, or the command): start the current session's agent again.
    fn restart(&mut self, now: u64) {
        let dir = self.agent.as_ref().and_then(|slot| slot.session_dir.clone());
        match self.sidecar {
            SidecarState::Ready => {}
            // tetherd is gone and took the agent with it: reopen the session from its log once
            // a new tetherd is up.
            SidecarState::Disconnected => {
                self.after_hello = AfterHello::Reopen { dir };
                return self.start_sidecar();
            }
            SidecarState::Starting | SidecarState::Greeting => return,
        }
        match &self.agent {
            Some(slot) if !slot.configured => {
                let text =
                    format!("{:?} is not configured: choose an agent to start a new session.", slot.profile.name);
                self.show(LogLevel::Info, format!("Tether: {text}"));
            }
            Some(slot) if slot.stopping => {
                self.show(LogLevel::Info, "Tether is still stopping the agent; restart it in a moment.".to_owned())
            }
            Some(slot) if slot.client.is_closed() => self.restart_agent(now),
            Some(_) => self.show(LogLevel::Info, "The agent is running; there is nothing to restart.".to_owned()),
            None => self.start_session(now),
        }
    }

    /// Starts a new agent for the current slot's thread, resuming the agent's session.
    fn restart_agent(&mut self, now: u64) {
        self.generation += 1;
        let generation = self.generation;
        let Some(slot) = &mut self.agent else { return };
        slot.generation = generation;
        slot.agent_id = None;
        slot.replayed_through = 0;
        slot.cancel_sent = false;
        slot.log_failed = false;
        slot.stderr_tail.clear();
        slot.client.prepare_new_agent(now);
        self.drain_client();
        self.spawn_agent(now);
    }

    fn show_history(&mut self, now: u64) {
        // The agent's own list, when it keeps one, is merged in when it comes (the picker is
        // refreshed then), so that a slow agent does not hold Tether's list back.
        if let Some(slot) = &mut self.agent {
            slot.client.list_agent_sessions(now);
        }
        self.history_wanted = true;
        self.list_sessions(ListPurpose::History, now);
    }

    /// Shows the history picker: Tether's sessions, then those only the agent knows.
    fn push_history(&mut self) {
        let current = self.agent.as_ref().and_then(|slot| slot.session_dir.clone());
        let current_agent_session = self.agent.as_ref().and_then(|slot| slot.client.session_id().map(str::to_owned));
        let mut items: Vec<HistoryItem> = self
            .history
            .iter()
            .map(|summary| HistoryItem {
                id: summary.dir.clone(),
                title: summary.title.clone(),
                agent: summary.meta.agent.clone(),
                last_activity: Some(summary.last_activity.clone()),
                turns: Some(summary.turns),
                source: HistorySource::Tether,
                current: current.as_ref() == Some(&summary.dir),
                live: summary.live_agent.is_some(),
            })
            .collect();
        let agent = self.session.agent.clone();
        let known = |id: &str| {
            self.history.iter().any(|summary| summary.agent_session_id.as_deref() == Some(id))
                || current_agent_session.as_deref() == Some(id)
        };
        items.extend(self.agent_history.iter().filter(|session| !known(&session.session_id)).map(|session| {
            HistoryItem {
                id: format!("{AGENT_SESSION_PREFIX}{}", session.session_id),
                title: session.title.clone().unwrap_or_else(|| UNTITLED_SESSION.to_owned()),
                agent: agent.clone(),
                last_activity: session.updated_at.clone(),
                turns: None,
                source: HistorySource::Agent,
                current: false,
                live: false,
            }
        }));
        self.actions.push_back(HostAction::ShowHistory { items });
    }

    /// The history's session `id`, as last listed.
    fn history_session(&mut self, id: &str) -> Option<SessionSummary> {
        let found = self.history.iter().find(|summary| summary.dir == id).cloned();
        if found.is_none() {
            self.show(
                LogLevel::Warn,
                "Tether does not know that session (any more); show the history again.".to_owned(),
            );
        }
        found
    }

    fn is_current_session(&self, id: &str) -> bool {
        self.agent.as_ref().is_some_and(|slot| slot.session_dir.as_deref() == Some(id))
    }

    fn open_history_session(&mut self, id: &str, now: u64) {
        if self.is_current_session(id) {
            return; // It is on screen already.
        }
        if let Some(agent_session) = id.strip_prefix(AGENT_SESSION_PREFIX) {
            // A session only the agent keeps: a new Tether session that loads it, showing what
            // the agent replays.
            let agent_session = agent_session.to_owned();
            self.start_session(now);
            if let Some(slot) = &mut self.agent {
                slot.client.resume_agent_session(agent_session);
            }
            return;
        }
        if let Some(summary) = self.history_session(id) {
            self.load_session(summary, LoadPurpose::Open, now);
        }
    }

    fn rename_session(&mut self, id: String, title: String, now: u64) {
        let (Some(tether_dir), Some(_)) = (self.config.tether_dir.clone(), self.history_session(&id)) else { return };
        let params = SessionRenameParams { tether_dir, dir: id, title };
        self.sidecar_request(method::SESSION_RENAME, &params, SidecarRequest::SessionChange, now);
    }

    fn delete_session(&mut self, id: String, now: u64) {
        let (Some(tether_dir), Some(_)) = (self.config.tether_dir.clone(), self.history_session(&id)) else { return };
        if self.is_current_session(&id) {
            return self.show(
                LogLevel::Info,
                "That session is the one shown now: start a new session before deleting it.".to_owned(),
            );
        }
        self.sidecar_request(
            method::SESSION_DELETE,
            &SessionDirRef { tether_dir, dir: id },
            SidecarRequest::SessionChange,
            now,
        );
    }

    fn export_session(&mut self, id: Option<String>, format: ExportFormat, now: u64) {
        let current = self.agent.as_ref().and_then(|slot| slot.session_dir.clone());
        let id = id.or(current.clone());
        let summary = id.as_ref().and_then(|id| self.history.iter().find(|summary| &summary.dir == id).cloned());
        let is_current = id == current;
        match format {
            ExportFormat::Jsonl => {
                let Some(dir) = id.filter(|_| is_current || summary.is_some()) else {
                    return self.show(
                        LogLevel::Info,
                        "This session has no log to export (it is kept once the agent has started, in a workspace folder)."
                            .to_owned(),
                    );
                };
                let title = summary.map_or_else(|| "session".to_owned(), |summary| summary.title);
                self.actions.push_back(HostAction::ExportFile {
                    source: format!("{dir}/{EVENTS_FILE}"),
                    suggested_name: export_file_name(&title, "jsonl"),
                });
            }
            // Another session of the history: its log is read and folded first.
            ExportFormat::Markdown if !is_current && let Some(summary) = summary => {
                self.load_session(summary, LoadPurpose::Export, now);
            }
            ExportFormat::Markdown => {
                let Some(slot) = &self.agent else {
                    return self.show(LogLevel::Info, "There is no session to export.".to_owned());
                };
                let title = summary.map(|summary| summary.title).unwrap_or_else(|| {
                    let first_prompt = slot.client.thread().entries().iter().find_map(|entry| match entry {
                        Entry::User(message) => Some(prompt_title(&message.text)),
                        _ => None,
                    });
                    first_prompt.unwrap_or_else(|| UNTITLED_SESSION.to_owned())
                });
                let action = markdown_export(&title, &slot.profile.name, None, &slot.client);
                self.actions.push_back(action);
            }
        }
    }

    fn prompt(&mut self, text: &str, attachments: &[PromptAttachment], now: u64) {
        if text.trim().is_empty() && attachments.is_empty() {
            return;
        }
        if let Some(slot) = &self.agent
            && slot.configured
            && slot.client.is_closed()
            && !slot.stopping
            && self.load.is_none()
        {
            // The agent exited (or was stopped, or tetherd was lost with it): the person going
            // on is reason enough to start it again, resuming its session; the prompt goes once
            // that session is ready.
            self.log(LogLevel::Info, "the agent is not running: starting it again for the prompt".to_owned());
            let generation = match self.sidecar {
                SidecarState::Ready => {
                    self.restart_agent(now);
                    Some(self.generation)
                }
                // Without tetherd the session is reopened from its log once one runs (it is
                // being started already unless it is `Disconnected`): whichever session that
                // brings is the one the prompt goes to.
                SidecarState::Disconnected => {
                    self.restart(now);
                    None
                }
                SidecarState::Starting | SidecarState::Greeting => None,
            };
            self.prompt_after_restart =
                Some(PromptAfterRestart { generation, text: text.to_owned(), attachments: attachments.to_vec() });
            return;
        }
        let result = match &mut self.agent {
            Some(slot) => slot.client.prompt(text, attachments, now),
            None => Err(IntentError::NotReady),
        };
        if let Err(error) = result {
            self.show(LogLevel::Warn, format!("The prompt was not sent: {error}."));
        }
    }

    fn cancel(&mut self, now: u64) {
        if let Some(slot) = &mut self.agent {
            slot.client.cancel(now);
            // Until the agent ends the turn, it may be one that ignores cancels: Stop agent is
            // offered at once, as there is no telling how long a well-behaved agent takes.
            slot.cancel_sent = slot.client.thread().turn() == &TurnState::Running;
        }
    }

    /// Stop (the header's button, or the command): kill the agent process, because it hangs
    /// while starting or does not end a cancelled turn. What it left unfinished is settled now,
    /// the thread says why it stopped, and Restart brings it back once tetherd says it is gone.
    fn stop_agent(&mut self, now: u64) {
        let starting = matches!(self.session.status, SessionStatus::Starting { .. });
        let Some(slot) = self.agent.as_mut().filter(|slot| !slot.client.is_closed()) else {
            return self.show(LogLevel::Info, "No agent is running; there is nothing to stop.".to_owned());
        };
        let notice = if slot.cancel_sent {
            "The agent did not stop when asked; Tether stopped it."
        } else if starting {
            "The agent did not finish starting; Tether stopped it."
        } else {
            "Tether stopped the agent."
        };
        slot.client.handle_stopped(notice);
        slot.cancel_sent = false;
        // Whatever the old agent still says is dropped from here on (its exit included), and a
        // spawn still on its way is killed when it is answered (its generation is not current).
        self.generation += 1;
        slot.generation = self.generation;
        let running = slot.agent_id.take();
        slot.stopping = running.is_some() && self.sidecar == SidecarState::Ready;
        let generation = slot.generation;
        self.log(LogLevel::Info, format!("stopping the agent on the person's word: {notice}"));
        self.drain_client();
        match running {
            Some(agent_id) if self.sidecar == SidecarState::Ready => {
                self.sidecar_request(
                    method::AGENT_KILL,
                    &AgentRef { agent_id },
                    SidecarRequest::Stop { generation },
                    now,
                );
                self.set_status(SessionStatus::starting("Stopping the agent"));
            }
            _ => self.set_status(SessionStatus::Exited { message: "The agent was stopped".to_owned() }),
        }
    }

    fn answer_permission(&mut self, key: PermissionKey, option_id: &str, _now: u64) {
        let result = match &mut self.agent {
            Some(slot) => slot.client.answer_permission(key, option_id),
            None => Err(IntentError::UnknownPermission),
        };
        if let Err(error) = result {
            self.show(LogLevel::Warn, format!("The answer was not sent: {error}."));
        }
    }

    /// A review decision, from the webview or the diff editor.
    fn review(&mut self, intent: ReviewIntent, now: u64) {
        match &mut self.agent {
            Some(slot) => {
                if let Err(error) = slot.client.review(intent, now) {
                    self.show(LogLevel::Warn, format!("Tether: {error}."));
                }
            }
            None => self.show(LogLevel::Info, "That change belongs to a session that has ended.".to_owned()),
        }
    }

    fn handle_sidecar_line(&mut self, line: &str, now: u64) {
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
                    && let Some(held) = &mut self.held_agent_events =>
            {
                held.push(line.to_owned());
            }
            Message::Notification { method, params } => self.handle_sidecar_notification(&method, params, now),
            Message::Request { id, method, .. } => {
                // tetherd makes no requests of the host in this version of the wire.
                let error = RpcError::method_not_found();
                self.sidecar_write(jsonrpc::encode_error(&id, &error));
                self.log(LogLevel::Warn, format!("tetherd asked for {method}, which this host does not offer"));
            }
        }
    }

    fn handle_sidecar_response(&mut self, id: &RequestId, result: Result<&RawValue, RpcError>, now: u64) {
        let Some(pending) = self.rpc.take(id) else {
            self.log(LogLevel::Warn, format!("tetherd answered a request Tether never sent (id {id})"));
            return;
        };
        match (pending.tag, result) {
            (SidecarRequest::Hello, Ok(_)) => {
                self.sidecar = SidecarState::Ready;
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
                match (spawned, &mut self.agent) {
                    (Ok(spawned), Some(slot)) if slot.generation == generation => {
                        slot.agent_id = Some(spawned.agent_id);
                        // A continued folder keeps the name the history gave it (tetherd answers
                        // with the resolved path, which differs when the path has a symlink).
                        if slot.session_dir.is_none() {
                            slot.session_dir = spawned.session_dir;
                        }
                        let unsent = std::mem::take(&mut slot.unsent_audit);
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
            (SidecarRequest::Spawn { generation }, Err(error)) => {
                if self.agent.as_ref().is_some_and(|slot| slot.generation == generation) {
                    let name = self.session.agent.clone();
                    let message = format!("Could not start the agent {name:?}: {}", error.message);
                    self.drop_prompt_after_restart("the agent could not be started");
                    self.show(LogLevel::Error, format!("Tether: {message}"));
                    if let Some(slot) = &mut self.agent {
                        slot.client.thread_mut().push(Entry::Notice(NoticeView {
                            level: NoticeLevel::Error,
                            text: message.clone(),
                            detail: Some(format!("{} {}", slot.profile.command, slot.profile.args.join(" "))),
                        }));
                    }
                    self.set_status(SessionStatus::Failed { message });
                }
            }
            (tag @ (SidecarRequest::Snapshot { generation } | SidecarRequest::Scan { generation }), result) => {
                let result = result.map(|raw| raw.get().to_owned()).map_err(|error| error.message);
                self.on_snapshot_answer(tag, generation, result);
            }
            (SidecarRequest::Terminal { generation, call }, result) => {
                if let Some(slot) = self.agent.as_mut().filter(|slot| slot.generation == generation) {
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
                if self.agent.as_ref().is_some_and(|slot| slot.generation == generation) {
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

    fn handle_sidecar_notification(&mut self, method: &str, params: Option<&RawValue>, now: u64) {
        let params = params.map_or("null", RawValue::get);
        match method {
            method::AGENT_MESSAGE => match serde_json::from_str::<AgentMessage<'_>>(params) {
                Ok(message) => {
                    if let Some(slot) = self.live_slot(message.agent_id, message.seq) {
                        slot.client.handle_message(message.message.get(), now);
                    }
                }
                Err(error) => self.log(LogLevel::Error, format!("tetherd sent a malformed agent/message: {error}")),
            },
            method::AGENT_BAD_LINE => match serde_json::from_str::<AgentBadLine>(params) {
                Ok(bad) => {
                    if let Some(slot) = self.agent_slot(bad.agent_id) {
                        slot.client.handle_bad_line(bad.kind, bad.len, &bad.preview, &bad.error);
                    }
                }
                Err(error) => self.log(LogLevel::Error, format!("tetherd sent a malformed agent/badLine: {error}")),
            },
            method::AGENT_STDERR => match serde_json::from_str::<AgentStderr>(params) {
                Ok(stderr) => {
                    let mut name = None;
                    if let Some(slot) = self.live_slot(stderr.agent_id, stderr.seq) {
                        keep_tail(&mut slot.stderr_tail, &stderr.line);
                        name = Some(slot.profile.name.clone());
                    }
                    let name = name.unwrap_or_else(|| format!("agent {}", stderr.agent_id));
                    self.log(LogLevel::Info, format!("[{name}] {}", stderr.line));
                }
                Err(error) => self.log(LogLevel::Error, format!("tetherd sent a malformed agent/stderr: {error}")),
            },
            method::TETHERD_STOPPING => match serde_json::from_str::<TetherdStopping>(params) {
                Ok(stopping) => {
                    self.log(LogLevel::Info, format!("tetherd is stopping ({})", stopping.reason));
                    self.sidecar_stopping = Some(stopping.reason);
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
                    if let Some(slot) = &mut self.agent {
                        slot.client.handle_terminal_data(data.terminal_id, &data.data, now);
                    }
                }
                Err(error) => self.log(LogLevel::Error, format!("tetherd sent a malformed terminal/data: {error}")),
            },
            method::TERMINAL_EXITED => match serde_json::from_str::<TerminalExited>(params) {
                Ok(exited) => {
                    if let Some(slot) = &mut self.agent {
                        slot.client.handle_terminal_exited(exited, now);
                    }
                }
                Err(error) => self.log(LogLevel::Error, format!("tetherd sent a malformed terminal/exited: {error}")),
            },
            _ => self.log(LogLevel::Debug, format!("ignored a notification from tetherd: {method}")),
        }
    }

    /// tetherd could not write the session's log and is ending the agent: the turn ends, what
    /// waits for the agent is settled, and the person is told which log and why.
    fn on_agent_log_failed(&mut self, failed: AgentLogFailed) {
        let AgentLogFailed { agent_id, path, error } = failed;
        let text = format!(
            "Tether cannot write this session's log {path} ({error}), so it stopped the agent: the session does not go on unrecorded. Make room on the disk (or fix the file), then Restart or send a prompt to go on."
        );
        self.log(LogLevel::Error, text.clone());
        let Some(slot) = self.agent_slot(agent_id) else { return };
        slot.log_failed = true;
        slot.client.handle_log_failed(&text);
        self.drop_prompt_after_restart("the session's log cannot be written");
        self.show(LogLevel::Error, text);
        self.set_status(SessionStatus::Exited {
            message: "The agent was stopped: the session's log cannot be written".to_owned(),
        });
    }

    fn on_agent_exited(&mut self, exited: AgentExited) {
        let description = match (exited.code, exited.signal) {
            (_, Some(signal)) => format!("was ended by signal {signal}"),
            (Some(code), None) => format!("exited with code {code}"),
            (None, None) => "exited".to_owned(),
        };
        let Some(slot) = self.live_slot(exited.agent_id, exited.seq) else {
            self.log(LogLevel::Info, format!("a previous agent {description}"));
            return;
        };
        if slot.log_failed {
            return self.log(LogLevel::Info, format!("the agent tetherd stopped for its log {description}"));
        }
        let tail = slot.stderr_tail.iter().cloned().collect::<Vec<_>>().join("\n");
        slot.client.handle_exited(&description, exited.killed, &tail);
        let name = slot.profile.name.clone();
        self.drop_prompt_after_restart(&format!("the agent {description}"));
        self.log(LogLevel::Info, format!("agent {name:?} {description}"));
        if !exited.killed {
            self.show(
                LogLevel::Error,
                format!(
                    "Tether: the agent {name:?} {description}. Restart it, or send a prompt, to go on with the session."
                ),
            );
        }
        self.set_status(SessionStatus::Exited { message: format!("The agent {description}") });
    }

    /// The slot of the current session if `agent_id` is its agent and the event numbered `seq`
    /// in the session's log is not in the thread already (it was replayed from the log after a
    /// window reload); other events are dropped here.
    fn live_slot(&mut self, agent_id: AgentId, seq: Option<u64>) -> Option<&mut AgentSlot> {
        self.agent_slot(agent_id).filter(|slot| seq.is_none_or(|seq| seq > slot.replayed_through))
    }

    /// The slot of the current session if `agent_id` is its agent; messages from an agent that
    /// was replaced are dropped here.
    fn agent_slot(&mut self, agent_id: AgentId) -> Option<&mut AgentSlot> {
        self.agent.as_mut().filter(|slot| slot.agent_id == Some(agent_id))
    }

    /// After every input: move what the ACP client produced to the sidecar, the header, the log
    /// and the webview.
    fn finish(&mut self, now: u64) {
        self.now = now;
        self.drain_client();
        let can_restart =
            self.agent.as_ref().is_some_and(|slot| slot.configured && slot.client.is_closed() && !slot.stopping)
                && self.load.is_none();
        if self.session.can_restart != can_restart {
            self.session.can_restart = can_restart;
            self.webview.session_changed = true;
        }
        let starting = matches!(self.session.status, SessionStatus::Starting { .. });
        let can_stop = self.sidecar == SidecarState::Ready
            && self.agent.as_mut().is_some_and(|slot| {
                if slot.client.thread().turn() != &TurnState::Running {
                    slot.cancel_sent = false;
                }
                !slot.client.is_closed() && (starting || slot.cancel_sent)
            });
        if self.session.can_stop != can_stop {
            self.session.can_stop = can_stop;
            self.webview.session_changed = true;
        }
        let can_sign_in = self.agent.as_ref().is_some_and(|slot| slot.client.awaits_sign_in_choice());
        if self.session.can_sign_in != can_sign_in {
            self.session.can_sign_in = can_sign_in;
            self.webview.session_changed = true;
        }
        self.flush_webview(now);
    }

    fn drain_client(&mut self) {
        // Reacting to an event can make the client say more (a snapshot taken releases the held
        // prompt), so this goes round until it has nothing left.
        while self.drain_client_once() {}
    }

    /// Moves what the client produced; returns whether it raised events (which may have made
    /// it produce more).
    fn drain_client_once(&mut self) -> bool {
        let Some(slot) = &mut self.agent else { return false };
        let mut writes = String::new();
        if let Some(agent_id) = slot.agent_id {
            while let Some(line) = slot.client.poll_outgoing() {
                // The line is JSON the engine encoded itself, so it is embedded as it is: no
                // re-escaping, no second parse.
                writes.push_str(&format!(
                    r#"{{"jsonrpc":"2.0","method":"{}","params":{{"agentId":{agent_id},"message":{line}}}}}"#,
                    method::AGENT_SEND
                ));
                writes.push('\n');
            }
        }
        let mut events = Vec::new();
        while let Some(event) = slot.client.poll_event() {
            events.push(event);
        }
        let patches = slot.client.thread_mut().take_patches();
        if !writes.is_empty() {
            self.actions.push_back(HostAction::SidecarWrite { data: writes });
        }
        if self.webview.ready {
            self.webview.patches.extend(patches);
        }
        let raised = !events.is_empty();
        for event in events {
            self.on_client_event(event);
        }
        raised
    }

    fn on_client_event(&mut self, event: AcpEvent) {
        match event {
            AcpEvent::Initialized { agent } => {
                self.log(
                    LogLevel::Info,
                    format!("agent initialized: {}", agent.as_deref().unwrap_or("(no agentInfo)")),
                );
                self.session.agent_info = agent;
                self.set_status(SessionStatus::starting("Creating the session"));
            }
            AcpEvent::SessionReady { session_id } => {
                self.log(LogLevel::Info, format!("session {session_id} ready"));
                self.set_status(SessionStatus::Ready);
                self.send_prompt_after_restart();
            }
            AcpEvent::Failed { message } => {
                self.drop_prompt_after_restart(&message);
                self.log(LogLevel::Error, message.clone());
                self.set_status(SessionStatus::Failed { message: capitalize(&message) });
            }
            AcpEvent::ProtocolProblem { message } => self.log(LogLevel::Warn, message),
            AcpEvent::AuthRequired { methods } => self.ask_authentication(methods),
            AcpEvent::PermissionsWaiting { count } => self.set_badge(count),
            AcpEvent::PolicyChanged => self.refresh_permissions_view(),
            AcpEvent::ControlsChanged => self.refresh_controls_view(),
            AcpEvent::Host(action) => self.actions.push_back(*action),
            AcpEvent::TakeSnapshot => self.take_snapshot(),
            AcpEvent::ScanChanges { base } => self.scan_changes(base),
            AcpEvent::ChangesChanged => self.refresh_changes_view(),
            AcpEvent::Terminal(call) => self.terminal_call(call),
            AcpEvent::ToolLocation { path, line } => {
                if self.session.follow_agent {
                    self.actions.push_back(HostAction::RevealLocation { path, line });
                }
            }
            AcpEvent::AgentSessions(listed) => {
                match listed {
                    Ok(sessions) => self.agent_history = sessions,
                    Err(error) => self.log(LogLevel::Warn, format!("the agent could not list its sessions: {error}")),
                }
                // Tether's list is shown already (or is on its way, and takes this with it).
                if !self.history_wanted {
                    self.push_history();
                }
            }
            AcpEvent::Audit(record) => {
                let record = *record;
                let record = match serde_json::to_string(&record) {
                    Ok(record) => record,
                    Err(error) => {
                        return self.log(LogLevel::Error, format!("could not encode an audit record: {error}"));
                    }
                };
                match self.agent.as_mut() {
                    Some(AgentSlot { agent_id: Some(agent_id), .. }) => {
                        let agent_id = *agent_id;
                        self.send_audit(agent_id, &record);
                    }
                    Some(slot) => slot.unsent_audit.push(record),
                    None => self.log(LogLevel::Info, format!("audit (no session to record it in): {record}")),
                }
            }
        }
    }

    /// The agent started again for a prompt has its session: the prompt goes now.
    fn send_prompt_after_restart(&mut self) {
        let Some(slot) = &mut self.agent else { return };
        let Some(waiting) = self
            .prompt_after_restart
            .take_if(|waiting| waiting.generation.is_none_or(|generation| generation == slot.generation))
        else {
            return;
        };
        if let Err(error) = slot.client.prompt(&waiting.text, &waiting.attachments, self.now) {
            self.show(LogLevel::Warn, format!("The prompt was not sent: {error}."));
        }
    }

    /// The agent started again for a prompt did not get as far as a session (`why`): the person
    /// is told the prompt did not go, so that it can be sent again.
    fn drop_prompt_after_restart(&mut self, why: &str) {
        if let Some(waiting) = self.prompt_after_restart.take() {
            self.show(LogLevel::Warn, format!("The prompt {:?} was not sent: {why}.", prompt_title(&waiting.text)));
        }
    }

    /// Sends a client's terminal request or message to tetherd, for the agent of its session.
    fn terminal_call(&mut self, call: TerminalCall) {
        let Some(slot) = &mut self.agent else { return };
        let generation = slot.generation;
        let (Some(agent_id), SidecarState::Ready) = (slot.agent_id, self.sidecar) else {
            if let TerminalCall::Create { call, .. } | TerminalCall::Request { call, .. } = call {
                let error =
                    RpcError::internal_error().data(serde_json::Value::String("tetherd is not connected".to_owned()));
                slot.client.handle_terminal_answer(call, Err(error), self.now);
            }
            return;
        };
        let deadline = (!call.waits_for_the_command()).then_some(self.now + TERMINAL_TIMEOUT_MS);
        let line = match call {
            TerminalCall::Create { call, command, args, shell, env, cwd, output_byte_limit } => {
                let params = TerminalCreateParams {
                    agent_id,
                    command,
                    args,
                    shell,
                    env,
                    cwd,
                    output_byte_limit,
                    cols: TERMINAL_COLS,
                    rows: TERMINAL_ROWS,
                };
                let tag = SidecarRequest::Terminal { generation, call };
                self.rpc.request(method::TERMINAL_CREATE, &params, tag, deadline).1
            }
            TerminalCall::Request { call, method, terminal } => {
                let tag = SidecarRequest::Terminal { generation, call };
                self.rpc.request(method, &TerminalRef { terminal_id: terminal }, tag, deadline).1
            }
            TerminalCall::Input { terminal, data } => {
                jsonrpc::encode_notification(method::TERMINAL_INPUT, &TerminalInput { terminal_id: terminal, data })
            }
            TerminalCall::Resize { terminal, cols, rows } => jsonrpc::encode_notification(
                method::TERMINAL_RESIZE,
                &TerminalResize { terminal_id: terminal, cols, rows },
            ),
        };
        self.sidecar_write(line);
    }

    /// The store of the workspace's snapshots, when a workspace folder is open.
    fn snapshot_store(&self) -> Option<String> {
        self.config.tether_dir.as_ref().map(|dir| format!("{dir}/snapshot.git"))
    }

    fn take_snapshot(&mut self) {
        let (Some(store), Some(slot)) = (self.snapshot_store(), &mut self.agent) else { return };
        if self.sidecar != SidecarState::Ready {
            slot.client.handle_snapshot(Err("tetherd is not connected".to_owned()));
            return;
        }
        let generation = slot.generation;
        let params =
            SnapshotTakeParams { root: self.config.workspace_root.clone(), store, extra: self.open_documents.clone() };
        let (_, line) = self.rpc.request(
            method::SNAPSHOT_TAKE,
            &params,
            SidecarRequest::Snapshot { generation },
            Some(self.now + SNAPSHOT_TIMEOUT_MS),
        );
        self.sidecar_write(line);
    }

    fn scan_changes(&mut self, base: String) {
        let (Some(store), Some(slot)) = (self.snapshot_store(), &mut self.agent) else { return };
        if self.sidecar != SidecarState::Ready {
            slot.client.handle_scan(Err("tetherd is not connected".to_owned()));
            return;
        }
        let generation = slot.generation;
        let params = SnapshotChangesParams {
            root: self.config.workspace_root.clone(),
            store,
            base,
            extra: self.open_documents.clone(),
        };
        let (_, line) = self.rpc.request(
            method::SNAPSHOT_CHANGES,
            &params,
            SidecarRequest::Scan { generation },
            Some(self.now + SNAPSHOT_TIMEOUT_MS),
        );
        self.sidecar_write(line);
    }

    /// tetherd answered a snapshot or a scan (the raw result), or could not.
    fn on_snapshot_answer(&mut self, tag: SidecarRequest, generation: u64, result: Result<String, String>) {
        let Some(slot) = self.agent.as_mut().filter(|slot| slot.generation == generation) else { return };
        match tag {
            SidecarRequest::Snapshot { .. } => {
                let tree = result.and_then(|raw| {
                    serde_json::from_str::<SnapshotTakeResult>(&raw)
                        .map(|taken| taken.tree)
                        .map_err(|error| format!("tetherd's answer to snapshot/take is malformed: {error}"))
                });
                slot.client.handle_snapshot(tree);
            }
            _ => {
                let changes = result.and_then(|raw| {
                    serde_json::from_str::<SnapshotChangesResult>(&raw)
                        .map(|found| found.changes)
                        .map_err(|error| format!("tetherd's answer to snapshot/changes is malformed: {error}"))
                });
                slot.client.handle_scan(changes);
            }
        }
    }

    /// Copies the session's title, commands, config options and usage into the header.
    fn refresh_controls_view(&mut self) {
        let controls = self.agent.as_ref().map(|slot| slot.client.controls().clone()).unwrap_or_default();
        if self.session.controls != controls {
            self.session.controls = controls;
            self.webview.session_changed = true;
        }
    }

    fn refresh_changes_view(&mut self) {
        let changes = self.agent.as_ref().map(|slot| slot.client.changes_bar()).unwrap_or_default();
        if self.session.changes != changes {
            self.session.changes = changes;
            self.webview.session_changed = true;
        }
    }

    fn send_audit(&mut self, agent_id: AgentId, record: &str) {
        if self.sidecar != SidecarState::Ready {
            return self.log(LogLevel::Info, format!("audit (tetherd is not connected): {record}"));
        }
        // The record is JSON the engine encoded itself: embedded as it is.
        let line = format!(
            r#"{{"jsonrpc":"2.0","method":"{}","params":{{"agentId":{agent_id},"record":{record}}}}}"#,
            method::SESSION_AUDIT
        );
        self.sidecar_write(line);
    }

    /// The policy in force: the session's, or the idle one between sessions.
    fn policy(&self) -> &PermissionPolicy {
        self.agent.as_ref().map_or(&self.idle_policy, |slot| slot.client.policy())
    }

    fn audit_log(&self) -> Option<String> {
        self.agent.as_ref()?.session_dir.as_ref().map(|dir| format!("{dir}/audit.jsonl"))
    }

    /// Ends the current session's slot, keeping its mode and workspace rules for the next one.
    /// Returns the agent to stop, if it had started.
    fn end_session(&mut self) -> Option<AgentId> {
        let slot = self.agent.take()?;
        let policy = slot.client.policy();
        self.idle_policy = policy.for_new_session(policy.mode(), 1);
        self.refresh_permissions_view();
        self.refresh_controls_view();
        slot.agent_id
    }

    /// Reads `tether.permissions`: usable rules go to the policy, the others are reported.
    fn configure_permissions(&mut self, settings: &PermissionSettings) {
        let mut specs = Vec::new();
        let mut unusable = Vec::new();
        for (index, value) in settings.rules.iter().enumerate() {
            match RuleSpec::from_setting(value) {
                Ok(spec) => specs.push(spec),
                Err(error) => {
                    unusable.push((value.clone(), format!("Rule {} in tether.permissions.rules: {error}", index + 1)))
                }
            }
        }
        if !unusable.is_empty() && unusable != self.unusable_rules {
            let problems: Vec<&str> = unusable.iter().map(|(_, problem)| problem.as_str()).collect();
            self.show(LogLevel::Warn, format!("Tether skipped rules it cannot use: {}", problems.join("; ")));
        }
        self.unusable_rules = unusable;
        if let Some(slot) = &mut self.agent {
            slot.client.set_workspace_rules(specs.clone());
        }
        self.idle_policy.set_workspace_rules(specs);
        self.refresh_permissions_view();
    }

    /// Asks the host to write the workspace rules: the policy's, then the unusable ones as they
    /// were written, so a typo in the settings is never lost by a click in the panel.
    fn save_workspace_rules(&mut self) {
        let mut rules: Vec<serde_json::Value> = Vec::new();
        for spec in self.policy().workspace_specs() {
            match serde_json::to_value(spec) {
                Ok(value) => rules.push(value),
                Err(error) => self.log(LogLevel::Error, format!("could not encode a rule: {error}")),
            }
        }
        rules.extend(self.unusable_rules.iter().map(|(value, _)| value.clone()));
        self.config.permissions.rules = rules.clone();
        self.actions.push_back(HostAction::SaveWorkspaceRules { rules });
    }

    fn refresh_permissions_view(&mut self) {
        let (agent_modes, agent_mode_id) =
            self.agent.as_ref().map(|slot| slot.client.agent_mode_choices()).unwrap_or_default();
        let policy = self.policy();
        let view = PermissionsView {
            mode: policy.mode(),
            agent_mode: self.agent.as_ref().and_then(|slot| slot.client.agent_mode()),
            agent_modes: agent_modes.into_iter().map(|(id, name)| AgentModeView { id, name }).collect(),
            agent_mode_id,
            rules: policy.rules(),
            rule_problems: self.unusable_rules.iter().map(|(_, problem)| problem.clone()).collect(),
            audit_log: self.audit_log(),
        };
        if self.session.permissions != view {
            self.session.permissions = view;
            self.webview.session_changed = true;
        }
    }

    fn webview_has_news(&self) -> bool {
        self.webview.ready && (self.webview.session_changed || !self.webview.patches.is_empty())
    }

    /// Whether the next frame has anything to deliver: patches or a header for the webview, or
    /// terminal output for the mirrored terminals and the cards.
    fn frame_has_news(&self) -> bool {
        self.webview_has_news() || self.agent.as_ref().is_some_and(|slot| slot.client.terminals_dirty())
    }

    /// At most once per [`FRAME_MS`]: terminal output to its mirrored terminals and cards, and one
    /// post to the webview.
    fn flush_webview(&mut self, now: u64) {
        if !self.frame_has_news() {
            return;
        }
        if self.webview.last_post.is_some_and(|at| now < at + FRAME_MS) {
            return; // poll_timeout asks for a timer at the next frame
        }
        self.webview.last_post = Some(now);
        if let Some(slot) = &mut self.agent
            && slot.client.terminals_dirty()
        {
            let writes = slot.client.flush_terminals(now);
            self.actions.extend(writes);
            let patches = slot.client.thread_mut().take_patches();
            if self.webview.ready {
                self.webview.patches.extend(patches);
            }
        }
        if !self.webview_has_news() {
            return;
        }
        let session = std::mem::take(&mut self.webview.session_changed).then(|| self.session_view(now));
        let thread = std::mem::take(&mut self.webview.patches);
        self.actions.push_back(HostAction::PostWebview { message: Box::new(HostToWebview::Patch { session, thread }) });
    }

    /// Posts a message that is not part of the session's state (which goes in patches, at most
    /// one per frame) at once; dropped when no webview is open.
    fn post_now(&mut self, message: HostToWebview) {
        if self.webview.ready {
            self.actions.push_back(HostAction::PostWebview { message: Box::new(message) });
        }
    }

    /// Replaces the webview's state with the current one. Patches not yet posted are part of it.
    fn post_snapshot(&mut self, now: u64) {
        if !self.webview.ready {
            return;
        }
        self.drain_client();
        self.webview.patches.clear();
        self.webview.session_changed = false;
        self.webview.last_post = Some(now);
        let snapshot = match &self.agent {
            Some(slot) => {
                let thread = slot.client.thread();
                ViewSnapshot {
                    session: self.session_view(now),
                    entries: thread.entries().to_vec(),
                    plan: thread.plan().to_vec(),
                    turn: thread.turn().clone(),
                    terminals: thread.terminals().to_vec(),
                }
            }
            None => ViewSnapshot {
                session: self.session_view(now),
                entries: Vec::new(),
                plan: Vec::new(),
                turn: Default::default(),
                terminals: Vec::new(),
            },
        };
        self.actions.push_back(HostAction::PostWebview { message: Box::new(HostToWebview::Snapshot { snapshot }) });
    }

    fn set_status(&mut self, status: SessionStatus) {
        if self.session.status != status {
            if matches!(status, SessionStatus::Starting { .. }) {
                self.step_since = self.now;
            }
            self.session.status = status;
            self.webview.session_changed = true;
        }
    }

    /// The header as the webview is sent it at `now`: a starting step says how long it has
    /// taken so far.
    fn session_view(&self, now: u64) -> SessionView {
        let mut session = self.session.clone();
        if let SessionStatus::Starting { elapsed_ms, .. } = &mut session.status {
            *elapsed_ms = now.saturating_sub(self.step_since);
        }
        session
    }

    fn set_badge(&mut self, count: u32) {
        if self.badge != count {
            self.badge = count;
            self.actions.push_back(HostAction::SetBadge { count });
        }
    }

    fn sidecar_request(&mut self, method: &str, params: &impl Serialize, tag: SidecarRequest, now: u64) {
        let (_, line) = self.rpc.request(method, params, tag, Some(now + SIDECAR_TIMEOUT_MS));
        self.sidecar_write(line);
    }

    fn sidecar_write(&mut self, mut line: String) {
        line.push('\n');
        self.actions.push_back(HostAction::SidecarWrite { data: line });
    }

    fn log(&mut self, level: LogLevel, text: String) {
        self.actions.push_back(HostAction::Log { level, text });
    }

    fn show(&mut self, level: LogLevel, text: String) {
        self.actions.push_back(HostAction::ShowMessage { level, text });
    }
}

/// What the chat says while the workspace is not trusted.
const UNTRUSTED_MESSAGE: &str = "This workspace is not trusted, so Tether starts nothing in it: no tetherd, no agent. \
     Trust the workspace to start the session.";

/// How a history item that is one of the agent's own sessions is named: this, then its id.
const AGENT_SESSION_PREFIX: &str = "agent:";

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

/// The action that offers a session's thread as a Markdown file.
fn markdown_export(title: &str, agent: &str, created: Option<String>, client: &AcpClient) -> HostAction {
    let header = ExportHeader { title: title.to_owned(), agent: agent.to_owned(), created, exported: None };
    HostAction::SaveExport {
        suggested_name: export_file_name(title, "md"),
        content: thread_markdown(&header, client.thread()),
    }
}

/// A file name for an exported session: its title, kept to letters, digits and dashes.
fn export_file_name(title: &str, extension: &str) -> String {
    let mut name = String::new();
    for word in title.split(|c: char| !c.is_alphanumeric()).filter(|word| !word.is_empty()) {
        if name.len() + word.len() > 48 {
            break;
        }
        if !name.is_empty() {
            name.push('-');
        }
        name.push_str(&word.to_lowercase());
    }
    if name.is_empty() {
        name.push_str("session");
    }
    format!("tether-{name}.{extension}")
}

fn keep_tail(tail: &mut VecDeque<String>, line: &str) {
    tail.push_back(line.to_owned());
    while tail.len() > STDERR_TAIL_LINES
        || (tail.len() > 1 && tail.iter().map(String::len).sum::<usize>() > STDERR_TAIL_BYTES)
    {
        tail.pop_front();
    }
}
