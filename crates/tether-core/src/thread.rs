//! The thread model: what a session's conversation is, as the person sees it.
//!
//! The engine folds ACP `session/update` notifications, the person's prompts and permission
//! requests into a [`Thread`]: an ordered list of [`Entry`]s (user message, agent message, tool
//! call) plus session state beside them (plan, turn). Every change is also recorded as a
//! [`ThreadPatch`] keyed by entry index, so the webview receives only what changed and never the
//! whole list again. The same types are what the webview renders (TypeScript is generated from
//! them), so a field added here reaches the UI with the compiler's help.
//!
//! What is deliberately absent: markdown parsing (the webview renders it), and a clock of its
//! own. The one time the thread shows, how long the agent thought, is measured with the time of
//! the input being handled, which the client gives it ([`Thread::set_now`]).

use std::collections::HashMap;

use agent_client_protocol_schema::v1 as acp;
use serde::{Deserialize, Serialize};
#[cfg(feature = "typescript")]
use ts_rs::TS;

use crate::permissions::DecidedBy;
use crate::review::{ChangeId, DiffLineView, FileChangeView};

/// Index of an entry in [`Thread::entries`]. Entries are only ever appended, so an index stays
/// valid for the life of the thread.
pub type EntryIndex = u32;

/// Identifies a permission request the person can answer; unique within an engine.
pub type PermissionKey = u64;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
// Entries are stored once and cloned only into patches; boxing the tool call would cost an
// allocation per entry for no gain.
#[allow(clippy::large_enum_variant)]
pub enum Entry {
    User(UserMessage),
    Agent(AgentMessage),
    ToolCall(ToolCallView),
    /// A file change to review: a write the agent proposed, or an edit it made on disk itself.
    FileChange(FileChangeView),
    /// Something the person should know that is not part of the conversation with the agent: the
    /// agent exited, printed a malformed line, a request failed.
    Notice(NoticeView),
    /// The person asked to restore the code to a checkpoint (before a prompt), or to undo such a
    /// restore: what will change, each file's change following as a `FileChange` to review.
    Restore(RestoreView),
}

/// A restore of the workspace's files to a checkpoint, or the undoing of one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct RestoreView {
    pub id: RestoreId,
    /// The prompt whose checkpoint it restores (its entry), or, for an undo, the restore's
    /// checkpoint.
    pub checkpoint: EntryIndex,
    /// The prompt's words, shortened as a title.
    pub prompt: String,
    /// The restore this one undoes.
    pub undoes: Option<RestoreId>,
    pub state: RestoreState,
    /// Something it restored was written and it was not undone yet: Undo is offered.
    pub undoable: bool,
    /// The files the agent changed since the checkpoint that differ from it now, in the order
    /// they were first changed.
    pub files: Vec<RestoreFileView>,
}

