//! Writes under review: the agent's `fs/write_text_file` turned into a change with hunks, the
//! person's decisions on them, and the edit that writes what was kept (or reverts what was not)
//! only if the file still holds the text the change was computed against.
//!
//! A kept write to a file the person has unsaved edits in lands in the editor's document only
//! (Tether does not save the person's edits for them): the card says so, and so does the answer
//! to the agent (`_meta.tether`, or the refusal's message), since a command that reads the file
//! from disk will not see the change until the person saves.

use super::*;

/// The most text a change's record keeps (before and after together) for its review to go on
/// after a reload (`changeTexts`): a reload reads the whole log again, and a file this large is
/// rarely reviewed hunk by hunk. A larger change's card reopens as a card only.
pub(in crate::acp) const MAX_LOGGED_CHANGE_BYTES: usize = 512 * 1024;

/// The most change text one session's log holds: a reload reads the whole log again, and an
/// agent that rewrites large files all day must not make every reload of its session slower.
/// Past it, changes are reviewed as before until the window reloads, and reopen as cards only.
pub(in crate::acp) const MAX_LOGGED_TEXTS_PER_SESSION: usize = 32 * 1024 * 1024;

/// The card's outcome of a kept write that is in the editor's unsaved document, not on disk.
pub(in crate::acp) const APPLIED_TO_UNSAVED_EDITOR: &str = "Applied to the unsaved editor";

/// Where a kept write landed, from the host's [`EditOutcome::Applied`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::acp) enum Landed {
    /// In the file on disk (and in its editor, if open).
    OnDisk,
    /// In the open editor's document only: the person had unsaved edits there.
    UnsavedEditor,
}

impl Landed {
    fn from_saved(saved: bool) -> Self {
        if saved { Landed::OnDisk } else { Landed::UnsavedEditor }
    }
}

/// What the agent is told about a change that is in the editor's unsaved document of `label`.
fn unsaved_editor_note(label: &str) -> String {
    format!(
        "The change is in the editor's unsaved buffer of {label}, not on disk: the person has unsaved edits in that \
         file, so Tether did not save it. Reading the file through the client shows the change; a command that reads \
         it from disk sees the old text until the person saves."
    )
}

