//! The line diff: two texts split into lines that keep their endings, and the hunks that turn one
//! into the other.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::Budget;
use crate::myers::{Meter, common_runs};

/// Splits a text into lines, each with its ending. Only `\n` ends a line (as for GNU diff and
/// patch), so a CRLF line keeps its `\r\n`, a lone `\r` stays inside its line, and a last line
/// without a newline is a line of its own. An empty text has no lines.
pub fn split_lines(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive('\n')
}

/// A range of lines: `count` lines from the 0-based index `start`.
///
/// On the wire it also carries `line`, the 1-based number of its first line for display (for an
/// empty range, the line it sits before). `line` is ignored when a range is read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "LineRangeWire", from = "LineRangeWire")]
pub struct LineRange {
    pub start: usize,
    pub count: usize,
}

impl LineRange {
    /// The 1-based number of the first line, as editors and people count lines.
    pub fn line(&self) -> usize {
        self.start + 1
    }

    /// The 0-based index just past the range.
    pub fn end(&self) -> usize {
        self.start + self.count
    }
}

#[derive(Serialize, Deserialize)]
struct LineRangeWire {
    start: usize,
    count: usize,
    #[serde(default, skip_deserializing)]
    line: usize,
}

impl From<LineRange> for LineRangeWire {
    fn from(range: LineRange) -> Self {
        Self { start: range.start, count: range.count, line: range.line() }
    }
}

impl From<LineRangeWire> for LineRange {
    fn from(wire: LineRangeWire) -> Self {
        Self { start: wire.start, count: wire.count }
    }
}

/// One changed region: the `old` lines, which are `removed`, are replaced by the `new` lines,
/// which are `added`. Both lists hold whole lines with their endings, so they are exactly the
/// bytes that change. Hunks carry no context: the unified patch adds it when it prints them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hunk {
    pub old: LineRange,
    pub new: LineRange,
    pub removed: Vec<String>,
    pub added: Vec<String>,
}

/// How many lines a change adds and removes, as a "+12 −3" badge shows it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffStats {
    pub added: usize,
    pub removed: usize,
}

/// The hunks between two texts, in order, and whether the budget ran out on the way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LineDiff {
    pub hunks: Vec<Hunk>,
    /// The budget ran out, so some changed regions are coarser than they need be (in the worst
    /// case one hunk replacing everything between the common first and last lines). The hunks
    /// are still exact: applying or reverting them works as for any other diff.
    pub degraded: bool,
}

impl LineDiff {
    pub fn stats(&self) -> DiffStats {
        stats(&self.hunks)
    }
}

/// The added and removed line counts of some hunks.
pub fn stats(hunks: &[Hunk]) -> DiffStats {
    hunks.iter().fold(DiffStats::default(), |total, hunk| DiffStats {
        added: total.added + hunk.new.count,
        removed: total.removed + hunk.old.count,
    })
}

/// The changed regions between `old` and `new`. Unless the budget runs out, the hunks form a
/// shortest line edit script; adjacent deletions and insertions form one hunk, since the person
/// reviews them as one replacement, and two hunks are always separated by at least one
/// unchanged line.
pub fn diff_lines(old: &str, new: &str, budget: &Budget) -> LineDiff {
    let old_lines: Vec<&str> = split_lines(old).collect();
    let new_lines: Vec<&str> = split_lines(new).collect();
    let mut ids: HashMap<&str, u32> = HashMap::new();
    let mut intern = |line| {
        let next = ids.len() as u32;
        *ids.entry(line).or_insert(next)
    };
    let old_ids: Vec<u32> = old_lines.iter().map(|&line| intern(line)).collect();
    let new_ids: Vec<u32> = new_lines.iter().map(|&line| intern(line)).collect();

    let mut meter = Meter::new(budget.max_steps);
    let runs = common_runs(&old_ids, &new_ids, &mut meter);

    let mut hunks = Vec::new();
    let (mut old_at, mut new_at) = (0, 0);
    let ends = runs.iter().map(|run| (run.old, run.new, run.len)).chain([(old_lines.len(), new_lines.len(), 0)]);
    for (old_run, new_run, len) in ends {
        if old_run > old_at || new_run > new_at {
            hunks.push(Hunk {
                old: LineRange { start: old_at, count: old_run - old_at },
                new: LineRange { start: new_at, count: new_run - new_at },
                removed: old_lines[old_at..old_run].iter().map(|&line| line.to_owned()).collect(),
                added: new_lines[new_at..new_run].iter().map(|&line| line.to_owned()).collect(),
            });
        }
        (old_at, new_at) = (old_run + len, new_run + len);
    }
    LineDiff { hunks, degraded: meter.exhausted() }
}
