//! The wire between the host and tetherd: JSON-RPC 2.0, one JSON object per line, over a local
//! socket.
//!
//! The host speaks first: its first message must be a `hello` request carrying the token the host
//! gave tetherd when it spawned it; tetherd closes any connection whose first message is anything
//! else. After that the host spawns agents, sends them messages and kills them; tetherd forwards
//! what the agents print.
//!
//! Agent messages travel embedded as raw JSON (`message` below): tetherd checks a line is JSON
//! before embedding it and never re-escapes it, and the host's engine parses it once.
//!
//! | direction | method | kind | params → result |
//! |---|---|---|---|
//! | host → tetherd | `hello` | request | [`HelloParams`] → [`HelloResult`] |
//! | host → tetherd | `agent/spawn` | request | [`SpawnParams`] → [`SpawnResult`] |
//! | host → tetherd | `agent/kill` | request | [`AgentRef`] → `{}` |
//! | host → tetherd | `agent/send` | notification | [`AgentSend`] |
//! | host → tetherd | `agent/closeInput` | notification | [`AgentRef`] |
//! | host → tetherd | `session/audit` | notification | [`AuditAppend`] |
//! | host → tetherd | `snapshot/take` | request | [`SnapshotTakeParams`] → [`SnapshotTakeResult`] |
//! | host → tetherd | `snapshot/changes` | request | [`SnapshotChangesParams`] → [`SnapshotChangesResult`] |
//! | host → tetherd | `session/list` | request | [`SessionListParams`] → [`SessionListResult`] |
//! | host → tetherd | `session/read` | request | [`SessionReadParams`] → [`SessionReadResult`] |
//! | host → tetherd | `session/rename` | request | [`SessionRenameParams`] → `{}` |
//! | host → tetherd | `session/delete` | request | [`SessionDirRef`] → `{}` |
//! | host → tetherd | `terminal/create` | request | [`TerminalCreateParams`] → [`TerminalCreateResult`] |
//! | host → tetherd | `terminal/output` | request | [`TerminalRef`] → [`TerminalOutputResult`] |
//! | host → tetherd | `terminal/wait_for_exit` | request | [`TerminalRef`] → [`TerminalExitStatus`] |
//! | host → tetherd | `terminal/kill` | request | [`TerminalRef`] → `{}` |
//! | host → tetherd | `terminal/release` | request | [`TerminalRef`] → `{}` |
//! | host → tetherd | `terminal/input` | notification | [`TerminalInput`] |
//! | host → tetherd | `terminal/resize` | notification | [`TerminalResize`] |
//! | tetherd → host | `agent/message` | notification | [`AgentMessage`] |
//! | tetherd → host | `agent/badLine` | notification | [`AgentBadLine`] |
//! | tetherd → host | `agent/stderr` | notification | [`AgentStderr`] |
//! | tetherd → host | `agent/logFailed` | notification | [`AgentLogFailed`] |
//! | tetherd → host | `agent/exited` | notification | [`AgentExited`] |
//! | tetherd → host | `terminal/data` | notification | [`TerminalData`] |
//! | tetherd → host | `terminal/exited` | notification | [`TerminalExited`] |
//! | tetherd → host | `tetherd/stopping` | notification | [`TetherdStopping`] |
//! | tetherd → host | `editor/query` | request | [`EditorQueryParams`] → [`EditorAnswer`] |
//! | tetherd → host | `mcp/toolCalled` | notification | [`McpToolCalled`] |
//! | `tetherd mcp` → tetherd | `mcp/hello` | request | [`McpHelloParams`] → `{}`, then MCP |
//!
//! `agent/send` is a notification so that streaming to an agent never waits for a round trip; a
//! send to an agent that is gone is reported back as `agent/exited` (already sent) or logged.

use std::collections::BTreeMap;

mod mcp;

pub use mcp::{
    ActiveSelection, EditorAnswer, EditorDiagnostic, EditorLocation, EditorPosition, EditorQuery, EditorQueryParams,
    EditorRange, EditorSymbol, MCP_COMMAND_ENV, MCP_SERVER_NAME, MCP_SOCKET_ENV, MCP_TOKEN_ENV, McpHelloParams,
    McpHttpOffer, McpOffer, McpStdioOffer, McpToolCalled, OpenEditor, deferred_mcp_offer,
};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
#[cfg(feature = "typescript")]
use ts_rs::TS;

