//! The ACP agent: answers the client's requests and runs scenario scripts as prompt turns.
//!
//! Everything happens on one thread. The main loop alternates between advancing every running
//! turn as far as it can go and waiting for the next input line or the next timer, whichever
//! comes first. A turn is an explicit state machine (a stack of step lists plus what it is
//! waiting for) rather than a blocking call, so that several sessions can run turns at once, a
//! `session/cancel` can cut a sleep or a stream short, and permission requests can be
//! outstanding while the script goes on (and be withdrawn with `$/cancel_request`).

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use agent_client_protocol_schema::ProtocolVersion;
use agent_client_protocol_schema::v1::{
    AgentCapabilities, CancelNotification, CancelRequestNotification, ClientCapabilities, ContentBlock, ContentChunk,
    CreateTerminalRequest, CreateTerminalResponse, CurrentModeUpdate, Diff, Error, ErrorCode, Implementation,
    InitializeRequest, InitializeResponse, LoadSessionRequest, LoadSessionResponse, McpServer, NewSessionRequest,
    NewSessionResponse, PermissionOption, PermissionOptionKind, Plan, PlanEntry, PromptCapabilities, PromptRequest,
    PromptResponse, ReadTextFileRequest, ReadTextFileResponse, ReleaseTerminalRequest, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SessionId, SessionMode, SessionModeState, SessionNotification,
    SessionUpdate, SetSessionModeRequest, SetSessionModeResponse, StopReason, Terminal, TerminalExitStatus, TerminalId,
    TerminalOutputRequest, TerminalOutputResponse, ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus,
    ToolCallUpdate, ToolCallUpdateFields, ToolKind, WaitForTerminalExitRequest, WaitForTerminalExitResponse,
    WriteTextFileRequest,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::history::History;
use crate::scenario::{DiffSpec, LocationSpec, NewText, PermissionSpec, Scenario, Speech, Step};
use crate::transport::{Input, MAX_INPUT_LINE, Output, Trace};

/// The test agent's whole state.
pub struct Agent {
    scenario: Scenario,
    wire: Wire,
    client_capabilities: ClientCapabilities,
    sessions: BTreeMap<String, Session>,
    sessions_created: u64,
    terminals_started: u64,
    /// Bursts run so far: each names its tool calls apart, so a later burst adds entries rather
    /// than updating an earlier one's tool calls.
    bursts_started: u64,
}

/// Everything that goes out on stdout, plus the bookkeeping of the agent's own requests.
struct Wire {
    output: Output,
    trace: Trace,
    /// Where sessions are stored for `session/load`, when the agent was given a state folder.
    history: Option<History>,
    next_request_id: i64,
    /// Requests the agent sent to the client and has no answer for yet, by id.
    pending: HashMap<i64, PendingRequest>,
}

struct Session {
    id: SessionId,
    cwd: PathBuf,
    /// What permission requests repeat about a tool call announced earlier.
    tool_calls: HashMap<String, ToolCallSummary>,
    /// The tool call ids sent in this session, and the ids the scenario gives its calls mapped to
    /// those sent for them. ACP wants a tool call's id used once in a session, and a prompt that
    /// runs again (the Demo's runs for every prompt) names its calls as before: a repeated id is
    /// sent with a number after it (`demo-read-2`), and what the scenario says of the call next
    /// goes to that one.
    sent_tool_call_ids: HashSet<String>,
    tool_call_aliases: HashMap<String, String>,
    /// The current session mode; `None` when the scenario declares no modes.
    mode: Option<String>,
    /// The current model; `None` when the scenario declares no models.
    model: Option<String>,
    /// The MCP servers `session/new`, `session/load` or `session/fork` named.
    mcp_servers: Vec<McpServer>,
    /// The session `session/fork` made this one from, for `report_fork`. A fork loaded again
    /// with `session/load` does not know it any more: the stored updates do not say.
    forked_from: Option<SessionId>,
    turn: Option<Turn>,
}

impl Session {
    /// `step` with the tool call ids the scenario wrote replaced by those sent for them (see
    /// `tool_call_aliases`); a new tool call gets an id this session has not sent.
    fn with_sent_tool_call_ids(&mut self, step: Step) -> Step {
        match step {
            Step::ToolCall(mut spec) => {
                let mut sent = spec.id.clone();
                let mut number = 1;
                while self.sent_tool_call_ids.contains(&sent) {
                    number += 1;
                    sent = format!("{}-{number}", spec.id);
                }
                self.sent_tool_call_ids.insert(sent.clone());
                self.tool_call_aliases.insert(spec.id, sent.clone());
                spec.id = sent;
                Step::ToolCall(spec)
            }
            Step::ToolUpdate(mut spec) => {
                spec.id = self.sent_tool_call_id(spec.id);
                Step::ToolUpdate(spec)
            }
            Step::AskPermission(mut spec) => {
                spec.tool_call_id = self.sent_tool_call_id(spec.tool_call_id);
                Step::AskPermission(spec)
            }
            Step::CancelPermission(mut spec) => {
                spec.tool_call_id = self.sent_tool_call_id(spec.tool_call_id);
                Step::CancelPermission(spec)
            }
            Step::Terminal(mut spec) => {
                spec.tool_call_id = spec.tool_call_id.map(|id| self.sent_tool_call_id(id));
                Step::Terminal(spec)
            }
            other => other,
        }
    }

    fn sent_tool_call_id(&self, id: String) -> String {
        self.tool_call_aliases.get(&id).cloned().unwrap_or(id)
    }
}

/// The params of `session/fork`, as the schema's unstable `ForkSessionRequest` has them on the
/// wire (its `additionalDirectories` is ignored). Written out here rather than taken from the
/// schema crate's `unstable_session_fork` feature because Cargo unifies features across the
/// packages of one build: enabling it for this crate would change the schema types `tether-core`
/// is compiled against whenever both are built together.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ForkSessionParams {
    session_id: SessionId,
    cwd: PathBuf,
    #[serde(default)]
    mcp_servers: Vec<McpServer>,
}

struct ToolCallSummary {
    title: String,
    kind: ToolKind,
    raw_input: Option<Value>,
}

/// A prompt turn in progress.
struct Turn {
    /// The id of the `session/prompt` request this turn will answer.
    prompt_id: Value,
    /// Step lists being run, innermost (a permission branch) last.
    frames: Vec<Frame>,
    wait: Wait,
    cancelled: bool,
    /// Permission requests sent in this turn that the client has not answered yet.
    unanswered_permissions: Vec<i64>,
    /// Answers whose branch has not run yet, in the order they arrived.
    answered_permissions: VecDeque<AnsweredPermission>,
}

struct Frame {
    steps: Vec<Step>,
    next: usize,
    /// Pushed after the turn was cancelled (a permission's `cancelled` branch): it runs to its
    /// end instead of being dropped at the next step boundary.
    cleanup: bool,
}

/// What a turn is waiting for before its next step.
enum Wait {
    Ready,
    Until(Instant),
    Stream(Stream),
    /// Thread entries being sent one after the other (a `burst` step).
    Burst(Burst),
    /// The answer to an `fs/*` or `terminal/*` request; its handler moves the turn on.
    Response(i64),
    Permission(i64),
    AllPermissions,
}

/// Text being streamed piece by piece.
struct Stream {
    thought: bool,
    pieces: VecDeque<String>,
    interval: Duration,
    next_at: Instant,
}

