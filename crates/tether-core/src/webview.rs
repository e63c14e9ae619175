//! The wire between the host and the chat webview (`postMessage`).
//!
//! Data flows one way per direction: the host sends state (a snapshot on `ready`, then patches),
//! the webview sends intents. The webview never echoes state back, so a change cannot loop
//! UI → host → UI (see ARCHITECTURE.md, "webview/").
//!
//! The host forwards both directions without looking inside: the engine in tether-core decides
//! what an intent means and what the webview should show.

use serde::{Deserialize, Serialize};
#[cfg(feature = "typescript")]
use ts_rs::TS;

use crate::intent::Intent;
use crate::permissions::{Mode, RuleView};
use crate::review::{ChangeId, ChangeOrigin, ChangePhase, FileChangeKind};
use crate::thread::{Entry, PlanEntryView, TerminalView, ThreadPatch, TurnState};

/// What the chat header shows about the session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionView {
    /// The agent profile in use ("Demo", "Claude Code", ...).
    pub agent: String,
    /// The agent's own name and version from `initialize`, once known.
    pub agent_info: Option<String>,
    pub status: SessionStatus,
    /// Every profile the person can pick from, in settings order, with what the window knows of
    /// each (the header's agent picker).
    pub profiles: Vec<ProfileView>,
    pub permissions: PermissionsView,
    /// The changes bar: the files changed in the current (or last) turn, and any earlier change
    /// still waiting for a decision.
    pub changes: Vec<ChangedFileView>,
    /// The agent has exited (or could not be reached) and the session can be continued: the
    /// header offers Restart, which starts the agent again and resumes its session.
    pub can_restart: bool,
    /// The session's agent is a built-in one the host did not find on this machine, and its
    /// start failed for want of it: the header offers "Install <agent>…" in place of Restart
    /// (which would only fail again). It picks the agent again, which the host answers with its
    /// install offer, as for a pick in the agent picker.
    pub can_install: bool,
    /// The agent process runs and may be hung: it is still starting, or it was asked to cancel
    /// the turn and has not ended it. The header offers Stop (Stop agent during a turn), which
    /// kills the process (`StopAgent`).
    pub can_stop: bool,
    /// The agent waits for the person to sign in and they dismissed the choice (or a login did
    /// not finish): the header offers "Sign in", which asks again (`SignIn`).
    pub can_sign_in: bool,
    /// "Follow the agent" is on: each place a tool call points at opens in an editor.
    pub follow_agent: bool,
    /// What the agent offers beside the thread: the session's title, slash commands, config
    /// options and context usage.
    pub controls: SessionControlsView,
    /// Every session open in the window, in the order they were opened: the tab strip. The
    /// rest of this header and the thread are the shown one's.
    pub tabs: Vec<SessionTabView>,
    /// The key of the session shown (0 before any session exists).
    pub shown: SessionKey,
}

/// An agent profile as the agent picker lists it: whether it can run here, how it stands in
/// this window's sessions, and what it said it can do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct ProfileView {
    pub name: String,
    pub state: ProfileState,
    /// The state in words, then, once the agent has started in this window, its own name and
    /// version and what it can do: "Running · Claude Code 1.2 · images, resumes sessions".
    pub description: String,
}

/// Where an agent profile stands, for the agent picker. With several sessions of one agent open,
/// the one that most needs the person counts: sign-in, then a failure, then a start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub enum ProfileState {
    /// The host did not find its program on this machine; choosing it offers to install it.
    NotInstalled,
    /// No open session runs it.
    NotRunning,
    Starting,
    /// An open session runs it and it is ready (or working).
    Running,
    /// It waits for the person to sign in.
    SignIn,
    /// It could not start, or stopped working, in an open session.
    Failed,
}

/// A session open in the window, for as long as it is open: not the agent's session id nor
/// tetherd's session folder (both come later, and a restart changes the agent's).
pub type SessionKey = u64;

