//! Checkpoints: every prompt is one. Restoring the code to a checkpoint puts every file the
//! agent changed after that prompt back as it was before it, through the same review as the
//! agent's writes (a proposed change per file, kept or rejected hunk by hunk, written only if
//! the file still holds what it was computed against); undoing a restore puts those files back
//! as the restore found them, the same way.
//!
//! What a file was at a checkpoint comes from the session's own change records: the text
//! before the first change to it after the prompt. What the agent left is the text the last
//! change put there, as the person decided it. A file that holds anything else now was edited
//! by the person since the checkpoint: its restore is still proposed (it is theirs to decide)
//! but marked as a conflict, since keeping it reverts their edits too. Nothing is written
//! until the person keeps it.
//!
//! Deliberately absent: files the agent never changed through a change Tether saw (its
//! terminal commands' side effects outside the snapshot's reach) are not restored.

use crate::thread::{RestoreFileView, RestoreId, RestoreState, RestoreView};

use super::*;

/// The restores of one session, and what each is waiting for.
#[derive(Debug, Default)]
pub(in crate::acp) struct Restores {
    plans: BTreeMap<RestoreId, Plan>,
    next: RestoreId,
    /// Restores read back from the log: shown as they were, no longer decidable.
    replayed: BTreeMap<RestoreId, Replayed>,
}

/// One restore (or undo), from the files it reads to the changes it proposed.
#[derive(Debug)]
struct Plan {
    /// Its entry in the thread.
    entry: EntryIndex,
    view: RestoreView,
    /// Each file to restore, in the order the agent first changed them.
    files: Vec<FileTarget>,
    /// The files still being read.
    reading: usize,
    /// The changes it proposed, one a file.
    changes: Vec<ChangeId>,
    /// Its end is in the log (see [`AuditEvent::RestoreSettled`]), as of this state.
    recorded: Option<(RestoreState, bool)>,
    /// The agent's changes it put out of their files, no longer to decide; undoing it brings
    /// them back.
    superseded: Vec<ChangeId>,
}

/// A restore read back from a session's log: where its card and its changes' cards are.
#[derive(Debug)]
struct Replayed {
    entry: EntryIndex,
    changes: Vec<EntryIndex>,
}

/// A file to put back: its text at the checkpoint (`None`: it did not exist) and the text Tether
/// knows was left in it (`None`: absent); `now` once read.
#[derive(Debug)]
struct FileTarget {
    path: String,
    label: String,
    target: Option<String>,
    expected: Option<String>,
    now: Option<Result<Option<String>, String>>,
}

impl AcpClient {
    /// Proposes restoring every file the agent changed after the prompt at `entry` to how it was
    /// before that prompt.
    pub fn restore_code(&mut self, entry: EntryIndex) -> Result<(), IntentError> {
        if self.thread.turn() == &TurnState::Running {
            return Err(IntentError::TurnRunning);
        }
        let Some(Entry::User(message)) = self.thread.entries().get(entry as usize) else {
            return Err(IntentError::UnknownCheckpoint);
        };
        let prompt = crate::session_log::prompt_title(&message.text);
        // The changes after the prompt, oldest first: ids grow with time.
        let mut files: Vec<FileTarget> = Vec::new();
        for tracked in self.files.changes.values().filter(|tracked| tracked.entry > entry) {
            let change = &tracked.change;
            if matches!(change.phase, ChangePhase::Unreviewable { .. }) {
                continue;
            }
            let left = change.on_disk().ok().flatten();
            match files.iter_mut().find(|file| file.path == change.path) {
                Some(file) => file.expected = left,
                None => files.push(FileTarget {
                    path: change.path.clone(),
                    label: change.label.clone(),
                    target: change.old.clone(),
                    expected: left,
                    now: None,
                }),
            }
        }
        self.plan_restore(entry, prompt, None, files);
        Ok(())
    }

    /// Proposes undoing restore `restore`: the files it wrote go back to how it found them.
    pub fn undo_restore(&mut self, restore: RestoreId) -> Result<(), IntentError> {
        if self.thread.turn() == &TurnState::Running {
            return Err(IntentError::TurnRunning);
        }
        let plan = self.restores.plans.get(&restore).ok_or(IntentError::UnknownRestore)?;
        if !plan.view.undoable {
            return Err(IntentError::NothingToUndo);
        }
        let files: Vec<FileTarget> = plan
            .changes
            .iter()
            .filter_map(|id| self.files.changes.get(id))
            .filter(|tracked| tracked.change.applied)
            .map(|tracked| FileTarget {
                path: tracked.change.path.clone(),
                label: tracked.change.label.clone(),
                target: tracked.change.old.clone(),
                expected: tracked.change.on_disk().ok().flatten(),
                now: None,
            })
            .collect();
        let (checkpoint, prompt) = (plan.view.checkpoint, plan.view.prompt.clone());
        self.plan_restore(checkpoint, prompt, Some(restore), files);
        Ok(())
    }