/// A `burst` step under way: entry `next` (from 1) of `total` is sent next.
struct Burst {
    /// Which burst of the agent's this is, in its tool calls' ids.
    id: u64,
    next: usize,
    total: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Branch {
    Allowed,
    Rejected,
    Cancelled,
}

struct AnsweredPermission {
    request_id: i64,
    branch: Branch,
    steps: Vec<Step>,
}

struct PendingRequest {
    session_key: String,
    purpose: Purpose,
}

/// Why the agent sent a request, and what it needs to carry on when the answer comes.
enum Purpose {
    Permission {
        tool_call_id: String,
        offered: Vec<PermissionOptionKind>,
        allowed: Vec<Step>,
        rejected: Vec<Step>,
        cancelled: Vec<Step>,
        /// Start the selected branch with a message saying what the answer was.
        report: bool,
        /// The agent withdrew the request with `$/cancel_request`, so an error answer is
        /// expected rather than worth a note on stderr.
        withdrawn: bool,
    },
    ReadFile {
        path: PathBuf,
    },
    WriteFile {
        path: PathBuf,
    },
    CreateTerminal {
        command_line: String,
        /// The tool call that shows the terminal, when the scenario named one (the one it asked
        /// permission for); else a new one.
        tool_call_id: Option<String>,
    },
    WaitForExit(TerminalRun),
    Output(TerminalRun, TerminalExitStatus),
    Release(TerminalRun, ToolCallStatus, String),
    /// A request whose answer does not matter any more (a release sent while cancelling).
    Detached,
}

impl PendingRequest {
    /// Whether this is a session's permission request about a tool call.
    fn is_permission_for(&self, session_key: &str, tool_call_id: &str) -> bool {
        let Purpose::Permission { tool_call_id: asked_about, .. } = &self.purpose else {
            return false;
        };
        self.session_key == session_key && asked_about == tool_call_id
    }
}

/// A command running in a client terminal, as far as the agent knows it.
struct TerminalRun {
    terminal_id: TerminalId,
    command_line: String,
    tool_call_id: String,
}

impl Agent {
    pub fn new(scenario: Scenario, output: Output, trace: Trace, history: Option<History>) -> Self {
        // Stored sessions keep their ids: new ones continue after them.
        let sessions_created = history.as_ref().map_or(0, |history| history.count() as u64);
        Self {
            scenario,
            wire: Wire { output, trace, history, next_request_id: 1, pending: HashMap::new() },
            client_capabilities: ClientCapabilities::default(),
            sessions: BTreeMap::new(),
            sessions_created,
            terminals_started: 0,
            bursts_started: 0,
        }
    }

    /// Serves the client until it closes stdin. An error means stdout or stdin broke.
    pub fn run(mut self, input: &Receiver<Input>) -> io::Result<()> {
        loop {
            let running: Vec<String> = self
                .sessions
                .iter()
                .filter(|(_, session)| session.turn.is_some())
                .map(|(key, _)| key.clone())
                .collect();
            let mut deadline: Option<Instant> = None;
            for key in running {
                if let Some(due) = self.advance(&key)? {
                    deadline = Some(deadline.map_or(due, |earlier| earlier.min(due)));
                }
            }
            let next = match deadline {
                Some(due) => match input.recv_timeout(due.saturating_duration_since(Instant::now())) {
                    Ok(next) => next,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => return Ok(()),
                },
                None => match input.recv() {
                    Ok(next) => next,
                    Err(_) => return Ok(()),
                },
            };
            match next {
                Input::Line(line) => self.handle_line(&line)?,
                Input::TooLong { length } => {
                    self.wire.trace.note(&format!("dropped a line of {length} bytes"));
                    let message =
                        format!("Parse error: a line of {length} bytes exceeds the limit of {MAX_INPUT_LINE} bytes");
                    self.wire.respond(&Value::Null, Err(Error::new(ErrorCode::ParseError.into(), message)))?;
                }
                Input::Closed => {
                    self.wire.trace.note("stdin closed; exiting");
                    return Ok(());
                }
                Input::Failed(error) => return Err(error),
            }
        }
    }

    // ----- Incoming messages -----

    fn handle_line(&mut self, line: &[u8]) -> io::Result<()> {
        self.wire.trace.received(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        let message: Value = match serde_json::from_slice(line) {
            Ok(message) => message,
            Err(error) => {
                let error = Error::new(ErrorCode::ParseError.into(), format!("Parse error: {error}"));
                return self.wire.respond(&Value::Null, Err(error));
            }
        };
        let Value::Object(mut object) = message else {
            let error = Error::new(ErrorCode::InvalidRequest.into(), "Invalid request: not a JSON object");
            return self.wire.respond(&Value::Null, Err(error));
        };
        let id = object.remove("id");
        let params = object.remove("params").unwrap_or(Value::Null);
        match (object.remove("method"), id) {
            (Some(Value::String(method)), Some(id)) => self.handle_request(id, &method, params),
            (Some(Value::String(method)), None) => {
                self.handle_notification(&method, params);
                Ok(())
            }
            (None, Some(id)) if object.contains_key("result") || object.contains_key("error") => {
                let outcome = match object.remove("error") {
                    Some(error) => Err(error),
                    None => Ok(object.remove("result").unwrap_or(Value::Null)),
                };
                self.handle_response(&id, outcome)
            }
            (_, id) => {
                let error = Error::new(
                    ErrorCode::InvalidRequest.into(),
                    "Invalid request: neither a request, a notification nor a response",
                );
                self.wire.respond(&id.unwrap_or(Value::Null), Err(error))
            }
        }
    }

    fn handle_request(&mut self, id: Value, method: &str, params: Value) -> io::Result<()> {
        if method == "initialize"
            && let Some(line) = &self.scenario.stderr_at_initialize
        {
            eprintln!("{line}");
        }
        let answer = match method {
            "initialize" if self.scenario.hang_initialize => {
                // A hung agent: the request is read and never answered.
                self.wire.trace.note("initialize left unanswered (hang_initialize)");
                return Ok(());
            }
            "initialize" => self.initialize(params),
            "session/new" => self.new_session(params),
            "session/load" => return self.load_session(id, params),
            "session/fork" => self.fork_session(params),
            "session/prompt" => return self.start_prompt(id, params),
            "session/set_mode" => return self.set_mode(id, params),
            "session/set_model" => self.set_model(params),
            _ => Err(Error::new(ErrorCode::MethodNotFound.into(), format!("Method not found: {method}"))),
        };
        self.wire.respond(&id, answer)
    }

    fn handle_notification(&mut self, method: &str, params: Value) {
        match method {
            "session/cancel" => match parse_params::<CancelNotification>(params) {
                Ok(cancel) => self.cancel(&cancel.session_id),
                Err(error) => {
                    // A notification cannot be answered: say so where a person will look.
                    eprintln!("tether-test-agent: ignored session/cancel: {}", error.message);
                    self.wire.trace.note(&format!("bad session/cancel: {}", error.message));
                }
            },
            _ => self.wire.trace.note(&format!("ignored notification {method}")),
        }
    }

    fn initialize(&mut self, params: Value) -> Result<Value, Error> {
        let request: InitializeRequest = parse_params(params)?;
        self.client_capabilities = request.client_capabilities;
        let response = InitializeResponse::new(ProtocolVersion::V1)
            .agent_capabilities(
                AgentCapabilities::new()
                    .load_session(self.wire.history.is_some())
                    // The scripts answer whatever a prompt holds, so the demo takes what real
                    // agents take: images and files embedded in the prompt.
                    .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true)),
            )
            .auth_methods(Vec::new())
            .agent_info(Implementation::new("tether-test-agent", env!("CARGO_PKG_VERSION")));
        let mut answer = to_json(response);
        if self.scenario.fork {
            // Added by hand, as the stable schema types have no `fork` (see `ForkSessionParams`).
            answer["agentCapabilities"]["sessionCapabilities"]["fork"] = json!({});
        }
        Ok(answer)
    }

