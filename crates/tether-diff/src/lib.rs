//! Text diffing for Tether's file review: line hunks between two versions of a file, applying or
//! reverting a chosen subset of them, word-level highlights inside changed lines, and unified
//! patches for the agent and the audit log.
//!
//! It runs as WASM inside the VS Code extension host, so it does no IO and reads no clock
//! (`std::time::Instant` panics on `wasm32-unknown-unknown`). Huge inputs are bounded by a
//! [`Budget`] of comparison steps instead of a deadline: the same input always gives the same
//! result, and a diff that runs out of budget degrades to approximate, then coarser, hunks, says
//! so, and is still exact for applying and reverting. [`diff_ranges`] gives the hunks as line
//! numbers only, for a caller that holds both texts (the host, which would otherwise pay for a
//! JavaScript string per changed line).
//!
//! Texts are diffed exactly as they are: lines keep their endings (only `\n` ends a line), so
//! CRLF files, mixed endings, a missing final newline, empty files and any Unicode text round-trip
//! byte for byte.
//!
//! The diff is our own Myers (see the `myers` module for why not `similar`'s). Deliberately absent:
//! three-way merges, fuzzy or offset application of hunks (a hunk whose lines are not exactly
//! where it says is an error: the file changed and the person must see it), quoting of unusual
//! file names in patch headers, patience or histogram diffs, and any notion of files or paths.

mod apply;
mod hunks;
mod intern;
mod myers;
mod unified;
mod words;

use serde::{Deserialize, Serialize};

pub use apply::{ApplyError, apply, revert};
pub use hunks::{
    DiffStats, Hunk, HunkRange, LineDiff, LineRange, RangeDiff, diff_lines, diff_ranges, split_lines, stats,
};
pub use unified::{PatchOptions, unified_patch};
pub use words::{LinePairWords, TextRange, WordDiff, diff_words, hunk_words};

/// How much work one diff may do before it settles for a coarser result.
///
/// A step is one diagonal visited or one pair of lines (or words) compared by the search and,
/// for word highlights, one byte of the changed part of a line split into words. Work that is
/// linear in the input (finding the common start and end, splitting and hashing lines, setting
/// aside lines that occur on one side only) is not counted and is always done.
///
/// The exact search, which finds a shortest edit script, may spend half of the budget (a
/// sixteenth when the texts look rewritten: their only common lines are frequent ones amid
/// changes). What it cannot resolve within that goes to an approximate search that spends the
/// rest, and what that cannot afford either is left as one replacement. Each search stops at the
/// first check after its share is spent, so it overruns by at most one round (`O(n)` steps).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    pub max_steps: u64,
}

impl Budget {
    /// Enough for a minimal diff of ordinary edits (a 50,000-line file with 500 scattered edits
    /// takes about 420,000 steps), and small enough that a diff that spends it all still takes
    /// well under 16 ms in WASM, linear work included. Word highlights of a line pair whose
    /// changed part is longer than half this (500 KB) are one coarse range.
    pub const DEFAULT: Budget = Budget { max_steps: 1_000_000 };

    /// No limit: always a minimal diff, however long it takes. For tests and offline tools.
    pub const UNLIMITED: Budget = Budget { max_steps: u64::MAX };
}

impl Default for Budget {
    fn default() -> Self {
        Self::DEFAULT
    }
}
