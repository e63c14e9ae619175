//! File changes under review: one file's change (a write the agent proposed, or an edit it made on
//! disk itself), the person's decision on each of its hunks, and what must be written to carry
//! the decisions out.
//!
//! A change is the pair (old text, new text) of one file and the line hunks between them. Two
//! kinds of change share this model:
//! - a **proposed** write (`fs/write_text_file`): nothing is on disk yet; each hunk is kept or
//!   rejected, and once none is left pending the kept ones are written in one edit;
//! - an **applied** change (the agent wrote the file itself, or a rule or the mode let a write
//!   through): the new text is on disk; each hunk is kept (nothing to do) or reverted at once.
//!   Reverting every hunk gives back the old text exactly, byte for byte, or removes a file the
//!   agent created, or restores one it deleted.
//!
//! Everything here is pure: texts in, texts and [`TextEdit`]s out. The engine turns those into
//! host actions and feeds the results back. Deliberately absent: three-way merging. A file that
//! changed while its change waited is a conflict the person sees (see [`content_hash`]); nothing
//! is ever written over text Tether did not expect.

use serde::{Deserialize, Serialize};
use tether_diff::{ApplyError, Budget, DiffStats, Hunk, LineDiff};
#[cfg(feature = "typescript")]
use ts_rs::TS;

/// Identifies a change for the person's decisions; unique within an engine, never reused.
pub type ChangeId = u64;

/// The most diff lines a change's card shows; its hunks say how many more there are.
pub const MAX_CARD_LINES: usize = 400;

/// The step budget for diffs the engine computes for review (the whole file): enough for any
/// ordinary edit to get a minimal diff, bounded so a huge rewrite degrades instead of blocking the
/// host.
pub const REVIEW_BUDGET: Budget = Budget::DEFAULT;

/// The step budget for word highlights inside one changed line.
const WORD_BUDGET: Budget = Budget { max_steps: 20_000 };

/// How the change reached Tether.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub enum ChangeOrigin {
    /// The agent asked Tether to write the file (`fs/write_text_file`).
    Write,
    /// The agent wrote the file itself; Tether found the change afterwards.
    Agent,
    /// The person restored the file to a checkpoint (or undid such a restore).
    Restore,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub enum FileChangeKind {
    Modified,
    Created,
    Deleted,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub enum HunkState {
    /// Not decided yet. For an applied change, the hunk is on disk.
    Pending,
    Kept,
    /// Rejected before it was written, or reverted after.
    Rejected,
}

/// Where a change stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum ChangePhase {
    /// A write waiting for the person: nothing is on disk yet.
    Proposed,
    /// The change is on disk; each hunk can still be kept or reverted.
    Applied,
    /// Tether is writing what the person decided.
    Writing,
    /// Every hunk is decided and what was decided is on disk.
    Settled,
    /// The file changed while the change waited, so nothing was written; `retry` shows the change
    /// against the file as it is now.
    Conflict { message: String },
    /// Writing failed; the message says why.
    Failed { message: String },
    /// A binary file, or one too large to review line by line: listed, not reviewable by hunk.
    Unreviewable { reason: String },
}

/// Which side of a diff a card line is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub enum DiffSign {
    Context,
    Removed,
    Added,
    /// Unchanged lines left out between two hunks.
    Gap,
}

/// One line of a diff as a card shows it: without its line ending, with the changed words
/// marked (UTF-16 ranges, as the webview's strings count).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct DiffLineView {
    pub sign: DiffSign,
    pub text: String,
    pub highlights: Vec<(u32, u32)>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct HunkView {
    /// The hunk's index in its change, for decisions.
    pub index: u32,
    /// 1-based first line on each side, and line counts.
    pub old_line: u32,
    pub old_count: u32,
    pub new_line: u32,
    pub new_count: u32,
    pub state: HunkState,
    /// The removed then the added lines, up to the card's limit.
    pub lines: Vec<DiffLineView>,
    /// Lines of this hunk the card leaves out.
    pub hidden_lines: u32,
}