    fn new_session(&mut self, params: Value) -> Result<Value, Error> {
        let request: NewSessionRequest = parse_params(params)?;
        if !request.cwd.is_absolute() {
            return Err(Error::new(
                ErrorCode::InvalidParams.into(),
                format!("Invalid params: cwd must be an absolute path, got {}", request.cwd.display()),
            ));
        }
        let key = self.fresh_session_id(None);
        let session = Session {
            id: SessionId::new(key.as_str()),
            cwd: request.cwd,
            tool_calls: HashMap::new(),
            sent_tool_call_ids: HashSet::new(),
            tool_call_aliases: HashMap::new(),
            mode: self.scenario.modes.as_ref().map(|modes| modes.initial.clone()),
            model: self.scenario.models.as_ref().map(|models| models.initial.clone()),
            mcp_servers: request.mcp_servers,
            forked_from: None,
            turn: None,
        };
        self.sessions.insert(key.clone(), session);
        if let Some(history) = &self.wire.history {
            history.create(&key).map_err(|error| {
                Error::new(ErrorCode::InternalError.into(), format!("cannot store the session {key}: {error}"))
            })?;
        }
        Ok(self.with_models(to_json(NewSessionResponse::new(key).modes(self.session_modes()))))
    }

    /// `session/fork` (offered with `fork = true`): a new session that goes on from the one named,
    /// answered with its id. Prompts name the session they are for, so the fork is the session
    /// the client prompts from then on simply by using that id. The source may be a session of
    /// an earlier agent process, as when a client restores a conversation in a new agent, so any
    /// non-empty id is taken. The fork starts in the scenario's initial mode and model, like a
    /// new session. With `--state-dir`, a stored source's updates are copied to the fork, so that
    /// `session/load` of the fork replays the conversation it was forked from.
    fn fork_session(&mut self, params: Value) -> Result<Value, Error> {
        if !self.scenario.fork {
            // Not offered (no `sessionCapabilities.fork`), like any method this agent does not have.
            return Err(Error::new(ErrorCode::MethodNotFound.into(), "Method not found: session/fork"));
        }
        let request: ForkSessionParams = parse_params(params)?;
        let source = request.session_id;
        if source.0.is_empty() {
            return Err(Error::new(ErrorCode::InvalidParams.into(), "Invalid params: sessionId must not be empty"));
        }
        if !request.cwd.is_absolute() {
            return Err(Error::new(
                ErrorCode::InvalidParams.into(),
                format!("Invalid params: cwd must be an absolute path, got {}", request.cwd.display()),
            ));
        }
        let key = self.fresh_session_id(Some(&source.0));
        if let Some(history) = &self.wire.history {
            let copied = history.fork(&source.0, &key).map_err(|error| {
                Error::new(ErrorCode::InternalError.into(), format!("cannot store the session {key}: {error}"))
            })?;
            let what = if copied { "with its stored updates" } else { "which is not stored here" };
            self.wire.trace.note(&format!("forked {key} from {source}, {what}"));
        }
        let session = Session {
            id: SessionId::new(key.as_str()),
            cwd: request.cwd,
            tool_calls: HashMap::new(),
            sent_tool_call_ids: HashSet::new(),
            tool_call_aliases: HashMap::new(),
            mode: self.scenario.modes.as_ref().map(|modes| modes.initial.clone()),
            model: self.scenario.models.as_ref().map(|models| models.initial.clone()),
            mcp_servers: request.mcp_servers,
            forked_from: Some(source),
            turn: None,
        };
        self.sessions.insert(key.clone(), session);
        // ACP's `ForkSessionResponse`: `sessionId`, and `modes` as `session/new` has them.
        let mut answer = json!({ "sessionId": key });
        if let Some(modes) = self.session_modes() {
            answer["modes"] = to_json(modes);
        }
        Ok(self.with_models(answer))
    }

    /// An id no session of this process has and no stored session has: `test-session-N`, N one
    /// more than the last. A fork's N is also above its source's, so that along a chain of forks
    /// across agent processes (which, without `--state-dir`, each count from 1 again) a fork
    /// never gets the id of its source or of an earlier session of the chain.
    fn fresh_session_id(&mut self, fork_source: Option<&str>) -> String {
        let source_number =
            fork_source.and_then(|id| id.strip_prefix("test-session-")).and_then(|number| number.parse::<u64>().ok());
        if let Some(number) = source_number {
            self.sessions_created = self.sessions_created.max(number);
        }
        loop {
            self.sessions_created += 1;
            let key = format!("test-session-{}", self.sessions_created);
            let stored = self.wire.history.as_ref().is_some_and(|history| history.contains(&key));
            if !stored && !self.sessions.contains_key(&key) {
                return key;
            }
        }
    }

    /// A session answer with the scenario's models added as Claude Code's and Gemini CLI's ACP
    /// adapters announce theirs (`models`: `availableModels`, `currentModelId`), which the stable
    /// schema does not type.
    fn with_models(&self, mut answer: Value) -> Value {
        if let (Some(models), Value::Object(fields)) = (&self.scenario.models, &mut answer) {
            let available: Vec<Value> = models
                .available
                .iter()
                .map(|model| json!({ "modelId": model.id, "name": model.name, "description": model.description }))
                .collect();
            fields
                .insert("models".to_owned(), json!({ "availableModels": available, "currentModelId": models.initial }));
        }
        answer
    }

    /// `session/set_model` (as those adapters take it): switches the session's model.
    fn set_model(&mut self, params: Value) -> Result<Value, Error> {
        let Some(models) = &self.scenario.models else {
            return Err(Error::new(ErrorCode::MethodNotFound.into(), "Method not found: session/set_model"));
        };
        let (Some(session_id), Some(model)) = (params["sessionId"].as_str(), params["modelId"].as_str()) else {
            return Err(Error::new(
                ErrorCode::InvalidParams.into(),
                "Invalid params: sessionId and modelId are needed",
            ));
        };
        if !models.contains(model) {
            return Err(Error::new(
                ErrorCode::InvalidParams.into(),
                format!("Invalid params: unknown model `{model}` (models: {})", models.ids()),
            ));
        }
        let Some(session) = self.sessions.get_mut(session_id) else {
            return Err(unknown_session(&SessionId::new(session_id)));
        };
        session.model = Some(model.to_owned());
        Ok(json!({}))
    }

    /// The session modes a session starts with, when the scenario has modes.
    fn session_modes(&self) -> Option<SessionModeState> {
        self.scenario.modes.as_ref().map(|modes| {
            let available = modes
                .available
                .iter()
                .map(|mode| SessionMode::new(mode.id.clone(), mode.name.clone()).description(mode.description.clone()))
                .collect();
            SessionModeState::new(modes.initial.clone(), available)
        })
    }

    /// `session/load`: replays a stored session's updates, then answers; the session then takes
    /// prompts like a new one.
    fn load_session(&mut self, id: Value, params: Value) -> io::Result<()> {
        if self.wire.history.is_none() {
            // Not offered (`loadSession: false`), like any method this agent does not have.
            let error = Error::new(ErrorCode::MethodNotFound.into(), "Method not found: session/load".to_owned());
            return self.wire.respond(&id, Err(error));
        }
        let request: LoadSessionRequest = match parse_params(params) {
            Ok(request) => request,
            Err(error) => return self.wire.respond(&id, Err(error)),
        };
        let key = request.session_id.0.to_string();
        let stored = match self.wire.history.as_ref().map(|history| history.load(&key)) {
            Some(Ok(Some(updates))) => Ok(updates),
            Some(Ok(None)) | None => {
                Err(Error::new(ErrorCode::ResourceNotFound.into(), format!("Resource not found: session {key}")))
            }
            Some(Err(error)) => {
                Err(Error::new(ErrorCode::InternalError.into(), format!("cannot read session {key}: {error}")))
            }
        };
        let updates = match stored {
            Ok(updates) => updates,
            Err(error) => return self.wire.respond(&id, Err(error)),
        };
        let sent_tool_call_ids: HashSet<String> = updates
            .iter()
            .filter_map(|update| match update {
                SessionUpdate::ToolCall(call) => Some(call.tool_call_id.0.to_string()),
                _ => None,
            })
            .collect();
        for update in updates {
            // Sent again, not stored again.
            self.wire.notify("session/update", SessionNotification::new(request.session_id.clone(), update))?;
        }
        let session = Session {
            id: request.session_id.clone(),
            cwd: request.cwd,
            tool_calls: HashMap::new(),
            sent_tool_call_ids,
            tool_call_aliases: HashMap::new(),
            mode: self.scenario.modes.as_ref().map(|modes| modes.initial.clone()),
            model: self.scenario.models.as_ref().map(|models| models.initial.clone()),
            mcp_servers: request.mcp_servers,
            forked_from: None,
            turn: None,
        };
        self.sessions.insert(key, session);
        let response = LoadSessionResponse::new().modes(self.session_modes());
        self.wire.respond(&id, Ok(self.with_models(to_json(response))))
    }

