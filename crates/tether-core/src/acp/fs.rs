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

use std::collections::{BTreeMap, BTreeSet};

use crate::files::{FileReads, MAX_READ_RESPONSE_BYTES, ReadDone, ReadId, ReadMode, ReadProgress};
use crate::host_api::{EditOutcome, FileReadOutcome, FileReadReply, HostAction};
use crate::permissions::{RequestPath, resolve_path};
use crate::review::{ChangeId, ChangeOrigin, ChangePhase, FileChange, HunkState, content_hash, text_edits};
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
}

/// What an edit in flight carries out.
#[derive(Debug, Clone)]
enum EditFor {
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
    /// The prompt waiting for the snapshot and its mentioned files before it is sent.
    pub(super) held_prompt: Option<super::prompt_content::HeldPrompt>,
    /// The serial of the last prompt made, which its mention reads carry.
    pub(super) prompt_serial: u64,
    /// The current turn's number and the index of its first entry.
    turn: u32,
    turn_start: EntryIndex,
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
            held_prompt: None,
            prompt_serial: 0,
            turn: 0,
            turn_start: 0,
        }
    }
}

/// The path of a `SnapshotChange` (relative, `/`-separated) under `root`.
fn join(root: &str, relative: &str) -> String {
    format!("{}/{relative}", root.trim_end_matches('/'))
}

impl AcpClient {
    /// The host engine can snapshot the workspace: edits the agent makes itself are then found by
    /// comparing snapshots, and each prompt waits for its snapshot.
    pub fn enable_snapshots(&mut self) {
        self.files.snapshots.enabled = true;
    }

    /// The snapshot asked for with [`AcpEvent::TakeSnapshot`] was taken (the tree id), or could
    /// not be (a message for the log); the held prompt goes to the agent either way.
    pub fn handle_snapshot(&mut self, result: Result<String, String>) {
        match result {
            Ok(tree) => self.files.snapshots.base = Some(tree),
            Err(message) => {
                self.files.snapshots.base = None;
                self.events.push_back(AcpEvent::ProtocolProblem {
                    message: format!(
                        "no snapshot before this turn ({message}); edits the agent makes itself are found from its tool calls only"
                    ),
                });
            }
        }
        if let Some(held) = &mut self.files.held_prompt {
            held.snapshot_pending = false;
        }
        self.send_held_prompt_if_ready();
    }

    /// The answer to [`AcpEvent::ScanChanges`]: the files that differ from the turn's snapshot.
    pub fn handle_scan(&mut self, result: Result<Vec<SnapshotChange>, String>) {
        self.files.snapshots.scanning = false;
        match result {
            Ok(changes) => {
                for change in changes {
                    self.on_disk_change(change);
                }
            }
            Err(message) => self.events.push_back(AcpEvent::ProtocolProblem {
                message: format!("could not find the files the agent changed: {message}"),
            }),
        }
        if std::mem::take(&mut self.files.snapshots.again) {
            self.scan_changes();
        }
    }

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

    /// The outcome of a [`HostAction::EditFile`].
    pub fn handle_edit_done(&mut self, edit: u64, outcome: EditOutcome) {
        let Some(purpose) = self.files.edits.remove(&edit) else { return };
        match purpose {
            EditFor::Finish { change } => self.on_finished(change, outcome),
            EditFor::Unreviewed { change } => self.on_unreviewed_written(change, outcome),
            EditFor::Revert { change, previous, previous_whole } => {
                self.on_reverted(change, outcome, previous, previous_whole)
            }
        }
    }

