//! The parts of the host ↔ tetherd wire that serve Tether's built-in MCP server: what an agent
//! is offered in `session/new` to reach it, and the questions tetherd asks the editor on an
//! agent's behalf.
//!
//! tetherd runs the MCP server; the engine only passes its offer on to the agent (in
//! `session/new` and `session/load`, or the Claude CLI's `--mcp-config`) and carries the
//! editor's questions to the host and its answers back. Positions on this wire are VS Code's:
//! 0-based lines and UTF-16 characters; tetherd turns them into the 1-based lines agents read.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
#[cfg(feature = "typescript")]
use ts_rs::TS;

use super::AgentId;

/// The name Tether's server has in an agent's `mcpServers` (Claude Code shows its tools as
/// `mcp__tether__<tool>`).
pub const MCP_SERVER_NAME: &str = "tether";

/// The variables tetherd puts in every agent's environment, naming its own way to Tether's
/// server: `tetherd` itself, the socket, and the agent's token.
pub const MCP_COMMAND_ENV: &str = "TETHER_MCP_COMMAND";
pub const MCP_SOCKET_ENV: &str = "TETHER_MCP_SOCKET";
pub const MCP_TOKEN_ENV: &str = "TETHER_MCP_TOKEN";

/// Tether's server for an agent whose command line is written before tetherd starts it (the
/// Claude CLI's `--mcp-config`): `${VAR}` references to the variables tetherd puts in the
/// agent's environment, which the agent expands.
pub fn deferred_mcp_offer() -> McpOffer {
    let reference = |name: &str| format!("${{{name}}}");
    McpOffer {
        stdio: McpStdioOffer {
            command: reference(MCP_COMMAND_ENV),
            args: vec!["mcp".to_owned()],
            env: BTreeMap::from([
                (MCP_SOCKET_ENV.to_owned(), reference(MCP_SOCKET_ENV)),
                (MCP_TOKEN_ENV.to_owned(), reference(MCP_TOKEN_ENV)),
            ]),
        },
        http: None,
    }
}

/// How an agent reaches Tether's MCP server, made by tetherd at `agent/spawn` with a token that
/// is this agent's alone and stops working when the agent exits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct McpOffer {
    /// `tetherd mcp`: a stdio server the agent starts, which connects back to tetherd.
    pub stdio: McpStdioOffer,
    /// Streamable HTTP on 127.0.0.1, for agents that say `mcpCapabilities.http`. Absent when
    /// tetherd could not listen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<McpHttpOffer>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct McpStdioOffer {
    pub command: String,
    pub args: Vec<String>,
    /// Where the bridge connects and the token it presents (kept out of the command line, which
    /// every user of the machine can read).
    pub env: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct McpHttpOffer {
    pub url: String,
    /// `Authorization: Bearer <token>`.
    pub headers: BTreeMap<String, String>,
}

/// The first line `tetherd mcp` sends on the socket, instead of a host's `hello`. tetherd answers
/// `{}` (then the connection carries MCP, one JSON-RPC message per line, both ways) or an
/// `UNAUTHORIZED` error. The bridge sends nothing else before the answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct McpHelloParams {
    pub token: String,
}

/// A position in a file as VS Code counts: 0-based line, 0-based UTF-16 character.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct EditorPosition {
    pub line: u32,
    pub character: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct EditorRange {
    pub start: EditorPosition,
    pub end: EditorPosition,
}

/// `editor/query` (tetherd → host, a request): a question only VS Code can answer, asked for an
/// agent's MCP tool call. Paths are absolute and already checked to be inside the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct EditorQueryParams {
    /// The agent whose tool call this is; the window running its session answers.
    pub agent_id: AgentId,
    pub query: EditorQuery,
    /// The most items a list answer should hold; the host collects one more when there are more,
    /// so that tetherd can say the list was cut.
    pub max_results: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum EditorQuery {
    /// The active text editor's file, selection and selected text.
    Selection,
    /// The tabs open on text files.
    OpenEditors,
    /// The Problems panel: one file's, or the whole workspace's.
    Diagnostics {
        path: Option<String>,
    },
    Definition {
        path: String,
        position: EditorPosition,
    },
    References {
        path: String,
        position: EditorPosition,
    },
    Hover {
        path: String,
        position: EditorPosition,
    },
    DocumentSymbols {
        path: String,
    },
    WorkspaceSymbols {
        query: String,
    },
    /// Shows the file (at the line) in the editor; takes the focus only when `focus` is set.
    OpenFile {
        path: String,
        line: Option<u32>,
        focus: bool,
    },
}

/// The host's answer to [`EditorQuery`]. Paths are absolute (as VS Code has them); tetherd makes
/// them workspace-relative and trims what it passes on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum EditorAnswer {
    Selection {
        selection: Option<ActiveSelection>,
    },
    OpenEditors {
        editors: Vec<OpenEditor>,
    },
    Diagnostics {
        diagnostics: Vec<EditorDiagnostic>,
    },
    /// Definitions and references.
    Locations {
        locations: Vec<EditorLocation>,
    },
    /// Hover texts, Markdown.
    Hover {
        contents: Vec<String>,
    },
    Symbols {
        symbols: Vec<EditorSymbol>,
    },
    Opened {
        path: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct ActiveSelection {
    pub path: String,
    pub language_id: String,
    pub range: EditorRange,
    /// The selected text (empty for a bare cursor).
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct OpenEditor {
    pub path: String,
    pub language_id: Option<String>,
    /// Has unsaved changes.
    pub dirty: bool,
    /// The tab the person is looking at.
    pub active: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct EditorDiagnostic {
    pub path: String,
    pub range: EditorRange,
    /// `error`, `warning`, `information` or `hint`.
    pub severity: String,
    pub message: String,
    pub source: Option<String>,
    pub code: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct EditorLocation {
    pub path: String,
    pub range: EditorRange,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct EditorSymbol {
    pub name: String,
    /// VS Code's `SymbolKind`, by name (`Function`, `Class`...).
    pub kind: String,
    pub path: String,
    pub range: EditorRange,
    pub container: Option<String>,
}

/// `mcp/toolCalled` (tetherd → host, a notification): an agent called a tool of Tether's MCP
/// server. The same record is in the session's audit log; the chat shows it as a tool card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct McpToolCalled {
    pub agent_id: AgentId,
    pub tool: String,
    /// The arguments as the agent gave them (long strings shortened).
    #[cfg_attr(feature = "typescript", ts(type = "unknown"))]
    pub arguments: serde_json::Value,
    /// One line for the card ("12 matches in 4 files", or the error).
    pub summary: String,
    pub ok: bool,
    pub duration_ms: u64,
    pub result_bytes: u64,
}