impl AcpClient {
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
    ///
    /// A file changed several times (by the agent, then by a restore, then by its undo) would
    /// list a row for each change, most of them settled: after a restore and its undo, ten rows
    /// for three files. A settled change is history the thread's cards keep; in the bar it only
    /// says where its file ended up. So a file's settled changes give no row when another of its
    /// changes still needs the person, and only the newest of them gives one when none does.
    /// Every change still waiting, writing, conflicted or failed keeps its row: each is a
    /// decision of its own.
    pub fn changes_bar(&self) -> Vec<ChangedFileView> {
        let listed: Vec<&Tracked> = self
            .files
            .changes
            .values()
            .filter(|tracked| tracked.turn == self.files.turn || tracked.change.has_pending())
            .collect();
        let settled = |tracked: &Tracked| tracked.change.phase == ChangePhase::Settled;
        // The map is ordered by change id, so a later change of the same file is a newer one.
        let superseded = |index: usize| {
            let path = &listed[index].change.path;
            let mut same_file = listed.iter().enumerate().filter(|(_, other)| &other.change.path == path);
            same_file.any(|(other_index, other)| other_index > index || !settled(other))
        };
        listed
            .iter()
            .enumerate()
            .filter(|(index, tracked)| !settled(tracked) || !superseded(*index))
            .map(|(_, tracked)| {
                let change = &tracked.change;
                let view_stats = change.decided_stats();
                let pending = if change.diff.hunks.is_empty() {
                    u32::from(change.whole == HunkState::Pending)
                } else {
                    change.decisions.iter().filter(|state| **state == HunkState::Pending).count() as u32
                };
                let pending = if matches!(change.phase, ChangePhase::Unreviewable { .. }) { 0 } else { pending };
                ChangedFileView {
                    change: change.id,
                    label: change.label.clone(),
                    origin: change.origin,
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

    /// The turn was cancelled or the agent went away: writes still waiting are answered (the
    /// agent will not wait for them) but stay reviewable, so the person can still keep them.
    pub(in crate::acp) fn settle_waiting_writes(&mut self, why: &str) {
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

    pub(in crate::acp) fn on_write_request(&mut self, id: RequestId, request: acp::WriteTextFileRequest) {
        let Some(path) = self.checked_path(&id, &request.session_id, &request.path) else { return };
        self.resolve_then(vec![path.clone()], Waiting::Write { request: id, path, content: request.content });
    }

    /// A write's path was resolved: the file where it leads is read, for the review (and the
    /// policy decides on where it leads, see [`AcpClient::propose_write`]).
    pub(in crate::acp) fn write_resolved(&mut self, request: RequestId, path: &str, content: String) {
        let target = self.target(path);
        let label = target.shown(&self.workspace);
        let tag =
            ReadTag::WriteOriginal { request, path: target.leads_to.clone(), label, place: target.place, content };
        self.read_whole(target.leads_to, tag);
    }

    /// A write with its original read: put to the policy (on where the path leads: `place`),
    /// then written or proposed for review.
    pub(in crate::acp) fn propose_write(
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
        // The file keeps its line endings: a model's `\n` text for a `\r\n` file would otherwise
        // change every line (see `tether_diff::in_endings_of`).
        let content =
            original.as_deref().and_then(|original| tether_diff::in_endings_of(&content, original)).unwrap_or(content);
        let id = self.files.next_change;
        let mut change = FileChange::new(id, path, label, ChangeOrigin::Write, original, Some(content), false);
        if !matches!(verdict, Verdict::Allow { .. }) {
            self.redecide_write(&request, &mut change);
        }
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
        self.link_tool_diffs(id, &change.path);
        let document = change.document();
        self.files.changes.insert(
            id,
            Tracked {
                change,
                entry,
                request: Some(request),
                turn: self.files.turn,
                allowed_by,
                logged: None,
                log_id: None,
                texts_logged: false,
            },
        );
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
    pub(in crate::acp) fn write(&mut self, change: ChangeId, unreviewed: bool) {
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

    pub(in crate::acp) fn decide(
        &mut self,
        change: ChangeId,
        hunk: Option<usize>,
        keep: bool,
    ) -> Result<(), IntentError> {
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
    pub(in crate::acp) fn finish_if_decided(&mut self, change: ChangeId) {
        let Some(tracked) = self.files.changes.get_mut(&change) else { return };
        if tracked.change.has_pending() {
            return self.refresh_change(change);
        }
        let (kept, _) = tracked.change.tally();
        let nothing_kept =
            if tracked.change.diff.hunks.is_empty() { tracked.change.whole != HunkState::Kept } else { kept == 0 };
        if nothing_kept {
            let message = format!("The person rejected the change to {}: nothing was written", tracked.change.label);
            // The card speaks to the person; the agent's answer names them in the third person.
            tracked.change.outcome = Some("You rejected the change: nothing was written".to_owned());
            self.settle_write(change, Err(message));
        } else {
            self.write(change, false);
        }
    }

    pub(in crate::acp) fn on_finished(&mut self, change: ChangeId, outcome: EditOutcome) {
        match outcome {
            EditOutcome::Applied { saved } => {
                let Some(tracked) = self.files.changes.get_mut(&change) else { return };
                tracked.change.applied = true;
                let landed = Landed::from_saved(saved);
                let (kept, rejected) = tracked.change.tally();
                let result = if rejected == 0 {
                    Ok(landed)
                } else {
                    let not_written = tracked.change.patch(|state| state == HunkState::Rejected);
                    let holder = match landed {
                        Landed::OnDisk => "the file now holds only those".to_owned(),
                        Landed::UnsavedEditor => {
                            "the editor's unsaved buffer of the file now holds only those, not the disk".to_owned()
                        }
                    };
                    let mut message = format!(
                        "The person kept {kept} of {} hunks of the change to {}; {holder}. \
                         These hunks were rejected and are not in the file:\n{not_written}",
                        kept + rejected,
                        tracked.change.label
                    );
                    if landed == Landed::UnsavedEditor {
                        message.push_str(&format!("\n{}", unsaved_editor_note(&tracked.change.label)));
                        tracked.change.outcome =
                            Some(format!("{APPLIED_TO_UNSAVED_EDITOR}: kept {kept} of {} hunks", kept + rejected));
                    } else {
                        // The agent's answer goes on with the rejected hunks; the card shows them.
                        tracked.change.outcome = Some(format!(
                            "You kept {kept} of {} hunks: the file holds only those, and the agent was told which it did not get",
                            kept + rejected
                        ));
                    }
                    Err(message)
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

    pub(in crate::acp) fn on_unreviewed_written(&mut self, change: ChangeId, outcome: EditOutcome) {
        match outcome {
            EditOutcome::Applied { saved } => {
                let Some(tracked) = self.files.changes.get_mut(&change) else { return };
                tracked.change.applied = true;
                tracked.change.phase = ChangePhase::Applied;
                let landed = Landed::from_saved(saved);
                if let Some(by) = &tracked.allowed_by {
                    let done = match landed {
                        Landed::OnDisk => "Written",
                        Landed::UnsavedEditor => APPLIED_TO_UNSAVED_EDITOR,
                    };
                    tracked.change.outcome = Some(format!("{done} without review: allowed by your {by}"));
                }
                // The right side of its diff editor is the file now.
                let document = tracked.change.document();
                self.host(HostAction::ShowReview { document, open: false });
                self.answer_write(change, Ok(landed));
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

    pub(in crate::acp) fn on_reverted(
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

    pub(in crate::acp) fn conflict(&mut self, change: ChangeId) {
        let Some(tracked) = self.files.changes.get(&change) else { return };
        let message = format!(
            "{} changed since this change was shown, so nothing was written. Review it again to see it against the file as it is now.",
            tracked.change.label
        );
        self.set_phase(change, ChangePhase::Conflict { message });
    }

    /// Ends a reviewed write: the agent is answered, the audit log told.
    pub(in crate::acp) fn settle_write(&mut self, change: ChangeId, result: Result<Landed, String>) {
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

    /// Answers the agent's write, and gives the card its outcome unless it has one.
    pub(in crate::acp) fn answer_write(&mut self, change: ChangeId, result: Result<Landed, String>) {
        let Some(tracked) = self.files.changes.get_mut(&change) else { return };
        let Some(request) = tracked.request.take() else { return };
        let (line, told) = match result {
            Ok(Landed::OnDisk) => {
                (jsonrpc::encode_result(&request, &acp::WriteTextFileResponse::new()), "Written".to_owned())
            }
            Ok(Landed::UnsavedEditor) => {
                // The write did land where the agent's reads see it, so it is not refused; ACP's
                // answer has no field for where, so `_meta` says it.
                let mut tether = serde_json::Map::new();
                tether.insert("savedToDisk".to_owned(), serde_json::Value::Bool(false));
                tether.insert(
                    "message".to_owned(),
                    serde_json::Value::String(unsaved_editor_note(&tracked.change.label)),
                );
                let mut meta = serde_json::Map::new();
                meta.insert("tether".to_owned(), serde_json::Value::Object(tether));
                let response = acp::WriteTextFileResponse::new().meta(meta);
                (jsonrpc::encode_result(&request, &response), APPLIED_TO_UNSAVED_EDITOR.to_owned())
            }
            Err(message) => (jsonrpc::encode_error(&request, &RpcError::new(WRITE_REFUSED, message.clone())), message),
        };
        if tracked.change.outcome.is_none() {
            tracked.change.outcome = Some(first_line(&told));
        }
        self.push_outgoing(line);
    }

    pub(in crate::acp) fn audit_review(&mut self, change: ChangeId) {
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

    pub(in crate::acp) fn check_unchanged(&mut self, change: ChangeId, now: Option<&str>) {
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
    pub(in crate::acp) fn rediff(&mut self, change: ChangeId, now: Option<String>) {
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
                self.settle_write(change, Ok(Landed::OnDisk));
            }
            return;
        }
        self.refresh_change(change);
    }

    pub(in crate::acp) fn add_change(&mut self, change: FileChange) {
        let id = change.id;
        let view = change.view();
        let entry = self.thread.push(Entry::FileChange(view.clone()));
        let reviewable = !matches!(change.phase, ChangePhase::Unreviewable { .. });
        let restored = change.origin == ChangeOrigin::Restore;
        // A restore is the person's, not a tool call's: the agent's diffs keep their changes.
        if reviewable && !restored {
            self.link_tool_diffs(id, &change.path);
        }
        let document = change.document();
        self.files.changes.insert(
            id,
            Tracked {
                change,
                entry,
                request: None,
                turn: self.files.turn,
                allowed_by: None,
                logged: None,
                log_id: None,
                texts_logged: false,
            },
        );
        if reviewable {
            self.host(HostAction::ShowReview { document, open: false });
        }
        if !restored {
            self.log_change_card(id, &view);
        }
        self.events.push_back(AcpEvent::ChangesChanged);
    }

    pub(in crate::acp) fn replace_change(&mut self, id: ChangeId, change: FileChange) {
        let Some(tracked) = self.files.changes.get_mut(&id) else { return };
        tracked.change = change;
        tracked.texts_logged = false;
        let document = tracked.change.document();
        self.host(HostAction::ShowReview { document, open: false });
        self.refresh_change(id);
    }

    pub(in crate::acp) fn set_phase(&mut self, change: ChangeId, phase: ChangePhase) {
        if let Some(tracked) = self.files.changes.get_mut(&change) {
            tracked.change.phase = phase;
        }
        self.refresh_change(change);
    }

    /// Redraws a change's card, its CodeLens and the changes bar.
    pub(in crate::acp) fn refresh_change(&mut self, change: ChangeId) {
        let Some(tracked) = self.files.changes.get(&change) else { return };
        let view = tracked.change.view();
        let entry = tracked.entry;
        let hunks = tracked.change.review_hunks();
        let settled = !tracked.change.is_decidable();
        let restored = tracked.change.origin == ChangeOrigin::Restore;
        if !restored {
            self.log_change_card(change, &view);
        }
        self.thread.replace(entry, Entry::FileChange(view));
        self.host(HostAction::UpdateReview { change, hunks, settled });
        self.events.push_back(AcpEvent::ChangesChanged);
        if restored {
            self.refresh_restore_of(change);
        }
    }

    /// Writes a change's card to the log as the person is left with it: the change on disk (to
    /// keep or revert), decided, failed, or not reviewable (a binary file), so a replay shows the
    /// card from this record ([`AcpClient::reopen_change_card`]). A change that is in the file
    /// (on disk to keep or revert, or a write kept) also has its texts written first
    /// (`changeTexts`), once for each pair of texts, so that after a reload its review goes on
    /// and a checkpoint before it can still be restored; above [`MAX_LOGGED_CHANGE_BYTES`], or
    /// once the session's log holds [`MAX_LOGGED_TEXTS_PER_SESSION`] of texts, its card reopens
    /// as a card only. A card waiting for a review is not written: the write it
    /// shows waits for its answer, and is proposed again after a reload. A restore's cards go
    /// with the restore's own records.
    fn log_change_card(&mut self, change: ChangeId, view: &FileChangeView) {
        let resting = matches!(
            view.phase,
            ChangePhase::Applied | ChangePhase::Settled | ChangePhase::Failed { .. } | ChangePhase::Unreviewable { .. }
        );
        let Some(tracked) = self.files.changes.get_mut(&change) else { return };
        let mut card = view.clone();
        card.id = tracked.log_id.unwrap_or(change);
        if tracked.logged.as_ref() == Some(&card) {
            return;
        }
        if view.phase == ChangePhase::Proposed
            && let Some(request) = tracked.request.clone()
            && tracked.change.decisions.iter().any(|state| *state != HunkState::Pending)
        {
            // The card is not written while it waits (the write is proposed again after a
            // reload), but the person's decisions so far are.
            tracked.logged = Some(card);
            let record = AuditEvent::WriteDecisions {
                request,
                original: tracked.change.old.as_deref().map(content_hash),
                proposed: content_hash(tracked.change.new.as_deref().unwrap_or("")),
                hunks: tracked.change.decisions.clone(),
            };
            self.audit(record);
            return;
        }
        if !resting {
            return;
        }
        let reviewable = !matches!(view.phase, ChangePhase::Unreviewable { .. });
        let size =
            tracked.change.old.as_ref().map_or(0, String::len) + tracked.change.new.as_ref().map_or(0, String::len);
        let room =
            size <= MAX_LOGGED_CHANGE_BYTES && self.files.texts_logged_bytes + size <= MAX_LOGGED_TEXTS_PER_SESSION;
        let texts = (tracked.change.applied && reviewable && !tracked.texts_logged && room)
            .then(|| (tracked.change.old.clone(), tracked.change.new.clone()));
        if texts.is_some() {
            tracked.texts_logged = true;
            self.files.texts_logged_bytes += size;
        }
        tracked.logged = Some(card.clone());
        let texts_in_log = tracked.texts_logged;
        if let Some((old, new)) = texts {
            self.audit(AuditEvent::ChangeTexts { change: card.id, old, new });
        }
        // With its texts in the log, a card's diff lines are what a replay gets from them again:
        // the record leaves them out. Each decision on a hunk writes the card anew, and its lines
        // are most of it.
        if texts_in_log {
            card = without_lines(card);
        }
        match crate::json_value::to_value(&card) {
            Ok(card) => self.audit(AuditEvent::ChangeShown { change: card }),
            Err(error) => self.events.push_back(AcpEvent::ProtocolProblem {
                message: format!("could not write the card of {} to the log: {error}", view.label),
            }),
        }
    }

    /// The person's decisions on a write still waiting, read back from the log
    /// (`writeDecisions`): they go with the write when it is proposed again.
    pub(in crate::acp) fn reopen_write_decisions(
        &mut self,
        request: &serde_json::Value,
        original: Option<u64>,
        proposed: u64,
        hunks: Vec<HunkState>,
    ) {
        let request = request.to_string();
        self.files.write_decisions.retain(|(waiting, ..)| *waiting != request);
        self.files.write_decisions.push((request, original, proposed, hunks));
    }

    /// A write proposed again after a reload takes the decisions the person had made on it, when
    /// it is the same change (the same texts, so the same hunks) and something is left to decide.
    fn redecide_write(&mut self, request: &RequestId, change: &mut FileChange) {
        let Ok(key) = serde_json::to_string(request) else { return };
        let Some(at) = self.files.write_decisions.iter().position(|(request, ..)| *request == key) else { return };
        let (_, original, proposed, hunks) = self.files.write_decisions.swap_remove(at);
        let same = original == change.old.as_deref().map(content_hash)
            && proposed == content_hash(change.new.as_deref().unwrap_or(""))
            && hunks.len() == change.decisions.len();
        if same && hunks.contains(&HunkState::Pending) {
            change.decisions = hunks;
        }
    }

    /// The texts of a change read back from the log (`changeTexts`), for its card's records
    /// that follow.
    pub(in crate::acp) fn reopen_change_texts(&mut self, change: ChangeId, old: Option<String>, new: Option<String>) {
        self.files.texts_logged_bytes += old.as_ref().map_or(0, String::len) + new.as_ref().map_or(0, String::len);
        self.files.reopened_texts.insert(change, (old, new));
    }

    /// A change's card read back from the log (see [`AcpClient::log_change_card`]). With its
    /// texts, a change on disk still to decide goes on being reviewed: keeping or reverting a
    /// hunk works as it did before the reload (the edit still checks that the file holds what it
    /// was computed against). Without them, it is shown as it was and no longer decidable, since
    /// the file's text before the change is not known here. A later record of the same change
    /// replaces its card.
    pub(in crate::acp) fn reopen_change_card(&mut self, card: &serde_json::Value) {
        let Ok(mut view) = crate::json_value::from_value::<FileChangeView>(card) else { return };
        let logged_id = view.id;
        // A number the log gave a change is not given to another one here: the records of both
        // would be read back as one change's after the next reload.
        if view.id >> 32 == self.files.next_change >> 32 && view.id >= self.files.next_change {
            self.files.next_change = view.id + 1;
        }
        if self.reopen_live_change(&view) {
            return;
        }
        // Its texts did not give back what the person saw: it is a card only from here on.
        if let Some(id) = self.files.reopened_ids.get(&logged_id) {
            self.files.changes.remove(id);
        }
        let reviewable = !matches!(view.phase, ChangePhase::Unreviewable { .. });
        let pending = view.hunks.iter().any(|hunk| hunk.state == HunkState::Pending)
            || (view.hunks.is_empty() && view.whole == HunkState::Pending);
        let reason = match &view.phase {
            ChangePhase::Failed { message } => format!("Reopened from the session's log. {message}"),
            _ if pending => {
                "Reopened from the session's log: this change is in the file, and can no longer be reverted from here"
                    .to_owned()
            }
            _ => "Reopened from the session's log".to_owned(),
        };
        // Nothing on the card can be done any more: a binary file's card already says why.
        if reviewable {
            view.phase = ChangePhase::Unreviewable { reason };
        }
        match self.files.reopened.get(&logged_id) {
            Some(&entry) => self.thread.replace(entry, Entry::FileChange(view)),
            None => {
                let path = view.path.clone();
                let entry = self.thread.push(Entry::FileChange(view));
                self.files.reopened.insert(logged_id, entry);
                // As live: the turn's tool calls that show this change link to its card.
                if reviewable {
                    self.link_tool_diffs(logged_id, &path);
                }
            }
        }
    }

    /// Reopens the change of `view` as a live one, from its texts in the log, when they give back
    /// exactly the card the person was left with (the same hunks, decided as they were).
    fn reopen_live_change(&mut self, view: &FileChangeView) -> bool {
        let logged_id = view.id;
        let Some((old, new)) = self.files.reopened_texts.get(&logged_id).cloned() else { return false };
        // The number the log gave it, when it is one of this engine's and free; else a new one.
        let id = match self.files.reopened_ids.get(&logged_id) {
            Some(&id) => id,
            None if logged_id >> 32 == self.files.next_change >> 32 && !self.files.changes.contains_key(&logged_id) => {
                logged_id
            }
            None => {
                let id = self.files.next_change;
                self.files.next_change += 1;
                id
            }
        };
        let mut change = FileChange::new(id, view.path.clone(), view.label.clone(), view.origin, old, new, true);
        if view.hunks.len() != change.decisions.len() {
            return false;
        }
        for hunk in &view.hunks {
            let Some(decision) = change.decisions.get_mut(hunk.index as usize) else { return false };
            *decision = hunk.state;
        }
        change.whole = view.whole;
        change.applied = view.applied;
        change.phase = view.phase.clone();
        change.outcome = view.outcome.clone();
        let mut rebuilt = change.view();
        rebuilt.id = logged_id;
        // The record may leave the diff lines out (see `log_change_card`): the hunks, their
        // states and the counts must be the same.
        if without_lines(rebuilt.clone()) != without_lines(view.clone()) {
            return false;
        }
        let card = change.view();
        let path = change.path.clone();
        let tracked = |entry| Tracked {
            change,
            entry,
            request: None,
            turn: self.files.turn,
            allowed_by: None,
            logged: Some(rebuilt),
            log_id: Some(logged_id),
            texts_logged: true,
        };
        match self.files.reopened.get(&logged_id) {
            Some(&entry) => {
                self.thread.replace(entry, Entry::FileChange(card));
                self.files.changes.insert(id, tracked(entry));
            }
            None => {
                let entry = self.thread.push(Entry::FileChange(card));
                self.files.reopened.insert(logged_id, entry);
                self.files.reopened_ids.insert(logged_id, id);
                self.files.changes.insert(id, tracked(entry));
                self.link_tool_diffs(id, &path);
            }
        }
        true
    }

    /// After a replay: the host hears of the reopened changes still to decide, as it heard of
    /// them live (their diff editors and CodeLens), and the changes bar lists them.
    pub(in crate::acp) fn announce_reopened_changes(&mut self) {
        let documents: Vec<crate::review::ReviewDocument> = self
            .files
            .reopened_ids
            .values()
            .filter_map(|id| self.files.changes.get(id))
            .filter(|tracked| tracked.change.is_decidable())
            .map(|tracked| tracked.change.document())
            .collect();
        for document in documents {
            self.host(HostAction::ShowReview { document, open: false });
        }
        self.files.reopened_texts.clear();
        self.events.push_back(AcpEvent::ChangesChanged);
    }
}

/// A card without its hunks' diff lines, as the log has it once the change's texts are there.
fn without_lines(mut card: FileChangeView) -> FileChangeView {
    for hunk in &mut card.hunks {
        hunk.lines.clear();
    }
    card
}
