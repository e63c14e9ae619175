//! A tiny ACP client for tests: spawns the real agent binary and talks JSON-RPC over its
//! pipes, one line at a time, with generous timeouts so a hang fails instead of blocking.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Long enough for a loaded, shared machine; only reached when something is broken.
const TIMEOUT: Duration = Duration::from_secs(60);

/// The session cwd every test uses; the agent only joins paths to it, never touches it.
pub const WORKSPACE: &str = "/tmp/tether-demo-workspace";

pub struct AgentProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Vec<u8>>,
    stderr: Option<JoinHandle<String>>,
    next_id: i64,
}

impl AgentProcess {
    /// Starts the agent with these command-line arguments.
    pub fn spawn(arguments: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tether-test-agent"))
            .args(arguments)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the agent binary starts");
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut stderr = child.stderr.take().expect("stderr is piped");
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if line.last() == Some(&b'\n') {
                            line.pop();
                        }
                        if sender.send(line).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let stderr = thread::spawn(move || {
            let mut text = String::new();
            stderr.read_to_string(&mut text).expect("stderr is readable text");
            text
        });
        let stdin = child.stdin.take();
        Self { child, stdin, lines, stderr: Some(stderr), next_id: 100 }
    }

    /// Starts the agent with a scenario.
    pub fn scenario(name_or_path: &str) -> Self {
        Self::spawn(&["--scenario", name_or_path])
    }

    pub fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).expect("JSON values serialize");
        line.push(b'\n');
        self.send_raw(&line);
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).expect("the agent reads its stdin");
        stdin.flush().expect("the agent reads its stdin");
    }

    /// Sends a request and returns its id without waiting for the answer.
    pub fn send_request(&mut self, method: &str, params: Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        id
    }

    /// Sends a request and returns the whole response object, failing on anything else.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        let response = self.next_message();
        assert_eq!(response["id"], json!(id), "expected the response to {method}, got {response}");
        response
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    pub fn respond(&mut self, id: &Value, result: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "result": result }));
    }

    pub fn respond_error(&mut self, id: &Value, code: i64, message: &str) {
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } }));
    }

    pub fn next_line(&self) -> Vec<u8> {
        self.lines.recv_timeout(TIMEOUT).expect("the agent printed a line in time")
    }

    pub fn next_message(&self) -> Value {
        let line = self.next_line();
        serde_json::from_slice(&line)
            .unwrap_or_else(|error| panic!("not JSON ({error}): {}", String::from_utf8_lossy(&line)))
    }

    /// `initialize` with these client capabilities; returns the agent's answer.
    pub fn initialize(&mut self, client_capabilities: Value) -> Value {
        let initialized = self.request(
            "initialize",
            json!({ "protocolVersion": 1, "clientCapabilities": client_capabilities,
                    "clientInfo": { "name": "line-client", "version": "0" } }),
        );
        assert_eq!(initialized["result"]["protocolVersion"], json!(1), "{initialized}");
        initialized
    }

    /// `initialize` with these client capabilities, then `session/new`; returns the session id.
    pub fn start_session(&mut self, client_capabilities: Value) -> String {
        self.start_session_in(client_capabilities, WORKSPACE)
    }

    /// [`AgentProcess::start_session`] in the folder `cwd`, for a turn that writes files there.
    pub fn start_session_in(&mut self, client_capabilities: Value, cwd: &str) -> String {
        self.initialize(client_capabilities);
        let created = self.request("session/new", json!({ "cwd": cwd, "mcpServers": [] }));
        created["result"]["sessionId"].as_str().expect("a session id").to_owned()
    }

    /// Closes stdin and waits for the process to exit; returns its status and stderr.
    pub fn finish(mut self) -> (ExitStatus, String) {
        self.stdin = None;
        let status = self.wait_for_exit();
        let stderr = self.stderr.take().expect("stderr is collected once").join().expect("stderr thread");
        (status, stderr)
    }

    /// Waits for the process to exit on its own (without closing stdin).
    pub fn wait_for_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().expect("the child can be polled") {
                return status;
            }
            assert!(Instant::now() < deadline, "the agent did not exit");
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        // The process may already have exited; killing a finished child is harmless.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs a prompt turn, answering the agent's requests with `answer`, and returns a readable
/// transcript of everything the agent sent, ending with the prompt's response.
pub fn run_turn(
    agent: &mut AgentProcess,
    session_id: &str,
    prompt: &str,
    mut answer: impl FnMut(&mut AgentProcess, &Value),
) -> Vec<String> {
    let prompt_id = agent.send_request(
        "session/prompt",
        json!({ "sessionId": session_id, "prompt": [{ "type": "text", "text": prompt }] }),
    );
    let mut transcript = Vec::new();
    loop {
        let message = agent.next_message();
        transcript.push(describe(&message));
        if message.get("method").is_some() && message.get("id").is_some() {
            answer(agent, &message);
        }
        if message["id"] == json!(prompt_id) && message.get("method").is_none() {
            return transcript;
        }
    }
}

