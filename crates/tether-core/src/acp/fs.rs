//! The client's file methods and file review: `fs/read_text_file`, `fs/write_text_file`, and the
//! changes an agent makes on disk by itself.
//!
//! - A read is served by the host a chunk at a time (see [`crate::files`]) from the open editor
//!   when the file is open there, else from disk. A path outside the workspace is first put to
//!   the person as a permission request on a tool call Tether adds for it (rules and the mode
//!   answer it like any other).
//! - A write is reviewed before anything is written: the original is read, the change becomes a
//!   [`FileChange`] card and a diff editor, and the agent's request waits until no hunk is left
//!   pending. Then the kept hunks are written in one edit, through the host, only if the file
//!   still holds the text the change was computed against. A rule or the mode may let a write
//!   through unreviewed; it is still listed and can be reverted hunk by hunk afterwards.
//! - Edits the agent makes itself are found after the fact: the host engine snapshots the
//!   workspace before each turn (tetherd, [`crate::sidecar::SnapshotTakeParams`]) and asks for
//!   what changed when an editing tool call finishes and when the turn ends. Without a snapshot
//!   (no workspace folder, no git), the tool calls' diffs are checked against the files instead.
//!
//! Nothing here writes blindly: every edit names the text the file must hold, and a file that
//! changed meanwhile is a conflict the person is told about.
//!
//! This file serves reads and holds the state of all three ([`Files`]); `review` handles writes
//! under review, `disk_changes` the edits found after the fact, and `restore` putting files back
//! as they were before a prompt (a checkpoint) through the same review.

mod disk_changes;
mod restore;
mod review;

pub(super) use restore::Restores;

use std::collections::{BTreeMap, BTreeSet};

use crate::files::{FileReads, MAX_READ_RESPONSE_BYTES, ReadDone, ReadId, ReadMode, ReadProgress};
use crate::host_api::{EditOutcome, FileReadOutcome, FileReadReply, HostAction};
use crate::permissions::RequestPath;
use crate::review::{
    ChangeId, ChangeOrigin, ChangePhase, FileChange, FileChangeView, HunkState, content_hash, text_edits,
};
use crate::sidecar::{SnapshotChange, SnapshotText};
use crate::webview::{ChangedFileView, ReviewIntent};

use super::cards::{Gate, own_card};
use super::links::{Target, Waiting};
use super::*;

/// The JSON-RPC error code for a write the person (or their rules) refused, in the range JSON-RPC
/// leaves to implementations. The message says why, for the agent's model to read.
pub const WRITE_REFUSED: i32 = -32040;

/// What a whole-file read is for.
#[derive(Debug, Clone)]
pub(super) enum ReadTag {
    /// Lines for the agent's `fs/read_text_file`.
    Agent { request: RequestId, tool_call: Option<EntryIndex> },
    /// The file as it is before a write the agent asked for: `path` is where the agent's path
    /// leads (what is read and written), `label` how the person sees it, `place` where it is.
    WriteOriginal { request: RequestId, path: String, label: String, place: RequestPath, content: String },
    /// Did a file under review change while its change waited?
    Check { change: ChangeId },
    /// After a conflict: the file as it is now.
    Retry { change: ChangeId },
    /// Without a snapshot: the file a tool call's diff says the agent edited.
    ToolDiff { path: String, old_text: Option<String>, new_text: String },
    /// A file the prompt `prompt` mentions, embedded as its block `block`.
    Mention { prompt: u64, block: usize, path: String },
    /// A file restore `restore` puts back, as it is now.
    Restore { restore: crate::thread::RestoreId, path: String },
}

/// What an edit in flight carries out.
#[derive(Debug, Clone)]
pub(super) enum EditFor {
    /// A reviewed write: the kept hunks.
    Finish { change: ChangeId },
    /// A write a rule or the mode let through.
    Unreviewed { change: ChangeId },
    /// Reverting hunks of a change on disk. The decisions as they were before stand again if the
    /// revert cannot be written.
    Revert { change: ChangeId, previous: Vec<HunkState>, previous_whole: HunkState },
}

/// A change and where it is shown.
#[derive(Debug)]
struct Tracked {
    change: FileChange,
    entry: EntryIndex,
    /// The agent's `fs/write_text_file` waiting for the person's decisions.
    request: Option<RequestId>,
    /// The turn it belongs to, for the changes bar.
    turn: u32,
    /// For an unreviewed write: what let it through, for the card and the audit log.
    allowed_by: Option<DecidedBy>,
    /// The card as last written to the log (see `AcpClient::log_change_card`).
    logged: Option<FileChangeView>,
    /// The change's number in the log, when it is not `change.id`: a change reopened from the
    /// log goes on under a number of this engine's (which routes the person's decisions to its
    /// session), and its records go on under the number they started with.
    log_id: Option<ChangeId>,
    /// Its texts are in the log (`changeTexts`), as they are now.
    texts_logged: bool,
}