/// A change as the chat shows it: a card in the thread, and a row in the changes bar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct FileChangeView {
    pub id: ChangeId,
    /// Absolute path.
    pub path: String,
    /// The path relative to the workspace (absolute when outside it), for people.
    pub label: String,
    pub origin: ChangeOrigin,
    pub kind: FileChangeKind,
    pub phase: ChangePhase,
    /// The lines the change adds and removes, rejected hunks left out: what the file gets (or
    /// got) of it, once the person has decided.
    pub added: u32,
    pub removed: u32,
    pub hunks: Vec<HunkView>,
    /// The decision on a change without hunks (an empty file created or deleted).
    pub whole: HunkState,
    /// The change is in the file (the agent wrote it itself, a rule or the mode let it through, or
    /// it was written after review): rejecting a hunk now reverts it.
    pub applied: bool,
    /// The diff ran out of budget: hunks are coarser than they need be (still exact).
    pub degraded: bool,
    /// What came of a write, once the agent was answered (see `acp::fs::review`).
    pub outcome: Option<String>,
}

/// A replacement in a text, in UTF-16 code units (VS Code's offsets) of the text it applies to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct TextEdit {
    pub start: u32,
    pub end: u32,
    pub text: String,
}

/// A hunk as the host needs it for the diff editor's CodeLens: 0-based lines of the right side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct ReviewHunk {
    pub index: u32,
    /// 0-based first line in the new text, and how many lines the hunk has there (0 for a pure
    /// deletion, which sits before line `newStart`).
    pub new_start: u32,
    pub new_count: u32,
    pub old_start: u32,
    pub old_count: u32,
    pub state: HunkState,
}

/// A change's texts for the diff editor: the left side is always `original`; the right side is
/// `proposed` for a write waiting for review, or the file itself when the change is on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct ReviewDocument {
    pub change: ChangeId,
    pub path: String,
    pub label: String,
    /// The text before the change (empty for a file the change creates).
    pub original: String,
    /// The right side's text when it is not the file itself: the proposed text while nothing is
    /// written, or empty for a file the change deleted. `None`: the right side is the file.
    pub proposed: Option<String>,
    /// The change is in the file: rejecting a hunk reverts it.
    pub applied: bool,
    pub hunks: Vec<ReviewHunk>,
    /// No hunk is left to decide.
    pub settled: bool,
    /// The session whose change it is (set by the window, which knows its sessions).
    #[serde(default)]
    pub session: u64,
}

/// A hash of a file's content, to notice that a file changed while its change waited. FNV-1a:
/// the same on every platform and in WASM, and plenty for telling two versions of a file apart.
pub fn content_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3))
}

/// One file's change and the person's decisions on it.
#[derive(Debug, Clone)]
pub struct FileChange {
    pub id: ChangeId,
    pub path: String,
    pub label: String,
    pub origin: ChangeOrigin,
    /// The text before the change; `None` when the file did not exist.
    pub old: Option<String>,
    /// The text after it; `None` when the agent deleted the file.
    pub new: Option<String>,
    pub diff: LineDiff,
    pub decisions: Vec<HunkState>,
    /// The decision for a change without hunks (an empty file created or deleted), which is
    /// decided as a whole.
    pub whole: HunkState,
    pub phase: ChangePhase,
    /// The new text, minus the rejected hunks, is in the file: always for a change the agent made
    /// itself, and for a write once it was carried out.
    pub applied: bool,
    pub outcome: Option<String>,
}

impl FileChange {
    /// A change from `old` to `new`, proposed (nothing written yet) or applied (on disk).
    pub fn new(
        id: ChangeId,
        path: String,
        label: String,
        origin: ChangeOrigin,
        old: Option<String>,
        new: Option<String>,
        applied: bool,
    ) -> FileChange {
        let diff = tether_diff::diff_lines(old.as_deref().unwrap_or(""), new.as_deref().unwrap_or(""), &REVIEW_BUDGET);
        let decisions = vec![HunkState::Pending; diff.hunks.len()];
        let phase = if applied { ChangePhase::Applied } else { ChangePhase::Proposed };
        FileChange {
            id,
            path,
            label,
            origin,
            old,
            new,
            diff,
            decisions,
            whole: HunkState::Pending,
            phase,
            applied,
            outcome: None,
        }
    }

