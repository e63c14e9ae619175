//! Readable cases of what the person and the agent see: hunks, word highlights and unified
//! patches, as `expect-test` snapshots (`UPDATE_EXPECT=1 cargo test -p tether-diff` refreshes).

use expect_test::{Expect, expect};
use tether_diff::{Budget, Hunk, PatchOptions, apply, diff_lines, diff_words, hunk_words, revert, unified_patch};

/// Renders hunks the way a review card lists them: ranges 1-based, lines escaped so endings show.
fn render_hunks(hunks: &[Hunk]) -> String {
    let mut out = String::new();
    for hunk in hunks {
        out.push_str(&format!(
            "old {}+{} new {}+{}\n",
            hunk.old.line(),
            hunk.old.count,
            hunk.new.line(),
            hunk.new.count
        ));
        hunk.removed.iter().for_each(|line| out.push_str(&format!("  - {line:?}\n")));
        hunk.added.iter().for_each(|line| out.push_str(&format!("  + {line:?}\n")));
    }
    out
}

fn check_hunks(old: &str, new: &str, expect: Expect) {
    let diff = diff_lines(old, new, &Budget::UNLIMITED);
    assert!(!diff.degraded);
    expect.assert_eq(&render_hunks(&diff.hunks));
}

/// Shows the changed words of a line pair between brackets.
fn check_words(old: &str, new: &str, expect: Expect) {
    let words = diff_words(old, new, &Budget::UNLIMITED);
    let mark = |line: &str, ranges: &[tether_diff::TextRange]| {
        let mut out = String::new();
        let mut at = 0;
        for range in ranges {
            out.push_str(&format!("{}[{}]", &line[at..range.start], &line[range.start..range.end]));
            at = range.end;
        }
        out.push_str(&line[at..]);
        format!("{out:?}")
    };
    expect.assert_eq(&format!("{}\n{}\n", mark(old, &words.old), mark(new, &words.new)));
}

fn patch(old: &str, new: &str, context: usize) -> String {
    let diff = diff_lines(old, new, &Budget::UNLIMITED);
    let options = PatchOptions { old_name: "a/f.txt", new_name: "b/f.txt", context };
    unified_patch(old, &diff.hunks, &options).expect("hunks of a fresh diff fit the old text")
}

