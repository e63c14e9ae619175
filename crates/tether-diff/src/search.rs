//! The one place that runs `similar`: the equal runs between two token sequences (lines or words),
//! searched within a [`Budget`], and whether the budget's deadline cut the search short.
//!
//! Before the search, tokens are hashed once (lines while they are split), numbered so that equal
//! tokens have equal ids, and those that occur on one side only are set aside, as GNU diff and git
//! do; similar then compares integers. A limited budget runs similar's Myers, which settles, like
//! git's xdiff, for a good split when a search grows expensive; past the deadline, what it has
//! not resolved is left as one replacement. The unlimited budget runs its raw Myers, which always
//! finds a shortest edit script. Either way the runs describe an exact edit script, which is all
//! that applying and reverting need.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::time::Duration;

use similar::Algorithm;
use similar::algorithms::{DiffHook, diff_slices_deadline};

use crate::Budget;

/// similar's clock: std's, except on wasm32, where std's `Instant` panics and similar's
/// `wasm32_web_time` feature (turned on in Cargo.toml) gives `web_time`'s, which reads
/// `performance.now()`.
#[cfg(target_arch = "wasm32")]
use similar::Instant;
#[cfg(not(target_arch = "wasm32"))]
use std::time::Instant;

/// A token (a line or a word) with its hash computed once, for numbering tokens in a hash table
/// without hashing them again. Equal hashes are confirmed by the text, so a collision costs time,
/// never correctness.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hashed<'a> {
    hash: u64,
    text: &'a str,
}

impl<'a> Hashed<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let bytes = text.as_bytes();
        let mut chunks = bytes.chunks_exact(8);
        let mut hash = 0;
        for chunk in &mut chunks {
            hash = mix(hash, word_of(chunk));
        }
        if !chunks.remainder().is_empty() {
            hash = mix(hash, word_of(chunks.remainder()));
        }
        Self { hash: mix(hash, bytes.len() as u64), text }
    }

    /// The token's text.
    pub(crate) fn text(&self) -> &'a str {
        self.text
    }
}

impl PartialEq for Hashed<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash && same_bytes(self.text.as_bytes(), other.text.as_bytes())
    }
}

/// Whether two byte strings are equal, compared eight bytes at a time (WASM's `memcmp` goes byte
/// by byte).
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.chunks(8).zip(b.chunks(8)).all(|(a, b)| word_of(a) == word_of(b))
}

impl Eq for Hashed<'_> {}

impl Hash for Hashed<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

/// Hashes a [`Hashed`] token by the hash it carries instead of hashing it again.
#[derive(Default)]
struct CarriedHash(u64);

impl Hasher for CarriedHash {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // `Hashed` writes only its hash, as a `u64`; anything else would be mixed in the same way.
        self.0 = bytes.chunks(8).fold(self.0, |hash, chunk| mix(hash, word_of(chunk)));
    }

    fn write_u64(&mut self, hash: u64) {
        self.0 = hash;
    }
}

/// Splits a text into lines as [`crate::split_lines`] does, each hashed as [`Hashed::new`] would,
/// in a single pass over the bytes, eight at a time, that finds the line ends as it hashes.
/// Splitting and hashing every line of both texts is most of a large diff's linear work, and WASM
/// has no vectorised search for the newlines.
pub(crate) fn hashed_lines(text: &str) -> Vec<Hashed<'_>> {
    let bytes = text.as_bytes();
    let mut lines = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        let mut hash = 0;
        let mut at = start;
        let end = loop {
            let Some(chunk) = bytes.get(at..at + 8) else {
                // Fewer than eight bytes are left: the line ends at a newline among them or at the
                // end of the text.
                let rest = &bytes[at..];
                let len = rest.iter().position(|&byte| byte == b'\n').map_or(rest.len(), |newline| newline + 1);
                if len > 0 {
                    hash = mix(hash, word_of(&rest[..len]));
                }
                break at + len;
            };
            let word = word_of(chunk);
            let newlines = zero_bytes(word ^ NEWLINES);
            if newlines == 0 {
                hash = mix(hash, word);
                at += 8;
                continue;
            }
            // The lowest marked byte is the first newline (little-endian: memory order).
            let len = newlines.trailing_zeros() as usize / 8 + 1;
            hash = mix(hash, if len == 8 { word } else { word & ((1 << (8 * len)) - 1) });
            break at + len;
        };
        // Both ends are just after a newline or at an end of the text: character boundaries.
        lines.push(Hashed { hash: mix(hash, (end - start) as u64), text: &text[start..end] });
        start = end;
    }
    lines
}

