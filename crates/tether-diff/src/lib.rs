//! Text diffing for Tether's file review: line hunks between two versions of a file, applying or
//! reverting a chosen subset of them, word-level highlights inside changed lines, and unified
//! patches for the agent and the audit log. [`diff_ranges`] gives the hunks as line numbers only,
//! for a caller that holds both texts (the host, which would otherwise pay for a JavaScript string
//! per changed line).
//!
//! The diff itself is the `similar` crate's Myers (see the `search` module, which also hashes
//! each line once so that the search compares integers); this crate adds what review needs around
//! it: lines and words split as Tether shows them, hunks a person can pick from (with the lines a
//! large rewrite happens to share folded into one replacement, see `hunks`), applying and reverting
//! a chosen subset exactly, GNU-compatible patches, and a budget.
//!
//! # Budget
//!
//! It runs as WASM inside the VS Code extension host, which a diff must not block for long, so a
//! [`Budget`] bounds each diff's search by a deadline: [`Budget::NANOS_PER_STEP`] of time per step,
//! counted from the start of the search (the default, a million steps, is 10 ms). The linear work
//! before it (splitting, hashing and numbering lines or words, setting aside those that cannot
//! match) is not bounded and always done. A diff whose search is still running at its deadline
//! stops there: what similar had not resolved is left as one
//! replacement per unresolved region, the diff says it is `degraded` (approximate, at worst one
//! hunk replacing everything between the common first and last lines), and its hunks are still
//! exact for applying and reverting. On wasm32 the clock is `performance.now()`, through similar's
//! `wasm32_web_time` feature (std's `Instant` panics on `wasm32-unknown-unknown`).
//!
//! A deadline is wall-clock time, so it is not deterministic: the same large input may come out
//! whole on a fast machine and degraded on a busy one, or in a WASM engine that has not yet
//! compiled the diff with its optimising tier (the first calls after loading). What stays
//! deterministic: a diff whose search ends before its deadline (every ordinary edit) is the same
//! on every machine; the unlimited budget has no deadline and always gives a shortest edit script;
//! a budget of zero steps searches nothing beyond the common first and last lines; and the word
//! highlights' limit on how long a line they split (half the budget's steps, in bytes) is a length,
//! not a time. Without a deadline, a limited budget's diff is a shortest edit script unless the
//! input is large: similar's Myers then takes shortcuts on costly searches (as git's does), and
//! unchanged lines stranded between larger changes are folded into them.
//!
//! Texts are diffed exactly as they are: lines keep their endings (only `\n` ends a line), so
//! CRLF files, mixed endings, a missing final newline, empty files and any Unicode text round-trip
//! byte for byte. An agent's `\n` text for a `\r\n` file is given the file's endings before it is
//! diffed, by the caller (see [`in_endings_of`]). Deliberately absent: three-way merges, fuzzy or
//! offset application of hunks (a hunk whose lines are not exactly where it says is an error: the
//! file changed and the person must see it), quoting of unusual file names in patch headers, and
//! any notion of files or paths.

mod apply;
mod hunks;
mod line_endings;
mod search;
mod unified;
mod words;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use apply::{ApplyError, apply, revert};
pub use hunks::{
    DiffStats, Hunk, HunkRange, LineDiff, LineRange, RangeDiff, diff_lines, diff_ranges, split_lines, stats,
};
pub use line_endings::{LineEnding, in_endings_of};
pub use unified::{PatchOptions, unified_patch};
pub use words::{LinePairWords, TextRange, WordDiff, diff_words, hunk_words};

/// How long one diff may search before it settles for a coarser result, in steps of
/// [`Budget::NANOS_PER_STEP`] each.
///
/// A step used to be one comparison made by a search of this crate's own; the unit stays so that
/// callers' budgets keep their proportions, and it is now time: similar's search must end
/// `max_steps` times 10 ns after it starts. Work that is linear in the input (finding the common
/// start and end, splitting, hashing and numbering lines or words, setting aside those that
/// cannot match) is not counted and is always done. [`Budget::UNLIMITED`] has no deadline. Word highlights also use the budget as a length: a line
/// pair whose changed part is longer than `max_steps / 2` bytes is not split into words but marked
/// as one range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    pub max_steps: u64,
}

impl Budget {
    /// The search time one step buys.
    pub const NANOS_PER_STEP: u64 = 10;

    /// 10 ms of search: enough for any ordinary edit of a large file, and small enough that a
    /// diff of a few megabytes that runs out still takes about the host's 16 ms, linear work
    /// included. Word highlights of a line pair whose changed part is longer than 500 KB are one
    /// coarse range.
    pub const DEFAULT: Budget = Budget { max_steps: 1_000_000 };

    /// No limit: always a shortest edit script (similar's raw Myers, without the shortcuts the
    /// limited budgets take on expensive inputs), however long it takes. For tests and offline
    /// tools.
    pub const UNLIMITED: Budget = Budget { max_steps: u64::MAX };

    /// How long the diff may search; `None` for no limit.
    pub fn time(&self) -> Option<Duration> {
        if self.is_unlimited() {
            return None;
        }
        Some(Duration::from_nanos(self.max_steps.saturating_mul(Self::NANOS_PER_STEP)))
    }

    pub(crate) fn is_unlimited(&self) -> bool {
        self.max_steps == u64::MAX
    }
}

impl Default for Budget {
    fn default() -> Self {
        Self::DEFAULT
    }
}