/// One session's tab: what it is and whether it needs the person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionTabView {
    pub key: SessionKey,
    /// The session's title (the agent's, else the first prompt's start), else the agent's name.
    pub label: String,
    /// The agent profile it runs.
    pub agent: String,
    pub activity: TabActivity,
}

/// What a session is doing, as its tab marks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub enum TabActivity {
    /// Ready for a prompt (or being read from the history).
    Idle,
    /// Starting, or a turn is running.
    Working,
    /// A permission question or a change waits for the person.
    Waiting,
    /// The turn is over, and changes the agent made in the files have hunks the person has not
    /// kept or reverted yet. Nothing waits on them (the agent may go on), but they are there.
    Review,
    /// The agent exited or could not start.
    Stopped,
}

/// The session state an agent advertises with `session/update` (and in its `session/new`,
/// `session/load` or `session/resume` answer), as the header and the composer show it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionControlsView {
    /// The session's title, from `session_info_update`.
    pub title: Option<String>,
    /// The slash commands the composer completes, from `available_commands_update`.
    pub commands: Vec<SlashCommandView>,
    /// Every config option, in the agent's order (its mode option included: Tether's mode picker
    /// stays the way to switch it, and this one follows it).
    pub config_options: Vec<ConfigOptionView>,
    /// How full the agent's context window is, from `usage_update`.
    pub usage: Option<UsageView>,
    /// What a prompt may hold besides text and links, from the agent's `promptCapabilities`.
    pub prompt: PromptCapabilitiesView,
    /// The MCP servers the session offered its agent, and those it left out (the header's
    /// "MCP" section).
    pub mcp_servers: Vec<McpServerView>,
}

/// One MCP server of the session, as the header lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct McpServerView {
    pub name: String,
    /// `stdio`, `http` or `sse`.
    pub transport: String,
    /// Tether's own server (the editor's tools), not one of the person's.
    pub built_in: bool,
    /// Why the agent did not get it, when it did not.
    pub left_out: Option<String>,
    /// How the agent says the server is doing (`connected`, `failed`, `pending`, `needs-auth`),
    /// when it says (the Claude CLI does; ACP has no word for it yet).
    pub state: Option<String>,
    /// The host of a server that is not on this machine (`mcp_settings::remote_host`): what the
    /// agent sends it leaves the computer.
    pub remote: Option<String>,
}

/// The agent's `promptCapabilities`: what the composer may attach. Text and resource links are
/// always allowed (ACP's baseline).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct PromptCapabilitiesView {
    /// Images may be pasted or dropped into the composer.
    pub image: bool,
    /// Mentioned files and selections are sent with their text (embedded resources) rather than
    /// as links the agent reads itself.
    pub embedded_context: bool,
}

/// Something the person attached to a prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum PromptAttachment {
    /// A file mentioned with `@`, by its absolute path.
    File { path: String },
    /// A folder mentioned with `@`, by its absolute path: sent as a link, for the agent to list
    /// and read what it needs.
    Folder { path: String },
    /// Lines of a file mentioned with `@` (or "Tether: Mention Selection"), with their text as it
    /// was when mentioned. Lines are 1-based and inclusive.
    Selection { path: String, start_line: u32, end_line: u32, text: String },
    /// An image pasted or dropped into the composer: its data in base64.
    Image { mime_type: String, data: String },
}

/// One entry of the composer's `@` list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct MentionSuggestion {
    /// What picking it writes after the `@` in the text, without spaces (e.g. `src/main.rs`,
    /// `src/main.rs#L3-9`).
    pub label: String,
    /// A second line for the list (e.g. "Selection, lines 3-9").
    pub detail: Option<String>,
    pub attachment: PromptAttachment,
}

/// A slash command the agent offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct SlashCommandView {
    /// The name, without the leading "/".
    pub name: String,
    pub description: String,
    /// What to type after the name, when the command takes input.
    pub input_hint: Option<String>,
}