/// The version of this wire. tetherd refuses a `hello` with another one, so that a host never
/// talks to a stale tetherd left running by an older build of the extension.
pub const SIDECAR_PROTOCOL_VERSION: u32 = 1;

/// Method names, spelled once.
pub mod method {
    pub const HELLO: &str = "hello";
    pub const AGENT_SPAWN: &str = "agent/spawn";
    pub const AGENT_KILL: &str = "agent/kill";
    pub const AGENT_SEND: &str = "agent/send";
    /// Close an agent's stdin after what was sent before it (a notification, `AgentRef`).
    pub const AGENT_CLOSE_INPUT: &str = "agent/closeInput";
    pub const SESSION_AUDIT: &str = "session/audit";
    pub const SNAPSHOT_TAKE: &str = "snapshot/take";
    pub const SNAPSHOT_CHANGES: &str = "snapshot/changes";
    pub const SESSION_LIST: &str = "session/list";
    pub const SESSION_READ: &str = "session/read";
    pub const SESSION_RENAME: &str = "session/rename";
    pub const SESSION_DELETE: &str = "session/delete";
    pub const TERMINAL_CREATE: &str = "terminal/create";
    pub const TERMINAL_OUTPUT: &str = "terminal/output";
    pub const TERMINAL_WAIT_FOR_EXIT: &str = "terminal/wait_for_exit";
    pub const TERMINAL_KILL: &str = "terminal/kill";
    pub const TERMINAL_RELEASE: &str = "terminal/release";
    pub const TERMINAL_INPUT: &str = "terminal/input";
    pub const TERMINAL_RESIZE: &str = "terminal/resize";
    pub const TERMINAL_DATA: &str = "terminal/data";
    pub const TERMINAL_EXITED: &str = "terminal/exited";
    pub const AGENT_MESSAGE: &str = "agent/message";
    pub const AGENT_BAD_LINE: &str = "agent/badLine";
    pub const AGENT_STDERR: &str = "agent/stderr";
    pub const AGENT_LOG_FAILED: &str = "agent/logFailed";
    pub const AGENT_EXITED: &str = "agent/exited";
    pub const TETHERD_STOPPING: &str = "tetherd/stopping";
    pub const EDITOR_QUERY: &str = "editor/query";
    pub const MCP_TOOL_CALLED: &str = "mcp/toolCalled";
    pub const MCP_HELLO: &str = "mcp/hello";
}

/// JSON-RPC error codes tetherd uses beyond the standard ones.
pub mod error_code {
    /// The first message was not a `hello` with the right token.
    pub const UNAUTHORIZED: i32 = -32001;
    /// `hello` named a protocol version this tetherd does not speak.
    pub const PROTOCOL_MISMATCH: i32 = -32003;
    /// The agent process could not be started (command not found, not executable, bad cwd).
    pub const SPAWN_FAILED: i32 = -32010;
    /// The request named an agent tetherd does not know (never spawned, or already reaped).
    pub const UNKNOWN_AGENT: i32 = -32011;
    /// A snapshot could not be taken or compared: git is missing or failed or timed out, the
    /// workspace folder is missing, or the base snapshot is unknown. The message says which.
    pub const SNAPSHOT_FAILED: i32 = -32020;
    /// The command could not be started in a terminal (not found, not executable, bad cwd, no
    /// PTY to be had). The message says which.
    pub const TERMINAL_FAILED: i32 = -32030;
    /// The request named a terminal tetherd does not know (never created, or released).
    pub const UNKNOWN_TERMINAL: i32 = -32031;
    /// A session folder could not be listed, read, renamed or deleted: it does not exist, is not
    /// inside the given `.tether` folder's `sessions/`, its agent is still running (delete), or
    /// the disk said no. The message says which.
    pub const SESSION_FAILED: i32 = -32050;
}