    /// Switches a session's mode. The `current_mode_update` goes out before the answer, so a
    /// client that waits for the answer has already seen the new mode.
    fn set_mode(&mut self, id: Value, params: Value) -> io::Result<()> {
        let Some(modes) = &self.scenario.modes else {
            let error = Error::new(ErrorCode::MethodNotFound.into(), "Method not found: session/set_mode");
            return self.wire.respond(&id, Err(error));
        };
        let request: SetSessionModeRequest = match parse_params(params) {
            Ok(request) => request,
            Err(error) => return self.wire.respond(&id, Err(error)),
        };
        let Some(session) = self.sessions.get_mut(request.session_id.0.as_ref()) else {
            return self.wire.respond(&id, Err(unknown_session(&request.session_id)));
        };
        if !modes.contains(&request.mode_id.0) {
            let error = Error::new(
                ErrorCode::InvalidParams.into(),
                format!("Invalid params: unknown mode `{}` (modes: {})", request.mode_id, modes.ids()),
            );
            return self.wire.respond(&id, Err(error));
        }
        session.mode = Some(request.mode_id.0.to_string());
        self.wire.update(&session.id, SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(request.mode_id)))?;
        self.wire.respond(&id, Ok(to_json(SetSessionModeResponse::new())))
    }

    fn start_prompt(&mut self, id: Value, params: Value) -> io::Result<()> {
        let request: PromptRequest = match parse_params(params) {
            Ok(request) => request,
            Err(error) => return self.wire.respond(&id, Err(error)),
        };
        let Some(session) = self.sessions.get_mut(request.session_id.0.as_ref()) else {
            return self.wire.respond(&id, Err(unknown_session(&request.session_id)));
        };
        if session.turn.is_some() {
            let error = Error::new(
                ErrorCode::InvalidRequest.into(),
                format!("session {} already has a prompt in progress", request.session_id),
            );
            return self.wire.respond(&id, Err(error));
        }
        let prompt_text: String = request
            .prompt
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text(text) => Some(text.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let session_id = session.id.clone();
        let user_message = SessionUpdate::UserMessageChunk(ContentChunk::new(ContentBlock::from(prompt_text.clone())));
        self.wire.store(&session_id, &user_message);
        let Some(session) = self.sessions.get_mut(request.session_id.0.as_ref()) else {
            return self.wire.respond(&id, Err(unknown_session(&request.session_id)));
        };
        let steps = match self.scenario.script_for(&prompt_text) {
            Some(script) => script.steps.clone(),
            None => vec![Step::Say(Speech {
                text: "This scenario has no script for that prompt.".to_owned(),
                chunks: 1,
                interval: Duration::ZERO,
            })],
        };
        session.turn = Some(Turn {
            prompt_id: id,
            frames: vec![Frame { steps, next: 0, cleanup: false }],
            wait: Wait::Ready,
            cancelled: false,
            unanswered_permissions: Vec::new(),
            answered_permissions: VecDeque::new(),
        });
        Ok(())
    }

    fn cancel(&mut self, session_id: &SessionId) {
        if self.scenario.ignore_cancel {
            self.wire.trace.note(&format!("session/cancel for {session_id} ignored (ignore_cancel)"));
            return;
        }
        let Some(turn) = self.sessions.get_mut(session_id.0.as_ref()).and_then(|session| session.turn.as_mut()) else {
            self.wire.trace.note(&format!("session/cancel for {session_id} with no turn running"));
            return;
        };
        turn.cancelled = true;
        let in_cleanup = turn.frames.last().is_some_and(|frame| frame.cleanup);
        match &turn.wait {
            Wait::Until(_) | Wait::Stream(_) | Wait::Burst(_) if !in_cleanup => turn.wait = Wait::Ready,
            Wait::Response(request_id) => {
                // Stop waiting for the client's file or terminal work; a late answer will be
                // ignored. A terminal already created is released so its command stops.
                let request_id = *request_id;
                turn.wait = Wait::Ready;
                if let Some(pending) = self.wire.pending.remove(&request_id) {
                    let run = match pending.purpose {
                        Purpose::WaitForExit(run) | Purpose::Output(run, _) => Some(run),
                        _ => None,
                    };
                    if let Some(run) = run {
                        let release = ReleaseTerminalRequest::new(session_id.clone(), run.terminal_id);
                        let key = session_id.0.to_string();
                        if let Err(error) = self.wire.request(&key, "terminal/release", release, Purpose::Detached) {
                            // The next write will hit the same broken stdout and end the loop.
                            self.wire.trace.note(&format!("could not release terminal: {error}"));
                        }
                    }
                }
            }
            // The client answers pending permission requests with `cancelled`; wait for that.
            _ => {}
        }
    }

    fn handle_response(&mut self, id: &Value, outcome: Result<Value, Value>) -> io::Result<()> {
        let Some(pending) = id.as_i64().and_then(|id| self.wire.pending.remove(&id)) else {
            self.wire.trace.note(&format!("ignored a response to unknown request id {id}"));
            return Ok(());
        };
        let request_id = id.as_i64().unwrap_or_default();
        let key = pending.session_key;
        let Some(session) = self.sessions.get_mut(&key) else {
            return Ok(());
        };
        let Some(turn) = session.turn.as_mut() else {
            return Ok(());
        };
        let wire = &mut self.wire;
        match pending.purpose {
            Purpose::Permission { tool_call_id, offered, allowed, rejected, cancelled, report, withdrawn } => {
                let (branch, answer) = read_permission_answer(&offered, outcome, withdrawn);
                turn.unanswered_permissions.retain(|&unanswered| unanswered != request_id);
                let mut steps = match branch {
                    Branch::Allowed => allowed,
                    Branch::Rejected => rejected,
                    Branch::Cancelled => cancelled,
                };
                if report {
                    let text = format!("Permission for {tool_call_id}: {answer}\n\n");
                    steps.insert(0, Step::Say(Speech { text, chunks: 1, interval: Duration::ZERO }));
                }
                turn.answered_permissions.push_back(AnsweredPermission { request_id, branch, steps });
            }
            Purpose::ReadFile { path } => {
                let report = match typed_result::<ReadTextFileResponse>(outcome) {
                    Ok(response) => {
                        let newline = if response.content.ends_with('\n') { "" } else { "\n" };
                        format!("Read {}:\n\n```\n{}{newline}```\n\n", path.display(), response.content)
                    }
                    Err(message) => format!("Could not read {}: {message}\n\n", path.display()),
                };
                turn.wait = Wait::Ready;
                wire.say(&session.id, report)?;
            }
            Purpose::WriteFile { path } => {
                let report = match outcome {
                    // What the client says beside a write's answer (Tether: where the change is)
                    // is reported too, so tests see what the agent was told.
                    Ok(answer) => match answer["_meta"]["tether"]["message"].as_str() {
                        Some(note) => format!("Wrote {}. The client says: {note}\n\n", path.display()),
                        None => format!("Wrote {}.\n\n", path.display()),
                    },
                    Err(error) => format!("Could not write {}: {}\n\n", path.display(), error_text(&error)),
                };
                turn.wait = Wait::Ready;
                wire.say(&session.id, report)?;
            }
            Purpose::CreateTerminal { command_line, tool_call_id } => {
                match typed_result::<CreateTerminalResponse>(outcome) {
                    Ok(response) => {
                        self.terminals_started += 1;
                        let shown_on = tool_call_id.clone();
                        let run = TerminalRun {
                            terminal_id: response.terminal_id,
                            command_line,
                            tool_call_id: tool_call_id
                                .unwrap_or_else(|| format!("terminal-{}", self.terminals_started)),
                        };
                        let content = vec![ToolCallContent::Terminal(Terminal::new(run.terminal_id.clone()))];
                        let update = if shown_on.is_some() {
                            let fields =
                                ToolCallUpdateFields::new().status(ToolCallStatus::InProgress).content(content);
                            SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(run.tool_call_id.clone(), fields))
                        } else {
                            SessionUpdate::ToolCall(
                                ToolCall::new(run.tool_call_id.clone(), format!("Run `{}`", run.command_line))
                                    .kind(ToolKind::Execute)
                                    .status(ToolCallStatus::InProgress)
                                    .content(content),
                            )
                        };
                        wire.update(&session.id, update)?;
                        let request = WaitForTerminalExitRequest::new(session.id.clone(), run.terminal_id.clone());
                        let next = wire.request(&key, "terminal/wait_for_exit", request, Purpose::WaitForExit(run))?;
                        turn.wait = Wait::Response(next);
                    }
                    Err(message) => {
                        turn.wait = Wait::Ready;
                        wire.say(&session.id, format!("Could not start `{command_line}`: {message}\n\n"))?;
                    }
                }
            }
            Purpose::WaitForExit(run) => match typed_result::<WaitForTerminalExitResponse>(outcome) {
                Ok(response) => {
                    let request = TerminalOutputRequest::new(session.id.clone(), run.terminal_id.clone());
                    let next =
                        wire.request(&key, "terminal/output", request, Purpose::Output(run, response.exit_status))?;
                    turn.wait = Wait::Response(next);
                }
                Err(message) => {
                    let report = format!("Waiting for `{}` failed: {message}\n\n", run.command_line);
                    let request = ReleaseTerminalRequest::new(session.id.clone(), run.terminal_id.clone());
                    let next = wire.request(
                        &key,
                        "terminal/release",
                        request,
                        Purpose::Release(run, ToolCallStatus::Failed, report),
                    )?;
                    turn.wait = Wait::Response(next);
                }
            },
            Purpose::Output(run, exit_status) => {
                let (status, report) = match typed_result::<TerminalOutputResponse>(outcome) {
                    Ok(response) => terminal_report(&run.command_line, &exit_status, &response),
                    Err(message) => (
                        ToolCallStatus::Failed,
                        format!("Reading the output of `{}` failed: {message}\n\n", run.command_line),
                    ),
                };
                let request = ReleaseTerminalRequest::new(session.id.clone(), run.terminal_id.clone());
                let next = wire.request(&key, "terminal/release", request, Purpose::Release(run, status, report))?;
                turn.wait = Wait::Response(next);
            }
            Purpose::Release(run, status, report) => {
                if let Err(error) = outcome {
                    wire.trace.note(&format!("terminal/release failed: {error}"));
                }
                let update = ToolCallUpdate::new(run.tool_call_id.clone(), ToolCallUpdateFields::new().status(status));
                wire.update(&session.id, SessionUpdate::ToolCallUpdate(update))?;
                turn.wait = Wait::Ready;
                wire.say(&session.id, report)?;
            }
            Purpose::Detached => {}
        }
        Ok(())
    }

    // ----- Running turns -----

    /// Runs a session's turn until it has to wait; returns when it wants to be woken up, or
    /// `None` when only a message from the client can move it on (or it has finished).
    fn advance(&mut self, key: &str) -> io::Result<Option<Instant>> {
        loop {
            let Some(session) = self.sessions.get_mut(key) else {
                return Ok(None);
            };
            let Some(turn) = session.turn.as_mut() else {
                return Ok(None);
            };
            let now = Instant::now();
            match &mut turn.wait {
                Wait::Ready => {}
                Wait::Until(due) => {
                    if now < *due {
                        return Ok(Some(*due));
                    }
                    turn.wait = Wait::Ready;
                }
                Wait::Stream(stream) => {
                    if now < stream.next_at {
                        return Ok(Some(stream.next_at));
                    }
                    let Some(piece) = stream.pieces.pop_front() else {
                        turn.wait = Wait::Ready;
                        continue;
                    };
                    let chunk = ContentChunk::new(ContentBlock::from(piece));
                    let update = if stream.thought {
                        SessionUpdate::AgentThoughtChunk(chunk)
                    } else {
                        SessionUpdate::AgentMessageChunk(chunk)
                    };
                    stream.next_at = now + stream.interval;
                    let next_at = stream.next_at;
                    if stream.pieces.is_empty() {
                        turn.wait = Wait::Ready;
                    }
                    self.wire.update(&session.id, update)?;
                    // Hand control back to the main loop between pieces, so a cancel that
                    // arrived meanwhile is seen even when the interval is zero.
                    return Ok(Some(next_at));
                }
                Wait::Burst(burst) => {
                    let (id, number, total) = (burst.id, burst.next, burst.total);
                    burst.next += 1;
                    if burst.next > total {
                        turn.wait = Wait::Ready;
                    }
                    let update = burst_entry(&session.cwd, id, number, total);
                    self.wire.update(&session.id, update)?;
                    // Back to the main loop between entries, as between streamed pieces: a cancel
                    // that arrived meanwhile is seen.
                    return Ok(Some(now));
                }
                Wait::Response(_) => return Ok(None),
                Wait::Permission(request_id) => {
                    let request_id = *request_id;
                    let Some(index) =
                        turn.answered_permissions.iter().position(|answered| answered.request_id == request_id)
                    else {
                        return Ok(None);
                    };
                    turn.wait = Wait::Ready;
                    if let Some(answered) = turn.answered_permissions.remove(index) {
                        turn.push_branch(answered);
                    }
                }
                Wait::AllPermissions => {
                    if !turn.unanswered_permissions.is_empty() {
                        return Ok(None);
                    }
                    turn.wait = Wait::Ready;
                    // Frames run last-pushed first: push in reverse so the earliest answer's
                    // branch runs first.
                    let answered: Vec<AnsweredPermission> = turn.answered_permissions.drain(..).collect();
                    for answer in answered.into_iter().rev() {
                        turn.push_branch(answer);
                    }
                }
            }

            // The turn is at a step boundary.
            match turn.next_step() {
                Some(step) => self.execute(key, step)?,
                None if !turn.unanswered_permissions.is_empty() || !turn.answered_permissions.is_empty() => {
                    // A script that ends with permission requests outstanding still waits
                    // for their answers and runs their branches before the turn ends.
                    turn.wait = Wait::AllPermissions;
                }
                None => {
                    let reason = if turn.cancelled { StopReason::Cancelled } else { StopReason::EndTurn };
                    self.finish_turn(key, reason)?;
                    return Ok(None);
                }
            }
        }
    }

    fn execute(&mut self, key: &str, step: Step) -> io::Result<()> {
        let Some(session) = self.sessions.get_mut(key) else {
            return Ok(());
        };
        if session.turn.is_none() {
            return Ok(());
        }
        let step = session.with_sent_tool_call_ids(step);
        let Some(turn) = session.turn.as_mut() else {
            return Ok(());
        };
        let wire = &mut self.wire;
        let capabilities = &self.client_capabilities;
        match step {
            Step::Think(speech) | Step::Say(speech) if speech.text.is_empty() => {}
            Step::Think(speech) => turn.wait = Wait::Stream(Stream::new(true, &speech)),
            Step::Say(speech) => turn.wait = Wait::Stream(Stream::new(false, &speech)),
            Step::Plan(entries) => {
                let entries = entries
                    .into_iter()
                    .map(|entry| PlanEntry::new(entry.content, entry.priority, entry.status))
                    .collect();
                wire.update(&session.id, SessionUpdate::Plan(Plan::new(entries)))?;
            }
            Step::ToolCall(spec) => {
                let kind = spec.kind.map_or(ToolKind::Other, |kind| kind.0);
                let raw_input = spec.raw_input.map(|raw_input| raw_input.0);
                let summary = ToolCallSummary { title: spec.title.clone(), kind, raw_input: raw_input.clone() };
                session.tool_calls.insert(spec.id.clone(), summary);
                let content = tool_content(&session.cwd, spec.text, spec.diff);
                let tool_call = ToolCall::new(spec.id, spec.title)
                    .kind(kind)
                    .status(spec.status.unwrap_or(ToolCallStatus::Pending))
                    .locations(locations(&session.cwd, spec.locations))
                    .content(content)
                    .raw_input(raw_input);
                wire.update(&session.id, SessionUpdate::ToolCall(tool_call))?;
            }
            Step::ToolUpdate(spec) => {
                let raw_input = spec.raw_input.map(|raw_input| raw_input.0);
                if let Some(summary) = session.tool_calls.get_mut(&spec.id) {
                    if let Some(title) = &spec.title {
                        summary.title.clone_from(title);
                    }
                    if let Some(kind) = spec.kind {
                        summary.kind = kind.0;
                    }
                    if raw_input.is_some() {
                        summary.raw_input.clone_from(&raw_input);
                    }
                }
                let content = (spec.text.is_some() || spec.diff.is_some())
                    .then(|| tool_content(&session.cwd, spec.text, spec.diff));
                let fields = ToolCallUpdateFields::new()
                    .title(spec.title)
                    .kind(spec.kind.map(|kind| kind.0))
                    .status(spec.status)
                    .locations(spec.locations.map(|list| locations(&session.cwd, list)))
                    .content(content)
                    .raw_input(raw_input);
                let update = ToolCallUpdate::new(spec.id, fields);
                wire.update(&session.id, SessionUpdate::ToolCallUpdate(update))?;
            }
            Step::AskPermission(spec) => {
                let request_id = ask_permission(wire, key, &session.id, &session.tool_calls, spec.clone())?;
                turn.unanswered_permissions.push(request_id);
                if spec.wait {
                    turn.wait = Wait::Permission(request_id);
                }
            }
            Step::AwaitPermissions => turn.wait = Wait::AllPermissions,
            Step::CancelPermission(spec) => {
                let mut request_ids: Vec<i64> = wire
                    .pending
                    .iter()
                    .filter(|(_, pending)| pending.is_permission_for(key, &spec.tool_call_id))
                    .map(|(&request_id, _)| request_id)
                    .collect();
                request_ids.sort_unstable();
                if request_ids.is_empty() {
                    // A mistake in the script, not in the client: say so where the person
                    // running the test will look, and go on with the script.
                    let message = format!(
                        "scenario error: cancel_permission: no permission request for tool call `{}` is pending",
                        spec.tool_call_id
                    );
                    eprintln!("tether-test-agent: {message}");
                    wire.trace.note(&message);
                }
                for request_id in request_ids {
                    if let Some(PendingRequest { purpose: Purpose::Permission { withdrawn, .. }, .. }) =
                        wire.pending.get_mut(&request_id)
                    {
                        *withdrawn = true;
                    }
                    wire.notify("$/cancel_request", CancelRequestNotification::new(request_id))?;
                }
            }
            Step::ReportMode => {
                let mode = session.mode.as_deref().unwrap_or("none");
                wire.say(&session.id, format!("Agent mode: {mode}.\n\n"))?;
            }
            Step::ReportModel => {
                let model = session.model.as_deref().unwrap_or("none");
                wire.say(&session.id, format!("Model: {model}.\n\n"))?;
            }
            Step::ReportFork => {
                let report = match &session.forked_from {
                    Some(source) => format!("This session was forked from {source}.\n\n"),
                    None => "This session was not forked.\n\n".to_owned(),
                };
                wire.say(&session.id, report)?;
            }
            Step::ReportMcpServers => {
                let servers: Vec<String> = session.mcp_servers.iter().map(describe_mcp_server).collect();
                let listed = if servers.is_empty() { "none".to_owned() } else { servers.join(", ") };
                wire.say(&session.id, format!("MCP servers: {listed}.\n\n"))?;
            }
            Step::McpCall(spec) => {
                let server = session.mcp_servers.iter().find_map(|server| match server {
                    McpServer::Stdio(stdio) if stdio.name == spec.server => Some(stdio.clone()),
                    _ => None,
                });
                let report = match server {
                    None => format!("MCP {}: no stdio server named {:?} was given.\n\n", spec.tool, spec.server),
                    Some(server) => {
                        let arguments = spec.arguments.map_or_else(|| serde_json::json!({}), |raw| raw.0);
                        match crate::mcp_client::call_tool(&server, &spec.tool, arguments) {
                            // Fenced, so that the chat shows the JSON as it came (Markdown would eat
                            // its backslashes).
                            Ok(text) => format!("MCP {} answered:\n\n```json\n{text}\n```\n\n", spec.tool),
                            Err(error) => format!("MCP {} failed: {error}\n\n", spec.tool),
                        }
                    }
                };
                wire.say(&session.id, report)?;
            }
            Step::ReadFile(spec) => {
                let path = resolve(&session.cwd, &spec.path);
                if capabilities.fs.read_text_file {
                    let request =
                        ReadTextFileRequest::new(session.id.clone(), path.clone()).line(spec.line).limit(spec.limit);
                    let id = wire.request(key, "fs/read_text_file", request, Purpose::ReadFile { path })?;
                    turn.wait = Wait::Response(id);
                } else {
                    let report =
                        format!("Skipped reading {}: client does not support fs/read_text_file.\n\n", path.display());
                    wire.say(&session.id, report)?;
                }
            }
            Step::WriteFile(spec) => {
                let path = resolve(&session.cwd, &spec.path);
                if capabilities.fs.write_text_file {
                    let content = spec.content.for_file(&path);
                    let request = WriteTextFileRequest::new(session.id.clone(), path.clone(), content);
                    let id = wire.request(key, "fs/write_text_file", request, Purpose::WriteFile { path })?;
                    turn.wait = Wait::Response(id);
                } else {
                    let report =
                        format!("Skipped writing {}: client does not support fs/write_text_file.\n\n", path.display());
                    wire.say(&session.id, report)?;
                }
            }
            Step::WriteDisk(spec) => {
                let path = resolve(&session.cwd, &spec.path);
                // The report names the file as the scenario does (relative to the session's
                // folder, or absolute), as an agent names the files it works on.
                let content = spec.content.for_file(&path);
                let report = match std::fs::write(&path, content) {
                    Ok(()) => format!("Wrote {} myself.\n\n", spec.path),
                    Err(error) => format!("Could not write {}: {error}.\n\n", spec.path),
                };
                wire.say(&session.id, report)?;
            }
            Step::Terminal(spec) => {
                let command_line = std::iter::once(spec.command.as_str())
                    .chain(spec.args.iter().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(" ");
                if capabilities.terminal {
                    let cwd = spec.cwd.as_deref().map_or_else(|| session.cwd.clone(), |cwd| resolve(&session.cwd, cwd));
                    let request = CreateTerminalRequest::new(session.id.clone(), spec.command)
                        .args(spec.args)
                        .cwd(cwd)
                        .output_byte_limit(spec.output_byte_limit);
                    let purpose = Purpose::CreateTerminal { command_line, tool_call_id: spec.tool_call_id };
                    let id = wire.request(key, "terminal/create", request, purpose)?;
                    turn.wait = Wait::Response(id);
                } else {
                    let report = format!("Skipped running `{command_line}`: client does not support terminal.\n\n");
                    wire.say(&session.id, report)?;
                    // The tool call the command was to show on ends here: it never ran.
                    if let Some(id) = spec.tool_call_id {
                        let fields = ToolCallUpdateFields::new().status(ToolCallStatus::Failed);
                        wire.update(&session.id, SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id, fields)))?;
                    }
                }
            }
            Step::Sleep(duration) => turn.wait = Wait::Until(Instant::now() + duration),
            Step::Stderr(line) => eprintln!("{line}"),
            Step::Malformed(line) => wire.output.raw(line.as_bytes())?,
            Step::MalformedBytes(bytes) => wire.output.raw(&bytes)?,
            Step::LongLine(length) => wire.output.long_line(length)?,
            Step::Burst(total) => {
                self.bursts_started += 1;
                turn.wait = Wait::Burst(Burst { id: self.bursts_started, next: 1, total });
            }
            Step::Die(exit_code) => {
                wire.trace.note(&format!("dying with exit code {exit_code} as the scenario says"));
                std::process::exit(exit_code);
            }
            Step::Stop(reason) => {
                // ACP: a cancelled turn must answer `cancelled`, whatever the script says.
                let reason = if turn.cancelled { StopReason::Cancelled } else { reason };
                self.finish_turn(key, reason)?;
            }
        }
        Ok(())
    }

    fn finish_turn(&mut self, key: &str, reason: StopReason) -> io::Result<()> {
        let Some(turn) = self.sessions.get_mut(key).and_then(|session| session.turn.take()) else {
            return Ok(());
        };
        // Answers to this turn's outstanding requests would otherwise be taken for answers
        // to the next turn's.
        self.wire.pending.retain(|_, pending| pending.session_key != key);
        self.wire.respond(&turn.prompt_id, Ok(to_json(PromptResponse::new(reason))))
    }
}

