//! `tetherd check-agent --claude-cli -- <claude> [args]`: the same kind of check for the `claude`
//! CLI driven directly (its stream-json and control protocol), as "Claude Code (direct)" drives
//! it: with Tether's own arguments (`tether_core::claude_cli::cli_arguments`), in a throwaway
//! folder.
//!
//! One short conversation: Tether's `initialize` control request must be answered; a prompt
//! ("Say hello" unless told otherwise) must bring a `system/init` naming the CLI's session and end
//! with a `result`; a second prompt is interrupted once it has started and must still end with a
//! `result`; with its input closed the CLI must exit; and a second CLI started with `--resume`
//! must go on with the same session. Every stdout line must be a JSON object with a string
//! `type`, and control responses must answer requests that were sent.
//!
//! The CLI's own requests are answered so that nothing happens to the person's files: tool uses
//! (`can_use_tool`) are denied with a message, hook callbacks are answered "continue", anything
//! else is refused. A `result` that says the CLI is not signed in stops the check with an info
//! finding, not a problem.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::process::{AgentProcess, Output};
use super::report::{Kind, Offending, Report, Severity};
use super::{CANCELLED_PROMPT, EXIT_STATUS_WAIT, describe_exit, stop_and_report};

/// Why a step ended early. Either way the finding is in the report already.
#[derive(Debug)]
struct Stopped;

/// What one CLI of the check said in a turn.
struct TurnEnd {
    subtype: String,
    is_error: bool,
    session_id: Option<String>,
}

/// Runs the conversation against `program` and returns the report.
pub async fn check(
    program: &OsString,
    program_args: &[OsString],
    prompt: &str,
    timeout: Duration,
    mut report: Report,
    workspace: PathBuf,
) -> Report {
    let first = match start(program, program_args, None, &workspace, &mut report) {
        Some(cli) => cli,
        None => return report,
    };
    let mut checker = CliChecker { cli: first, report, timeout, next_request: 0, noted_denial: false };
    let session = checker.first_cli(prompt).await;
    let CliChecker { cli, mut report, .. } = checker;
    stop_and_report(cli, &mut report, "CLI").await;
    let Ok(Some(session)) = session else { return report };

    let Some(second) = start(program, program_args, Some(&session), &workspace, &mut report) else { return report };
    let mut checker = CliChecker { cli: second, report, timeout, next_request: 0, noted_denial: true };
    checker.resumed_cli(&session).await;
    let CliChecker { cli, mut report, .. } = checker;
    stop_and_report(cli, &mut report, "CLI").await;
    report
}

/// Starts the CLI with Tether's arguments (resuming `resume`) in `workspace`.
fn start(
    program: &OsString,
    program_args: &[OsString],
    resume: Option<&str>,
    workspace: &std::path::Path,
    report: &mut Report,
) -> Option<AgentProcess> {
    let tether_args = tether_core::claude_cli::cli_arguments("default", None, resume, None, &[]);
    let args: Vec<OsString> = program_args.iter().cloned().chain(tether_args.into_iter().map(OsString::from)).collect();
    match AgentProcess::spawn_in(program, &args, Some(workspace)) {
        Ok(cli) => Some(cli),
        Err(error) => {
            report.problem(Kind::AgentExited, format!("cannot start the CLI: {error}"), None);
            None
        }
    }
}

struct CliChecker {
    cli: AgentProcess,
    report: Report,
    timeout: Duration,
    next_request: u64,
    /// The denial of tool uses has been noted (once is enough).
    noted_denial: bool,
}

impl CliChecker {
    /// The first CLI: initialize, a turn, an interrupted turn, its exit once its input is
    /// closed. Returns the CLI's session, for the resume.
    async fn first_cli(&mut self, prompt: &str) -> Result<Option<String>, Stopped> {
        self.initialize().await?;
        let turn = self.turn("first prompt", prompt, false).await?;
        let Some(session) = turn.session_id.clone() else {
            self.report.problem(Kind::InvalidMessage, "no system/init line named the CLI's session", None);
            return Ok(None);
        };
        self.report.note(Kind::Capabilities, format!("session {session}"));
        if turn.is_error {
            return Ok(None);
        }
        let interrupted = self.turn("interrupted prompt", CANCELLED_PROMPT, true).await?;
        self.report.note(
            Kind::Process,
            format!(
                "the interrupted prompt ended with a result of subtype {:?} (a turn this short may end before the interrupt reaches it)",
                interrupted.subtype
            ),
        );
        self.exit_after_input_closed().await;
        Ok(Some(session))
    }

