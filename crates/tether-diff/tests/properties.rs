//! Property tests over generated texts with CRLF and mixed endings, missing final newlines, empty
//! files and non-ASCII text (multi-byte, combining marks, emoji): what the review relies on holds
//! for every diff, also when the budget runs out.

use proptest::prelude::*;
use tether_diff::{Budget, DiffStats, Hunk, apply, diff_lines, diff_ranges, diff_words, revert, split_lines, stats};

/// Line contents chosen so that generated texts share many lines (as real edits do) and cover
/// the awkward cases: an empty line, a lone `\r` inside a line, a decomposed accent, an emoji
/// with a skin tone modifier, CJK text.
const CONTENTS: &[&str] = &["a", "b", "fn x() {", "}", "", "a\r", "e\u{301}t\u{e9}", "👍🏽 ok", "日本語", "  x = 1;"];
const ENDINGS: &[&str] = &["\n", "\n", "\n", "\r\n", ""];

fn lines() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(
        (0..CONTENTS.len(), 0..ENDINGS.len()).prop_map(|(c, e)| format!("{}{}", CONTENTS[c], ENDINGS[e])),
        0..14,
    )
}

/// An old text and a new one: either an edit of the old (lines kept, dropped, replaced or
/// inserted) or an unrelated text.
fn text_pair() -> impl Strategy<Value = (String, String)> {
    let edited = lines().prop_flat_map(|old| {
        let edits = prop::collection::vec((0..4u8, lines()), old.len() + 1);
        (Just(old), edits)
    });
    let edited = edited.prop_map(|(old, edits)| {
        let mut new = String::new();
        for (i, (edit, inserted)) in edits.iter().enumerate() {
            let line = old.get(i).map(String::as_str).unwrap_or_default();
            match edit {
                0 | 1 => new.push_str(line),
                2 => new.extend(inserted.iter().map(String::as_str)),
                _ => {
                    new.extend(inserted.iter().map(String::as_str));
                    new.push_str(line);
                }
            }
        }
        (old.concat(), new)
    });
    prop_oneof![3 => edited, 1 => (lines(), lines()).prop_map(|(a, b)| (a.concat(), b.concat()))]
}

/// The length of a longest common subsequence of lines, by the textbook table: the oracle that
/// says how many lines a minimal diff changes.
fn lcs(old: &str, new: &str) -> usize {
    let (a, b): (Vec<&str>, Vec<&str>) = (split_lines(old).collect(), split_lines(new).collect());
    let mut table = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            table[i][j] = if a[i] == b[j] { table[i + 1][j + 1] + 1 } else { table[i + 1][j].max(table[i][j + 1]) };
        }
    }
    table[0][0]
}

fn minimal_stats(old: &str, new: &str) -> DiffStats {
    let common = lcs(old, new);
    DiffStats { added: split_lines(new).count() - common, removed: split_lines(old).count() - common }
}