    /// The person's decision on a change.
    pub fn review(&mut self, intent: ReviewIntent, _now: u64) -> Result<(), IntentError> {
        match intent {
            ReviewIntent::Hunk { change, hunk, keep } => self.decide(change, Some(hunk as usize), keep),
            ReviewIntent::All { change, keep } => self.decide(change, None, keep),
            ReviewIntent::Open { change } => {
                let tracked = self.files.changes.get(&change).ok_or(IntentError::UnknownChange)?;
                let title = format!("{} (Tether review)", tracked.change.label);
                self.host(HostAction::OpenReviews { changes: vec![change], title });
                Ok(())
            }
            ReviewIntent::OpenAll => {
                let changes: Vec<ChangeId> = self
                    .changes_bar()
                    .iter()
                    .map(|row| row.change)
                    .filter(|id| {
                        self.files
                            .changes
                            .get(id)
                            .is_some_and(|tracked| tracked.change.old.is_some() || tracked.change.new.is_some())
                    })
                    .collect();
                if changes.is_empty() {
                    return Err(IntentError::UnknownChange);
                }
                self.host(HostAction::OpenReviews { changes, title: "Tether: files changed".to_owned() });
                Ok(())
            }
            ReviewIntent::Retry { change } => {
                let tracked = self.files.changes.get(&change).ok_or(IntentError::UnknownChange)?;
                if !matches!(tracked.change.phase, ChangePhase::Conflict { .. } | ChangePhase::Failed { .. }) {
                    return Err(IntentError::NothingToDecide);
                }
                let path = tracked.change.path.clone();
                self.read_whole(path, ReadTag::Retry { change });
                Ok(())
            }
        }
    }

    /// The rows of the changes bar: the current turn's changes, and earlier ones still waiting.
    pub fn changes_bar(&self) -> Vec<ChangedFileView> {
        self.files
            .changes
            .values()
            .filter(|tracked| tracked.turn == self.files.turn || tracked.change.has_pending())
            .map(|tracked| {
                let change = &tracked.change;
                let view_stats = change.diff.stats();
                let pending = if change.diff.hunks.is_empty() {
                    u32::from(change.whole == HunkState::Pending)
                } else {
                    change.decisions.iter().filter(|state| **state == HunkState::Pending).count() as u32
                };
                let pending = if matches!(change.phase, ChangePhase::Unreviewable { .. }) { 0 } else { pending };
                ChangedFileView {
                    change: change.id,
                    label: change.label.clone(),
                    kind: change.kind(),
                    phase: change.phase.clone(),
                    added: view_stats.added as u32,
                    removed: view_stats.removed as u32,
                    pending,
                }
            })
            .collect()
    }

    /// Writes waiting for the person's review, for the view's badge.
    pub fn reviews_waiting(&self) -> u32 {
        self.files
            .changes
            .values()
            .filter(|tracked| tracked.request.is_some() && tracked.change.phase == ChangePhase::Proposed)
            .count() as u32
    }

    /// A new turn starts: its number, and where its entries begin.
    pub(super) fn start_turn_files(&mut self) {
        self.files.turn += 1;
        self.files.turn_start = self.thread.entries().len() as EntryIndex;
        self.files.snapshots.base = None;
        self.events.push_back(AcpEvent::ChangesChanged);
    }

    /// Whether a prompt should wait for a snapshot first.
    pub(super) fn wants_snapshot(&self) -> bool {
        self.files.snapshots.enabled
    }

    /// A tool call moved on: once an editing tool finishes, the files it may have changed are
    /// looked for.
    pub(super) fn after_tool_call(&mut self, index: EntryIndex) {
        let Some(call) = self.thread.tool_call(index) else { return };
        let finished = matches!(call.status, ToolStatus::Completed | ToolStatus::Failed);
        let edits = matches!(call.kind.as_str(), "edit" | "delete" | "move")
            || call.content.iter().any(|content| matches!(content, ToolContent::Diff { .. }));
        if finished && edits && self.files.snapshots.base.is_some() {
            self.scan_changes();
        }
    }

    /// The turn ended: the last look for files the agent changed.
    pub(super) fn end_turn_files(&mut self) {
        if self.files.snapshots.base.is_some() {
            self.scan_changes();
        } else {
            self.check_tool_diffs();
        }
    }