/// Identifies one agent process for the lifetime of a tetherd. Never reused.
pub type AgentId = u64;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct HelloParams {
    pub token: String,
    pub protocol_version: u32,
    /// Free text for tetherd's log ("vscode 1.139.1 window 3").
    pub client: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct HelloResult {
    pub tetherd_version: String,
    pub pid: u32,
}

/// Everything tetherd needs to start an agent process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct SpawnParams {
    /// The profile's name, for logs.
    pub name: String,
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// Added to (or, with an empty value, removed from) tetherd's own environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub cwd: String,
    /// The workspace's `.tether` folder. When given, tetherd makes sure it holds a `.gitignore`
    /// of `*` and creates a new session folder under `sessions/` in it, where it keeps the
    /// session's audit log (and, later, its event log). Everything is created owner-only (0700
    /// folders, 0600 files). Without it nothing is written to disk.
    #[serde(default)]
    pub tether_dir: Option<String>,
    /// An existing session folder of `tetherDir` to continue instead of creating one: the
    /// person reopened the session (after a restart, or with Restart after the agent died). The
    /// new agent's lines are appended to its `events.jsonl` after the earlier ones (a cut last
    /// line is cut off first), numbered on from the last `seq`; `meta.json` is kept as it is.
    /// Refused (`SPAWN_FAILED`) when the folder is not one of `<tetherDir>/sessions/` or an agent
    /// of it still runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_dir: Option<String>,
    /// The workspace folders the agent's MCP tools may read (absolute). Empty means `cwd` alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workspace_folders: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct SpawnResult {
    pub agent_id: AgentId,
    pub pid: u32,
    /// The session folder tetherd created (`<tetherDir>/sessions/<id>`), or the one it continues,
    /// as an absolute path.
    /// `null` without `tetherDir`, or when the folder could not be created: that is logged but
    /// is not a spawn failure, so the agent runs either way, only without an audit log.
    #[serde(default)]
    pub session_dir: Option<String>,
    /// How this agent reaches Tether's MCP server; absent from a tetherd that has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<McpOffer>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct AgentRef {
    pub agent_id: AgentId,
}

/// One message for the agent's stdin. tetherd writes it followed by a newline.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSend<'a> {
    pub agent_id: AgentId,
    #[serde(borrow)]
    pub message: &'a RawValue,
}

/// One record for the session's audit log (`<sessionDir>/audit.jsonl`). tetherd writes it as one
/// line with the wall-clock time first: `{"time":"2026-11-22T06:13:00.123Z",...record}`, and
/// writes it at once (no buffering), so a crash right after a decision still has it on disk.
/// The record's text is spliced in as sent, not re-serialised; it should have no `time` field of
/// its own. Records still land after the agent has exited (the session folder outlives it).
/// Records for an agent without a session folder, or one tetherd never spawned, and records that
/// are not objects, are logged and dropped: the audit is a record, not a channel the host waits on.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditAppend<'a> {
    pub agent_id: AgentId,
    /// A JSON object.
    #[serde(borrow)]
    pub record: &'a RawValue,
}

/// One complete JSON line from the agent's stdout.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentMessage<'a> {
    pub agent_id: AgentId,
    #[serde(borrow)]
    pub message: &'a RawValue,
    /// The message's `seq` in the session's event log, when it has one. A host that rebuilt the
    /// thread from the log (after a window reload) skips what it has already read there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
}

/// Why a line from the agent's stdout could not be forwarded as a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub enum BadLineKind {
    /// Longer than the configured maximum; its bytes were dropped, framing went on after it.
    TooLong,
    /// Not UTF-8.
    InvalidUtf8,
    /// UTF-8 but not JSON.
    InvalidJson,
}

/// A line from the agent's stdout that was not a JSON message. The session goes on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct AgentBadLine {
    pub agent_id: AgentId,
    pub kind: BadLineKind,
    /// The line's length in bytes.
    pub len: u64,
    /// The start of the line (at most a few hundred characters, lossily decoded) so the person
    /// can see what the agent printed.
    pub preview: String,
    /// The parser's explanation.
    pub error: String,
}

/// One line the agent printed on stderr (lossily decoded, trailing newline removed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct AgentStderr {
    pub agent_id: AgentId,
    pub line: String,
    /// The line's `seq` in the session's event log (see [`AgentMessage::seq`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
}

/// The session's event log could not be written (the disk is full, the file grew past a limit,
/// the disk failed). tetherd stops the agent, since a session must not go on unrecorded, and
/// forwards nothing the agent prints from then on: nothing a host shows is missing from the log.
/// `agent/exited` follows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct AgentLogFailed {
    pub agent_id: AgentId,
    /// The log's path.
    pub path: String,
    /// The system's error, e.g. "No space left on device (os error 28)".
    pub error: String,
}

