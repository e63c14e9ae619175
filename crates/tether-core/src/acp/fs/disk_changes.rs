//! Edits the agent makes by itself, found after the fact: the workspace's snapshot before each
//! turn and the scans for what changed since, or, without a snapshot, the tool calls' own diffs
//! checked against the files.

use super::*;

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
        if let Some(held) = &mut self.turn.held {
            held.snapshot_pending = false;
        }
        self.send_held_prompt_if_ready();
    }

    /// The answer to [`AcpEvent::ScanChanges`]: the files that differ from the turn's snapshot,
    /// each path absolute or relative to the agent's folder.
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

    /// The person saved `path` (absolute) in an editor. During a turn, the snapshots cannot tell
    /// their edits from the agent's: a change found in that file is listed, but reverting it
    /// could throw the person's work away, so it is not offered. Tether's own saves (a write it
    /// is carrying out) are not the person's.
    pub fn handle_document_saved(&mut self, path: &str) {
        let own = self.files.edits.values().any(|edit| {
            let (EditFor::Finish { change } | EditFor::Unreviewed { change } | EditFor::Revert { change, .. }) = edit;
            self.files.changes.get(change).is_some_and(|tracked| tracked.change.path == path)
        });
        if !own && self.thread.turn() == &TurnState::Running {
            self.files.saved_by_person.insert(path.to_owned());
        }
    }

    /// A change found in a file the person saved during the turn: shown, not offered to revert.
    /// One found earlier in the turn, untouched, stops being revertible too.
    fn saved_by_person_changed(&mut self, path: String) {
        let label = self.label_of(&path);
        let reason = format!(
            "You saved {label} in an editor during this turn, and Tether cannot tell your edits from the agent's: it does not offer to revert them"
        );
        match self.latest_change_this_turn(&path).map(|tracked| &tracked.change) {
            // Listed already (by an earlier scan of this turn).
            Some(change) if matches!(change.phase, ChangePhase::Unreviewable { .. }) => {}
            Some(change) if change.origin == ChangeOrigin::Agent && change.is_decidable() => {
                let id = change.id;
                self.set_phase(id, ChangePhase::Unreviewable { reason });
            }
            // A write Tether carried out, or a change decided already: what the file holds now
            // is listed beside it.
            _ => {
                let id = self.files.next_change;
                self.files.next_change += 1;
                self.add_change(FileChange::unreviewable(id, path, label, ChangeOrigin::Agent, reason));
            }
        }
    }

    /// What this session's changes left in their files, as far as it knows: each file's path and
    /// the `content_hash` of its text (`None`: no file), for the changes in the files (of this
    /// turn, or still to decide). Another session's snapshots that find a file so are finding
    /// this session's change, not their own agent's.
    pub fn files_left_by_changes(&self) -> Vec<(String, Option<u64>)> {
        self.files
            .changes
            .values()
            .filter(|tracked| {
                tracked.change.applied && (tracked.turn == self.files.turn || tracked.change.has_pending())
            })
            .filter(|tracked| !matches!(tracked.change.phase, ChangePhase::Unreviewable { .. }))
            .filter_map(|tracked| {
                let left = tracked.change.on_disk().ok()?;
                Some((tracked.change.path.clone(), left.as_deref().map(content_hash)))
            })
            .collect()
    }

    /// The latest change of this turn to the file at `path`.
    fn latest_change_this_turn(&self, path: &str) -> Option<&Tracked> {
        self.files.changes.values().rev().find(|tracked| tracked.turn == self.files.turn && tracked.change.path == path)
    }

    /// A new turn starts: its number, and where its entries begin.
    pub(in crate::acp) fn start_turn_files(&mut self) {
        self.files.turn += 1;
        self.files.turn_start = self.thread.entries().len() as EntryIndex;
        self.files.snapshots.base = None;
        self.files.saved_by_person.clear();
        self.events.push_back(AcpEvent::ChangesChanged);
    }

    /// Whether a prompt should wait for a snapshot first.
    pub(in crate::acp) fn wants_snapshot(&self) -> bool {
        self.files.snapshots.enabled
    }

    /// A tool call moved on: once an editing tool finishes, the files it may have changed are
    /// looked for.
    pub(in crate::acp) fn after_tool_call(&mut self, index: EntryIndex) {
        let Some(call) = self.thread.tool_call(index) else { return };
        let finished = matches!(call.status, ToolStatus::Completed | ToolStatus::Failed | ToolStatus::Cancelled);
        let edits = matches!(call.kind.as_str(), "edit" | "delete" | "move")
            || call.content.iter().any(|content| matches!(content, ToolContent::Diff { .. }));
        if finished && edits && self.files.snapshots.base.is_some() {
            self.scan_changes();
        }
    }

    /// The turn ended: the last look for files the agent changed.
    pub(in crate::acp) fn end_turn_files(&mut self) {
        if self.files.snapshots.base.is_some() {
            self.scan_changes();
        } else {
            self.check_tool_diffs();
        }
    }

    /// A file the snapshot says differs from before the turn.
    pub(in crate::acp) fn on_disk_change(&mut self, found: SnapshotChange) {
        let path = self.workspace.absolute(&found.path);
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
        let latest = self.latest_change_this_turn(&path).map(|tracked| tracked.change.id);
        if let Some(tracked) = latest.and_then(|id| self.files.changes.get(&id)) {
            let on_disk = tracked.change.on_disk().ok().flatten();
            if on_disk == new || tracked.change.phase == ChangePhase::Writing {
                return;
            }
        }
        if self.files.saved_by_person.contains(&path) {
            return self.saved_by_person_changed(path);
        }
        let mut old = old;
        if let Some(id) = latest
            && let Some(tracked) = self.files.changes.get(&id)
        {
            let on_disk = tracked.change.on_disk().ok().flatten();
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
    pub(in crate::acp) fn found_by_tool_diff(
        &mut self,
        path: String,
        old_text: Option<String>,
        new_text: String,
        now: String,
    ) {
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

    pub(in crate::acp) fn check_tool_diffs(&mut self) {
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

    pub(in crate::acp) fn add_unreviewable(&mut self, path: String, reason: String) {
        if self.latest_change_this_turn(&path).is_some() {
            return;
        }
        let label = self.label_of(&path);
        let id = self.files.next_change;
        self.files.next_change += 1;
        let reason = format!("The agent changed {label}, {reason}: it is not reviewed line by line");
        self.add_change(FileChange::unreviewable(id, path, label, ChangeOrigin::Agent, reason));
    }

    pub(in crate::acp) fn scan_changes(&mut self) {
        let Some(base) = self.files.snapshots.base.clone() else { return };
        if self.files.snapshots.scanning {
            self.files.snapshots.again = true;
            return;
        }
        self.files.snapshots.scanning = true;
        self.events.push_back(AcpEvent::ScanChanges { base });
    }
}