const MULTIPLIER: u64 = 0x51_7c_c1_b7_27_22_0a_95;
const LOW_SEVEN_BITS: u64 = 0x7f7f_7f7f_7f7f_7f7f;
const NEWLINES: u64 = 0x0a0a_0a0a_0a0a_0a0a;

/// One step of the hash: a rotation and a multiply, as in rustc's FxHash. The hash is fixed, so a
/// file crafted to collide could slow its own diff, never make it wrong.
fn mix(hash: u64, word: u64) -> u64 {
    (hash.rotate_left(23) ^ word).wrapping_mul(MULTIPLIER)
}

/// Up to eight bytes as a little-endian word, missing bytes zero.
fn word_of(bytes: &[u8]) -> u64 {
    if let Some(word) = bytes.first_chunk::<8>() {
        return u64::from_le_bytes(*word);
    }
    bytes.iter().rev().fold(0, |word, &byte| (word << 8) | u64::from(byte))
}

/// The top bit of each byte of `word` that is zero, and no other bit. (The shorter
/// `(x - 0x01..) & !x & 0x80..` also marks some bytes after a zero one.)
fn zero_bytes(word: u64) -> u64 {
    !(((word & LOW_SEVEN_BITS) + LOW_SEVEN_BITS) | word | LOW_SEVEN_BITS)
}

/// A run of `len` equal tokens at `old` in the old sequence and `new` in the new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    pub(crate) old: usize,
    pub(crate) new: usize,
    pub(crate) len: usize,
}

/// The equal runs of an edit script from `old` to `new`, in ascending order and apart (two runs
/// always have a change between them), and whether the search ran out of time. Everything between
/// two runs is a change.
pub(crate) struct Runs {
    pub(crate) runs: Vec<Run>,
    pub(crate) degraded: bool,
}

/// Dense ids for the tokens of both sides, equal tokens getting equal ids, so that similar's
/// search, which compares the same unchanged lines many times over (every snake, at every level
/// of its divide and conquer), compares integers; each token's text is compared once, here.
///
/// Most of a new version follows the old one line for line, so a new token is first compared with
/// the old token expected next (the one after the old token the previous new token matched, if
/// that occurs only once): an in-order comparison that is much cheaper than looking the token up
/// in the table of a large file, which mostly misses the cache.
fn interned<'a>(old: &[Hashed<'a>], new: &[Hashed<'a>]) -> (Vec<u32>, Vec<u32>) {
    let mut table: HashMap<Hashed<'a>, u32, BuildHasherDefault<CarriedHash>> =
        HashMap::with_capacity_and_hasher(old.len(), BuildHasherDefault::default());
    let mut id_of = |token: &Hashed<'a>| {
        let next = table.len() as u32;
        *table.entry(*token).or_insert(next)
    };
    let old_ids: Vec<u32> = old.iter().map(&mut id_of).collect();
    // Where each old token occurs, if it occurs once.
    const NOWHERE: usize = usize::MAX;
    const SEVERAL: usize = usize::MAX - 1;
    let mut only_at = vec![NOWHERE; old_ids.iter().max().map_or(0, |&max| max as usize + 1)];
    for (at, &id) in old_ids.iter().enumerate() {
        let slot = &mut only_at[id as usize];
        *slot = if *slot == NOWHERE { at } else { SEVERAL };
    }
    let mut expected = 0;
    let new_ids = new
        .iter()
        .map(|token| {
            if old.get(expected) == Some(token) {
                expected += 1;
                return old_ids[expected - 1];
            }
            let id = id_of(token);
            if let Some(&at) = only_at.get(id as usize).filter(|&&at| at < SEVERAL) {
                expected = at + 1;
            }
            id
        })
        .collect();
    (old_ids, new_ids)
}

/// How many tokens both sides must have before a limited budget's search sets aside confusing
/// tokens (see [`kept_tokens`]) and the line diff folds unchanged lines stranded amid larger
/// changes into them: from this size on similar's Myers takes shortcuts that give up a shortest
/// script anyway, so smaller diffs stay shortest edit scripts.
pub(crate) const SHORTCUT_MIN_TOKENS: usize = 512;

