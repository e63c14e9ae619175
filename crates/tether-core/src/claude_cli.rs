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
//! prompt then starts a new one with `--resume`. A resume the CLI refuses starts a fresh CLI
//! session with a notice, once. The first process of a session is started as the session opens,
//! so `initialize` (commands, models) has answered by the first prompt; nothing waits on it, so a
//! CLI that never answers it cannot freeze the chat.
//!
//! A session's log holds the CLI's wire, both directions. Replaying it (`replay_sent_cli` for
//! Tether's lines, `handle_cli_line` for the CLI's) gives the client the same ACP it was given
//! live, so a reloaded window rebuilds the same thread and goes on with a CLI still running.

mod cli_wire;
mod tools;

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use agent_client_protocol_schema::v1 as acp;
use serde_json::Value;

use crate::jsonrpc::{self, Message, RequestId, RpcError};
use crate::sidecar::BadLineKind;

use cli_wire::{CanUseTool, CliLine};
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
    Start { process: u64, args: Vec<String> },
    /// Close the running CLI's input: it finishes and exits.
    CloseInput,
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
    prompt: Option<Prompt>,
    cancelled: bool,
    permission_mode: String,
    model: Option<String>,
    models: Vec<Value>,
    commands_from_initialize: bool,
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
            cli_session: None,
            resuming: false,
            process: Process::Idle,
            live_processes: VecDeque::new(),
            started_processes: 0,
            idle_since: None,
            initialize_since: None,
            prompt: None,
            cancelled: false,
            permission_mode: "default".to_owned(),
            model: None,
            models: Vec::new(),
            commands_from_initialize: false,
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

    /// An ACP line from the client (what it would write to an agent's stdin).
    pub fn handle_client_line(&mut self, line: &str) {
        let message = match jsonrpc::parse_message(line) {
            Ok(message) => message,
            Err(error) => return self.log(format!("the client sent a line that is not JSON-RPC: {error}")),
        };
        match message {
            Message::Request { id, method, params } => self.handle_client_request(id, &method, params),
            Message::Notification { method, .. } => {
                if method == "session/cancel" {
                    self.cancel();
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
                    },
                    "agentInfo": { "name": "claude", "title": "Claude Code (direct)", "version": "" },
                    "authMethods": [],
                }),
            ),
            "session/new" | "session/load" | "session/resume" => {
                if let Some(cwd) = params.get("cwd").and_then(Value::as_str) {
                    self.cwd = cwd.to_owned();
                }
                let mut result = serde_json::json!({ "modes": self.modes(), "configOptions": self.config_options() });
                if method == "session/new" {
                    result["sessionId"] = Value::from(ACP_SESSION_ID);
                }
                self.answer(&id, result);
                // The first CLI starts now, so that its `initialize` has answered (commands,
                // models) by the time the person sends the first prompt.
                if !self.replaying && self.process == Process::Idle {
                    self.start_process();
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
    fn cancel(&mut self) {
        if self.prompt.is_none() {
            return;
        }
        self.cancelled = true;
        match self.process {
            Process::Starting | Process::Running { input_open: true } => {
                let id = self.own_request(OwnRequest::Interrupt);
                self.write_cli(cli_wire::control_request(&id, serde_json::json!({ "subtype": "interrupt" })));
            }
            // Nothing runs that could end the turn: it ends now.
            Process::Idle | Process::Running { input_open: false } => self.end_prompt(Ok(acp::StopReason::Cancelled)),
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

    /// A line of the CLI's that tetherd could not pass on (too long, not UTF-8, not JSON): the
    /// thread says what was lost, and the turn goes on.
    pub fn handle_bad_line(&mut self, kind: BadLineKind, len: u64, preview: &str, error: &str) {
        let what = match kind {
            BadLineKind::TooLong => "a line too long to read",
            BadLineKind::InvalidUtf8 => "a line that is not UTF-8",
            BadLineKind::InvalidJson => "a line that is not JSON",
        };
        self.log(format!("Claude Code printed {what} ({len} bytes): {error}"));
        let title = format!("Claude Code printed {what} ({len} bytes); Tether skipped it.");
        let notice = acp::Notice::new(acp::NoticeSeverity::Warning, title).description(format!("{error}\n\n{preview}"));
        self.update(acp::SessionUpdate::Notice(notice));
    }

    fn on_system(&mut self, system: cli_wire::SystemLine) {
        // `init` and `status` lines say the mode; the CLI changes it itself (leaving plan mode).
        if let Some(mode) = system.permission_mode.filter(|mode| *mode != self.permission_mode)
            && MODES.iter().any(|(id, ..)| *id == mode)
        {
            self.permission_mode = mode.clone();
            self.update(acp::SessionUpdate::CurrentModeUpdate(acp::CurrentModeUpdate::new(mode)));
        }
        if system.subtype != "init" {
            return;
        }
        if let Some(id) = system.session_id.filter(|id| is_session_id(id)) {
            self.cli_session = Some(id);
        }
        if !self.commands_from_initialize && !system.slash_commands.is_empty() {
            let commands = system
                .slash_commands
                .iter()
                .map(|name| serde_json::json!({ "name": name, "description": "" }))
                .collect();
            self.commands_update(commands);
        }
    }

    fn on_stream_event(&mut self, line: cli_wire::StreamEventLine) {
        if line.parent_tool_use_id.is_some() {
            return; // A subagent's words stay inside its tool call.
        }
        let event = &line.event;
        match event.get("type").and_then(Value::as_str) {
            Some("message_start") => {
                self.streaming_message = event.pointer("/message/id").and_then(Value::as_str).map(str::to_owned);
            }
            Some("content_block_delta") => {
                let delta = &event["delta"];
                let (text, thought) = match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => (delta.get("text").and_then(Value::as_str), false),
                    Some("thinking_delta") => (delta.get("thinking").and_then(Value::as_str), true),
                    _ => (None, false),
                };
                let Some(text) = text.filter(|text| !text.is_empty()) else { return };
                if let Some(message) = &self.streaming_message {
                    self.streamed.insert(message.clone());
                }
                self.chunk(text, thought);
            }
            _ => {}
        }
    }

    fn on_assistant(&mut self, line: cli_wire::MessageLine) {
        let streamed = line.message.id.as_ref().is_some_and(|id| self.streamed.contains(id));
        let subagent = line.parent_tool_use_id.is_some();
        for block in line.message.blocks() {
            match block.get("type").and_then(Value::as_str) {
                Some("text") if !streamed && !subagent => {
                    if let Some(text) = block.get("text").and_then(Value::as_str).filter(|text| !text.is_empty()) {
                        self.chunk(text, false);
                    }
                }
                Some("thinking") if !streamed && !subagent => {
                    if let Some(text) = block.get("thinking").and_then(Value::as_str).filter(|text| !text.is_empty()) {
                        self.chunk(text, true);
                    }
                }
                Some("tool_use") => {
                    let Some(id) = block.get("id").and_then(Value::as_str) else { continue };
                    let tool = ToolUse {
                        name: block.get("name").and_then(Value::as_str).unwrap_or("tool").to_owned(),
                        input: block.get("input").cloned().unwrap_or(Value::Null),
                    };
                    if self.tool_uses.contains_key(id) {
                        continue;
                    }
                    self.update(acp::SessionUpdate::ToolCall(tools::tool_call(id, &tool, &self.cwd)));
                    if tool.name == "TodoWrite"
                        && let Some(plan) = tools::plan(&tool.input)
                    {
                        self.update(acp::SessionUpdate::Plan(plan));
                    }
                    self.tool_uses.insert(id.to_owned(), tool);
                    self.unfinished_tools.insert(id.to_owned());
                }
                _ => {}
            }
        }
    }

    fn on_user(&mut self, line: cli_wire::MessageLine) {
        for block in line.message.blocks() {
            if block.get("type").and_then(Value::as_str) != Some("tool_result") {
                continue;
            }
            let Some(id) = block.get("tool_use_id").and_then(Value::as_str) else { continue };
            self.unfinished_tools.remove(id);
            let update = tools::tool_result(id, self.tool_uses.get(id), &block, line.tool_use_result.as_ref());
            self.update(acp::SessionUpdate::ToolCallUpdate(update));
        }
    }

    fn on_result(&mut self, result: cli_wire::ResultLine, now: u64) {
        if let Some(id) = result.session_id.as_ref().filter(|id| is_session_id(id) && result.num_turns > 0) {
            self.cli_session = Some(id.clone());
        }
        if let Some((used, size)) = result.context() {
            let mut usage = acp::UsageUpdate::new(used, size);
            if let Some(cost) = result.total_cost_usd.filter(|cost| *cost > 0.0) {
                usage = usage.cost(acp::Cost::new(cost, "USD"));
            }
            if let Some(duration) = result.duration_ms {
                let meta: acp::Meta = [("turnDurationMs".to_owned(), Value::from(duration))].into_iter().collect();
                usage = usage.meta(meta);
            }
            self.update(acp::SessionUpdate::UsageUpdate(usage));
        }
        let Some(prompt) = self.prompt.clone() else { return };
        let resume_refused = result.is_error && self.resuming && !prompt.started && result.num_turns == 0;
        if resume_refused && !self.cancelled {
            // The CLI could not find the session to resume (it was deleted, or made on another
            // machine): the conversation goes on in a new CLI session, and the person is told.
            let why = result.errors.join("; ");
            self.log(format!("Claude Code could not resume session {:?}: {why}", self.cli_session));
            let title = "Claude Code could not resume its earlier session, so this prompt starts a new one: it does not remember the earlier turns.";
            let mut notice = acp::Notice::new(acp::NoticeSeverity::Warning, title);
            if !why.is_empty() {
                notice = notice.description(why);
            }
            self.update(acp::SessionUpdate::Notice(notice));
            self.cli_session = None;
            self.finish_process();
            // The refusing CLI finishes by itself; the prompt goes to a new one.
            self.process = Process::Idle;
            self.send_user_message(prompt.content);
            return;
        }
        let outcome = if self.cancelled {
            Ok(acp::StopReason::Cancelled)
        } else if result.is_error {
            let mut words = result.result.clone().unwrap_or_default();
            if words.is_empty() {
                words = result.errors.join("; ");
            }
            if words.is_empty() {
                words = format!("Claude Code ended the turn with an error ({})", result.subtype);
            }
            Err(words)
        } else {
            Ok(match result.stop_reason.as_deref() {
                Some("max_tokens") => acp::StopReason::MaxTokens,
                Some("refusal") => acp::StopReason::Refusal,
                _ => acp::StopReason::EndTurn,
            })
        };
        self.end_prompt(outcome);
        match self.mode {
            ProcessMode::Oneshot => self.finish_process(),
            ProcessMode::Persistent { .. } => self.idle_since = Some(now),
        }
    }

    /// Ends the prompt in flight with `outcome`.
    fn end_prompt(&mut self, outcome: Result<acp::StopReason, String>) {
        let Some(prompt) = self.prompt.take() else { return };
        // A tool the turn ended in the middle of (an interrupt, a CLI that died) did not finish.
        for id in std::mem::take(&mut self.unfinished_tools) {
            let fields = acp::ToolCallUpdateFields::new().status(acp::ToolCallStatus::Failed);
            self.update(acp::SessionUpdate::ToolCallUpdate(acp::ToolCallUpdate::new(id, fields)));
        }
        self.streamed.clear();
        self.streaming_message = None;
        let line = match outcome {
            Ok(stop_reason) => jsonrpc::encode_result(&prompt.id, &acp::PromptResponse::new(stop_reason)),
            Err(message) => jsonrpc::encode_error(&prompt.id, &RpcError::internal_error().data(Value::from(message))),
        };
        self.to_client.push_back(line);
    }

    /// Closes the running CLI's input: it ends once it has finished.
    fn finish_process(&mut self) {
        if matches!(self.process, Process::Running { input_open: true } | Process::Starting) && !self.replaying {
            self.actions.push_back(ProcessAction::CloseInput);
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
                let Ok(ask) = serde_json::from_value::<CanUseTool>(request) else {
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

    fn on_can_use_tool(&mut self, cli_request: String, ask: CanUseToolAsk) {
        // The tool call the permission belongs to, in case no `assistant` line announced it.
        if !self.tool_uses.contains_key(&ask.tool_use_id) {
            self.update(acp::SessionUpdate::ToolCall(tools::tool_call(&ask.tool_use_id, &ask.tool, &self.cwd)));
            self.tool_uses.insert(ask.tool_use_id.clone(), ask.tool.clone());
            self.unfinished_tools.insert(ask.tool_use_id.clone());
        }
        let file = tools::edited_file(&ask.tool.name, &ask.tool.input).map(str::to_owned);
        match file {
            // The diff is computed from the file's text as the editor has it; read only inside
            // the workspace, where reading asks nobody. Replaying, the log has no such read.
            Some(path) if !self.replaying && self.in_workspace(&path) => {
                let id = format!("claude:read:{cli_request}");
                let request = serde_json::json!({ "sessionId": ACP_SESSION_ID, "path": path });
                let line = jsonrpc::encode_request(&RequestId::Str(id.clone()), "fs/read_text_file", &request);
                self.asked.insert(id, Asked::Read { cli_request, ask });
                self.to_client.push_back(line);
            }
            _ => self.ask_permission(cli_request, ask, None),
        }
    }

    /// Asks the client for the permission; `before` is the edited file's text when it was read
    /// (`Some(None)`: it does not exist).
    fn ask_permission(&mut self, cli_request: String, ask: CanUseToolAsk, before: Option<Option<String>>) {
        let call = tools::tool_call(&ask.tool_use_id, &ask.tool, &self.cwd);
        let mut fields = acp::ToolCallUpdateFields::new()
            .title(call.title)
            .kind(call.kind)
            .status(acp::ToolCallStatus::Pending)
            .raw_input(ask.tool.input.clone());
        if let (Some(before), Some(path)) = (&before, tools::edited_file(&ask.tool.name, &ask.tool.input))
            && let Some(after) = tools::text_after(&ask.tool.name, &ask.tool.input, before.as_deref())
        {
            let diff = acp::Diff::new(path, after).old_text(before.clone());
            fields = fields.content(vec![acp::ToolCallContent::Diff(diff)]);
        }
        let mut options = vec![acp::PermissionOption::new("allow_once", "Allow", acp::PermissionOptionKind::AllowOnce)];
        if ask.suggestions.as_ref().and_then(Value::as_array).is_some_and(|list| !list.is_empty()) {
            options.push(acp::PermissionOption::new(
                "allow_always",
                always_label(ask.suggestions.as_ref()),
                acp::PermissionOptionKind::AllowAlways,
            ));
        }
        options.push(acp::PermissionOption::new("reject_once", "Reject", acp::PermissionOptionKind::RejectOnce));
        let request = acp::RequestPermissionRequest::new(
            ACP_SESSION_ID,
            acp::ToolCallUpdate::new(ask.tool_use_id.clone(), fields),
            options,
        );
        let id = permission_id(&cli_request);
        let line = jsonrpc::encode_request(&RequestId::Str(id.clone()), "session/request_permission", &request);
        self.asked.insert(id, Asked::Permission { cli_request, ask });
        self.to_client.push_back(line);
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
        if let Some(position) = process {
            self.live_processes.remove(position);
        }
        if process.is_none() || !self.live_processes.is_empty() {
            // An older CLI, told to finish, has: the session's CLI is a newer one.
            return;
        }
        let expected = self.process == Process::Running { input_open: false };
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
        if self.prompt.is_some() {
            let mut message = format!("Claude Code {description} during the turn");
            if !stderr_tail.trim().is_empty() {
                message.push_str(&format!(": {}", stderr_tail.trim()));
            }
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
        idle.into_iter().chain(initialize).min()
    }

    /// A persistent CLI idle for its timeout has its input closed; the next prompt resumes. A
    /// CLI that has not answered `initialize` in time is not kept across turns.
    pub fn handle_timeout(&mut self, now: u64) {
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
                    self.finish_process();
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
            self.finish_process();
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

    /// Starts replaying a session's log: the client is given the handshake a live session
    /// would have had (nothing of it is in the log, which holds the CLI's wire only). Returns
    /// the lines the client "sent" and "received", in order, for its replay.
    pub fn replay_start(&mut self, cwd: &str) -> Vec<ReplayLine> {
        self.replaying = true;
        self.cwd = cwd.to_owned();
        let initialize = jsonrpc::encode_request(
            &RequestId::Str("claude:initialize".to_owned()),
            "initialize",
            &serde_json::json!({ "protocolVersion": 1, "clientCapabilities": {} }),
        );
        let new = jsonrpc::encode_request(
            &RequestId::Str("claude:session".to_owned()),
            "session/new",
            &serde_json::json!({ "cwd": cwd, "mcpServers": [] }),
        );
        let mut lines = Vec::new();
        for request in [initialize, new] {
            lines.push(ReplayLine::Sent(request.clone()));
            self.handle_client_line(&request);
            lines.extend(std::iter::from_fn(|| self.to_client.pop_front()).map(ReplayLine::Received));
        }
        lines
    }

    /// A line Tether wrote to the CLI, read back from the log: the ACP lines the client sent
    /// that caused it (a prompt, a permission answer, a cancel).
    pub fn replay_sent_cli(&mut self, line: &str) -> Vec<ReplayLine> {
        let Ok(value) = serde_json::from_str::<Value>(line) else { return Vec::new() };
        match value.get("type").and_then(Value::as_str) {
            Some("user") => {
                self.replayed_prompts += 1;
                let id = RequestId::Str(format!("claude:prompt:{}", self.replayed_prompts));
                let content = value.pointer("/message/content").cloned().unwrap_or(Value::Null);
                let blocks = cli_wire::ApiMessage { id: None, content }.blocks();
                let prompt: Vec<Value> = blocks
                    .iter()
                    .filter_map(|block| block.get("text").and_then(Value::as_str))
                    .map(|text| serde_json::json!({ "type": "text", "text": text }))
                    .collect();
                if self.prompt.is_some() {
                    // Sent again for a fresh session after a refused resume: the same turn.
                    return Vec::new();
                }
                self.cancelled = false;
                self.prompt = Some(Prompt { id: id.clone(), content: blocks, started: false });
                let params = serde_json::json!({ "sessionId": ACP_SESSION_ID, "prompt": prompt });
                vec![ReplayLine::Sent(jsonrpc::encode_request(&id, "session/prompt", &params))]
            }
            Some("control_request") => {
                let id = value.get("request_id").and_then(Value::as_str).unwrap_or_default().to_owned();
                // Live requests go on numbering after the replayed ones.
                if let Some(number) = id.strip_prefix("tether-").and_then(|number| number.parse::<u64>().ok()) {
                    self.next_request = self.next_request.max(number);
                }
                match value.pointer("/request/subtype").and_then(Value::as_str) {
                    Some("initialize") => {
                        // A CLI's first line: it was started here.
                        self.own_requests.insert(id, OwnRequest::Initialize);
                        self.started_processes += 1;
                        self.live_processes.push_back(self.started_processes);
                        self.process = Process::Running { input_open: true };
                        self.resuming = self.cli_session.is_some();
                        Vec::new()
                    }
                    Some("interrupt") => {
                        self.own_requests.insert(id, OwnRequest::Interrupt);
                        self.cancelled = true;
                        let params = serde_json::json!({ "sessionId": ACP_SESSION_ID });
                        vec![ReplayLine::Sent(jsonrpc::encode_notification("session/cancel", &params))]
                    }
                    // The client's switch that caused it, as it sent it (its answer follows
                    // with the CLI's).
                    Some("set_permission_mode") => {
                        let mode =
                            value.pointer("/request/mode").and_then(Value::as_str).unwrap_or_default().to_owned();
                        self.permission_mode = mode.clone();
                        let client = RequestId::Str(format!("claude:mode:{id}"));
                        self.own_requests.insert(id, OwnRequest::SetMode { client: Some(client.clone()) });
                        let params = serde_json::json!({ "sessionId": ACP_SESSION_ID, "modeId": mode });
                        vec![ReplayLine::Sent(jsonrpc::encode_request(&client, "session/set_mode", &params))]
                    }
                    Some("set_model") => {
                        self.model = value.pointer("/request/model").and_then(Value::as_str).map(str::to_owned);
                        let client = RequestId::Str(format!("claude:model:{id}"));
                        self.own_requests.insert(id, OwnRequest::SetModel { client: Some(client.clone()) });
                        let params = serde_json::json!({
                            "sessionId": ACP_SESSION_ID,
                            "configId": "model",
                            "value": self.model.clone().unwrap_or_default(),
                        });
                        vec![ReplayLine::Sent(jsonrpc::encode_request(&client, "session/set_config_option", &params))]
                    }
                    _ => Vec::new(),
                }
            }
            Some("control_response") => {
                let Some(request_id) = value.pointer("/response/request_id").and_then(Value::as_str) else {
                    return Vec::new();
                };
                let key = permission_id(request_id);
                if !matches!(self.asked.remove(&key), Some(Asked::Permission { .. })) {
                    return Vec::new();
                }
                let answer = value.pointer("/response/response").cloned().unwrap_or(Value::Null);
                let option = match answer.get("behavior").and_then(Value::as_str) {
                    Some("allow") if answer.get("updatedPermissions").is_some() => "allow_always",
                    Some("allow") => "allow_once",
                    _ if answer.get("interrupt").and_then(Value::as_bool) == Some(true) => {
                        let result = serde_json::json!({ "outcome": { "outcome": "cancelled" } });
                        return vec![ReplayLine::Sent(jsonrpc::encode_result(&RequestId::Str(key), &result))];
                    }
                    _ => "reject_once",
                };
                let result = serde_json::json!({ "outcome": { "outcome": "selected", "optionId": option } });
                vec![ReplayLine::Sent(jsonrpc::encode_result(&RequestId::Str(key), &result))]
            }
            _ => Vec::new(),
        }
    }

    /// How CLIs are run from now on (the setting may have changed since the log was written).
    pub fn set_process_mode(&mut self, mode: ProcessMode) {
        self.mode = mode;
    }

    /// The CLI whose lines were replayed is still running (a window reload): going on with it.
    /// Returns its number, for its exit; `None` when the log says no CLI runs (the translator
    /// then stays as it was: call [`ClaudeCli::finish_replay`]).
    pub fn continue_live(&mut self) -> Option<u64> {
        let process = *self.live_processes.back()?;
        self.replaying = false;
        if self.process == Process::Idle {
            self.process = Process::Running { input_open: true };
        }
        Some(process)
    }

    /// Replaying is over and no CLI runs any more: the next prompt starts one, resuming.
    pub fn finish_replay(&mut self) {
        self.replaying = false;
        self.process = Process::Idle;
        self.prompt = None;
        self.asked.clear();
        self.own_requests.clear();
    }

    // Plumbing.

    fn start_process(&mut self) {
        let args = cli_arguments(&self.permission_mode, self.model.as_deref(), self.cli_session.as_deref());
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
            self.actions.push_back(ProcessAction::Start { process, args });
        }
        let id = self.own_request(OwnRequest::Initialize);
        self.write_cli(cli_wire::control_request(&id, serde_json::json!({ "subtype": "initialize", "hooks": null })));
    }

    fn send_user_message(&mut self, content: Vec<Value>) {
        if matches!(self.process, Process::Idle | Process::Running { input_open: false }) {
            if let Process::Running { input_open: false } = self.process {
                // The old CLI is finishing; the new one resumes what it wrote.
                self.log("a new prompt while Claude Code was still finishing the last: starting another".to_owned());
            }
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

    fn in_workspace(&self, path: &str) -> bool {
        !self.cwd.is_empty()
            && path.strip_prefix(self.cwd.trim_end_matches('/')).is_some_and(|rest| rest.starts_with('/'))
            && !path.split('/').any(|part| part == "..")
    }

    fn log(&mut self, text: String) {
        self.events.push_back(CliEvent::Log(text));
    }
}

/// The arguments Tether starts the CLI with (after the profile's own): stream-json both ways
/// with partial messages, permissions asked over the control protocol, the mode and model, and
/// the session to resume.
pub fn cli_arguments(permission_mode: &str, model: Option<&str>, resume: Option<&str>) -> Vec<String> {
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
    let texts: Vec<String> = cli_wire::ApiMessage { id: None, content }
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

/// A line of the handshake or of a replayed prompt, as the client's replay takes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplayLine {
    /// A line the client sent (its `replay_sent`).
    Sent(String),
    /// A line the client received (its `replay_received`).
    Received(String),
}

/// The ACP id of the permission request for the CLI's `can_use_tool` `cli_request`: the same
/// live and replayed, so a replayed answer finds its card.
fn permission_id(cli_request: &str) -> String {
    format!("claude:permission:{cli_request}")
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

/// What "always" would allow, from the CLI's suggestions.
fn always_label(suggestions: Option<&Value>) -> String {
    let first = suggestions.and_then(Value::as_array).and_then(|list| list.first());
    match first.and_then(|suggestion| suggestion.get("type")).and_then(Value::as_str) {
        Some("setMode") => match first.and_then(|suggestion| suggestion.get("mode")).and_then(Value::as_str) {
            Some("acceptEdits") => "Allow, and accept edits from now on".to_owned(),
            Some(mode) => format!("Allow, and switch to {mode}"),
            None => "Always allow".to_owned(),
        },
        _ => "Always allow".to_owned(),
    }
}

/// The CLI's answer for the client's permission `outcome` (`None`: the client refused the
/// request, which counts as a cancel).
fn permission_answer(outcome: Option<acp::RequestPermissionOutcome>, ask: &CanUseToolAsk) -> Value {
    match outcome {
        Some(acp::RequestPermissionOutcome::Selected(selected)) => match &*selected.option_id.0 {
            "allow_once" => serde_json::json!({ "behavior": "allow", "updatedInput": ask.tool.input }),
            "allow_always" => serde_json::json!({
                "behavior": "allow",
                "updatedInput": ask.tool.input,
                "updatedPermissions": ask.suggestions.clone().unwrap_or(Value::Array(Vec::new())),
            }),
            _ => serde_json::json!({
                "behavior": "deny",
                "message": "Rejected in Tether, by the person or by a rule or mode of theirs.",
            }),
        },
        _ => serde_json::json!({
            "behavior": "deny",
            "message": "The person cancelled the turn in Tether.",
            "interrupt": true,
        }),
    }
}

/// A prompt's ACP content blocks as the CLI's message content: text as it is, a mentioned file
/// (resource link) by its path, an embedded file as text in a tag naming it, an image as an
/// image block.
fn prompt_content(prompt: Option<&Value>) -> Vec<Value> {
    let Some(blocks) = prompt.and_then(Value::as_array) else { return Vec::new() };
    blocks
        .iter()
        .filter_map(|block| match block.get("type").and_then(Value::as_str) {
            Some("text") => Some(serde_json::json!({ "type": "text", "text": block.get("text")? })),
            Some("resource_link") => {
                let uri = block.get("uri")?.as_str()?;
                Some(serde_json::json!({ "type": "text", "text": format!("@{}", uri.trim_start_matches("file://")) }))
            }
            Some("resource") => {
                let resource = block.get("resource")?;
                let uri = resource.get("uri").and_then(Value::as_str).unwrap_or_default();
                let text = resource.get("text")?.as_str()?;
                let path = uri.trim_start_matches("file://");
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
