//! Text diffing for Tether's file review: line hunks between two versions of a file, applying or
//! reverting a chosen subset of them, word-level highlights inside changed lines, and unified
//! patches for the agent and the audit log.
//!
//! It runs as WASM inside the VS Code extension host, so it does no IO and reads no clock
//! (`std::time::Instant` panics on `wasm32-unknown-unknown`). Huge inputs are bounded by a
//! [`Budget`] of comparison steps instead of a deadline: the same input always gives the same
//! result, and a diff that runs out of budget degrades to coarser hunks, says so, and is still
//! exact for applying and reverting.
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
mod myers;
mod unified;
mod words;

use serde::{Deserialize, Serialize};

pub use apply::{ApplyError, apply, revert};
pub use hunks::{DiffStats, Hunk, LineDiff, LineRange, diff_lines, split_lines, stats};
pub use unified::{PatchOptions, unified_patch};
pub use words::{LinePairWords, TextRange, WordDiff, diff_words, hunk_words};

/// How much work one diff may do before it settles for a coarser result.
///
/// A step is one diagonal visited or one pair of lines (or words) compared by the Myers search;
/// work that is linear in the input (splitting lines, hashing them, trimming the common prefix
/// and suffix) is not counted and is always done. The search stops at the first check after the
/// budget is spent, so it overruns by at most one round (`O(n)` steps).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    pub max_steps: u64,
}

impl Budget {
    /// Enough for a minimal diff of any ordinary edit, and small enough that a diff whose search
    /// runs out still finishes in about 5 ms natively (a 20,000-line rewrite of repeated lines,
    /// release build, linear work included), leaving room for WASM's slowdown within 16 ms.
    pub const DEFAULT: Budget = Budget { max_steps: 1_000_000 };

    /// No limit: always a minimal diff, however long it takes. For tests and offline tools.
    pub const UNLIMITED: Budget = Budget { max_steps: u64::MAX };
}

impl Default for Budget {
    fn default() -> Self {
        Self::DEFAULT
    }
}