/// The snapshot of the workspace taken before the current turn.
#[derive(Debug, Default)]
struct Snapshots {
    /// The host engine can take snapshots (a workspace folder is open).
    enabled: bool,
    /// The tree taken before the current turn.
    base: Option<String>,
    /// A scan is in flight; `again` when another was wanted meanwhile.
    scanning: bool,
    again: bool,
}

/// The file side of one [`AcpClient`].
#[derive(Debug)]
pub(super) struct Files {
    reads: FileReads<ReadTag>,
    changes: BTreeMap<ChangeId, Tracked>,
    next_change: ChangeId,
    edits: BTreeMap<u64, EditFor>,
    next_edit: u64,
    snapshots: Snapshots,
    /// The current turn's number and the index of its first entry.
    turn: u32,
    turn_start: EntryIndex,
    /// While replaying: the entries of the change cards read back from the log, by their number
    /// in the log.
    reopened: BTreeMap<ChangeId, EntryIndex>,
    /// While replaying: the texts of changes in their files (`changeTexts`), by their number in
    /// the log, and the number each reopened one goes on under here.
    reopened_texts: BTreeMap<ChangeId, (Option<String>, Option<String>)>,
    reopened_ids: BTreeMap<ChangeId, ChangeId>,
    /// The person's decisions on writes that still waited for them when the log ended
    /// (`writeDecisions`): the agent's request (its id as JSON), the texts' hashes and the
    /// hunks' states, for when each is proposed again. A few at most: a list (a map of its own
    /// type would cost the WASM some kilobytes of tree code).
    write_decisions: Vec<(String, Option<u64>, u64, Vec<HunkState>)>,
    /// The files the person saved in an editor during the current turn (absolute paths): a change
    /// the snapshots find in one of them is the person's as much as the agent's.
    saved_by_person: BTreeSet<String>,
    /// The bytes of change texts the session's log holds (`changeTexts`), those read back from
    /// it included: bounded by [`review::MAX_LOGGED_TEXTS_PER_SESSION`].
    texts_logged_bytes: usize,
}

impl Files {
    pub(super) fn new(first_id: u64) -> Self {
        Files {
            reads: FileReads::new(first_id),
            changes: BTreeMap::new(),
            next_change: first_id,
            edits: BTreeMap::new(),
            next_edit: first_id,
            snapshots: Snapshots::default(),
            turn: 0,
            turn_start: 0,
            reopened: BTreeMap::new(),
            reopened_texts: BTreeMap::new(),
            reopened_ids: BTreeMap::new(),
            write_decisions: Vec::new(),
            saved_by_person: BTreeSet::new(),
            texts_logged_bytes: 0,
        }
    }
}

impl AcpClient {
    /// The host's answer to a [`HostAction::ReadFile`].
    pub fn handle_file_read(&mut self, reply: FileReadReply, data: &[u8], _now: u64) {
        let done = match reply.outcome {
            FileReadOutcome::Data { eof, from_editor } => {
                match self.files.reads.handle_data(reply.read, data, eof, from_editor) {
                    Some(ReadProgress::More { path, offset, max_bytes }) => {
                        self.host(HostAction::ReadFile { read: reply.read, path, offset, max_bytes });
                        return;
                    }
                    Some(ReadProgress::Done(done)) => done,
                    None => return,
                }
            }
            FileReadOutcome::NotFound => match self.files.reads.handle_error(reply.read, true, String::new()) {
                Some(done) => done,
                None => return,
            },
            FileReadOutcome::Failed { message } => match self.files.reads.handle_error(reply.read, false, message) {
                Some(done) => done,
                None => return,
            },
        };
        self.on_read_done(done);
    }

    /// A file under review changed in an editor or on disk.
    pub fn handle_file_changed(&mut self, path: &str) {
        let waiting: Vec<ChangeId> = self
            .files
            .changes
            .values()
            .filter(|tracked| tracked.change.path == path && tracked.change.phase == ChangePhase::Proposed)
            .map(|tracked| tracked.change.id)
            .collect();
        for change in waiting {
            self.read_whole(path.to_owned(), ReadTag::Check { change });
        }
    }

    pub(super) fn on_read_request(&mut self, id: RequestId, request: acp::ReadTextFileRequest) {
        let Some(path) = self.checked_path(&id, &request.session_id, &request.path) else { return };
        // `line` is 1-based; 0 is read as the first line rather than refused.
        let start = u64::from(request.line.unwrap_or(1).max(1) - 1);
        let limit = request.limit.map(u64::from);
        self.resolve_then(vec![path.clone()], Waiting::Read { request: id, path, start, limit });
    }