    /// A change that cannot be reviewed line by line (binary, too large): listed, never written.
    pub fn unreviewable(id: ChangeId, path: String, label: String, origin: ChangeOrigin, reason: String) -> FileChange {
        FileChange {
            id,
            path,
            label,
            origin,
            old: None,
            new: None,
            diff: LineDiff { hunks: Vec::new(), degraded: false },
            decisions: Vec::new(),
            whole: HunkState::Kept,
            phase: ChangePhase::Unreviewable { reason },
            applied: true,
            outcome: None,
        }
    }

    pub fn kind(&self) -> FileChangeKind {
        match (&self.old, &self.new) {
            (None, Some(_)) => FileChangeKind::Created,
            (Some(_), None) => FileChangeKind::Deleted,
            _ => FileChangeKind::Modified,
        }
    }

    /// Whether old and new are the same text: nothing to review.
    pub fn is_empty(&self) -> bool {
        self.old == self.new
    }

    /// Whether any hunk (or the whole change, when it has none) still waits for a decision.
    pub fn has_pending(&self) -> bool {
        if self.diff.hunks.is_empty() {
            self.whole == HunkState::Pending
        } else {
            self.decisions.contains(&HunkState::Pending)
        }
    }

    /// Whether the person can decide something now.
    pub fn is_decidable(&self) -> bool {
        matches!(self.phase, ChangePhase::Proposed | ChangePhase::Applied) && self.has_pending()
    }

    /// Records a decision on one hunk; `None` decides the whole change (every pending hunk).
    /// Returns false when there was nothing left to decide there.
    pub fn decide(&mut self, hunk: Option<usize>, keep: bool) -> bool {
        let state = if keep { HunkState::Kept } else { HunkState::Rejected };
        if self.diff.hunks.is_empty() {
            if self.whole != HunkState::Pending {
                return false;
            }
            self.whole = state;
            return true;
        }
        match hunk {
            Some(index) => match self.decisions.get_mut(index) {
                Some(decision @ HunkState::Pending) => {
                    *decision = state;
                    true
                }
                _ => false,
            },
            None => {
                let mut changed = false;
                for decision in &mut self.decisions {
                    if *decision == HunkState::Pending {
                        *decision = state;
                        changed = true;
                    }
                }
                changed
            }
        }
    }

    /// The file's content with the hunks `in_file` says are in it; `None` means no file.
    pub fn content_with(&self, in_file: impl Fn(HunkState) -> bool) -> Result<Option<String>, ApplyError> {
        if self.diff.hunks.is_empty() {
            let side = if in_file(self.whole) { &self.new } else { &self.old };
            return Ok(side.clone());
        }
        let chosen: Vec<usize> = (0..self.diff.hunks.len()).filter(|&index| in_file(self.decisions[index])).collect();
        // A created file whose every hunk is out never existed; a deleted file whose every hunk
        // is in stays deleted. Otherwise the file exists with the chosen hunks.
        if self.old.is_none() && chosen.is_empty() {
            return Ok(None);
        }
        if self.new.is_none() && chosen.len() == self.diff.hunks.len() {
            return Ok(None);
        }
        tether_diff::apply(self.old.as_deref().unwrap_or(""), &self.diff.hunks, &chosen).map(Some)
    }

    /// What the file holds now, as far as Tether knows: the old text for a proposed write, the
    /// new text minus the reverted hunks for an applied change.
    pub fn on_disk(&self) -> Result<Option<String>, ApplyError> {
        if self.applied { self.content_with(|state| state != HunkState::Rejected) } else { Ok(self.old.clone()) }
    }

    /// The content the person's decisions call for: kept hunks in for a proposed write; every hunk
    /// but the rejected ones for an applied change.
    pub fn decided_content(&self) -> Result<Option<String>, ApplyError> {
        if self.applied {
            self.content_with(|state| state != HunkState::Rejected)
        } else {
            self.content_with(|state| state == HunkState::Kept)
        }
    }

