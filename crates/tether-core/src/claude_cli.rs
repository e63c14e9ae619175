//! The Claude CLI driven directly: its stream-json output and control protocol, seen by the rest
//! of the engine as one more ACP agent.
//!
//! [`ClaudeCli`] sits where an ACP agent process would: the session's [`crate::acp::AcpClient`]
//! talks ACP to it (`handle_client_line` / `poll_client_line`), and it talks the CLI's wire to the
//! CLI processes it asks the host to run (`handle_cli_line` / `poll_cli_line`, `poll_process`).
//! So the thread, permission cards, rules and modes, file review, terminals, history and export
//! are the ACP client's, unchanged: nothing downstream knows which kind of agent it talks to.
//!
//! What it translates:
//! - `session/prompt` → a user message on the CLI's stdin; `result` → the prompt's answer (its
//!   stop reason; an error result fails the turn with the CLI's words), with cost and context
//!   usage as a `usage_update`.
//! - Partial messages (`stream_event` deltas) → message and thought chunks; a whole `assistant`
//!   line adds only what was not streamed; `tool_use` → a tool call (see `tools`), its
//!   `tool_result` → the call's update; `TodoWrite` → the plan.
//! - `can_use_tool` → `session/request_permission` (so rules and modes answer first, in the
//!   client), with the diff an edit would make computed from the file's text (read through the
//!   client, which serves open documents and keeps reads inside the workspace) before it is
//!   allowed; the answer → allow (with the CLI's own suggestions for "always") or deny with a
//!   message. Hook callbacks are answered "continue" and logged.
//! - `session/cancel` → `interrupt`; `session/set_mode` → `set_permission_mode`;
//!   the `model` config option → `set_model`; `initialize`'s answer → slash commands and models.
//!
//! Processes: **oneshot** (the default, as the official SDK does it) starts one CLI per turn and
//! closes its input after the turn's `result`, so it exits; the next turn resumes the session
//! with `--resume <id>` (the id from the CLI's `system/init`, which the session's log keeps).
//! **Persistent** keeps one CLI across turns and closes its input after an idle time; the next
//! prompt then starts a new one with `--resume`. A CLI still running [`EXIT_GRACE_MS`] after its
//! input was closed is ended (reference 000 §5: upstream #25629, a CLI that stays after its
//! `result`, would otherwise hold the next prompt for ever), and so is one still in its turn
//! [`INTERRUPT_GRACE_MS`] after the person's Stop. A resume the CLI refuses starts a
//! fresh CLI session with a notice, once. The first process of a session is started as the
//! session opens, so `initialize` (commands, models) has answered by the first prompt; nothing
//! waits on it, so a CLI that never answers it cannot freeze the chat. A session reopened from a
//! log that has those answers starts its CLI with the next prompt instead.
//!
//! A session's log holds the CLI's wire, both directions. Replaying it (`replay_sent_cli` for
//! Tether's lines, `handle_cli_line` for the CLI's) gives the client the same ACP it was given
//! live, so a reloaded window rebuilds the same thread and goes on with a CLI still running.
//!
//! Here: the translator's state, the client's side (ACP requests in, answers out), the CLI's
//! processes and timers. `output.rs` turns what the CLI prints into updates, `permissions.rs` its
//! `can_use_tool` into permission requests, `replay.rs` reads a log back, `cli_wire.rs` types the
//! CLI's lines and `tools.rs` its tools.

mod cli_wire;
mod mcp_config;
mod output;
mod permissions;
mod replay;
mod tools;

pub use replay::ReplayLine;

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use agent_client_protocol_schema::v1 as acp;
use serde_json::Value;

use crate::jsonrpc::{self, Message, RequestId, RpcError};
use crate::permissions::RequestPath;
use crate::sidecar::BadLineKind;
use crate::workspace_path::Workspace;

use cli_wire::{CanUseTool, CliLine};
use permissions::{permission_answer, permission_id};
use tools::ToolUse;

/// The ACP session id the client knows this conversation by. The CLI's own id changes when a
/// resume fails and is kept inside; the client never needs it.
pub const ACP_SESSION_ID: &str = "claude-cli";

/// How long a persistent CLI may sit idle before its input is closed (reference: 30 minutes).
pub const DEFAULT_IDLE_TIMEOUT_MS: u64 = 30 * 60 * 1000;

/// How long a CLI may take to answer Tether's `initialize`. Nothing waits on the answer (the
/// prompt goes at once), so a CLI that never gives it only loses the persistent mode: a CLI
/// that does not speak the control protocol both ways cannot be kept across turns.
pub const INITIALIZE_TIMEOUT_MS: u64 = 30_000;

/// How long a CLI whose input was closed may take to exit before it is ended. It stops its MCP
/// servers and writes nothing more of the session (its `result` came before), so a few seconds
/// are plenty; past that, it is the known upstream bug of a CLI that never exits.
pub const EXIT_GRACE_MS: u64 = 10_000;

/// How long a CLI may take to end its turn after the person's Stop (the `interrupt` control
/// request). It answers at once and ends the turn with a `result` within a second; one that does
/// neither would leave the turn running with nothing the person can do, so it is ended.
pub const INTERRUPT_GRACE_MS: u64 = 10_000;

/// The modes the CLI has (`--permission-mode`), with the ids the client maps to Tether's own.
const MODES: &[(&str, &str, &str)] = &[
    ("default", "Default", "Ask before edits and commands"),
    ("acceptEdits", "Accept Edits", "Edit files without asking"),
    ("plan", "Plan", "Read and plan, change nothing"),
    ("bypassPermissions", "Bypass Permissions", "Run everything without asking"),
    ("dontAsk", "Don't Ask", "Refuse what is not allowed already, without asking"),
];