/// tetherd is stopping on purpose (a stop signal such as SIGTERM): it ends its agents and closes
/// the connections next. A host does not start it again by itself then, as it does after a
/// tetherd that was lost without a word (killed, crashed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct TetherdStopping {
    /// Why, e.g. "SIGTERM".
    pub reason: String,
}

/// The agent process ended and has been reaped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct AgentExited {
    pub agent_id: AgentId,
    /// The exit code, when it exited by itself.
    pub code: Option<i32>,
    /// The signal that ended it, when one did (Unix).
    pub signal: Option<i32>,
    /// True when it ended because the host asked for `agent/kill` (or tetherd shut down).
    pub killed: bool,
    /// The exit's `seq` in the session's event log (see [`AgentMessage::seq`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
}

/// The longest preview of a bad line tetherd sends, in bytes.
pub const BAD_LINE_PREVIEW_BYTES: usize = 200;

/// The start of `line`, cut at a character boundary, for [`AgentBadLine::preview`].
pub fn preview_of(line: &[u8]) -> String {
    let cut = line.len().min(BAD_LINE_PREVIEW_BYTES);
    let lossy = String::from_utf8_lossy(&line[..cut]);
    // A multi-byte character cut in half decodes to U+FFFD at the end; drop it rather than show
    // a replacement character that the agent never printed.
    let trimmed = if cut < line.len() { lossy.trim_end_matches('\u{FFFD}') } else { &lossy };
    trimmed.to_owned()
}

// Snapshots of the workspace, so that edits an agent makes on disk by itself can be reviewed
// after the fact.
//
// Before a prompt turn the host asks for `snapshot/take`; during and after the turn it asks for
// `snapshot/changes` against that snapshot and gets the old and new text of every file that
// changed. tetherd keeps the snapshots in a private git folder (`store`) that is not the
// person's repository: their repository, index and refs are never touched. Files the
// workspace's `.gitignore` files ignore are left out (unless named in `extra`), and so are
// `.git/` and `.tether/`. Only regular files count: a symbolic link or a nested repository is
// treated as absent.

/// The largest file whose text a [`SnapshotText::Text`] carries, in bytes; a larger one is
/// [`SnapshotText::TooLarge`].
pub const SNAPSHOT_TEXT_LIMIT: u64 = 8 * 1024 * 1024;

/// `snapshot/take`: records the workspace as it is now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct SnapshotTakeParams {
    /// The workspace folder, as an absolute path.
    pub root: String,
    /// The private git folder that keeps the snapshots, as an absolute path (the host passes
    /// `<tetherDir>/snapshot.git`). Created on first use, owner-only.
    pub store: String,
    /// Absolute paths of files open in editors: recorded even when `.gitignore` ignores them.
    /// Paths outside `root`, missing files and folders are skipped.
    #[serde(default)]
    pub extra: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct SnapshotTakeResult {
    /// The snapshot's id (a git tree id). Taking a snapshot of an unchanged workspace gives the
    /// same id again.
    pub tree: String,
}

/// `snapshot/changes`: takes a new snapshot and says what changed since `base`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct SnapshotChangesParams {
    pub root: String,
    pub store: String,
    /// A snapshot id from an earlier `snapshot/take` or `snapshot/changes` with the same store.
    pub base: String,
    #[serde(default)]
    pub extra: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct SnapshotChangesResult {
    /// The new snapshot's id, usable as the next `base`.
    pub tree: String,
    /// Every file that was added, deleted or whose content changed, ordered by path. A change of
    /// the executable bit alone is not listed.
    pub changes: Vec<SnapshotChange>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct SnapshotChange {
    /// Relative to `root`, with `/` between the parts.
    pub path: String,
    pub old: SnapshotText,
    pub new: SnapshotText,
}

/// One side of a [`SnapshotChange`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum SnapshotText {
    /// The file did not exist (or was not a regular file).
    Absent,
    /// The file's exact content: valid UTF-8, at most [`SNAPSHOT_TEXT_LIMIT`] bytes.
    Text { text: String },
    /// The file is not valid UTF-8; `size` is in bytes.
    Binary { size: u64 },
    /// The file is larger than [`SNAPSHOT_TEXT_LIMIT`], or the response already carries as much
    /// text as one line to the host may hold; `size` is in bytes.
    TooLarge { size: u64 },
}

