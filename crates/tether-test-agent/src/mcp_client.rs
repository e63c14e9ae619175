//! Just enough of an MCP client to call one tool of a stdio server, the way real agents reach the
//! servers a client names in `session/new`: start the server's command with its arguments and
//! environment, `initialize`, `notifications/initialized`, `tools/call`, and close its input.
//!
//! The test agent uses it to call Tether's own MCP server (`tetherd mcp`) in end-to-end tests, so
//! that what an agent gets from the editor's tools is checked through the real bridge, tetherd
//! and VS Code. It blocks the agent for the call (at most [`CALL_TIMEOUT`]): nothing else the test
//! agent does runs meanwhile, which no test needs.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use agent_client_protocol_schema::v1::McpServerStdio;
use serde_json::{Value, json};

/// How long one tool call may take, from starting the server to its answer.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Calls `tool` with `arguments` on the stdio server `server`; the text of its result, or why
/// there is none. A result the server marks as an error comes back as `Err` with its text.
pub fn call_tool(server: &McpServerStdio, tool: &str, arguments: Value) -> Result<String, String> {
    let mut command = Command::new(&server.command);
    command.args(&server.args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    for variable in &server.env {
        command.env(&variable.name, &variable.value);
    }
    let mut child = command.spawn().map_err(|error| format!("cannot start {}: {error}", server.command.display()))?;
    let outcome = talk(&mut child, tool, arguments);
    // The answer is in hand: the server is not needed any more, whether or not it would end by
    // itself once its input closes. An error means it has exited already.
    let _already_gone = child.kill();
    // Reaped so that no zombie is left behind; its exit status says nothing the call needs.
    let _status = child.wait();
    outcome
}

fn talk(child: &mut Child, tool: &str, arguments: Value) -> Result<String, String> {
    let deadline = Instant::now() + CALL_TIMEOUT;
    let mut stdin = child.stdin.take().ok_or("the server has no stdin")?;
    let stdout = child.stdout.take().ok_or("the server has no stdout")?;
    let stderr = child.stderr.take().ok_or("the server has no stderr")?;
    let (lines, received) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if lines.send(line).is_err() {
                return;
            }
        }
    });
    let (errors, error_text) = mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            text.push_str(&line);
            text.push('\n');
        }
        // Nobody listens once the call is over.
        let _gone = errors.send(text);
    });
    let stderr_of = |error_text: &mpsc::Receiver<String>| {
        error_text.recv_timeout(Duration::from_millis(500)).unwrap_or_default().trim().to_owned()
    };

    let initialize = json!({
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": { "name": "tether-test-agent", "version": env!("CARGO_PKG_VERSION") },
    });
    send(&mut stdin, json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize }))?;
    answer(&received, 1, deadline).map_err(|error| format!("{error} {}", stderr_of(&error_text)))?;
    send(&mut stdin, json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))?;
    let call = json!({ "name": tool, "arguments": arguments });
    send(&mut stdin, json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call }))?;
    let result = answer(&received, 2, deadline)?;
    let text: String = result["content"]
        .as_array()
        .map(|blocks| blocks.iter().filter_map(|block| block["text"].as_str()).collect::<Vec<_>>().join("\n"))
        .unwrap_or_default();
    if result["isError"] == json!(true) { Err(text) } else { Ok(text) }
}

fn send(stdin: &mut ChildStdin, message: Value) -> Result<(), String> {
    writeln!(stdin, "{message}")
        .and_then(|()| stdin.flush())
        .map_err(|error| format!("cannot write to the server: {error}"))
}

/// The result of the response with `id`, skipping the server's notifications and requests.
fn answer(received: &mpsc::Receiver<String>, id: u64, deadline: Instant) -> Result<Value, String> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = match received.recv_timeout(left) {
            Ok(line) => line,
            Err(mpsc::RecvTimeoutError::Timeout) => return Err(format!("no answer within {CALL_TIMEOUT:?}")),
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err("the server closed its output".to_owned()),
        };
        let Ok(message) = serde_json::from_str::<Value>(&line) else { continue };
        if message["id"] != json!(id) {
            continue;
        }
        if let Some(error) = message.get("error") {
            return Err(format!("the server answered an error: {}", error["message"].as_str().unwrap_or("?")));
        }
        return Ok(message["result"].clone());
    }
}