pub type RestoreId = u64;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub enum RestoreState {
    /// The files are being read.
    Reading,
    /// Each file's change waits for the person (or was decided): see `files`.
    Planned,
    /// Every file's change is decided: what the person kept is written.
    Decided,
    /// Every file is as it was at the checkpoint already: nothing to do.
    NothingToRestore,
    /// Undone by a later restore.
    Undone,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct RestoreFileView {
    pub path: String,
    pub label: String,
    /// Its change to review (absent for a file that could not be read).
    pub change: Option<ChangeId>,
    /// The file changed since the agent last left it: the person edited it after the
    /// checkpoint, and restoring reverts those edits too.
    pub conflict: bool,
    /// Why nothing is proposed for it, when nothing is.
    pub problem: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct UserMessage {
    /// The text of the prompt (markdown, rendered like the agent's).
    pub text: String,
    /// What the person attached to it: files and selections mentioned with `@`, images.
    pub attachments: Vec<AttachmentView>,
}

impl UserMessage {
    /// A prompt of text alone.
    pub fn text(text: impl Into<String>) -> Self {
        UserMessage { text: text.into(), attachments: Vec::new() }
    }
}

/// Something attached to a prompt, as the thread shows it (an image's bytes stay out of the
/// thread: a long conversation with screenshots would otherwise carry them in every snapshot).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum AttachmentView {
    /// A file, by its path as shown: relative to the workspace folder when inside it.
    File { path: String },
    /// A folder, likewise (without a `/` at the end).
    Folder { path: String },
    /// Lines of a file (1-based, inclusive).
    Selection { path: String, start_line: u32, end_line: u32 },
    /// An image, by its type and size (the prompt's blocks carry no file name).
    Image { mime_type: String, bytes: u64 },
    /// Anything else the agent's replay of a prompt holds (audio, a resource of another scheme).
    Other { label: String },
}

/// An agent's reply between two tool calls: ordered chunks of text and thought, coalesced while
/// streaming (consecutive chunks of the same kind extend the last one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct AgentMessage {
    pub chunks: Vec<MessageChunk>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub enum ChunkKind {
    Text,
    Thought,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct MessageChunk {
    pub kind: ChunkKind,
    pub text: String,
    /// How long the agent thought, in milliseconds: set on a thought once something else follows
    /// it (text, a tool call, the end of the turn). Absent while the thought goes on, on text, and
    /// when its start is not known (a thought that went on across a window reload).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "typescript", ts(optional))]
    pub duration_ms: Option<u64>,
}

/// The status of a tool call as shown: ACP's four statuses plus the client's own
/// "waiting for the person's confirmation".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    Pending,
    InProgress,
    WaitingForConfirmation,
    Completed,
    Failed,
    /// The person stopped the turn, and the agent then reported the tool call failed: it was
    /// stopped, which is no failure of the tool's. Also a tool call the agent never finished
    /// because it ended (stopped, exited or crashed).
    Cancelled,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct ToolCallView {
    pub id: String,
    pub title: String,
    /// ACP's tool kind, as the agent sent it (`read`, `edit`, `execute`, ... `other`).
    pub kind: String,
    pub status: ToolStatus,
    pub content: Vec<ToolContent>,
    pub locations: Vec<Location>,
    #[cfg_attr(feature = "typescript", ts(type = "unknown"))]
    pub raw_input: Option<serde_json::Value>,
    /// The command line in `raw_input` (`command`, `cmd` or `commandLine`; an argument vector
    /// joined, `["bash", "-lc", script]` read as the script): what the card shows and what rule
    /// patterns are matched against, derived once here so the two cannot disagree.
    pub command: Option<String>,
    #[cfg_attr(feature = "typescript", ts(type = "unknown"))]
    pub raw_output: Option<serde_json::Value>,
    /// The permission request attached to this tool call, if the agent asked for one.
    pub permission: Option<PermissionView>,
}

impl ToolCallView {
    /// The terminals the card shows, in its order.
    pub fn terminal_ids(&self) -> impl Iterator<Item = &str> {
        self.content.iter().filter_map(|content| match content {
            ToolContent::Terminal { terminal_id } => Some(terminal_id.as_str()),
            _ => None,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum ToolContent {
    /// Text (markdown) the tool produced. Non-text content blocks are summarised as text.
    Text { text: String },
    /// A file edit the tool made or proposes, as the card shows it (diffed by tether-diff). The
    /// texts stay in the engine: the webview only needs the lines.
    Diff {
        /// The file as the agent named it (absolute: ACP requires it), for opening it.
        path: String,
        /// The path as the person reads it: relative to the workspace when inside it.
        label: String,
        /// The file change card that shows this same change (a write under review, an edit found
        /// on disk), when there is one: the tool call's card then links to it rather than
        /// showing the diff a second time.
        change: Option<ChangeId>,
        #[serde(skip)]
        old_text: Option<String>,
        #[serde(skip)]
        new_text: String,
        added: u32,
        removed: u32,
        lines: Vec<DiffLineView>,
        /// Changed lines the card leaves out.
        hidden_lines: u32,
    },
    /// A terminal the tool runs a command in; its output is in [`Thread::terminals`] under this
    /// id (the card shows "starting" until it is there).
    Terminal { terminal_id: String },
}

/// A command's terminal as its card in the chat shows it: the command line, the tail of the
/// output as styled lines (escape sequences already interpreted), and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct TerminalView {
    /// The terminal's ACP id.
    pub id: String,
    /// The command line, as it would be typed.
    pub command: String,
    /// The working directory, when it is not the workspace folder: relative to the workspace
    /// when inside it, with where it leads when it goes through a link.
    pub cwd: Option<String>,
    pub origin: TerminalOrigin,
    /// The last lines of output, oldest first.
    pub lines: Vec<TerminalLine>,
    /// How many lines of output came before `lines` (shown in the VS Code terminal, not here).
    pub hidden_lines: u64,
    pub state: TerminalState,
    /// How long the command has run (or ran), in milliseconds, as of this view. While it runs the
    /// webview counts on from here with its own clock.
    pub elapsed_ms: u64,
}

/// Who runs the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub enum TerminalOrigin {
    /// Tether runs it for the agent (`terminal/create`): the person can type into it and stop it.
    Client,
    /// The agent runs it itself and streams its output (`_meta` terminal output): read-only.
    Agent,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum TerminalState {
    Running,
    /// The command ended. `killed` when Tether stopped it (the person's Stop, a release, the
    /// session's end).
    Exited {
        exit_code: Option<u32>,
        signal: Option<String>,
        killed: bool,
    },
    /// The command could not be started, or Tether lost track of it (tetherd went away).
    Failed {
        message: String,
    },
}

/// One line of terminal output: runs of text that share a style.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct TerminalLine {
    pub spans: Vec<TerminalSpan>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct TerminalSpan {
    pub text: String,
    pub style: TerminalStyle,
}

/// What SGR escapes set for a run of text. `inverse` is already applied (the colours swapped).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct TerminalStyle {
    pub fg: Option<TerminalColor>,
    pub bg: Option<TerminalColor>,
    pub bold: bool,
    pub dim: bool,
    pub italic: bool,
    pub underline: bool,
    pub strikethrough: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum TerminalColor {
    /// One of the 16 theme colours (0–7 normal, 8–15 bright), which the webview takes from VS
    /// Code's terminal theme (`--vscode-terminal-ansiRed`, ...).
    Palette { index: u8 },
    /// An exact colour, `#rrggbb` (256-colour indexes above 15 arrive converted to this).
    Rgb { hex: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct Location {
    /// The path as the agent named it, for opening it.
    pub path: String,
    pub line: Option<u32>,
    /// The path as the person reads it: relative to the workspace when inside it, else absolute.
    pub label: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct PermissionView {
    pub key: PermissionKey,
    /// The agent's options, in the agent's order.
    pub options: Vec<PermissionOptionView>,
    /// `None` while the person has not answered.
    pub outcome: Option<PermissionOutcome>,
    /// The paths of the tool call that lead somewhere else through a symbolic link, each as
    /// `path → where it leads`, so the person sees what would really be touched. A path leading
    /// outside the workspace ends with `(outside the workspace)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "typescript", ts(optional, as = "Option<Vec<String>>"))]
    pub links: Vec<String>,
    /// Tether asks, not the agent: a request the agent made without asking first (a command to
    /// run, a file outside the workspace to read) held behind a card of Tether's own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "typescript", ts(optional, as = "Option<bool>"))]
    pub from_tether: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct PermissionOptionView {
    pub id: String,
    pub name: String,
    /// ACP's option kind: `allow_once`, `allow_always`, `reject_once`, `reject_always`.
    pub kind: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum PermissionOutcome {
    /// The person chose this option.
    Selected { option_id: String },
    /// A rule or the mode answered without asking; the card shows one line saying which.
    Auto {
        option_id: String,
        allowed: bool,
        by: DecidedBy,
        /// What the agent was told (a rejection's reason).
        reason: Option<String>,
    },
    /// The turn was cancelled, ended or the agent stopped before the person answered.
    Cancelled,
    /// The agent withdrew the request (`$/cancel_request`) before the person answered.
    Withdrawn,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub enum NoticeLevel {
    Info,
    Warning,
    Error,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct NoticeView {
    pub level: NoticeLevel,
    pub text: String,
    /// Extra detail shown collapsed (an agent's stderr tail, a malformed line's preview).
    pub detail: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct PlanEntryView {
    pub content: String,
    /// `high`, `medium`, `low`.
    pub priority: String,
    /// `pending`, `in_progress`, `completed`.
    pub status: String,
}

/// Where the current turn stands.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum TurnState {
    /// No prompt in flight: the composer sends.
    #[default]
    Idle,
    /// A prompt is in flight: the composer offers Cancel.
    Running,
    /// The last turn ended with this ACP stop reason (`end_turn`, `cancelled`, `refusal`, ...).
    Ended { stop_reason: String },
    /// The last turn failed (an error response, or the agent died mid-turn).
    Failed { message: String },
}

impl TurnState {
    /// A turn that ended for `reason`, named as ACP writes it on the wire.
    pub fn ended(reason: acp::StopReason) -> TurnState {
        let stop_reason = match crate::json_value::to_value(reason) {
            Ok(serde_json::Value::String(name)) => name,
            // The schema writes every stop reason as a string.
            _ => "unknown".to_owned(),
        };
        TurnState::Ended { stop_reason }
    }
}

/// One change to a thread, keyed by entry index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "op", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum ThreadPatch {
    /// A new entry at `index` (always the current length).
    Push {
        index: EntryIndex,
        entry: Entry,
    },
    /// Text appended to an agent message: to its last chunk when that chunk has this kind,
    /// otherwise as a new chunk.
    AppendChunk {
        index: EntryIndex,
        kind: ChunkKind,
        text: String,
    },
    /// The entry at `index` replaced as a whole (a tool call changed).
    Replace {
        index: EntryIndex,
        entry: Entry,
    },
    Plan {
        entries: Vec<PlanEntryView>,
    },
    Turn {
        state: TurnState,
    },
    /// A terminal was created or changed: insert or replace it (by id) in the terminals list.
    Terminal {
        view: TerminalView,
    },
    /// The thought in chunk `chunk` of the agent message at `index` ended after `duration_ms`.
    ThoughtEnded {
        index: EntryIndex,
        chunk: u32,
        duration_ms: u64,
    },
}

/// How far back [`ThreadPatch::merge_into`] looks for the patch a replace supersedes. A tool
/// call is updated soon after it is announced; an old one is rare, and is sent as it comes.
const MERGE_LOOKBACK: usize = 64;

impl ThreadPatch {
    /// The entry this patch changes, if it changes one.
    fn entry_index(&self) -> Option<EntryIndex> {
        match self {
            ThreadPatch::Push { index, .. }
            | ThreadPatch::AppendChunk { index, .. }
            | ThreadPatch::Replace { index, .. }
            | ThreadPatch::ThoughtEnded { index, .. } => Some(*index),
            ThreadPatch::Plan { .. } | ThreadPatch::Turn { .. } | ThreadPatch::Terminal { .. } => None,
        }
    }

    /// Adds this patch to `patches`, patches not yet sent, merged with one there when the two
    /// make one change, so that a burst costs the webview (and the JSON between) one update per
    /// entry rather than one per message of the agent's:
    /// - consecutive appends to the same chunk become one append;
    /// - a replace supersedes the last push or replace of the same entry, when nothing after
    ///   that one changes the entry: a tool call announced and updated three times in a frame is
    ///   sent once, whole, and its large content once rather than four times.
    ///
    /// Folding the merged patches gives the thread that folding them one by one gives.
    pub fn merge_into(self, patches: &mut Vec<ThreadPatch>) {
        match self {
            ThreadPatch::AppendChunk { index, kind, text } => {
                if let Some(ThreadPatch::AppendChunk { index: last_index, kind: last_kind, text: last_text }) =
                    patches.last_mut()
                    && *last_index == index
                    && *last_kind == kind
                {
                    last_text.push_str(&text);
                    return;
                }
                patches.push(ThreadPatch::AppendChunk { index, kind, text });
            }
            ThreadPatch::Replace { index, entry } => {
                let earlier =
                    patches.iter_mut().rev().take(MERGE_LOOKBACK).find(|patch| patch.entry_index() == Some(index));
                match earlier {
                    Some(ThreadPatch::Push { entry: earlier, .. } | ThreadPatch::Replace { entry: earlier, .. }) => {
                        *earlier = entry;
                    }
                    _ => patches.push(ThreadPatch::Replace { index, entry }),
                }
            }
            patch => patches.push(patch),
        }
    }
}

/// The thought being streamed, timed from its first chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct OpenThought {
    index: EntryIndex,
    chunk: u32,
    started_at: u64,
}

/// A session's conversation plus the patches that describe how it changed since the last
/// [`Thread::take_patches`].
///
/// Every mutation goes through a method that both changes the thread and records the patch, so
/// applying the recorded patches to a copy taken earlier always gives the same thread
/// ([`Thread::apply`] is that fold, and the tests check it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Thread {
    entries: Vec<Entry>,
    plan: Vec<PlanEntryView>,
    turn: TurnState,
    terminals: Vec<TerminalView>,
    patches: Vec<ThreadPatch>,
    /// The time of the input being handled (see [`Thread::set_now`]).
    now: u64,
    /// The thought still streaming, if one is and its start is known.
    thought: Option<OpenThought>,
    /// Where the last tool call with each id is in `entries`, kept by [`Thread::apply`]. Every
    /// update the agent sends names its tool call by id; a search through the entries for each
    /// one made a long session's fold quadratic (10,000 entries took most of a second to replay).
    tool_calls: HashMap<String, EntryIndex>,
}

impl Thread {
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The person's prompts, in order.
    pub fn prompts(&self) -> impl DoubleEndedIterator<Item = &UserMessage> {
        self.entries.iter().filter_map(|entry| match entry {
            Entry::User(message) => Some(message),
            _ => None,
        })
    }

    pub fn plan(&self) -> &[PlanEntryView] {
        &self.plan
    }

    pub fn turn(&self) -> &TurnState {
        &self.turn
    }

    pub fn terminals(&self) -> &[TerminalView] {
        &self.terminals
    }

    /// Inserts or replaces a terminal. A terminal that changes many times between two takes of
    /// the patches (a command printing fast) costs one patch: only its latest view is kept.
    pub fn set_terminal(&mut self, view: TerminalView) {
        if self.terminals.contains(&view) {
            return;
        }
        self.apply(&ThreadPatch::Terminal { view: view.clone() });
        self.patches.retain(|patch| !matches!(patch, ThreadPatch::Terminal { view: old } if old.id == view.id));
        self.patches.push(ThreadPatch::Terminal { view });
    }

    /// The time of the input the client is handling, on the client's clock: a thought's duration
    /// is the difference of two of these.
    pub fn set_now(&mut self, now: u64) {
        self.now = now;
    }

    /// The time last given to [`Thread::set_now`].
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Forgets when the streaming thought started: the times given from now on are on another
    /// clock (a log's times while replaying, then the live engine's), so its duration would be
    /// wrong; it stays unknown instead.
    pub fn forget_thought_start(&mut self) {
        self.thought = None;
    }

    /// The patches recorded since the last call, oldest first.
    pub fn take_patches(&mut self) -> Vec<ThreadPatch> {
        std::mem::take(&mut self.patches)
    }

    pub fn has_patches(&self) -> bool {
        !self.patches.is_empty()
    }

    pub fn push(&mut self, entry: Entry) -> EntryIndex {
        let index = self.entries.len() as EntryIndex;
        self.record(ThreadPatch::Push { index, entry });
        index
    }

    /// Appends streamed text to the agent message at the end of the thread, starting a new agent
    /// message when the last entry is something else (a tool call ends a message).
    pub fn append_agent_text(&mut self, kind: ChunkKind, text: &str) {
        if text.is_empty() {
            return;
        }
        let index = match self.entries.last() {
            Some(Entry::Agent(_)) => self.entries.len() - 1,
            _ => {
                self.push(Entry::Agent(AgentMessage { chunks: Vec::new() }));
                self.entries.len() - 1
            }
        };
        let new_thought = match &self.entries[index] {
            Entry::Agent(message) => {
                kind == ChunkKind::Thought && message.chunks.last().is_none_or(|last| last.kind != kind)
            }
            _ => false,
        };
        let index = index as EntryIndex;
        self.record(ThreadPatch::AppendChunk { index, kind, text: text.to_owned() });
        if new_thought && let Some(Entry::Agent(message)) = self.entries.get(index as usize) {
            let chunk = (message.chunks.len() - 1) as u32;
            self.thought = Some(OpenThought { index, chunk, started_at: self.now });
        }
    }

    /// The index of the last tool call with this id.
    pub fn find_tool_call(&self, id: &str) -> Option<EntryIndex> {
        self.tool_calls.get(id).copied()
    }

    /// The index of the last tool call with this id, searched for: only when the one
    /// `tool_calls` had is replaced by something else, which agents never do in practice.
    fn search_tool_call(&self, id: &str) -> Option<EntryIndex> {
        self.entries
            .iter()
            .rposition(|entry| matches!(entry, Entry::ToolCall(call) if call.id == id))
            .map(|index| index as EntryIndex)
    }

    pub fn tool_call(&self, index: EntryIndex) -> Option<&ToolCallView> {
        match self.entries.get(index as usize) {
            Some(Entry::ToolCall(call)) => Some(call),
            _ => None,
        }
    }

    /// Changes the tool call at `index` with `change` and records the new version as one patch.
    /// Does nothing when `index` is not a tool call.
    pub fn update_tool_call(&mut self, index: EntryIndex, change: impl FnOnce(&mut ToolCallView)) {
        let Some(mut call) = self.tool_call(index).cloned() else { return };
        change(&mut call);
        self.replace(index, Entry::ToolCall(call));
    }

    /// Replaces the entry at `index` as a whole.
    /// Nothing is recorded when the entry is unchanged, so a repeated update costs the webview
    /// nothing.
    pub fn replace(&mut self, index: EntryIndex, entry: Entry) {
        if self.entries.get(index as usize).is_some_and(|existing| *existing != entry) {
            self.record(ThreadPatch::Replace { index, entry });
        }
    }

    pub fn set_plan(&mut self, entries: Vec<PlanEntryView>) {
        self.record(ThreadPatch::Plan { entries });
    }

    pub fn set_turn(&mut self, state: TurnState) {
        if self.turn != state {
            self.record(ThreadPatch::Turn { state });
        }
    }

    fn record(&mut self, patch: ThreadPatch) {
        self.end_thought_before(&patch);
        self.apply(&patch);
        patch.merge_into(&mut self.patches);
    }

    /// Ends the streaming thought when `patch` shows the agent doing something else: any change
    /// but more of the same thought, or a terminal's output (which streams beside the agent's
    /// thinking).
    fn end_thought_before(&mut self, patch: &ThreadPatch) {
        let Some(thought) = self.thought else { return };
        let goes_on = match patch {
            ThreadPatch::AppendChunk { index, kind, .. } => *index == thought.index && *kind == ChunkKind::Thought,
            ThreadPatch::Terminal { .. } => true,
            _ => false,
        };
        if goes_on {
            return;
        }
        self.thought = None;
        let duration_ms = self.now.saturating_sub(thought.started_at);
        let ended = ThreadPatch::ThoughtEnded { index: thought.index, chunk: thought.chunk, duration_ms };
        self.apply(&ended);
        self.patches.push(ended);
    }

    /// Applies one patch: the fold that turns a patch stream back into a thread. The webview
    /// runs the same fold in TypeScript.
    pub fn apply(&mut self, patch: &ThreadPatch) {
        match patch {
            ThreadPatch::Push { index, entry } => {
                debug_assert_eq!(*index as usize, self.entries.len(), "entries are only appended");
                if let Entry::ToolCall(call) = entry {
                    self.tool_calls.insert(call.id.clone(), self.entries.len() as EntryIndex);
                }
                self.entries.push(entry.clone());
            }
            ThreadPatch::AppendChunk { index, kind, text } => {
                if let Some(Entry::Agent(message)) = self.entries.get_mut(*index as usize) {
                    match message.chunks.last_mut() {
                        Some(last) if last.kind == *kind => last.text.push_str(text),
                        _ => message.chunks.push(MessageChunk { kind: *kind, text: text.clone(), duration_ms: None }),
                    }
                }
            }
            ThreadPatch::Replace { index, entry } => {
                let Some(slot) = self.entries.get_mut(*index as usize) else { return };
                let replaced = std::mem::replace(slot, entry.clone());
                if let Entry::ToolCall(call) = entry
                    && self.tool_calls.get(&call.id).is_none_or(|last| last <= index)
                {
                    self.tool_calls.insert(call.id.clone(), *index);
                }
                if let Entry::ToolCall(old) = replaced
                    && !matches!(entry, Entry::ToolCall(call) if call.id == old.id)
                    && self.tool_calls.get(&old.id) == Some(index)
                {
                    match self.search_tool_call(&old.id) {
                        Some(earlier) => self.tool_calls.insert(old.id, earlier),
                        None => self.tool_calls.remove(&old.id),
                    };
                }
            }
            ThreadPatch::Plan { entries } => self.plan = entries.clone(),
            ThreadPatch::Turn { state } => self.turn = state.clone(),
            ThreadPatch::Terminal { view } => match self.terminals.iter_mut().find(|existing| existing.id == view.id) {
                Some(existing) => *existing = view.clone(),
                None => self.terminals.push(view.clone()),
            },
            ThreadPatch::ThoughtEnded { index, chunk, duration_ms } => {
                if let Some(Entry::Agent(message)) = self.entries.get_mut(*index as usize)
                    && let Some(thought) = message.chunks.get_mut(*chunk as usize)
                {
                    thought.duration_ms = Some(*duration_ms);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str) -> Entry {
        Entry::ToolCall(ToolCallView {
            id: id.to_owned(),
            title: format!("call {id}"),
            kind: "read".to_owned(),
            status: ToolStatus::Completed,
            content: Vec::new(),
            locations: Vec::new(),
            raw_input: None,
            command: None,
            raw_output: None,
            permission: None,
        })
    }

    /// The patches as a line each: the operation, the entry, and what a person would see of it.
    fn describe(patches: &[ThreadPatch]) -> String {
        let entry = |entry: &Entry| match entry {
            Entry::ToolCall(call) => format!("{} {:?}", call.id, call.status),
            other => format!("{other:?}"),
        };
        let lines = patches.iter().map(|patch| match patch {
            ThreadPatch::Push { index, entry: pushed } => format!("push {index} {}", entry(pushed)),
            ThreadPatch::Replace { index, entry: new } => format!("replace {index} {}", entry(new)),
            ThreadPatch::AppendChunk { index, text, .. } => format!("append {index} {text:?}"),
            other => format!("{other:?}"),
        });
        lines.collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn patches_not_yet_sent_are_merged_and_fold_to_the_same_thread() {
        let mut thread = Thread::default();
        let before = thread.clone();
        let status = |status| move |call: &mut ToolCallView| call.status = status;
        // A tool call announced and updated twice: one push, of its last state.
        thread.push(call("a"));
        thread.update_tool_call(0, status(ToolStatus::Pending));
        thread.append_agent_text(ChunkKind::Text, "Hel");
        thread.append_agent_text(ChunkKind::Text, "lo");
        thread.update_tool_call(0, status(ToolStatus::InProgress));
        // A message replaced after an append to it: the append stays, and the replace is sent.
        thread.replace(1, Entry::Agent(AgentMessage { chunks: Vec::new() }));
        thread.append_agent_text(ChunkKind::Text, "Again");
        // A tool call sent earlier is updated as a replace, and the next update merges into it.
        let sent = thread.take_patches();
        let mut webview = before;
        for patch in &sent {
            webview.apply(patch);
        }
        thread.update_tool_call(0, status(ToolStatus::Failed));
        thread.update_tool_call(0, status(ToolStatus::Completed));
        let mut next = thread.take_patches();
        // A host merging the batches of a frame into the patches it has not posted yet.
        let mut queued = Vec::new();
        for patch in next.drain(..) {
            patch.merge_into(&mut queued);
        }
        expect_test::expect![[r#"
            push 0 a InProgress
            push 1 Agent(AgentMessage { chunks: [] })
            append 1 "Hello"
            replace 1 Agent(AgentMessage { chunks: [] })
            append 1 "Again"
            ---
            replace 0 a Completed"#]]
        .assert_eq(&format!("{}\n---\n{}", describe(&sent), describe(&queued)));
        for patch in &queued {
            webview.apply(patch);
        }
        assert_eq!(webview.entries(), thread.entries());
    }

    #[test]
    fn a_tool_call_is_found_by_id_as_the_thread_changes() {
        let mut thread = Thread::default();
        thread.push(call("a"));
        thread.push(Entry::Agent(AgentMessage { chunks: Vec::new() }));
        thread.push(call("b"));
        // An agent that reuses an id: its updates go to the newest call with it.
        thread.push(call("a"));
        assert_eq!(thread.find_tool_call("a"), Some(3));
        assert_eq!(thread.find_tool_call("b"), Some(2));
        assert_eq!(thread.find_tool_call("c"), None);

        // The newest "a" replaced by a call with another id: "a" is the earlier one again.
        thread.replace(3, call("c"));
        assert_eq!(thread.find_tool_call("a"), Some(0));
        assert_eq!(thread.find_tool_call("c"), Some(3));
        // Replaced by something that is not a tool call: "b" is gone.
        thread.replace(2, Entry::Agent(AgentMessage { chunks: Vec::new() }));
        assert_eq!(thread.find_tool_call("b"), None);
        // A replay of the patches finds the same calls.
        let mut folded = Thread::default();
        for patch in thread.take_patches() {
            folded.apply(&patch);
        }
        assert_eq!(folded, thread);
    }
}