// Terminals: commands an agent asked the client to run (ACP `terminal/*`), each in its own PTY
// owned by tetherd.
//
// The host's engine checks an agent's `terminal/create` (its session, its cwd) and asks tetherd
// to run it; tetherd answers the ACP-shaped requests below from the terminal's retained output
// and its exit status, and streams everything the command prints to the host as
// `terminal/data` (for the mirrored VS Code terminal and the chat card), then `terminal/exited`
// once the command has ended and its last output has been read. Both notifications go through
// the same ordered, bounded delivery as agent messages: a host that falls behind slows the
// command down through its PTY, and a host that is away (a window reload) finds what was printed
// meanwhile when it comes back.
//
// A terminal belongs to the agent that asked for it: `agent/kill`, the agent's own exit and
// tetherd's shutdown kill every command still running in its terminals (the whole process
// group, SIGTERM then SIGKILL) and free them.

/// Identifies one terminal for the lifetime of a tetherd. Never reused.
pub type TerminalId = u64;

/// How many bytes of output a terminal retains when `outputByteLimit` is not given.
pub const DEFAULT_TERMINAL_OUTPUT_LIMIT: u64 = 1024 * 1024;

/// The most output bytes any terminal retains, whatever `outputByteLimit` asks for, so that an
/// agent cannot make tetherd hold gigabytes.
pub const MAX_TERMINAL_OUTPUT_LIMIT: u64 = 64 * 1024 * 1024;

/// `terminal/create`: starts a command in a new PTY.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct TerminalCreateParams {
    /// The agent the terminal belongs to; it is killed with it.
    pub agent_id: AgentId,
    /// The program to run (looked up on `PATH` when it has no `/`), or with `shell` a command
    /// line for the shell.
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// Run `command` as a shell command line: `bash -c` when bash is installed, else `sh -c`.
    /// `args` must then be empty.
    #[serde(default)]
    pub shell: bool,
    /// Added to tetherd's own environment. `TERM` is `xterm-256color` unless set here.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// An absolute path (the engine has already checked it is inside the workspace).
    pub cwd: String,
    /// How many bytes of output to retain for `terminal/output` (ACP's `outputByteLimit`);
    /// [`DEFAULT_TERMINAL_OUTPUT_LIMIT`] when absent, at most [`MAX_TERMINAL_OUTPUT_LIMIT`].
    #[serde(default)]
    pub output_byte_limit: Option<u64>,
    /// The PTY's size until the first `terminal/resize`.
    #[serde(default = "default_cols")]
    pub cols: u16,
    #[serde(default = "default_rows")]
    pub rows: u16,
}

fn default_cols() -> u16 {
    120
}

fn default_rows() -> u16 {
    30
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct TerminalCreateResult {
    pub terminal_id: TerminalId,
    /// The command's process id, which is also its process group's id.
    pub pid: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct TerminalRef {
    pub terminal_id: TerminalId,
}

/// How a command ended (ACP's `TerminalExitStatus`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct TerminalExitStatus {
    /// The exit code, when it exited by itself.
    pub exit_code: Option<u32>,
    /// The signal that ended it, by name (`"SIGTERM"`), when one did.
    pub signal: Option<String>,
}

/// The answer to `terminal/output`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct TerminalOutputResult {
    /// The retained output: the newest bytes, at most the limit, cut at a character boundary.
    /// Bytes that are not UTF-8 are replaced by U+FFFD.
    pub output: String,
    /// True once output had to be dropped from the start to stay within the limit.
    pub truncated: bool,
    /// Present once the command has exited (and all its output was read).
    pub exit_status: Option<TerminalExitStatus>,
}

/// Keystrokes (or pasted text) for the command, as the person typed them into the mirrored
/// terminal. Dropped when the command has exited.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct TerminalInput {
    pub terminal_id: TerminalId,
    pub data: String,
}

/// The mirrored terminal's size changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct TerminalResize {
    pub terminal_id: TerminalId,
    pub cols: u16,
    pub rows: u16,
}