    /// The turn was cancelled or the agent went away: writes still waiting are answered (the
    /// agent will not wait for them) but stay reviewable, so the person can still keep them.
    pub(super) fn settle_waiting_writes(&mut self, why: &str) {
        let waiting: Vec<ChangeId> = self
            .files
            .changes
            .values()
            .filter(|tracked| tracked.request.is_some())
            .map(|tracked| tracked.change.id)
            .collect();
        for change in waiting {
            let Some(tracked) = self.files.changes.get_mut(&change) else { continue };
            let Some(request) = tracked.request.take() else { continue };
            let message = format!("{why}: the change to {} was not written", tracked.change.label);
            tracked.change.outcome = Some(capitalize(&message));
            self.push_outgoing(jsonrpc::encode_error(&request, &RpcError::new(WRITE_REFUSED, message)));
            self.refresh_change(change);
        }
        self.emit_permission_count();
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

    pub(super) fn on_write_request(&mut self, id: RequestId, request: acp::WriteTextFileRequest) {
        let Some(path) = self.checked_path(&id, &request.session_id, &request.path) else { return };
        self.resolve_then(vec![path.clone()], Waiting::Write { request: id, path, content: request.content });
    }

    /// A write's path was resolved: the file where it leads is read, for the review (and the
    /// policy decides on where it leads, see [`AcpClient::propose_write`]).
    pub(super) fn write_resolved(&mut self, request: RequestId, path: &str, content: String) {
        let target = self.target(path);
        let label = target.shown(&self.cwd);
        let tag =
            ReadTag::WriteOriginal { request, path: target.leads_to.clone(), label, place: target.place, content };
        self.read_whole(target.leads_to, tag);
    }

    /// The person answered the permission to read outside the workspace.
    pub(super) fn on_read_allowed(&mut self, gate: ReadGate, allowed: bool, request: RequestId, tool_call: EntryIndex) {
        if allowed {
            self.read_lines(gate.path, gate.start, gate.limit, request, Some(tool_call));
        } else {
            self.thread.update_tool_call(tool_call, |call| call.status = ToolStatus::Failed);
            let message = format!("The person did not allow reading {}, which is outside the workspace", gate.path);
            self.push_outgoing(jsonrpc::encode_error(&request, &RpcError::new(WRITE_REFUSED, message)));
        }
    }

    fn ask_to_read_outside(&mut self, id: RequestId, target: Target, start: u64, limit: Option<u64>) {
        let shown = target.shown(&self.cwd);
        let path = target.leads_to;
        let key = self.cards.next_key;
        self.cards.next_key += 1;
        let names = ["Allow", "Always allow reading this file", "Deny"];
        let title = format!("Read {shown} (outside the workspace)");
        let call = ToolCallView {
            locations: vec![Location { path: path.clone(), line: (start > 0).then(|| (start + 1) as u32) }],
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
        }
    }

    fn answer_read(
        &mut self,
        request: RequestId,
        tool_call: Option<EntryIndex>,
        result: Result<(Option<String>, Option<u64>, bool), String>,
    ) {
        let failed = !matches!(result, Ok((Some(_), _, _)));
        if let Some(index) = tool_call {
            let status = if failed { ToolStatus::Failed } else { ToolStatus::Completed };
            self.thread.update_tool_call(index, |call| call.status = status);
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

    /// A write with its original read: put to the policy (on where the path leads: `place`),
    /// then written or proposed for review.
    fn propose_write(
        &mut self,
        request: RequestId,
        path: String,
        label: String,
        place: RequestPath,
        original: Option<String>,
        content: String,
    ) {
        let facts = RequestFacts {
            kind: "edit".to_owned(),
            title: format!("Write {label}"),
            command: None,
            paths: vec![place],
        };
        let verdict = self.policy.decide(&facts);
        if let Verdict::Reject { by, reason } = &verdict {
            self.audit(AuditEvent::WriteDecided {
                path: path.clone(),
                allowed: false,
                by: by.clone(),
                reason: Some(reason.clone()),
            });
            let message = format!("{reason}: {label} was not written");
            self.push_outgoing(jsonrpc::encode_error(&request, &RpcError::new(WRITE_REFUSED, message.clone())));
            self.thread.push(Entry::Notice(NoticeView {
                level: NoticeLevel::Info,
                text: capitalize(&message),
                detail: None,
            }));
            return;
        }
        let id = self.files.next_change;
        let change = FileChange::new(id, path, label, ChangeOrigin::Write, original, Some(content), false);
        if change.is_empty() {
            // Nothing would change: the agent is told it is done, and nobody is asked.
            self.push_outgoing(jsonrpc::encode_result(&request, &acp::WriteTextFileResponse::new()));
            return;
        }
        self.files.next_change += 1;
        let allowed_by = match verdict {
            Verdict::Allow { by } => {
                if let DecidedBy::Rule { id, .. } = &by {
                    self.policy.record_fired(*id);
                    self.events.push_back(AcpEvent::PolicyChanged);
                }
                self.audit(AuditEvent::WriteDecided {
                    path: change.path.clone(),
                    allowed: true,
                    by: by.clone(),
                    reason: None,
                });
                Some(by)
            }
            _ => None,
        };
        let unreviewed = allowed_by.is_some();
        let entry = self.thread.push(Entry::FileChange(change.view()));
        let document = change.document();
        self.files
            .changes
            .insert(id, Tracked { change, entry, request: Some(request), turn: self.files.turn, allowed_by });
        if unreviewed {
            self.host(HostAction::ShowReview { document, open: false });
            self.write(id, true);
        } else {
            self.host(HostAction::ShowReview { document, open: true });
            self.emit_permission_count();
        }
        self.refresh_change(id);
    }

    /// Writes a proposed write: all of it when `unreviewed`, else the hunks the person kept. The
    /// file must still hold the original.
    fn write(&mut self, change: ChangeId, unreviewed: bool) {
        let Some(tracked) = self.files.changes.get_mut(&change) else { return };
        let result = if unreviewed { Ok(tracked.change.new.clone()) } else { tracked.change.decided_content() };
        let result = match result {
            Ok(result) => result,
            Err(error) => return self.set_phase(change, ChangePhase::Failed { message: error.to_string() }),
        };
        let expected = tracked.change.old.clone();
        let purpose = if unreviewed { EditFor::Unreviewed { change } } else { EditFor::Finish { change } };
        self.send_edit(change, expected, result, purpose);
    }

    fn send_edit(&mut self, change: ChangeId, expected: Option<String>, result: Option<String>, purpose: EditFor) {
        let Some(tracked) = self.files.changes.get_mut(&change) else { return };
        let edits = match (&expected, &result) {
            (Some(from), Some(to)) => text_edits(from, to),
            _ => Vec::new(),
        };
        let edit = self.files.next_edit;
        self.files.next_edit += 1;
        self.files.edits.insert(edit, purpose);
        tracked.change.phase = ChangePhase::Writing;
        let path = tracked.change.path.clone();
        self.host(HostAction::EditFile { edit, path, expected, result, edits });
        self.refresh_change(change);
    }

    fn decide(&mut self, change: ChangeId, hunk: Option<usize>, keep: bool) -> Result<(), IntentError> {
        let tracked = self.files.changes.get_mut(&change).ok_or(IntentError::UnknownChange)?;
        // A conflicted write can still be rejected as a whole; anything else waits for the
        // person to look at it again.
        if let ChangePhase::Conflict { .. } = tracked.change.phase
            && !keep
            && hunk.is_none()
            && !tracked.change.applied
        {
            tracked.change.decisions.fill(HunkState::Rejected);
            tracked.change.whole = HunkState::Rejected;
            tracked.change.phase = ChangePhase::Proposed;
            self.finish_if_decided(change);
            return Ok(());
        }
        if !tracked.change.is_decidable() {
            return Err(IntentError::NothingToDecide);
        }
        if tracked.change.applied {
            let before = tracked.change.on_disk().map_err(|_| IntentError::NothingToDecide)?;
            let decisions = tracked.change.decisions.clone();
            let whole = tracked.change.whole;
            if !tracked.change.decide(hunk, keep) {
                return Err(IntentError::NothingToDecide);
            }
            let after = match tracked.change.on_disk() {
                Ok(after) => after,
                Err(_) => {
                    tracked.change.decisions = decisions;
                    tracked.change.whole = whole;
                    return Err(IntentError::NothingToDecide);
                }
            };
            if before == after {
                if !tracked.change.has_pending() {
                    tracked.change.phase = ChangePhase::Settled;
                    self.audit_review(change);
                }
                self.refresh_change(change);
            } else {
                let purpose = EditFor::Revert { change, previous: decisions, previous_whole: whole };
                self.send_edit(change, before, after, purpose);
            }
            return Ok(());
        }
        if !tracked.change.decide(hunk, keep) {
            return Err(IntentError::NothingToDecide);
        }
        self.finish_if_decided(change);
        Ok(())
    }

    /// Once no hunk of a proposed write is pending, the kept ones are written (or, if none is,
    /// the agent is told at once).
    fn finish_if_decided(&mut self, change: ChangeId) {
        let Some(tracked) = self.files.changes.get(&change) else { return };
        if tracked.change.has_pending() {
            return self.refresh_change(change);
        }
        let (kept, _) = tracked.change.tally();
        let nothing_kept =
            if tracked.change.diff.hunks.is_empty() { tracked.change.whole != HunkState::Kept } else { kept == 0 };
        if nothing_kept {
            let message = format!("The person rejected the change to {}: nothing was written", tracked.change.label);
            self.settle_write(change, Err(message));
        } else {
            self.write(change, false);
        }
    }

    fn on_finished(&mut self, change: ChangeId, outcome: EditOutcome) {
        match outcome {
            EditOutcome::Applied { .. } => {
                let Some(tracked) = self.files.changes.get_mut(&change) else { return };
                tracked.change.applied = true;
                let (kept, rejected) = tracked.change.tally();
                let result = if rejected == 0 {
                    Ok(())
                } else {
                    let not_written = tracked.change.patch(|state| state == HunkState::Rejected);
                    Err(format!(
                        "The person kept {kept} of {} hunks of the change to {}; the file now holds only those. \
                         These hunks were rejected and are not in the file:\n{not_written}",
                        kept + rejected,
                        tracked.change.label
                    ))
                };
                self.settle_write(change, result);
            }
            EditOutcome::Conflict => self.conflict(change),
            EditOutcome::Failed { message } => {
                self.answer_write(change, Err(format!("Writing the file failed: {message}")));
                self.set_phase(change, ChangePhase::Failed { message });
                self.emit_permission_count();
            }
        }
    }

    fn on_unreviewed_written(&mut self, change: ChangeId, outcome: EditOutcome) {
        match outcome {
            EditOutcome::Applied { .. } => {
                let Some(tracked) = self.files.changes.get_mut(&change) else { return };
                tracked.change.applied = true;
                tracked.change.phase = ChangePhase::Applied;
                if let Some(by) = &tracked.allowed_by {
                    tracked.change.outcome = Some(format!("Written without review: allowed by your {by}"));
                }
                // The right side of its diff editor is the file now.
                let document = tracked.change.document();
                self.host(HostAction::ShowReview { document, open: false });
                self.answer_write(change, Ok(()));
                self.refresh_change(change);
            }
            EditOutcome::Conflict => {
                self.answer_write(change, Err("The file changed while it was being written; read it again".to_owned()));
                let message = "The file changed while Tether was writing it; nothing was written".to_owned();
                self.set_phase(change, ChangePhase::Failed { message });
            }
            EditOutcome::Failed { message } => {
                self.answer_write(change, Err(format!("Writing the file failed: {message}")));
                self.set_phase(change, ChangePhase::Failed { message });
            }
        }
    }

    fn on_reverted(
        &mut self,
        change: ChangeId,
        outcome: EditOutcome,
        previous: Vec<HunkState>,
        previous_whole: HunkState,
    ) {
        let Some(tracked) = self.files.changes.get_mut(&change) else { return };
        match outcome {
            EditOutcome::Applied { .. } => {
                tracked.change.phase =
                    if tracked.change.has_pending() { ChangePhase::Applied } else { ChangePhase::Settled };
                if tracked.change.phase == ChangePhase::Settled {
                    self.audit_review(change);
                }
                self.refresh_change(change);
            }
            // The decision was not carried out: the hunks are on disk still.
            EditOutcome::Conflict => {
                tracked.change.decisions = previous;
                tracked.change.whole = previous_whole;
                self.conflict(change);
            }
            EditOutcome::Failed { message } => {
                tracked.change.decisions = previous;
                tracked.change.whole = previous_whole;
                self.set_phase(change, ChangePhase::Failed { message });
            }
        }
    }

    fn conflict(&mut self, change: ChangeId) {
        let Some(tracked) = self.files.changes.get(&change) else { return };
        let message = format!(
            "{} changed since this change was shown, so nothing was written. Review it again to see it against the file as it is now.",
            tracked.change.label
        );
        self.set_phase(change, ChangePhase::Conflict { message });
    }

    /// Ends a reviewed write: the agent is answered, the audit log told.
    fn settle_write(&mut self, change: ChangeId, result: Result<(), String>) {
        if let Some(tracked) = self.files.changes.get_mut(&change) {
            tracked.change.phase = ChangePhase::Settled;
            if tracked.change.applied {
                // The right side of its diff editor is the file now.
                let document = tracked.change.document();
                self.host(HostAction::ShowReview { document, open: false });
            }
        }
        self.audit_review(change);
        self.answer_write(change, result);
        self.refresh_change(change);
        self.emit_permission_count();
    }

    fn answer_write(&mut self, change: ChangeId, result: Result<(), String>) {
        let Some(tracked) = self.files.changes.get_mut(&change) else { return };
        let Some(request) = tracked.request.take() else { return };
        let (line, told) = match result {
            Ok(()) => (jsonrpc::encode_result(&request, &acp::WriteTextFileResponse::new()), "Written".to_owned()),
            Err(message) => (jsonrpc::encode_error(&request, &RpcError::new(WRITE_REFUSED, message.clone())), message),
        };
        if tracked.change.outcome.is_none() {
            tracked.change.outcome = Some(first_line(&told));
        }
        self.push_outgoing(line);
    }

    fn audit_review(&mut self, change: ChangeId) {
        let Some(tracked) = self.files.changes.get(&change) else { return };
        let (kept, rejected) = tracked.change.tally();
        let patch = tracked.change.patch(|state| state != HunkState::Rejected);
        let event = AuditEvent::Reviewed {
            path: tracked.change.path.clone(),
            origin: tracked.change.origin,
            kept: kept as u32,
            rejected: rejected as u32,
            patch,
        };
        self.audit(event);
    }

    fn check_unchanged(&mut self, change: ChangeId, now: Option<&str>) {
        let Some(tracked) = self.files.changes.get(&change) else { return };
        if tracked.change.phase != ChangePhase::Proposed {
            return;
        }
        let expected = tracked.change.on_disk().ok().flatten();
        if expected.as_deref().map(content_hash) != now.map(content_hash) {
            self.conflict(change);
        }
    }

    /// After a conflict: the change shown again against the file as it is now, every hunk
    /// pending again.
    fn rediff(&mut self, change: ChangeId, now: Option<String>) {
        let Some(tracked) = self.files.changes.get_mut(&change) else { return };
        let old = &tracked.change;
        let fresh = if old.applied {
            // On disk: the old text stays the reference; the file as it is now is the new side.
            FileChange::new(old.id, old.path.clone(), old.label.clone(), old.origin, old.old.clone(), now, true)
        } else {
            FileChange::new(old.id, old.path.clone(), old.label.clone(), old.origin, now, old.new.clone(), false)
        };
        tracked.change = fresh;
        let document = tracked.change.document();
        let empty = tracked.change.is_empty();
        let applied = tracked.change.applied;
        self.host(HostAction::ShowReview { document, open: true });
        if empty {
            if applied {
                self.set_phase(change, ChangePhase::Settled);
            } else {
                // The file already holds what the agent wanted.
                self.settle_write(change, Ok(()));
            }
            return;
        }
        self.refresh_change(change);
    }

    /// A file the snapshot says differs from before the turn.
    fn on_disk_change(&mut self, found: SnapshotChange) {
        let path = join(&self.cwd, &found.path);
        let text = |side: &SnapshotText| match side {
            SnapshotText::Absent => Ok(None),
            SnapshotText::Text { text } => Ok(Some(text.clone())),
            SnapshotText::Binary { .. } => Err("a binary file".to_owned()),
            SnapshotText::TooLarge { size } => Err(format!("too large to review ({} MiB)", size >> 20)),
        };
        let (old, new) = match (text(&found.old), text(&found.new)) {
            (Ok(old), Ok(new)) => (old, new),
            (Err(reason), _) | (_, Err(reason)) => return self.add_unreviewable(path, reason),
        };
        // The changes of this turn to the same file, latest first: a write Tether carried out
        // itself is not reported again, and an edit already listed is updated in place.
        let latest = self
            .files
            .changes
            .values()
            .rev()
            .find(|tracked| tracked.turn == self.files.turn && tracked.change.path == path)
            .map(|tracked| tracked.change.id);
        let mut old = old;
        if let Some(id) = latest
            && let Some(tracked) = self.files.changes.get(&id)
        {
            let on_disk = tracked.change.on_disk().ok().flatten();
            if on_disk == new || tracked.change.phase == ChangePhase::Writing {
                return;
            }
            let untouched = tracked.change.origin == ChangeOrigin::Agent
                && tracked.change.phase == ChangePhase::Applied
                && tracked.change.decisions.iter().all(|state| *state == HunkState::Pending);
            if untouched {
                let change =
                    FileChange::new(id, path, tracked.change.label.clone(), ChangeOrigin::Agent, old, new, true);
                return self.replace_change(id, change);
            }
            // The person already decided on part of it: what is on disk now is the new base.
            old = on_disk;
        }
        let label = self.label_of(&path);
        let id = self.files.next_change;
        let change = FileChange::new(id, path, label, ChangeOrigin::Agent, old, new, true);
        if change.is_empty() {
            return;
        }
        self.files.next_change += 1;
        self.add_change(change);
    }

    /// Without a snapshot: a tool call's diff checked against the file. When the file holds the
    /// diff's new text, the old one is what the file held; when it holds the new snippet once,
    /// putting the old snippet back gives what it held. Anything else cannot be reviewed safely.
    fn found_by_tool_diff(&mut self, path: String, old_text: Option<String>, new_text: String, now: String) {
        let old = if now == new_text {
            old_text
        } else if let Some(old_snippet) = &old_text
            && !new_text.is_empty()
            && now.matches(new_text.as_str()).count() == 1
        {
            Some(now.replacen(new_text.as_str(), old_snippet, 1))
        } else {
            return;
        };
        let already =
            self.files.changes.values().any(|tracked| tracked.turn == self.files.turn && tracked.change.path == path);
        if already {
            return;
        }
        let label = self.label_of(&path);
        let id = self.files.next_change;
        let change = FileChange::new(id, path, label, ChangeOrigin::Agent, old, Some(now), true);
        if change.is_empty() {
            return;
        }
        self.files.next_change += 1;
        self.add_change(change);
    }

    fn check_tool_diffs(&mut self) {
        let mut diffs: BTreeMap<String, (Option<String>, String)> = BTreeMap::new();
        for entry in &self.thread.entries()[(self.files.turn_start as usize).min(self.thread.entries().len())..] {
            if let Entry::ToolCall(call) = entry {
                for content in &call.content {
                    if let ToolContent::Diff { path, old_text, new_text, .. } = content {
                        diffs.insert(path.clone(), (old_text.clone(), new_text.clone()));
                    }
                }
            }
        }
        let written: BTreeSet<String> = self
            .files
            .changes
            .values()
            .filter(|tracked| tracked.turn == self.files.turn)
            .map(|tracked| tracked.change.path.clone())
            .collect();
        for (path, (old_text, new_text)) in diffs {
            if written.contains(&path) || !path.starts_with('/') {
                continue;
            }
            self.read_whole(path.clone(), ReadTag::ToolDiff { path, old_text, new_text });
        }
    }

    fn add_unreviewable(&mut self, path: String, reason: String) {
        let exists =
            self.files.changes.values().any(|tracked| tracked.turn == self.files.turn && tracked.change.path == path);
        if exists {
            return;
        }
        let label = self.label_of(&path);
        let id = self.files.next_change;
        self.files.next_change += 1;
        let reason = format!("The agent changed {label}, {reason}: it is not reviewed line by line");
        self.add_change(FileChange::unreviewable(id, path, label, ChangeOrigin::Agent, reason));
    }

    fn add_change(&mut self, change: FileChange) {
        let id = change.id;
        let entry = self.thread.push(Entry::FileChange(change.view()));
        let reviewable = !matches!(change.phase, ChangePhase::Unreviewable { .. });
        let document = change.document();
        self.files
            .changes
            .insert(id, Tracked { change, entry, request: None, turn: self.files.turn, allowed_by: None });
        if reviewable {
            self.host(HostAction::ShowReview { document, open: false });
        }
        self.events.push_back(AcpEvent::ChangesChanged);
    }

    fn replace_change(&mut self, id: ChangeId, change: FileChange) {
        let Some(tracked) = self.files.changes.get_mut(&id) else { return };
        tracked.change = change;
        let document = tracked.change.document();
        self.host(HostAction::ShowReview { document, open: false });
        self.refresh_change(id);
    }

    fn set_phase(&mut self, change: ChangeId, phase: ChangePhase) {
        if let Some(tracked) = self.files.changes.get_mut(&change) {
            tracked.change.phase = phase;
        }
        self.refresh_change(change);
    }

    /// Redraws a change's card, its CodeLens and the changes bar.
    fn refresh_change(&mut self, change: ChangeId) {
        let Some(tracked) = self.files.changes.get(&change) else { return };
        let view = tracked.change.view();
        let entry = tracked.entry;
        let hunks = tracked.change.review_hunks();
        let settled = !tracked.change.is_decidable();
        self.thread.replace(entry, Entry::FileChange(view));
        self.host(HostAction::UpdateReview { change, hunks, settled });
        self.events.push_back(AcpEvent::ChangesChanged);
    }

    fn scan_changes(&mut self) {
        let Some(base) = self.files.snapshots.base.clone() else { return };
        if self.files.snapshots.scanning {
            self.files.snapshots.again = true;
            return;
        }
        self.files.snapshots.scanning = true;
        self.events.push_back(AcpEvent::ScanChanges { base });
    }

    fn label_of(&self, path: &str) -> String {
        match resolve_path(&self.cwd, path) {
            RequestPath::Inside(relative) => relative,
            RequestPath::Outside(absolute) => absolute,
        }
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
