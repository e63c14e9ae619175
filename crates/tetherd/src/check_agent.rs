//! `tetherd check-agent -- <command> [args]`: an ACP v1 conformance check for agent authors
//! (`--claude-cli`: the same kind of check for the `claude` CLI, see `claude_cli`).
//!
//! It starts the agent, plays a permissive client that declares the `fs` and `terminal`
//! capabilities, and runs one short conversation: `initialize`, `session/new` in a throwaway
//! folder, a prompt ("Say hello" unless told otherwise), then a second prompt that it cancels
//! with `session/cancel` and which must end with stopReason `cancelled`. Everything the agent
//! prints is checked on the way: each stdout line must be a JSON-RPC message, responses must
//! answer requests that were sent and only once, and messages of known methods must deserialize
//! into ACP's v1 types (unknown fields are fine; missing required fields and wrong types are
//! not). Tool calls must be closed (completed or failed) by the end of a turn that was not
//! cancelled, and updates must name the session the agent created.
//!
//! The agent's own requests are answered as a permissive client would: permission requests with
//! the first allow option (or `cancelled` once the turn is being cancelled), file reads and
//! writes inside the throwaway folder, and terminals with a fake one that ran nothing and exited
//! with code 0. The agent's process group is killed at the end, so nothing is left running.
//!
//! The cancel only goes to a turn that is demonstrably still running: one that has streamed an
//! update and not answered yet. An agent may finish a turn at once, and its answer may cross the
//! cancel on the way; ending with `end_turn` then is correct, so a turn that ends before the
//! cancel could be sent, or whose answer is the very next thing the agent prints after it, is
//! reported as a cancel that could not be checked (a note), never as a problem. Only an agent
//! that goes on printing after the cancel and then ends otherwise than `cancelled` is accused.
//!
//! The report has one line per finding (see [`report`]); the exit code is 1 when any problem was
//! found. An agent that needs a login stops the check with an info finding, not a problem.

mod answers;
mod claude_cli;
mod process;
mod report;

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use agent_client_protocol_schema::v1::{
    InitializeResponse, NewSessionResponse, PromptResponse, SessionNotification, SessionUpdate, StopReason,
    ToolCallStatus,
};
use anyhow::Context as _;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tether_core::jsonrpc::{
    self, ErrorCode, Message, ParseError, RequestId, RpcError, encode_error, encode_notification, encode_request,
    encode_result, parse_message,
};
use tokio::time::Instant;

use process::{AgentProcess, Output};
use report::{Kind, Offending, Report, Severity};

/// How long the agent gets between SIGTERM and SIGKILL at the end of the check.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// Once stdout has closed, how long to wait for the agent's exit status.
const EXIT_STATUS_WAIT: Duration = Duration::from_secs(2);

/// The stable `sessionUpdate` kinds of ACP v1. Any other kind is tolerated (it may come from a
/// newer or unstable part of the protocol) and noted, rather than reported as a wrong type.
const STABLE_UPDATE_KINDS: &[&str] = &[
    "user_message_chunk",
    "agent_message_chunk",
    "agent_thought_chunk",
    "tool_call",
    "tool_call_update",
    "plan",
    "available_commands_update",
    "current_mode_update",
    "config_option_update",
    "session_info_update",
    "usage_update",
    "notice",
    "compaction_update",
    "compaction_summary_chunk",
];

/// The second prompt, the one that gets cancelled.
const CANCELLED_PROMPT: &str = "Count slowly from one to a hundred.";

