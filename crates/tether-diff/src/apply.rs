//! Applying a chosen subset of hunks to the old text, and reverting a chosen subset of hunks
//! from the new text (for agents that wrote the file themselves and are reviewed afterwards).
//!
//! Hunks may come back from the webview, and the file may have changed since the diff was taken,
//! so every chosen hunk is checked against the text it is applied to: a hunk whose lines are not
//! there is an error, never a silent overwrite.

use thiserror::Error;

use crate::hunks::{Hunk, LineRange, split_lines};

/// Why chosen hunks could not be applied or reverted.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ApplyError {
    #[error("hunk {index} was chosen, but there are only {count} hunks")]
    UnknownHunk { index: usize, count: usize },
    #[error("hunk {index} lists a different number of lines than its range covers")]
    Malformed { index: usize },
    #[error("hunk {index} overlaps or comes before the hunk chosen ahead of it")]
    OutOfOrder { index: usize },
    #[error("the text no longer has the lines hunk {index} changes (was the file edited since the diff?)")]
    Mismatch { index: usize },
}

/// The old text with exactly the `chosen` hunks (indices into `hunks`, in any order) applied.
/// Choosing all gives the new text, choosing none gives `old`, byte for byte.
pub fn apply(old: &str, hunks: &[Hunk], chosen: &[usize]) -> Result<String, ApplyError> {
    splice(old, hunks, chosen, |hunk| (hunk.old, &hunk.removed, &hunk.added))
}

/// The new text with the `chosen` hunks undone: what reverting part of a change already on disk
/// gives. Reverting all gives the old text; reverting a subset gives what applying the other
/// hunks to the old text gives.
pub fn revert(new: &str, hunks: &[Hunk], chosen: &[usize]) -> Result<String, ApplyError> {
    splice(new, hunks, chosen, |hunk| (hunk.new, &hunk.added, &hunk.removed))
}

/// Replaces, for each chosen hunk, the lines `side` says it expects in `text` by its replacement.
pub(crate) fn splice<'h>(
    text: &str,
    hunks: &'h [Hunk],
    chosen: &[usize],
    side: impl Fn(&'h Hunk) -> (LineRange, &'h Vec<String>, &'h Vec<String>),
) -> Result<String, ApplyError> {
    let mut chosen = chosen.to_vec();
    chosen.sort_unstable();
    chosen.dedup();
    let lines: Vec<&str> = split_lines(text).collect();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for index in chosen {
        let hunk = hunks.get(index).ok_or(ApplyError::UnknownHunk { index, count: hunks.len() })?;
        let (range, expected, replacement) = side(hunk);
        if range.count != expected.len() {
            return Err(ApplyError::Malformed { index });
        }
        if range.start < at {
            return Err(ApplyError::OutOfOrder { index });
        }
        let found = lines.get(range.start..range.end()).ok_or(ApplyError::Mismatch { index })?;
        if !found.iter().eq(expected.iter()) {
            return Err(ApplyError::Mismatch { index });
        }
        lines[at..range.start].iter().for_each(|line| out.push_str(line));
        replacement.iter().for_each(|line| out.push_str(line));
        at = range.end();
    }
    lines[at..].iter().for_each(|line| out.push_str(line));
    Ok(out)
}