/// A config option the agent offers (model, reasoning effort, mode, ...).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct ConfigOptionView {
    pub id: String,
    pub name: String,
    pub description: Option<String>,
    /// ACP's category as on the wire (`mode`, `model`, `model_config`, `thought_level`, or the
    /// agent's own), for ordering and icons.
    pub category: Option<String>,
    pub kind: ConfigOptionKind,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum ConfigOptionKind {
    /// One value of a list.
    Select { current: String, choices: Vec<ConfigChoiceView> },
    /// On or off.
    Boolean { current: bool },
}

/// One value of a select config option.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct ConfigChoiceView {
    pub value: String,
    pub name: String,
    pub description: Option<String>,
    /// The heading the agent groups this value under, when it groups them.
    pub group: Option<String>,
}

/// A value the person picks for a config option: a select's value id, or a boolean.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(untagged)]
pub enum ConfigValue {
    Boolean(bool),
    Choice(String),
}

/// The context meter: tokens in the agent's context window, and what the session cost so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct UsageView {
    pub used: u64,
    pub size: u64,
    pub cost: Option<CostView>,
    /// How long the last turn took, when the agent said (`_meta.turnDurationMs`; the Claude
    /// CLI's `result` says it).
    #[serde(default)]
    pub last_turn_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct CostView {
    pub amount: f64,
    /// ISO 4217 currency code ("USD").
    pub currency: String,
}

/// One row of the changes bar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct ChangedFileView {
    pub change: ChangeId,
    pub label: String,
    /// Who made it: a restore's change is told apart from the agent's to the same file.
    pub origin: ChangeOrigin,
    pub kind: FileChangeKind,
    pub phase: ChangePhase,
    pub added: u32,
    pub removed: u32,
    /// Hunks (or the whole change, when it has none) still waiting for a decision.
    pub pending: u32,
}

/// The person's decision on a file change, from the chat's card, the changes bar, or the diff
/// editor's CodeLens and title buttons.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum ReviewIntent {
    /// Keep or reject (revert, once on disk) one hunk.
    Hunk { change: ChangeId, hunk: u32, keep: bool },
    /// Keep or reject every hunk still pending.
    All { change: ChangeId, keep: bool },
    /// Open the change in VS Code's diff editor.
    Open { change: ChangeId },
    /// Open every change of the changes bar in one multi-file diff view.
    OpenAll,
    /// After a conflict: show the change again, against the file as it is now.
    Retry { change: ChangeId },
}

impl ReviewIntent {
    /// The change it decides on, when it is about one.
    pub fn change(&self) -> Option<ChangeId> {
        match self {
            ReviewIntent::Hunk { change, .. }
            | ReviewIntent::All { change, .. }
            | ReviewIntent::Open { change }
            | ReviewIntent::Retry { change } => Some(*change),
            ReviewIntent::OpenAll => None,
        }
    }
}

/// The person's wish about an agent's terminal, from its card in the chat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum TerminalIntent {
    /// Kill the command (SIGTERM to its process group, SIGKILL after a grace period). Only for
    /// commands Tether runs; an agent's own commands are stopped by cancelling the turn.
    Stop { terminal: String },
    /// Show the command's VS Code terminal, reopening it with the output so far if it was closed.
    Open { terminal: String },
}

impl TerminalIntent {
    /// The terminal it is about (the client's id for it).
    pub fn terminal(&self) -> &str {
        match self {
            TerminalIntent::Stop { terminal } | TerminalIntent::Open { terminal } => terminal,
        }
    }
}

/// The mode picker and the rules panel.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct PermissionsView {
    pub mode: Mode,
    /// The agent's own current mode, when it has modes (Tether's mode is sent to it when one
    /// matches).
    pub agent_mode: Option<String>,
    /// The agent's own modes, as it listed them, for the header's agent mode picker (empty when
    /// the agent has no modes).
    pub agent_modes: Vec<AgentModeView>,
    /// The id of the agent's current mode.
    pub agent_mode_id: Option<String>,
    /// Every rule in force: the session's first, then the workspace's.
    pub rules: Vec<RuleView>,
    /// Rules in the workspace settings that could not be used, and why.
    pub rule_problems: Vec<String>,
    /// The session's audit log, once tetherd created it.
    pub audit_log: Option<String>,
}

