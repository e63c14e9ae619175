//! The Claude CLI's side of the wire: the stream-json lines it prints and the lines Tether writes
//! to its stdin, including both directions of its control protocol.
//!
//! There is no published schema for this wire, so only what Tether uses is typed, and every type
//! tolerates members it does not know (new CLI versions add many). The shapes were read off the
//! real CLI (2.1.x) against a mock of the Messages API; `test_data/claude_cli/` holds such
//! transcripts.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One line the CLI printed, by its `type`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum CliLine {
    /// `system`: `init` (the session's id, model, tools, commands) and status lines.
    System(SystemLine),
    /// A message of the model's, whole: one content block per line as the CLI prints them.
    Assistant(MessageLine),
    /// A user-side message: tool results, or the CLI's own notes ("[Request interrupted by
    /// user]").
    User(MessageLine),
    /// A raw event of the Messages API stream (`--include-partial-messages`).
    StreamEvent(StreamEventLine),
    /// The turn ended.
    Result(ResultLine),
    /// The CLI asks something of Tether (a permission, a hook).
    ControlRequest(ControlRequestLine),
    /// The CLI answers one of Tether's control requests.
    ControlResponse(ControlResponseLine),
    /// Anything else (new line types appear with new CLI versions): ignored.
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
pub(super) struct SystemLine {
    #[serde(default)]
    pub subtype: String,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default, rename = "permissionMode")]
    pub permission_mode: Option<String>,
    #[serde(default)]
    pub slash_commands: Vec<String>,
    /// `init`: the MCP servers the CLI was given, each `{name, status}`.
    #[serde(default)]
    pub mcp_servers: Vec<Value>,
}

#[derive(Debug, Deserialize)]
pub(super) struct MessageLine {
    pub message: ApiMessage,
    /// Set on the lines of a subagent (the Task tool): they belong inside that tool call.
    #[serde(default)]
    pub parent_tool_use_id: Option<String>,
    /// The CLI's structured view of a tool's result (for Write: the file's old and new text).
    #[serde(default)]
    pub tool_use_result: Option<Value>,
}

#[derive(Debug, Deserialize)]
pub(super) struct ApiMessage {
    #[serde(default)]
    pub id: Option<String>,
    /// The model that wrote it; [`SYNTHETIC_MODEL`] for the CLI's own words.
    #[serde(default)]
    pub model: Option<String>,
    /// A string (a plain user message) or content blocks.
    #[serde(default)]
    pub content: Value,
}

/// The `model` of an assistant message the CLI wrote itself rather than the model: a local
/// command's output (`/usage`, `/context`), or an API error.
pub(super) const SYNTHETIC_MODEL: &str = "<synthetic>";

impl ApiMessage {
    /// The content blocks, a plain string counting as one text block.
    pub fn blocks(&self) -> Vec<Value> {
        match &self.content {
            Value::String(text) => vec![serde_json::json!({ "type": "text", "text": text })],
            Value::Array(blocks) => blocks.clone(),
            _ => Vec::new(),
        }
    }
}

#[derive(Debug, Deserialize)]
pub(super) struct StreamEventLine {
    pub event: Value,
    #[serde(default)]
    pub parent_tool_use_id: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(super) struct ResultLine {
    #[serde(default)]
    pub subtype: String,
    #[serde(default)]
    pub is_error: bool,
    #[serde(default)]
    pub result: Option<String>,
    /// Why the turn could not run (`error_during_execution`: a session that cannot be resumed).
    #[serde(default)]
    pub errors: Vec<String>,
    #[serde(default)]
    pub stop_reason: Option<String>,
    #[serde(default)]
    pub num_turns: u64,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub total_cost_usd: Option<f64>,
    #[serde(default)]
    pub duration_ms: Option<u64>,
    #[serde(default)]
    pub usage: Option<Value>,
    #[serde(default, rename = "modelUsage")]
    pub model_usage: Option<Value>,
}

impl ResultLine {
    /// Tokens in the context at the end of the turn, and the model's context window, when the
    /// CLI said.
    pub fn context(&self) -> Option<(u64, u64)> {
        let usage = self.usage.as_ref()?;
        let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
        let used = count("input_tokens")
            + count("cache_creation_input_tokens")
            + count("cache_read_input_tokens")
            + count("output_tokens");
        let size = self
            .model_usage
            .as_ref()
            .and_then(Value::as_object)
            .and_then(|models| models.values().filter_map(|model| model.get("contextWindow")?.as_u64()).max())?;
        Some((used, size))
    }
}

#[derive(Debug, Deserialize)]
pub(super) struct ControlRequestLine {
    pub request_id: String,
    pub request: Value,
}

#[derive(Debug, Deserialize)]
pub(super) struct ControlResponseLine {
    pub response: ControlResponseBody,
}

#[derive(Debug, Deserialize)]
pub(super) struct ControlResponseBody {
    #[serde(default)]
    pub subtype: String,
    pub request_id: String,
    #[serde(default)]
    pub response: Option<Value>,
    #[serde(default)]
    pub error: Option<String>,
}

/// `can_use_tool`: the CLI asks whether a tool may run.
#[derive(Debug, Deserialize)]
pub(super) struct CanUseTool {
    pub tool_name: String,
    #[serde(default)]
    pub input: Value,
    #[serde(default)]
    pub permission_suggestions: Option<Value>,
    #[serde(default)]
    pub tool_use_id: Option<String>,
}

/// A user message for the CLI's stdin.
pub(super) fn user_message(content: Vec<Value>) -> String {
    #[derive(Serialize)]
    struct Line<'a> {
        r#type: &'a str,
        message: Value,
        parent_tool_use_id: Option<()>,
        session_id: &'a str,
    }
    let line = Line {
        r#type: "user",
        message: serde_json::json!({ "role": "user", "content": content }),
        parent_tool_use_id: None,
        // The CLI uses its own session; the field is required but not read.
        session_id: "",
    };
    serde_json::to_string(&line).expect("a user message serializes")
}

/// A control request of Tether's (`request` carries its `subtype`).
pub(super) fn control_request(request_id: &str, request: Value) -> String {
    serde_json::json!({ "type": "control_request", "request_id": request_id, "request": request }).to_string()
}

/// Tether's answer to the CLI's control request `request_id`.
pub(super) fn control_success(request_id: &str, response: Value) -> String {
    serde_json::json!({
        "type": "control_response",
        "response": { "subtype": "success", "request_id": request_id, "response": response },
    })
    .to_string()
}

/// Tether's refusal of the CLI's control request `request_id`.
pub(super) fn control_error(request_id: &str, error: &str) -> String {
    serde_json::json!({
        "type": "control_response",
        "response": { "subtype": "error", "request_id": request_id, "error": error },
    })
    .to_string()
}