/// One line per message, naming only what a person would notice.
pub fn describe(message: &Value) -> String {
    let method = message["method"].as_str();
    let params = &message["params"];
    match method {
        Some("session/update") => {
            let update = &params["update"];
            match update["sessionUpdate"].as_str().unwrap_or("?") {
                "agent_message_chunk" => format!("say {:?}", update["content"]["text"].as_str().unwrap_or("?")),
                "agent_thought_chunk" => format!("think {:?}", update["content"]["text"].as_str().unwrap_or("?")),
                "plan" => {
                    let entries: Vec<String> = update["entries"]
                        .as_array()
                        .map(|entries| {
                            entries
                                .iter()
                                .map(|entry| {
                                    format!(
                                        "{}: {}",
                                        entry["status"].as_str().unwrap_or("?"),
                                        entry["content"].as_str().unwrap_or("?")
                                    )
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    format!("plan [{}]", entries.join("; "))
                }
                "tool_call" => format!(
                    "tool_call {} {:?} kind={} status={}{}{}{}",
                    update["toolCallId"].as_str().unwrap_or("?"),
                    update["title"].as_str().unwrap_or("?"),
                    update["kind"].as_str().unwrap_or("other"),
                    update["status"].as_str().unwrap_or("pending"),
                    field(update, "locations"),
                    field(update, "content"),
                    field(update, "rawInput"),
                ),
                "tool_call_update" => format!(
                    "tool_update {}{}{}{}",
                    update["toolCallId"].as_str().unwrap_or("?"),
                    update
                        .get("status")
                        .map(|status| format!(" status={}", status.as_str().unwrap_or("?")))
                        .unwrap_or_default(),
                    field(update, "content"),
                    field(update, "rawInput"),
                ),
                "current_mode_update" => format!("mode {}", update["currentModeId"].as_str().unwrap_or("?")),
                other => format!("update {other} {update}"),
            }
        }
        Some("session/request_permission") => {
            let options: Vec<String> = params["options"]
                .as_array()
                .map(|options| {
                    options
                        .iter()
                        .map(|option| {
                            format!(
                                "{}={:?}",
                                option["optionId"].as_str().unwrap_or("?"),
                                option["name"].as_str().unwrap_or("?")
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            format!("permission {} [{}]", params["toolCall"], options.join(", "))
        }
        Some(method) if message.get("id").is_none() => format!("notification {method} {params}"),
        Some(method) => format!("request {method} {params}"),
        None => match (message.get("result"), message.get("error")) {
            (Some(result), _) => format!("result {result}"),
            (None, Some(error)) => format!("error {error}"),
            _ => format!("unexpected {message}"),
        },
    }
}

fn field(update: &Value, name: &str) -> String {
    update.get(name).map(|value| format!(" {name}={value}")).unwrap_or_default()
}

/// Answers a permission request with one option id.
pub fn choose(option_id: &'static str) -> impl FnMut(&mut AgentProcess, &Value) {
    move |agent, request| {
        assert_eq!(request["method"], "session/request_permission", "unexpected request {request}");
        agent.respond(&request["id"], json!({ "outcome": { "outcome": "selected", "optionId": option_id } }));
    }
}