    /// Shows the restore and reads each of its files as they are now.
    fn plan_restore(
        &mut self,
        checkpoint: EntryIndex,
        prompt: String,
        undoes: Option<RestoreId>,
        files: Vec<FileTarget>,
    ) {
        let id = self.restores.next;
        self.restores.next += 1;
        let state = if files.is_empty() { RestoreState::NothingToRestore } else { RestoreState::Reading };
        let view = RestoreView { id, checkpoint, prompt, undoes, state, undoable: false, files: Vec::new() };
        let entry = self.thread.push(Entry::Restore(view.clone()));
        let paths: Vec<String> = files.iter().map(|file| file.path.clone()).collect();
        self.restores.plans.insert(
            id,
            Plan {
                entry,
                view,
                reading: files.len(),
                files,
                changes: Vec::new(),
                recorded: None,
                superseded: Vec::new(),
            },
        );
        for path in paths {
            self.read_whole(path.clone(), ReadTag::Restore { restore: id, path });
        }
    }

    /// A file of restore `restore` was read (`None`: it does not exist).
    pub(in crate::acp) fn on_restore_read(
        &mut self,
        restore: RestoreId,
        path: &str,
        now: Result<Option<String>, String>,
    ) {
        let Some(plan) = self.restores.plans.get_mut(&restore) else { return };
        let Some(file) = plan.files.iter_mut().find(|file| file.path == path && file.now.is_none()) else { return };
        file.now = Some(now);
        plan.reading -= 1;
        if plan.reading == 0 {
            self.propose_restore(restore);
        }
    }

    /// Every file of the restore is read: a change is proposed for each that differs from its
    /// target.
    fn propose_restore(&mut self, restore: RestoreId) {
        let Some(plan) = self.restores.plans.get_mut(&restore) else { return };
        let files = std::mem::take(&mut plan.files);
        let mut views = Vec::new();
        let mut changes = Vec::new();
        for file in files {
            let now = match file.now {
                Some(Ok(now)) => now,
                Some(Err(message)) => {
                    views.push(RestoreFileView {
                        path: file.path,
                        label: file.label,
                        change: None,
                        conflict: false,
                        problem: Some(format!("Cannot read it: {message}")),
                    });
                    continue;
                }
                None => continue,
            };
            if now == file.target {
                continue; // As it was at the checkpoint already.
            }
            let conflict = now != file.expected;
            let id = self.files.next_change;
            self.files.next_change += 1;
            let mut change = FileChange::new(
                id,
                file.path.clone(),
                file.label.clone(),
                ChangeOrigin::Restore,
                now,
                file.target,
                false,
            );
            if conflict {
                change.outcome = Some(
                    "You changed this file after the checkpoint: keeping the restore reverts your changes too"
                        .to_owned(),
                );
            }
            self.add_change(change);
            changes.push(id);
            views.push(RestoreFileView {
                path: file.path,
                label: file.label,
                change: Some(id),
                conflict,
                problem: None,
            });
        }
        let Some(plan) = self.restores.plans.get_mut(&restore) else { return };
        plan.view.state = if changes.is_empty() { RestoreState::NothingToRestore } else { RestoreState::Planned };
        plan.view.files = views;
        plan.changes = changes;
        self.emit_permission_count();
        self.refresh_restore(restore);
        if let Some((restore, changes)) = self.restore_record(restore) {
            self.audit(AuditEvent::RestoreProposed { restore, changes });
        }
    }

    /// A restore's card and its changes, as the log keeps them.
    fn restore_record(&self, restore: RestoreId) -> Option<(serde_json::Value, serde_json::Value)> {
        let plan = self.restores.plans.get(&restore)?;
        let changes: Vec<crate::review::FileChangeView> = plan
            .changes
            .iter()
            .filter_map(|id| self.files.changes.get(id))
            .map(|tracked| tracked.change.view())
            .collect();
        // Views are plain data (no map with non-string keys): they always serialize.
        Some((crate::json_value::to_value(&plan.view).ok()?, crate::json_value::to_value(&changes).ok()?))
    }

    /// A restore read back from the log (`proposed`: its first record): its card and its
    /// changes shown as they were then, for the record; they can no longer be decided.
    pub(in crate::acp) fn replay_restore(&mut self, record: &serde_json::Value, proposed: bool) {
        let Ok(mut view) = crate::json_value::from_value::<RestoreView>(&record["restore"]) else { return };
        let Ok(changes) = crate::json_value::from_value::<Vec<crate::review::FileChangeView>>(&record["changes"])
        else {
            return;
        };
        // Its changes are no longer tracked: nothing of it can be undone from here, and its
        // change cards, shown as they were left, offer nothing (not even their diff: the texts
        // a restore wrote are not in the log).
        view.undoable = false;
        let changes: Vec<crate::review::FileChangeView> = changes
            .into_iter()
            .map(|mut change| {
                if !matches!(change.phase, ChangePhase::Unreviewable { .. }) {
                    change.phase = ChangePhase::Unreviewable { reason: "Reopened from the session's log".to_owned() };
                }
                change
            })
            .collect();
        let id = view.id;
        self.restores.next = self.restores.next.max(id + 1);
        match self.restores.replayed.get(&id).filter(|_| !proposed) {
            Some(replayed) => {
                self.thread.replace(replayed.entry, Entry::Restore(view));
                for (index, change) in replayed.changes.clone().into_iter().zip(changes) {
                    self.thread.replace(index, Entry::FileChange(change));
                }
            }
            None => {
                let entry = self.thread.push(Entry::Restore(view));
                let changes = changes.into_iter().map(|change| self.thread.push(Entry::FileChange(change))).collect();
                self.restores.replayed.insert(id, Replayed { entry, changes });
            }
        }
    }