#[test]
fn replacements_insertions_and_deletions() {
    check_hunks(
        "a\nb\nc\nd\ne\n",
        "a\nB\nc\nd\ne\nf\n",
        expect![[r#"
            old 2+1 new 2+1
              - "b\n"
              + "B\n"
            old 6+0 new 6+1
              + "f\n"
        "#]],
    );
    check_hunks(
        "",
        "x\ny",
        expect![[r#"
            old 1+0 new 1+2
              + "x\n"
              + "y"
        "#]],
    );
    check_hunks(
        "keep\ndrop\n",
        "keep\n",
        expect![[r#"
            old 2+1 new 2+0
              - "drop\n"
        "#]],
    );
}

#[test]
fn line_endings_are_part_of_the_line() {
    // A line converted to CRLF, or a file losing its last newline, has really changed: both
    // must show up in review rather than be normalised away.
    check_hunks(
        "one\r\ntwo\nthree",
        "one\ntwo\nthree\n",
        expect![[r#"
            old 1+1 new 1+1
              - "one\r\n"
              + "one\n"
            old 3+1 new 3+1
              - "three"
              + "three\n"
        "#]],
    );
}

#[test]
fn hunk_json_carries_display_lines() {
    let diff = diff_lines("a\nb\n", "a\nc\n", &Budget::UNLIMITED);
    let json = serde_json::to_string(&diff).expect("a diff serialises");
    expect![[r#"{"hunks":[{"old":{"start":1,"count":1,"line":2},"new":{"start":1,"count":1,"line":2},"removed":["b\n"],"added":["c\n"]}],"degraded":false}"#]]
    .assert_eq(&json);
    let back: tether_diff::LineDiff = serde_json::from_str(&json).expect("and reads back");
    assert_eq!(back, diff);
}

#[test]
fn word_highlights() {
    check_words(
        "    let total = count + 1;\n",
        "    let total = count * 2;\n",
        expect![[r#"
            "    let total = count [+] [1];\n"
            "    let total = count [*] [2];\n"
        "#]],
    );
    check_words(
        "println!(\"hello world\");",
        "println!(\"hello, brave new world\");",
        expect![[r#"
            "println!(\"hello world\");"
            "println!(\"hello[, brave new] world\");"
        "#]],
    );
    // Graphemes stay whole: the accent stays with its letter and the skin tone with its emoji.
    check_words(
        "cafe\u{301} 👍🏽 ok\n",
        "cafe 👍🏿 ok\n",
        expect![[r#"
            "[cafe\u{301}] [👍🏽] ok\n"
            "[cafe] [👍🏿] ok\n"
        "#]],
    );
    // A changed line ending is marked as exactly the bytes that changed.
    check_words(
        "same\r\n",
        "same\n",
        expect![[r#"
            "same[\r]\n"
            "same\n"
        "#]],
    );
}

#[test]
fn word_ranges_count_utf16_for_javascript() {
    // "日本" is 6 bytes and 2 UTF-16 units; "😀" is 4 bytes and 2 units (a surrogate pair).
    let words = diff_words("日本 😀 x", "日本 😀 y", &Budget::UNLIMITED);
    expect![[r#"
        [
            TextRange {
                start: 12,
                end: 13,
                start_utf16: 6,
                end_utf16: 7,
            },
        ]
    "#]]
    .assert_debug_eq(&words.old);
}

#[test]
fn hunk_words_pair_lines_in_order() {
    let diff = diff_lines("a b\nc d\n", "a B\nc D\ne\n", &Budget::UNLIMITED);
    let pairs = hunk_words(&diff.hunks[0], &Budget::UNLIMITED);
    let shown: Vec<_> =
        pairs.iter().map(|pair| (pair.removed, pair.added, pair.words.old[0].start, pair.words.new[0].start)).collect();
    assert_eq!(shown, vec![(0, 0, 2, 2), (1, 1, 2, 2)]);
}

#[test]
fn unified_patches_read_like_diff_u() {
    let old = "fn main() {\n    println!(\"hi\");\n}\n";
    let new = "fn main() {\n    println!(\"héllo\");\n}\n";
    expect![[r#"
        --- a/f.txt
        +++ b/f.txt
        @@ -1,3 +1,3 @@
         fn main() {
        -    println!("hi");
        +    println!("héllo");
         }
    "#]]
    .assert_eq(&patch(old, new, 3));
    assert_eq!(patch(old, old, 3), "");
}

#[test]
fn unified_patches_mark_missing_newlines_and_join_close_hunks() {
    let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\nlast";
    let new = "1\nTWO\n3\n4\n5\n6\n7\nEIGHT\n9\nlast\n";
    expect![[r#"
        --- a/f.txt
        +++ b/f.txt
        @@ -1,3 +1,3 @@
         1
        -2
        +TWO
         3
        @@ -7,4 +7,4 @@
         7
        -8
        +EIGHT
         9
        -last
        \ No newline at end of file
        +last
    "#]]
    .assert_eq(&patch(old, new, 1));
    expect![[r#"
        --- a/f.txt
        +++ b/f.txt
        @@ -1,10 +1,10 @@
         1
        -2
        +TWO
         3
         4
         5
         6
         7
        -8
        +EIGHT
         9
        -last
        \ No newline at end of file
        +last
    "#]]
    .assert_eq(&patch(old, new, 3));
    expect![[r#"
        --- a/f.txt
        +++ b/f.txt
        @@ -0,0 +1 @@
        +only
    "#]]
    .assert_eq(&patch("", "only\n", 3));
}

#[test]
fn apply_and_revert_chosen_hunks() {
    let old = "a\nb\nc\nd\ne\n";
    let new = "A\nb\nc\nd\nE\n";
    let hunks = diff_lines(old, new, &Budget::UNLIMITED).hunks;
    assert_eq!(apply(old, &hunks, &[0, 1]).as_deref(), Ok(new));
    assert_eq!(apply(old, &hunks, &[]).as_deref(), Ok(old));
    assert_eq!(apply(old, &hunks, &[1]).as_deref(), Ok("a\nb\nc\nd\nE\n"));
    assert_eq!(revert(new, &hunks, &[0]).as_deref(), Ok("a\nb\nc\nd\nE\n"));
    assert_eq!(revert(new, &hunks, &[1, 0]).as_deref(), Ok(old));
}

#[test]
fn hunks_that_no_longer_fit_are_refused() {
    let old = "a\nb\nc\n";
    let hunks = diff_lines(old, "a\nB\nc\n", &Budget::UNLIMITED).hunks;
    // The file was edited while the change waited for review: the hunk's line is gone.
    expect![[r#"
        Err(
            Mismatch {
                index: 0,
            },
        )
    "#]]
    .assert_debug_eq(&apply("a\nX\nc\n", &hunks, &[0]));
    expect![[r#"
        Err(
            UnknownHunk {
                index: 3,
                count: 1,
            },
        )
    "#]]
    .assert_debug_eq(&revert("a\nB\nc\n", &hunks, &[3]));
    assert_eq!(
        apply("a\nX\nc\n", &hunks, &[0]).map_err(|error| error.to_string()),
        Err("the text no longer has the lines hunk 0 changes (was the file edited since the diff?)".to_owned())
    );
}