impl Turn {
    /// The next step to run, dropping finished frames, and every frame but cleanup ones once
    /// the turn is cancelled.
    fn next_step(&mut self) -> Option<Step> {
        if self.cancelled {
            self.frames.retain(|frame| frame.cleanup);
        }
        loop {
            let frame = self.frames.last_mut()?;
            if let Some(step) = frame.steps.get(frame.next) {
                frame.next += 1;
                return Some(step.clone());
            }
            self.frames.pop();
        }
    }

    /// Schedules the branch an answer selected. Once the turn is cancelled only `cancelled`
    /// branches run (as cleanup); an allow that raced with the cancel is dropped.
    fn push_branch(&mut self, answered: AnsweredPermission) {
        if self.cancelled && answered.branch != Branch::Cancelled {
            return;
        }
        if !answered.steps.is_empty() {
            self.frames.push(Frame { steps: answered.steps, next: 0, cleanup: self.cancelled });
        }
    }
}

impl Stream {
    fn new(thought: bool, speech: &Speech) -> Self {
        Self { thought, pieces: speech.pieces().into(), interval: speech.interval, next_at: Instant::now() }
    }
}

impl Wire {
    fn send(&mut self, message: &Value) -> io::Result<()> {
        self.output.send(message)
    }

    fn respond(&mut self, id: &Value, answer: Result<Value, Error>) -> io::Result<()> {
        let message = match answer {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Err(error) => {
                self.trace.note(&format!("error answer to {id}: {}", error.message));
                json!({ "jsonrpc": "2.0", "id": id, "error": to_json(error) })
            }
        };
        self.send(&message)
    }

