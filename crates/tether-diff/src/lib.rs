//! Text diffing for Tether, on `similar`: line hunks between two versions of a file, their
//! added/removed counts, and unified patches (for the agent and for logs).
//!
//! Files arrive as whole strings; lines keep their endings, so CRLF files and a missing final
//! newline are diffed as they are rather than normalised.
//!
//! Deliberately absent so far (they come with the file-review issue): word-level highlights,
//! applying or reverting a chosen subset of hunks, and deadlines that degrade huge inputs to a
//! whole-file replacement.

use serde::Serialize;
use similar::{DiffTag, TextDiff};

/// Lines of context around each hunk, as in `diff -u`.
pub const CONTEXT_LINES: usize = 3;

/// One changed region: `old_len` lines from `old_start` replaced by `new_len` lines at
/// `new_start` (0-based line indices).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hunk {
    pub old_start: u32,
    pub old_len: u32,
    pub new_start: u32,
    pub new_len: u32,
}

/// How many lines a change adds and removes, as a "+12 −3" badge shows it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct DiffStats {
    pub added: u32,
    pub removed: u32,
}

/// The changed regions between `old` and `new`, in order, without context. Adjacent deletions
/// and insertions form one hunk, since the person reviews them as one replacement.
pub fn line_hunks(old: &str, new: &str) -> Vec<Hunk> {
    let diff = TextDiff::from_lines(old, new);
    let mut hunks: Vec<Hunk> = Vec::new();
    for op in diff.ops() {
        if op.tag() == DiffTag::Equal {
            continue;
        }
        let (old_range, new_range) = (op.old_range(), op.new_range());
        let hunk = Hunk {
            old_start: old_range.start as u32,
            old_len: old_range.len() as u32,
            new_start: new_range.start as u32,
            new_len: new_range.len() as u32,
        };
        match hunks.last_mut() {
            Some(last)
                if last.old_start + last.old_len == hunk.old_start
                    && last.new_start + last.new_len == hunk.new_start =>
            {
                last.old_len += hunk.old_len;
                last.new_len += hunk.new_len;
            }
            _ => hunks.push(hunk),
        }
    }
    hunks
}

pub fn stats(old: &str, new: &str) -> DiffStats {
    line_hunks(old, new).iter().fold(DiffStats::default(), |total, hunk| DiffStats {
        added: total.added + hunk.new_len,
        removed: total.removed + hunk.old_len,
    })
}

/// A unified patch (`diff -u` format) from `old_name` to `new_name`; empty when the texts are
/// equal.
pub fn unified_patch(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    if old == new {
        return String::new();
    }
    TextDiff::from_lines(old, new).unified_diff().context_radius(CONTEXT_LINES).header(old_name, new_name).to_string()
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    #[test]
    fn replacement_is_one_hunk_and_counts_lines() {
        let old = "a\nb\nc\nd\n";
        let new = "a\nB\nc\nd\ne\n";
        expect![[r#"
            [
                Hunk {
                    old_start: 1,
                    old_len: 1,
                    new_start: 1,
                    new_len: 1,
                },
                Hunk {
                    old_start: 4,
                    old_len: 0,
                    new_start: 4,
                    new_len: 1,
                },
            ]
        "#]]
        .assert_debug_eq(&line_hunks(old, new));
        assert_eq!(stats(old, new), DiffStats { added: 2, removed: 1 });
    }

    #[test]
    fn line_endings_and_missing_final_newline_are_changes() {
        // A file converted to CRLF, or losing its last newline, has really changed: both must
        // show up in review rather than be normalised away.
        assert_eq!(stats("a\nb\n", "a\r\nb\r\n"), DiffStats { added: 2, removed: 2 });
        assert_eq!(stats("a\nb\n", "a\nb"), DiffStats { added: 1, removed: 1 });
        assert_eq!(line_hunks("same\n", "same\n"), vec![]);
    }

    #[test]
    fn unified_patch_reads_like_diff_u() {
        let old = "fn main() {\n    println!(\"hi\");\n}\n";
        let new = "fn main() {\n    println!(\"héllo\");\n}\n";
        expect![[r#"
            --- a/main.rs
            +++ b/main.rs
            @@ -1,3 +1,3 @@
             fn main() {
            -    println!("hi");
            +    println!("héllo");
             }
        "#]]
        .assert_eq(&unified_patch(old, new, "a/main.rs", "b/main.rs"));
        assert_eq!(unified_patch(old, old, "a", "b"), "");
    }

    #[test]
    fn empty_files() {
        assert_eq!(stats("", "x\ny\n"), DiffStats { added: 2, removed: 0 });
        assert_eq!(stats("x\n", ""), DiffStats { added: 0, removed: 1 });
    }
}