    /// A change was decided or written: the restore it belongs to (and the one that restore
    /// undoes) are redrawn.
    pub(in crate::acp) fn refresh_restore_of(&mut self, change: ChangeId) {
        let owner = self.restores.plans.iter().find(|(_, plan)| plan.changes.contains(&change)).map(|(id, _)| *id);
        if let Some(restore) = owner {
            self.refresh_restore(restore);
        }
    }

    fn refresh_restore(&mut self, restore: RestoreId) {
        let Some(plan) = self.restores.plans.get(&restore) else { return };
        let written =
            plan.changes.iter().filter_map(|id| self.files.changes.get(id)).any(|tracked| {
                tracked.change.applied && tracked.change.on_disk().ok() != Some(tracked.change.old.clone())
            });
        let undoes = plan.view.undoes;
        let decided = plan
            .changes
            .iter()
            .filter_map(|id| self.files.changes.get(id))
            .all(|tracked| tracked.change.phase == ChangePhase::Settled);
        let Some(plan) = self.restores.plans.get_mut(&restore) else { return };
        plan.view.undoable = written && plan.view.state != RestoreState::Undone;
        // Its card says so once nothing is left to decide, after a reload too.
        if decided && plan.view.state == RestoreState::Planned {
            plan.view.state = RestoreState::Decided;
        }
        let (entry, view) = (plan.entry, plan.view.clone());
        self.thread.replace(entry, Entry::Restore(view));
        // Its end goes to the log once: when every change is decided and written, and again if
        // it is undone.
        let state = (plan.view.state, decided);
        if decided && plan.view.state != RestoreState::Reading && plan.recorded != Some(state) {
            plan.recorded = Some(state);
            if let Some((restore, changes)) = self.restore_record(restore) {
                self.audit(AuditEvent::RestoreSettled { restore, changes });
            }
        }
        // An undo that wrote something has undone its restore.
        if let Some(undone) = undoes.filter(|_| written)
            && let Some(plan) = self.restores.plans.get_mut(&undone)
            && plan.view.state != RestoreState::Undone
        {
            plan.view.state = RestoreState::Undone;
            plan.view.undoable = false;
            let (entry, view) = (plan.entry, plan.view.clone());
            self.thread.replace(entry, Entry::Restore(view));
            if let Some((restore, changes)) = self.restore_record(undone) {
                self.audit(AuditEvent::RestoreSettled { restore, changes });
            }
        }
        let Some(plan) = self.restores.plans.get(&restore) else { return };
        let (prompt, ours) = (plan.view.prompt.clone(), plan.changes.clone());
        // The agent's earlier changes to a file the restore put back whole are no longer in it:
        // keeping or reverting them now would act on the restore's text, so it decided them.
        let written_paths: Vec<String> = ours
            .iter()
            .filter_map(|id| self.files.changes.get(id))
            .filter(|tracked| {
                let change = &tracked.change;
                // Put back whole: a hunk of it rejected may leave some of the agent's change.
                change.applied
                    && change.phase == ChangePhase::Settled
                    && !change.decisions.contains(&HunkState::Rejected)
                    && change.whole != HunkState::Rejected
            })
            .map(|tracked| tracked.change.path.clone())
            .collect();
        if let Some(undone) = undoes {
            // An undo puts the agent's changes back in the files it put back whole: they are to
            // decide again, as before the restore.
            let Some(plan) = self.restores.plans.get_mut(&undone) else { return };
            let (back, still): (Vec<ChangeId>, Vec<ChangeId>) = plan.superseded.iter().partition(|id| {
                self.files.changes.get(id).is_some_and(|tracked| written_paths.contains(&tracked.change.path))
            });
            plan.superseded = still;
            for change in back {
                self.set_phase(change, ChangePhase::Applied);
            }
            return;
        }
        let superseded: Vec<ChangeId> = self
            .files
            .changes
            .values()
            .filter(|tracked| {
                !ours.contains(&tracked.change.id)
                    && tracked.change.origin != ChangeOrigin::Restore
                    && tracked.change.applied
                    && tracked.change.is_decidable()
                    && written_paths.contains(&tracked.change.path)
            })
            .map(|tracked| tracked.change.id)
            .collect();
        for change in &superseded {
            let reason = format!(
                "Restoring the code to before \u{201c}{prompt}\u{201d} put this file back: this change is no longer in it"
            );
            self.set_phase(*change, ChangePhase::Unreviewable { reason });
        }
        if let Some(plan) = self.restores.plans.get_mut(&restore) {
            plan.superseded.extend(superseded);
        }
    }
}