    fn notify(&mut self, method: &str, params: impl Serialize) -> io::Result<()> {
        let params = to_json(params);
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }))
    }

    fn update(&mut self, session_id: &SessionId, update: SessionUpdate) -> io::Result<()> {
        self.store(session_id, &update);
        self.notify("session/update", SessionNotification::new(session_id.clone(), update))
    }

    /// Keeps an update for `session/load`, when sessions are stored. A failure is traced, not
    /// fatal: the live session goes on, only a later load would miss it.
    fn store(&mut self, session_id: &SessionId, update: &SessionUpdate) {
        if let Some(history) = &self.history
            && let Err(error) = history.append(&session_id.0, update)
        {
            self.trace.note(&format!("could not store an update of {session_id}: {error}"));
        }
    }

    /// Sends agent text in one chunk: what the agent reports about file and terminal work.
    fn say(&mut self, session_id: &SessionId, text: String) -> io::Result<()> {
        let chunk = ContentChunk::new(ContentBlock::from(text));
        self.update(session_id, SessionUpdate::AgentMessageChunk(chunk))
    }

    /// Sends a request to the client and remembers why; returns its id.
    fn request(
        &mut self,
        session_key: &str,
        method: &str,
        params: impl Serialize,
        purpose: Purpose,
    ) -> io::Result<i64> {
        let id = self.next_request_id;
        self.next_request_id += 1;
        self.pending.insert(id, PendingRequest { session_key: session_key.to_owned(), purpose });
        let params = to_json(params);
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))?;
        Ok(id)
    }
}

