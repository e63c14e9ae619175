//! The line diff: two texts split into lines that keep their endings, and the hunks that turn one
//! into the other.

use serde::{Deserialize, Serialize};

use crate::Budget;
use crate::search::{self, Hashed};

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
    /// The budget's deadline passed while the search ran, so the regions it had not resolved by
    /// then are each left as one replacement (in the worst case one hunk replacing everything
    /// between the common first and last lines). The hunks are still exact: applying or reverting
    /// them works as for any other diff.
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
/// shortest line edit script, except for large inputs with a limited budget (see the crate's
/// docs: similar's shortcuts, and unchanged lines stranded amid larger changes folded into them);
/// adjacent deletions and insertions form one hunk, since the person reviews them as one
/// replacement, and two hunks are always separated by at least one unchanged line.
pub fn diff_lines(old: &str, new: &str, budget: &Budget) -> LineDiff {
    let middle = Middle::split(old, new);
    let ranges = middle.diff(budget);
    let lines = |lines: &[Hashed], range: LineRange| {
        let start = range.start - middle.first;
        lines[start..start + range.count].iter().map(|line| line.text().to_owned()).collect()
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
/// hashed. The common ends are found by comparing bytes, which is much cheaper than splitting and
/// hashing lines, and for the usual edit of a large file leaves little in the middle.
struct Middle<'a> {
    /// How many lines the texts share at the start: the index of the first middle line.
    first: usize,
    old: Vec<Hashed<'a>>,
    new: Vec<Hashed<'a>>,
}

impl<'a> Middle<'a> {
    fn split(old: &'a str, new: &'a str) -> Self {
        let (prefix, suffix) = common_line_ends(old.as_bytes(), new.as_bytes());
        let first = count_newlines(&old.as_bytes()[..prefix]);
        // The cuts are at line starts (just after a `\n`) or at the ends of the texts, so they
        // are character boundaries.
        let (old, new) = (&old[prefix..old.len() - suffix], &new[prefix..new.len() - suffix]);
        Self { first, old: search::hashed_lines(old), new: search::hashed_lines(new) }
    }

    fn diff(&self, budget: &Budget) -> RangeDiff {
        let searched = search::equal_runs(&self.old, &self.new, budget);
        let mut hunks = Vec::new();
        let (mut old_at, mut new_at) = (0, 0);
        let ends =
            searched.runs.iter().map(|run| (run.old, run.new, run.len)).chain([(self.old.len(), self.new.len(), 0)]);
        for (old_run, new_run, len) in ends {
            if old_run > old_at || new_run > new_at {
                hunks.push(HunkRange {
                    old: LineRange { start: self.first + old_at, count: old_run - old_at },
                    new: LineRange { start: self.first + new_at, count: new_run - new_at },
                });
            }
            (old_at, new_at) = (old_run + len, new_run + len);
        }
        if !budget.is_unlimited() && self.old.len().min(self.new.len()) >= search::SHORTCUT_MIN_TOKENS {
            hunks = fold_stranded_lines(hunks);
        }
        RangeDiff { hunks, degraded: searched.degraded }
    }
}

/// Joins two hunks, with the unchanged lines between them, when those lines are no more than
/// either hunk changes (the larger of its removed and added lines), as diff-match-patch's
/// semantic cleanup does: a rewritten file shares only braces and blank lines with the old one,
/// which a diff pairs up into thousands of hunks with a brace between, where the person wants one
/// replacement. Unchanged stretches longer than the changes around them, as between scattered
/// edits, are kept. A joined hunk is larger, so it is checked again against the hunk before it.
fn fold_stranded_lines(hunks: Vec<HunkRange>) -> Vec<HunkRange> {
    let size = |hunk: &HunkRange| hunk.old.count.max(hunk.new.count);
    let mut folded: Vec<HunkRange> = Vec::with_capacity(hunks.len());
    for mut hunk in hunks {
        while let Some(before) = folded.last() {
            let between = hunk.old.start - before.old.end();
            if between > size(before) || between > size(&hunk) {
                break;
            }
            hunk = HunkRange {
                old: LineRange { start: before.old.start, count: hunk.old.end() - before.old.start },
                new: LineRange { start: before.new.start, count: hunk.new.end() - before.new.start },
            };
            folded.pop();
        }
        folded.push(hunk);
    }
    folded
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

/// How many leading bytes two byte strings share, compared eight bytes at a time (WASM has no
/// vectorised `memcmp`, and a large file's common start is most of it).
fn common_prefix_len(a: &[u8], b: &[u8]) -> usize {
    let len = a.len().min(b.len());
    let (a, b) = (&a[..len], &b[..len]);
    let words = a.chunks_exact(8).zip(b.chunks_exact(8)).take_while(|(x, y)| same_word(x, y)).count();
    let at = words * 8;
    at + a[at..].iter().zip(&b[at..]).take_while(|(x, y)| x == y).count()
}

/// How many trailing bytes two byte strings share, compared eight bytes at a time.
fn common_suffix_len(a: &[u8], b: &[u8]) -> usize {
    let len = a.len().min(b.len());
    let (a, b) = (&a[a.len() - len..], &b[b.len() - len..]);
    let words = a.rchunks_exact(8).zip(b.rchunks_exact(8)).take_while(|(x, y)| same_word(x, y)).count();
    let at = len - words * 8;
    words * 8 + a[..at].iter().rev().zip(b[..at].iter().rev()).take_while(|(x, y)| x == y).count()
}

/// Whether two eight-byte chunks are equal, compared as one word rather than by `memcmp`.
fn same_word(a: &[u8], b: &[u8]) -> bool {
    a.first_chunk::<8>() == b.first_chunk::<8>()
}

/// How many `\n` bytes there are in `bytes`.
fn count_newlines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&byte| byte == b'\n').count()
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