    /// A read's path was resolved: a file inside the workspace is read where the path leads; one
    /// outside is first put to the person.
    pub(super) fn read_resolved(&mut self, request: RequestId, path: &str, start: u64, limit: Option<u64>) {
        let target = self.target(path);
        if target.is_outside() {
            self.ask_to_read_outside(request, target, start, limit);
        } else {
            self.read_lines(target.leads_to, start, limit, request, None);
        }
    }

    /// The person answered the permission to read outside the workspace.
    pub(super) fn on_read_allowed(&mut self, gate: ReadGate, allowed: bool, request: RequestId, tool_call: EntryIndex) {
        if allowed {
            self.read_lines(gate.path, gate.start, gate.limit, request, Some(tool_call));
        } else {
            self.update_own_card(tool_call, |call| call.status = ToolStatus::Failed);
            let message = format!("The person did not allow reading {}, which is outside the workspace", gate.path);
            self.push_outgoing(jsonrpc::encode_error(&request, &RpcError::new(WRITE_REFUSED, message)));
        }
    }

    fn ask_to_read_outside(&mut self, id: RequestId, target: Target, start: u64, limit: Option<u64>) {
        let shown = target.shown(&self.workspace);
        let path = target.leads_to;
        let key = self.cards.next_key;
        self.cards.next_key += 1;
        let names = ["Allow", "Always allow reading this file", "Deny"];
        let title = format!("Read {shown} (outside the workspace)");
        let call = ToolCallView {
            locations: vec![Location {
                path: path.clone(),
                line: (start > 0).then(|| (start + 1) as u32),
                label: self.label_of(&path),
            }],
            ..own_card(key, format!("tether-read-{key}"), title, "read", names)
        };
        self.hold_behind_card(id, key, call, Gate::Read(ReadGate { path, start, limit }));
    }

    fn read_lines(
        &mut self,
        path: String,
        start: u64,
        limit: Option<u64>,
        request: RequestId,
        tool_call: Option<EntryIndex>,
    ) {
        let (read, progress) =
            self.files.reads.start(path, ReadMode::Lines { start, limit }, ReadTag::Agent { request, tool_call });
        self.forward_read(read, progress);
    }

    /// Reads a file the held prompt `prompt` mentions (`path`, which leads to `leads_to`), to
    /// embed it as its block `block`.
    pub(super) fn read_mention(&mut self, prompt: u64, block: usize, path: String, leads_to: String) {
        self.read_whole(leads_to, ReadTag::Mention { prompt, block, path });
    }

    fn read_whole(&mut self, path: String, tag: ReadTag) {
        let (read, progress) = self.files.reads.start(path, ReadMode::Whole, tag);
        self.forward_read(read, progress);
    }

    fn forward_read(&mut self, read: ReadId, progress: ReadProgress<ReadTag>) {
        match progress {
            ReadProgress::More { path, offset, max_bytes } => {
                self.host(HostAction::ReadFile { read, path, offset, max_bytes })
            }
            ReadProgress::Done(done) => self.on_read_done(done),
        }
    }

    fn on_read_done(&mut self, done: ReadDone<ReadTag>) {
        let (tag, result) = match done {
            ReadDone::Text { tag, text, next_line, from_editor } => (tag, Ok((Some(text), next_line, from_editor))),
            ReadDone::NotFound { tag } => (tag, Ok((None, None, false))),
            ReadDone::Failed { tag, message } => (tag, Err(message)),
        };
        match tag {
            ReadTag::Agent { request, tool_call } => self.answer_read(request, tool_call, result),
            ReadTag::WriteOriginal { request, path, label, place, content } => match result {
                Ok((original, _, _)) => self.propose_write(request, path, label, place, original, content),
                Err(message) => {
                    let message = format!("Tether cannot review a write to {label}: {message}");
                    self.push_outgoing(jsonrpc::encode_error(&request, &RpcError::new(WRITE_REFUSED, message)));
                }
            },
            ReadTag::Check { change } => {
                if let Ok((now, _, _)) = result {
                    self.check_unchanged(change, now.as_deref());
                }
            }
            ReadTag::Retry { change } => match result {
                Ok((now, _, _)) => self.rediff(change, now),
                Err(message) => {
                    self.set_phase(change, ChangePhase::Failed { message: format!("Cannot read the file: {message}") })
                }
            },
            ReadTag::ToolDiff { path, old_text, new_text } => {
                if let Ok((Some(now), _, _)) = result {
                    self.found_by_tool_diff(path, old_text, new_text, now);
                }
            }
            ReadTag::Mention { prompt, block, path } => {
                self.on_mention_read(prompt, block, &path, result.map(|(text, _, _)| text))
            }
            ReadTag::Restore { restore, path } => self.on_restore_read(restore, &path, result.map(|(text, _, _)| text)),
        }
    }