    /// How many hunks are kept and rejected.
    pub fn tally(&self) -> (usize, usize) {
        let kept = self.decisions.iter().filter(|state| **state == HunkState::Kept).count();
        let rejected = self.decisions.iter().filter(|state| **state == HunkState::Rejected).count();
        (kept, rejected)
    }

    /// The lines the change adds and removes, its rejected hunks left out: what the file gets (or
    /// got) of it, as its card and the changes bar count it.
    pub fn decided_stats(&self) -> DiffStats {
        let kept = self.diff.hunks.iter().zip(&self.decisions).filter(|(_, state)| **state != HunkState::Rejected);
        DiffStats {
            added: kept.clone().map(|(hunk, _)| hunk.new.count).sum(),
            removed: kept.map(|(hunk, _)| hunk.old.count).sum(),
        }
    }

    pub fn view(&self) -> FileChangeView {
        let stats = self.decided_stats();
        let mut budget = MAX_CARD_LINES;
        let hunks = self
            .diff
            .hunks
            .iter()
            .enumerate()
            .map(|(index, hunk)| hunk_view(index, hunk, self.decisions[index], &mut budget))
            .collect();
        FileChangeView {
            id: self.id,
            path: self.path.clone(),
            label: self.label.clone(),
            origin: self.origin,
            kind: self.kind(),
            phase: self.phase.clone(),
            added: stats.added as u32,
            removed: stats.removed as u32,
            hunks,
            whole: self.whole,
            applied: self.applied,
            degraded: self.diff.degraded,
            outcome: self.outcome.clone(),
        }
    }

    /// The diff editor's view of this change.
    pub fn document(&self) -> ReviewDocument {
        let proposed = match (&self.new, self.applied) {
            (new, false) => Some(new.clone().unwrap_or_default()),
            // The file is gone: its right side is shown empty rather than as a missing file.
            (None, true) => Some(String::new()),
            (Some(_), true) => None,
        };
        ReviewDocument {
            change: self.id,
            path: self.path.clone(),
            label: self.label.clone(),
            original: self.old.clone().unwrap_or_default(),
            proposed,
            hunks: self.review_hunks(),
            applied: self.applied,
            settled: !self.has_pending(),
            session: 0,
        }
    }

    pub fn review_hunks(&self) -> Vec<ReviewHunk> {
        self.diff
            .hunks
            .iter()
            .enumerate()
            .map(|(index, hunk)| ReviewHunk {
                index: index as u32,
                new_start: hunk.new.start as u32,
                new_count: hunk.new.count as u32,
                old_start: hunk.old.start as u32,
                old_count: hunk.old.count as u32,
                state: self.decisions[index],
            })
            .collect()
    }

    /// A unified patch of the hunks `chosen` selects, for the audit log and for telling the agent
    /// what it did not get.
    pub fn patch(&self, chosen: impl Fn(HunkState) -> bool) -> String {
        let hunks: Vec<Hunk> = self
            .diff
            .hunks
            .iter()
            .zip(&self.decisions)
            .filter(|(_, state)| chosen(**state))
            .map(|(hunk, _)| hunk.clone())
            .collect();
        let old_name = if self.old.is_some() { format!("a/{}", self.label) } else { "/dev/null".to_owned() };
        let new_name = if self.new.is_some() { format!("b/{}", self.label) } else { "/dev/null".to_owned() };
        let options = tether_diff::PatchOptions { old_name: &old_name, new_name: &new_name, context: 3 };
        // The hunks come from diffing this very text, so they always fit it.
        tether_diff::unified_patch(self.old.as_deref().unwrap_or(""), &hunks, &options).unwrap_or_default()
    }
}