/// The indices of the tokens (by id) on one side that are worth searching, given how often each
/// id occurs on the other side. A token that never occurs there can never be part of a common
/// subsequence, so setting it aside (as GNU diff and git do) leaves the result as it was, shortest
/// included, while scattered edits and rewrites, whose changed lines are mostly new ones, leave
/// far less to search: the search's cost grows with the square of the edits it has to find.
///
/// With `confusing` set, so are tokens that occur often on the other side (blank lines, lone
/// braces) when the nearest tokens before and after them that do not are both ones that never
/// occur there: they sit amid changed text and would only match by chance, pairing up the braces
/// of a rewritten file into thousands of hunks where the person wants one replacement. GNU diff
/// sets them aside too. This one may cost a shortest script its shortness.
fn kept_tokens(tokens: &[u32], other_counts: &[u32], confusing: bool) -> Vec<usize> {
    // GNU diff's threshold for "many matches": 5, doubled for every factor of 4 by which the side
    // is longer than 64 tokens.
    let mut many = 5u32;
    let mut scale = tokens.len() / 64;
    while scale >= 4 {
        scale /= 4;
        many = many.saturating_mul(2);
    }
    let mut kept = Vec::with_capacity(tokens.len());
    // Frequent tokens wait here until the next token that is not frequent says whether they are
    // surrounded by changes. The start of the side counts as unchanged, since whatever precedes it
    // matched, and so does its end.
    let mut pending = Vec::new();
    let mut after_change = false;
    for (at, &id) in tokens.iter().enumerate() {
        let matches = other_counts[id as usize];
        if confusing && matches > many {
            pending.push(at);
            continue;
        }
        let changed = matches == 0;
        if changed && after_change {
            pending.clear();
        } else {
            kept.append(&mut pending);
        }
        after_change = changed;
        if !changed {
            kept.push(at);
        }
    }
    kept.append(&mut pending);
    kept
}

/// How often each id occurs in `ids`.
fn counts(ids: &[u32], distinct: usize) -> Vec<u32> {
    let mut counts = vec![0u32; distinct];
    ids.iter().for_each(|&id| counts[id as usize] = counts[id as usize].saturating_add(1));
    counts
}

/// Collects the equal runs similar reports on the kept tokens, as runs of the whole sequences:
/// tokens that were set aside may sit between two kept ones, so a run of kept tokens maps back
/// token by token, joining what is still contiguous.
struct EqualRuns<'a> {
    old_kept: &'a [usize],
    new_kept: &'a [usize],
    runs: Vec<Run>,
}

impl DiffHook for EqualRuns<'_> {
    type Error = std::convert::Infallible;

    fn equal(&mut self, old: usize, new: usize, len: usize) -> Result<(), Self::Error> {
        for (&old, &new) in self.old_kept[old..old + len].iter().zip(&self.new_kept[new..new + len]) {
            match self.runs.last_mut() {
                Some(last) if last.old + last.len == old && last.new + last.len == new => last.len += 1,
                _ => self.runs.push(Run { old, new, len: 1 }),
            }
        }
        Ok(())
    }
}

/// When a search that starts at `started` must stop, for `budget`; `None` for no limit. A budget of
/// zero steps gives a deadline already past, so that similar searches nothing and the result does
/// not depend on how fast the clock ticks.
fn deadline(budget: &Budget, started: Instant) -> Option<Instant> {
    let time = budget.time()?;
    if time.is_zero() {
        return Some(started.checked_sub(Duration::from_nanos(1)).unwrap_or(started));
    }
    // A time too far ahead to represent is as good as no limit.
    started.checked_add(time)
}