    fn answer_read(
        &mut self,
        request: RequestId,
        tool_call: Option<EntryIndex>,
        result: Result<(Option<String>, Option<u64>, bool), String>,
    ) {
        let failed = !matches!(result, Ok((Some(_), _, _)));
        // The card of Tether's own that asked to read outside the workspace, if one did.
        if let Some(index) = tool_call {
            let status = if failed { ToolStatus::Failed } else { ToolStatus::Completed };
            self.update_own_card(index, |call| call.status = status);
        }
        let line = match result {
            Ok((Some(content), next_line, from_editor)) => {
                let mut response = acp::ReadTextFileResponse::new(content);
                // ACP has no field for "there is more": `_meta` carries it, and the agent can ask
                // again from `nextLine`.
                let mut tether = serde_json::Map::new();
                if let Some(next_line) = next_line {
                    tether.insert("truncated".to_owned(), serde_json::Value::Bool(true));
                    tether.insert("nextLine".to_owned(), serde_json::json!(next_line));
                    tether.insert(
                        "reason".to_owned(),
                        serde_json::Value::String(format!(
                            "the answer stops at {} MiB; ask again with line {next_line} for the rest",
                            MAX_READ_RESPONSE_BYTES >> 20
                        )),
                    );
                }
                if from_editor {
                    tether.insert("fromEditor".to_owned(), serde_json::Value::Bool(true));
                }
                if !tether.is_empty() {
                    let mut meta = serde_json::Map::new();
                    meta.insert("tether".to_owned(), serde_json::Value::Object(tether));
                    response = response.meta(meta);
                }
                jsonrpc::encode_result(&request, &response)
            }
            Ok((None, _, _)) => {
                let error = RpcError::new(jsonrpc::ErrorCode::ResourceNotFound.into(), "Resource not found")
                    .data(serde_json::Value::String("the file does not exist".to_owned()));
                jsonrpc::encode_error(&request, &error)
            }
            Err(message) => {
                let error = RpcError::internal_error()
                    .data(serde_json::Value::String(format!("cannot read the file: {message}")));
                jsonrpc::encode_error(&request, &error)
            }
        };
        self.push_outgoing(line);
    }

    /// The latest reviewable change of this turn to the file the agent named `named`, whose card
    /// shows its diff.
    pub(in crate::acp) fn change_showing(&self, named: &str) -> Option<ChangeId> {
        self.files
            .changes
            .values()
            .rev()
            .find(|tracked| {
                tracked.turn == self.files.turn
                    && self.same_file(named, &tracked.change.path)
                    && !matches!(tracked.change.phase, ChangePhase::Unreviewable { .. })
            })
            .map(|tracked| tracked.change.id)
    }

    /// A file change card was added: the diffs of this turn's tool calls to the same file now
    /// link to it instead of showing the change again.
    pub(in crate::acp) fn link_tool_diffs(&mut self, change: ChangeId, path: &str) {
        let start = (self.files.turn_start as usize).min(self.thread.entries().len());
        let mut linked = Vec::new();
        for (offset, entry) in self.thread.entries()[start..].iter().enumerate() {
            let Entry::ToolCall(call) = entry else { continue };
            let mut call = call.clone();
            let mut changed = false;
            for content in &mut call.content {
                if let ToolContent::Diff { path: named, change: shown_in, .. } = content
                    && *shown_in != Some(change)
                    && self.same_file(named, path)
                {
                    *shown_in = Some(change);
                    changed = true;
                }
            }
            if changed {
                linked.push(((start + offset) as EntryIndex, call));
            }
        }
        for (index, call) in linked {
            self.thread.replace(index, Entry::ToolCall(call));
        }
    }

    /// `path` as the person reads it: its name in the workspace when inside it, else absolute.
    pub(in crate::acp) fn label_of(&self, path: &str) -> String {
        self.workspace.label(path)
    }

    pub(super) fn host(&mut self, action: HostAction) {
        self.events.push_back(AcpEvent::Host(Box::new(action)));
    }

    /// The path of an `fs/*` request, or `None` after answering invalid params: the session must
    /// be this one and the path absolute, as ACP requires.
    fn checked_path(&mut self, id: &RequestId, session: &acp::SessionId, path: &std::path::Path) -> Option<String> {
        let path = path.to_string_lossy().into_owned();
        let problem = if self.session.id.as_ref() != Some(session) {
            format!("unknown session {}", session.0)
        } else if !path.starts_with('/') {
            format!("{path} is not an absolute path")
        } else {
            return Some(path);
        };
        self.refuse(id, problem);
        None
    }
}

/// A read outside the workspace, waiting for the person's permission.
#[derive(Debug, Clone)]
pub(super) struct ReadGate {
    path: String,
    start: u64,
    limit: Option<u64>,
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_owned()
}