    /// The second CLI, started with `--resume`: the same session must go on.
    async fn resumed_cli(&mut self, session: &str) {
        if self.initialize().await.is_err() {
            return;
        }
        let Ok(turn) = self.turn("resumed prompt", "Say hello again", false).await else { return };
        match turn.session_id.as_deref() {
            Some(resumed) if resumed == session => {
                self.report.note(Kind::Capabilities, "--resume went on with the same session");
            }
            Some(other) => self.report.problem(
                Kind::ResumeFailed,
                format!("started with --resume={session}, the CLI went on in session {other}"),
                None,
            ),
            None => self.report.problem(
                Kind::ResumeFailed,
                format!("started with --resume={session}, the CLI named no session (subtype {:?})", turn.subtype),
                None,
            ),
        }
        self.exit_after_input_closed().await;
    }

    /// Tether's `initialize` control request, which must be answered.
    async fn initialize(&mut self) -> Result<(), Stopped> {
        let id = self.control_request(json!({ "subtype": "initialize", "hooks": null })).await;
        let sent_at = Instant::now();
        let deadline = sent_at + self.timeout;
        loop {
            let (number, value) = self.next_line("initialize", deadline).await?;
            if value["type"] == "control_response" && value["response"]["request_id"] == id.as_str() {
                self.report.timing("initialize", sent_at.elapsed().as_millis());
                let response = &value["response"];
                if response["subtype"] != "success" {
                    let error = response["error"].as_str().unwrap_or("no reason given");
                    self.report.problem(
                        Kind::ErrorAnswer,
                        format!("initialize failed: {error}"),
                        Some(Offending::new(number, &value.to_string())),
                    );
                    return Err(Stopped);
                }
                let answer = &response["response"];
                let count = |key: &str| answer[key].as_array().map_or(0, Vec::len);
                let version = answer["claude_code_version"].as_str().unwrap_or("an unknown version");
                self.report.note(
                    Kind::AgentInfo,
                    format!("claude {version}: {} commands, {} models", count("commands"), count("models")),
                );
                return Ok(());
            }
            self.handle(number, &value).await;
        }
    }

    /// One prompt, until its `result`. With `interrupt`, the turn is interrupted once the CLI
    /// has printed something of it.
    async fn turn(&mut self, step: &str, text: &str, interrupt: bool) -> Result<TurnEnd, Stopped> {
        let message = json!({
            "type": "user",
            "message": { "role": "user", "content": [{ "type": "text", "text": text }] },
            "parent_tool_use_id": null,
            "session_id": "",
        });
        self.cli.send(&message.to_string()).await;
        let sent_at = Instant::now();
        let deadline = sent_at + self.timeout;
        let mut session_id = None;
        let mut interrupted = !interrupt;
        loop {
            let (number, value) = self.next_line(step, deadline).await?;
            let kind = value["type"].as_str().unwrap_or_default();
            if kind == "system" && value["subtype"] == "init" {
                match value["session_id"].as_str() {
                    Some(id) if !id.is_empty() => session_id = Some(id.to_owned()),
                    _ => self.report.problem(
                        Kind::InvalidMessage,
                        "system/init without a session_id",
                        Some(Offending::new(number, &value.to_string())),
                    ),
                }
            }
            if kind == "result" {
                self.report.timing(step, sent_at.elapsed().as_millis());
                let is_error = value["is_error"].as_bool().unwrap_or(false);
                let subtype = value["subtype"].as_str().unwrap_or_default().to_owned();
                session_id = session_id.or_else(|| value["session_id"].as_str().map(str::to_owned));
                if is_error && !interrupt {
                    let words = value["result"]
                        .as_str()
                        .map(str::to_owned)
                        .or_else(|| value["errors"].as_array().map(|errors| format!("{errors:?}")))
                        .unwrap_or_default();
                    if ["api key", "/login", "authenticat", "log in"]
                        .iter()
                        .any(|hint| words.to_lowercase().contains(hint))
                    {
                        self.report.add(
                            Severity::Info,
                            Kind::NeedsAuthentication,
                            format!("{step}: the CLI needs a login ({words}); the check stops here"),
                            None,
                        );
                        return Err(Stopped);
                    }
                    self.report.problem(
                        Kind::ErrorAnswer,
                        format!("{step} ended with an error result ({subtype}): {words}"),
                        Some(Offending::new(number, &value.to_string())),
                    );
                }
                return Ok(TurnEnd { subtype, is_error, session_id });
            }
            self.handle(number, &value).await;
            if !interrupted && matches!(kind, "stream_event" | "assistant") {
                interrupted = true;
                self.control_request(json!({ "subtype": "interrupt" })).await;
            }
        }
    }