fn hunk_view(index: usize, hunk: &Hunk, state: HunkState, budget: &mut usize) -> HunkView {
    let words = tether_diff::hunk_words(hunk, &WORD_BUDGET);
    let mut lines = Vec::new();
    let total = hunk.removed.len() + hunk.added.len();
    // A hunk that changes nothing but line endings would show the same lines twice: each line
    // then says how it ends.
    let only_endings = hunk.removed.len() == hunk.added.len()
        && hunk.removed.iter().zip(&hunk.added).all(|(old, new)| without_ending(old) == without_ending(new));
    for (line_index, text) in hunk.removed.iter().enumerate() {
        if *budget == 0 {
            break;
        }
        let highlights = words.get(line_index).map(|pair| &pair.words.old);
        lines.push(card_line(DiffSign::Removed, text, highlights));
        *budget -= 1;
        if only_endings {
            name_ending(lines.last_mut(), text);
        }
    }
    for (line_index, text) in hunk.added.iter().enumerate() {
        if *budget == 0 {
            break;
        }
        let highlights = words.get(line_index).map(|pair| &pair.words.new);
        lines.push(card_line(DiffSign::Added, text, highlights));
        *budget -= 1;
        if only_endings {
            name_ending(lines.last_mut(), text);
        }
    }
    HunkView {
        index: index as u32,
        old_line: hunk.old.line() as u32,
        old_count: hunk.old.count as u32,
        new_line: hunk.new.line() as u32,
        new_count: hunk.new.count as u32,
        state,
        hidden_lines: (total - lines.len()) as u32,
        lines,
    }
}

/// A line without its ending (`\n` or `\r\n`).
fn without_ending(line: &str) -> &str {
    line.strip_suffix('\n').map_or(line, |rest| rest.strip_suffix('\r').unwrap_or(rest))
}

/// Adds to a card line how `line` ends, for a change of line endings only.
fn name_ending(card_line: Option<&mut DiffLineView>, line: &str) {
    let ending = if line.ends_with("\r\n") {
        "CRLF"
    } else if line.ends_with('\n') {
        "LF"
    } else {
        "no line break"
    };
    if let Some(card_line) = card_line {
        card_line.text.push_str(&format!("  [{ending}]"));
    }
}

/// A card line: the text without its ending, and the word highlights clamped to it.
fn card_line(sign: DiffSign, line: &str, ranges: Option<&Vec<tether_diff::TextRange>>) -> DiffLineView {
    let text = without_ending(line);
    let length = text.encode_utf16().count() as u32;
    let highlights = ranges
        .into_iter()
        .flatten()
        .map(|range| ((range.start_utf16 as u32).min(length), (range.end_utf16 as u32).min(length)))
        .filter(|(start, end)| start < end)
        .collect();
    DiffLineView { sign, text: text.to_owned(), highlights }
}

/// The lines a tool call's diff card shows: each hunk with a little context, gaps between them,
/// up to [`MAX_CARD_LINES`]; and how many lines were left out.
pub fn preview_lines(old: &str, new: &str, budget: &Budget) -> (Vec<DiffLineView>, LineDiff, u32) {
    const CONTEXT: usize = 2;
    let diff = tether_diff::diff_lines(old, new, budget);
    let new_lines: Vec<&str> = tether_diff::split_lines(new).collect();
    let mut lines = Vec::new();
    let mut hidden = 0u32;
    // The first new-side line not yet shown.
    let mut shown_up_to = 0usize;
    for hunk in &diff.hunks {
        let context_start = hunk.new.start.saturating_sub(CONTEXT).max(shown_up_to);
        if context_start > shown_up_to || (shown_up_to == 0 && context_start > 0) {
            lines.push(DiffLineView { sign: DiffSign::Gap, text: String::new(), highlights: Vec::new() });
        }
        let words = tether_diff::hunk_words(hunk, &WORD_BUDGET);
        let mut block: Vec<DiffLineView> = Vec::new();
        block.extend(
            new_lines[context_start..hunk.new.start].iter().map(|line| card_line(DiffSign::Context, line, None)),
        );
        block.extend(
            hunk.removed
                .iter()
                .enumerate()
                .map(|(i, line)| card_line(DiffSign::Removed, line, words.get(i).map(|pair| &pair.words.old))),
        );
        block.extend(
            hunk.added
                .iter()
                .enumerate()
                .map(|(i, line)| card_line(DiffSign::Added, line, words.get(i).map(|pair| &pair.words.new))),
        );
        let context_end = (hunk.new.end() + CONTEXT).min(new_lines.len());
        block
            .extend(new_lines[hunk.new.end()..context_end].iter().map(|line| card_line(DiffSign::Context, line, None)));
        shown_up_to = context_end;
        for line in block {
            if lines.len() < MAX_CARD_LINES {
                lines.push(line);
            } else if line.sign != DiffSign::Context {
                hidden += 1;
            }
        }
    }
    (lines, diff, hidden)
}

