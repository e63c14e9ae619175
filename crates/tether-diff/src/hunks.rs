//! The line diff: two texts split into lines that keep their endings, and the hunks that turn one
//! into the other.

use serde::{Deserialize, Serialize};

use crate::Budget;
use crate::intern::{Interner, common_prefix_len, common_suffix_len, count_newlines};
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
    /// The exact search's share of the budget ran out, so some changed regions were found by
    /// the approximate search (usually as a shortest script has them; a rewrite comes out as one
    /// replacement) or, past the whole budget, left coarse (in the worst case one hunk replacing
    /// everything between the common first and last lines). The hunks are still exact: applying
    /// or reverting them works as for any other diff.
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

/// Where one hunk sits in the old and in the new text, without the lines themselves: all that a
/// caller holding both texts needs (the VS Code host, which would otherwise copy every changed
/// line into a JavaScript string).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HunkRange {
    pub old: LineRange,
    pub new: LineRange,
}

/// The hunks between two texts as line ranges, and whether the budget ran out on the way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RangeDiff {
    pub hunks: Vec<HunkRange>,
    /// As [`LineDiff::degraded`].
    pub degraded: bool,
}

impl Hunk {
    /// Where the hunk sits, without its lines.
    pub fn range(&self) -> HunkRange {
        HunkRange { old: self.old, new: self.new }
    }
}

/// The changed regions between `old` and `new`. Unless the budget runs out, the hunks form a
/// shortest line edit script; adjacent deletions and insertions form one hunk, since the person
/// reviews them as one replacement, and two hunks are always separated by at least one
/// unchanged line.
pub fn diff_lines(old: &str, new: &str, budget: &Budget) -> LineDiff {
    let middle = Middle::split(old, new);
    let ranges = middle.diff(budget);
    let lines = |lines: &[&str], range: LineRange| {
        let start = range.start - middle.first;
        lines[start..start + range.count].iter().map(|&line| line.to_owned()).collect()
    };
    let hunks = ranges
        .hunks
        .iter()
        .map(|hunk| Hunk {
            old: hunk.old,
            new: hunk.new,
            removed: lines(&middle.old, hunk.old),
            added: lines(&middle.new, hunk.new),
        })
        .collect();
    LineDiff { hunks, degraded: ranges.degraded }
}

/// The same hunks as [`diff_lines`], as line ranges only: nothing is copied out of the texts.
pub fn diff_ranges(old: &str, new: &str, budget: &Budget) -> RangeDiff {
    Middle::split(old, new).diff(budget)
}

/// Two texts without the lines they share at the start and at the end, split into lines and
/// interned. The common ends are found by comparing bytes, which is much cheaper than splitting
/// and hashing lines, and for the usual edit of a large file leaves little in the middle.
struct Middle<'a> {
    /// How many lines the texts share at the start: the index of the first middle line.
    first: usize,
    old: Vec<&'a str>,
    new: Vec<&'a str>,
    old_ids: Vec<u32>,
    new_ids: Vec<u32>,
}

impl<'a> Middle<'a> {
    fn split(old: &'a str, new: &'a str) -> Self {
        let (prefix, suffix) = common_line_ends(old.as_bytes(), new.as_bytes());
        let first = count_newlines(&old.as_bytes()[..prefix]);
        // The cuts are at line starts (just after a `\n`) or at the ends of the texts, so they
        // are character boundaries.
        let (old, new) = (&old[prefix..old.len() - suffix], &new[prefix..new.len() - suffix]);
        // Most lines of the new text are lines of the old one, so the table seldom has to grow.
        let mut interner = Interner::with_capacity(count_newlines(old.as_bytes()) + 1);
        let mut middle = Self { first, old: Vec::new(), new: Vec::new(), old_ids: Vec::new(), new_ids: Vec::new() };
        interner.intern_lines(old, &mut middle.old, &mut middle.old_ids);
        interner.intern_lines_like(new, &middle.old, &middle.old_ids, &mut middle.new, &mut middle.new_ids);
        middle
    }

    fn diff(&self, budget: &Budget) -> RangeDiff {
        let mut meter = Meter::new(budget.max_steps);
        let runs = common_runs(&self.old_ids, &self.new_ids, &mut meter);

        let mut hunks = Vec::new();
        let (mut old_at, mut new_at) = (0, 0);
        let ends = runs.iter().map(|run| (run.old, run.new, run.len)).chain([(self.old.len(), self.new.len(), 0)]);
        for (old_run, new_run, len) in ends {
            if old_run > old_at || new_run > new_at {
                hunks.push(HunkRange {
                    old: LineRange { start: self.first + old_at, count: old_run - old_at },
                    new: LineRange { start: self.first + new_at, count: new_run - new_at },
                });
            }
            (old_at, new_at) = (old_run + len, new_run + len);
        }
        RangeDiff { hunks, degraded: meter.degraded() }
    }
}

/// The byte lengths of the whole lines two texts share at the start and at the end (not
/// overlapping). Equal texts share everything as their start.
fn common_line_ends(old: &[u8], new: &[u8]) -> (usize, usize) {
    let same = common_prefix_len(old, new);
    if same == old.len() && same == new.len() {
        return (same, 0);
    }
    // The bytes after the common prefix differ (or one text ended), so the line they are in
    // differs: the shared lines end at the last newline before them.
    let prefix = old[..same].iter().rposition(|&byte| byte == b'\n').map_or(0, |at| at + 1);
    let (old, new) = (&old[prefix..], &new[prefix..]);
    let same = common_suffix_len(old, new);
    let (old_at, new_at) = (old.len() - same, new.len() - same);
    let starts_line = |text: &[u8], at: usize| at == 0 || text[at - 1] == b'\n';
    // The shared lines start at the first place in the common suffix that starts a line in
    // both texts: where the suffix itself starts if it does so in both, otherwise just after its
    // first newline (the bytes before that are common, so it starts a line in both).
    let start = if starts_line(old, old_at) && starts_line(new, new_at) {
        old_at
    } else {
        old[old_at..].iter().position(|&byte| byte == b'\n').map_or(old.len(), |at| old_at + at + 1)
    };
    (prefix, old.len() - start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_line_ends_are_whole_lines_on_both_sides() {
        let ends = |old: &str, new: &str| common_line_ends(old.as_bytes(), new.as_bytes());
        assert_eq!(ends("a\nb\nc\n", "a\nb\nc\n"), (6, 0), "equal texts share everything");
        assert_eq!(ends("a\nb\nc\n", "a\nX\nc\n"), (2, 2));
        // The changed line shares bytes with its neighbours, which must not be cut into.
        assert_eq!(ends("ab\nxy\n", "ab\nxz\nxy\n"), (3, 3));
        assert_eq!(ends("one\ntwo", "one\ntwo\n"), (4, 0), "a last line gaining its newline changed");
        assert_eq!(ends("x\nA", "y\nA"), (0, 1), "a shared last line without a newline");
        assert_eq!(ends("b\n", "a\nb\n"), (0, 2), "the old text is all suffix");
        assert_eq!(ends("a\n", "a\nb\n"), (2, 0), "the old text is all prefix");
        assert_eq!(ends("", "a\n"), (0, 0));
        // A suffix that starts a line in one text only: the line before differs in length.
        assert_eq!(ends("aa\nb\nc\n", "a\nb\nc\n"), (0, 4));
        assert_eq!(ends("q\nab\nc\n", "q\nb\nc\n"), (2, 2));
    }
}
