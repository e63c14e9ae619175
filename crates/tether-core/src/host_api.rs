//! The types the host exchanges with the engine: its configuration, the VS Code commands it
//! forwards, and the actions the engine asks it to carry out.
//!
//! The host is a pump: it feeds the engine socket bytes, webview messages, commands and the time,
//! then carries out every [`HostAction`] it polls, and sets a timer for
//! `HostEngine::poll_timeout`. Nothing in these types asks the host to decide anything.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
#[cfg(feature = "typescript")]
use ts_rs::TS;

use crate::intent::Intent;
use crate::permissions::Mode;
use crate::review::{ChangeId, ReviewDocument, ReviewHunk, TextEdit};
use crate::sidecar::{EditorAnswer, EditorQuery};
use crate::webview::{HostToWebview, SessionKey};

/// An agent the person can run: a command speaking ACP on its stdio, or the Claude CLI itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct AgentProfile {
    pub name: String,
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Working directory of the agent process; the workspace folder when absent.
    #[serde(default)]
    pub cwd: Option<String>,
    /// What the command speaks on its stdio.
    #[serde(default)]
    pub protocol: AgentProtocol,
}

/// What an agent's command speaks on its stdio.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "kebab-case")]
pub enum AgentProtocol {
    /// The Agent Client Protocol.
    #[default]
    Acp,
    /// The `claude` CLI's stream-json and control protocol (see `claude_cli`): Tether adds the
    /// arguments, and runs one CLI per turn or keeps one alive (`tether.claudeCode.processMode`).
    ClaudeCli,
}

/// The `tether.claudeCode.*` settings: how the Claude CLI is driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct ClaudeCliSettings {
    /// Keep one CLI across turns instead of one per turn (`tether.claudeCode.processMode`).
    #[serde(default)]
    pub persistent: bool,
    /// How long a kept CLI may sit idle before it is ended (`tether.claudeCode.idleTimeoutMinutes`).
    #[serde(default = "default_idle_minutes")]
    pub idle_timeout_minutes: u32,
}

fn default_idle_minutes() -> u32 {
    30
}

impl Default for ClaudeCliSettings {
    fn default() -> Self {
        ClaudeCliSettings { persistent: false, idle_timeout_minutes: default_idle_minutes() }
    }
}

impl ClaudeCliSettings {
    pub fn process_mode(&self) -> crate::claude_cli::ProcessMode {
        if self.persistent {
            let idle_timeout_ms = u64::from(self.idle_timeout_minutes.max(1)) * 60_000;
            crate::claude_cli::ProcessMode::Persistent { idle_timeout_ms }
        } else {
            crate::claude_cli::ProcessMode::Oneshot
        }
    }
}

/// The name of the built-in profile that runs the scripted test agent's demo scenario.
pub const DEMO_PROFILE: &str = "Demo";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct EngineConfig {
    /// The token the host gave tetherd at spawn; presented in `hello`.
    pub token: String,
    /// Sent to the agent as `clientInfo`.
    pub client_name: String,
    pub client_version: String,
    /// The workspace's first folder: the cwd of sessions and agent processes.
    pub workspace_root: String,
    /// Every folder of the workspace (a multi-root workspace has several), absolute, in VS
    /// Code's order: each is inside the workspace (for the permissions, the chat's names of files
    /// and the `@` list), and the agent's MCP tools may read them. Empty means `workspace_root`
    /// alone.
    #[serde(default)]
    pub workspace_folders: Vec<String>,
    /// The workspace's `.tether` folder, where sessions and their audit logs are kept; absent
    /// when no folder is open (nothing is written then).
    #[serde(default)]
    pub tether_dir: Option<String>,
    /// Path of the scripted test agent binary shipped with the extension, for the "Demo" profile.
    pub demo_agent_command: Option<String>,
    /// The `tether.agents` setting, as the person wrote it (anything: the engine reads it, see
    /// `profiles.rs`); `null` when it is not set.
    #[serde(default)]
    #[cfg_attr(feature = "typescript", ts(type = "unknown"))]
    pub agents: serde_json::Value,
    /// The agents built into the extension, where the host found them installed; a
    /// `tether.agents` profile of the same name replaces one.
    #[serde(default)]
    pub builtin_profiles: Vec<AgentProfile>,
    /// The built-in agents (by name) the host did not find on this machine: choosing one offers
    /// to install it, and the agent picker says so.
    #[serde(default)]
    pub missing_builtins: Vec<String>,
    /// The `tether.defaultAgent` setting; the first profile when absent or unknown.
    #[serde(default)]
    pub default_profile: Option<String>,
    #[serde(default)]
    pub permissions: PermissionSettings,
    /// The `tether.followAgent` setting: open each place the agent's tool calls point at.
    #[serde(default)]
    pub follow_agent: bool,
    /// VS Code's workspace trust says the person trusts this workspace. Until they do, nothing
    /// is started (no tetherd, no agent): a repository someone else wrote must not run anything
    /// the person did not choose. Absent means untrusted.
    #[serde(default)]
    pub workspace_trusted: bool,
    #[serde(default)]
    pub claude_cli: ClaudeCliSettings,
    /// The `tether.mcpServers` setting (the person's user value only), as written: the engine
    /// reads it (see `mcp_settings.rs`); `null` when it is not set.
    #[serde(default)]
    #[cfg_attr(feature = "typescript", ts(type = "unknown"))]
    pub mcp_servers: serde_json::Value,
}