fn subset(count: usize, mask: u64) -> (Vec<usize>, Vec<usize>) {
    (0..count).partition(|i| mask & (1 << (i % 64)) != 0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn applying_and_reverting_all_or_none_is_exact((old, new) in text_pair(), steps in prop_oneof![Just(u64::MAX), 0..300u64]) {
        let diff = diff_lines(&old, &new, &Budget { max_steps: steps });
        let all: Vec<usize> = (0..diff.hunks.len()).collect();
        prop_assert_eq!(apply(&old, &diff.hunks, &all), Ok(new.clone()));
        prop_assert_eq!(apply(&old, &diff.hunks, &[]), Ok(old.clone()));
        prop_assert_eq!(revert(&new, &diff.hunks, &all), Ok(old.clone()));
        prop_assert_eq!(revert(&new, &diff.hunks, &[]), Ok(new.clone()));
        // Hunks are what was removed and added, so their lines are exactly the text's lines.
        for hunk in &diff.hunks {
            prop_assert!(hunk.old.count + hunk.new.count > 0);
            prop_assert_eq!(hunk.removed.len(), hunk.old.count);
            prop_assert_eq!(hunk.added.len(), hunk.new.count);
        }
        if !diff.degraded {
            prop_assert_eq!(diff.stats(), minimal_stats(&old, &new));
        }
    }

    #[test]
    fn a_chosen_subset_is_what_a_second_diff_finds((old, new) in text_pair(), mask in any::<u64>()) {
        let diff = diff_lines(&old, &new, &Budget::UNLIMITED);
        let (chosen, others) = subset(diff.hunks.len(), mask);
        let partial = apply(&old, &diff.hunks, &chosen).expect("fresh hunks apply");
        // Reverting the hunks not chosen from the new text gives the same as keeping the chosen.
        prop_assert_eq!(revert(&new, &diff.hunks, &others), Ok(partial.clone()));

        // A second diff explains the result by the chosen hunks: the same changed lines, no
        // more. (Where equal lines repeat, a minimal diff may place a hunk one line up or down,
        // so the hunks' contents are compared when they are unambiguous, their sizes always.)
        let second = diff_lines(&old, &partial, &Budget::UNLIMITED);
        let chosen_hunks: Vec<Hunk> = chosen.iter().map(|&i| diff.hunks[i].clone()).collect();
        prop_assert_eq!(second.stats(), stats(&chosen_hunks));
        let contents = |hunks: &[Hunk]| hunks.iter().map(|h| (h.old, h.removed.clone(), h.added.clone())).collect::<Vec<_>>();
        let distinct = split_lines(&old).chain(split_lines(&new)).collect::<std::collections::HashSet<_>>().len()
            == split_lines(&old).count() + split_lines(&new).count();
        if distinct {
            prop_assert_eq!(contents(&second.hunks), contents(&chosen_hunks));
        }
    }

    #[test]
    fn word_highlights_cover_every_difference(
        (old, new) in (lines(), lines()).prop_map(|(a, b)| (a.concat(), b.concat())),
        steps in prop_oneof![Just(u64::MAX), 0..50u64],
    ) {
        let words = diff_words(&old, &new, &Budget { max_steps: steps });
        // What is not highlighted is the same in both lines, in the same order.
        let unmarked = |line: &str, ranges: &[tether_diff::TextRange]| {
            let mut rest = Vec::new();
            let mut at = 0;
            for range in ranges {
                prop_assert!(at <= range.start && range.start < range.end);
                rest.push(line[at..range.start].to_owned());
                at = range.end;
            }
            rest.push(line[at..].to_owned());
            // The UTF-16 offsets are what JavaScript's `String.prototype.slice` needs.
            for range in ranges {
                prop_assert_eq!(range.start_utf16, line[..range.start].encode_utf16().count());
                prop_assert_eq!(range.end_utf16, line[..range.end].encode_utf16().count());
            }
            Ok(rest.concat())
        };
        prop_assert_eq!(unmarked(&old, &words.old)?, unmarked(&new, &words.new)?);
        if old == new {
            prop_assert!(words.old.is_empty() && words.new.is_empty());
        }
    }
}

/// Lines as code repeats them: braces, blank lines and `return;` occur many times in any file,
/// so they match all over a rewrite; every other line is unique.
const FREQUENT: &[&str] = &["}\n", "\n", "    return;\n"];

fn code_line(kind: u8, unique: u32) -> String {
    match kind {
        0..=2 => FREQUENT[kind as usize].to_owned(),
        _ => format!("    let value_{unique} = call({unique});\n"),
    }
}

/// A code-like old text of up to 120 lines and a new one: the old one with scattered lines
/// kept, dropped, replaced or inserted, or an independent rewrite. Large enough that frequent
/// lines pass GNU diff's "many matches" threshold, so every path of the search is taken.
fn code_pair() -> impl Strategy<Value = (String, String)> {
    let lines = || prop::collection::vec((0..10u8, any::<u32>()), 0..120);
    let edited = (lines(), prop::collection::vec((0..8u8, 0..10u8, any::<u32>()), 120)).prop_map(|(old, edits)| {
        let mut new = String::new();
        for (&(kind, unique), &(edit, new_kind, new_unique)) in old.iter().zip(&edits) {
            match edit {
                0 => {}
                1 => new.push_str(&code_line(new_kind, new_unique)),
                2 => {
                    new.push_str(&code_line(new_kind, new_unique));
                    new.push_str(&code_line(kind, unique));
                }
                _ => new.push_str(&code_line(kind, unique)),
            }
        }
        (old.iter().map(|&(kind, unique)| code_line(kind, unique)).collect(), new)
    });
    let text = |lines: Vec<(u8, u32)>| lines.iter().map(|&(kind, unique)| code_line(kind, unique)).collect::<String>();
    prop_oneof![3 => edited, 1 => (lines(), lines()).prop_map(move |(a, b)| (text(a), text(b)))]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Whether the search finishes, is cut short by its deadline (a few microseconds, so part of
    /// the search is done and the rest left as replacements), or searches nothing (a zero
    /// budget), the hunks are exact; unless degraded, they are minimal.
    #[test]
    fn every_degradation_stays_exact(
        (old, new) in code_pair(),
        steps in prop_oneof![Just(u64::MAX), Just(0), 1..100u64, 100..3_000u64],
    ) {
        let diff = diff_lines(&old, &new, &Budget { max_steps: steps });
        let all: Vec<usize> = (0..diff.hunks.len()).collect();
        prop_assert_eq!(apply(&old, &diff.hunks, &all), Ok(new.clone()));
        prop_assert_eq!(revert(&new, &diff.hunks, &all), Ok(old.clone()));
        for pair in diff.hunks.windows(2) {
            prop_assert!(pair[0].old.end() < pair[1].old.start, "hunks are apart and in order");
        }
        if !diff.degraded {
            prop_assert_eq!(diff.stats(), minimal_stats(&old, &new));
        }
        // The line numbers alone are the same hunks, whenever the diff does not depend on how far
        // the search got before its deadline.
        let ranges = diff_ranges(&old, &new, &Budget { max_steps: steps });
        if steps == 0 || !(diff.degraded || ranges.degraded) {
            prop_assert_eq!(ranges.degraded, diff.degraded);
            prop_assert_eq!(ranges.hunks, diff.hunks.iter().map(Hunk::range).collect::<Vec<_>>());
        }
    }
}

/// A budget whose deadline never comes in a test: the search a limited budget runs (similar's
/// Myers with its shortcuts for costly inputs, as the host gets it), whatever the machine's speed.
const NO_DEADLINE: Budget = Budget { max_steps: 6_000_000_000_000 };

/// A 20,000-line rewrite in which every line also occurs on the other side, so nothing can be
/// set aside and the search has to work: a diff out of time (here a zero budget, which is out of
/// time from the start) says it is degraded and is still exact, and so is one with the default
/// budget, however far it got.
#[test]
fn a_huge_rewrite_out_of_time_degrades_and_stays_exact() {
    let old: String = (0..20_000).map(|i| format!("line {}\n", i % 97)).collect();
    let new: String = (0..20_000).map(|i| format!("line {}\n", (i * 31 + 7) % 89)).collect();
    let spent = diff_lines(&old, &new, &Budget { max_steps: 0 });
    assert!(spent.degraded);
    // Out of time from the start: everything between the common first and last lines is one
    // replacement.
    assert_eq!(spent.hunks.len(), 1);
    for diff in [spent, diff_lines(&old, &new, &Budget::DEFAULT)] {
        let all: Vec<usize> = (0..diff.hunks.len()).collect();
        assert_eq!(apply(&old, &diff.hunks, &all).as_deref(), Ok(new.as_str()));
        assert_eq!(revert(&new, &diff.hunks, &all).as_deref(), Ok(old.as_str()));
    }
}

/// The common case stays minimal with a limited budget's search: a 50,000-line file with
/// scattered edits.
#[test]
fn scattered_edits_in_a_long_file_stay_minimal() {
    let old: String = (0..50_000).map(|i| format!("line {i}\n")).collect();
    let new: String =
        (0..50_000).map(|i| if i % 1000 == 500 { format!("edited {i}\n") } else { format!("line {i}\n") }).collect();
    let diff = diff_lines(&old, &new, &NO_DEADLINE);
    assert!(!diff.degraded);
    assert_eq!(diff.hunks.len(), 50);
    assert_eq!(diff.stats(), DiffStats { added: 50, removed: 50 });
}

/// A 1 MB single-line file: one line pair, and word highlights that give up on splitting a
/// middle that long but still mark everything that differs.
#[test]
fn a_one_megabyte_line_degrades_word_highlights() {
    let old: String = (0..350_000).map(|i| format!("w{} ", i % 10)).collect();
    let new: String = (0..350_000).map(|i| format!("w{} ", if i % 5000 == 0 { 7 } else { i % 10 })).collect();
    assert!(old.len() > 1_000_000 && new.len() > 1_000_000);
    let diff = diff_lines(&old, &new, &Budget::DEFAULT);
    assert!(!diff.degraded);
    assert_eq!(diff.stats(), DiffStats { added: 1, removed: 1 });

    let words = diff_words(&old, &new, &Budget { max_steps: 10_000 });
    assert!(words.degraded);
    // One range from the first changed word to the last; all outside it is common.
    assert_eq!(words.new.len(), 1);
    let range = words.new[0];
    assert_eq!(&new[range.start..range.start + 2], "w7");
    assert_eq!(new[..range.start], old[..range.start]);
    assert_eq!(new[range.end..], old[range.end..]);
    assert!(new.len() - range.end > 10, "the common suffix stays unmarked");

    let words = diff_words(&old, &new, &Budget::UNLIMITED);
    assert!(!words.degraded);
    assert_eq!(words.new.len(), 70);
}

/// A small deterministic generator (xorshift64), so these examples are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Source-like text from a seeded generator: about a quarter of the lines are the short ones
/// code repeats, the rest unique.
fn code_file(lines: usize, seed: u64) -> Vec<String> {
    let mut rng = Rng(seed);
    (0..lines)
        .map(|_| {
            let roll = rng.next();
            code_line((roll % 12) as u8, (roll >> 20) as u32)
        })
        .collect()
}

/// A file rewritten from scratch shares only braces and blank lines with the old one. A
/// shortest script would pair those up into thousands of one-line hunks; the person wants one
/// replacement, which a limited budget's search gives (it sets such lines aside, as GNU diff does).
#[test]
fn a_rewrite_is_one_replacement() {
    let old = code_file(20_000, 1).concat();
    let new = code_file(20_000, 2).concat();
    let diff = diff_lines(&old, &new, &NO_DEADLINE);
    let all: Vec<usize> = (0..diff.hunks.len()).collect();
    assert_eq!(apply(&old, &diff.hunks, &all).as_deref(), Ok(new.as_str()));
    let largest = diff.hunks.iter().map(|hunk| hunk.old.count).max().unwrap_or(0);
    assert!(diff.hunks.len() <= 10 && largest > 19_900, "{} hunks, the largest {largest} lines", diff.hunks.len());
}

/// Scattered edits too many for a shortest script to be cheap still come out one hunk per edit
/// with a limited budget's search (which settles for good splits once a search grows costly), as
/// a shortest script has them.
#[test]
fn scattered_edits_in_a_costly_diff_stay_fine_grained() {
    let old = code_file(50_000, 3);
    let mut new = old.clone();
    let mut rng = Rng(4);
    for round in 0..500 {
        let at = (rng.next() % new.len() as u64) as usize;
        match round % 3 {
            0 => new[at] = format!("edited {round}\n"),
            1 => new.insert(at, format!("inserted {round}\n")),
            _ => drop(new.remove(at)),
        }
    }
    let (old, new) = (old.concat(), new.concat());
    let minimal = diff_lines(&old, &new, &Budget::UNLIMITED);
    let diff = diff_lines(&old, &new, &NO_DEADLINE);
    assert!(!diff.degraded && !minimal.degraded);
    let all: Vec<usize> = (0..diff.hunks.len()).collect();
    assert_eq!(apply(&old, &diff.hunks, &all).as_deref(), Ok(new.as_str()));
    let (stats, best) = (diff.stats(), minimal.stats());
    assert!(
        stats.added + stats.removed <= (best.added + best.removed) * 105 / 100,
        "{stats:?} against at best {best:?}"
    );
    assert!(
        diff.hunks.len() * 100 >= minimal.hunks.len() * 95,
        "{} hunks against {}",
        diff.hunks.len(),
        minimal.hunks.len()
    );
}
