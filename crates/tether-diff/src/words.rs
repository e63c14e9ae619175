//! Word-level highlights inside a changed line pair, for the diff card: which words of the old
//! line were replaced and which words of the new line replaced them.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;

use crate::Budget;
use crate::hunks::Hunk;
use crate::myers::{Meter, common_runs};

/// How far the common prefix or suffix is moved back to reach a word boundary before the
/// middle is split into words; past this the cut stays where it is (on a character boundary).
const BOUNDARY_SEARCH: usize = 256;

/// A range inside one line, as byte offsets (for Rust) and as UTF-16 code unit offsets (for
/// JavaScript strings in the webview). Both are half-open: `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextRange {
    pub start: usize,
    pub end: usize,
    pub start_utf16: usize,
    pub end_utf16: usize,
}

/// The changed words of a line pair. Ranges are in order and never touch: adjacent changed
/// words form one range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WordDiff {
    pub old: Vec<TextRange>,
    pub new: Vec<TextRange>,
    /// The budget ran out (or the differing middle was too long to split into words), so the
    /// ranges are coarser: at worst, everything between the common prefix and suffix.
    pub degraded: bool,
}

/// The word highlights of one removed line paired with one added line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LinePairWords {
    /// Index into the hunk's `removed` lines.
    pub removed: usize,
    /// Index into the hunk's `added` lines.
    pub added: usize,
    pub words: WordDiff,
}

/// Word highlights for the line pairs of a hunk: the i-th removed line is paired with the i-th
/// added line, as far as both go (the rest are wholly removed or added). Each pair gets the
/// whole budget.
pub fn hunk_words(hunk: &Hunk, budget: &Budget) -> Vec<LinePairWords> {
    hunk.removed
        .iter()
        .zip(&hunk.added)
        .enumerate()
        .map(|(i, (old, new))| LinePairWords { removed: i, added: i, words: diff_words(old, new, budget) })
        .collect()
}

/// The changed words between two versions of a line. Words are Unicode word boundaries
/// (UAX #29): runs of letters and digits, runs of spaces, single punctuation marks, and never a
/// split grapheme, so an accent or an emoji modifier stays with its character. Line endings are
/// part of the line, so a changed ending is a changed "word" at the end.
pub fn diff_words(old: &str, new: &str, budget: &Budget) -> WordDiff {
    let (prefix, suffix) = common_ends(old, new);
    let old_mid = &old[prefix..old.len() - suffix];
    let new_mid = &new[prefix..new.len() - suffix];
    let mut meter = Meter::new(budget.max_steps);

    let (old_ranges, new_ranges) = if old_mid.is_empty() || new_mid.is_empty() {
        (whole(prefix, old_mid), whole(prefix, new_mid))
    } else if (old_mid.len() + new_mid.len()) as u64 > budget.max_steps {
        // Splitting into words is linear but not cheap; a middle this long would take most of the
        // budget before the diff even starts.
        meter.give_up();
        (whole(prefix, old_mid), whole(prefix, new_mid))
    } else {
        let old_words: Vec<(usize, &str)> = old_mid.split_word_bound_indices().collect();
        let new_words: Vec<(usize, &str)> = new_mid.split_word_bound_indices().collect();
        let mut ids: HashMap<&str, u32> = HashMap::new();
        let mut intern = |word| {
            let next = ids.len() as u32;
            *ids.entry(word).or_insert(next)
        };
        let old_ids: Vec<u32> = old_words.iter().map(|&(_, word)| intern(word)).collect();
        let new_ids: Vec<u32> = new_words.iter().map(|&(_, word)| intern(word)).collect();
        let runs = common_runs(&old_ids, &new_ids, &mut meter);
        let old_runs = runs.iter().map(|run| (run.old, run.len));
        let new_runs = runs.iter().map(|run| (run.new, run.len));
        (changed(prefix, old_mid, &old_words, old_runs), changed(prefix, new_mid, &new_words, new_runs))
    };
    WordDiff { old: with_utf16(old, old_ranges), new: with_utf16(new, new_ranges), degraded: meter.exhausted() }
}

/// The lengths of the common prefix and suffix, on character boundaries and moved back (within
/// reason) to a place where a word cannot continue, so the middle splits into the same words as
/// the whole line would.
fn common_ends(old: &str, new: &str) -> (usize, usize) {
    let mut prefix = old.bytes().zip(new.bytes()).take_while(|(a, b)| a == b).count();
    while !old.is_char_boundary(prefix) {
        prefix -= 1;
    }
    prefix = back_to_break(old[..prefix].char_indices().rev().map(|(i, c)| (i + c.len_utf8(), c)), prefix, 0);

    let (old_rest, new_rest) = (&old[prefix..], &new[prefix..]);
    let mut suffix = old_rest.bytes().rev().zip(new_rest.bytes().rev()).take_while(|(a, b)| a == b).count();
    while !old_rest.is_char_boundary(old_rest.len() - suffix) {
        suffix -= 1;
    }
    let cut = old_rest.len() - suffix;
    let cut = back_to_break(old_rest[cut..].char_indices().map(|(i, c)| (cut + i, c)), cut, old_rest.len());
    (prefix, old_rest.len() - cut)
}

/// Walks from a cut over the characters the cut would keep in common (each with its offset on
/// the side facing the cut) and returns the first offset next to a character that cannot be part
/// of a word. If the walk reaches the end of the line (`line_end`), that is the break; if no break
/// is near, the cut stays where it is.
fn back_to_break(chars: impl Iterator<Item = (usize, char)>, cut: usize, line_end: usize) -> usize {
    let mut walked = 0;
    for (at, c) in chars {
        if c.is_ascii_whitespace() || c.is_ascii_punctuation() {
            return at;
        }
        walked += 1;
        if walked == BOUNDARY_SEARCH {
            return cut;
        }
    }
    line_end
}

/// A single range covering `mid` (which starts at byte `offset`), or none when it is empty.
fn whole(offset: usize, mid: &str) -> Vec<(usize, usize)> {
    if mid.is_empty() { vec![] } else { vec![(offset, offset + mid.len())] }
}

/// The byte ranges of the words outside the equal runs, adjacent words joined.
fn changed(
    offset: usize,
    mid: &str,
    words: &[(usize, &str)],
    runs: impl Iterator<Item = (usize, usize)>,
) -> Vec<(usize, usize)> {
    let byte_at = |word: usize| offset + words.get(word).map_or(mid.len(), |&(at, _)| at);
    let mut ranges = Vec::new();
    let mut at = 0;
    for (start, len) in runs.chain([(words.len(), 0)]) {
        if start > at {
            ranges.push((byte_at(at), byte_at(start)));
        }
        at = start + len;
    }
    ranges
}

/// Adds the UTF-16 offsets to byte ranges of `line`, walking the line once.
fn with_utf16(line: &str, ranges: Vec<(usize, usize)>) -> Vec<TextRange> {
    let (mut byte, mut utf16) = (0, 0);
    let mut to = |target: usize| {
        utf16 += line[byte..target].chars().map(char::len_utf16).sum::<usize>();
        byte = target;
        utf16
    };
    ranges
        .into_iter()
        .map(|(start, end)| {
            let start_utf16 = to(start);
            TextRange { start, end, start_utf16, end_utf16: to(end) }
        })
        .collect()
}