/// Output the command printed, in order, decoded from UTF-8 incrementally (a character split
/// between two reads arrives whole; bytes that are not UTF-8 arrive as U+FFFD).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct TerminalData {
    pub terminal_id: TerminalId,
    pub data: String,
}

/// The command ended; every `terminal/data` of it came before this.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct TerminalExited {
    pub terminal_id: TerminalId,
    pub status: TerminalExitStatus,
    /// True when it ended because of `terminal/kill`, `terminal/release`, its agent's end or
    /// tetherd's shutdown.
    pub killed: bool,
    /// How long the command ran, from its start to its exit, in milliseconds: a command that
    /// ended while no window was connected is timed by its exit, not by when a window heard of
    /// it. Absent from a tetherd older than this field.
    #[serde(default)]
    pub elapsed_ms: Option<u64>,
}

// Sessions kept on disk: the history the host lists, reopens, renames and deletes.
//
// Every spawned agent with a `tetherDir` gets a session folder (`<tetherDir>/sessions/<id>/`)
// holding `meta.json` (written by tetherd at spawn: the profile name and the creation time; and
// the title once renamed), `events.jsonl` (the event log, see `session_log`) and
// `audit.jsonl`. The requests below never reach outside `<tetherDir>/sessions/`: a `dir` that
// is not one of its folders is refused.

/// The file in a session folder that says what the session was started with.
pub const SESSION_META_FILE: &str = "meta.json";

/// `meta.json`. It names the profile a session used and nothing about how to run it: a
/// repository can commit a `.tether/` folder, so what runs always comes from the person's own
/// profile of that name. Files written by earlier versions also hold `command`, `args` and `cwd`,
/// which are ignored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionMeta {
    /// The agent profile's name ("Demo", "Claude Code").
    pub agent: String,
    /// UTC, RFC 3339 with milliseconds.
    pub created: String,
    /// Set by `session/rename`; absent until then (the first prompt stands in).
    #[serde(default)]
    pub title: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionListParams {
    /// The workspace's `.tether` folder.
    pub tether_dir: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionListResult {
    /// Newest first (by last activity). Folders without a readable `meta.json` are left out.
    pub sessions: Vec<SessionSummary>,
}

/// One session of the history, as the list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    /// The session folder, absolute.
    pub dir: String,
    pub meta: SessionMeta,
    /// The title to show: `meta.title`, else the start of the first prompt, else "New session".
    pub title: String,
    /// The time of the log's last event (UTC, RFC 3339), `meta.created` for an empty log.
    pub last_activity: String,
    /// How many prompts the log holds.
    pub turns: u32,
    /// The agent's own session id, from the answer to `session/new` (or `session/load`) in the
    /// log: what resuming it needs.
    pub agent_session_id: Option<String>,
    /// The running agent of this session, when tetherd still has it (a window reload).
    pub live_agent: Option<AgentId>,
    /// How many times the person restored the code to a checkpoint in it (undoing one counts
    /// too), from the log's records.
    #[serde(default)]
    pub restores: u32,
    /// It went on with a conversation restored from a checkpoint of another session.
    #[serde(default)]
    pub from_checkpoint: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionDirRef {
    pub tether_dir: String,
    pub dir: String,
}

/// `session/read`: a piece of a session's `events.jsonl`, ending at a line boundary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionReadParams {
    pub tether_dir: String,
    pub dir: String,
    /// Byte offset in the file to read from (0, then each answer's `next`).
    #[serde(default)]
    pub offset: u64,
}

/// The most bytes of log one `session/read` answer carries. The host folds each answer in one
/// call into the engine, which holds the extension host's thread meanwhile: during a window
/// reload, when the engine's code is not yet optimized, a 1 MiB piece took 0.7 s, and the chat
/// view could not be created until it was done. A quarter of that leaves the thread free between
/// pieces for what else the window asks of it.
pub const SESSION_READ_CHUNK_BYTES: u64 = 256 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionReadResult {
    /// Whole lines of the log from `offset` (at most [`SESSION_READ_CHUNK_BYTES`], unless a single
    /// line is longer: then that one line). Invalid UTF-8 is replaced.
    pub text: String,
    /// Where the next read starts.
    pub next: u64,
    /// True when `text` reaches the end of the file as it is now (a cut last line included).
    pub eof: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionRenameParams {
    pub tether_dir: String,
    pub dir: String,
    pub title: String,
}