/// One of the agent's own modes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct AgentModeView {
    pub id: String,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum SessionStatus {
    /// Waiting for tetherd, the agent process, `initialize` or `session/new`. `elapsed_ms` is how
    /// long this step has taken as of this post; the webview counts on from there with its own
    /// clock, so that a slow agent shows it is still being waited for.
    Starting {
        step: String,
        elapsed_ms: u64,
        /// The last line the starting agent wrote to its stderr, as plain text: a start that
        /// takes long is often waiting for something the agent says (a sign-in, a download, a
        /// network it cannot reach), and the chat shows it once the step is slow.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "typescript", ts(optional))]
        agent_said: Option<String>,
    },
    /// The agent session exists: prompts can be sent.
    Ready,
    /// The agent could not be started or the session could not be created; a new session retries.
    Failed { message: String },
    /// The agent process ended; a new session starts it again.
    Exited { message: String },
    /// The workspace is not trusted, so nothing was started; `message` says why. The chat
    /// offers "Manage Workspace Trust" (`manageTrust`), and trusting the workspace starts the
    /// session.
    Untrusted { message: String },
}

impl SessionStatus {
    /// The step `step` has just begun.
    pub fn starting(step: &str) -> Self {
        SessionStatus::Starting { step: step.to_owned(), elapsed_ms: 0, agent_said: None }
    }
}

/// Everything the webview needs to draw the chat from nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct ViewSnapshot {
    pub session: SessionView,
    /// How many entries come before `entries` and are not in this snapshot: a long thread's
    /// snapshot carries its last entries, the ones in sight, and the earlier ones follow in
    /// `earlierEntries` messages, from the most recent back, a batch a frame.
    pub earlier: u32,
    pub entries: Vec<Entry>,
    pub plan: Vec<PlanEntryView>,
    pub turn: TurnState,
    /// The terminals that tool calls show, in the order they were created.
    pub terminals: Vec<TerminalView>,
}

/// host → webview.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum HostToWebview {
    /// Replace everything (sent in answer to `ready`, and when a new session starts).
    Snapshot { snapshot: ViewSnapshot },
    /// Entries left out of the last snapshot (see [`ViewSnapshot::earlier`]): `entries` are the
    /// thread's entries from index `from` on.
    EarlierEntries { from: u32, entries: Vec<Entry> },
    /// What changed since the last post, in order. At most one of these per animation frame.
    Patch {
        /// Present when the session header changed.
        session: Option<SessionView>,
        thread: Vec<ThreadPatch>,
    },
    /// The `@` list for what the person typed after the `@`, best match first.
    Mentions { query: String, items: Vec<MentionSuggestion> },
    /// Add this mention to the composer's text ("Tether: Mention Selection").
    AddMention { mention: MentionSuggestion },
    /// A prompt the person sent did not go (`reason`, a sentence without its full stop): its text
    /// goes back into the composer, so that it can be sent again.
    PromptReturned { text: String, reason: String },
}

/// webview → host: what the chat view itself needs ([`ViewEvent`]), or something the person asked
/// for ([`Intent`], the same type the command palette's commands use).
///
/// On the wire both are objects tagged by `type`, as one flat union: the webview posts
/// `{"type": "prompt", ...}` and `{"type": "ready"}` alike.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(untagged)]
pub enum WebviewToHost {
    View(ViewEvent),
    Intent(Intent),
}

/// What the chat view tells the host about itself, which no other surface sends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum ViewEvent {
    /// The webview (re)loaded and wants a snapshot.
    Ready,
    /// The person is typing a mention: `query` is what follows the `@`. `fresh` when the `@` was
    /// just typed: the engine asks the host for the workspace's files and selection again.
    FindMentions { query: String, fresh: bool },
}

crate::intent::surface_or_intent!(WebviewToHost::View(ViewEvent));