fn ask_permission(
    wire: &mut Wire,
    key: &str,
    session_id: &SessionId,
    tool_calls: &HashMap<String, ToolCallSummary>,
    spec: PermissionSpec,
) -> io::Result<i64> {
    let options = spec.options.iter().map(|&kind| permission_option(kind)).collect();
    let mut fields = ToolCallUpdateFields::new();
    if let Some(summary) = tool_calls.get(&spec.tool_call_id) {
        fields = fields.title(summary.title.clone()).kind(summary.kind).raw_input(summary.raw_input.clone());
    }
    let tool_call = ToolCallUpdate::new(spec.tool_call_id.clone(), fields);
    let request = RequestPermissionRequest::new(session_id.clone(), tool_call, options);
    let purpose = Purpose::Permission {
        tool_call_id: spec.tool_call_id,
        offered: spec.options,
        allowed: spec.allowed,
        rejected: spec.rejected,
        cancelled: spec.cancelled,
        report: spec.report,
        withdrawn: false,
    };
    wire.request(key, "session/request_permission", request, purpose)
}

/// The option id and label the agent offers for each kind.
fn permission_option(kind: PermissionOptionKind) -> PermissionOption {
    let (id, name) = option_id_and_name(kind);
    PermissionOption::new(id, name, kind)
}

fn option_id_and_name(kind: PermissionOptionKind) -> (&'static str, &'static str) {
    match kind {
        PermissionOptionKind::AllowOnce => ("allow-once", "Allow once"),
        PermissionOptionKind::AllowAlways => ("allow-always", "Always allow"),
        PermissionOptionKind::RejectOnce => ("reject-once", "Reject"),
        PermissionOptionKind::RejectAlways => ("reject-always", "Always reject"),
        // The schema may grow kinds; the scenario parser only produces the four above.
        _ => ("other", "Other"),
    }
}

/// What a permission answer means: the branch it selects, and the sentence a `report` says
/// about it (after `Permission for <tool call id>: `). An error answer, an unreadable one or an
/// option the agent never offered counts as the safe choice (cancelled or rejected), noted on
/// stderr unless the agent had withdrawn the request and so expected the error.
fn read_permission_answer(
    offered: &[PermissionOptionKind],
    outcome: Result<Value, Value>,
    withdrawn: bool,
) -> (Branch, String) {
    let response = match outcome {
        Err(error) => {
            if !withdrawn {
                eprintln!(
                    "tether-test-agent: permission request failed, treating it as cancelled: {}",
                    error_text(&error)
                );
            }
            let message = error.get("message").and_then(Value::as_str).map_or_else(|| error.to_string(), str::to_owned);
            return (Branch::Cancelled, format!("withdrawn ({message})."));
        }
        Ok(result) => match serde_json::from_value::<RequestPermissionResponse>(result) {
            Ok(response) => response,
            Err(error) => {
                eprintln!("tether-test-agent: unreadable permission answer, treating it as cancelled: {error}");
                return (Branch::Cancelled, format!("unreadable answer ({error})."));
            }
        },
    };
    let (branch, answer) = match response.outcome {
        RequestPermissionOutcome::Selected(selected) => {
            let option_id = selected.option_id.0.as_ref();
            match offered.iter().copied().find(|&kind| option_id_and_name(kind).0 == option_id) {
                Some(kind) => {
                    let branch = match kind {
                        PermissionOptionKind::AllowOnce | PermissionOptionKind::AllowAlways => Branch::Allowed,
                        _ => Branch::Rejected,
                    };
                    let kind_name = to_json(kind).as_str().map_or_else(|| "other".to_owned(), str::to_owned);
                    (branch, format!("{kind_name} ({option_id})"))
                }
                None => {
                    eprintln!(
                        "tether-test-agent: the client chose option `{option_id}`, which was not offered; \
                         treating it as a rejection"
                    );
                    (Branch::Rejected, format!("an option that was not offered ({option_id})"))
                }
            }
        }
        _ => (Branch::Cancelled, "cancelled".to_owned()),
    };
    match permission_reason(response.meta.as_ref()) {
        Some(reason) => (branch, format!("{answer}. Reason: {reason}.")),
        None => (branch, format!("{answer}.")),
    }
}