/// The `tether.permissions.*` settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct PermissionSettings {
    /// The mode the window starts in (`tether.permissions.defaultMode`).
    #[serde(default)]
    pub default_mode: Mode,
    /// The workspace's rules (`tether.permissions.rules`), as written: the engine checks each and
    /// reports the ones it cannot use without dropping them.
    #[serde(default)]
    #[cfg_attr(feature = "typescript", ts(type = "unknown[]"))]
    pub rules: Vec<serde_json::Value>,
}

/// A VS Code command or event the host forwards: something the person asked for ([`Intent`],
/// the same type the chat view's buttons use), or an event of VS Code's ([`HostEvent`]).
///
/// On the wire both are objects tagged by `type`, as one flat union.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(untagged)]
pub enum HostCommand {
    Event(HostEvent),
    Intent(Intent),
}

crate::intent::surface_or_intent!(HostCommand::Event(HostEvent));

/// What happened in VS Code that the engine must know: the settings, editors, files, terminals
/// and answers to the engine's own actions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum HostEvent {
    /// The settings changed (see [`EngineConfig`] for each).
    Configure {
        #[cfg_attr(feature = "typescript", ts(type = "unknown"))]
        agents: serde_json::Value,
        builtin_profiles: Vec<AgentProfile>,
        /// See [`EngineConfig::missing_builtins`].
        #[serde(default)]
        missing_builtins: Vec<String>,
        default_profile: Option<String>,
        permissions: PermissionSettings,
        /// New sessions run the Claude CLI this way; a running one goes on as it started.
        #[serde(default)]
        claude_cli: ClaudeCliSettings,
        /// `tether.mcpServers`, for sessions started from now on.
        #[serde(default)]
        #[cfg_attr(feature = "typescript", ts(type = "unknown"))]
        mcp_servers: serde_json::Value,
    },
    /// The secrets the person stored for `tether.mcpServers` ("Tether: Set MCP Server Secret"),
    /// by name: what `${secret:<name>}` in the setting stands for. Kept in memory only.
    McpSecrets { values: BTreeMap<String, String> },
    /// The files open in editors changed: their absolute paths (`file:` documents only). They
    /// are included in the snapshot taken before each turn.
    OpenDocuments { paths: Vec<String> },
    /// A file under review changed in an editor or on disk (see [`HostAction::ShowReview`]).
    FileChanged { path: String },
    /// The person saved a `file:` document (its absolute path): during a turn, a change found in
    /// that file is theirs as much as the agent's, and is not offered to revert.
    DocumentSaved { path: String },
    /// The outcome of an [`HostAction::EditFile`].
    EditDone { edit: u64, outcome: EditOutcome },
    /// The person typed (or pasted) into a mirrored terminal.
    TerminalInput { terminal: String, data: String },
    /// A mirrored terminal's size, when it opens and whenever it changes.
    TerminalResize { terminal: String, cols: u16, rows: u16 },
    /// The person closed a mirrored terminal (its Pseudoterminal's `close`).
    TerminalClosed { terminal: String },
    /// Variables the host keeps in SecretStorage for the agent profile `profile`: added to that
    /// agent's environment whenever it starts. The engine keeps them in memory only: never
    /// logged, never written to the settings or a session's log.
    AgentSecrets { profile: String, env: BTreeMap<String, String> },
    /// The answer to [`HostAction::ListWorkspaceFiles`]: the workspace's files (absolute paths,
    /// without what `files.exclude` and `search.exclude` hide) and the selection of the editor
    /// the person used last, if it has one.
    WorkspaceFiles { files: Vec<String>, selection: Option<EditorSelection> },
    /// The person trusted the workspace (VS Code's `onDidGrantWorkspaceTrust`): tetherd and the
    /// session start now, without a reload.
    WorkspaceTrusted,
    /// The workspace's folders changed while the window is open (VS Code's
    /// `onDidChangeWorkspaceFolders`): every folder, absolute, in VS Code's order, as
    /// [`EngineConfig::workspace_folders`] names them. VS Code restarts the extensions when the
    /// first folder changes, so only the others change here: from now on they are inside for
    /// every open session, and each turn's snapshot covers them.
    WorkspaceFolders { folders: Vec<String> },
    /// The answer to [`HostAction::ResolvePaths`]: where each root and each path lead, in the
    /// order asked.
    PathsResolved { resolve: u64, roots: Vec<ResolvedPath>, paths: Vec<ResolvedPath> },
    /// The answer to [`HostAction::AskEditor`]: `answer`, or `error` saying why there is none.
    EditorAnswered {
        question: u64,
        #[serde(default)]
        answer: Option<EditorAnswer>,
        #[serde(default)]
        error: Option<String>,
    },
}

