//! Word-level highlights inside a changed line pair, for the diff card: which words of the old
//! line were replaced and which words of the new line replaced them.

use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;

use crate::Budget;
use crate::hunks::Hunk;
use crate::search::{self, Hashed};

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

    let (old_ranges, new_ranges, degraded) = if old_mid.is_empty() || new_mid.is_empty() {
        (whole(prefix, old_mid), whole(prefix, new_mid), false)
    } else if (old_mid.len() + new_mid.len()) as u64 > budget.max_steps / 2 {
        // Splitting into words is linear work that the deadline does not bound, and a middle this
        // long would leave the search too little time anyway: it is not split at all, and, being
        // a length, this limit gives the same result on every machine.
        (whole(prefix, old_mid), whole(prefix, new_mid), true)
    } else {
        let (old_words, new_words) = (Words::of(old_mid), Words::of(new_mid));
        let searched = search::equal_runs(&old_words.words, &new_words.words, budget);
        let old_runs = searched.runs.iter().map(|run| (run.old, run.len));
        let new_runs = searched.runs.iter().map(|run| (run.new, run.len));
        (
            changed(prefix, old_mid, &old_words.starts, old_runs),
            changed(prefix, new_mid, &new_words.starts, new_runs),
            searched.degraded,
        )
    };
    WordDiff { old: with_utf16(old, old_ranges), new: with_utf16(new, new_ranges), degraded }
}

/// One side's words and where each starts (a byte offset into the text split).
struct Words<'a> {
    starts: Vec<usize>,
    words: Vec<Hashed<'a>>,
}

impl<'a> Words<'a> {
    fn of(text: &'a str) -> Self {
        let mut words = Words { starts: Vec::new(), words: Vec::new() };
        for_each_word(text, |start, word| {
            words.starts.push(start);
            words.words.push(Hashed::new(word));
        });
        words
    }
}

/// Calls `f` with each word of `text` and its byte offset, in order, by Unicode word boundaries.
/// ASCII text, by far the most common and the only kind long enough to matter (minified code,
/// data files), takes a fast path that gives the same words.
fn for_each_word<'a>(text: &'a str, mut f: impl FnMut(usize, &'a str)) {
    if !text.is_ascii() {
        text.split_word_bound_indices().for_each(|(start, word)| f(start, word));
        return;
    }
    let bytes = text.as_bytes();
    let mut start = 0;
    while start < bytes.len() {
        let end = ascii_word_end(bytes, start);
        // ASCII has no multi-byte characters, so every offset is a character boundary.
        f(start, &text[start..end]);
        start = end;
    }
}

/// Where the word starting at `start` of an ASCII text ends, by the rules of UAX #29, which for
/// ASCII come down to: a CR LF pair and a run of spaces are one word each; letters, digits and
/// underscores run together into one word, also across a `:`, `.` or `'` between two letters
/// and a `,`, `;`, `.` or `'` between two digits; anything else is a word of its own.
fn ascii_word_end(bytes: &[u8], start: usize) -> usize {
    let word_byte = |byte: u8| byte.is_ascii_alphanumeric() || byte == b'_';
    let joins = |before: u8, middle: u8, after: u8| {
        (before.is_ascii_alphabetic() && after.is_ascii_alphabetic() && matches!(middle, b':' | b'.' | b'\''))
            || (before.is_ascii_digit() && after.is_ascii_digit() && matches!(middle, b',' | b';' | b'.' | b'\''))
    };
    match bytes[start] {
        b'\r' if bytes.get(start + 1) == Some(&b'\n') => start + 2,
        b' ' => start + 1 + bytes[start + 1..].iter().take_while(|&&byte| byte == b' ').count(),
        first if word_byte(first) => {
            let mut end = start + 1;
            while let Some(&byte) = bytes.get(end) {
                if word_byte(byte) {
                    end += 1;
                } else if bytes.get(end + 1).is_some_and(|&after| joins(bytes[end - 1], byte, after)) {
                    end += 2;
                } else {
                    break;
                }
            }
            end
        }
        _ => start + 1,
    }
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
    words: &[usize],
    runs: impl Iterator<Item = (usize, usize)>,
) -> Vec<(usize, usize)> {
    let byte_at = |word: usize| offset + words.get(word).copied().unwrap_or(mid.len());
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

/// Adds the UTF-16 offsets to byte ranges of `line`, walking the line once (and not at all when
/// it is ASCII, whose UTF-16 offsets are its byte offsets).
fn with_utf16(line: &str, ranges: Vec<(usize, usize)>) -> Vec<TextRange> {
    if line.is_ascii() {
        return ranges
            .into_iter()
            .map(|(start, end)| TextRange { start, end, start_utf16: start, end_utf16: end })
            .collect();
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<(usize, &str)> {
        let mut words = Vec::new();
        for_each_word(text, |start, word| words.push((start, word)));
        words
    }

    /// The fast path must split exactly as `unicode-segmentation` does: every string of up to
    /// four characters from an alphabet with one character of each kind the rules tell apart.
    #[test]
    fn ascii_words_are_unicode_words() {
        let alphabet: Vec<char> = "aZ09_.:,;' \t\r\n\u{b}\"-".chars().collect();
        let mut text = String::new();
        let mut indices = Vec::new();
        for len in 1..=4 {
            indices.clear();
            indices.resize(len, 0);
            loop {
                text.clear();
                text.extend(indices.iter().map(|&i| alphabet[i]));
                assert_eq!(words(&text), text.split_word_bound_indices().collect::<Vec<_>>(), "{text:?}");
                // The next string, counting in base `alphabet.len()`.
                let Some(digit) = indices.iter().rposition(|&i| i + 1 < alphabet.len()) else { break };
                indices[digit] += 1;
                indices[digit + 1..].iter_mut().for_each(|i| *i = 0);
            }
        }
        // Longer strings, where a rule could look further: a deterministic sample.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            text.clear();
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = 5 + (state % 12) as usize;
            for i in 0..len {
                text.push(alphabet[((state >> (4 * i)) % alphabet.len() as u64) as usize]);
            }
            assert_eq!(words(&text), text.split_word_bound_indices().collect::<Vec<_>>(), "{text:?}");
        }
    }
}