/// The reason Tether gives for an answer it chose itself (a rule or a mode), found at
/// `_meta.tether.reason`, without its final period so the report can add exactly one.
fn permission_reason(meta: Option<&serde_json::Map<String, Value>>) -> Option<&str> {
    let reason = meta?.get("tether")?.get("reason")?.as_str()?;
    let reason = reason.trim_end().trim_end_matches('.');
    (!reason.is_empty()).then_some(reason)
}

fn terminal_report(
    command_line: &str,
    exit_status: &TerminalExitStatus,
    response: &TerminalOutputResponse,
) -> (ToolCallStatus, String) {
    let ending = match (exit_status.exit_code, &exit_status.signal) {
        (Some(code), _) => format!("exited with code {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => "ended".to_owned(),
    };
    let status = if exit_status.exit_code == Some(0) { ToolCallStatus::Completed } else { ToolCallStatus::Failed };
    let truncated = if response.truncated { " (output truncated)" } else { "" };
    let newline = if response.output.ends_with('\n') || response.output.is_empty() { "" } else { "\n" };
    let report = format!("`{command_line}` {ending}{truncated}:\n\n```\n{}{newline}```\n\n", response.output);
    (status, report)
}

/// Entry `number` (from 1) of the agent's burst `burst`, of `total` entries: an agent message when
/// `number` is odd, else a completed tool call, in turn a read, a command run and an edit with
/// its diff.
fn burst_entry(cwd: &Path, burst: u64, number: usize, total: usize) -> SessionUpdate {
    if number % 2 == 1 {
        let text = format!(
            "Entry {number:05} of {total}: this paragraph stands for an agent's explanation. It is long enough \
             to wrap over a few lines in a narrow sidebar, and a code block of ten lines follows it, as in \
             many replies.\n\n```rust\nfn entry_{number}() -> u64 {{\n    // A loop and a print, in ten lines.\n    \
             let mut total = 0;\n    for step in 0..10 {{\n        total += step * {number};\n    }}\n    \
             total %= 100;\n    println!(\"{{total}}\");\n    total\n}}\n```\n\n"
        );
        return SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(text)));
    }
    let id = format!("burst-{burst}-{number}");
    let path = cwd.join(format!("src/module_{number}.rs"));
    let call = match (number / 2) % 3 {
        1 => ToolCall::new(id, format!("Read src/module_{number}.rs"))
            .kind(ToolKind::Read)
            .locations(vec![ToolCallLocation::new(path)])
            .content(vec![ToolCallContent::from(format!(
                "```rust\n// module {number}\npub fn value() -> u64 {{\n    {number}\n}}\n```"
            ))]),
        2 => {
            let command = format!("cargo test --lib module_{number}");
            ToolCall::new(id, format!("Run `{command}`"))
                .kind(ToolKind::Execute)
                .raw_input(Some(json!({ "command": command })))
                .content(vec![ToolCallContent::from(format!(
                    "running 3 tests\ntest module_{number}::adds ... ok\ntest module_{number}::reads ... ok\n\
                     test module_{number}::writes ... ok\n\ntest result: ok. 3 passed; 0 failed"
                ))])
        }
        _ => {
            let old_text = format!("pub fn value() -> u64 {{\n    {number}\n}}\n");
            let new_text = format!(
                "pub fn value() -> u64 {{\n    {number} + 1\n}}\n\npub fn name() -> &'static str {{\n    \"module {number}\"\n}}\n"
            );
            ToolCall::new(id, format!("Edit src/module_{number}.rs"))
                .kind(ToolKind::Edit)
                .locations(vec![ToolCallLocation::new(path.clone())])
                .content(vec![ToolCallContent::Diff(Diff::new(path, new_text).old_text(Some(old_text)))])
        }
    };
    SessionUpdate::ToolCall(call.status(ToolCallStatus::Completed))
}

fn tool_content(cwd: &Path, text: Option<String>, diff: Option<DiffSpec>) -> Vec<ToolCallContent> {
    let mut content = Vec::new();
    if let Some(text) = text {
        content.push(ToolCallContent::from(text));
    }
    if let Some(diff) = diff {
        let path = resolve(cwd, &diff.path);
        let (old_text, new_text) = match diff.new_text {
            NewText::Whole(text) => (diff.old_text, text),
            appended @ NewText::Appended(_) => {
                let on_disk = std::fs::read_to_string(&path).ok();
                let new_text = appended.after(on_disk.as_deref());
                (on_disk, new_text)
            }
        };
        content.push(ToolCallContent::Diff(Diff::new(path, new_text).old_text(old_text)));
    }
    content
}

fn locations(cwd: &Path, specs: Vec<LocationSpec>) -> Vec<ToolCallLocation> {
    specs.into_iter().map(|spec| ToolCallLocation::new(resolve(cwd, &spec.path)).line(spec.line)).collect()
}

/// ACP paths are absolute: scenario paths are relative to the session's cwd.
fn resolve(cwd: &Path, path: &str) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() { path.to_path_buf() } else { cwd.join(path) }
}

fn unknown_session(session_id: &SessionId) -> Error {
    Error::new(ErrorCode::ResourceNotFound.into(), format!("Unknown session: {session_id}"))
        .data(json!({ "sessionId": session_id }))
}

fn parse_params<T: DeserializeOwned>(params: Value) -> Result<T, Error> {
    serde_json::from_value(params)
        .map_err(|error| Error::new(ErrorCode::InvalidParams.into(), format!("Invalid params: {error}")))
}

/// A client's answer as a typed result, or a sentence saying why there is none.
fn typed_result<T: DeserializeOwned>(outcome: Result<Value, Value>) -> Result<T, String> {
    match outcome {
        Ok(result) => serde_json::from_value(result).map_err(|error| format!("unreadable answer: {error}")),
        Err(error) => Err(error_text(&error)),
    }
}

/// A JSON-RPC error object as a short sentence.
fn error_text(error: &Value) -> String {
    match (error.get("message").and_then(Value::as_str), error.get("code")) {
        (Some(message), Some(code)) => format!("{message} (error {code})"),
        (Some(message), None) => message.to_owned(),
        _ => error.to_string(),
    }
}

fn to_json(value: impl Serialize) -> Value {
    serde_json::to_value(value).expect("ACP schema types always serialize to JSON")
}

/// How `report_mcp_servers` names a server: its name and transport, and for stdio its command.
fn describe_mcp_server(server: &McpServer) -> String {
    match server {
        McpServer::Stdio(stdio) => format!("{} (stdio: {})", stdio.name, stdio.command.display()),
        McpServer::Http(http) => format!("{} (http: {})", http.name, http.url),
        McpServer::Sse(sse) => format!("{} (sse: {})", sse.name, sse.url),
        _ => "an MCP server of an unknown kind".to_owned(),
    }
}