/// Where a path leads through symbolic links (see [`HostAction::ResolvePaths`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum ResolvedPath {
    /// Absolute, every link followed (the part that does not exist yet appended as asked).
    Found { path: String },
    /// It could not be resolved (a loop of links, a folder that cannot be read): the engine
    /// treats the path as outside the workspace, so the person is asked.
    Failed { message: String },
}

/// A non-empty selection in an editor. Lines are 1-based and inclusive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct EditorSelection {
    /// The document's absolute path.
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub text: String,
}

/// A way to sign in that the agent offers (`authMethods` in its `initialize` answer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct AuthMethodView {
    /// What `authenticate` names it by.
    pub id: String,
    pub name: String,
    pub description: Option<String>,
    pub kind: AuthMethodKind,
}

/// What signing in with a method takes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum AuthMethodKind {
    /// Keys in the agent's environment (an API key): ask for each variable, keep the answers in
    /// SecretStorage and send them with `authenticate`.
    EnvVar { vars: Vec<AuthVariable> },
    /// A login in a terminal: run `command` with `args`, `env` added to the environment; answer
    /// `authenticate` when it exits with code 0.
    Terminal { command: String, args: Vec<String>, env: BTreeMap<String, String> },
    /// The agent signs in by itself: answer `authenticate` at once.
    Agent,
}

/// One variable of an [`AuthMethodKind::EnvVar`] method.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct AuthVariable {
    pub name: String,
    /// What to call it when asking, when the agent said.
    pub label: Option<String>,
    /// It may be left empty.
    pub optional: bool,
}

/// What a session is exported as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub enum ExportFormat {
    /// The conversation as a readable document.
    Markdown,
    /// The session's event log as it is (`events.jsonl`).
    Jsonl,
}

/// One session of the workspace's history, as the history picker shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct HistoryItem {
    /// What the `openSession`, `renameSession`, `deleteSession` and `exportSession` commands
    /// name it by.
    pub id: String,
    pub title: String,
    /// The agent profile it ran with.
    pub agent: String,
    /// When something last happened in it (UTC, RFC 3339), when known.
    pub last_activity: Option<String>,
    /// How many prompts it holds, when known.
    pub turns: Option<u32>,
    pub source: HistorySource,
    /// It is the session the chat shows now.
    pub current: bool,
    /// Its agent is still running.
    pub live: bool,
    /// How many times the code was restored to a checkpoint in it.
    #[serde(default)]
    pub restores: u32,
    /// It went on with a conversation restored from a checkpoint of another session.
    #[serde(default)]
    pub from_checkpoint: bool,
}