/// The edits that turn `from` into `to`, in UTF-16 offsets of `from`: one per hunk of their
/// diff, so that an editor's undo, cursors and folds see each change where it is rather than a
/// whole-file replacement.
pub fn text_edits(from: &str, to: &str) -> Vec<TextEdit> {
    let diff = tether_diff::diff_lines(from, to, &REVIEW_BUDGET);
    let mut line_starts = vec![0u32];
    let mut offset = 0u32;
    for line in tether_diff::split_lines(from) {
        offset += line.encode_utf16().count() as u32;
        line_starts.push(offset);
    }
    diff.hunks
        .iter()
        .map(|hunk| TextEdit {
            start: line_starts[hunk.old.start],
            end: line_starts[hunk.old.end()],
            text: hunk.added.concat(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn applied(old: Option<&str>, new: Option<&str>) -> FileChange {
        let (old, new) = (old.map(str::to_owned), new.map(str::to_owned));
        FileChange::new(1, "/w/f".to_owned(), "f".to_owned(), ChangeOrigin::Agent, old, new, true)
    }

    #[test]
    fn reverting_every_hunk_gives_back_the_old_bytes_or_no_file() {
        let cases = [
            (Some("a\r\nb\r\nc"), Some("a\r\nB\r\nc\r\nd")),
            (Some(""), Some("x")),
            (None, Some("created\n")),
            (Some("deleted\nfile\n"), None),
            (Some("naïve\ncafé\n"), Some("naive\ncafé\n🎉\n")),
        ];
        for (old, new) in cases {
            let mut change = applied(old, new);
            assert_eq!(change.on_disk().unwrap().as_deref(), new, "before any decision the new text is on disk");
            change.decide(None, false);
            assert_eq!(change.on_disk().unwrap().as_deref(), old, "reverting all of {old:?} → {new:?}");
        }
    }

    #[test]
    fn a_proposed_write_writes_only_the_kept_hunks() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        let new = "1\nTWO\n3\n4\n5\n6\n7\nEIGHT\n9\n";
        let mut change = FileChange::new(
            1,
            "/w/f".into(),
            "f".into(),
            ChangeOrigin::Write,
            Some(old.into()),
            Some(new.into()),
            false,
        );
        assert_eq!(change.diff.hunks.len(), 2);
        assert!(change.decide(Some(0), false));
        assert!(!change.decide(Some(0), true), "a decided hunk stays decided");
        assert!(change.has_pending());
        assert!(change.decide(Some(1), true));
        assert!(!change.has_pending());
        assert_eq!(change.decided_content().unwrap().as_deref(), Some("1\n2\n3\n4\n5\n6\n7\nEIGHT\n9\n"));
        assert_eq!(change.on_disk().unwrap().as_deref(), Some(old), "nothing is on disk before it is written");
    }

    #[test]
    fn an_empty_file_created_is_decided_as_a_whole() {
        let mut change =
            FileChange::new(1, "/w/e".into(), "e".into(), ChangeOrigin::Write, None, Some(String::new()), false);
        assert!(change.diff.hunks.is_empty() && change.has_pending());
        assert!(change.decide(None, true));
        assert_eq!(change.decided_content().unwrap(), Some(String::new()));
    }

    #[test]
    fn text_edits_are_in_utf16_offsets_of_the_text_they_apply_to() {
        let from = "é🎉\nkeep\nold\n";
        let to = "é🎉\nkeep\nnew\n";
        let edits = text_edits(from, to);
        // "é🎉\n" is 4 UTF-16 units, "keep\n" 5: the changed line starts at 9.
        assert_eq!(edits, [TextEdit { start: 9, end: 13, text: "new\n".to_owned() }]);
    }
}