    /// With its input closed, the CLI must finish and exit.
    async fn exit_after_input_closed(&mut self) {
        self.cli.close_input();
        let deadline = Instant::now() + self.timeout;
        loop {
            match tokio::time::timeout_at(deadline, self.cli.next_output()).await {
                Err(_elapsed) => {
                    let seconds = self.timeout.as_secs();
                    self.report.problem(
                        Kind::NoExit,
                        format!("the CLI still ran {seconds} s after its input closed"),
                        None,
                    );
                    return;
                }
                Ok(Output::Closed) => break,
                Ok(Output::BadLine { number, error }) => {
                    self.report.problem(Kind::NonJson, error.to_string(), Some(Offending::new(number, "")));
                }
                Ok(Output::Line { .. }) => {}
            }
        }
        match self.cli.exit_status(EXIT_STATUS_WAIT).await {
            Some(status) => {
                self.report.note(Kind::Process, format!("with its input closed, the CLI {}", describe_exit(status)))
            }
            None => self.report.problem(Kind::NoExit, "the CLI closed its stdout but did not exit", None),
        }
    }

    /// The next JSON line of stdout, with its number; whatever is not a stream-json line is
    /// reported on the way.
    async fn next_line(&mut self, step: &str, deadline: Instant) -> Result<(u64, Value), Stopped> {
        loop {
            let output = match tokio::time::timeout_at(deadline, self.cli.next_output()).await {
                Ok(output) => output,
                Err(_elapsed) => {
                    let seconds = self.timeout.as_secs();
                    self.report.problem(Kind::Timeout, format!("{step}: nothing ended it within {seconds} s"), None);
                    return Err(Stopped);
                }
            };
            match output {
                Output::Closed => {
                    let status = self.cli.exit_status(EXIT_STATUS_WAIT).await;
                    let how = status.map_or_else(|| "closed its stdout".to_owned(), describe_exit);
                    self.report.problem(Kind::AgentExited, format!("the CLI {how} during the {step}"), None);
                    return Err(Stopped);
                }
                Output::BadLine { number, error } => {
                    self.report.problem(Kind::NonJson, error.to_string(), Some(Offending::new(number, "")));
                }
                Output::Line { number, text } => match serde_json::from_str::<Value>(&text) {
                    Ok(value) if value["type"].is_string() => return Ok((number, value)),
                    Ok(_) => self.report.problem(
                        Kind::NotStreamJson,
                        "a JSON line without a string \"type\"",
                        Some(Offending::new(number, &text)),
                    ),
                    Err(error) => self.report.problem(
                        Kind::NonJson,
                        format!("not JSON: {error}"),
                        Some(Offending::new(number, &text)),
                    ),
                },
            }
        }
    }

    /// A line that is not what the step waits for: the CLI's own requests are answered, and a
    /// control response must answer a request that was sent.
    async fn handle(&mut self, number: u64, value: &Value) {
        match value["type"].as_str() {
            Some("control_request") => {
                let Some(request_id) = value["request_id"].as_str() else {
                    let offending = Some(Offending::new(number, &value.to_string()));
                    return self.report.problem(
                        Kind::InvalidMessage,
                        "a control_request without a request_id",
                        offending,
                    );
                };
                let subtype = value["request"]["subtype"].as_str().unwrap_or_default();
                let (outcome, response) = match subtype {
                    "can_use_tool" => {
                        if !std::mem::replace(&mut self.noted_denial, true) {
                            self.report.note(Kind::ClientAnswer, "tool uses are denied: the check changes nothing");
                        }
                        ("success", json!({ "behavior": "deny", "message": "tetherd check-agent runs no tools." }))
                    }
                    "hook_callback" => ("success", json!({ "continue": true })),
                    other => {
                        self.report
                            .note(Kind::Tolerated, format!("the CLI asked for {other:?}, which the check refuses"));
                        ("error", Value::Null)
                    }
                };
                let answer = if outcome == "success" {
                    json!({ "type": "control_response", "response": { "subtype": "success", "request_id": request_id, "response": response } })
                } else {
                    json!({ "type": "control_response", "response": { "subtype": "error", "request_id": request_id, "error": format!("not offered: {subtype}") } })
                };
                self.cli.send(&answer.to_string()).await;
            }
            Some("control_response") => {
                let id = value["response"]["request_id"].as_str().unwrap_or_default();
                let ours = id
                    .strip_prefix("check-")
                    .and_then(|n| n.parse::<u64>().ok())
                    .is_some_and(|n| n <= self.next_request);
                if !ours {
                    self.report.problem(
                        Kind::UnknownId,
                        format!("a control_response to {id:?}, which the checker never sent"),
                        Some(Offending::new(number, &value.to_string())),
                    );
                }
            }
            _ => {}
        }
    }

    /// Sends a control request; returns its id.
    async fn control_request(&mut self, request: Value) -> String {
        self.next_request += 1;
        let id = format!("check-{}", self.next_request);
        let line = json!({ "type": "control_request", "request_id": id, "request": request });
        self.cli.send(&line.to_string()).await;
        id
    }
}
