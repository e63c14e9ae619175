//! Unified patches (`diff -u` format) for the agent's error messages and the audit log. They are
//! GNU-compatible: `patch` applies them, including CRLF lines and missing final newlines.

use crate::apply::ApplyError;
use crate::hunks::{Hunk, split_lines};

/// How a unified patch is headed and how much context it shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PatchOptions<'a> {
    /// The name on the `---` line. It is written as given: no quoting, no timestamp.
    pub old_name: &'a str,
    /// The name on the `+++` line.
    pub new_name: &'a str,
    /// Unchanged lines shown around each change; hunks whose context would touch are printed as
    /// one, as `diff -u` does. GNU diff's default is 3.
    pub context: usize,
}

/// A unified patch that turns `old` into the text `hunks` describe; empty when there are no
/// hunks. `hunks` may be any in-order subset of a diff's hunks: the new-side line numbers are
/// computed from the hunks printed, so the patch of a subset applies to `old` and gives what
/// [`crate::apply`] gives for that subset.
pub fn unified_patch(old: &str, hunks: &[Hunk], options: &PatchOptions) -> Result<String, ApplyError> {
    // Checking the hunks against the old text is what `apply` does; a patch printed from hunks
    // that do not fit would mislead whoever reads it.
    let all: Vec<usize> = (0..hunks.len()).collect();
    crate::apply(old, hunks, &all)?;
    if hunks.is_empty() {
        return Ok(String::new());
    }

    let lines: Vec<&str> = split_lines(old).collect();
    let context = options.context;
    let mut out = format!("--- {}\n+++ {}\n", options.old_name, options.new_name);
    // How far the new side's line numbers are ahead of the old side's before the current hunk.
    let mut shift: isize = 0;
    let mut rest = hunks;
    while let Some(first) = rest.first() {
        // A group is the hunks whose context ranges touch: gaps of at most twice the context.
        let group_len =
            1 + rest.windows(2).take_while(|pair| pair[1].old.start - pair[0].old.end() <= 2 * context).count();
        let (group, next) = rest.split_at(group_len);
        rest = next;
        let last = &group[group.len() - 1];

        let old_start = first.old.start.saturating_sub(context);
        let old_end = (last.old.end() + context).min(lines.len());
        let growth: isize = group.iter().map(|hunk| hunk.added.len() as isize - hunk.removed.len() as isize).sum();
        let old_count = old_end - old_start;
        let new_count = (old_count as isize + growth) as usize;
        let new_start = (old_start as isize + shift) as usize;
        shift += growth;
        out.push_str(&format!("@@ -{} +{} @@\n", range(old_start, old_count), range(new_start, new_count)));

        let mut at = old_start;
        for hunk in group {
            lines[at..hunk.old.start].iter().for_each(|line| push_line(&mut out, ' ', line));
            hunk.removed.iter().for_each(|line| push_line(&mut out, '-', line));
            hunk.added.iter().for_each(|line| push_line(&mut out, '+', line));
            at = hunk.old.end();
        }
        lines[at..old_end].iter().for_each(|line| push_line(&mut out, ' ', line));
    }
    Ok(out)
}

/// A hunk header range as GNU diff prints it: 1-based, the count left out when it is 1, and an
/// empty range numbered by the line before it.
fn range(start: usize, count: usize) -> String {
    match count {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{count}", start + 1),
    }
}

fn push_line(out: &mut String, prefix: char, line: &str) {
    out.push(prefix);
    out.push_str(line);
    if !line.ends_with('\n') {
        out.push_str("\n\\ No newline at end of file\n");
    }
}