/// How the CLI's processes are run (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessMode {
    Oneshot,
    Persistent { idle_timeout_ms: u64 },
}

/// What the host should do with the CLI's process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessAction {
    /// Start a CLI with these arguments after the profile's own, then report
    /// [`ClaudeCli::handle_process_started`] (or `handle_process_start_failed`). Its exit is
    /// reported with `process`, the translator's number for it.
    /// `env` is added to the profile's environment: the values `--mcp-config` names.
    Start { process: u64, args: Vec<String>, env: BTreeMap<String, String> },
    /// Close the running CLI's input: it finishes and exits.
    CloseInput,
    /// End the CLI numbered `process` (its input was closed and it did not exit): report its
    /// exit as for any other.
    Kill { process: u64 },
}

/// Something to tell the person or the log that is not part of the conversation (and so not in
/// the thread, which must read back the same from the session's log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CliEvent {
    /// For the log only.
    Log(String),
    /// For the person, as a warning beside the chat.
    Warn(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Process {
    /// No CLI runs: the next prompt starts one.
    Idle,
    /// Asked for; lines wait until it runs.
    Starting,
    /// Running; `input_open` is false once its input was closed (it is finishing).
    Running { input_open: bool },
}

/// The prompt in flight: the client's request, and what was sent for it (sent again if the CLI
/// cannot resume and a fresh session is started).
#[derive(Debug, Clone)]
struct Prompt {
    id: RequestId,
    content: Vec<Value>,
    /// A `system/init` or any output arrived for it: a resume failure can no longer be the
    /// cause of an error.
    started: bool,
}

/// A control request of Tether's waiting for the CLI's answer.
#[derive(Debug, Clone)]
enum OwnRequest {
    Initialize,
    Interrupt,
    /// The client's `session/set_mode` (or config switch) waits for this answer.
    SetMode {
        client: Option<RequestId>,
    },
    SetModel {
        client: Option<RequestId>,
    },
}

/// A request Tether's client was asked for the CLI, by the ACP id it was asked with.
#[derive(Debug, Clone)]
enum Asked {
    /// The file's text, to show the diff an edit would make before the permission is asked.
    Read { cli_request: String, ask: CanUseToolAsk },
    /// The permission itself.
    Permission { cli_request: String, ask: CanUseToolAsk },
}

#[derive(Debug, Clone)]
struct CanUseToolAsk {
    tool_use_id: String,
    tool: ToolUse,
    suggestions: Option<Value>,
}

/// The Claude CLI as an ACP agent (see the module documentation).
#[derive(Debug)]
pub struct ClaudeCli {
    mode: ProcessMode,
    replaying: bool,
    cwd: String,
    /// The workspace's folders as the host names them, which may include `cwd` itself (see
    /// [`ClaudeCli::set_workspace_folders`]; [`Workspace::new`] keeps a folder once).
    other_folders: Vec<String>,
    /// The MCP servers the client named in `session/new`, as each CLI gets them.
    mcp: mcp_config::CliMcpConfig,
    /// A prompt that came while the last CLI was finishing: sent once it has exited.
    after_exit: Option<Vec<Value>>,
    /// The CLI's session, from its `system/init`: the next process resumes it.
    cli_session: Option<String>,
    /// The process now running resumes `cli_session` (`--resume`).
    resuming: bool,
    process: Process,
    /// The CLIs started and not yet exited, oldest first: only the newest is the session's; an
    /// older one is finishing (its input closed) and its exit means nothing.
    live_processes: VecDeque<u64>,
    started_processes: u64,
    /// When a persistent CLI became idle (its turn ended).
    idle_since: Option<u64>,
    /// When the running CLI was started, while its `initialize` has not been answered.
    initialize_since: Option<u64>,
    /// The CLIs told to finish (their input closed) that have not exited, with when they were
    /// told: one still running [`EXIT_GRACE_MS`] later is ended.
    closing: BTreeMap<u64, u64>,
    prompt: Option<Prompt>,
    cancelled: bool,
    /// When the running CLI was asked to stop the turn, until the turn ends: one still in it
    /// [`INTERRUPT_GRACE_MS`] later is ended.
    interrupted_at: Option<u64>,
    permission_mode: String,
    model: Option<String>,
    models: Vec<Value>,
    commands_from_initialize: bool,
    /// The slash commands the CLI last listed, as the client was told them: a client that
    /// starts over (its agent restarted) is told them again.
    commands: Vec<Value>,
    tool_uses: BTreeMap<String, ToolUse>,
    /// Tool uses of this turn without a result yet: they fail if the turn ends first.
    unfinished_tools: BTreeSet<String>,
    /// Requests of the client's that the CLI can no longer answer (it exited): their answers
    /// are dropped.
    withdrawn: BTreeSet<String>,
    /// The Messages API message streaming now, and the messages whose text came as deltas (their
    /// whole `assistant` lines add no text).
    streaming_message: Option<String>,
    streamed: BTreeSet<String>,
    next_request: u64,
    own_requests: BTreeMap<String, OwnRequest>,
    asked: BTreeMap<String, Asked>,
    /// Prompts seen while replaying, numbered for their synthesized ids.
    replayed_prompts: u64,
    to_client: VecDeque<String>,
    to_cli: VecDeque<String>,
    actions: VecDeque<ProcessAction>,
    events: VecDeque<CliEvent>,
}

impl ClaudeCli {
    pub fn new(mode: ProcessMode) -> Self {
        ClaudeCli {
            mode,
            replaying: false,
            cwd: String::new(),
            other_folders: Vec::new(),
            mcp: mcp_config::CliMcpConfig::default(),
            after_exit: None,
            cli_session: None,
            resuming: false,
            process: Process::Idle,
            live_processes: VecDeque::new(),
            started_processes: 0,
            idle_since: None,
            initialize_since: None,
            closing: BTreeMap::new(),
            prompt: None,
            cancelled: false,
            interrupted_at: None,
            permission_mode: "default".to_owned(),
            model: None,
            models: Vec::new(),
            commands_from_initialize: false,
            commands: Vec::new(),
            tool_uses: BTreeMap::new(),
            unfinished_tools: BTreeSet::new(),
            withdrawn: BTreeSet::new(),
            streaming_message: None,
            streamed: BTreeSet::new(),
            next_request: 0,
            own_requests: BTreeMap::new(),
            asked: BTreeMap::new(),
            replayed_prompts: 0,
            to_client: VecDeque::new(),
            to_cli: VecDeque::new(),
            actions: VecDeque::new(),
            events: VecDeque::new(),
        }
    }

    /// The CLI's own session id, once a CLI has said it.
    pub fn cli_session(&self) -> Option<&str> {
        self.cli_session.as_deref()
    }

    /// An ACP line from the client (what it would write to an agent's stdin), at `now`.
    pub fn handle_client_line(&mut self, line: &str, now: u64) {
        let message = match jsonrpc::parse_message(line) {
            Ok(message) => message,
            Err(error) => return self.log(format!("the client sent a line that is not JSON-RPC: {error}")),
        };
        match message {
            Message::Request { id, method, params } => self.handle_client_request(id, &method, params),
            Message::Notification { method, .. } => {
                if method == "session/cancel" {
                    self.cancel(now);
                }
            }
            Message::Response { id, result } => self.handle_client_response(&id, result),
        }
    }

    fn handle_client_request(&mut self, id: RequestId, method: &str, params: Option<&serde_json::value::RawValue>) {
        let params: Value = params.and_then(|raw| serde_json::from_str(raw.get()).ok()).unwrap_or(Value::Null);
        match method {
            "initialize" => self.answer(
                &id,
                serde_json::json!({
                    "protocolVersion": 1,
                    "agentCapabilities": {
                        "loadSession": true,
                        "promptCapabilities": { "image": true, "embeddedContext": true },
                        "mcpCapabilities": { "http": true, "sse": true },
                    },
                    "agentInfo": { "name": "claude", "title": "Claude Code (direct)", "version": "" },
                    "authMethods": [],
                }),
            ),
            "session/new" | "session/load" | "session/resume" => {
                if let Some(cwd) = params.get("cwd").and_then(Value::as_str) {
                    self.cwd = cwd.to_owned();
                }
                self.mcp = mcp_config::cli_mcp_config(params.get("mcpServers").unwrap_or(&Value::Null));
                let mut result = serde_json::json!({ "modes": self.modes(), "configOptions": self.config_options() });
                if method == "session/new" {
                    result["sessionId"] = Value::from(ACP_SESSION_ID);
                }
                self.answer(&id, result);
                // The first CLI starts now, so that its `initialize` has answered (commands,
                // models) by the time the person sends the first prompt. A session reopened from
                // its log knows them from there already (a CLI of its answered): its next CLI
                // waits for a prompt, rather than every tab a restarted tetherd reopens running
                // an idle CLI for a person who may never go back to it.
                if !self.replaying && self.process == Process::Idle {
                    if self.commands_from_initialize {
                        // The client forgot them with the agent it restarted.
                        self.commands_update(self.commands.clone());
                    } else {
                        self.start_process();
                    }
                }
            }
            "session/prompt" => {
                if self.prompt.is_some() {
                    let error = RpcError::invalid_request().data(Value::from("a turn is already running"));
                    return self.to_client.push_back(jsonrpc::encode_error(&id, &error));
                }
                let content = prompt_content(params.get("prompt"));
                self.cancelled = false;
                self.prompt = Some(Prompt { id, content: content.clone(), started: false });
                self.send_user_message(content);
            }
            "session/set_mode" => {
                let mode = params.get("modeId").and_then(Value::as_str).unwrap_or_default().to_owned();
                self.set_mode(Some(id), mode);
            }
            "session/set_config_option" => {
                let value = params.get("value").and_then(Value::as_str).unwrap_or_default().to_owned();
                match params.get("configId").and_then(Value::as_str) {
                    Some("model") => self.set_model(Some(id), value),
                    Some("mode") => self.set_mode(Some(id), value),
                    other => {
                        let error = RpcError::invalid_params()
                            .data(Value::from(format!("Claude Code has no config option {other:?}")));
                        self.to_client.push_back(jsonrpc::encode_error(&id, &error));
                    }
                }
            }
            "session/set_model" => {
                let model = params.get("modelId").and_then(Value::as_str).unwrap_or_default().to_owned();
                self.set_model(Some(id), model);
            }
            method => self.to_client.push_back(jsonrpc::encode_error(&id, &jsonrpc::method_not_found(method))),
        }
    }

    /// The client answered a request this agent made of it (a file read, a permission).
    fn handle_client_response(&mut self, id: &RequestId, result: Result<&serde_json::value::RawValue, RpcError>) {
        let key = id_key(id);
        match self.asked.remove(&key) {
            Some(Asked::Read { cli_request, ask }) => {
                let before = result
                    .ok()
                    .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
                    .and_then(|value| value.get("content").and_then(Value::as_str).map(str::to_owned));
                self.ask_permission(cli_request, ask, Some(before));
            }
            Some(Asked::Permission { cli_request, ask }) => {
                let outcome =
                    result.ok().and_then(|raw| serde_json::from_str::<acp::RequestPermissionResponse>(raw.get()).ok());
                let answer = permission_answer(outcome.map(|response| response.outcome), &ask);
                self.write_cli(cli_wire::control_success(&cli_request, answer));
            }
            None if self.withdrawn.remove(&key) => {}
            None => self.log(format!("the client answered a request it was not asked ({key})")),
        }
    }

    /// The person cancelled the turn: the CLI is interrupted, and the turn ends when it says so.
    fn cancel(&mut self, now: u64) {
        if self.prompt.is_none() {
            return;
        }
        self.cancelled = true;
        match self.process {
            Process::Starting | Process::Running { input_open: true } => {
                let id = self.own_request(OwnRequest::Interrupt);
                self.write_cli(cli_wire::control_request(&id, serde_json::json!({ "subtype": "interrupt" })));
                if !self.replaying {
                    self.interrupted_at.get_or_insert(now);
                }
            }
            // Nothing runs that could end the turn (a prompt waiting for the last CLI to exit is
            // dropped): it ends now.
            Process::Idle | Process::Running { input_open: false } => {
                self.after_exit = None;
                self.end_prompt(Ok(acp::StopReason::Cancelled));
            }
        }
    }

    fn set_mode(&mut self, client: Option<RequestId>, mode: String) {
        if !MODES.iter().any(|(id, ..)| *id == mode) {
            if let Some(id) = client {
                let error = RpcError::invalid_params().data(Value::from(format!("Claude Code has no mode {mode:?}")));
                self.to_client.push_back(jsonrpc::encode_error(&id, &error));
            }
            return;
        }
        self.permission_mode = mode.clone();
        if self.cli_accepts_control() {
            let id = self.own_request(OwnRequest::SetMode { client });
            let request = serde_json::json!({ "subtype": "set_permission_mode", "mode": mode });
            self.write_cli(cli_wire::control_request(&id, request));
        } else if let Some(id) = client {
            // The next CLI starts with it (`--permission-mode`).
            self.answer(&id, serde_json::json!({}));
        }
    }

    fn set_model(&mut self, client: Option<RequestId>, model: String) {
        self.model = Some(model.clone()).filter(|model| !model.is_empty());
        if self.cli_accepts_control() {
            let id = self.own_request(OwnRequest::SetModel { client });
            let request = serde_json::json!({ "subtype": "set_model", "model": self.model });
            self.write_cli(cli_wire::control_request(&id, request));
        } else if let Some(id) = client {
            // The next CLI starts with it (`--model`).
            let result = serde_json::json!({ "configOptions": self.config_options() });
            self.answer(&id, result);
        }
    }

    /// Whether a CLI runs (or is starting) that reads control requests.
    fn cli_accepts_control(&self) -> bool {
        matches!(self.process, Process::Starting | Process::Running { input_open: true })
    }

    /// A line of the CLI's stdout.
    pub fn handle_cli_line(&mut self, line: &str, now: u64) {
        let parsed: CliLine = match serde_json::from_str(line) {
            Ok(parsed) => parsed,
            Err(error) => return self.log(format!("Claude Code printed a line Tether does not understand ({error})")),
        };
        if let Some(prompt) = &mut self.prompt
            && !matches!(parsed, CliLine::ControlResponse(_) | CliLine::Other)
        {
            prompt.started |= !matches!(&parsed, CliLine::Result(_));
        }
        match parsed {
            CliLine::System(system) => self.on_system(system),
            CliLine::StreamEvent(event) => self.on_stream_event(event),
            CliLine::Assistant(message) => self.on_assistant(message),
            CliLine::User(message) => self.on_user(message),
            CliLine::Result(result) => self.on_result(result, now),
            CliLine::ControlRequest(request) => self.on_control_request(request),
            CliLine::ControlResponse(response) => self.on_control_response(response.response),
            CliLine::Other => {}
        }
    }

    /// Closes the running CLI's input at `now`: it ends once it has finished.
    fn finish_process(&mut self, now: u64) {
        if matches!(self.process, Process::Running { input_open: true } | Process::Starting) && !self.replaying {
            self.actions.push_back(ProcessAction::CloseInput);
            if let Some(&process) = self.live_processes.back() {
                self.closing.insert(process, now);
            }
        }
        if let Process::Running { .. } = self.process {
            self.process = Process::Running { input_open: false };
        }
        self.idle_since = None;
    }

    fn on_control_request(&mut self, line: cli_wire::ControlRequestLine) {
        let request = line.request;
        match request.get("subtype").and_then(Value::as_str) {
            Some("can_use_tool") => {
                let Ok(ask) = crate::json_value::from_value::<CanUseTool>(&request) else {
                    return self
                        .write_cli(cli_wire::control_error(&line.request_id, "can_use_tool without a tool_name"));
                };
                let tool_use_id = ask.tool_use_id.clone().unwrap_or_else(|| format!("claude-tool-{}", line.request_id));
                let ask = CanUseToolAsk {
                    tool_use_id,
                    tool: ToolUse { name: ask.tool_name, input: ask.input },
                    suggestions: ask.permission_suggestions,
                };
                self.on_can_use_tool(line.request_id, ask);
            }
            Some("hook_callback") => {
                let event = request.pointer("/input/hook_event_name").and_then(Value::as_str).unwrap_or("a hook");
                self.log(format!("Claude Code called hook {event}; Tether answered: continue"));
                self.write_cli(cli_wire::control_success(&line.request_id, serde_json::json!({ "continue": true })));
            }
            other => {
                let subtype = other.unwrap_or("(none)");
                self.log(format!("Claude Code asked for {subtype}, which Tether does not offer"));
                let error = format!("Tether does not support the control request {subtype:?}");
                self.write_cli(cli_wire::control_error(&line.request_id, &error));
            }
        }
    }

    fn on_control_response(&mut self, body: cli_wire::ControlResponseBody) {
        let Some(request) = self.own_requests.remove(&body.request_id) else { return };
        let failed = body.subtype == "error";
        let response = body.response.unwrap_or(Value::Null);
        if let OwnRequest::Initialize = request {
            self.initialize_since = None;
        }
        match request {
            OwnRequest::Initialize if !failed => {
                if let Some(commands) = response.get("commands").and_then(Value::as_array) {
                    let commands = commands
                        .iter()
                        .filter_map(|command| {
                            let name = command.get("name")?.as_str()?;
                            let description = command.get("description").and_then(Value::as_str).unwrap_or_default();
                            let mut entry = serde_json::json!({ "name": name, "description": description });
                            if let Some(hint) =
                                command.get("argumentHint").and_then(Value::as_str).filter(|hint| !hint.is_empty())
                            {
                                entry["input"] = serde_json::json!({ "hint": hint });
                            }
                            Some(entry)
                        })
                        .collect();
                    self.commands_from_initialize = true;
                    self.commands_update(commands);
                }
                if let Some(models) = response.get("models").and_then(Value::as_array) {
                    self.models = models.clone();
                    let options = self.config_options();
                    self.update_raw(
                        serde_json::json!({ "sessionUpdate": "config_option_update", "configOptions": options }),
                    );
                }
            }
            OwnRequest::Initialize => {
                let error = body.error.unwrap_or_default();
                self.log(format!("Claude Code did not accept initialize: {error}"));
            }
            OwnRequest::Interrupt => {}
            OwnRequest::SetMode { client } => {
                if let Some(id) = client {
                    self.answer_control(&id, failed, body.error, serde_json::json!({}));
                }
                if !failed {
                    let mode = self.permission_mode.clone();
                    self.update(acp::SessionUpdate::CurrentModeUpdate(acp::CurrentModeUpdate::new(mode)));
                }
            }
            OwnRequest::SetModel { client } => {
                if let Some(id) = client {
                    let result = serde_json::json!({ "configOptions": self.config_options() });
                    self.answer_control(&id, failed, body.error, result);
                }
            }
        }
    }

    fn answer_control(&mut self, id: &RequestId, failed: bool, error: Option<String>, result: Value) {
        if failed {
            let words = error.unwrap_or_else(|| "Claude Code refused it".to_owned());
            self.to_client.push_back(jsonrpc::encode_error(id, &RpcError::internal_error().data(Value::from(words))));
        } else {
            self.answer(id, result);
        }
    }

    /// The host started the CLI asked for, at `now`.
    pub fn handle_process_started(&mut self, now: u64) {
        if self.process == Process::Starting {
            self.process = Process::Running { input_open: true };
            self.initialize_since = Some(now);
        }
    }

    /// The CLI asked for could not be started (`error` says why).
    pub fn handle_process_start_failed(&mut self, error: &str) {
        self.process = Process::Idle;
        self.live_processes.pop_back();
        self.to_cli.clear();
        self.settle_own_requests();
        self.end_prompt(Err(format!("Claude Code could not be started: {error}")));
    }

    /// The CLI numbered `process` exited (`description`: how; `stderr_tail`: what it last
    /// printed on stderr). Read back from a log, which does not say which CLI, `process` is
    /// `None`: CLIs exit in the order they were started (an older one was told to finish first).
    pub fn handle_process_exited(&mut self, process: Option<u64>, description: &str, stderr_tail: &str) {
        let process = match process {
            Some(process) => self.live_processes.iter().position(|live| *live == process),
            None => (!self.live_processes.is_empty()).then_some(0),
        };
        if let Some(position) = process
            && let Some(number) = self.live_processes.remove(position)
        {
            self.closing.remove(&number);
        }
        if process.is_none() || !self.live_processes.is_empty() {
            // An older CLI, told to finish, has: the session's CLI is a newer one.
            return;
        }
        let expected = self.process == Process::Running { input_open: false };
        let waiting_prompt = self.after_exit.take();
        self.process = Process::Idle;
        self.idle_since = None;
        self.initialize_since = None;
        self.resuming = false;
        self.to_cli.clear();
        self.settle_own_requests();
        // Its questions can no longer be answered.
        for (id, _) in std::mem::take(&mut self.asked) {
            let params = serde_json::json!({ "requestId": id });
            self.withdrawn.insert(id);
            self.to_client.push_back(jsonrpc::encode_notification("$/cancel_request", &params));
        }
        if let Some(content) = waiting_prompt {
            // The CLI that finished was the last turn's; the prompt that waited for it goes now.
            self.send_user_message(content);
        } else if self.prompt.is_some() && self.cancelled {
            // The person stopped the turn, and the CLI ended (or was ended) before it said so:
            // the turn ends cancelled, as it does live once the CLI does not stop in time.
            self.end_prompt(Ok(acp::StopReason::Cancelled));
        } else if self.prompt.is_some() {
            let mut message = format!("Claude Code {description} during the turn");
            // The thread says so as it does for an ACP agent that exits: a card with what the
            // CLI last printed on stderr, not only the turn's one-line failure.
            let mut notice = acp::Notice::new(acp::NoticeSeverity::Error, format!("{message}."));
            if !stderr_tail.trim().is_empty() {
                message.push_str(&format!(": {}", stderr_tail.trim()));
                notice = notice.description(stderr_tail.trim().to_owned());
            }
            self.update(acp::SessionUpdate::Notice(notice));
            self.end_prompt(Err(message));
        } else if !expected {
            self.log(format!("Claude Code {description} between turns; the next prompt starts it again"));
        }
    }

    /// Control requests of Tether's that the CLI will no longer answer: a mode or model switch
    /// stands (the next CLI starts with it).
    fn settle_own_requests(&mut self) {
        for (_, request) in std::mem::take(&mut self.own_requests) {
            match request {
                OwnRequest::SetMode { client: Some(id) } => self.answer(&id, serde_json::json!({})),
                OwnRequest::SetModel { client: Some(id) } => {
                    let result = serde_json::json!({ "configOptions": self.config_options() });
                    self.answer(&id, result);
                }
                _ => {}
            }
        }
    }

    /// When the engine should call [`ClaudeCli::handle_timeout`].
    pub fn poll_timeout(&self) -> Option<u64> {
        let idle = match self.mode {
            ProcessMode::Persistent { idle_timeout_ms } => self.idle_since.map(|since| since + idle_timeout_ms),
            ProcessMode::Oneshot => None,
        };
        let initialize = self.initialize_since.map(|since| since + INITIALIZE_TIMEOUT_MS);
        let exits = self.closing.values().map(|closed| closed + EXIT_GRACE_MS);
        let interrupt = self.interrupted_at.map(|at| at + INTERRUPT_GRACE_MS);
        idle.into_iter().chain(initialize).chain(exits).chain(interrupt).min()
    }

    /// A persistent CLI idle for its timeout has its input closed; the next prompt resumes. A
    /// CLI that has not answered `initialize` in time is not kept across turns. A CLI that has
    /// not exited [`EXIT_GRACE_MS`] after its input was closed is ended.
    pub fn handle_timeout(&mut self, now: u64) {
        if self.interrupted_at.is_some_and(|at| now >= at + INTERRUPT_GRACE_MS) {
            self.interrupted_at = None;
            // Its input is closed first, so that a prompt sent before it has exited waits for the
            // exit and goes to a new CLI that resumes the session.
            self.finish_process(now);
            if let Some(&process) = self.live_processes.back() {
                self.closing.remove(&process);
                self.actions.push_back(ProcessAction::Kill { process });
            }
            let seconds = INTERRUPT_GRACE_MS / 1000;
            self.events.push_back(CliEvent::Warn(format!(
                "Claude Code did not stop within {seconds} s of being asked to, so Tether ended it; the next prompt resumes the session."
            )));
            self.end_prompt(Ok(acp::StopReason::Cancelled));
        }
        let overdue: Vec<u64> = self
            .closing
            .iter()
            .filter(|(_, closed)| now >= *closed + EXIT_GRACE_MS)
            .map(|(process, _)| *process)
            .collect();
        for process in overdue {
            self.closing.remove(&process);
            self.actions.push_back(ProcessAction::Kill { process });
            let seconds = EXIT_GRACE_MS / 1000;
            let why = format!("Claude Code did not exit within {seconds} s of finishing its turn, so Tether ended it");
            if self.after_exit.is_some() {
                // The person's next prompt was waiting on that exit.
                self.events.push_back(CliEvent::Warn(format!("{why}; your prompt goes on in a new one.")));
            } else {
                self.log(why);
            }
        }
        if self.initialize_since.is_some_and(|since| now >= since + INITIALIZE_TIMEOUT_MS) {
            self.initialize_since = None;
            let seconds = INITIALIZE_TIMEOUT_MS / 1000;
            self.log(format!("Claude Code did not answer initialize within {seconds} s"));
            if let ProcessMode::Persistent { .. } = self.mode {
                // Reference 000 §6.2: waiting on it froze a chat once. Nothing waits here; the
                // session goes on with one CLI per turn, which needs no control answers to work.
                self.mode = ProcessMode::Oneshot;
                self.events.push_back(CliEvent::Warn(format!(
                    "Claude Code did not answer Tether's initialize within {seconds} s, so this session runs one CLI per turn instead of keeping one (its slash commands and models are not known)."
                )));
                if self.prompt.is_none() {
                    self.finish_process(now);
                }
            }
        }
        let idle_over = match self.mode {
            ProcessMode::Persistent { idle_timeout_ms } => {
                self.idle_since.is_some_and(|since| now >= since + idle_timeout_ms)
            }
            ProcessMode::Oneshot => false,
        };
        if idle_over && self.prompt.is_none() {
            self.log("Claude Code was idle; its process ends and the next prompt resumes the session".to_owned());
            self.finish_process(now);
        }
    }

    pub fn poll_client_line(&mut self) -> Option<String> {
        self.to_client.pop_front()
    }

    /// A line for the CLI's stdin. Call only once the CLI runs (lines wait until then).
    pub fn poll_cli_line(&mut self) -> Option<String> {
        match self.process {
            Process::Running { .. } => self.to_cli.pop_front(),
            _ => None,
        }
    }

    pub fn poll_process(&mut self) -> Option<ProcessAction> {
        self.actions.pop_front()
    }

    pub fn poll_event(&mut self) -> Option<CliEvent> {
        self.events.pop_front()
    }

    // Replaying a session's log.

    // Plumbing.

    fn start_process(&mut self) {
        let args = cli_arguments(
            &self.permission_mode,
            self.model.as_deref(),
            self.cli_session.as_deref(),
            self.mcp.json.as_deref(),
            // The workspace's folders but the cwd, each once (the host names them all).
            &self.workspace().roots().skip(1).map(str::to_owned).collect::<Vec<_>>(),
        );
        self.resuming = self.cli_session.is_some();
        self.idle_since = None;
        self.to_cli.clear();
        if self.replaying {
            // The log goes on with the lines of the CLI that was started (its `initialize`
            // counts it).
            self.process = Process::Running { input_open: true };
        } else {
            self.started_processes += 1;
            let process = self.started_processes;
            self.live_processes.push_back(process);
            self.process = Process::Starting;
            self.actions.push_back(ProcessAction::Start { process, args, env: self.mcp.env.clone() });
        }
        let id = self.own_request(OwnRequest::Initialize);
        self.write_cli(cli_wire::control_request(&id, serde_json::json!({ "subtype": "initialize", "hooks": null })));
    }

    fn send_user_message(&mut self, content: Vec<Value>) {
        if let Process::Running { input_open: false } = self.process {
            // The last CLI is finishing (its MCP servers take a moment to stop). The next one
            // resumes what it wrote, so it may only start once it has exited; and the session's
            // log takes one CLI at a time. The prompt waits for that exit.
            self.log(
                "a new prompt while Claude Code was still finishing the last: it starts once that one has exited"
                    .to_owned(),
            );
            self.after_exit = Some(content);
            return;
        }
        if self.process == Process::Idle {
            self.start_process();
        }
        self.idle_since = None;
        self.write_cli(cli_wire::user_message(content));
    }

    fn own_request(&mut self, request: OwnRequest) -> String {
        self.next_request += 1;
        let id = format!("tether-{}", self.next_request);
        self.own_requests.insert(id.clone(), request);
        id
    }

    fn write_cli(&mut self, line: String) {
        if !self.replaying {
            self.to_cli.push_back(line);
        }
    }

    fn answer(&mut self, id: &RequestId, result: Value) {
        self.to_client.push_back(jsonrpc::encode_result(id, &result));
    }

    fn chunk(&mut self, text: &str, thought: bool) {
        let chunk = acp::ContentChunk::new(acp::ContentBlock::from(text.to_owned()));
        let update = if thought {
            acp::SessionUpdate::AgentThoughtChunk(chunk)
        } else {
            acp::SessionUpdate::AgentMessageChunk(chunk)
        };
        self.update(update);
    }

    fn update(&mut self, update: acp::SessionUpdate) {
        let notification = acp::SessionNotification::new(ACP_SESSION_ID, update);
        self.to_client.push_back(jsonrpc::encode_notification("session/update", &notification));
    }

    fn update_raw(&mut self, update: Value) {
        let params = serde_json::json!({ "sessionId": ACP_SESSION_ID, "update": update });
        self.to_client.push_back(jsonrpc::encode_notification("session/update", &params));
    }

    fn commands_update(&mut self, commands: Vec<Value>) {
        self.commands = commands.clone();
        self.update_raw(
            serde_json::json!({ "sessionUpdate": "available_commands_update", "availableCommands": commands }),
        );
    }

    fn modes(&self) -> Value {
        let modes: Vec<Value> = MODES
            .iter()
            .map(|(id, name, description)| serde_json::json!({ "id": id, "name": name, "description": description }))
            .collect();
        serde_json::json!({ "currentModeId": self.permission_mode, "availableModes": modes })
    }

    /// The model picker, once a CLI has said which models there are.
    fn config_options(&self) -> Value {
        if self.models.is_empty() {
            return Value::Array(Vec::new());
        }
        let options: Vec<Value> = self
            .models
            .iter()
            .filter_map(|model| {
                let value = model.get("value")?.as_str()?;
                let name = model.get("displayName").and_then(Value::as_str).unwrap_or(value);
                let mut option = serde_json::json!({ "value": value, "name": name });
                if let Some(description) = model.get("description").and_then(Value::as_str) {
                    option["description"] = Value::from(description);
                }
                Some(option)
            })
            .collect();
        let current = self.model.clone().unwrap_or_else(|| "default".to_owned());
        serde_json::json!([{
            "id": "model",
            "name": "Model",
            "category": "model",
            "type": "select",
            "currentValue": current,
            "options": options,
        }])
    }

    /// The workspace's folders, inside as `cwd` is (the host names them all, `cwd` among them):
    /// the files of its tool calls are named as the rest of the chat names them, an edit's diff
    /// is read from the editor there too, and each CLI is started with those other than `cwd`.
    pub fn set_workspace_folders(&mut self, others: impl IntoIterator<Item = String>) {
        self.other_folders = others.into_iter().collect();
    }

    /// The session's `cwd` and the workspace's other folders.
    fn workspace(&self) -> Workspace {
        Workspace::new(self.cwd.clone(), self.other_folders.iter().cloned())
    }

    fn in_workspace(&self, path: &str) -> bool {
        // Before `session/new` names the cwd there is no workspace: an empty root would hold
        // every absolute path.
        !self.cwd.is_empty() && matches!(self.workspace().resolve(path), RequestPath::Inside(_))
    }

    fn log(&mut self, text: String) {
        self.events.push_back(CliEvent::Log(text));
    }
}

/// The arguments Tether starts the CLI with (after the profile's own): stream-json both ways
/// with partial messages, permissions asked over the control protocol, the mode and model, the
/// session to resume, and the workspace's folders other than the cwd (`--add-dir`, so that
/// Claude Code counts them as its project's too, as Tether does).
pub fn cli_arguments(
    permission_mode: &str,
    model: Option<&str>,
    resume: Option<&str>,
    mcp_config: Option<&str>,
    other_folders: &[String],
) -> Vec<String> {
    let mut args: Vec<String> = [
        "--print",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        "--include-partial-messages",
        "--permission-prompt-tool",
        "stdio",
    ]
    .map(str::to_owned)
    .to_vec();
    args.push(format!("--permission-mode={permission_mode}"));
    if let Some(model) = model {
        args.push(format!("--model={model}"));
    }
    // The id is one the CLI printed and was checked to be a plain id (the `=` form keeps it an
    // argument of `--resume` whatever it holds).
    if let Some(session) = resume.filter(|session| is_session_id(session)) {
        args.push(format!("--resume={session}"));
    }
    if let Some(config) = mcp_config {
        args.push(format!("--mcp-config={config}"));
    }
    // One flag per folder, in the `=` form: the CLI's `--add-dir` takes several values, and
    // would take what follows it as more of them; repeated, its values add up (its `system/init`
    // lists them all as `additional_directories`).
    for folder in other_folders {
        args.push(format!("--add-dir={folder}"));
    }
    args
}

/// The text of the prompt a line Tether wrote to the CLI carries, if it is a user message (for
/// the history's titles and turn counts, read from a session's log).
pub fn prompt_text_of_sent(line: &str) -> Option<String> {
    let value: Value = serde_json::from_str(line).ok()?;
    if value.get("type")?.as_str()? != "user" {
        return None;
    }
    let content = value.pointer("/message/content")?.clone();
    let texts: Vec<String> = cli_wire::ApiMessage { id: None, model: None, content }
        .blocks()
        .iter()
        .filter_map(|block| block.get("text").and_then(Value::as_str).map(str::to_owned))
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// The CLI's session id, if a line it printed is its `system/init` (for the history).
pub fn session_of_received(line: &str) -> Option<String> {
    let value: Value = serde_json::from_str(line).ok()?;
    (value.get("type")?.as_str()? == "system" && value.get("subtype")?.as_str()? == "init")
        .then(|| value.get("session_id")?.as_str().filter(|id| is_session_id(id)).map(str::to_owned))
        .flatten()
}

fn id_key(id: &RequestId) -> String {
    match id {
        RequestId::Str(text) => text.clone(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

/// A session id the CLI printed that is safe to pass back to it: letters, digits and dashes
/// (the CLI's are UUIDs). Anything else is not used (a log is data, never a command line).
fn is_session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('-')
        && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// A prompt's ACP content blocks as the CLI's message content: text as it is, a mentioned file
/// or folder (resource link) by its path (`@/ws/src/`, as the CLI's own mentions are written), an
/// embedded file as text in a tag naming it, an image as an image block. Paths are read from
/// the `file:` URIs (`%20` is a space) with their lines as the CLI writes them (`#L2-3`), else
/// the URI is given as it is.
fn prompt_content(prompt: Option<&Value>) -> Vec<Value> {
    let path_of = |uri: &str| match crate::acp::parse_file_uri(uri) {
        Some((path, None)) => path,
        Some((path, Some((start, end)))) => crate::acp::selection_label(&path, start, end),
        None => uri.to_owned(),
    };
    let Some(blocks) = prompt.and_then(Value::as_array) else { return Vec::new() };
    blocks
        .iter()
        .filter_map(|block| match block.get("type").and_then(Value::as_str) {
            Some("text") => Some(serde_json::json!({ "type": "text", "text": block.get("text")? })),
            Some("resource_link") => {
                let uri = block.get("uri")?.as_str()?;
                Some(serde_json::json!({ "type": "text", "text": format!("@{}", path_of(uri)) }))
            }
            Some("resource") => {
                let resource = block.get("resource")?;
                let uri = resource.get("uri").and_then(Value::as_str).unwrap_or_default();
                let text = resource.get("text")?.as_str()?;
                let path = path_of(uri);
                Some(serde_json::json!({ "type": "text", "text": format!("<context ref=\"{path}\">\n{text}\n</context>") }))
            }
            Some("image") => Some(serde_json::json!({
                "type": "image",
                "source": { "type": "base64", "media_type": block.get("mimeType")?, "data": block.get("data")? },
            })),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentioned_files_and_folders_reach_the_cli_by_their_paths() {
        let prompt = serde_json::json!([
            { "type": "text", "text": "Compare" },
            { "type": "resource_link", "name": "my notes.md", "uri": "file:///ws/docs/my%20notes.md" },
            { "type": "resource_link", "name": "src/", "uri": "file:///ws/src/", "mimeType": "inode/directory" },
            { "type": "resource", "resource": { "uri": "file:///ws/a%20b.rs#L2:3", "text": "fn a() {}" } },
        ]);
        let texts: Vec<String> = prompt_content(Some(&prompt))
            .iter()
            .map(|block| block["text"].as_str().unwrap_or_default().to_owned())
            .collect();
        // Before, the URI's `%20` reached the CLI, which found no such file.
        assert_eq!(
            texts,
            [
                "Compare",
                "@/ws/docs/my notes.md",
                "@/ws/src/",
                "<context ref=\"/ws/a b.rs#L2-3\">\nfn a() {}\n</context>"
            ]
        );
    }
}