/// The equal runs between `old` and `new`, searched with `budget`'s algorithm until its deadline.
/// The deadline counts from the start of the search: the linear work before it (numbering the
/// tokens, setting aside those that cannot match) is always done, as is splitting and hashing
/// them before this is called.
pub(crate) fn equal_runs<'a>(old: &[Hashed<'a>], new: &[Hashed<'a>], budget: &Budget) -> Runs {
    // Nothing can be equal when a side is empty, and two single tokens are equal or not: no
    // search, so nothing that the deadline could have cut short.
    if old.is_empty() || new.is_empty() {
        return Runs { runs: Vec::new(), degraded: false };
    }
    if old.len() == 1 && new.len() == 1 {
        let runs = if old[0] == new[0] { vec![Run { old: 0, new: 0, len: 1 }] } else { Vec::new() };
        return Runs { runs, degraded: false };
    }
    let (old_ids, new_ids) = interned(old, new);
    let distinct = old_ids.iter().chain(&new_ids).max().map_or(0, |&max| max as usize + 1);
    let confusing = !budget.is_unlimited() && old.len().min(new.len()) >= SHORTCUT_MIN_TOKENS;
    let old_kept = kept_tokens(&old_ids, &counts(&new_ids, distinct), confusing);
    let new_kept = kept_tokens(&new_ids, &counts(&old_ids, distinct), confusing);
    let old_reduced: Vec<u32> = old_kept.iter().map(|&at| old_ids[at]).collect();
    let new_reduced: Vec<u32> = new_kept.iter().map(|&at| new_ids[at]).collect();
    let algorithm = if budget.is_unlimited() { Algorithm::RawMyers } else { Algorithm::Myers };
    let mut collect = EqualRuns { old_kept: &old_kept, new_kept: &new_kept, runs: Vec::new() };
    let deadline = deadline(budget, Instant::now());
    // Collecting runs cannot fail.
    let Ok(()) = diff_slices_deadline(algorithm, &mut collect, &old_reduced, &new_reduced, deadline);
    // similar does not say whether it gave up; it only gives up once the deadline has passed, so a
    // search that ended before the deadline is complete. One that ended after may have been cut
    // short (or may have finished just in time, which is then reported as degraded too).
    let degraded = deadline.is_some_and(|deadline| Instant::now() > deadline);
    Runs { runs: collect.runs, degraded }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn distance(old: &[Hashed], new: &[Hashed], runs: &[Run]) -> usize {
        old.len() + new.len() - 2 * runs.iter().map(|run| run.len).sum::<usize>()
    }

    fn tokens(text: &str) -> Vec<Hashed<'_>> {
        text.split(' ').map(Hashed::new).collect()
    }

    #[test]
    fn an_unlimited_search_is_shortest_and_a_spent_one_gives_up() {
        let (old, new) = (tokens("a b c a b b a"), tokens("c b a b a c"));
        let unlimited = equal_runs(&old, &new, &Budget::UNLIMITED);
        // Myers' paper's example: the shortest edit script has five edits.
        assert_eq!(distance(&old, &new, &unlimited.runs), 5);
        assert!(!unlimited.degraded);

        let spent = equal_runs(&old, &new, &Budget { max_steps: 0 });
        assert!(spent.degraded);
        // Nothing was searched: everything between the common ends (none here) is one replacement.
        assert_eq!(spent.runs, vec![]);
    }

    #[test]
    fn equal_tokens_and_only_equal_tokens_share_an_id() {
        let old = "a } b c } d e f } last";
        let news =
            [old, "a } b X c } d e f } last", "a } c } d f } last }", "} } } f e d c b a", "", "new tokens only"];
        for new in news {
            let (old, new) = (tokens(old), tokens(new));
            let (old_ids, new_ids) = interned(&old, &new);
            let all: Vec<(&Hashed, u32)> = old.iter().zip(old_ids).chain(new.iter().zip(new_ids)).collect();
            for (a, a_id) in &all {
                for (b, b_id) in &all {
                    assert_eq!(a.text() == b.text(), a_id == b_id, "{:?} and {:?}", a.text(), b.text());
                }
            }
        }
    }

    #[test]
    fn lines_hashed_in_one_pass_are_split_lines_hashed_one_by_one() {
        // Every line length around the eight-byte words, at every offset, with and without a
        // final newline, CRLF and multi-byte text.
        let mut text = String::new();
        for len in 0..20 {
            text.push_str(&"é".repeat(len % 3));
            text.push_str(&"x".repeat(len));
            text.push_str(if len % 4 == 3 { "\r\n" } else { "\n" });
        }
        for cut in (0..text.len()).filter(|&cut| text.is_char_boundary(cut)) {
            let text = &text[cut..];
            for text in [text, text.trim_end_matches('\n')] {
                let lines = hashed_lines(text);
                let expected: Vec<Hashed> = crate::split_lines(text).map(Hashed::new).collect();
                assert_eq!(
                    lines.iter().map(Hashed::text).collect::<Vec<_>>(),
                    expected.iter().map(Hashed::text).collect::<Vec<_>>()
                );
                assert_eq!(
                    lines.iter().map(|line| line.hash).collect::<Vec<_>>(),
                    expected.iter().map(|line| line.hash).collect::<Vec<_>>()
                );
            }
        }
    }
}