/// Where a session of the history is kept, which says what can be done with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub enum HistorySource {
    /// Tether's own record (`.tether/sessions/`): it can be opened, renamed, deleted, exported.
    Tether,
    /// Listed only by the agent (`session/list`): it can be opened (the agent replays it).
    Agent,
}

/// How an [`HostAction::EditFile`] went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum EditOutcome {
    /// The edit is in the file; `saved` when it is on disk too (a document with unsaved edits of
    /// the person's is not saved by Tether).
    Applied {
        saved: bool,
    },
    /// The file did not hold `expected`: nothing was changed.
    Conflict,
    Failed {
        message: String,
    },
}

/// The host's answer to an [`HostAction::ReadFile`]; the bytes travel beside it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct FileReadReply {
    pub read: u64,
    pub outcome: FileReadOutcome,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum FileReadOutcome {
    /// The bytes from `offset` (UTF-8); `eof` when the file ends with them. `fromEditor` when
    /// they come from an open document (unsaved edits included) rather than the disk.
    Data {
        eof: bool,
        from_editor: bool,
    },
    NotFound,
    Failed {
        message: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub enum LogLevel {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
}

/// Something the engine asks the host to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum HostAction {
    /// Start tetherd (the configured binary, with a fresh socket and the engine's token) and
    /// connect to it; report `handleSidecarConnected`, or `handleSidecarClosed` if it fails.
    /// Asked once at start, and again when a session is wanted after tetherd was lost.
    StartSidecar,
    /// Write these bytes (whole NDJSON lines) to the tetherd socket.
    SidecarWrite { data: String },
    /// Post this message to the chat webview (dropped by the host when no webview is open: the
    /// webview asks for a snapshot when it appears).
    PostWebview { message: Box<HostToWebview> },
    /// Show a VS Code notification.
    ShowMessage { level: LogLevel, text: String },
    /// Append to the Tether log channel.
    Log { level: LogLevel, text: String },
    /// The number shown on the Tether view's badge (permission requests waiting); 0 hides it.
    SetBadge { count: u32 },
    /// Write `tether.permissions.rules` in the workspace settings (the person saved or removed a
    /// workspace rule). The host reports the new settings back with `configure` as usual.
    SaveWorkspaceRules {
        #[cfg_attr(feature = "typescript", ts(type = "unknown[]"))]
        rules: Vec<serde_json::Value>,
    },
    /// Open this file in an editor, with the cursor at the start of `line` (1-based) when given.
    OpenFile { path: String, line: Option<u32> },
    /// Read up to `maxBytes` bytes of `path` from byte `offset` of its UTF-8 text: from the open
    /// document when the file is open in an editor (unsaved edits included), else from disk.
    /// Answer with `handleFileRead`.
    ReadFile { read: u64, path: String, offset: u64, max_bytes: u64 },
    /// Change a file through VS Code's workspace edit API, if and only if it holds `expected`
    /// now (`None`: the file must not exist). `result` is what it must hold after (`None`:
    /// delete it); `edits` turn `expected` into `result` (UTF-16 offsets). Save it afterwards
    /// unless it had unsaved edits before. Answer with the `editDone` command.
    EditFile { edit: u64, path: String, expected: Option<String>, result: Option<String>, edits: Vec<TextEdit> },
    /// Register (or replace) a change for the diff editor: its texts for the content provider,
    /// its hunks for the CodeLens. `open` opens the diff editor on it now. Report edits and saves
    /// of `path` with the `fileChanged` command while it is registered.
    ShowReview { document: ReviewDocument, open: bool },
    /// The decisions on a registered change moved on: redraw its CodeLens.
    UpdateReview { change: ChangeId, hunks: Vec<ReviewHunk>, settled: bool },
    /// Open registered changes: one in the diff editor, several in a multi-file diff view.
    OpenReviews { changes: Vec<ChangeId>, title: String },
    /// Forget the registered changes of session `session` (`ReviewDocument::session`): it was
    /// closed.
    ClearReviews { session: u64 },
    /// Show the agent's terminal `terminal` as a VS Code terminal named `name`: create it (a
    /// Pseudoterminal) when it is not open, writing `replay` into it first (the output so far, when
    /// it is reopened), and bring it to the front without taking focus when `reveal`. Report its
    /// size with `terminalResize`, keystrokes with `terminalInput` (only when `interactive`; a
    /// read-only terminal ignores typing) and its closing with `terminalClosed`.
    OpenTerminal { terminal: String, name: String, interactive: bool, replay: String, reveal: bool },
    /// Write `data` (text with terminal escapes) to the open mirrored terminal `terminal`; dropped
    /// when it is not open. At most one per terminal per frame.
    TerminalWrite { terminal: String, data: String },
    /// The person closed the mirrored terminal of a command that is still running: ask whether to
    /// stop it (a modal with a "Stop" button); answer "Stop" with the `terminal` command and
    /// `stop` intent, anything else with nothing.
    ConfirmStopTerminal { terminal: String, command: String },
    /// The person closed the tab of a session at work (`title`, its tab's words): ask whether to
    /// stop its agent and close it (a modal with a "Stop and Close" button); answer that with the
    /// `closeSession` intent, `confirmed`, anything else with nothing.
    ConfirmCloseSession { key: SessionKey, title: String },
    /// Close the mirrored terminal `terminal` (a finished command's, making room for newer ones):
    /// dispose it without reporting `terminalClosed`. Its card's "Open in terminal" brings it back.
    CloseTerminal { terminal: String },
    /// Show the history picker with these sessions, newest first (or refresh it when it is open).
    /// Picking one answers `openSession`; its buttons answer `renameSession` (after asking for
    /// the title), `deleteSession` (after a modal confirmation) and `exportSession`. Only
    /// `Tether` sessions can be renamed, deleted and exported.
    ShowHistory { items: Vec<HistoryItem> },
    /// Offer to save `content` as a new file (a save dialog proposing `suggestedName` in the
    /// workspace folder), then open it.
    SaveExport { suggested_name: String, content: String },
    /// Offer to save a copy of the file `source` (a save dialog proposing `suggestedName`).
    ExportFile { source: String, suggested_name: String },
    /// The agent of profile `agent` needs the person to sign in: offer `methods` (a quick pick)
    /// and answer the choice with the `authenticate` command. Dismissing the pick leaves the
    /// session waiting; the status says "Sign in needed".
    AskAuthentication { agent: String, methods: Vec<AuthMethodView> },
    /// Follow the agent: show `path` (a workspace file) at `line` (1-based) in an editor, as a
    /// preview that keeps the focus where it is.
    RevealLocation { path: String, line: Option<u32> },
    /// List the workspace's files for the composer's `@` list; answer with `workspaceFiles`.
    ListWorkspaceFiles,
    /// Say where each of `roots` (the workspace's folders) and `paths` (absolute) lead through
    /// symbolic links: the longest part of the path that exists resolved with `realpath`, the
    /// rest appended as it is (a file about to be written need not exist). Answer with the
    /// `pathsResolved` command.
    ResolvePaths { resolve: u64, roots: Vec<String>, paths: Vec<String> },
    /// Open VS Code's workspace trust editor (the `workbench.trust.manage` command), where the
    /// person can trust the workspace; a grant comes back as `workspaceTrusted`.
    ManageWorkspaceTrust,
    /// Write `text` to the clipboard (the person's Copy in the chat).
    WriteClipboard { text: String },
    /// Replace the active text editor's selections with `text` (a code block's "Insert at
    /// cursor"); say so when no text editor is open.
    InsertAtCursor { text: String },
    /// Open an untitled editor holding `content`, in `language` (a VS Code language id) when
    /// given and known to VS Code, else as plain text.
    OpenUntitled { content: String, language: Option<String> },
    /// Open VS Code's settings editor filtered to `query` (a setting's id).
    OpenSettings { query: String },
    /// Show Tether's log (its output channel), without taking the focus from where it is.
    ShowLog,
    /// An agent's MCP tool asks what only VS Code knows (see `sidecar::EditorQuery`): answer
    /// with `editorAnswered`, with at most `maxResults` + 1 items in a list (the extra one says
    /// the list goes on). Paths are absolute.
    AskEditor { question: u64, query: EditorQuery, max_results: u32 },
}