#[derive(Debug, clap::Args)]
pub struct CheckAgentArgs {
    /// How long the agent may take to answer each step (initialize, session/new, each prompt).
    #[arg(long, default_value_t = 60, value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..))]
    timeout_seconds: u64,
    /// The text of the first prompt.
    #[arg(long, default_value = "Say hello")]
    prompt: String,
    /// Print the report as one JSON object instead of lines for people.
    #[arg(long)]
    json: bool,
    /// The command is the `claude` CLI: check its stream-json and control protocol as Tether's
    /// "Claude Code (direct)" drives it, instead of ACP.
    #[arg(long)]
    claude_cli: bool,
    /// The agent's command line, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

/// Runs the check and prints the report. Exit code 1 when a problem was found.
pub fn run(args: CheckAgentArgs) -> anyhow::Result<ExitCode> {
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().context("cannot start the async runtime")?;
    let report = runtime.block_on(check(&args))?;
    if args.json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.to_text());
    }
    Ok(if report.problem_count() == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

async fn check(args: &CheckAgentArgs) -> anyhow::Result<Report> {
    let workspace = tempfile::tempdir().context("cannot create the temporary folder the agent works in")?;
    // Canonical, so that paths the agent derives from it compare equal to it (macOS's /tmp is a
    // symbolic link, for one).
    let workspace_path = workspace.path().canonicalize().context("cannot resolve the temporary folder")?;
    let mut report = Report::new(args.command.iter().map(|part| part.to_string_lossy().into_owned()).collect());
    let Some((program, program_args)) = args.command.split_first() else {
        anyhow::bail!("no agent command given (put it after `--`)");
    };
    if args.claude_cli {
        let timeout = Duration::from_secs(args.timeout_seconds);
        return Ok(claude_cli::check(program, program_args, &args.prompt, timeout, report, workspace_path).await);
    }
    let agent = match AgentProcess::spawn(program, program_args) {
        Ok(agent) => agent,
        Err(error) => {
            report.problem(Kind::AgentExited, format!("cannot start the agent: {error}"), None);
            return Ok(report);
        }
    };
    let mut checker = Checker::new(agent, report, workspace_path, Duration::from_secs(args.timeout_seconds));
    checker.converse(&args.prompt).await;
    let Checker { agent, mut report, .. } = checker;
    stop_and_report(agent, &mut report, "agent").await;
    Ok(report)
}

/// Ends the `what` (the agent, the CLI) and everything it started, and reports what it printed
/// on stderr and anything that survived.
async fn stop_and_report(agent: AgentProcess, report: &mut Report, what: &str) {
    let stopped = agent.stop(KILL_GRACE).await;
    if stopped.stderr.line_count > 0 {
        let last: Vec<&str> = stopped.stderr.last_lines.iter().map(|line| line.trim()).collect();
        report.note(
            Kind::Stderr,
            format!("{} line(s) on stderr; the last: {}", stopped.stderr.line_count, last.join(" | ")),
        );
    }
    if !stopped.all_gone {
        report.problem(Kind::LeftRunning, format!("some of the {what}'s processes survived SIGKILL"), None);
    }
}

/// Why a step ended without an answer. Either way the problem is already in the report.
#[derive(Debug)]
struct Stopped;

/// A tool call of the current turn, as far as the updates have told.
#[derive(Debug)]
struct ToolCallState {
    status: ToolCallStatus,
    /// Where it was announced, for the finding if it is never closed.
    announced: Offending,
}

/// The client side of the conversation, and everything it has noticed.
struct Checker {
    agent: AgentProcess,
    report: Report,
    workspace: PathBuf,
    timeout: Duration,
    next_id: i64,
    /// Our requests waiting for their response, with their method.
    pending: BTreeMap<RequestId, String>,
    /// Our requests already answered, with their method.
    answered: BTreeMap<RequestId, String>,
    /// Sessions the agent created (one, normally).
    sessions: BTreeSet<String>,
    /// Tool calls announced in the current turn, by id.
    tool_calls: BTreeMap<String, ToolCallState>,
    /// Set while the cancelled prompt waits for its first update, which triggers the cancel.
    cancel_on_first_update: Option<String>,
    /// The cancel is due: it goes out once what stdout already holds has been read.
    cancel_due: Option<String>,
    /// `session/cancel` has been sent for the current turn.
    cancel_sent: bool,
    /// The agent printed something other than the turn's answer after `session/cancel` was
    /// sent: the turn was still going on then, so its answer cannot have crossed the cancel.
    heard_after_cancel: bool,
    /// The number of fake terminals handed out, for their ids.
    terminals_created: u64,
    /// Kinds of note already made once, so that repeated events do not flood the report.
    noted_once: BTreeSet<String>,
    /// The ids of the agent's auth methods, for the "needs authentication" finding.
    auth_methods: Vec<String>,
}

/// What a response said.
type Answer = Result<String, RpcError>;

impl Checker {
    fn new(agent: AgentProcess, report: Report, workspace: PathBuf, timeout: Duration) -> Checker {
        Checker {
            agent,
            report,
            workspace,
            timeout,
            next_id: 0,
            pending: BTreeMap::new(),
            answered: BTreeMap::new(),
            sessions: BTreeSet::new(),
            tool_calls: BTreeMap::new(),
            cancel_on_first_update: None,
            cancel_due: None,
            cancel_sent: false,
            heard_after_cancel: false,
            terminals_created: 0,
            noted_once: BTreeSet::new(),
            auth_methods: Vec::new(),
        }
    }

    /// The conversation: each step runs only if the one before it gave what it needs.
    async fn converse(&mut self, prompt: &str) {
        let Ok(session_id) = self.open_session().await else { return };
        if self.prompt(&session_id, prompt, false).await.is_err() {
            // The cancelled prompt is only meaningful after a prompt that worked.
            return;
        }
        // The last step: whatever went wrong in it is in the report already.
        let _last_step = self.prompt(&session_id, CANCELLED_PROMPT, true).await;
    }

    /// `initialize` then `session/new`; the session's id.
    async fn open_session(&mut self) -> Result<String, Stopped> {
        let initialize = json!({
            "protocolVersion": 1,
            "clientCapabilities": {
                "fs": { "readTextFile": true, "writeTextFile": true },
                "terminal": true,
            },
            "clientInfo": { "name": "tetherd check-agent", "version": env!("CARGO_PKG_VERSION") },
        });
        let (answer, offending) = self.call("initialize", &initialize).await?;
        let result = self.expect_success("initialize", answer, &offending)?;
        let response: InitializeResponse = self.expect_valid("initialize", &result, &offending)?;
        self.note_agent(&response, &result);
        if response.protocol_version != agent_client_protocol_schema::ProtocolVersion::V1 {
            self.report.problem(
                Kind::ProtocolVersion,
                format!(
                    "initialize: the agent chose protocol version {} (the checker asked for 1)",
                    response.protocol_version
                ),
                Some(offending),
            );
            return Err(Stopped);
        }

        let new_session = json!({ "cwd": self.workspace, "mcpServers": [] });
        let (answer, offending) = self.call("session/new", &new_session).await?;
        let result = self.expect_success("session/new", answer, &offending)?;
        let response: NewSessionResponse = self.expect_valid("session/new", &result, &offending)?;
        let session_id = response.session_id.0.to_string();
        self.sessions.insert(session_id.clone());
        Ok(session_id)
    }

    /// One prompt turn. With `cancel`, the turn is cancelled once it has started streaming (see
    /// the module documentation) and must then end with stopReason `cancelled`.
    async fn prompt(&mut self, session_id: &str, text: &str, cancel: bool) -> Result<StopReason, Stopped> {
        let step = if cancel { "session/prompt (cancelled)" } else { "session/prompt" };
        self.tool_calls.clear();
        self.cancel_sent = false;
        self.heard_after_cancel = false;
        self.cancel_on_first_update = None;
        if cancel {
            self.cancel_on_first_update = Some(session_id.to_owned());
        }
        let params = json!({ "sessionId": session_id, "prompt": [{ "type": "text", "text": text }] });
        let sent = self.send_request("session/prompt", &params).await;
        let (answer, offending) = self.await_answer(step, sent).await?;
        let result = self.expect_success("session/prompt", answer, &offending)?;
        let response: PromptResponse = self.expect_valid("session/prompt", &result, &offending)?;
        let stop_reason = response.stop_reason;
        if cancel {
            self.check_cancelled(stop_reason, &offending);
        } else {
            self.check_tool_calls_closed();
        }
        self.cancel_on_first_update = None;
        Ok(stop_reason)
    }

    fn check_cancelled(&mut self, stop_reason: StopReason, offending: &Offending) {
        if stop_reason == StopReason::Cancelled {
            return;
        }
        let reason = stop_reason_name(stop_reason);
        if !self.cancel_sent {
            self.report.note(
                Kind::CancelUnchecked,
                format!(
                    "the prompt to cancel ended with stopReason {reason} while it was not demonstrably running \
                     (it had streamed nothing, or its answer was already there), so session/cancel was not sent \
                     and cancellation could not be checked"
                ),
            );
        } else if !self.heard_after_cancel {
            self.report.note(
                Kind::CancelUnchecked,
                format!(
                    "the prompt to cancel ended with stopReason {reason} right after session/cancel \
                     was sent, with nothing in between: the answer may have crossed the cancel, so \
                     cancellation could not be checked"
                ),
            );
        } else {
            self.report.problem(
                Kind::NotCancelled,
                format!("session/prompt ended with stopReason {reason} after session/cancel (expected cancelled)"),
                Some(offending.clone()),
            );
        }
    }

    /// Every tool call of a turn that was not cancelled must have been closed. (A cancelled turn
    /// may leave them open: the client then marks them cancelled itself, as ACP says.)
    fn check_tool_calls_closed(&mut self) {
        let open: Vec<(String, Offending, ToolCallStatus)> = self
            .tool_calls
            .iter()
            .filter(|(_, state)| !matches!(state.status, ToolCallStatus::Completed | ToolCallStatus::Failed))
            .map(|(id, state)| (id.clone(), state.announced.clone(), state.status))
            .collect();
        for (id, announced, status) in open {
            self.report.problem(
                Kind::ToolCallNotClosed,
                format!(
                    "tool call {id:?} was still {} when its turn ended (expected completed or failed)",
                    status_name(status)
                ),
                Some(announced),
            );
        }
    }

    /// Notes what the agent says about itself; the capabilities as it advertised them (`result`
    /// is its raw answer), not as the schema's defaults would fill them in.
    fn note_agent(&mut self, response: &InitializeResponse, result: &str) {
        match &response.agent_info {
            Some(info) => {
                let title = info.title.as_deref().map(|title| format!(" ({title})")).unwrap_or_default();
                self.report.note(Kind::AgentInfo, format!("{} {}{title}", info.name, info.version));
            }
            None => self.report.note(Kind::AgentInfo, "no agentInfo in the initialize answer"),
        }
        let advertised = serde_json::from_str::<Value>(result)
            .ok()
            .and_then(|mut result| result.get_mut("agentCapabilities").map(Value::take));
        match advertised {
            Some(capabilities) => self.report.note(Kind::Capabilities, format!("agentCapabilities {capabilities}")),
            None => self.report.note(Kind::Capabilities, "no agentCapabilities in the initialize answer"),
        }
        self.auth_methods = response.auth_methods.iter().map(|method| method.id().0.to_string()).collect();
        if !self.auth_methods.is_empty() {
            self.report.note(Kind::Capabilities, format!("authMethods {}", self.auth_methods.join(", ")));
        }
    }

    /// The result of a successful answer. An error answer is reported (authentication required
    /// as an info, anything else as a problem) and stops the check.
    fn expect_success(&mut self, method: &str, answer: Answer, offending: &Offending) -> Result<String, Stopped> {
        match answer {
            Ok(result) => Ok(result),
            Err(error) if error.code == ErrorCode::AuthRequired => {
                let methods = if self.auth_methods.is_empty() {
                    "none advertised".to_owned()
                } else {
                    self.auth_methods.join(", ")
                };
                self.report.add(
                    Severity::Info,
                    Kind::NeedsAuthentication,
                    format!("{method}: needs authentication (methods: {methods}); the check stops here"),
                    None,
                );
                Err(Stopped)
            }
            Err(error) => {
                self.report.problem(
                    Kind::ErrorAnswer,
                    format!("{method} failed: {} {}", i32::from(error.code), error.message),
                    Some(offending.clone()),
                );
                Err(Stopped)
            }
        }
    }

    /// A result deserialized into its v1 type; a mismatch is reported and stops the check.
    fn expect_valid<T: DeserializeOwned>(
        &mut self,
        method: &str,
        result: &str,
        offending: &Offending,
    ) -> Result<T, Stopped> {
        serde_json::from_str(result).map_err(|error| {
            self.report.problem(Kind::InvalidMessage, format!("{method} result: {error}"), Some(offending.clone()));
            Stopped
        })
    }

    /// Sends a request and waits for its answer.
    async fn call(&mut self, method: &str, params: &Value) -> Result<(Answer, Offending), Stopped> {
        let sent = self.send_request(method, params).await;
        self.await_answer(method, sent).await
    }

    async fn send_request(&mut self, method: &str, params: &Value) -> (RequestId, Instant) {
        let id = RequestId::Number(self.next_id);
        self.next_id += 1;
        self.pending.insert(id.clone(), method.to_owned());
        self.agent.send(&encode_request(&id, method, params)).await;
        (id, Instant::now())
    }

    async fn send_cancel(&mut self, session_id: &str) {
        self.agent.send(&encode_notification("session/cancel", &json!({ "sessionId": session_id }))).await;
        self.cancel_sent = true;
    }

    /// Reads and handles what the agent prints until the answer to `id` arrives, the timeout
    /// passes, or stdout closes. The step's duration goes into the report.
    async fn await_answer(
        &mut self,
        step: &str,
        (id, sent_at): (RequestId, Instant),
    ) -> Result<(Answer, Offending), Stopped> {
        let deadline = sent_at + self.timeout;
        loop {
            let output = match self.cancel_due.take() {
                // Read what has already arrived first: if the turn has ended already, a cancel now
                // would come too late to count against the agent.
                Some(session_id) => match self.agent.output_already_read() {
                    Some(output) => {
                        self.cancel_due = Some(session_id);
                        output
                    }
                    None => {
                        self.send_cancel(&session_id).await;
                        continue;
                    }
                },
                None => match tokio::time::timeout_at(deadline, self.agent.next_output()).await {
                    Ok(output) => output,
                    Err(_elapsed) => {
                        self.report.problem(
                            Kind::Timeout,
                            format!("{step}: no answer within {} s", self.timeout.as_secs()),
                            None,
                        );
                        return Err(Stopped);
                    }
                },
            };
            match output {
                Output::Closed => {
                    let status = self.agent.exit_status(EXIT_STATUS_WAIT).await;
                    let how = status.map_or_else(|| "closed its stdout".to_owned(), describe_exit);
                    self.report.problem(
                        Kind::AgentExited,
                        format!("the agent {how} while the checker waited for the answer to {step}"),
                        None,
                    );
                    return Err(Stopped);
                }
                Output::BadLine { number, error } => {
                    self.heard_after_cancel |= self.cancel_sent;
                    let excerpt = match &error {
                        tether_core::framing::FrameError::InvalidUtf8 { preview, .. } => preview.clone(),
                        tether_core::framing::FrameError::TooLong { .. } => String::new(),
                    };
                    self.report.problem(Kind::NonJson, error.to_string(), Some(Offending::new(number, &excerpt)));
                }
                Output::Line { number, text } => {
                    let after_cancel = self.cancel_sent;
                    if let Some(answer) = self.handle_line(number, &text, &id).await {
                        self.report.timing(step, sent_at.elapsed().as_millis());
                        return Ok((answer, Offending::new(number, &text)));
                    }
                    self.heard_after_cancel |= after_cancel;
                }
            }
        }
    }

    /// Handles one stdout line; returns the answer when it is the response to `awaited`.
    async fn handle_line(&mut self, number: u64, text: &str, awaited: &RequestId) -> Option<Answer> {
        let offending = || Offending::new(number, text);
        let value: Value = match serde_json::from_str(text) {
            Ok(value) => value,
            Err(error) => {
                self.report.problem(Kind::NonJson, format!("not JSON: {error}"), Some(offending()));
                return None;
            }
        };
        // A response with both members is reported, then read by its result, so that the check
        // can go on to find whatever else there is.
        let repaired;
        let text = match both_result_and_error(value) {
            Some(without_error) => {
                self.report.problem(
                    Kind::ResultAndError,
                    "a response has both \"result\" and \"error\" (JSON-RPC allows exactly one)",
                    Some(offending()),
                );
                repaired = without_error;
                repaired.as_str()
            }
            None => text,
        };
        let message = match parse_message(text) {
            Ok(message) => message,
            Err(ParseError::NotJson { message }) => {
                self.report.problem(Kind::NonJson, message, Some(offending()));
                return None;
            }
            Err(ParseError::Invalid { reason, .. }) => {
                self.report.problem(Kind::NotJsonRpc, reason, Some(offending()));
                return None;
            }
        };
        match message {
            Message::Response { id, result } => {
                let answer = result.map(|raw| raw.get().to_owned());
                self.handle_response(id, answer, awaited, offending())
            }
            Message::Request { id, method, params } => {
                let reply = self.answer_request(&method, params.map(|raw| raw.get()), offending()).await;
                let line = match reply {
                    Ok(result) => encode_result(&id, &result),
                    Err(error) => encode_error(&id, &error),
                };
                self.agent.send(&line).await;
                None
            }
            Message::Notification { method, params } => {
                self.handle_notification(&method, params.map(|raw| raw.get()), offending());
                None
            }
        }
    }

    fn handle_response(
        &mut self,
        id: RequestId,
        answer: Answer,
        awaited: &RequestId,
        offending: Offending,
    ) -> Option<Answer> {
        if let Some(method) = self.pending.remove(&id) {
            self.answered.insert(id.clone(), method);
            return (&id == awaited).then_some(answer);
        }
        if let Some(method) = self.answered.get(&id) {
            let message = format!("a second response to request {} ({method})", id_text(&id));
            self.report.problem(Kind::AnsweredTwice, message, Some(offending));
        } else {
            self.report.problem(
                Kind::UnknownId,
                format!("a response to request {}, which the checker never sent", id_text(&id)),
                Some(offending),
            );
        }
        None
    }

    fn handle_notification(&mut self, method: &str, params: Option<&str>, offending: Offending) {
        if method != "session/update" {
            self.note_once(
                Kind::Tolerated,
                format!("the agent sent a {method} notification, which the checker ignores"),
            );
            return;
        }
        let kind = params
            .and_then(|params| serde_json::from_str::<Value>(params).ok())
            .and_then(|params| params.pointer("/update/sessionUpdate").and_then(Value::as_str).map(str::to_owned));
        if let Some(kind) = &kind
            && !STABLE_UPDATE_KINDS.contains(&kind.as_str())
        {
            self.note_once(
                Kind::Tolerated,
                format!("session/update of kind {kind:?}, which is not a stable ACP v1 kind, was ignored"),
            );
            return;
        }
        let Some(notification) = self.valid_params::<SessionNotification>(method, params, &offending) else { return };
        if !self.known_session(method, &notification.session_id.0, &offending) {
            return;
        }
        if let Some(session_id) = self.cancel_on_first_update.take() {
            self.cancel_due = Some(session_id);
        }
        match notification.update {
            SessionUpdate::ToolCall(call) => {
                self.tool_calls.insert(
                    call.tool_call_id.0.to_string(),
                    ToolCallState { status: call.status, announced: offending },
                );
            }
            SessionUpdate::ToolCallUpdate(update) => {
                if let Some(status) = update.fields.status {
                    let id = update.tool_call_id.0.to_string();
                    match self.tool_calls.get_mut(&id) {
                        Some(state) => state.status = status,
                        // An update may be the first word about a tool call (from an earlier turn,
                        // or announced by the update itself): track it from here.
                        None => {
                            self.tool_calls.insert(id, ToolCallState { status, announced: offending });
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// The parameters of a known method in their v1 type, or `None` after reporting why not.
    fn valid_params<T: DeserializeOwned>(
        &mut self,
        method: &str,
        params: Option<&str>,
        offending: &Offending,
    ) -> Option<T> {
        let raw = params.and_then(|params| serde_json::value::RawValue::from_string(params.to_owned()).ok());
        match jsonrpc::parse_params::<T>(raw.as_deref()) {
            Ok(parsed) => Some(parsed),
            Err(error) => {
                let detail = error.message.strip_prefix("Invalid params: ").unwrap_or(&error.message);
                // serde's position counts within the parameters, not the line, so it would mislead.
                let detail = detail.rsplit_once(" at line ").map_or(detail, |(before, _)| before).to_owned();
                self.report.problem(Kind::InvalidMessage, format!("{method}: {detail}"), Some(offending.clone()));
                None
            }
        }
    }

    /// Whether `session_id` is one the agent created; reports it when not.
    fn known_session(&mut self, method: &str, session_id: &str, offending: &Offending) -> bool {
        if self.sessions.contains(session_id) {
            return true;
        }
        self.report.problem(
            Kind::UnknownSession,
            format!("{method} for session {session_id:?}, which the agent never created"),
            Some(offending.clone()),
        );
        false
    }

    /// Notes `message` the first time only: the same event in every turn says nothing new.
    fn note_once(&mut self, kind: Kind, message: String) {
        if self.noted_once.insert(message.clone()) {
            self.report.note(kind, message);
        }
    }
}

/// The line without its `error` member, when it is a response that has both `result` and a
/// non-null `error`.
fn both_result_and_error(value: Value) -> Option<String> {
    let Value::Object(mut members) = value else { return None };
    let has_both = !members.contains_key("method")
        && members.contains_key("result")
        && members.get("error").is_some_and(|error| !error.is_null());
    if !has_both {
        return None;
    }
    members.remove("error");
    Some(Value::Object(members).to_string())
}

/// "exited with code 3", "was killed by signal 9".
fn describe_exit(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return format!("was killed by signal {signal}");
    }
    match status.code() {
        Some(code) => format!("exited with code {code}"),
        None => format!("exited ({status})"),
    }
}

fn id_text(id: &RequestId) -> String {
    match id {
        RequestId::Null => "null".to_owned(),
        RequestId::Number(number) => number.to_string(),
        RequestId::Str(text) => format!("{text:?}"),
    }
}

fn stop_reason_name(reason: StopReason) -> String {
    serde_json::to_value(reason).ok().and_then(|value| value.as_str().map(str::to_owned)).unwrap_or_default()
}

fn status_name(status: ToolCallStatus) -> String {
    serde_json::to_value(status).ok().and_then(|value| value.as_str().map(str::to_owned)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_response_with_both_members_is_read_by_its_result() {
        let repaired =
            both_result_and_error(json!({ "jsonrpc": "2.0", "id": 1, "result": {}, "error": { "code": 1 } }));
        assert_eq!(repaired.as_deref(), Some(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
        // JSON-RPC 1.0 peers send `"error": null` beside a result; that is one answer, not two.
        assert_eq!(both_result_and_error(json!({ "id": 1, "result": {}, "error": null })), None);
    }
}
